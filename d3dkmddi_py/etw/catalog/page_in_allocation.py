"""PageInAllocation (event 73, template PageInAllocationArgs): an allocation paged into a segment (where it is from
then on).  A row of the ``residency_changes`` table, shared with the other residency changes (``_pressure``): the
allocation found through its device allocation, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, WHERE_NEXT, change_apply, change_mapping, change_track, findings, resolved

EVENT = "PageInAllocation"
FIELDS = manifest_fields(73)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationHandle": "device",
    "uiSegmentId": "the segment it is paged into: " + WHERE_NEXT,
    "uliOffset": "the offset in the segment; in --json only",
})

register(EventEntry(
    event=EVENT, ids=(73,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationHandle", EVENT, True, segment_field="uiSegmentId"),
    track=change_track("hAllocationHandle", EVENT, True, segment_field="uiSegmentId"),
    findings=findings, resolved=resolved, order=64))
