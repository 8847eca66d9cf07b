"""What each documented member is, in its own page's words: one table per type, each text quoted from that
type's reference page (``page_of``), so a meaning never carries another struct's sentence.  The tests hold
every text to its page copy and every member a page documents to a meaning (tests/golden/test_meanings.py).

``MEMBER_WORDS[type][member]`` is what explain() prints for a member that has no meaning worked out from its
value; ``FLAG_WORDS[type][flag]`` what it prints beside a set flag of a flag word.
"""
from __future__ import annotations

from .._spec import ALIASES, TYPEDEFS
from ._rules import LEARN, Source, page, quoted


def page_of(type_name: str) -> Source:
    """The reference page of a type (the layout table's ``doc`` address), as the source its words are quoted from."""
    doc = TYPEDEFS[ALIASES.get(type_name, type_name)].doc
    return page(LEARN + doc.split("/ddi/", 1)[1])


def said(type_name: str, *parts: str) -> str:
    """Words of a type's own page, recorded as such (a test finds each verbatim there), joined by "; "."""
    source = page_of(type_name)
    return "; ".join(quoted(source, text) for text in parts)


def _table(type_name: str, words: dict) -> dict:
    return {member: said(type_name, *((text,) if isinstance(text, str) else text)) for member, text in words.items()}


_COMMON_ALLOC_FLAGS = {  # the same words on the DXGK_ALLOCATIONINFOFLAGS and _WDDM2_0 pages
    "CpuVisible": ("the allocation is directly accessible by the CPU",
                   "If this flag is not set on the allocation, pfnLockCb returns an error"),
    "PermanentSysMem": "a copy of the allocation should be kept in system memory even when the content is located in a "
                       "memory segment",
    "Cached": ("the allocation backing store should be allocated as cached memory",
               "by default, the allocation backing store is stored as write-combined memory"),
    "Protected": "the allocation backing store should be allocated in kernel memory instead of user address space",
    "ExistingSysMem": ("the video memory manager should use the existing system memory range as a backing store for "
                       "the allocation", "a valid user-mode address"),
    "ExistingKernelSysMem": ("the video memory manager should use the existing system memory range as a backing store "
                             "for the allocation", "a valid kernel-mode address"),
    "FromEndOfSegment": "the allocation should be allocated from the end of a segment during paging",
    "Overlay": ("the allocation is for an overlay operation", "Overlay allocations are pinned in memory"),
    "Capture": ("the allocation is used for a capture operation", "Capture allocations are pinned in memory"),
    "HistoryBuffer": "the user-mode display driver allocates a history buffer",
    "AccessedPhysically": ("allocations, which are accessed by their physical address",
                           "Such allocation will be allocated contiguously from GPU memory segments"),
    "ExplicitResidencyNotification": "the driver receives a NotifyResidency paging buffer operation when the "
                                     "allocation residency is changed",
    "CpuVisibleOnDemand": "the video memory manager will try to allocate the virtual address for the allocation when "
                          "it is mapped/locked",
}

# Flag word -> flag -> what a set flag is, from the flag word's own page.  The WDDM 3.2 Flags2 flags have no
# description on their page: a set one prints "set".
FLAG_WORDS = {
    "DXGK_ALLOCATIONINFOFLAGS": _table("DXGK_ALLOCATIONINFOFLAGS", {
        **_COMMON_ALLOC_FLAGS,
        "Swizzled": "the allocation is swizzled and requires special support by the video memory manager to lock the "
                    "allocation",
        "UseAlternateVA": ("the primary allocation can be locked",
                           "UseAlternateVA is valid only for the primary allocation"),
        "SynchronousPaging": "the allocation should be paged in synchronously",
        "LinkMirrored": "a single instance of an allocation should be replicated across all physical adapters in a "
                        "logical adapter",
        "LinkInstanced": "different instances of an allocation will be paged in and evicted from all physical adapters "
                         "in a logical adapter",
        "HardwareProtected": "the allocation will hold content used for hardware digital rights management (DRM)",
    }),
    "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0": _table("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", {
        **_COMMON_ALLOC_FLAGS,
        "DisableLargePageMapping": "large page mapping for the allocation should be disabled",
        "CreateInVpr": "the allocation should be created in the video protected range",
        "MapApertureCpuVisible": "the driver requires CPU access to memory during a DxgkDdiBuildPagingBuffer call for a "
                                 "DXGK_OPERATION_MAP_APERTURE_SEGMENT2 operation",
        "HardwareProtected": "the allocation will hold content used for hardware DRM",
    }),
    "DXGK_ALLOCATIONINFOFLAGS2": _table("DXGK_ALLOCATIONINFOFLAGS2", {
        "ShareBackingStoreWithKmd": ("it needs to know the address of the allocation backing store",
                                     "The allocation must be created shared and must reside only in the aperture "
                                     "memory segment"),
    }),
    "DXGK_ALLOCATIONUSAGEINFO1": _table("DXGK_ALLOCATIONUSAGEINFO1", {
        "PrivateFormat": "the allocation is a private vendor format",
        "Swizzled": "the allocation is swizzled or tiled",
        "MipMap": "the allocation is a MIP-mapped texture",
        "Cube": "the allocation is a cube texture",
        "Volume": "the allocation is a volume texture",
        "Vertex": "the allocation is a vertex buffer",
        "Index": "the allocation is an index buffer",
    }),
}

_DESCRIPTOR_1_3 = {  # the same words on the DXGK_SEGMENTDESCRIPTOR and ...3 pages
    "BaseAddress.QuadPart": "The base address of the segment, as determined by the graphics processing unit (GPU)",
    "CpuTranslatedAddress.QuadPart": "The base address of the segment, relative to the bus that the GPU is connected "
                                     "on",
}
_DESCRIPTOR_4 = {
    "BaseAddress.QuadPart": "The physical base address for the segment in the GPU",
    "NumInvalidMemoryRanges": "The number of invalid memory ranges in the segment",
    "VprRangeStartOffset": "Start offset of the video protected region range, in bytes",
    "VprRangeSize": "Size of the video protected region range, in bytes",
    "VprAlignment": "Alignment of the video protected region range, in bytes",
    "NumVprSupported": "Number of supported video protected ranges in the VPR range",
    "VprReserveSize": "Size of the area in the VPR range that is reserved for the driver/hardware to use, in bytes",
    "NumUEFIFrameBufferRanges": "Number of UEFI frame buffer ranges in the segment",
}
_PAGING_BUFFER = {  # the same words on the DXGK_QUERYSEGMENTOUT and ...3 pages
    "NbSegment": "The number of memory segments that the driver supports",
    "PagingBufferSize": "The size, in bytes, that the video memory manager should allocate for the paging buffer",
    "PagingBufferPrivateDataSize": "The size, in bytes, of the driver-resident private data structure that is "
                                   "associated with each paging buffer",
}

# Type -> member (a leaf path) -> its page's words, for members whose meaning is not worked out from the value
MEMBER_WORDS = {
    "DXGK_ALLOCATIONINFO": _table("DXGK_ALLOCATIONINFO", {
        "pPrivateDriverData": "A pointer to a block of private data",
        "PrivateDriverDataSize": "The size, in bytes, of the block of private data in pPrivateDriverData",
        "hAllocation": ("A handle to the allocation",
                        "The display miniport driver must set this member to a value that it can use to refer to its "
                        "private tracking structure for the allocation"),
        "pAllocationUsageHint": "A pointer to a DXGK_ALLOCATIONUSAGEHINT structure that the memory manager uses to "
                                "determine how to use the allocation",
    }),
    "DXGK_SEGMENTDESCRIPTOR": _table("DXGK_SEGMENTDESCRIPTOR", _DESCRIPTOR_1_3),
    "DXGK_SEGMENTDESCRIPTOR3": _table("DXGK_SEGMENTDESCRIPTOR3", _DESCRIPTOR_1_3),
    "DXGK_SEGMENTDESCRIPTOR4": _table("DXGK_SEGMENTDESCRIPTOR4", _DESCRIPTOR_4),
    "DXGK_CPUHOSTAPERTURE": _table("DXGK_CPUHOSTAPERTURE", {
        "PhysicalAddress": "The CPU physical address",
        "SizeInPages": "CPU host pages",  # the page: "The size d3ddiin CPU host pages."
    }),
    "DXGK_QUERYSEGMENTIN": _table("DXGK_QUERYSEGMENTIN", {
        "AgpApertureBase.QuadPart": "the base address of the AGP aperture",
        "AgpApertureSize.QuadPart": "the size, in bytes, of the available AGP aperture",
    }),
    "DXGK_QUERYSEGMENTIN4": _table("DXGK_QUERYSEGMENTIN4", {
        "PhysicalAdapterIndex": "A zero-based physical adapter index in a linked display adapter (LDA) link",
    }),
    "DXGK_QUERYSEGMENTOUT": _table("DXGK_QUERYSEGMENTOUT", {
        **_PAGING_BUFFER,
        "pSegmentDescriptor": "An array of DXGK_SEGMENTDESCRIPTOR structures that the driver populates with "
                              "information about the segments it supports",
    }),
    "DXGK_QUERYSEGMENTOUT3": _table("DXGK_QUERYSEGMENTOUT3", {
        **_PAGING_BUFFER,
        "pSegmentDescriptor": "An array of DXGK_SEGMENTDESCRIPTOR3 structures that the driver populates with "
                              "information about the segments it supports",
    }),
    "DXGK_QUERYSEGMENTOUT4": _table("DXGK_QUERYSEGMENTOUT4", {
        "NbSegment": "Number of elements in the pSegmentDescriptor array",
        "pSegmentDescriptor": "Pointer to the array of DXGK_SEGMENTDESCRIPTOR4 structures",
        "PagingBufferSegmentId": ("Segment identifier of the paging buffer",
                                  "This is the index (starting from 1) of the segment in the pSegmentDescriptor array"),
        "PagingBufferSize": "Paging buffer size",
        "PagingBufferPrivateDataSize": "Size, in bytes, of the driver-private data that will be provided with each "
                                       "paging buffer",
        "SegmentDescriptorStride": "Size of the elements in the pSegmentDescriptor array in bytes",
    }),
    "DXGK_QUERYSEGMENTMEMORYSTATE": _table("DXGK_QUERYSEGMENTMEMORYSTATE", {
        "DriverSegmentId": "A  1-based segment identifier of a local GPU memory segment",
        "PhysicalAdapterIndex": "Physical adapter index in a linked display adapter link",
        "NumInvalidMemoryRanges": "The number of entries in the pMemoryRanges array",
        "pMemoryRanges": "Array of DXGK_MEMORYRANGE structures for the invalid memory ranges",
    }),
    "DXGK_ALLOCATIONUSAGEHINT": _table("DXGK_ALLOCATIONUSAGEHINT", {
        "Version": "A positive integer that indicates the version of the allocation",
    }),
    "DXGK_ALLOCATIONUSAGEINFO1": _table("DXGK_ALLOCATIONUSAGEINFO1", {
        "SwizzledFormat": "A swizzled format value for the allocation that is private to a specific vendor",
        "ByteOffset": "The offset, in bytes, into the video memory manager's allocation that marks the start of the "
                      "driver's version of the allocation",
        "Width": "The width, in pixels, of the allocation",
        "Height": "The height, in number of lines, of the allocation",
        "Pitch": "The pitch, in bytes, of the allocation--that is, the distance, in bytes, to the start of the next "
                 "line",
        "Depth": "The depth, in levels, of the allocation (for MIP-mapped and volume textures only)",
        "SlicePitch": "The slice pitch, in bytes, from level to level (for cube and volume textures only)",
    }),
    "DXGK_ALLOCATIONLIST": _table("DXGK_ALLOCATIONLIST", {
        "hDeviceSpecificAllocation": "An open handle to the allocation that is being referenced",
        "VirtualAddress": "indicates the virtual address",
    }),
}
