"""MigrateAllocationStart (event 47, template MigrateAllocationStartArgs): an allocation's migration began.  A row of
the ``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found
through its global handle, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "MigrateAllocationStart"
FIELDS = manifest_fields(47)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationGlobalHandle": "global",
    "Priority": "the migration's priority, the kernel's; in --json only",
})

register(EventEntry(
    event=EVENT, ids=(47,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationGlobalHandle", EVENT, False),
    track=change_track("hAllocationGlobalHandle", EVENT, False),
    findings=findings, resolved=resolved, order=70))
