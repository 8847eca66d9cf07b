"""An event's time in the tables: one rule for every reader.

An event's ``time`` is text, as its reader gives it: the .etl reader writes UTC with 7 fractional digits
(``LogHeader.utc``: a FILETIME counts 100 ns), tracerpt and Event Viewer write ISO 8601 with an offset
(``2026-11-23T10:15:02.124505365+0100``) or ``Z``.  A table's ``time`` is that instant as nanoseconds
since 1970-01-01 UTC (``time_ns``), written as ``2026-11-23T09:15:02.124505365Z`` in CSV and JSON and as
Parquet ``timestamp[ns, UTC]``; the .etl reader's column-wise path computes the same number from the
FILETIME (``filetime_ns``, ``LogHeader.nanoseconds``), and the tests hold the two equal.  A time that
is no instant (no clock rate, a text that is no ISO 8601 time, more than 9 fractional digits that are
not zeros) or that nanoseconds in 64 bits cannot hold (before 1677-09-21, after 2262-04-11) is None:
an empty cell, null.  Every output writes a time in that one form, UTC with nine fractional digits and ``Z``
(``utc_text``): the text, ``--json``, ``--summary`` and the tables alike, whatever the reader's text; a time
text that is no instant is written as the source gave it.  ``ms`` is milliseconds from the trace's start
(``milliseconds``): the .etl header's StartTime, or in XML its first event's time (tracerpt's first event is that
header).
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from functools import lru_cache

_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)\Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
UNIX_EPOCH_FILETIME = 116_444_736_000_000_000  # 1970-01-01 in 100 ns since 1601
NS_LOW, NS_HIGH = -(1 << 63) + 1, (1 << 63) - 1  # what int64 nanoseconds hold (-2**63 is NumPy's NaT)


def representable(ns: int | None) -> int | None:
    """``ns`` where 64-bit nanoseconds hold it, else None."""
    return ns if ns is not None and NS_LOW <= ns <= NS_HIGH else None


def time_ns(text) -> int | None:
    """An event's time text as nanoseconds since 1970-01-01 UTC, or None (see the module)."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = m.groups()
    if len(fraction or "") > 9 and fraction[9:].strip("0"):
        return None  # finer than a nanosecond: not exact
    seconds = _seconds(year, month, day, hour, minute, second)
    if seconds is None:
        return None
    offset = 0
    if zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[-2:])
        if hours > 23 or minutes > 59:
            return None
        offset = (hours * 60 + minutes) * (-60 if zone[0] == "-" else 60)
    return representable((seconds - offset) * 1_000_000_000 + int((fraction or "0")[:9].ljust(9, "0")))


@lru_cache(maxsize=4096)  # events come in time order: the second repeats
def _seconds(year: str, month: str, day: str, hour: str, minute: str, second: str) -> int | None:
    """The seconds since 1970 of a date and time of day (no zone), or None where there is no such instant."""
    try:
        days = (datetime(int(year), int(month), int(day), tzinfo=timezone.utc) - _EPOCH).days
    except ValueError:  # no such date
        return None
    if int(hour) > 23 or int(minute) > 59 or int(second) > 59:
        return None
    return days * 86400 + int(hour) * 3600 + int(minute) * 60 + int(second)


def utc_text(ns: int | None) -> str | None:
    """Nanoseconds since 1970-01-01 UTC as every output writes a time: ``2026-11-23T09:15:02.124505300Z`` (the
    tables' form: nine fractional digits, ``Z``); None for None."""
    if ns is None:
        return None
    seconds, fraction = divmod(ns, 1_000_000_000)
    return f"{_second(seconds)}.{fraction:09d}Z"


@lru_cache(maxsize=1024)  # events come in time order: the second repeats
def _second(seconds: int) -> str:
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def time_text(text):
    """An event's time text, whichever reader gave it (tracerpt's ``...10:15:02.124505365+0100``, an .etl's
    ``...09:15:02.1245053Z``), as ``utc_text`` writes it; a text that is no instant (``time_ns`` None) as given."""
    ns = time_ns(text)
    return text if ns is None else utc_text(ns)


def filetime_ns(hundred_ns: int | None) -> int | None:
    """A FILETIME (100 ns since 1601) as ``time_ns`` gives its ``etlfile.filetime_text``, exactly."""
    if hundred_ns is None or hundred_ns <= 0:  # filetime_text's rule: no date
        return None
    return representable((hundred_ns - UNIX_EPOCH_FILETIME) * 100)


def milliseconds(ns, start):
    """Milliseconds from the trace's start: ``(ns - start) / 1e6``, one float division on int and int64
    alike (so a NumPy column and a Python int give the same float); None where either is None."""
    if ns is None or start is None:
        return None
    return (ns - start) / 1e6
