"""PagingOpVirtualTransfer (event 306, template PagingOpVirtualTransferArgs): bytes copied between segments by GPU
virtual address.  A row of the ``paging`` table, shared with the other paging operations (``_pressure``): the
allocation's process through the live allocation, the bytes of its direction."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import (PAGING_COLUMNS, RULE, WHERE_NEXT, findings, paging_apply, paging_mapping, paging_take,
                        paging_track, resolved)

EVENT = "PagingOpVirtualTransfer"
FIELDS = manifest_fields(306)  # the manifest's template
# (allocation handle, source segment, destination segment, bytes, offset) fields; None: it has none
MOVE = ("hAllocationGlobalHandle", "SourceSegmentId", "DestinationSegmentId", "TransferSize", None)
MAPPING = paging_mapping(EVENT, FIELDS, {
    "AllocationOffset": "the offset in the allocation the transfer starts at; in --json only",
    "TransferSize": "the bytes transferred: the row's bytes",
    "SourceSegmentId": "the segment the bytes come from: the row's source_segment",
    "DestinationSegmentId": "the segment the bytes go to: the row's destination_segment, " + WHERE_NEXT +
                            ", checked against the allocation's segment sets as a placement is (no offset: the "
                            "event gives virtual addresses)",
    "SourceVirtualAddress": "the GPU virtual address read; in --json only",
    "DestinationVirtualAddress": "the GPU virtual address written; in --json only",
    "SourcePageTable": "the kernel's page table of the source; in --json only",
    "TransferDirection": "the kernel's direction code (no value map in the manifest); in --json only",
    "TransferFlags": "the kernel's transfer flags (no bit map in the manifest); in --json only",
    "DestinationPageTable": "the kernel's page table of the destination; in --json only",
})

register(EventEntry(
    event=EVENT, ids=(306,), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("paging", PAGING_COLUMNS), batched=True, apply=paging_apply(MOVE, EVENT),
    track=paging_track(MOVE, EVENT), findings=findings, resolved=resolved, rules=(RULE,),
    panel=draw.Panel("paging", ("source_segment", "destination_segment", "bytes"), paging_take),
    order=58))
