"""ReportSegment (event 78, task 53, template ReportSegmentArgs_V1): a segment the driver reported, as the
kernel logs its DXGK_SEGMENTDESCRIPTOR; a later report of the same id replaces the earlier one."""
from __future__ import annotations

from ..._records import dataclass, field, replace
from ...semantics import Adapter, check
from ..model.mapping import keep
from ..model.registry import SEGMENT, Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..outputs.panels import Panel, plain
from ..model.section import Section, plural

_M, S = Mapping, "ReportSegment"
EVENT = S
FIELDS = manifest_fields(78)  # the manifest's template
MAPPING = (
    _M(S, "ulSegmentId", None, None, "the segment's id: the descriptor is segment n of the adapter (bit n-1 of a "
                                     "segment set); a later event for the same id replaces the earlier one"),
    _M(S, "pDxgAdapter", None, None, "the kernel's adapter object: it groups segments and allocations by adapter"),
    _M(S, "BaseAddress", SEGMENT, "BaseAddress.QuadPart", "same name; the 64 bits of the PHYSICAL_ADDRESS"),
    _M(S, "CpuTranslatedAddress", SEGMENT, "CpuTranslatedAddress.QuadPart",
       "same name; the 64 bits of the PHYSICAL_ADDRESS"),
    _M(S, "Size", SEGMENT, "Size", "same name"),
    _M(S, "NbOfBanks", SEGMENT, "NbOfBanks", "same name"),
    _M(S, "Flags", SEGMENT, "Flags.Value", "the DXGK_SEGMENTFLAGS word the driver reported (no bit map in the "
                                           "manifest), read at the chosen interface version"),
    _M(S, "CommitLimit", SEGMENT, "CommitLimit", "same name"),
    _M(S, "SystemMemoryEndAddress", SEGMENT, "SystemMemoryEndAddress",
       "same name (DXGK_SEGMENTDESCRIPTOR3 only; no member before WIN8)"),
    _M(S, "MemorySegmentGroup", None, None, "the kernel's local/non-local grouping; no descriptor member holds it"),
)


@dataclass
class SegmentEntry:
    segment_id: int
    event: object  # the ReportSegment Event
    data: bytes  # the descriptor's bytes (Packer.pack)
    findings: list = field(default_factory=list)


class AdapterSegments:
    """An adapter's segments by id (a later report replaces an earlier one), how many reports were replaced, and
    the findings of the rules about all of them (one AGP segment; a plain object: it pickles with the adapter's
    record, by every protocol)."""

    def __init__(self):
        self.segments: dict = {}
        self.segments_replaced = 0
        self.adapter_findings: list = []


def apply(tracker, event) -> bytes:
    """The segment's descriptor replaces any earlier one of its id; returns the descriptor's bytes."""
    a = tracker.adapter(event.adapter).part(EVENT)
    sid = event.fields["ulSegmentId"]
    data = tracker.packer.pack(SEGMENT, event)
    if sid in a.segments:
        a.segments_replaced += 1
    a.segments[sid] = SegmentEntry(sid, event, data)
    tracker.segments_changed(event.adapter)
    return data


def view(tracker, a) -> tuple:
    """(semantics Adapter or None, why none) of the segments an adapter has reported so far: the rules read a
    segment set against segments 1..n."""
    segments = a.part(EVENT).segments
    if not segments:
        return None, "no ReportSegment event for this adapter: allocations are checked alone"
    ids = sorted(segments)
    if ids != list(range(1, len(ids) + 1)):
        return None, (f"segment ids {', '.join(map(str, ids))} are not 1..{len(ids)}, so a segment set cannot be "
                      f"read against them: allocations are checked alone")
    if len(ids) > 32:
        return None, f"{len(ids)} segments, more than a segment set names: allocations are checked alone"
    pk, tgt = tracker.packer, tracker.target
    cls = pk.classes[SEGMENT]
    return Adapter(tuple(cls.from_buffer_copy(segments[i].data) for i in ids), tgt.abi, tgt.interface_version), ""


def segment_findings(tracker, pointer: int) -> tuple:
    """(segment id -> findings, adapter-wide findings) for the segments reported so far.

    With an Adapter view, one ``check(adapter)`` gives both (a finding on ``segments[i].X`` is segment i+1's, with
    the field read as ``X``); without one, each descriptor is checked alone."""
    segments = tracker.adapter(pointer).part(EVENT).segments
    adapter, _note = tracker.view(pointer)
    per = {sid: [] for sid in segments}
    wide = []
    if adapter is None:
        for sid, entry in segments.items():
            per[sid] = tracker.check(None, tracker.packer.segment_type, entry.data)
        return per, wide
    for f in keep(check(adapter)):
        head, _, rest = f.field.partition(".")
        if head.startswith("segments[") and rest and f.rule_id.startswith(("SEGFLAGS.", "DESC.")):
            per[int(head[9:-1]) + 1].append(replace(f, field=rest))
        else:
            wide.append(f)
    return per, wide


def findings(tracker, event, _data) -> list:
    """The segment's findings and the adapter-wide ones that name it (one AGP segment is reported with the
    segment its field names)."""
    per, wide = segment_findings(tracker, event.adapter)
    sid = event.fields["ulSegmentId"]
    head = f"segments[{sid - 1}]."
    return per[sid] + [f for f in wide if f.field.startswith(head)]


def finish(tracker) -> None:
    """Each adapter's segments checked as they are at the trace's end, with the view the rules read."""
    for pointer, a in tracker.adapters.items():
        a.adapter, a.adapter_note = tracker.view(pointer)
        per, a.part(EVENT).adapter_findings = segment_findings(tracker, pointer)
        for sid, entry in a.part(EVENT).segments.items():
            entry.findings = per[sid]


def record(tracker, event, data) -> tuple:
    return SEGMENT, data, None, True


def sizes(collector, np, cells, x, numbers, adapters) -> None:
    """The resident panel's dashed lines: each segment's Size as its last report gave it."""
    for pointer, sid, size in zip(adapters, plain(cells["ulSegmentId"]), plain(cells["Size"])):
        a = collector.adapter(pointer)
        if a is not None:
            a.notes.setdefault("sizes", {})[sid] = size  # a later report replaces


class _Text(Section):
    def unknown(self, tracker) -> list:
        pk = tracker.packer
        return [f"{pk.segment_type} {', '.join(pk.unknown_members(SEGMENT))}"]

    def heading(self, a) -> str:
        return plural(len(a.segments), "segment")

    def adapter(self, out, tracker, a) -> None:
        for sid in sorted(a.segments):
            s = a.segments[sid]
            out.line(f"\n-- segment {sid}: ReportSegment event #{s.event.number}, MemorySegmentGroup "
                     f"{s.event.fields['MemorySegmentGroup']}")
            out.record(SEGMENT, s.data, findings=s.findings)
        out.findings(a.adapter_findings)

    def summary(self, out, tracker, entry) -> None:
        segments = sum(len(a.segments) for a in tracker.adapters.values())
        replaced = sum(a.segments_replaced for a in tracker.adapters.values())
        found = sum(len(s.findings) for a in tracker.adapters.values() for s in a.segments.values()) + \
            sum(len(a.adapter_findings) for a in tracker.adapters.values())
        out.line(f"segments: {segments} ({plural(replaced, 'report')} replaced by a later one), "
                 f"{plural(found, 'finding')}")


register(EventEntry(
    event=S, ids=(78,), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("segments", (Column("ulSegmentId", "int", field="ulSegmentId"),
                                 Column("MemorySegmentGroup", "int", field="MemorySegmentGroup")), (SEGMENT,)),
    apply=apply, findings=findings, record=record, text=_Text(), barrier=True, json_names={"Flags": "Flags.Value"},
    adapter_state=lambda: AdapterSegments(), view=view, finish=finish,
    panel=Panel("resident", ("ulSegmentId", "Size"), sizes),
    order=10))
