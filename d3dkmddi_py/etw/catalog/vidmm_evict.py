"""VidMmEvict (event 321, template VidMmMakeResidentArgs): VidMm evicted a device's allocation.  A row of the
``evictions`` table, shared with the other evictions (``_pressure``): the allocation found through its device
allocation, its process, its Size, where it was and for how long; its process's open stretches over budget name it."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import EVICTION_COLUMNS, change_mapping, evict_apply, evict_track, eviction_take, findings, resolved

EVENT = "VidMmEvict"
FIELDS = manifest_fields(321)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "pVidMmAlloc": "device",
    "ResidencyCount": "the kernel's residency count after it ([reading] of its name); in --json only",
})

register(EventEntry(
    event=EVENT, ids=(321,), mapping=MAPPING, table=TableSpec("evictions", EVICTION_COLUMNS), batched=True,
    apply=evict_apply("pVidMmAlloc", EVENT, through_device=True),
    track=evict_track("pVidMmAlloc", EVENT, through_device=True),
    findings=findings, resolved=resolved, panel=draw.Panel("paging", ("size",), eviction_take), order=62))
