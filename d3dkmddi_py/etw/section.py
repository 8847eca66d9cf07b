"""An event's section of the etw text (``etw.text`` writes the text): the defaults say what any event
says (how many were read); an entry's own section says more, through the ``TextOut`` it is given
(``line``, ``record``: a mirror record as ``dt -r`` prints it, ``findings``: finding lines)."""
from __future__ import annotations

from ..semantics.explain import _size_text


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


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' if n != 1 else ''}"


def bytes_text(n: int) -> str:
    """``0x6000000 (96 MB)``: the exact value in hex, then its size as the meanings write one."""
    return f"{n:#x} ({_size_text(n)})"
