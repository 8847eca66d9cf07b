"""Per adapter: the segments it reported and its live allocations, checked against those segments."""
from __future__ import annotations

from .._records import dataclass, field, replace
from .. import bulk
from ..semantics import Adapter, check
from ..errors import EtwInputError
from ..target import as_target
from .mapping import ALLOCATION_TYPE, applies, keep, packer
from .events import Event
from .schema import REPORT_SEGMENT

CHUNK = 65536  # allocations checked column-wise at once


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


@dataclass
class AdapterTrace:
    """One pDxgAdapter: segments by id (a later ReportSegment replaces), live allocations by handle."""

    pointer: int
    segments: dict = field(default_factory=dict)
    allocations: dict = field(default_factory=dict)
    adapter: Adapter | None = None  # the semantics view of the segments, when ids are 1..n
    adapter_note: str = ""  # why allocations were checked without the segments, if they were
    adapter_findings: list = field(default_factory=list)  # adapter-wide rules (one AGP segment)
    started: int = 0
    stopped: int = 0
    stops_unmatched: int = 0  # Stop of an allocation the trace did not show starting
    segments_replaced: int = 0


def findings_rows(columns, *, adapter=None) -> list:
    """(row, rule_id, severity, field, value) of ``bulk.column_findings``, only rules that hold for events."""
    table = bulk.column_findings(columns, adapter=adapter)
    return [r for r in table.rows() if applies(r[1])]


class Tracker:
    """Applies events in order; ``check_allocation`` checks against the segments reported so far."""

    def __init__(self, target=None):
        tgt = as_target(target)  # every spelling target() takes; a bad one is the package's own error
        self.target = tgt
        self.packer = packer(tgt.abi, int(tgt.interface_version))
        self.adapters: dict = {}
        self._views: dict = {}  # pointer -> (segment count key, Adapter or None, note)

    def state(self, pointer: int) -> AdapterTrace:
        a = self.adapters.get(pointer)
        if a is None:
            a = self.adapters[pointer] = AdapterTrace(pointer)
        return a

    def apply(self, event):
        """Update the state; returns the mirror bytes of the event (descriptor, or allocation info)."""
        a = self.state(event.adapter)
        if event.event == REPORT_SEGMENT:
            data = self.packer.segment(event.fields, event.where)
            if event.segment_id in a.segments:
                a.segments_replaced += 1
            a.segments[event.segment_id] = SegmentEntry(event.segment_id, event, data)
            self._views.pop(event.adapter, None)
            return data
        data = self.packer.allocation(event.fields, event.where)
        if event.opcode == "Stop":
            a.stopped += 1
            if a.allocations.pop(event.handle, None) is None:
                a.stops_unmatched += 1
        else:
            a.started += 1
            a.allocations[event.handle] = AllocationEntry(event, data, self.packer.usage(event.fields, event.where))
        return data

    def view(self, pointer: int):
        """(Adapter or None, note) for the segments the adapter has reported so far."""
        cached = self._views.get(pointer)
        if cached is None:
            cached = self._views[pointer] = _adapter_view(self.state(pointer), self.packer, self.target)
        return cached

    def check_allocation(self, pointer: int, data: bytes) -> list:
        adapter, _note = self.view(pointer)
        return keep(check(data, ALLOCATION_TYPE, target=self.target, adapter=adapter))

    def check_segment(self, data: bytes) -> list:
        return keep(check(data, self.packer.segment_type, target=self.target))

    def segment_findings(self, pointer: int) -> tuple:
        """(segment id -> findings, adapter-wide findings) for the segments reported so far.

        With an Adapter view, one ``check(adapter)`` gives both (a finding on ``segments[i].X`` is
        segment i+1's, with the field read as ``X``); without one, each descriptor is checked alone.
        """
        a = self.state(pointer)
        adapter, _note = self.view(pointer)
        per = {sid: [] for sid in a.segments}
        wide = []
        if adapter is None:
            for sid, entry in a.segments.items():
                per[sid] = self.check_segment(entry.data)
            return per, wide
        for f in keep(check(adapter)):
            head, _, rest = f.field.partition(".")
            if head.startswith("segments[") and rest and f.rule_id.startswith(("SEGFLAGS.", "DESC.")):
                per[int(head[9:-1]) + 1].append(replace(f, field=rest))
            else:
                wide.append(f)
        return per, wide

    def findings_of_segment(self, event) -> list:
        """The findings of a ReportSegment event just applied: its segment's, and the adapter-wide ones
        that name it (one AGP segment is reported with the segment its field names)."""
        per, wide = self.segment_findings(event.adapter)
        head = f"segments[{event.segment_id - 1}]."
        return per[event.segment_id] + [f for f in wide if f.field.startswith(head)]

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
            adapter, _note = self.view(pointer)
            part = data if len(rows) == len(adapters) else b"".join(data[i * size:(i + 1) * size] for i in rows)
            columns = bulk.decode_array(ALLOCATION_TYPE, part, target=self.target)
            for row, rule_id, severity, name, _value in findings_rows(columns, adapter=adapter):
                found.setdefault(rows[row], []).append((rule_id, severity, name))
        return found

    def batch_findings(self, items) -> list:
        """Per item, its Finding objects (with messages): column-wise checks find the records that have any,
        and only those are checked one by one for the messages."""
        return self.findings_of_rows([e.adapter for e, _d in items], [e.opcode != "Stop" for e, _d in items],
                                     b"".join(d for _e, d in items))

    def findings_of_rows(self, adapters, checked, data: bytes) -> list:
        """``batch_findings`` of allocation records given as columns: each row's adapter pointer,
        whether it is checked (not a Stop), and the records' bytes."""
        size = len(data) // len(adapters) if len(adapters) else 0
        out = [[] for _ in adapters]
        for i in self._found(adapters, checked, data):
            out[i] = self.check_allocation(adapters[i], data[i * size:(i + 1) * size])
        return out

    def finish(self) -> dict:
        """Check every adapter's segments and live allocations against its final segments."""
        for pointer, a in self.adapters.items():
            a.adapter, a.adapter_note = self.view(pointer)
            per, a.adapter_findings = self.segment_findings(pointer)
            for sid, entry in a.segments.items():
                entry.findings = per[sid]
            entries = list(a.allocations.values())
            for start in range(0, len(entries), CHUNK):
                part = entries[start:start + CHUNK]
                for entry, found in zip(part, self.batch_findings([(e.event, e.data) for e in part])):
                    entry.findings = found
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


def adapters(events, *, target=None) -> dict:
    """pDxgAdapter -> AdapterTrace, from events in trace order (``read(...)`` or ``from_records(...)``).

    Segments: the last ReportSegment of each id.  Allocations: Start and DCStart add one, Stop
    removes it by hDxgGlobalAlloc (hVidMmGlobalAlloc when that is 0).  Findings: each segment's,
    the adapter's, and each live allocation's against the adapter's segments, with only the rules
    that hold for these events (``RULES_APPLY``).  ``target``: a Target or (abi, version); default
    x64 at the newest interface version (the trace does not say the driver's).
    """
    tracker = Tracker(target)
    if isinstance(events, (str, bytes, dict)) or not hasattr(events, "__iter__"):
        raise EtwInputError(f"events must be an iterable of etw Events (etw.read, etw.from_records), not "
                            f"{type(events).__name__}")
    for event in events:
        if not isinstance(event, Event):
            raise EtwInputError(f"events must be etw Events (etw.read, etw.from_records), not "
                                f"{type(event).__name__}")
        tracker.apply(event)
    return tracker.finish()
