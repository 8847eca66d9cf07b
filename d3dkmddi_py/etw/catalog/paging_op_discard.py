"""PagingOpDiscard (event 55, template PagingOpDiscardArgs): an allocation's content in a segment discarded (no bytes
moved).  A row of the ``paging`` table, shared with the other paging operations (``_pressure``): the allocation's
process through the live allocation, the bytes of its direction."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import (PAGING_COLUMNS, RULE, findings, paging_apply, paging_mapping, paging_take, paging_track,
                        resolved)

EVENT = "PagingOpDiscard"
FIELDS = manifest_fields(55)  # the manifest's template
# (allocation handle, source segment, destination segment, bytes, offset) fields; None: it has none
MOVE = ("hAllocationGlobalHandle", "SegmentId", None, None, None)
MAPPING = paging_mapping(EVENT, FIELDS, {
    "Flags": "the kernel's discard flags (no bit map in the manifest); in --json only",
    "SegmentId": "the segment whose content is discarded: the row's source_segment ([reading]: the content "
                 "leaves it)",
    "SegmentOffset": "the offset in the segment; in --json only",
})

register(EventEntry(
    event=EVENT, ids=(55,), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("paging", PAGING_COLUMNS), batched=True, apply=paging_apply(MOVE, EVENT),
    track=paging_track(MOVE, EVENT), findings=findings, resolved=resolved, rules=(RULE,),
    panel=draw.Panel("paging", ("source_segment", "destination_segment", "bytes"), paging_take),
    order=57))
