"""DeviceAllocation Start / Stop / DCStart (events 36 / 37 / 38, task 22, template
DeviceAllocationStartArgs_V1): a device's reference to an allocation, hVidMmAlloc, and the global
allocation it refers to, hVidMmGlobalAlloc.  The VidMm events that name an allocation by a device's
handle (hAllocationHandle: ReportCommittedAllocation, SetAllocationPriority) are resolved through them."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, TableSpec, field_columns, manifest_fields, register
from ..model.section import Section, plural

EVENT = "DeviceAllocation"
FIELDS = manifest_fields(36)

_WHY = {
    "hProcessId": "the owning process: the kernel's",
    "hDevice": "the kernel's device object",
    "pDxgAdapter": "the kernel's adapter object",
    "hVidMmAlloc": "the device's allocation: VidMm's events name it hAllocationHandle ([reading]: the manifest's "
                   "RenameAllocation events carry an hAllocationGlobalHandle beside an hAllocationHandle, so the "
                   "latter is not the global allocation)",
    "hVidMmGlobalAlloc": "the global allocation it refers to: AdapterAllocation's hVidMmGlobalAlloc",
    "hDxgResource": "the kernel's resource object",
    "hDxgSharedResource": "the kernel's shared resource (non-zero when shared)",
    "hThunkAllocation": "the user-mode handle of the allocation (D3DKMT_HANDLE)",
    "hThunkResource": "the user-mode handle of the resource",
    "PrivateRuntimeResourceHandle": "the runtime's own resource handle",
    "pVirtualAddress": "the allocation's GPU virtual address, if mapped",
    "hProcessAllocDetails": "the kernel's per-process allocation details",
}
MAPPING = tuple(Mapping(EVENT, name, None, None, _WHY[name] + "; not in any mirror structure")
                for name, _t in FIELDS)


def devices(tracker) -> dict:
    """hVidMmAlloc -> (adapter pointer, hVidMmGlobalAlloc) of each live device allocation (what this entry keeps)."""
    return tracker.part(EVENT)


def device_allocation(tracker, handle: int):
    """(adapter pointer, hVidMmGlobalAlloc) of a live device allocation by its hVidMmAlloc, or None."""
    return devices(tracker).get(handle)


def apply(tracker, event):
    """Start and DCStart: the device allocation names its global allocation until its Stop."""
    f = event.fields
    if event.opcode == "Stop":
        if devices(tracker).pop(f["hVidMmAlloc"], None) is None:
            tracker.note(event, "stopped a device allocation the trace did not show starting")
        return
    devices(tracker)[f["hVidMmAlloc"]] = (event.adapter, f["hVidMmGlobalAlloc"])


class _Text(Section):
    def counts(self, tracker) -> list:
        return [f"{plural(len(devices(tracker)), 'device allocation')} live at the end"]


register(EventEntry(
    event=EVENT, ids=(36, 37, 38), mapping=MAPPING, adapter="pDxgAdapter",
    table=TableSpec("device_allocations", field_columns(FIELDS, skip=("pDxgAdapter",))), apply=apply, text=_Text(),
    state=lambda tracker: {},
    order=25))
