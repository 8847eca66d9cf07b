"""ProcessTerminateAllocation (event 40, template TerminateAllocationArgs): a device's allocation terminated with its
process.  A row of the ``residency_changes`` table, shared with the other residency changes (``_pressure``): the
allocation found through its device allocation, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "ProcessTerminateAllocation"
FIELDS = manifest_fields(40)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hVidMmAlloc": "device",
})

register(EventEntry(
    event=EVENT, ids=(40,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hVidMmAlloc", EVENT, True),
    track=change_track("hVidMmAlloc", EVENT, True),
    findings=findings, resolved=resolved, order=74))
