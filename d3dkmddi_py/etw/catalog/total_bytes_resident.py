"""TotalBytesResidentInSegment (event 274, task 160, template TotalBytesResidentInSegmentArgs): the bytes
resident in one segment of an adapter, as the video memory manager counts them; a series per segment."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, TableSpec, field_columns, register
from ..model.schema import POINTER, UINT32, UINT64
from ..outputs.section import SeriesSection, bytes_text

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
    tracker._sample(event, "resident", event.fields["SegmentId"], event.fields["TotalBytesResident"])


def _size(a, sid: int) -> str:
    segment = a.segments.get(sid)
    if segment is None:
        return " (no ReportSegment of this id)"
    return f" of {bytes_text(segment.event.fields['Size'])}"


TEXT = SeriesSection("resident", f"resident bytes per segment ({EVENT})", "segment", lambda sid: f"segment {sid}",
                     "resident bytes of", _size)


register(EventEntry(
    event=EVENT, ids={274: "Info"}, task=160, symbols={274: EVENT}, versions={0: FIELDS}, manifest_version=0,
    templates={274: "TotalBytesResidentInSegmentArgs"}, mapping=MAPPING, adapter="DxgAdapter",
    table=TableSpec("residency", field_columns(FIELDS, skip=("DxgAdapter",))), apply=apply, text=TEXT, order=30))
