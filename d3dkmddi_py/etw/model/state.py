"""A trace's state as the events leave it, per adapter: the records the catalog's ``apply`` functions
fill and the text, the tables and ``etw.adapters`` read.

A value over time (resident bytes, a process's usage or budget) is a ``Series``: its count, first,
last, lowest and highest value always, and, when the Tracker keeps series, every sample as two typed
columns (the event's number and the value; 16 bytes a sample, no Python object per event).
"""
from __future__ import annotations

from array import array

from ..._records import dataclass, field
from ...bulk.table import INT64_MAX
from ...errors import flag_argument, integer_argument

# a row of Tracker._track_allocations: Stop or not, hVidMmGlobalAlloc, then what a live allocation keeps (its value
# in Tracker.live): its adapter and segment sets first (what a placement reads), the event fields, the event's
# number and time (as its reader gives it: text, or nanoseconds column-wise)
LIVE_ROW = ("stop", "hVidMmGlobalAlloc", "pDxgAdapter", "dwReadSegment", "dwWriteSegment", "hProcessId",
            "hDxgGlobalAlloc", "allocSize", "dwEvictionSegment", "PreferredSegment", "HintedBank", "Priority",
            "number", "time")
LIVE_PROCESS, LIVE_SIZE, LIVE_NUMBER, LIVE_TIME = (LIVE_ROW.index(n) - 2 for n in ("hProcessId", "allocSize", "number",
                                                                                   "time"))


@dataclass
class SegmentEntry:
    segment_id: int
    event: object  # the ReportSegment Event
    data: bytes  # the descriptor's bytes (Packer.segment)
    findings: list = field(default_factory=list)


@dataclass
class AllocationEntry:
    event: object  # the Start or DCStart Event
    data: bytes  # DXGK_ALLOCATIONINFO bytes
    usage: bytes  # DXGK_ALLOCATIONUSAGEHINT bytes
    findings: list = field(default_factory=list)
    placement: tuple | None = None  # (segment id, offset, event number) of its last committed placement
    priority: tuple | None = None  # (priority, event number) of its last SetAllocationPriority
    later: dict = field(default_factory=dict)  # event name -> Later: what the last event of each kind said of it


@dataclass
class Later:
    """What a later event said of a live allocation (the last of its kind): a line of the text, its
    findings, the event, and how many events of the kind there were."""

    line: str
    findings: list
    event: object
    count: int = 1


@dataclass(frozen=True)
class Resolved:
    """What an event that names an allocation by a handle found: the adapter and the allocation's
    hVidMmGlobalAlloc (None where the trace did not show them), and the event's findings."""

    adapter: int | None
    allocation: int | None
    findings: tuple = ()
    checked: bool = True  # False: what the findings would read was not there (the allocation was not found)


class ProcessTally:
    """A process's allocations (by hProcessId): started (Start, DCStart), stopped, live now and their bytes, and
    the highest live bytes with the event that reached them (its number and time)."""

    __slots__ = ("started", "stopped", "live", "live_bytes", "peak", "peak_number", "peak_time")

    def __init__(self):
        self.started = self.stopped = self.live = self.live_bytes = self.peak = 0
        self.peak_number = self.peak_time = None

    def add(self, size: int, number: int, time) -> None:
        """One more live allocation of ``size`` bytes, by event ``number`` at ``time``."""
        self.live += 1
        self.live_bytes += size
        if self.live_bytes > self.peak:
            self.peak, self.peak_number, self.peak_time = self.live_bytes, number, time


class Series:
    """A value over time: its summary always, its samples as columns when ``keep``.  ``Series(keep)`` and
    ``add`` check what they are given; the Tracker's ``_new`` and ``_add`` take its own values unchecked."""

    __slots__ = ("count", "first", "last", "low", "high", "high_at", "numbers", "values")

    def __init__(self, keep: bool):
        self._start(flag_argument(keep, "Series: keep"))

    @classmethod
    def _new(cls, keep: bool) -> "Series":
        s = cls.__new__(cls)
        s._start(keep)
        return s

    def _start(self, keep: bool) -> None:
        self.count = 0
        self.first = self.last = self.low = self.high = self.high_at = None
        self.numbers, self.values = (array("q"), array("Q")) if keep else (None, None)

    def __reduce__(self):  # every pickle protocol, 0 and 1 too (slots alone need protocol 2)
        return _series, tuple(getattr(self, name) for name in Series.__slots__)

    def add(self, number: int, value: int) -> None:
        """One more sample: the event's ``number`` and the ``value`` after it (the ranges the columns hold)."""
        self._add(integer_argument(number, "Series.add: number", 1, INT64_MAX),
                  integer_argument(value, "Series.add: value", 0, (1 << 64) - 1))

    def _add(self, number: int, value: int) -> None:
        if self.count == 0:
            self.first = self.low = self.high = value
            self.high_at = number
        elif value > self.high:
            self.high, self.high_at = value, number
        elif value < self.low:
            self.low = value
        self.count += 1
        self.last = value
        if self.numbers is not None:
            self.numbers.append(number)
            self.values.append(value)


def _series(*values) -> Series:
    s = Series.__new__(Series)
    for name, value in zip(Series.__slots__, values):
        setattr(s, name, value)
    return s


@dataclass
class AdapterTrace:
    """One pDxgAdapter: segments by id (a later ReportSegment replaces), live allocations by handle,
    resident bytes per segment and each process's usage and budget per segment group over time."""

    pointer: int
    segments: dict = field(default_factory=dict)
    allocations: dict = field(default_factory=dict)
    adapter: object = None  # the semantics view of the segments, when ids are 1..n
    adapter_note: str = ""  # why allocations were checked without the segments, if they were
    adapter_findings: list = field(default_factory=list)  # adapter-wide rules (one AGP segment)
    started: int = 0
    stopped: int = 0
    stops_unmatched: int = 0  # Stop of an allocation the trace did not show starting
    segments_replaced: int = 0
    resident: dict = field(default_factory=dict)  # segment id -> Series of TotalBytesResident
    usage: dict = field(default_factory=dict)  # (process id, physical adapter index, segment group) -> Series
    budget: dict = field(default_factory=dict)  # the same key -> Series of the budget
    device_allocations: dict = field(default_factory=dict)  # hVidMmAlloc -> hVidMmGlobalAlloc, while live
