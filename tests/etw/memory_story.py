"""Test-only: the events that say where memory is, built for twins (test_memory_events, test_plot)."""
from __future__ import annotations

from d3dkmddi_py.etw.catalog import KIND_BY_NAME, TEMPLATES
from tests.etw.etl_twin import Dxg
from tests.etw.helpers import ADAPTER, alloc_fields, seg_fields

K = KIND_BY_NAME
SEGMENT, START = K[("ReportSegment", "Info")], K[("AdapterAllocation", "Start")]
STOP = K[("AdapterAllocation", "Stop")]
DEVICE_START, DEVICE_STOP = K[("DeviceAllocation", "Start")], K[("DeviceAllocation", "Stop")]
COMMITTED, RUNDOWN = K[("ReportCommittedAllocation", "Info")], K[("ReportCommittedGlobalAllocation", "DCStart")]
PRIORITY, RESIDENT = K[("SetAllocationPriority", "Info")], K[("TotalBytesResidentInSegment", "Info")]
USAGE, BUDGET = K[("VidMmProcessUsageChange", "Info")], K[("VidMmProcessBudgetChange", "Info")]
NEW_KINDS = [k for k in K.values() if k.event in ("DeviceAllocation", "ReportCommittedAllocation",
                                                  "ReportCommittedGlobalAllocation", "SetAllocationPriority",
                                                  "TotalBytesResidentInSegment", "VidMmProcessUsageChange",
                                                  "VidMmProcessBudgetChange")]
GLOBAL, DEVICE = 0xEEEE0001, 0xDDDD0001  # the allocation's hVidMmGlobalAlloc, a device's hVidMmAlloc of it


def device(handle=DEVICE, global_handle=GLOBAL, **over) -> dict:
    f = {n: 0 for n, _t in TEMPLATES["DeviceAllocation"][1]}
    f.update(pDxgAdapter=ADAPTER, hVidMmAlloc=handle, hVidMmGlobalAlloc=global_handle, hDevice=0x77)
    f.update(over)
    return f


def committed(segment: int, offset: int = 0x2000, handle=DEVICE, **over) -> dict:
    """ReportCommittedAllocation's eight fields, as the manifest's template has them."""
    f = dict(hProcessId=0x1F40, hDevice=0x77, hAllocationHandle=handle, Pinned=False, EvictionResource=True,
             Size=0x10000, ulSegmentId=segment, SegmentOffset=offset)
    f.update(over)
    return f


def rundown(segment: int, offset: int = 0x1000, handle=GLOBAL) -> dict:
    return dict(hGlobalAllocationHandle=handle, ulSegmentId=segment, SegmentOffset=offset)


def usage(new: int, group: int = 0, old: int = 0, process: int = 8000) -> dict:
    return dict(NewUsage=new, OldUsage=old, pDxgAdapter=ADAPTER, ProcessId=process, PhysicalAdapterIndex=0,
                MemorySegmentGroup=group)


def budget(new: int, group: int = 0, process: int = 8000) -> dict:
    return dict(NewBudget=new, OldBudget=0, pDxgAdapter=ADAPTER, ProcessId=process, PhysicalAdapterIndex=0,
                NewPriorityBand=1, OldPriorityBand=0, NewVisibilityState=2, OldVisibilityState=1,
                MemorySegmentGroup=group)


def resident(segment: int, n: int) -> dict:
    return dict(DxgAdapter=ADAPTER, SegmentId=segment, TotalBytesResident=n)


def story() -> list:
    """Three segments; one allocation (sets: segments 1 and 3) with a device reference; where it is
    committed (once outside its sets), its priority set to 0, the bytes resident, a process's usage and budget."""
    return [Dxg(SEGMENT, seg_fields(1, 0x0), version=1), Dxg(SEGMENT, seg_fields(2, 0x4), version=1),
            Dxg(SEGMENT, seg_fields(3, 0x1), version=1),
            Dxg(START, alloc_fields(dwReadSegment=0b101, dwWriteSegment=0b101, dwEvictionSegment=0b100)),
            Dxg(DEVICE_START, device()),
            Dxg(RUNDOWN, rundown(1)), Dxg(COMMITTED, committed(2)), Dxg(COMMITTED, committed(3)),
            Dxg(PRIORITY, dict(hAllocationHandle=DEVICE, Priority=0)),
            Dxg(RESIDENT, resident(1, 0x100000)), Dxg(RESIDENT, resident(1, 0x300000)), Dxg(RESIDENT, resident(3, 5)),
            Dxg(BUDGET, budget(0x8000000)), Dxg(USAGE, usage(0x200000)), Dxg(USAGE, usage(0x600000, old=0x200000)),
            Dxg(USAGE, usage(0x100000, group=1))]
