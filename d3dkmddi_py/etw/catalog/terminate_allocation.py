"""TerminateAllocation (event 39, template TerminateAllocationArgs): a device's allocation terminated.  A row of the
``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found through
its device allocation, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "TerminateAllocation"
FIELDS = manifest_fields(39)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hVidMmAlloc": "device",
})

register(EventEntry(
    event=EVENT, ids=(39,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hVidMmAlloc", EVENT, True),
    track=change_track("hVidMmAlloc", EVENT, True),
    findings=findings, resolved=resolved, order=73))
