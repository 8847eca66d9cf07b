"""TotalBytesResidentInSegment (event 274, task 160, template TotalBytesResidentInSegmentArgs): the bytes
resident in one segment of an adapter, as the video memory manager counts them; a series per segment."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, TableSpec, field_columns, manifest_fields, register
from ..outputs import panels as draw
from ..model.section import SeriesSection, bytes_text

EVENT = "TotalBytesResidentInSegment"
ID = 274
FIELDS = manifest_fields(ID)

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
    tracker.sample(event, "resident", event.fields["SegmentId"], event.fields["TotalBytesResident"])


def _size(a, sid: int) -> str:
    segment = a.segments.get(sid)  # ReportSegment's part of the adapter
    if segment is None:
        return " (no ReportSegment of this id)"
    return f" of {bytes_text(segment.event.fields['Size'])}"


TEXT = SeriesSection("resident", f"resident bytes per segment ({EVENT})", "segment", lambda sid: f"segment {sid}",
                     "resident bytes of", _size)


def take(collector, np, cells, x, numbers, adapters) -> None:
    draw.grouped(collector, np, "resident", adapters, [cells["SegmentId"]], cells["TotalBytesResident"], x, numbers)


def panel(np, picture, a, ax, columns: int) -> None:
    """Bytes resident per segment, and dashed, each segment's Size from its ReportSegment."""
    resident, sizes = a.group("resident"), a.notes.get("sizes", {})
    title = f"adapter 0x{a.pointer:x}: bytes resident per segment ({EVENT}), dashed: its Size (ReportSegment)"
    if not resident:
        return draw.empty(ax, title, f"no {EVENT} events for this adapter: {draw.record_hint((ID,))}")
    keys = draw.top(resident, list(resident))
    colors = draw.colors(keys)
    draw.axes(np, picture, ax, title, max([resident[k].highest() for k in keys] + [sizes.get(k, 0) for k in keys]))
    draw.lines(np, picture, ax, [(f"segment {k}", resident[k], colors[k]) for k in keys], columns)
    for k in keys:
        if k in sizes:
            ax.axhline(sizes[k], color=colors[k], linestyle="--", linewidth=1,
                       label=f"segment {k} Size {draw.size_text(sizes[k])}")
    draw.marks(np, picture, a, ax, columns)
    draw.legend(ax, len(resident) - len(keys) + (1 if a.dropped.get("resident") else 0), "segment")


register(EventEntry(
    event=EVENT, ids=(ID,), mapping=MAPPING, adapter="DxgAdapter",
    table=TableSpec("residency", field_columns(FIELDS, skip=("DxgAdapter",))), apply=apply, text=TEXT, order=30, groups=("resident",),
    panel=draw.Panel("resident", ("SegmentId", "TotalBytesResident"), take, panel, order=10)))
