"""SetAllocationPriority (event 46, task 29, template SetAllocationPriorityArgs): an allocation's priority
changed after it was created.  The event names the allocation by a device's handle (hAllocationHandle, a
DeviceAllocation's hVidMmAlloc); the new priority is checked by the rules that read AllocationPriority
alone (``semantics.check_priority``)."""
from __future__ import annotations

from ...semantics import check_priority, decode_priority
from ..model.registry import ALLOCATION_TYPE, Applied, Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..model.state import Resolved
from ._allocations import allocations
from .device_allocation import device_allocation

EVENT = "SetAllocationPriority"
FIELDS = manifest_fields(46)  # the manifest's template
MAPPING = (
    Mapping(EVENT, "hAllocationHandle", None, None,
            "the device's allocation (a DeviceAllocation's hVidMmAlloc, [reading]: see device_allocation): through "
            "it, the global allocation whose priority changed"),
    Mapping(EVENT, "Priority", ALLOCATION_TYPE, "AllocationPriority",
            "the allocation's priority from now on: the member of that name, set after creation; the rules that "
            "read it alone run again on the new value"),
)


def apply(tracker, event) -> Resolved:
    priority = event.fields["Priority"]
    found_rules = tuple(check_priority(priority, target=tracker.target))
    device = device_allocation(tracker, event.fields["hAllocationHandle"])
    live = allocations(tracker)
    found = None if device is None else live.of(device[1])
    if found is None:
        tracker.note(event, "named an allocation the trace did not show starting (through DeviceAllocation events)")
        tracker.keep_loose(event, list(found_rules))
        return Resolved(None if device is None else device[0], None if device is None else device[1], found_rules)
    pointer, _read, _write, entry = found
    live.update(device[1], "Priority", priority)
    if entry is not None:
        entry.priority = (priority, event.number)
    live.tell(device[1], event, lambda: f"   priority set to {priority:#x}, {decode_priority(priority)} (event "
                                           f"#{event.number}, {event.kind.label})", found_rules)
    return Resolved(pointer, device[1], found_rules)


def findings(tracker, event, resolved: Resolved) -> list:
    return list(resolved.findings)


register(EventEntry(
    event=EVENT, ids=(46,), mapping=MAPPING,
    table=TableSpec("priorities", (Column("allocation", "handle", value=Applied("allocation")),
                                   Column("hAllocationHandle", "handle", field="hAllocationHandle"),
                                   Column("Priority", "int", field="Priority"))),
    apply=apply, findings=findings, order=52))
