"""Test-only: .etl files built to be hard for a reader (processors out of order, clocks that step back,
ties across processors, mid-trace segment reports, Stop events, two adapters, versions 2 and 3; with
``memory``, the events that say where memory is among them: device allocations, placements with their
counted arrays, priority changes, residency, usage and budgets, paging, evictions and page-ins)."""
from __future__ import annotations

import random

from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.samples import etl_build

from .helpers import alloc_fields, seg_fields

ADAPTERS = (0xFFFFB80C4D2E5000, 0xFFFFB80C4D2F6000)


def memory_event(rng, adapter: int, handle: int, mask: int):
    """(kind, fields) of one random event that says where memory is, about allocation ``handle``."""
    name = rng.choice(("DeviceAllocation", "ReportCommittedAllocation", "ReportCommittedGlobalAllocation",
                       "SetAllocationPriority", "TotalBytesResidentInSegment", "VidMmProcessUsageChange",
                       "VidMmProcessBudgetChange", "PagingOpTransfer", "PagingOpFill", "EvictAllocation", "VidMmEvict",
                       "PageInAllocation"))
    device = 0x9000 + handle % 64
    if name in ("PagingOpTransfer", "PagingOpFill"):  # paging: the allocation's process found, its destination checked
        fields = dict(pDxgAdapter=adapter, hDmaBuffer=0x5000, ContinueNextBuffer=False,
                      hAllocationGlobalHandle=handle & mask)
        if name == "PagingOpFill":
            fields.update(FillSize=rng.randrange(1 << 24), FillPattern=0, SegmentId=rng.randrange(4), SegmentOffset=0)
        else:
            fields.update(TransferOffset=0, TransferSize=rng.randrange(1 << 24), SourceSegmentId=rng.randrange(4),
                          SourceSegmentOffset=0, DestinationSegmentId=rng.randrange(4),
                          DestinationSegmentOffset=rng.randrange(1 << 20), Flags=0)
        return KIND_BY_NAME[(name, "Info")], fields
    if name == "EvictAllocation":
        return KIND_BY_NAME[(name, "Info")], dict(hGlobalAllocationHandle=handle & mask)
    if name == "VidMmEvict":
        return KIND_BY_NAME[(name, "Info")], dict(pVidMmAlloc=device, ResidencyCount=0)
    if name == "PageInAllocation":
        return KIND_BY_NAME[(name, "Info")], dict(hAllocationHandle=device, uiSegmentId=rng.randrange(1, 4),
                                                  uliOffset=0)
    if name == "DeviceAllocation":
        fields = {n: 0 for n in ("hProcessId", "hDevice", "hDxgResource", "hDxgSharedResource", "hThunkAllocation",
                                 "hThunkResource", "PrivateRuntimeResourceHandle", "pVirtualAddress",
                                 "hProcessAllocDetails")}
        fields.update(pDxgAdapter=adapter, hVidMmAlloc=device, hVidMmGlobalAlloc=handle & mask)
        return KIND_BY_NAME[(name, rng.choice(("Start", "DCStart", "Stop")))], fields
    if name == "ReportCommittedAllocation":
        return KIND_BY_NAME[(name, "Info")], dict(
            hProcessId=0x1F40, hDevice=0x77, hAllocationHandle=device, Pinned=rng.random() < 0.5,
            EvictionResource=False, Size=0x10000, ulSegmentId=rng.randrange(4), SegmentOffset=rng.randrange(1 << 30))
    if name == "ReportCommittedGlobalAllocation":
        return KIND_BY_NAME[(name, "DCStart")], dict(hGlobalAllocationHandle=handle & mask,
                                                     ulSegmentId=rng.randrange(4), SegmentOffset=rng.randrange(1 << 30))
    if name == "SetAllocationPriority":
        return KIND_BY_NAME[(name, "Info")], dict(hAllocationHandle=device, Priority=rng.choice((0, 0x78000000)))
    if name == "TotalBytesResidentInSegment":
        return KIND_BY_NAME[(name, "Info")], dict(DxgAdapter=adapter, SegmentId=rng.randrange(1, 3),
                                                  TotalBytesResident=rng.randrange(1 << 30))
    common = dict(pDxgAdapter=adapter, ProcessId=rng.randrange(4), PhysicalAdapterIndex=0,
                  MemorySegmentGroup=rng.randrange(2))
    if name == "VidMmProcessUsageChange":
        return KIND_BY_NAME[(name, "Info")], dict(common, NewUsage=rng.randrange(1 << 30), OldUsage=0)
    return KIND_BY_NAME[(name, "Info")], dict(common, NewBudget=rng.randrange(1 << 30), OldBudget=0, NewPriorityBand=1,
                                              OldPriorityBand=1, NewVisibilityState=2, OldVisibilityState=1)


def hard_trace(seed: int, n: int = 600, *, pointer_size: int = 8, compress: bool = False, processors: int = 4,
               skew: bool = True, sizes: tuple = (0x1234, 0x10000), memory: bool = False) -> bytes:
    rng = random.Random(seed)
    events, ticks = [], 1000
    segment = KIND_BY_NAME[("ReportSegment", "Info")]
    kinds = [KIND_BY_NAME[("AdapterAllocation", o)] for o in ("Start", "DCStart", "Stop")]
    mask = (1 << 8 * pointer_size) - 1
    for adapter in ADAPTERS:
        for sid, flags in ((1, 0x11), (2, 0x5)):
            events.append(etl_build.dxgkrnl_event(segment, seg_fields(sid, flags, pDxgAdapter=adapter & mask),
                                                  pointer_size=pointer_size, ticks=ticks, processor=0))
    for i in range(n):
        ticks += rng.choice((0, 0, 1, 7, 50))  # ties across processors
        when = ticks - rng.randrange(200) if skew and rng.random() < 0.1 else ticks  # a clock that steps back
        cpu = rng.randrange(processors)
        if i == n // 2:  # the segments change mid-trace
            events.append(etl_build.dxgkrnl_event(segment, seg_fields(2, 0x401, pDxgAdapter=ADAPTERS[0] & mask),
                                                  pointer_size=pointer_size, ticks=when, processor=cpu))
            continue
        if rng.random() < 0.08:  # another provider's event
            events.append(etl_build.EtlEvent("22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", 1, 3, bytes(12), ticks=when,
                                             processor=cpu))
            continue
        if memory and rng.random() < 0.3:
            kind, fields = memory_event(rng, rng.choice(ADAPTERS) & mask, 0xE000 + rng.randrange(64), mask)
            events.append(etl_build.dxgkrnl_event(kind, fields, pointer_size=pointer_size, ticks=when, processor=cpu))
            continue
        kind = rng.choice(kinds)
        fields = alloc_fields(pDxgAdapter=rng.choice(ADAPTERS) & mask, hDxgGlobalAlloc=0x8000 + rng.randrange(64),
                              hVidMmGlobalAlloc=0xE000 + rng.randrange(64), dwWriteSegment=rng.choice((1, 2, 3)),
                              Priority=rng.choice((0, 0x78000000)), allocSize=rng.choice(sizes),
                              Flags=rng.choice((0, 0x1, 0x4001, 0x100000)), PreferredSegment=rng.choice((1, 2, 0x21)),
                              BackingStoreWasPinned=rng.random() < 0.5, hProcessId=rng.randrange(1 << 20),
                              PageTableOrDirectory=rng.random() < 0.5)
        version = rng.choice((2, 3))
        events.append(etl_build.dxgkrnl_event(kind, fields, version=version, pointer_size=pointer_size, ticks=when,
                                              processor=cpu, process_id=rng.randrange(5000)))
    return etl_build.etl_bytes(events, processors=processors, buffer_size=2048, compress=compress)
