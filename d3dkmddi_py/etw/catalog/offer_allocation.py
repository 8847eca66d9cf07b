"""OfferAllocation (event 187, template MarkAllocationArgs): an allocation offered.  A row of the ``residency_changes``
table, shared with the other residency changes (``_pressure``): the allocation found through its device allocation,
its process."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ._pressure import CHANGE_COLUMNS, change_apply, change_mapping, change_track, findings, resolved

EVENT = "OfferAllocation"
FIELDS = manifest_fields(187)  # the manifest's template
MAPPING = change_mapping(EVENT, FIELDS, {
    "hAllocationHandle": "device",
})

register(EventEntry(
    event=EVENT, ids=(187,), mapping=MAPPING, table=TableSpec("residency_changes", CHANGE_COLUMNS), batched=True,
    apply=change_apply("hAllocationHandle", EVENT, True),
    track=change_track("hAllocationHandle", EVENT, True),
    findings=findings, resolved=resolved, order=66))
