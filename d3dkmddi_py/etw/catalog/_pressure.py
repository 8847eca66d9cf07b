"""What the memory manager did under pressure (a part of the catalog's paging entries, not an entry itself: its name
starts with _): the bytes paging moved per adapter and direction, each process's evictions and paged bytes, and the
stretches of time a process's usage stood above its budget.

An event names an allocation by a handle; the allocation is the live one AdapterAllocation tracks
(``_allocations``), so a row's process is that allocation's hProcessId, and a process's usage and budget events
(ProcessId) meet its allocations' rows by that number ([reading]: hProcessId, a HANDLE-sized field, holds the
process id, as the kernel's process ids are HANDLEs).  One function per kind of row applies an Event and a
batch's row alike (``move``, ``evict``, ``change``), so the tables read the same state either way.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import islice
from typing import NamedTuple

from ...jsonvalue import wide_text
from ...semantics import Placement, check
from ..model.registry import Applied, Column, StateTable
from ..outputs import panels as draw
from ..outputs.panels import grouped, plain
from ..model.section import Section, bytes_text, plural, process_text
from ..model.templates import map_names
from ..model.times import time_ns
from ._allocations import LIVE_ADAPTER, LIVE_PROCESS, LIVE_SIZE, MOST_BYTES, allocations

OWNER = "PagingOpTransfer"  # the entry whose part this is (Tracker.part)
UNSEEN = "named an allocation the trace did not show starting (its process and segment sets unknown)"
ZERO = "named allocation handle 0, which names no allocation (read as one the trace did not show starting)"
OTHER_ADAPTER = ("named an allocation live on another adapter (read as one the trace did not show starting on the "
                 "event's adapter: its bytes are not its process's there)")
BEFORE_PLACED = ("came at a time before the event that put its allocation where it was: resident_ms left empty (not a "
                 "negative time)")
# [reading]: the manifest says the bytes go to the segment; the package takes it as where the allocation is then
WHERE_NEXT = "where the allocation is from then on ([reading]: an eviction's segment and resident_ms start there)"
ENDED_BEFORE = ("ended a stretch over budget at a time before the time it began: both kept as the events say (see "
                "\"times that go back\")")
SHOWN_LINES = 16  # directions and stretches the text shows per adapter; every one is in the pressure and over_budget
EVICTED_SHOWN = 8  # evicted allocations a stretch names; the rest are counted
GROUP_NAMES = map_names("D3DKMT_MEMORY_SEGMENT_GROUP")[1]  # the manifest's value map of MemorySegmentGroup
READ_SET, WRITE_SET = 1, 2  # in a live allocation's kept row (``_allocations.LIVE_ROW`` after its handle)


class Moved(NamedTuple):
    """A paging operation as applied: its adapter, the allocation (hVidMmGlobalAlloc) and its process (None: not seen
    starting), the segments (None where the operation has none), the bytes (None for a discard), its findings."""

    adapter: int
    allocation: int
    process: int | None
    source: int | None
    destination: int | None
    bytes: int | None
    operation: str
    findings: tuple = ()


class Evicted(NamedTuple):
    """An eviction as applied: the live allocation's adapter, handle, process and Size, the segment an event last
    put it in and how long it had been there (None where the trace did not say)."""

    adapter: int | None
    allocation: int | None
    process: int | None
    size: int | None
    segment: int | None
    resident_ms: float | None
    operation: str
    findings: tuple = ()


class Changed(NamedTuple):
    """A residency change as applied: the live allocation's adapter, handle and process, the segment it names."""

    adapter: int | None
    allocation: int | None
    process: int | None
    segment: int | None
    operation: str
    findings: tuple = ()


class Stretch:
    """A time a process's usage (per adapter, physical adapter and segment group) stood above its budget."""

    __slots__ = ("key", "start", "start_number", "end", "end_number", "peak", "budget", "base", "done", "evicted",
                 "more")

    def __init__(self, key: tuple, ns, number: int, usage: int, budget: int, base: list):
        self.key, self.start, self.start_number = key, ns, number
        self.end = self.end_number = None
        self.peak, self.budget, self.base = usage, budget, tuple(base)
        self.done = None  # (evictions, paged bytes) inside it, once it ended
        self.evicted: list = []  # (allocation, Size, event number) of the first EVICTED_SHOWN evictions
        self.more = 0  # evictions past them

    def inside(self, counters: list) -> tuple:
        """(evictions, paged bytes) of its process since it began, by its process's ``counters`` now."""
        return self.done if self.done is not None else (counters[0] - self.base[0], counters[1] - self.base[1])


class Pressure:
    """The trace's paging and evictions (``pressure(tracker)``)."""

    def __init__(self, tracker):
        self.tracker = tracker
        self.directions: dict = {}  # (adapter, source, destination) -> [operations, bytes, first time, last time]
        self.by_process: dict = {}  # (adapter, process) -> [evictions, paged bytes] since the trace began
        self.open: dict = {}  # (adapter, ProcessId, PhysicalAdapterIndex, MemorySegmentGroup) -> its Stretch now
        self.open_of: dict = {}  # (adapter, process) -> the keys of its open stretches
        self.closed: list = []  # Stretch, in the order they ended

    def note(self, operation: str, what: str = UNSEEN) -> None:
        """A row the state could not take as it is (an allocation not seen starting, handle 0, ...): counted where
        the text says an entry's notes (the Tracker's, as ``Tracker.note`` counts them; a batch's row has no Event
        to give it)."""
        notes = self.tracker.notes.setdefault(operation, {})
        notes[what] = notes.get(what, 0) + 1

    def found(self, live, handle, operation: str, adapter=None):
        """(key, kept row) of the live allocation ``handle`` names, or None, the reason noted: handle 0, not seen
        starting, or (``adapter`` given: a paging event's) live on another adapter."""
        if handle == 0:
            self.note(operation, ZERO)
            return None
        found = live.row(handle) if handle is not None else None
        if found is None:
            self.note(operation)
        elif adapter is not None and found[1][LIVE_ADAPTER] != adapter:
            self.note(operation, OTHER_ADAPTER)
            return None
        return found

    def counters(self, adapter, process) -> list:
        found = self.by_process.get((adapter, process))
        if found is None:
            found = self.by_process[(adapter, process)] = [0, 0]
        return found


def pressure(tracker) -> Pressure:
    return tracker.part(OWNER)


# ---- paging operations
def move(state: Pressure, live, packer, target, adapter: int, handle: int, source, destination, size, offset,
         number: int, ns, operation: str) -> Moved:
    """One paging operation: its direction's tally, its process's paged bytes, where it put the allocation, and the
    destination checked against the allocation's segment sets as a placement is."""
    tally = state.directions.get((adapter, source, destination))
    if tally is None:
        tally = state.directions[(adapter, source, destination)] = [0, 0, ns, ns]
    tally[0] += 1
    tally[1] += size or 0
    tally[3] = ns
    found = state.found(live, handle, operation, adapter)
    if found is None:
        return Moved(adapter, handle, None, source, destination, size, operation)
    key, kept = found
    process = process_id(kept[LIVE_PROCESS])
    state.counters(adapter, process)[1] += size or 0
    findings = ()
    if destination:
        live.where[key] = (destination, ns, number)
        findings = _moved_findings(packer, target, kept[READ_SET], kept[WRITE_SET], destination, offset, operation)
    elif destination == 0:  # [reading]: segment 0 is no segment (system memory): it is in none of them then
        live.where.pop(key, None)
    return Moved(adapter, handle, process, source, destination, size, operation, findings)


def _moved_findings(packer, target, read: int, write: int, segment: int, offset, operation: str) -> tuple:
    if not _outside(packer, target, read, write, segment):
        return ()
    from .committed_allocation import _sets_record

    how = f"moved by {operation} to"
    return tuple(check(Placement(_sets_record(packer, read, write), segment, offset, target=target, how=how)))


@lru_cache(maxsize=4096)
def _outside(packer, target, read: int, write: int, segment: int) -> bool:
    """Whether a placement in ``segment`` of an allocation of these sets has a finding (the rule's own check, once
    per sets and segment)."""
    from .committed_allocation import _sets_record

    return bool(check(Placement(_sets_record(packer, read, write), segment, 0, target=target)))


def paging_track(fields: tuple, operation: str):
    """``EventEntry.track`` of a paging event whose ``fields`` are (handle, source, destination, bytes, offset)
    field names (None: the operation has none)."""
    def track(np, tracker, columns, unchecked, adapters, numbers, times):
        n = len(numbers)
        cells = [columns[f].tolist() if f is not None else [None] * n for f in fields]
        rows = zip(adapters.tolist(), *cells, _list(numbers), _list(times))
        state, live, packer, target = pressure(tracker), allocations(tracker), tracker.packer, tracker.target

        def advance(count: int) -> list:
            return [move(state, live, packer, target, adapter, handle, source, destination, size, offset, number, ns,
                         operation)
                    for adapter, handle, source, destination, size, offset, number, ns in islice(rows, count)]
        return advance
    return track


def paging_apply(fields: tuple, operation: str):
    """``EventEntry.apply`` of the same paging event (``paging_track``'s fields)."""
    def apply(tracker, event) -> Moved:
        f = event.fields
        handle, source, destination, size, offset = (f[n] if n is not None else None for n in fields)
        live = allocations(tracker)
        moved = move(pressure(tracker), live, tracker.packer, tracker.target, event.adapter, handle, source,
                     destination, size, offset, event.number, time_ns(event.time), operation)
        if moved.findings:  # the text shows them under the allocation, as a placement's
            live.tell(handle, event, lambda: f"   moved by {operation} to segment {destination} (event "
                                             f"#{event.number})", moved.findings)
        return moved
    return apply


def applied_columns(*columns) -> tuple:
    """Columns of what ``apply`` returned: (name, kind) or (name, kind, attribute) where the two names differ;
    every table of these events starts with the operation, the allocation and its process."""
    head = (("operation", "text"), ("allocation", "handle"), ("process", "opt"))
    return tuple(Column(c[0], c[1], value=Applied(c[-1] if len(c) > 2 else c[0])) for c in head + columns)


PAGING_COLUMNS = applied_columns(("source_segment", "opt", "source"), ("destination_segment", "opt", "destination"),
                                 ("bytes", "ohex"))


# ---- evictions
def evict(state: Pressure, live, handle, number: int, ns, operation: str) -> Evicted:
    """One eviction of the live allocation ``handle`` names (its hVidMmGlobalAlloc; None: the device allocation an
    event names was not seen): its process's evictions, and the open stretches of its process name it."""
    found = state.found(live, handle, operation)
    if found is None:
        return Evicted(None, handle, None, None, None, None, operation)
    key, kept = found
    adapter, process, size = kept[LIVE_ADAPTER], process_id(kept[LIVE_PROCESS]), kept[LIVE_SIZE]
    state.counters(adapter, process)[0] += 1
    for k in state.open_of.get((adapter, process), ()):
        s = state.open[k]
        if len(s.evicted) < EVICTED_SHOWN:
            s.evicted.append((handle, size, number))
        else:
            s.more += 1
    where = live.where.pop(key, None)
    segment = resident = None
    if where is not None:
        segment, since, _n = where
        if since is not None and ns is not None:
            if ns >= since:
                resident = (ns - since) / 1e6
            else:
                state.note(operation, BEFORE_PLACED)
    return Evicted(adapter, handle, process, size, segment or None, resident, operation)


def evict_track(handle_field: str, operation: str, through_device: bool = False):
    """``EventEntry.track`` of an eviction event naming its allocation by ``handle_field`` (a global handle, or
    with ``through_device`` a device's hVidMmAlloc resolved through DeviceAllocation)."""
    def track(np, tracker, columns, unchecked, adapters, numbers, times):
        rows = zip(columns[handle_field].tolist(), _list(numbers), _list(times))
        state, live = pressure(tracker), allocations(tracker)
        resolve = _global_of(tracker) if through_device else None

        def advance(count: int) -> list:
            return [evict(state, live, resolve(h) if resolve else h, number, ns, operation)
                    for h, number, ns in islice(rows, count)]
        return advance
    return track


def evict_apply(handle_field: str, operation: str, through_device: bool = False):
    def apply(tracker, event) -> Evicted:
        h = event.fields[handle_field]
        return evict(pressure(tracker), allocations(tracker), _global_of(tracker)(h) if through_device else h,
                     event.number, time_ns(event.time), operation)
    return apply


EVICTION_COLUMNS = applied_columns(("size", "ohex"), ("segment", "opt"), ("resident_ms", "float"))


# ---- other residency changes
def change(state: Pressure, live, handle, segment, number: int, ns, operation: str) -> Changed:
    """One residency change (a page-in, an offer, a migration, a termination) of the live allocation ``handle``
    names: its process; a page-in's segment is where the allocation is from then on."""
    found = state.found(live, handle, operation)
    if found is None:
        return Changed(None, handle, None, segment, operation)
    key, kept = found
    if segment:
        live.where[key] = (segment, ns, number)
    elif segment == 0:  # as a paging operation's destination 0
        live.where.pop(key, None)
    return Changed(kept[LIVE_ADAPTER], handle, process_id(kept[LIVE_PROCESS]), segment, operation)


def change_apply(handle_field: str, operation: str, through_device: bool, segment_field: str | None = None):
    """``EventEntry.apply`` of a residency change naming its allocation by ``handle_field``."""
    def apply(tracker, event) -> Changed:
        h = event.fields[handle_field]
        return change(pressure(tracker), allocations(tracker), _global_of(tracker)(h) if through_device else h,
                      event.fields[segment_field] if segment_field is not None else None, event.number,
                      time_ns(event.time), operation)
    return apply


CHANGE_COLUMNS = applied_columns(("segment", "opt"))


def _global_of(tracker):
    """hVidMmAlloc -> the hVidMmGlobalAlloc of the live device allocation (None: not seen)."""
    from .device_allocation import device_allocation

    def resolve(handle):
        found = device_allocation(tracker, handle)
        return None if found is None else found[1]
    return resolve


def process_id(handle):
    """A live allocation's hProcessId as the ``process`` its rows name, or None where it cannot be a process id
    (a process id is 32 bits, as the usage events' ProcessId is; the handle itself stays in --json's fields)."""
    return handle if handle is not None and 0 <= handle <= 0xFFFFFFFF else None


def resolved(applied) -> dict:
    """What --json carries of a paging, eviction or residency event: the allocation and process found, spelled as
    the tables spell them."""
    out = {"allocation": None if applied.allocation is None else f"0x{applied.allocation:x}",
           "process": applied.process}
    if isinstance(applied, Evicted):
        out.update(size=None if applied.size is None else wide_text(applied.size), segment=applied.segment,
                   resident_ms=applied.resident_ms)
    return out


# ---- usage against budget
def budget_sample(tracker, event, usage, budget) -> None:
    """A process's usage or budget changed (``process_usage.memory`` after it): a stretch over budget begins,
    reaches a new peak, or ends."""
    state = pressure(tracker)
    f = event.fields
    adapter, process = event.adapter, f["ProcessId"]
    key = (adapter, process, f["PhysicalAdapterIndex"], f["MemorySegmentGroup"])
    s = state.open.get(key)
    over = usage is not None and budget is not None and usage > budget
    if over and s is None:
        state.open[key] = Stretch(key, time_ns(event.time), event.number, usage, budget,
                                  state.counters(adapter, process))
        state.open_of.setdefault((adapter, process), set()).add(key)
    elif over:
        if usage > s.peak:  # the budget beside the peak is the one it passed then
            s.peak, s.budget = usage, budget
    elif s is not None:
        s.end, s.end_number = time_ns(event.time), event.number
        if s.end is not None and s.start is not None and s.end < s.start:
            tracker.note(event, ENDED_BEFORE)
        s.done = s.inside(state.counters(adapter, process))
        del state.open[key]
        state.open_of[(adapter, process)].discard(key)
        state.closed.append(s)


def stretch_counts(state: Pressure, s: Stretch) -> tuple:
    """(evictions, paged bytes) of a stretch's process inside it (until now for one still open)."""
    return s.inside(state.counters(s.key[0], s.key[1]))


def stretches(state: Pressure) -> list:
    return state.closed + list(state.open.values())


def over_budget_rows(tracker, when):
    state = pressure(tracker)
    for s in stretches(state):
        evictions, paged = stretch_counts(state, s)
        start, start_ms = when(s.start)
        end, end_ms = when(s.end) if s.end_number is not None else (None, None)
        adapter, process, index, group = s.key
        yield (start, start_ms, end, end_ms, adapter, process, index, group, min(s.peak, MOST_BYTES),
               min(s.budget, MOST_BYTES), evictions, min(paged, MOST_BYTES), s.start_number, s.end_number)


OVER_BUDGET = StateTable("over_budget", (
    ("start_time", "time"), ("start_ms", "float"), ("end_time", "time"), ("end_ms", "float"), ("adapter", "handle"),
    ("process", "int"), ("PhysicalAdapterIndex", "int"), ("MemorySegmentGroup", "int"), ("peak", "hex"),
    ("budget", "hex"), ("evictions", "int"), ("bytes", "hex"), ("start_number", "int"), ("end_number", "opt")),
    over_budget_rows)


def pressure_rows(tracker, when):
    for (adapter, source, destination), (operations, moved, first, last) in pressure(tracker).directions.items():
        yield (*when(first), *when(last), adapter, source, destination, operations, min(moved, MOST_BYTES))


PRESSURE = StateTable("pressure", (
    ("first_time", "time"), ("first_ms", "float"), ("last_time", "time"), ("last_ms", "float"), ("adapter", "handle"),
    ("source_segment", "opt"), ("destination_segment", "opt"), ("operations", "int"), ("bytes", "hex")), pressure_rows)


# ---- the text
def _segment(n) -> str:
    return "-" if n is None else f"segment {n}"


def _sum_text(n: int) -> str:
    """A sum of byte counts as every output shows it: past what a uint64 holds, that, and said."""
    return bytes_text(min(n, MOST_BYTES)) + (" (the sum passed 2**64-1: shown as that, in the tables and the picture "
                                             "too)" if n > MOST_BYTES else "")


def _more(out, count: int, what: str, table: str) -> None:
    if count > SHOWN_LINES:
        rest = plural(count - SHOWN_LINES, what, what + "es" if what.endswith("h") else None)
        out.line(f"   ... and {rest} more (every one in the {table} table)")


class PressureText(Section):
    """Per adapter: the bytes paging moved per direction, the stretches over budget and what was evicted in them."""

    def adapter(self, out, tracker, a) -> None:
        state = pressure(tracker)
        directions = sorted(((k, v) for k, v in state.directions.items() if k[0] == a.pointer),
                            key=lambda item: (-item[1][1], str(item[0])))
        if directions:
            out.line("\n-- paging per direction (PagingOp events; source -> destination)")
            for (_a, source, destination), (operations, moved, _first, _last) in directions[:SHOWN_LINES]:
                out.line(f"   {_segment(source)} -> {_segment(destination)}: {plural(operations, 'operation')}, "
                         f"{_sum_text(moved)}")
            _more(out, len(directions), "direction", "pressure")
        mine = [s for s in stretches(state) if s.key[0] == a.pointer]
        if mine:
            out.line("\n-- over budget (VidMmProcessUsageChange above VidMmProcessBudgetChange)")
            for s in mine[:SHOWN_LINES]:
                evictions, paged = stretch_counts(state, s)
                _adapter, process, index, group = s.key
                until = f"event #{s.end_number}" if s.end_number is not None else "the trace's end (still over)"
                out.line(f"   {process_text(process)}, physical adapter {index}, group {GROUP_NAMES.get(group, group)}: from "
                         f"event #{s.start_number} "
                         f"to {until}, peak {bytes_text(min(s.peak, MOST_BYTES))} against a budget of "
                         f"{bytes_text(min(s.budget, MOST_BYTES))}; {plural(evictions, 'eviction')}, "
                         f"{_sum_text(paged)} paged")
                for handle, size, number in s.evicted:
                    shown = "size unknown" if size is None else bytes_text(size)
                    out.line(f"      evicted hVidMmGlobalAlloc 0x{handle:x} ({shown}), event #{number}")
                if s.more:
                    out.line(f"      ... and {plural(s.more, 'eviction')} more")
            _more(out, len(mine), "stretch", "over_budget")

    def counts(self, tracker) -> list:
        state = pressure(tracker)
        moved = sum(v[1] for v in state.directions.values())
        return [f"with the other paging events, {plural(sum(v[0] for v in state.directions.values()), 'operation')} "
                f"moving {_sum_text(moved)}", f"{plural(len(stretches(state)), 'stretch', 'stretches')} over budget"]


def _list(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else values



# ---- the picture: bytes paged per direction from the trace's start, evictions marked
NONE = (1 << 64) - 1  # a segment an operation does not have, in a series' key


def paging_take(collector, np, cells, x, numbers, adapters) -> None:
    """The paging table's rows into one series per (adapter, source, destination): the bytes that direction moved
    from the trace's start to each row."""
    source = [NONE if v is None else v for v in plain(cells["source_segment"])]
    destination = [NONE if v is None else v for v in plain(cells["destination_segment"])]
    totals = collector.state.setdefault("paged", {})
    so_far = []
    for key in zip(plain(adapters), source, destination, plain(cells["bytes"])):
        total = totals.get(key[:3], 0) + (key[3] or 0)
        totals[key[:3]] = total
        if total > MOST_BYTES:  # drawn at what a byte count holds, and said, as live bytes are
            said = "bytes paged passed 2**64-1 and are drawn at 0xffffffffffffffff"
            collector.said[said] = collector.said.get(said, 0) + 1
        so_far.append(min(total, MOST_BYTES))
    grouped(collector, np, "paged", plain(adapters), [source, destination], so_far, x, numbers)


def eviction_take(collector, np, cells, x, numbers, adapters) -> None:
    """The evictions table's rows of allocations the trace showed (their adapter known) into the marks of the
    paging panel."""
    adapters = plain(adapters)
    rows = [i for i, a in enumerate(adapters) if a is not None]
    if rows:
        sizes = plain(cells["size"])
        grouped(collector, np, "evicted", [adapters[i] for i in rows], [[0] * len(rows)],
                [sizes[i] or 0 for i in rows], x[rows], numbers[rows])


def _direction(key) -> str:
    source, destination = key
    return f"{'-' if source == NONE else source} -> {'-' if destination == NONE else destination}"


def paging_panel(np, picture, a, ax, columns: int) -> None:
    """Each direction's bytes paged from the start (the most first), and a mark at each eviction."""
    paged, evicted = a.group("paged"), a.group("evicted")
    title = f"adapter 0x{a.pointer:x}: bytes paged per direction (source -> destination segment, PagingOp " \
            f"events) from the start; ticks: evictions"
    if not paged and not evicted:
        return draw.empty(ax, title, f"no paging or eviction events for this adapter: "
                                     f"{draw.record_hint((53, 54, 55, 74))}")
    keys = draw.top(paged, list(paged))
    colors = draw.colors(keys)
    draw.axes(np, picture, ax, title, max([paged[k].highest() for k in keys] or [1]))
    draw.lines(np, picture, ax, [(_direction(k), paged[k], colors[k]) for k in keys], columns)
    for s in evicted.values():
        x, _ = draw.reduce(np, picture.x(s), np.zeros(len(s)), columns // draw.POINTS_PER_COLUMN)
        ax.vlines(x, 0, 0.1, transform=ax.get_xaxis_transform(), colors="black", linewidth=1,
                  label=f"{plural(len(s), 'eviction')}")
    draw.marks(np, picture, a, ax, columns)
    draw.legend(ax, len(paged) - len(keys), "direction")


RULE = "ALLOCINFO.COMMITTED_OUTSIDE_SETS"  # a paging operation's destination is checked as a placement is


def findings(tracker, event, applied) -> list:
    return list(applied.findings)


PAGING_WHY = {  # the fields every paging operation's template has
    "pDxgAdapter": "the kernel's adapter object: the row's adapter",
    "hDmaBuffer": "the kernel's DMA buffer the operation is written into; no mirror member, in --json only",
    "ContinueNextBuffer": "the kernel's: the operation goes on in the next DMA buffer ([reading] of its name); in "
                          "--json only",
    "hAllocationGlobalHandle": "the allocation paged: AdapterAllocation's hVidMmGlobalAlloc ([reading]: the manifest "
                               "names no target; the placements read their global handle so); through it, its process "
                               "and segment sets",
}


def paging_mapping(event: str, fields: tuple, own: dict) -> tuple:
    """A paging event's MAPPING: the reasons every paging template shares, then its own fields'."""
    from ..model.registry import Mapping

    why = {**PAGING_WHY, **own}
    return tuple(Mapping(event, name, None, None, why[name]) for name, _t in fields)


def change_track(handle_field: str, operation: str, through_device: bool, segment_field: str | None = None):
    """``EventEntry.track`` of a residency change (``change_apply``'s)."""
    def track(np, tracker, columns, unchecked, adapters, numbers, times):
        n = len(numbers)
        segments = columns[segment_field].tolist() if segment_field is not None else [None] * n
        rows = zip(columns[handle_field].tolist(), segments, _list(numbers), _list(times))
        live, state = allocations(tracker), pressure(tracker)
        resolve = _global_of(tracker) if through_device else None

        def advance(count: int) -> list:
            return [change(state, live, resolve(h) if resolve else h, segment, number, ns, operation)
                    for h, segment, number, ns in islice(rows, count)]
        return advance
    return track


HANDLE_WHY = {  # how the residency events name their allocation
    "global": "the allocation: AdapterAllocation's hVidMmGlobalAlloc ([reading]: the manifest names no target; the "
              "placements read their global handle so); through it, its adapter and process",
    "device": "the device's allocation (a DeviceAllocation's hVidMmAlloc, [reading]: see device_allocation): through "
              "it, the global allocation, its adapter and process",
}


def change_mapping(event: str, fields: tuple, own: dict) -> tuple:
    """A residency event's MAPPING: ``own`` gives each field's reason, or "global"/"device" for its handle."""
    from ..model.registry import Mapping

    return tuple(Mapping(event, name, None, None, HANDLE_WHY.get(own[name], own[name])) for name, _t in fields)
