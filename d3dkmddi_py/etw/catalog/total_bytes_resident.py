"""TotalBytesResidentInSegment (event 274, task 160, template TotalBytesResidentInSegmentArgs): the bytes
resident in one segment of an adapter, as the video memory manager counts them; a series per segment."""
from __future__ import annotations

from ..registry import EventEntry, Mapping, TableSpec, field_columns, register
from ..schema import POINTER, UINT32, UINT64
from ..section import Section, bytes_text, plural

EVENT = "TotalBytesResidentInSegment"
FIELDS = (("DxgAdapter", POINTER), ("SegmentId", UINT32), ("TotalBytesResident", UINT64))

MAPPING = (
    Mapping(EVENT, "DxgAdapter", None, None,
            "the kernel's adapter object, which the other events call pDxgAdapter ([reading]: the manifest's own "
            "name for the same DXGADAPTER pointer in a VidMm event); it groups the series by adapter"),
    Mapping(EVENT, "SegmentId", None, None,
            "the segment's id as ReportSegment's ulSegmentId numbers it (segment n, bit n-1 of a segment set)"),
    Mapping(EVENT, "TotalBytesResident", None, None,
            "bytes resident in the segment now: the kernel's count, no descriptor member holds it (CommitLimit is "
            "a limit, not a use)"),
)


def apply(tracker, event):
    """One more sample of the segment's resident bytes."""
    a = tracker.state(event.adapter)
    tracker.series_of(a.resident, event.fields["SegmentId"]).add(event.number, event.fields["TotalBytesResident"])


class _Text(Section):
    def heading(self, a) -> str | None:
        return f"resident bytes of {plural(len(a.resident), 'segment')}" if a.resident else None

    def adapter(self, out, tracker, a) -> None:
        if not a.resident:
            return
        out.line(f"\n-- resident bytes per segment ({EVENT})")
        for sid in sorted(a.resident):
            s = a.resident[sid]
            segment = a.segments.get(sid)
            size = f" of {bytes_text(segment.event.fields['Size'])}" if segment is not None else \
                " (no ReportSegment of this id)"
            out.line(f"   segment {sid}: {plural(s.count, 'sample')}, last {bytes_text(s.last)}{size}, highest "
                     f"{bytes_text(s.high)} (event #{s.high_at}), lowest {bytes_text(s.low)}")

    def counts(self, tracker) -> list:
        return [plural(sum(len(a.resident) for a in tracker.adapters.values()), "segment")]


register(EventEntry(
    event=EVENT, ids={274: "Info"}, task=160, symbols={274: EVENT}, versions={0: FIELDS}, manifest_version=0,
    templates={274: "TotalBytesResidentInSegmentArgs"}, mapping=MAPPING, adapter="DxgAdapter",
    table=TableSpec("residency", field_columns(FIELDS, skip=("DxgAdapter",))), apply=apply, text=_Text(), order=30))
