"""EvictAllocation (event 74, template EvictAllocationArgs): an allocation evicted from its segment.  A row of the
``evictions`` table, shared with the other evictions (``_pressure``): the allocation found through its global
handle, its process, its Size, where it was and for how long; its process's open stretches over budget name it."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import EVICTION_COLUMNS, change_mapping, evict_apply, evict_track, eviction_take, findings, resolved

EVENT = "EvictAllocation"
FIELDS = manifest_fields(74)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hGlobalAllocationHandle": "global",
})

register(EventEntry(
    event=EVENT, ids=(74,), mapping=MAPPING, table=TableSpec("evictions", EVICTION_COLUMNS), batched=True,
    apply=evict_apply("hGlobalAllocationHandle", EVENT),
    track=evict_track("hGlobalAllocationHandle", EVENT),
    findings=findings, resolved=resolved, panel=draw.Panel("paging", ("size",), eviction_take), order=60))
