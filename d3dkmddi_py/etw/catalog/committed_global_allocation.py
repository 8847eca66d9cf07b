"""ReportCommittedGlobalAllocationDCStart (event 227, task 131 ReportCommittedGlobalAllocation, template
ReportCommittedGlobalAllocationDCStartArgs): at the trace's start, where each committed allocation is: its
segment and offset.  It names the global allocation (hGlobalAllocationHandle: AdapterAllocation's
hVidMmGlobalAlloc), checked against its segment sets as ReportCommittedAllocation is."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, TableSpec, manifest_fields, register
from .committed_allocation import RULE, columns, findings, place

EVENT = "ReportCommittedGlobalAllocation"
FIELDS = manifest_fields(227)  # the manifest's template
MAPPING = (
    Mapping(EVENT, "hGlobalAllocationHandle", None, None,
            "the global allocation: AdapterAllocation's hVidMmGlobalAlloc ([reading]: VidMm's name for its global "
            "allocation object, as in EvictAllocation and ReportOfferAllocation)"),
    Mapping(EVENT, "ulSegmentId", None, None, "the segment the allocation is committed to (segment n: bit n-1 of a "
                                              "segment set; 0 names none), checked against its sets"),
    Mapping(EVENT, "SegmentOffset", None, None, "the offset of the allocation in the segment"),
)


def apply(tracker, event):
    return place(tracker, event, event.fields["hGlobalAllocationHandle"], "")


register(EventEntry(
    event=EVENT, ids=(227,), mapping=MAPPING, table=TableSpec("placements", columns("hGlobalAllocationHandle")), apply=apply,
    findings=findings, rules=(RULE,), order=51))
