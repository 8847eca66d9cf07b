"""One debuggee's memory, as the follow tests and their memories share it: a DXGK_QUERYSEGMENTOUT3 with
its segment descriptors (the first banked, with its bank table) and a DXGKARG_CREATEALLOCATION with its
allocation infos, their usage hints and private data, all inside one 32 KB window so the same bytes can
be given as ranges, as one image at a base, as a byte list, through a read() object or in a crash dump."""
from __future__ import annotations

import d3dkmddi_py as kmd

BASE = {8: 0xFFFFF8012A3B0000, 4: 0x8A3B0000}  # by pointer size: a kernel address of each
QUERY, DESCRIPTORS, BANKS, CREATE, CREATE_DATA, INFOS, HINTS, INFO_DATA = (
    0x58, 0x1000, 0x2000, 0x3000, 0x3100, 0x4000, 0x5000, 0x6000)  # offsets from BASE
SIZE = 0x8000
SEGMENTS = 16
BANK_ENDS = (0x4000000, 0x8000000)


def base_of(target) -> int:
    return BASE[4 if kmd.target(*target).abi == "x86" else 8]


def scene(target=("x64", "WDDM2_7"), segments: int = SEGMENTS) -> dict:
    """address -> bytes of every object, in the order a debugger log would dump them."""
    t = kmd.target(*target)
    ptr = 4 if t.abi == "x86" else 8
    base = BASE[ptr]

    def at(offset):
        return base + offset

    q = t.DXGK_QUERYSEGMENTOUT3()
    q.NbSegment, q.pSegmentDescriptor = segments, at(DESCRIPTORS)
    q.PagingBufferSegmentId, q.PagingBufferSize = 2, 0x10000
    descriptors = (t.DXGK_SEGMENTDESCRIPTOR3 * segments)()
    for i, d in enumerate(descriptors):
        d.Flags.Value = 0x1 if i == 1 else 0x4  # segment 2 an aperture, the rest CPU-visible memory
        d.Size = d.CommitLimit = (i + 1) << 24
        d.BaseAddress.QuadPart = i << 32
    descriptors[0].Flags.UseBanking = 1
    descriptors[0].NbOfBanks, descriptors[0].pBankRangeTable = len(BANK_ENDS), at(BANKS)
    banks = b"".join(end.to_bytes(ptr, "little") for end in BANK_ENDS)

    create = t.DXGKARG_CREATEALLOCATION()
    create.pPrivateDriverData, create.PrivateDriverDataSize = at(CREATE_DATA), 8
    create.NumAllocations, create.pAllocationInfo, create.hResource = 3, at(INFOS), base + 0x7230
    create.Flags.Resource = 1
    infos = (t.DXGK_ALLOCATIONINFO * 3)()
    hints = (t.DXGK_ALLOCATIONUSAGEHINT * 3)()
    for i, info in enumerate(infos):
        info.Size = 0x10000 * (i + 1)
        info.PreferredSegment.SegmentId0 = 1
        info.SupportedReadSegmentSet = info.SupportedWriteSegmentSet = 0b101
        info.AllocationPriority = 0x78000000
        info.hAllocation = base + 0x7400 + i
        info.pAllocationUsageHint = at(HINTS) + i * 40
        hints[i].Version = 1
        hints[i].v1.Width, hints[i].v1.Height = 640 * (i + 1), 480
    infos[1].pAllocationUsageHint = 0  # no usage hint: a NULL pointer
    infos[2].pPrivateDriverData, infos[2].PrivateDriverDataSize = at(INFO_DATA), 5
    infos[2].SupportedWriteSegmentSet = 1 << (segments + 2)  # a segment this adapter does not have
    return {at(QUERY): bytes(q), at(DESCRIPTORS): bytes(descriptors), at(BANKS): banks, at(CREATE): bytes(create),
            at(CREATE_DATA): b"umd-data", at(INFOS): bytes(infos), at(HINTS): bytes(hints), at(INFO_DATA): b"hello"}


def image(placements: dict) -> tuple:
    """(base, bytes): the whole window as one image whose first byte is at base."""
    base = min(placements) & ~0xFFF
    out = bytearray(SIZE)
    for address, data in placements.items():
        out[address - base:address - base + len(data)] = data
    return base, bytes(out)
