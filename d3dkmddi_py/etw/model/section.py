"""An event's section of the etw text (``etw.text`` writes the text): the defaults say what any event
says (how many were read); an entry's own section says more, through the ``TextOut`` it is given
(``line``, ``record``: a mirror record as ``dt -r`` prints it, ``findings``: finding lines)."""
from __future__ import annotations

from ...semantics.explain import _size_text
from ...wording import plural  # noqa: F401 (the entries' sections take it from here)


class Section:
    """An event's part of the etw text.  ``unknown``: mirror members its events cannot fill (the header
    says them); ``heading``: its words in an adapter's heading; ``adapter``: its lines in an adapter's
    part; ``summary``: its lines in the summary."""

    def unknown(self, tracker) -> list:
        return []

    def heading(self, a) -> str | None:
        return None

    def adapter(self, out, tracker, a) -> None:
        pass

    def summary(self, out, tracker, entry) -> None:
        """What was read of the event, if the trace has it: how many, and what the entry keeps of them."""
        n = tracker.counts.get(entry.event, 0)
        if n:
            out.line(f"{entry.event} ({'/'.join(map(str, entry.ids))}): {plural(n, 'event')}"
                     + ("" if entry.apply is not None else ", read and tabled; this package keeps no state of them")
                     + "".join(f"; {part}" for part in self.counts(tracker)))

    def counts(self, tracker) -> list:
        """What the summary line adds after the count of events."""
        return []


class SeriesSection(Section):
    """A value over time per key (an AdapterTrace dict of Series), in an adapter's part: per key its
    samples, last, highest (and when) and lowest value; ``about(a, key)`` adds to a key's line."""

    def __init__(self, table: str, title: str, noun: str, key_text, heading: str | None = None, about=None):
        self.table, self.title, self.noun, self.key_text = table, title, noun, key_text
        self.words, self.about = heading, about

    def heading(self, a) -> str | None:
        series = getattr(a, self.table)
        return f"{self.words} {plural(len(series), self.noun)}" if self.words and series else None

    def adapter(self, out, tracker, a) -> None:
        series = getattr(a, self.table)
        if not series:
            return
        out.line(f"\n-- {self.title}")
        for k in sorted(series):
            s = series[k]
            more = self.about(a, k) if self.about is not None else ""
            out.line(f"   {self.key_text(k)}: {plural(s.count, 'sample')}, last {bytes_text(s.last)}{more}, highest "
                     f"{bytes_text(s.high)} (event #{s.high_at}), lowest {bytes_text(s.low)}")

    def counts(self, tracker) -> list:
        return [plural(sum(len(getattr(a, self.table)) for a in tracker.adapters.values()), self.noun)]


def process_text(pid: int) -> str:
    """A process as the text and the picture name it: ``process 8000``, its id in decimal as Windows shows one (an
    allocation's hProcessId, a HANDLE-sized field, holds the same number as a usage event's ProcessId)."""
    return f"process {pid}"


def bytes_text(n: int) -> str:
    """``0x6000000 (96 MB)``: the exact value in hex, then its size as the meanings write one."""
    return f"{n:#x} ({_size_text(n)})"
