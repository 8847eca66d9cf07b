"""What every sink shares, made in one place: finding texts and messages, record titles, tallies,
meanings (a chunk's text is written in pieces by ``outfile.write_lines``)."""
from __future__ import annotations

from ..dttext import finding_frame, reference_text, render_enum, titles, validate_frame
from ..layout import TypeLayout
from ..semantics._rules import RULES
from .decode import Decoded
from .source import Chunk

BODY_CACHE = 4096  # records' printed bodies kept by their bytes (dumps repeat the same values a lot)


def _meanings(layout: TypeLayout, raw: bytes, adapter) -> dict:
    from ..semantics.explain import meanings_of

    return meanings_of(layout, raw, adapter)


class _Texts:
    """Each check's finding text, worked out once: the lines under a field (decode), the lines of
    validate, so a million findings cost a lookup each, not a format."""

    def __init__(self):
        self.cache = {}

    def rule(self, check) -> tuple:
        """(severity, the reference line's text) of a check's rule."""
        got = self.cache.get(check)
        if got is None:
            rule = RULES[check.rule_id]
            got = self.cache[check] = (rule.severity.value, reference_text(rule.sentence, rule.page))
        return got

    def frame(self, check, pad: str) -> tuple:
        """(lead, tail) of the finding under its field in ``decode`` (dttext.finding_frame)."""
        severity, ref = self.rule(check)
        return finding_frame(pad, severity, check.rule_id, ref)

    def validate_frame(self, check) -> tuple:
        """(lead, tail) of the finding in ``validate``'s text (dttext.validate_frame)."""
        severity, ref = self.rule(check)
        return validate_frame(severity, check.rule_id, check.path, ref)

    def under(self, check, pad: str, decoded: Decoded, row: int, views: dict) -> list:
        """The two lines a finding prints under its field in ``decode``."""
        key = (check, pad)
        got = self.cache.get(key)
        if got is not None:
            return got
        lead, tail = self.frame(check, pad)
        lines = (lead + _message(check, decoded, row, views) + tail).split("\n")
        if check.static:
            self.cache[key] = lines
        return lines

    def validate_lines(self, check, decoded: Decoded, row: int, views: dict) -> str:
        got = self.cache.get((check, "v"))
        if got is not None:
            return got
        lead, tail = self.validate_frame(check)
        text = lead + _message(check, decoded, row, views) + tail
        if check.static:
            self.cache[(check, "v")] = text
        return text


def _message(check, decoded: Decoded, row: int, views: dict) -> str:
    if check.static:
        return check.message
    made = decoded.messages.get(check) if decoded.messages else None
    if made is not None:
        return made[1][made[0][row]]
    view = views.get(row)
    if view is None:
        view = views[row] = decoded.view(row)
    return check.text(view)


def _hit_messages(decoded: Decoded, k: int, rows: list) -> list:
    """The messages of check ``k`` of a column-decoded chunk for its hit rows (in their order)."""
    check = decoded.found[k][0]
    if check.static:
        return [check.message] * len(rows)
    made = decoded.messages.get(check) if decoded.messages else None
    if made is not None:
        return made[1]
    views = {}
    return [_message(check, decoded, row, views) for row in rows]


def _distinct(decoded: Decoded):
    """(rows of the first occurrence of each distinct record, row -> its index among them) of a
    column-decoded chunk, or None when most records are distinct (nothing to share)."""
    np, chunk = decoded.np, decoded.chunk
    size = chunk.layout.size
    kind = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(size, np.dtype((np.void, size)))
    records = np.frombuffer(chunk.data, dtype=kind)  # words sort faster than opaque records
    _unique, first, inverse = np.unique(records, return_index=True, return_inverse=True)
    if len(first) * 2 > chunk.count:
        return None
    return first.tolist(), inverse.reshape(-1).tolist()


def _titles(chunk: Chunk, *, size: bool = True) -> list:
    """``dttext.record_title`` of every record of a chunk (``size``: with ", N bytes", as decode prints it;
    validate's lines go without)."""
    layout = chunk.layout
    return titles(layout.c_name, layout.label, chunk.start, chunk.offset, layout.size, chunk.count, chunk.address,
                  size)


def _render_enum_record(layout: TypeLayout, raw: bytes, title: str) -> str:
    from ..target import class_of

    return render_enum(_enum_value(class_of(layout), raw), (), title)


def _enum_value(cls, raw: bytes):
    number = int.from_bytes(raw, "little", signed=True)
    try:
        return cls(number)
    except ValueError:
        return number


