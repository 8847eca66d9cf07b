"""PagingOpTransfer (event 53, template PagingOpTransferArgs): bytes copied from one segment to another (a page-in, a
page-out or a move between segments).  A row of the ``paging`` table, shared with the other paging operations
(``_pressure``): the allocation's process through the live allocation, the bytes of its direction; and the part the
paging entries share, with the tables of the pressure on memory (pressure, over_budget) and its text."""
from __future__ import annotations

from ..model.registry import EventEntry, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ._pressure import (OVER_BUDGET, PAGING_COLUMNS, PRESSURE, RULE, WHERE_NEXT, Pressure, PressureText, findings,
                        paging_apply, paging_mapping, paging_panel, paging_take, paging_track, resolved)

EVENT = "PagingOpTransfer"
FIELDS = manifest_fields(53)  # the manifest's template
# (allocation handle, source segment, destination segment, bytes, offset) fields; None: it has none
MOVE = ("hAllocationGlobalHandle", "SourceSegmentId", "DestinationSegmentId", "TransferSize",
        "DestinationSegmentOffset")
MAPPING = paging_mapping(EVENT, FIELDS, {
    "TransferOffset": "the offset in the allocation the transfer starts at; in --json only",
    "TransferSize": "the bytes transferred: the row's bytes, its direction's and its process's",
    "SourceSegmentId": "the segment the bytes come from: the row's source_segment",
    "SourceSegmentOffset": "the offset in the source segment; in --json only",
    "DestinationSegmentId": "the segment the bytes go to: the row's destination_segment, " + WHERE_NEXT +
                            ", checked against its segment sets as a placement is",
    "DestinationSegmentOffset": "the offset in the destination segment: the finding's offset",
    "Flags": "the kernel's transfer flags (no bit map in the manifest); in --json only",
})

register(EventEntry(
    event=EVENT, ids=(53,), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("paging", PAGING_COLUMNS), batched=True, apply=paging_apply(MOVE, EVENT),
    track=paging_track(MOVE, EVENT), findings=findings, resolved=resolved, rules=(RULE,),
    state=lambda tracker: Pressure(tracker), state_tables=(PRESSURE, OVER_BUDGET), text=PressureText(),
    panel=draw.Panel("paging", ("source_segment", "destination_segment", "bytes"), paging_take,
                     paging_panel, order=30),
    order=55))
