"""MigrateAllocationStop (event 49, template MigrateAllocationStopArgs): an allocation's migration ended.  A row of the
``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found through
its global handle, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "MigrateAllocationStop"
FIELDS = manifest_fields(49)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationGlobalHandle": "global",
    "Status": "the migration's status (an NTSTATUS, [reading] of its name); in --json only",
})

register(EventEntry(
    event=EVENT, ids=(49,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationGlobalHandle", EVENT, False),
    track=change_track("hAllocationGlobalHandle", EVENT, False),
    findings=findings, resolved=resolved, order=72))
