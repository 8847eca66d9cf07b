"""DiscardAllocation (event 191, template EvictAllocationArgs): an offered allocation's content discarded: an eviction
([reading]: its content leaves the segment it was in).  A row of the ``evictions`` table, shared with the other
evictions (``_pressure``): the allocation found through its global handle, its process, its Size, where it was and
for how long; its process's open stretches over budget name it."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import EVICTION_COLUMNS, change_mapping, evict_apply, evict_track, eviction_take, findings, resolved

EVENT = "DiscardAllocation"
FIELDS = manifest_fields(191)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hGlobalAllocationHandle": "global",
})

register(EventEntry(
    event=EVENT, ids=(191,), mapping=MAPPING, table=TableSpec("evictions", EVICTION_COLUMNS), batched=True,
    apply=evict_apply("hGlobalAllocationHandle", EVENT),
    track=evict_track("hGlobalAllocationHandle", EVENT),
    findings=findings, resolved=resolved, panel=draw.Panel("paging", ("size",), eviction_take), order=61))
