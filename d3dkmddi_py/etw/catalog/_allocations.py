"""What the AdapterAllocation entry keeps (its module's part, not an entry itself: its name starts with _): the live
allocations, each process's tally, and per adapter the allocations kept whole for the text.  The placement and
priority entries read the live allocations through it.

One rule keys a live allocation everywhere (the tables, the text, the picture): its adapter and its identity,
hDxgGlobalAlloc, or hVidMmGlobalAlloc where that is 0 (``key``); an allocation with both 0 names nothing and is
counted, never kept.  A Start or DCStart of a live key replaces it; a Stop removes the key it names.  Later events
name an allocation by hVidMmGlobalAlloc: the live allocation that last started with it answers."""
from __future__ import annotations

from itertools import islice

from ..._records import dataclass, field

EVENT = "AdapterAllocation"
# a row of Allocations.track: Stop or not, hVidMmGlobalAlloc, then what a live allocation keeps (its value in
# Allocations.live): its adapter and segment sets first (what a placement reads), the event fields, the event's
# number and time (as its reader gives it: text, or nanoseconds column-wise)
LIVE_ROW = ("stop", "hVidMmGlobalAlloc", "pDxgAdapter", "dwReadSegment", "dwWriteSegment", "hProcessId",
            "hDxgGlobalAlloc", "allocSize", "dwEvictionSegment", "PreferredSegment", "HintedBank", "Priority",
            "number", "time")
MOST_BYTES = (1 << 64) - 1  # what a byte count of every output holds (a uint64); a sum past it is shown as it, said
LIVE_ADAPTER, LIVE_DXG, LIVE_PROCESS, LIVE_SIZE, LIVE_NUMBER, LIVE_TIME = (
    LIVE_ROW.index(n) - 2 for n in ("pDxgAdapter", "hDxgGlobalAlloc", "hProcessId", "allocSize", "number", "time"))


def key(adapter: int, dxg: int, vidmm: int):
    """A live allocation's key: (adapter, True, hDxgGlobalAlloc), or (adapter, False, hVidMmGlobalAlloc) where
    hDxgGlobalAlloc is 0; None where both are 0 (it names nothing to remove or find)."""
    return (adapter, True, dxg) if dxg else (adapter, False, vidmm) if vidmm else None


def identity_of(dxg: int, vidmm: int) -> tuple:
    """The handle a live allocation is known by (the text's heading): (its name, its value)."""
    return ("hDxgGlobalAlloc", dxg) if dxg else ("hVidMmGlobalAlloc", vidmm)


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


class ProcessTally:
    """A process's allocations (by hProcessId): started (Start, DCStart), stopped, live now and their bytes, and
    the highest live bytes with the event that reached them (its number and time)."""

    __slots__ = ("started", "stopped", "live", "live_bytes", "peak", "peak_number", "peak_time")

    def __init__(self):
        self.started = self.stopped = self.live = self.live_bytes = self.peak = 0
        self.peak_number = self.peak_time = None

    @property
    def saturated(self) -> bool:
        """Whether its live bytes (or their peak) passed MOST_BYTES: every output shows MOST_BYTES and says so."""
        return self.peak > MOST_BYTES

    def add(self, size: int, number: int, time) -> None:
        """One more live allocation of ``size`` bytes, by event ``number`` at ``time``."""
        self.live += 1
        self.live_bytes += size
        if self.live_bytes > self.peak:
            self.peak, self.peak_number, self.peak_time = self.live_bytes, number, time


class AdapterAllocations:
    """An adapter's allocations: those kept whole for the text by identity (``Tracker(entries=True)``), and how
    many were started, stopped, and stopped without being seen starting (a plain object: it pickles with the
    adapter's record, by every protocol)."""

    def __init__(self):
        self.allocations: dict = {}
        self.started = self.stopped = self.stops_unmatched = 0


class Allocations:
    """The live allocations of a trace (``Tracker.part("AdapterAllocation")``)."""

    def __init__(self, tracker):
        self.tracker = tracker
        self.live: dict = {}  # key -> a live allocation: (hVidMmGlobalAlloc, its row of ``track`` from the adapter on)
        self.by_global: dict = {}  # hVidMmGlobalAlloc -> the key of the live allocation that last started with it
        self.processes: dict = {}  # hProcessId -> ProcessTally of its allocations
        self.entries: dict = {}  # key -> its AllocationEntry (``Tracker(entries=True)`` only)
        self.where: dict = {}  # key -> (segment id, time in ns or None, event number): where an event last put it
        self.unkeyed = 0  # Starts and DCStarts of an allocation whose two handles are 0: counted, not kept

    def track(self, rows) -> None:
        """AdapterAllocation events in order, each a row of ``LIVE_ROW``: the live allocations by ``key`` and each
        hProcessId's tally.  One loop for an Event (``apply``) and for a run of a batch's rows (``track``), so the
        two keep the same state."""
        live, processes, by_global = self.live, self.processes, self.by_global
        for row in rows:
            stop, vidmm, kept = row[0], row[1], row[2:]
            process = kept[LIVE_PROCESS]
            tally = processes.get(process)
            if tally is None:
                tally = processes[process] = ProcessTally()
            k = key(kept[LIVE_ADAPTER], kept[LIVE_DXG], vidmm)
            old = live.pop(k, None) if k is not None else None
            if old is not None:  # stopped, or started again: its bytes leave its owner, its place is forgotten
                self.where.pop(k, None)
                owner = processes[old[1][LIVE_PROCESS]]
                owner.live -= 1
                owner.live_bytes -= old[1][LIVE_SIZE]
                if old[0] and by_global.get(old[0]) == k:
                    del by_global[old[0]]
            if stop:
                tally.stopped += 1
                continue
            tally.started += 1
            if k is None:
                self.unkeyed += 1
                continue
            live[k] = (vidmm, kept)
            if vidmm:
                by_global[vidmm] = k
            tally.add(kept[LIVE_SIZE], kept[LIVE_NUMBER], kept[LIVE_TIME])

    def of(self, global_handle: int):
        """(adapter pointer, read set, write set, AllocationEntry or None) of the live allocation that last started
        with this hVidMmGlobalAlloc, or None."""
        k = self.by_global.get(global_handle)
        if k is None:
            return None
        return self.live[k][1][:3] + (self.entries.get(k),)

    def row(self, global_handle: int):
        """(key, what ``track`` keeps of it: a ``LIVE_ROW`` tail) of the live allocation that last started with this
        hVidMmGlobalAlloc, or None."""
        k = self.by_global.get(global_handle)
        return None if k is None else (k, self.live[k][1])

    def locate(self, global_handle: int, segment: int, ns, number: int) -> None:
        """An event put the live allocation in ``segment`` (0: out of every segment) at ``ns``."""
        k = self.by_global.get(global_handle)
        if k is not None:
            self.where[k] = (segment, ns, number)

    def update(self, global_handle: int, name: str, value) -> None:
        """A live allocation's kept ``name`` (of ``LIVE_ROW``) is now ``value`` (a priority changed)."""
        k = self.by_global.get(global_handle)
        if k is not None:
            vidmm, kept = self.live[k]
            i = LIVE_ROW.index(name) - 2
            self.live[k] = (vidmm, kept[:i] + (value,) + kept[i + 1:])

    def tell(self, global_handle: int, event, line, findings) -> None:
        """What ``event`` says of a live allocation: the allocation's text shows the last of each kind
        (``line()``, made only for an allocation kept whole, and its findings); the findings of one it replaces,
        or of an allocation not kept whole, go with the findings of events about no live record."""
        k = self.by_global.get(global_handle)
        entry = self.entries.get(k) if k is not None else None
        if entry is None:
            self.tracker.keep_loose(event, list(findings))
            return
        name = event.kind.event
        old = entry.later.get(name)
        if old is not None:
            self.tracker.keep_loose(old.event, old.findings)
        entry.later[name] = Later(line(), list(findings), event, 1 if old is None else old.count + 1)


def allocations(tracker) -> Allocations:
    """The trace's live allocations (made on first use)."""
    return tracker.part(EVENT)


def track(np, tracker, columns: dict, stops, adapters, numbers, times):
    """``apply`` for a run of rows given as columns (the tables' column-wise path), for what later events
    and the end's tables read: the live allocations and each process's tally; returns ``advance(n)``, which
    tracks the next n rows (the other events between them read the state up to their point)."""
    fields = [columns[n].tolist() if n != "pDxgAdapter" else adapters.tolist() for n in LIVE_ROW[1:-2]]
    rows = zip(stops.tolist(), *fields, _list(numbers), _list(times))
    follow = allocations(tracker).track  # called once a run between other events: found once
    return lambda n: follow(islice(rows, n))


def _list(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else values
