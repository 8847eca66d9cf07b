"""The CSV cell rule every CSV this package writes follows: csv.writer's default dialect, one cell at a
time (the writers build whole lines from templates, so they cannot hand rows to csv.writer)."""
from __future__ import annotations


def csv_cell(text) -> str:
    """Quoted when it holds , " or a line end, quotes doubled; None is an empty cell."""
    if text is None:
        return ""
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_bool(value) -> str:
    """A Boolean cell: ``true`` or ``false`` (JSON's words, so one reading serves both), None an empty cell."""
    if value is None:
        return ""
    return "true" if value else "false"
