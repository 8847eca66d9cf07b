"""ReportCommittedAllocation (event 80, task 55, template ReportCommittedAllocationArgs): where an
allocation is committed: its segment and the offset in it.  The event names the allocation by a device's
handle (hAllocationHandle, a DeviceAllocation's hVidMmAlloc), so it is placed through the DeviceAllocation
events; the placement is checked against the allocation's segment sets (ALLOCINFO.COMMITTED_OUTSIDE_SETS)."""
from __future__ import annotations

from functools import lru_cache

from ...semantics import Placement, check
from ..model.registry import ALLOCATION_TYPE, Applied, Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..model.state import Resolved
from ..model.times import time_ns
from ._allocations import allocations
from .adapter_allocation import FIELDS as ALLOCATION_FIELDS
from .device_allocation import device_allocation

EVENT = "ReportCommittedAllocation"
RULE = "ALLOCINFO.COMMITTED_OUTSIDE_SETS"
FIELDS = manifest_fields(80)  # the manifest's template

MAPPING = (
    Mapping(EVENT, "hProcessId", None, None, "the process whose device holds the allocation: the kernel's"),
    Mapping(EVENT, "hDevice", None, None, "the kernel's device object"),
    Mapping(EVENT, "hAllocationHandle", None, None,
            "the device's allocation (a DeviceAllocation's hVidMmAlloc, [reading]: see device_allocation): through "
            "it, the global allocation placed"),
    Mapping(EVENT, "Pinned", None, None, "the kernel's: the allocation is pinned where it is"),
    Mapping(EVENT, "EvictionResource", None, None, "the kernel's: the allocation is an eviction resource"),
    Mapping(EVENT, "Size", None, None, "the committed size: the kernel's count (DXGK_ALLOCATIONINFO.Size is what "
                                       "the driver asked for, so it is not written there)"),
    Mapping(EVENT, "ulSegmentId", None, None, "the segment the allocation is committed to (segment n: bit n-1 of a "
                                              "segment set; 0 names none), checked against its sets"),
    Mapping(EVENT, "SegmentOffset", None, None, "the offset of the allocation in the segment"),
)


def place(tracker, event, global_handle, how: str) -> Resolved:
    """Place the live allocation ``global_handle`` names in the event's segment, and check it there."""
    segment, offset = event.fields["ulSegmentId"], event.fields["SegmentOffset"]
    live = allocations(tracker)
    found = None if global_handle is None else live.of(global_handle)
    if found is None:
        tracker.note(event, how if global_handle is None else "placed an allocation the trace did not show starting")
        return Resolved(None, global_handle, checked=False)
    pointer, read, write, entry = found
    info = _sets_record(tracker.packer, read, write) if entry is None else entry.data
    findings = tuple(check(Placement(info, segment, offset, target=tracker.target)))
    if entry is not None:
        entry.placement = (segment, offset, event.number)
    live.locate(global_handle, segment, time_ns(event.time), event.number)
    live.tell(global_handle, event, lambda: f"   committed to segment {segment} at offset {offset:#x} (event "
                                           f"#{event.number}, {event.kind.label})", findings)
    return Resolved(pointer, global_handle, findings)


@lru_cache(maxsize=4096)  # placements name few distinct pairs of sets; packing a record costs more than the check
def _sets_record(pk, read: int, write: int) -> bytes:
    """A DXGK_ALLOCATIONINFO holding these segment sets and nothing else (what a placement reads)."""
    return pk.record(ALLOCATION_TYPE, {**_ZERO, "dwReadSegment": read, "dwWriteSegment": write})


_ZERO = {name: 0 for name, _t in ALLOCATION_FIELDS}


def apply(tracker, event) -> Resolved:
    device = device_allocation(tracker, event.fields["hAllocationHandle"])
    return place(tracker, event, None if device is None else device[1],
                 "named a device allocation (hVidMmAlloc) the trace did not show starting: DeviceAllocation events "
                 "place it")


def findings(tracker, event, resolved: Resolved) -> list:
    return list(resolved.findings)


def columns(handle: str) -> tuple:
    """The placements table's columns (shared by the placement events): the allocation found, then the
    event's own fields (empty where an event lacks one)."""
    def field(name):
        return lambda e, r: e.fields.get(name)

    return (Column("allocation", "handle", value=Applied("allocation")),
            Column("handle", "handle", value=lambda e, r: e.fields[handle]),
            Column("ulSegmentId", "int", field="ulSegmentId"), Column("SegmentOffset", "hex", field="SegmentOffset"),
            Column("hDevice", "handle", value=field("hDevice")), Column("Pinned", "bool", value=field("Pinned")),
            Column("EvictionResource", "bool", value=field("EvictionResource")),
            Column("Size", "ohex", value=field("Size")))


register(EventEntry(
    event=EVENT, ids=(80,), mapping=MAPPING,
    table=TableSpec("placements", columns("hAllocationHandle")), apply=apply, findings=findings,
    rules=(RULE,), order=50))
