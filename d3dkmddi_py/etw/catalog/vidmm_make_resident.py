"""VidMmMakeResident (event 320, template VidMmMakeResidentArgs): VidMm made a device's allocation resident.  A row of
the ``residency_changes`` table, shared with the other residency changes (``_pressure``): the allocation found
through its device allocation, its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "VidMmMakeResident"
FIELDS = manifest_fields(320)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "pVidMmAlloc": "device",
    "ResidencyCount": "the kernel's residency count after it ([reading] of its name); in --json only",
})

register(EventEntry(
    event=EVENT, ids=(320,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("pVidMmAlloc", EVENT, True),
    track=change_track("pVidMmAlloc", EVENT, True),
    findings=findings, resolved=resolved, order=63))
