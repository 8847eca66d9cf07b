"""Hand-typed golden data: every value below was typed in from ../shared/spec/definitions.md
(section given per table), never produced by d3dkmddi_py.  The small helpers at the
end only combine these literals (a nested type's offsets plus its member's offset).

A row's ``cond`` says for which targets the row holds, with the header's own guard:
``Cond(since="WDDM2_0")`` is ``#if DXGKDDI_INTERFACE_VERSION >= ..._WDDM2_0``,
``until`` is the ``#else`` side, ``only64`` is ``#if defined(_AMD64_) || defined(_ARM64_)``.
"""
from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------- §15 interface versions
VERSIONS = {
    "VISTA": 0x1052,
    "VISTA_SP1": 0x1053,
    "WIN7": 0x2005,
    "WIN8": 0x300E,
    "WDDM1_3": 0x4002,
    "WDDM1_3_PATH_INDEPENDENT_ROTATION": 0x4003,
    "WDDM2_0": 0x5023,
    "WDDM2_1": 0x6003,
    "WDDM2_1_5": 0x6010,
    "WDDM2_1_6": 0x6011,
    "WDDM2_2": 0x700A,
    "WDDM2_3": 0x8001,
    "WDDM2_4": 0x9006,
    "WDDM2_5": 0xA00B,
    "WDDM2_6": 0xB004,
    "WDDM2_7": 0xC004,
    "WDDM2_8": 0xD001,
    "WDDM2_9": 0xE003,
    "WDDM3_0": 0xF003,
    "WDDM3_1": 0x10004,
    "WDDM3_2": 0x11007,
}

# §14
PRIORITIES = {
    "D3DDDI_ALLOCATIONPRIORITY_MINIMUM": 0x28000000,
    "D3DDDI_ALLOCATIONPRIORITY_LOW": 0x50000000,
    "D3DDDI_ALLOCATIONPRIORITY_NORMAL": 0x78000000,
    "D3DDDI_ALLOCATIONPRIORITY_HIGH": 0xA0000000,
    "D3DDDI_ALLOCATIONPRIORITY_MAXIMUM": 0xC8000000,
}

# §10.2: under the WIN7 guard
SEGMENT_CONSTANTS = {
    "DXGK_SEGMENT_ID_INVALID": 0,
    "DXGK_SEGMENT_ID_SYSTEMMEMORY": 31,
    "DXGK_SEGMENT_SET_SYSTEMMEMORY": 0x80000000,
}

# §10.6 / kit excerpt K8
SEGMENTTYPE = {"DXGK_SEGMENTTYPE_SYSMEM": 0, "DXGK_SEGMENTTYPE_LOCAL": 1}
PAGESIZE = {
    "DXGK_PAGESIZE_4KB": 0, "DXGK_PAGESIZE_8KB": 1, "DXGK_PAGESIZE_16KB": 2, "DXGK_PAGESIZE_32KB": 3,
    "DXGK_PAGESIZE_64KB": 4, "DXGK_PAGESIZE_128KB": 5, "DXGK_PAGESIZE_256KB": 6, "DXGK_PAGESIZE_512KB": 7,
    "DXGK_PAGESIZE_1MB": 8, "DXGK_PAGESIZE_2MB": 9, "DXGK_PAGESIZE_4MB": 10, "DXGK_PAGESIZE_8MB": 11,
    "DXGK_PAGESIZE_16MB": 12, "DXGK_PAGESIZE_32MB": 13, "DXGK_PAGESIZE_64MB": 14, "DXGK_PAGESIZE_128MB": 15,
}


@dataclass(frozen=True)
class Cond:
    since: str | None = None
    until: str | None = None
    only64: bool = False

    def holds(self, abi: str, version: int) -> bool:
        if self.since is not None and version < VERSIONS[self.since]:
            return False
        if self.until is not None and version >= VERSIONS[self.until]:
            return False
        return not (self.only64 and abi == "x86")


ALWAYS = Cond()

# ---------------------------------------------------------------- bit tables
# rows: (field, bit, width, mask, cond); every bitfield is a UINT, offset 0 in its word.

# §2
D3DDDI_SEGMENTPREFERENCE_BITS = (
    ("SegmentId0", 0, 5, 0x0000001F, ALWAYS),
    ("Direction0", 5, 1, 0x00000020, ALWAYS),
    ("SegmentId1", 6, 5, 0x000007C0, ALWAYS),
    ("Direction1", 11, 1, 0x00000800, ALWAYS),
    ("SegmentId2", 12, 5, 0x0001F000, ALWAYS),
    ("Direction2", 17, 1, 0x00020000, ALWAYS),
    ("SegmentId3", 18, 5, 0x007C0000, ALWAYS),
    ("Direction3", 23, 1, 0x00800000, ALWAYS),
    ("SegmentId4", 24, 5, 0x1F000000, ALWAYS),
    ("Direction4", 29, 1, 0x20000000, ALWAYS),
    ("Reserved", 30, 2, 0xC0000000, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §3
DXGK_SEGMENTBANKPREFERENCE_BITS = (
    ("Bank0", 0, 7, 0x0000007F, ALWAYS),
    ("Direction0", 7, 1, 0x00000080, ALWAYS),
    ("Bank1", 8, 7, 0x00007F00, ALWAYS),
    ("Direction1", 15, 1, 0x00008000, ALWAYS),
    ("Bank2", 16, 7, 0x007F0000, ALWAYS),
    ("Direction2", 23, 1, 0x00800000, ALWAYS),
    ("Bank3", 24, 7, 0x7F000000, ALWAYS),
    ("Direction3", 31, 1, 0x80000000, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §4
DXGK_SEGMENTFLAGS_BITS = (
    ("Aperture", 0, 1, 0x00000001, ALWAYS),
    ("Agp", 1, 1, 0x00000002, ALWAYS),
    ("CpuVisible", 2, 1, 0x00000004, ALWAYS),
    ("UseBanking", 3, 1, 0x00000008, ALWAYS),
    ("CacheCoherent", 4, 1, 0x00000010, ALWAYS),
    ("PitchAlignment", 5, 1, 0x00000020, ALWAYS),
    ("PopulatedFromSystemMemory", 6, 1, 0x00000040, ALWAYS),
    ("PreservedDuringStandby", 7, 1, 0x00000080, ALWAYS),
    ("PreservedDuringHibernate", 8, 1, 0x00000100, ALWAYS),
    ("PartiallyPreservedDuringHibernate", 9, 1, 0x00000200, ALWAYS),
    ("Reserved", 10, 22, 0xFFFFFC00, Cond(until="WIN8")),
    ("DirectFlip", 10, 1, 0x00000400, Cond(since="WIN8")),
    ("Reserved", 11, 21, 0xFFFFF800, Cond(since="WIN8", until="WDDM2_0")),
    ("Use64KBPages", 11, 1, 0x00000800, Cond(since="WDDM2_0")),
    ("ReservedSysMem", 12, 1, 0x00001000, Cond(since="WDDM2_0")),
    ("SupportsCpuHostAperture", 13, 1, 0x00002000, Cond(since="WDDM2_0")),
    ("SupportsCachedCpuHostAperture", 14, 1, 0x00004000, Cond(since="WDDM2_0")),
    ("ApplicationTarget", 15, 1, 0x00008000, Cond(since="WDDM2_0")),
    ("VprSupported", 16, 1, 0x00010000, Cond(since="WDDM2_0")),
    ("VprPreservedDuringStandby", 17, 1, 0x00020000, Cond(since="WDDM2_0")),
    ("EncryptedPagingSupported", 18, 1, 0x00040000, Cond(since="WDDM2_0")),
    ("LocalBudgetGroup", 19, 1, 0x00080000, Cond(since="WDDM2_0")),
    ("NonLocalBudgetGroup", 20, 1, 0x00100000, Cond(since="WDDM2_0")),
    ("Reserved", 21, 11, 0xFFE00000, Cond(since="WDDM2_0", until="WDDM2_9")),
    ("PopulatedByReservedDDRByFirmware", 21, 1, 0x00200000, Cond(since="WDDM2_9")),
    ("Reserved", 22, 10, 0xFFC00000, Cond(since="WDDM2_9")),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §6 (bits 19-31: DXGK_ALLOC_RESERVED16 keeps its literal name, 15..0 become ReservedN)
DXGK_ALLOCATIONINFOFLAGS_BITS = (
    ("CpuVisible", 0, 1, 0x00000001, ALWAYS),
    ("PermanentSysMem", 1, 1, 0x00000002, ALWAYS),
    ("Cached", 2, 1, 0x00000004, ALWAYS),
    ("Protected", 3, 1, 0x00000008, ALWAYS),
    ("ExistingSysMem", 4, 1, 0x00000010, ALWAYS),
    ("ExistingKernelSysMem", 5, 1, 0x00000020, ALWAYS),
    ("FromEndOfSegment", 6, 1, 0x00000040, ALWAYS),
    ("Swizzled", 7, 1, 0x00000080, ALWAYS),
    ("Overlay", 8, 1, 0x00000100, ALWAYS),
    ("Capture", 9, 1, 0x00000200, ALWAYS),
    ("UseAlternateVA", 10, 1, 0x00000400, ALWAYS),
    ("SynchronousPaging", 11, 1, 0x00000800, ALWAYS),
    ("LinkMirrored", 12, 1, 0x00001000, ALWAYS),
    ("LinkInstanced", 13, 1, 0x00002000, ALWAYS),
    ("HistoryBuffer", 14, 1, 0x00004000, ALWAYS),
    ("Reserved", 15, 4, 0x00078000, Cond(until="WDDM2_0")),
    ("AccessedPhysically", 15, 1, 0x00008000, Cond(since="WDDM2_0")),
    ("ExplicitResidencyNotification", 16, 1, 0x00010000, Cond(since="WDDM2_0")),
    ("HardwareProtected", 17, 1, 0x00020000, Cond(since="WDDM2_0")),
    ("CpuVisibleOnDemand", 18, 1, 0x00040000, Cond(since="WDDM2_0")),
    ("DXGK_ALLOC_RESERVED16", 19, 1, 0x00080000, ALWAYS),
    ("Reserved15", 20, 1, 0x00100000, ALWAYS),
    ("Reserved14", 21, 1, 0x00200000, ALWAYS),
    ("Reserved13", 22, 1, 0x00400000, ALWAYS),
    ("Reserved12", 23, 1, 0x00800000, ALWAYS),
    ("Reserved11", 24, 1, 0x01000000, ALWAYS),
    ("Reserved10", 25, 1, 0x02000000, ALWAYS),
    ("Reserved9", 26, 1, 0x04000000, ALWAYS),
    ("Reserved4", 27, 1, 0x08000000, ALWAYS),
    ("Reserved3", 28, 1, 0x10000000, ALWAYS),
    ("Reserved2", 29, 1, 0x20000000, ALWAYS),
    ("Reserved1", 30, 1, 0x40000000, ALWAYS),
    ("Reserved0", 31, 1, 0x80000000, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §7
DXGK_ALLOCATIONINFOFLAGS_WDDM2_0_BITS = (
    ("CpuVisible", 0, 1, 0x00000001, ALWAYS),
    ("PermanentSysMem", 1, 1, 0x00000002, ALWAYS),
    ("Cached", 2, 1, 0x00000004, ALWAYS),
    ("Protected", 3, 1, 0x00000008, ALWAYS),
    ("ExistingSysMem", 4, 1, 0x00000010, ALWAYS),
    ("ExistingKernelSysMem", 5, 1, 0x00000020, ALWAYS),
    ("FromEndOfSegment", 6, 1, 0x00000040, ALWAYS),
    ("DisableLargePageMapping", 7, 1, 0x00000080, ALWAYS),
    ("Overlay", 8, 1, 0x00000100, ALWAYS),
    ("Capture", 9, 1, 0x00000200, ALWAYS),
    ("Reserved00", 10, 1, 0x00000400, Cond(until="WDDM2_1")),
    ("CreateInVpr", 10, 1, 0x00000400, Cond(since="WDDM2_1")),
    ("DXGK_ALLOC_RESERVED17", 11, 1, 0x00000800, ALWAYS),
    ("Reserved02", 12, 1, 0x00001000, ALWAYS),
    ("Reserved03", 13, 1, 0x00002000, Cond(until="WDDM2_9")),
    ("MapApertureCpuVisible", 13, 1, 0x00002000, Cond(since="WDDM2_9")),
    ("HistoryBuffer", 14, 1, 0x00004000, ALWAYS),
    ("AccessedPhysically", 15, 1, 0x00008000, ALWAYS),
    ("ExplicitResidencyNotification", 16, 1, 0x00010000, ALWAYS),
    ("HardwareProtected", 17, 1, 0x00020000, ALWAYS),
    ("CpuVisibleOnDemand", 18, 1, 0x00040000, ALWAYS),
    ("DXGK_ALLOC_RESERVED16", 19, 1, 0x00080000, ALWAYS),
    ("Reserved15", 20, 1, 0x00100000, ALWAYS),
    ("Reserved14", 21, 1, 0x00200000, ALWAYS),
    ("Reserved13", 22, 1, 0x00400000, ALWAYS),
    ("Reserved12", 23, 1, 0x00800000, ALWAYS),
    ("Reserved11", 24, 1, 0x01000000, ALWAYS),
    ("Reserved10", 25, 1, 0x02000000, ALWAYS),
    ("Reserved9", 26, 1, 0x04000000, ALWAYS),
    ("Reserved4", 27, 1, 0x08000000, ALWAYS),
    ("Reserved3", 28, 1, 0x10000000, ALWAYS),
    ("Reserved2", 29, 1, 0x20000000, ALWAYS),
    ("Reserved1", 30, 1, 0x40000000, ALWAYS),
    ("Reserved0", 31, 1, 0x80000000, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §8 (the type itself needs >= WDDM3_0)
DXGK_ALLOCATIONINFOFLAGS2_BITS = (
    ("ShareBackingStoreWithKmd", 0, 1, 0x00000001, ALWAYS),
    ("Reserved", 1, 31, 0xFFFFFFFE, Cond(until="WDDM3_2")),
    ("NoImplicitSynchronization", 1, 1, 0x00000002, Cond(since="WDDM3_2")),
    ("DisablePartialResidency", 2, 1, 0x00000004, Cond(since="WDDM3_2")),
    ("RestrictedToSingleSegment", 3, 1, 0x00000008, Cond(since="WDDM3_2")),
    ("NotifyEviction", 4, 1, 0x00000010, Cond(since="WDDM3_2")),
    ("NotifyIoMmuUnmap", 5, 1, 0x00000020, Cond(since="WDDM3_2")),
    ("Reserved", 6, 26, 0xFFFFFFC0, Cond(since="WDDM3_2")),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §9: the named union DXGK_ALLOCATIONUSAGEINFO1.Flags
USAGEINFO1_FLAGS_BITS = (
    ("PrivateFormat", 0, 1, 0x00000001, ALWAYS),
    ("Swizzled", 1, 1, 0x00000002, ALWAYS),
    ("MipMap", 2, 1, 0x00000004, ALWAYS),
    ("Cube", 3, 1, 0x00000008, ALWAYS),
    ("Volume", 4, 1, 0x00000010, ALWAYS),
    ("Vertex", 5, 1, 0x00000020, ALWAYS),
    ("Index", 6, 1, 0x00000040, ALWAYS),
    ("Reserved", 7, 25, 0xFFFFFF80, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# Not in definitions.md: d3dkmddi.h of WDK 10.0.26100 (KNSoft/WinSDK-Diff @ 38ce42f9, mask comments
# "// 0x00000001", "// 0xFFFFFFFE") and the page ns-d3dkmddi-_dxgk_createallocationflags ("the first bit of
# the 32-bit Value member (0x00000001)", "the remaining 31 bits (0xFFFFFFFE)"); unguarded, from Vista.
DXGK_CREATEALLOCATIONFLAGS_BITS = (
    ("Resource", 0, 1, 0x00000001, ALWAYS),
    ("Reserved", 1, 31, 0xFFFFFFFE, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §10.2
DXGK_SEGMENTFLAGS2_BITS = (
    ("Aperture", 0, 1, 0x00000001, ALWAYS),
    ("PopulatedFromSystemMemory", 1, 1, 0x00000002, ALWAYS),
    ("SystemMemoryReservedByBios", 2, 1, 0x00000004, ALWAYS),
    ("CpuVisible", 3, 1, 0x00000008, ALWAYS),
    ("Reserved", 4, 28, 0xFFFFFFF0, ALWAYS),
    ("Value", 0, 32, 0xFFFFFFFF, ALWAYS),
)

# §12: the anonymous (plain, no Value) struct of DXGK_ALLOCATIONLIST
ALLOCATIONLIST_BITS = (
    ("WriteOperation", 0, 1, 0x00000001, ALWAYS),
    ("SegmentId", 1, 5, 0x0000003E, ALWAYS),
    ("Reserved", 6, 26, 0xFFFFFFC0, ALWAYS),
)

BIT_TABLES = {
    "D3DDDI_SEGMENTPREFERENCE": D3DDDI_SEGMENTPREFERENCE_BITS,
    "DXGK_SEGMENTBANKPREFERENCE": DXGK_SEGMENTBANKPREFERENCE_BITS,
    "DXGK_SEGMENTFLAGS": DXGK_SEGMENTFLAGS_BITS,
    "DXGK_ALLOCATIONINFOFLAGS": DXGK_ALLOCATIONINFOFLAGS_BITS,
    "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0": DXGK_ALLOCATIONINFOFLAGS_WDDM2_0_BITS,
    "DXGK_ALLOCATIONINFOFLAGS2": DXGK_ALLOCATIONINFOFLAGS2_BITS,
    "DXGK_CREATEALLOCATIONFLAGS": DXGK_CREATEALLOCATIONFLAGS_BITS,
    "DXGK_SEGMENTFLAGS2": DXGK_SEGMENTFLAGS2_BITS,
    "DXGK_ALLOCATIONUSAGEINFO1.Flags": USAGEINFO1_FLAGS_BITS,
    "DXGK_ALLOCATIONLIST.bits": ALLOCATIONLIST_BITS,
}

# ---------------------------------------------------------------- structs: offsets and sizes
# rows: (member, C type, x64 offset, x86 offset, cond).  arm64 takes the x64 column.
# A member of a type listed in BIT_TABLES/STRUCTS expands to that type's leaves under
# "member."; member None means an anonymous struct whose members are flattened.


@dataclass(frozen=True)
class Struct:
    rows: tuple
    sizes: tuple  # ((x64, x86, cond), ...): the first row that holds
    align: tuple  # (x64, x86)
    exists: Cond = ALWAYS


PTR = "ptr"
# winnt.h LARGE_INTEGER: union { struct {DWORD LowPart; LONG HighPart;}; struct {...} u; LONGLONG QuadPart; }
LARGE_INTEGER = Struct(
    rows=(("LowPart", "DWORD", 0, 0, ALWAYS),
          ("HighPart", "LONG", 4, 4, ALWAYS),
          ("u.LowPart", "DWORD", 0, 0, ALWAYS),
          ("u.HighPart", "LONG", 4, 4, ALWAYS),
          ("QuadPart", "LONGLONG", 0, 0, ALWAYS)),
    sizes=((8, 8, ALWAYS),), align=(8, 8),  # §1: 8-aligned on x86 too (MSVC)
)

STRUCTS = {
    "LARGE_INTEGER": LARGE_INTEGER,
    # §5
    "DXGK_ALLOCATIONINFO": Struct(
        rows=(("pPrivateDriverData", "VOID*", 0, 0, ALWAYS),
              ("PrivateDriverDataSize", "UINT", 8, 4, ALWAYS),
              ("Alignment", "UINT", 12, 8, ALWAYS),
              ("MinimumPageSize", "UINT16", 12, 8, ALWAYS),
              ("RecommendedPageSize", "UINT16", 14, 10, ALWAYS),
              ("Size", "SIZE_T", 16, 12, ALWAYS),
              ("PitchAlignedSize", "SIZE_T", 24, 16, ALWAYS),
              ("HintedBank", "DXGK_SEGMENTBANKPREFERENCE", 32, 20, ALWAYS),
              ("PreferredSegment", "DXGK_SEGMENTPREFERENCE", 36, 24, ALWAYS),
              ("SupportedReadSegmentSet", "UINT", 40, 28, ALWAYS),
              ("MmuSet", "UINT", 40, 28, ALWAYS),
              ("SupportedWriteSegmentSet", "UINT", 44, 32, ALWAYS),
              ("EvictionSegmentSet", "UINT", 48, 36, ALWAYS),
              ("MaximumRenamingListLength", "UINT", 52, 40, ALWAYS),
              ("PhysicalAdapterIndex", "UINT", 52, 40, ALWAYS),
              ("hAllocation", "HANDLE", 56, 44, ALWAYS),
              ("Flags", "DXGK_ALLOCATIONINFOFLAGS", 64, 48, ALWAYS),
              ("FlagsWddm2", "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", 64, 48, ALWAYS),
              ("pAllocationUsageHint", "DXGK_ALLOCATIONUSAGEHINT*", 72, 52, ALWAYS),
              ("AllocationPriority", "UINT", 80, 56, ALWAYS),
              ("Flags2", "DXGK_ALLOCATIONINFOFLAGS2", 84, None, Cond(since="WDDM3_0", only64=True))),
        sizes=((88, 60, ALWAYS),), align=(8, 4),
    ),
    # §9
    "DXGK_ALLOCATIONUSAGEINFO1": Struct(
        rows=(("Flags", "DXGK_ALLOCATIONUSAGEINFO1.Flags", 0, 0, ALWAYS),
              ("Format", "D3DDDIFORMAT", 4, 4, ALWAYS),
              ("PrivateFormat", "UINT", 4, 4, ALWAYS),
              ("SwizzledFormat", "UINT", 8, 8, ALWAYS),
              ("ByteOffset", "UINT", 12, 12, ALWAYS),
              ("Width", "UINT", 16, 16, ALWAYS),
              ("Height", "UINT", 20, 20, ALWAYS),
              ("Pitch", "UINT", 24, 24, ALWAYS),
              ("Depth", "UINT", 28, 28, ALWAYS),
              ("SlicePitch", "UINT", 32, 32, ALWAYS)),
        sizes=((36, 36, ALWAYS),), align=(4, 4),
    ),
    "DXGK_ALLOCATIONUSAGEHINT": Struct(
        rows=(("Version", "UINT", 0, 0, ALWAYS),
              ("v1", "DXGK_ALLOCATIONUSAGEINFO1", 4, 4, ALWAYS)),
        sizes=((40, 40, ALWAYS),), align=(4, 4),
    ),
    # Not in definitions.md: the kit's struct (d3dkmddi.h, WDK 10.0.26100, unguarded) and the syntax block of
    # MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md; offsets worked out by hand from its members
    # (a pointer, two UINTs, a pointer, a HANDLE, a 4-byte flag word).
    "DXGKARG_CREATEALLOCATION": Struct(
        rows=(("pPrivateDriverData", "VOID*", 0, 0, ALWAYS),
              ("PrivateDriverDataSize", "UINT", 8, 4, ALWAYS),
              ("NumAllocations", "UINT", 12, 8, ALWAYS),
              ("pAllocationInfo", "DXGK_ALLOCATIONINFO*", 16, 12, ALWAYS),
              ("hResource", "HANDLE", 24, 16, ALWAYS),
              ("Flags", "DXGK_CREATEALLOCATIONFLAGS", 32, 20, ALWAYS)),
        sizes=((40, 24, ALWAYS),), align=(8, 4),
    ),
    # §12
    "DXGK_ALLOCATIONLIST": Struct(
        rows=(("hDeviceSpecificAllocation", "HANDLE", 0, 0, ALWAYS),
              (None, "DXGK_ALLOCATIONLIST.bits", 8, 4, ALWAYS),
              ("PhysicalAddress", "PHYSICAL_ADDRESS", 16, 8, ALWAYS),
              ("VirtualAddress", "D3DGPU_VIRTUAL_ADDRESS", 16, 8, Cond(since="WDDM2_0"))),
        sizes=((24, 16, ALWAYS),), align=(8, 8),
    ),
    # §10.1
    "DXGK_SEGMENTDESCRIPTOR": Struct(
        rows=(("BaseAddress", "PHYSICAL_ADDRESS", 0, 0, ALWAYS),
              ("CpuTranslatedAddress", "PHYSICAL_ADDRESS", 8, 8, ALWAYS),
              ("Size", "SIZE_T", 16, 16, ALWAYS),
              ("NbOfBanks", "UINT", 24, 20, ALWAYS),
              ("pBankRangeTable", "SIZE_T*", 32, 24, ALWAYS),
              ("CommitLimit", "SIZE_T", 40, 28, ALWAYS),
              ("Flags", "DXGK_SEGMENTFLAGS", 48, 32, ALWAYS)),
        sizes=((56, 40, ALWAYS),), align=(8, 8),
    ),
    # §10.2
    "DXGK_SEGMENTDESCRIPTOR2": Struct(
        rows=(("Flags", "DXGK_SEGMENTFLAGS2", 0, 0, ALWAYS),
              ("Size", "SIZE_T", 8, 4, ALWAYS),
              ("pMdl", "PMDL", 16, 8, ALWAYS),
              ("BaseAddress", "PHYSICAL_ADDRESS", 24, 16, ALWAYS),
              ("CpuTranslatedAddress", "PHYSICAL_ADDRESS", 32, 24, ALWAYS)),
        sizes=((40, 32, ALWAYS),), align=(8, 8), exists=Cond(since="WIN7"),
    ),
    "DXGK_QUERYSEGMENTOUT2": Struct(
        rows=(("SegmentCount", "UINT", 0, 0, ALWAYS),
              ("pSegmentDescriptor", "DXGK_SEGMENTDESCRIPTOR2*", 8, 4, ALWAYS)),
        sizes=((16, 8, ALWAYS),), align=(8, 4), exists=Cond(since="WIN7"),
    ),
    # §10.3
    "DXGK_SEGMENTDESCRIPTOR3": Struct(
        rows=(("Flags", "DXGK_SEGMENTFLAGS", 0, 0, ALWAYS),
              ("BaseAddress", "PHYSICAL_ADDRESS", 8, 8, ALWAYS),
              ("CpuTranslatedAddress", "PHYSICAL_ADDRESS", 16, 16, ALWAYS),
              ("Size", "SIZE_T", 24, 24, ALWAYS),
              ("NbOfBanks", "UINT", 32, 28, ALWAYS),
              ("pBankRangeTable", "SIZE_T*", 40, 32, ALWAYS),
              ("CommitLimit", "SIZE_T", 48, 36, ALWAYS),
              ("SystemMemoryEndAddress", "SIZE_T", 56, 40, ALWAYS),
              ("Reserved", "SIZE_T", 64, 44, ALWAYS)),
        sizes=((72, 48, ALWAYS),), align=(8, 8), exists=Cond(since="WIN8"),
    ),
    # §10.4
    "DXGK_CPUHOSTAPERTURE": Struct(
        rows=(("PhysicalAddress", "UINT64", 0, 0, ALWAYS),
              ("SizeInPages", "UINT32", 8, 8, ALWAYS)),
        sizes=((16, 16, ALWAYS),), align=(8, 8), exists=Cond(since="WDDM2_0"),
    ),
    # §10.5
    "DXGK_SEGMENTDESCRIPTOR4": Struct(
        rows=(("Flags", "DXGK_SEGMENTFLAGS", 0, 0, ALWAYS),
              ("BaseAddress", "PHYSICAL_ADDRESS", 8, 8, ALWAYS),
              ("Size", "SIZE_T", 16, 16, ALWAYS),
              ("CommitLimit", "SIZE_T", 24, 20, ALWAYS),
              ("SystemMemoryEndAddress", "SIZE_T", 32, 24, ALWAYS),
              ("CpuTranslatedAddress", "PHYSICAL_ADDRESS", 40, 32, ALWAYS),
              ("CpuHostAperture", "DXGK_CPUHOSTAPERTURE", 40, 32, ALWAYS),
              ("NumInvalidMemoryRanges", "UINT", 56, 48, ALWAYS),
              ("VprRangeStartOffset", "SIZE_T", 64, 52, ALWAYS),
              ("VprRangeSize", "SIZE_T", 72, 56, ALWAYS),
              ("VprAlignment", "UINT", 80, 60, ALWAYS),
              ("NumVprSupported", "UINT", 84, 64, ALWAYS),
              ("VprReserveSize", "UINT", 88, 68, ALWAYS),
              ("NumUEFIFrameBufferRanges", "UINT", 92, 72, Cond(since="WDDM2_2"))),
        sizes=((96, 72, Cond(until="WDDM2_2")), (96, 80, Cond(since="WDDM2_2"))),
        align=(8, 8), exists=Cond(since="WDDM2_0"),
    ),
    # §10.6
    "DXGK_SEGMENTDESCRIPTOR5": Struct(
        rows=(("SegmentType", "DXGK_SEGMENTTYPE", 0, 0, ALWAYS),
              ("Flags", "DXGK_SEGMENTFLAGS", 4, 4, ALWAYS),
              ("BaseAddress", "PHYSICAL_ADDRESS", 8, 8, ALWAYS),
              ("Size", "UINT64", 16, 16, ALWAYS),
              ("SystemMemoryEndAddress", "SIZE_T", 24, 24, ALWAYS),
              ("CpuTranslatedAddress", "PHYSICAL_ADDRESS", 32, 32, ALWAYS),
              ("CpuHostAperture", "DXGK_CPUHOSTAPERTURE", 32, 32, ALWAYS),
              ("VprRangeStartOffset", "SIZE_T", 48, 48, ALWAYS),
              ("VprRangeSize", "SIZE_T", 56, 52, ALWAYS),
              ("VprAlignment", "UINT32", 64, 56, ALWAYS),
              ("NumInvalidMemoryRanges", "UINT32", 68, 60, ALWAYS),
              ("NumVprSupported", "UINT32", 72, 64, ALWAYS),
              ("VprReserveSize", "UINT32", 76, 68, ALWAYS),
              ("NumUEFIFrameBufferRanges", "UINT32", 80, 72, ALWAYS),
              ("SlabSize", "DXGK_PAGESIZE", 84, 76, ALWAYS)),
        sizes=((88, 80, ALWAYS),), align=(8, 8), exists=Cond(since="WDDM3_2"),
    ),
    # §11
    "DXGK_QUERYSEGMENTIN": Struct(
        rows=(("AgpApertureBase", "PHYSICAL_ADDRESS", 0, 0, ALWAYS),
              ("AgpApertureSize", "LARGE_INTEGER", 8, 8, ALWAYS),
              ("AgpFlags", "DXGK_SEGMENTFLAGS", 16, 16, ALWAYS)),
        sizes=((24, 24, ALWAYS),), align=(8, 8),
    ),
    "DXGK_QUERYSEGMENTOUT": Struct(
        rows=(("NbSegment", "UINT", 0, 0, ALWAYS),
              ("pSegmentDescriptor", "DXGK_SEGMENTDESCRIPTOR*", 8, 4, ALWAYS),
              ("PagingBufferSegmentId", "UINT", 16, 8, ALWAYS),
              ("PagingBufferSize", "UINT", 20, 12, ALWAYS),
              ("PagingBufferPrivateDataSize", "UINT", 24, 16, ALWAYS)),
        sizes=((32, 20, ALWAYS),), align=(8, 4),
    ),
    "DXGK_QUERYSEGMENTOUT3": Struct(
        rows=(("NbSegment", "UINT", 0, 0, ALWAYS),
              ("pSegmentDescriptor", "DXGK_SEGMENTDESCRIPTOR3*", 8, 4, ALWAYS),
              ("PagingBufferSegmentId", "UINT", 16, 8, ALWAYS),
              ("PagingBufferSize", "UINT", 20, 12, ALWAYS),
              ("PagingBufferPrivateDataSize", "UINT", 24, 16, ALWAYS)),
        sizes=((32, 20, ALWAYS),), align=(8, 4), exists=Cond(since="WIN8"),
    ),
    "DXGK_QUERYSEGMENTIN4": Struct(
        rows=(("PhysicalAdapterIndex", "UINT", 0, 0, ALWAYS),),
        sizes=((4, 4, ALWAYS),), align=(4, 4), exists=Cond(since="WDDM2_0"),
    ),
    "DXGK_QUERYSEGMENTOUT4": Struct(
        rows=(("NbSegment", "UINT", 0, 0, ALWAYS),
              ("pSegmentDescriptor", "BYTE*", 8, 4, ALWAYS),
              ("PagingBufferSegmentId", "UINT", 16, 8, ALWAYS),
              ("PagingBufferSize", "UINT", 20, 12, ALWAYS),
              ("PagingBufferPrivateDataSize", "UINT", 24, 16, ALWAYS),
              ("SegmentDescriptorStride", "SIZE_T", 32, 20, ALWAYS)),
        sizes=((40, 24, ALWAYS),), align=(8, 4), exists=Cond(since="WDDM2_0"),
    ),
    # §11 (alias DXGK_SEGMENTMEMORYSTATE): WORD, WORD, then a UINT (a union of two UINTs from WDDM2_2), then
    # DXGK_MEMORYRANGE*; offsets worked out by hand from those members (definitions.md gives none)
    "DXGK_QUERYSEGMENTMEMORYSTATE": Struct(
        rows=(("DriverSegmentId", "WORD", 0, 0, ALWAYS),
              ("PhysicalAdapterIndex", "WORD", 2, 2, ALWAYS),
              ("NumInvalidMemoryRanges", "UINT", 4, 4, ALWAYS),
              ("NumUEFIFrameBufferRanges", "UINT", 4, 4, Cond(since="WDDM2_2")),
              ("pMemoryRanges", "DXGK_MEMORYRANGE*", 8, 8, ALWAYS)),
        sizes=((16, 12, ALWAYS),), align=(8, 4), exists=Cond(since="WDDM2_0"),
    ),
    "DXGK_QUERYSEGMENTCOUNTIN": Struct(
        rows=(("PhysicalAdapterIndex", "UINT16", 0, 0, ALWAYS),
              ("Padding", "UINT16", 2, 2, ALWAYS),
              ("Reserved", "UINT32", 4, 4, ALWAYS)),
        sizes=((8, 8, ALWAYS),), align=(4, 4), exists=Cond(since="WDDM3_2"),
    ),
    "DXGK_QUERYSEGMENTCOUNTOUT": Struct(
        rows=(("SegmentCount", "UINT16", 0, 0, ALWAYS),
              ("Padding", "UINT16", 2, 2, ALWAYS),
              ("Reserved", "UINT32", 4, 4, ALWAYS)),
        sizes=((8, 8, ALWAYS),), align=(4, 4), exists=Cond(since="WDDM3_2"),
    ),
    "DXGK_QUERYSEGMENTIN5": Struct(
        rows=(("PhysicalAdapterIndex", "UINT16", 0, 0, ALWAYS),
              ("Padding", "UINT16", 2, 2, ALWAYS),
              ("Reserved", "UINT32", 4, 4, ALWAYS)),
        sizes=((8, 8, ALWAYS),), align=(4, 4), exists=Cond(since="WDDM3_2"),
    ),
    "DXGK_QUERYSEGMENTOUT5": Struct(
        rows=(("SegmentDescriptors", "DXGK_SEGMENTDESCRIPTOR5*", 0, 0, ALWAYS),
              ("Reserved[0]", "UINT32", 8, 4, ALWAYS),
              ("Reserved[1]", "UINT32", 12, 8, ALWAYS),
              ("Reserved[2]", "UINT32", 16, 12, ALWAYS),
              ("Reserved[3]", "UINT32", 20, 16, ALWAYS)),
        sizes=((24, 20, ALWAYS),), align=(8, 4), exists=Cond(since="WDDM3_2"),
    ),
}

# The flag words: §1 "sizeof = 4 and alignment = 4" for every version.
FLAG_TYPE_EXISTS = {
    "D3DDDI_SEGMENTPREFERENCE": ALWAYS,
    "DXGK_SEGMENTBANKPREFERENCE": ALWAYS,
    "DXGK_SEGMENTFLAGS": ALWAYS,
    "DXGK_ALLOCATIONINFOFLAGS": ALWAYS,
    "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0": ALWAYS,  # §7: the type is unguarded
    "DXGK_ALLOCATIONINFOFLAGS2": Cond(since="WDDM3_0"),
    "DXGK_SEGMENTFLAGS2": Cond(since="WIN7"),
    "DXGK_CREATEALLOCATIONFLAGS": ALWAYS,
}

# typedef aliases (§2: typedef D3DDDI_SEGMENTPREFERENCE DXGK_SEGMENTPREFERENCE; §1 PHYSICAL_ADDRESS)
ALIASES = {"DXGK_SEGMENTPREFERENCE": "D3DDDI_SEGMENTPREFERENCE", "PHYSICAL_ADDRESS": "LARGE_INTEGER",
           "DXGK_SEGMENTMEMORYSTATE": "DXGK_QUERYSEGMENTMEMORYSTATE"}  # §11

# Scalar C types: (bytes or PTR, signed).  MSVC enums are int.
SCALARS = {
    "UINT": (4, False), "UINT16": (2, False), "WORD": (2, False), "UINT32": (4, False), "UINT64": (8, False),
    "DWORD": (4, False), "LONG": (4, True), "LONGLONG": (8, True),
    "D3DGPU_VIRTUAL_ADDRESS": (8, False), "D3DDDIFORMAT": (4, True),
    "DXGK_SEGMENTTYPE": (4, True), "DXGK_PAGESIZE": (4, True),
    "SIZE_T": (PTR, False), "HANDLE": (PTR, False), "PMDL": (PTR, False),
}
POINTER_BYTES = {"x64": 8, "arm64": 8, "x86": 4}

# Every type name the issue lists (§2-§13), struct or flag word.
ALL_TYPES = tuple(FLAG_TYPE_EXISTS) + tuple(n for n in STRUCTS if n != "LARGE_INTEGER")


# ---------------------------------------------------------------- combining the literals
@dataclass(frozen=True)
class GoldenLeaf:
    path: str
    offset: int
    bit: int
    width: int
    mask: int  # within the storage unit at ``offset``
    c_type: str
    signed: bool


def _column(abi: str) -> int:
    return 3 if abi == "x86" else 2


def type_exists(name: str, abi: str, version: int) -> bool:
    name = ALIASES.get(name, name)
    if name in FLAG_TYPE_EXISTS:
        return FLAG_TYPE_EXISTS[name].holds(abi, version)
    return STRUCTS[name].exists.holds(abi, version)


def golden_size(name: str, abi: str, version: int) -> tuple[int, int]:
    """(sizeof, alignment) from the tables."""
    name = ALIASES.get(name, name)
    if name in BIT_TABLES:
        return 4, 4
    st = STRUCTS[name]
    for x64, x86, cond in st.sizes:
        if cond.holds(abi, version):
            return (x86, st.align[1]) if abi == "x86" else (x64, st.align[0])
    raise AssertionError(f"no size row for {name} at {abi} 0x{version:X}")


def golden_leaves(name: str, abi: str, version: int, prefix: str = "", base: int = 0) -> list[GoldenLeaf]:
    """Every leaf of ``name`` at this target, in declaration order, from the tables only."""
    name = ALIASES.get(name, name)
    if name in BIT_TABLES:
        out = []
        for field, bit, width, mask, cond in BIT_TABLES[name]:
            if cond.holds(abi, version):
                out.append(GoldenLeaf(prefix + field, base, bit, width, mask, "UINT", False))
        return out
    out = []
    for row in STRUCTS[name].rows:
        member, ctype, cond = row[0], row[1], row[4]
        if not cond.holds(abi, version):
            continue
        offset = base + row[_column(abi)]
        nested = ALIASES.get(ctype, ctype)
        if nested in BIT_TABLES or nested in STRUCTS:
            sub = prefix if member is None else f"{prefix}{member}."
            out.extend(golden_leaves(nested, abi, version, sub, offset))
            continue
        if ctype.endswith("*"):
            size, signed = POINTER_BYTES[abi], False
        else:
            size, signed = SCALARS[ctype]
            size = POINTER_BYTES[abi] if size == PTR else size
        out.append(GoldenLeaf(prefix + member, offset, 0, size * 8, (1 << (size * 8)) - 1, ctype, signed))
    return out
