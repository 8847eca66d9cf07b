"""ReclaimAllocation (event 190, template ReclaimAllocationArgs): an offered allocation reclaimed.  A row of the
``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found through
its device allocation, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "ReclaimAllocation"
FIELDS = manifest_fields(190)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationHandle": "device",
    "Priority": "the offer's priority, the kernel's; in --json only",
    "State": "the kernel's reclaim state (no value map in the manifest); in --json only",
})

register(EventEntry(
    event=EVENT, ids=(190,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationHandle", EVENT, True),
    track=change_track("hAllocationHandle", EVENT, True),
    findings=findings, resolved=resolved, order=69))
