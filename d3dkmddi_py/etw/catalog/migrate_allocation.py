"""MigrateAllocation (event 48, template MigrateAllocationArgs): an allocation migrated.  A row of the
``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found through
its global handle, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "MigrateAllocation"
FIELDS = manifest_fields(48)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationGlobalHandle": "global",
})

register(EventEntry(
    event=EVENT, ids=(48,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationGlobalHandle", EVENT, False),
    track=change_track("hAllocationGlobalHandle", EVENT, False),
    findings=findings, resolved=resolved, order=71))
