"""PagingOpVirtualFill (event 307, template PagingOpVirtualFillArgs): bytes of a segment filled with a pattern, by GPU
virtual address.  A row of the ``paging`` table, shared with the other paging operations (``_pressure``): the
allocation's process through the live allocation, the bytes of its direction."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import (PAGING_COLUMNS, RULE, WHERE_NEXT, findings, paging_apply, paging_mapping, paging_take,
                        paging_track, resolved)

EVENT = "PagingOpVirtualFill"
FIELDS = manifest_fields(307)  # the manifest's template
# (allocation handle, source segment, destination segment, bytes, offset) fields; None: it has none
MOVE = ("hAllocationGlobalHandle", None, "SegmentId", "FillSize", None)
MAPPING = paging_mapping(EVENT, FIELDS, {
    "AllocationOffset": "the offset in the allocation the fill starts at; in --json only",
    "FillSize": "the bytes filled: the row's bytes",
    "FillPattern": "the 32-bit pattern written; in --json only",
    "SegmentId": "the segment filled: the row's destination_segment, " + WHERE_NEXT + ", checked against the "
                 "allocation's segment sets as a placement is (no offset: the event gives a virtual address)",
    "DestinationVirtualAddress": "the GPU virtual address written; in --json only",
})

register(EventEntry(
    event=EVENT, ids=(307,), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("paging", PAGING_COLUMNS), batched=True, apply=paging_apply(MOVE, EVENT),
    track=paging_track(MOVE, EVENT), findings=findings, resolved=resolved, rules=(RULE,),
    panel=draw.Panel("paging", ("source_segment", "destination_segment", "bytes"), paging_take),
    order=59))
