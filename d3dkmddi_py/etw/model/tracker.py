"""The Tracker: a trace's state as its events leave it (each event's ``apply`` from its catalog entry),
per adapter, and the checks of its records against the segments reported so far."""
from __future__ import annotations

from ..._records import replace
from ... import bulk
from ...semantics import Adapter, check
from ...errors import EtwInputError, flag_argument, shown
from ...target import as_target
from ..catalog import ENTRIES, ENTRY_OF
from .mapping import ALLOCATION_TYPE, applies, keep, packer
from .events import Event, registered_kind
from .odd import OddReports
from .schema import EventKind
from .state import (LIVE_ROW, LIVE_NUMBER, LIVE_PROCESS, LIVE_SIZE, LIVE_TIME, AdapterTrace, AllocationEntry,  # noqa: F401
                    Later, ProcessTally, SegmentEntry, Series)  # (the state's types, here too)

CHUNK = 65536  # allocations checked column-wise at once
LOOSE_KEPT = 10_000  # findings of events with no record to sit under that the text lists (the rest are counted)


def findings_rows(columns, *, adapter=None) -> list:
    """(row, rule_id, severity, field, value) of ``bulk.column_findings``, only rules that hold for events."""
    table = bulk.column_findings(columns, adapter=adapter)
    return [r for r in table.rows() if applies(r[1])]


class Tracker:
    """Applies events in order (each event's entry says how), checking allocations against the segments
    reported so far; ``finish()`` checks what is left and gives the adapters.

    ``entries``: keep each live allocation whole (its event, bytes and findings: the text and
    ``adapters()``), else only what later events read of it (its adapter and segment sets, for
    placements: --json and the tables).  ``series``: keep every sample of the values over time as
    columns (else their summaries only).

    ``Tracker(...)`` and ``apply`` check what they are given.  The underscored methods are the per-event
    machinery: the readers call ``_apply`` with the Events they made and the catalog's entries call the
    others with values of those Events, unchecked."""

    def __init__(self, target=None, *, entries: bool = True, series: bool = False):
        tgt = as_target(target)  # every spelling target() takes; a bad one is the package's own error
        self.target = tgt
        self.packer = packer(tgt.abi, tgt.interface_version)
        self.entries, self.series = flag_argument(entries, "Tracker: entries"), flag_argument(series, "Tracker: series")
        self.adapters: dict = {}
        self.counts: dict = {}  # event name -> events applied
        self.live: dict = {}  # hVidMmGlobalAlloc -> a live allocation: its row of ``_track_allocations`` from the adapter
        self.processes: dict = {}  # hProcessId -> ProcessTally of its allocations
        self.live_entries: dict = {}  # hVidMmGlobalAlloc -> its AllocationEntry (``entries`` only)
        self.devices: dict = {}  # hVidMmAlloc -> (adapter pointer, hVidMmGlobalAlloc) of a live device allocation
        self.notes: dict = {}  # event name -> {what: count}: what its events could not be applied to
        self.loose: list = []  # (event, findings) of events whose findings sit under no record (``entries``)
        self.loose_more = 0  # and how many more there were
        self._views: dict = {}  # pointer -> (segment count key, Adapter or None, note)
        self.odd = OddReports()  # events not as their template says: reported once a kind, counted
        self.partial: dict = {}  # entry name -> events of it whose payload lacked fields (read, not applied)

    def _state(self, pointer: int) -> AdapterTrace:
        a = self.adapters.get(pointer)
        if a is None:
            a = self.adapters[pointer] = AdapterTrace(pointer)
        return a

    def apply(self, event):
        """Update the state with one Event (``etw.read``'s, ``etw.from_records``'); returns what its entry's
        ``apply`` returns (a mirror record's bytes, a placement, ...)."""
        return self._apply(_event(event, "Tracker.apply: event"))

    def _apply(self, event):
        kind = event.kind
        name = kind.event
        self.counts[name] = self.counts.get(name, 0) + 1
        entry = ENTRY_OF.get(kind.event_id)
        if entry is None or entry.apply is None:
            return None
        odd = event.odd
        if odd is not None and not odd.whole:  # its entry reads every field of the template: this one lacks some
            self.partial[entry.event] = self.partial.get(entry.event, 0) + 1
            return None
        return entry.apply(self, event)

    def applied(self, event) -> bool:
        """Whether an event is one its entry applies (an entry's event with every field of its template)."""
        odd = event.odd
        return event.kind.event_id in ENTRY_OF and (odd is None or odd.whole)

    def _findings(self, event, applied) -> list:
        """The findings of an event just applied (those its entry checks one event at a time)."""
        entry = ENTRY_OF.get(event.kind.event_id)
        if entry is None or entry.findings is None or not self.applied(event):
            return []
        return entry.findings(self, event, applied)

    def _note(self, event, what: str) -> None:
        """Count an event its state change could not be applied to (``what`` says why)."""
        notes = self.notes.setdefault(event.kind.event, {})
        notes[what] = notes.get(what, 0) + 1

    def _sample(self, event, table: str, key, value: int) -> None:
        """One more sample of a value over time: ``table`` names the adapter's dict of Series
        (``resident``, ``usage``, ``budget``), ``key`` the series in it."""
        series = getattr(self._state(event.adapter), table)
        s = series.get(key)
        if s is None:
            s = series[key] = Series._new(self.series)
        s._add(event.number, value)

    def _keep_loose(self, event, findings: list) -> None:
        """Findings of an event that sit under no live record: the text lists them after the adapters."""
        if not findings or not self.entries:
            return
        if len(self.loose) < LOOSE_KEPT:
            self.loose.append((event, findings))
        else:
            self.loose_more += 1

    # ---- live allocations, as later events read them
    def _allocation_of(self, global_handle: int):
        """(adapter pointer, read set, write set, AllocationEntry or None) of a live allocation by its
        hVidMmGlobalAlloc, or None."""
        found = self.live.get(global_handle)
        if found is None:
            return None
        return found[:3] + (self.live_entries.get(global_handle),)

    def _device_allocation(self, handle: int):
        """(adapter pointer, hVidMmGlobalAlloc) of a live device allocation by its hVidMmAlloc, or None."""
        return self.devices.get(handle)

    def _tell(self, global_handle: int, event, line, findings) -> None:
        """What ``event`` says of a live allocation: the allocation's text shows the last of each kind
        (``line()``, made only for an allocation kept whole, and its findings); the findings of one it replaces,
        or of an allocation not kept whole, go with the findings of events about no live record."""
        entry = self.live_entries.get(global_handle)
        if entry is None:
            self._keep_loose(event, list(findings))
            return
        name = event.kind.event
        old = entry.later.get(name)
        if old is not None:
            self._keep_loose(old.event, old.findings)
        entry.later[name] = Later(line(), list(findings), event, 1 if old is None else old.count + 1)

    def _track_allocations(self, rows) -> None:
        """AdapterAllocation events in order, each a row of ``LIVE_ROW`` (Stop or not, hVidMmGlobalAlloc, then
        what a live allocation keeps): the live allocations by hVidMmGlobalAlloc (what later events name them
        by; 0 names none, so such an allocation is counted, not kept) and each hProcessId's tally.  One loop for
        an Event (``apply``) and for a run of a batch's rows (``track``), so the two keep the same state."""
        live, processes = self.live, self.processes
        for row in rows:
            stop, handle, kept = row[0], row[1], row[2:]
            process = kept[LIVE_PROCESS]
            tally = processes.get(process)
            if tally is None:
                tally = processes[process] = ProcessTally()
            old = live.pop(handle, None) if handle else None
            if old is not None:  # stopped, or started again: its bytes leave its owner
                owner = processes[old[LIVE_PROCESS]]
                owner.live -= 1
                owner.live_bytes -= old[LIVE_SIZE]
            if stop:
                tally.stopped += 1
                continue
            tally.started += 1
            if handle:
                live[handle] = kept
                tally.add(kept[LIVE_SIZE], kept[LIVE_NUMBER], kept[LIVE_TIME])

    def _live_update(self, global_handle: int, name: str, value) -> None:
        """A live allocation's kept ``name`` (of ``LIVE_ROW``) is now ``value`` (a priority changed)."""
        kept = self.live.get(global_handle)
        if kept is not None:
            i = LIVE_ROW.index(name) - 2
            self.live[global_handle] = kept[:i] + (value,) + kept[i + 1:]

    # ---- checks against the segments reported so far
    def _view(self, pointer: int):
        """(Adapter or None, note) for the segments the adapter has reported so far."""
        cached = self._views.get(pointer)
        if cached is None:
            cached = self._views[pointer] = _adapter_view(self._state(pointer), self.packer, self.target)
        return cached

    def _segments_changed(self, pointer: int) -> None:
        self._views.pop(pointer, None)

    def _check_allocation(self, pointer: int, data: bytes) -> list:
        adapter, _note = self._view(pointer)
        return keep(check(data, ALLOCATION_TYPE, target=self.target, adapter=adapter))

    def _check_segment(self, data: bytes) -> list:
        return keep(check(data, self.packer.segment_type, target=self.target))

    def _segment_findings(self, pointer: int) -> tuple:
        """(segment id -> findings, adapter-wide findings) for the segments reported so far.

        With an Adapter view, one ``check(adapter)`` gives both (a finding on ``segments[i].X`` is
        segment i+1's, with the field read as ``X``); without one, each descriptor is checked alone.
        """
        a = self._state(pointer)
        adapter, _note = self._view(pointer)
        per = {sid: [] for sid in a.segments}
        wide = []
        if adapter is None:
            for sid, entry in a.segments.items():
                per[sid] = self._check_segment(entry.data)
            return per, wide
        for f in keep(check(adapter)):
            head, _, rest = f.field.partition(".")
            if head.startswith("segments[") and rest and f.rule_id.startswith(("SEGFLAGS.", "DESC.")):
                per[int(head[9:-1]) + 1].append(replace(f, field=rest))
            else:
                wide.append(f)
        return per, wide

    def _found(self, adapters, checked, data: bytes) -> dict:
        """row -> its (rule_id, severity, field) findings, for the rows that have any."""
        found: dict = {}
        if not len(adapters):
            return found
        size = len(data) // len(adapters)
        if all(checked) and len(set(adapters)) == 1:  # the common case: one adapter, no Stop
            groups = {adapters[0]: range(len(adapters))}
        else:
            groups = {}
            for i, (pointer, check_it) in enumerate(zip(adapters, checked)):
                if check_it:
                    groups.setdefault(pointer, []).append(i)
        for pointer, rows in groups.items():
            adapter, _note = self._view(pointer)
            part = data if len(rows) == len(adapters) else b"".join(data[i * size:(i + 1) * size] for i in rows)
            columns = bulk.decode_array(ALLOCATION_TYPE, part, target=self.target)
            for row, rule_id, severity, name, _value in findings_rows(columns, adapter=adapter):
                found.setdefault(rows[row], []).append((rule_id, severity, name))
        return found

    def _batch_findings(self, items) -> list:
        """Per item, its Finding objects (with messages): column-wise checks find the records that have any,
        and only those are checked one by one for the messages."""
        return self._findings_of_rows([e.adapter for e, _d in items], [e.opcode != "Stop" for e, _d in items],
                                     b"".join(d for _e, d in items))

    def _findings_of_rows(self, adapters, checked, data: bytes) -> list:
        """``_batch_findings`` of allocation records given as columns: each row's adapter pointer,
        whether it is checked (not a Stop), and the records' bytes.  A row's findings are a list, or
        an empty tuple when it has none."""
        size = len(data) // len(adapters) if len(adapters) else 0
        out = [()] * len(adapters)  # most rows have none: one shared empty tuple, not a list a row
        for i in self._found(adapters, checked, data):
            out[i] = self._check_allocation(adapters[i], data[i * size:(i + 1) * size])
        return out

    def finish(self) -> dict:
        """Check every adapter's segments and live allocations against its final segments."""
        for pointer, a in self.adapters.items():
            a.adapter, a.adapter_note = self._view(pointer)
            per, a.adapter_findings = self._segment_findings(pointer)
            for sid, entry in a.segments.items():
                entry.findings = per[sid]
            entries = list(a.allocations.values())
            for start in range(0, len(entries), CHUNK):
                part = entries[start:start + CHUNK]
                for entry, found in zip(part, self._batch_findings([(e.event, e.data) for e in part])):
                    entry.findings = list(found)
        return self.adapters


def _adapter_view(a: AdapterTrace, pk, tgt):
    if not a.segments:
        return None, "no ReportSegment event for this adapter: allocations are checked alone"
    ids = sorted(a.segments)
    if ids != list(range(1, len(ids) + 1)):
        return None, (f"segment ids {', '.join(map(str, ids))} are not 1..{len(ids)}, so a segment set cannot be "
                      f"read against them: allocations are checked alone")
    if len(ids) > 32:
        return None, f"{len(ids)} segments, more than a segment set names: allocations are checked alone"
    cls = pk.classes["segment descriptor"]
    descriptors = [cls.from_buffer_copy(a.segments[i].data) for i in ids]
    return Adapter(tuple(descriptors), tgt.abi, tgt.interface_version), ""


def adapters(events, *, target=None, series: bool = True) -> dict:
    """pDxgAdapter -> AdapterTrace, from events in trace order (``read(...)`` or ``from_records(...)``).

    Segments: the last ReportSegment of each id.  Allocations: Start and DCStart add one, Stop
    removes it by hDxgGlobalAlloc (hVidMmGlobalAlloc when that is 0).  Resident bytes per segment
    and each process's usage and budget per segment group: ``Series`` (every sample as columns
    unless ``series=False``).  Findings: each segment's, the adapter's, and each live allocation's
    against the adapter's segments, with only the rules that hold for these events (``RULES_APPLY``).
    ``target``: a Target or (abi, version); default x64 at the newest interface version (the trace
    does not say the driver's).
    """
    tracker = Tracker(target, series=flag_argument(series, "series"))
    if isinstance(events, (str, bytes, dict)) or not hasattr(events, "__iter__"):
        raise EtwInputError(f"events must be an iterable of etw Events (etw.read, etw.from_records), not "
                            f"{type(events).__name__}")
    for event in events:
        tracker._apply(_event(event, "events: an item"))
    return tracker.finish()


def _event(event, name: str):
    """An Event of a registered event, as the readers make them (what the per-event machinery takes)."""
    if not isinstance(event, Event):
        raise EtwInputError(f"{name} must be an etw Event (etw.read, etw.from_records), not {shown(event, 40)}")
    kind = event.kind  # an Event's kind is checked when it is built; one assigned since is named as the kind
    registered_kind(kind, name if isinstance(kind, EventKind) else f"{name}'s kind")
    return event
