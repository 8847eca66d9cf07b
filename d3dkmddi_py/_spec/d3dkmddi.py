"""d3dkmddi.h (WDK 10.0.26100): the segment and allocation family.

Transcribed from ../shared/spec/definitions.md §1-§13, which reads the kit itself.
Member order, names (after macro expansion) and ``#if`` nesting follow the kit.
"""
from __future__ import annotations

from .d3dukmdt import LEARN
from .model import (AllOf, Alias, Arch64, Bits, Const, EnumDef, Field, Header, If, PointsTo, Record, Since, TypeDef,
                    Verbatim)

HEADER = Header("d3dkmddi.h")
DDI = LEARN + "d3dkmddi/"

WIN7, WIN8 = Since("WIN7"), Since("WIN8")
WDDM2_0, WDDM2_1, WDDM2_2, WDDM2_9 = Since("WDDM2_0"), Since("WDDM2_1"), Since("WDDM2_2"), Since("WDDM2_9")
WDDM3_0, WDDM3_2 = Since("WDDM3_0"), Since("WDDM3_2")


def flags_union(*bits, name=None):
    """``union { struct { bits }; UINT Value; }``: the shape of every flag word here."""
    return Record("union", (Record("struct", tuple(bits)), Field("Value", "UINT")), name=name)


def one_bit(*names):
    return tuple(Bits(n, "UINT", 1) for n in names)


# The kit renames DXGK_ALLOC_RESERVED0..15 to Reserved0..15 unless DXGK_ALLOCATIONINFOFLAGS_EXT
# is defined; 16 and 17 have no macro and keep their literal names.
HEADER.add(Verbatim(
    "#ifndef DXGK_ALLOCATIONINFOFLAGS_EXT\n"
    + "".join(f"#define DXGK_ALLOC_RESERVED{i} Reserved{i}\n" for i in range(16))
    + "#endif\n",
    "d3dkmddi.h",
))


def alloc_reserved(*numbers):
    out = []
    for n in numbers:
        spelled = f"DXGK_ALLOC_RESERVED{n}"
        out.append(Bits(spelled if n >= 16 else f"Reserved{n}", "UINT", 1, c_spelling=spelled))
    return tuple(out)


# Bits 0-6 mean the same in DXGK_ALLOCATIONINFOFLAGS and DXGK_ALLOCATIONINFOFLAGS_WDDM2_0.
ALLOC_FLAGS_0_TO_6 = ("CpuVisible", "PermanentSysMem", "Cached", "Protected", "ExistingSysMem",
                      "ExistingKernelSysMem", "FromEndOfSegment")
ALLOC_RESERVED_TAIL = alloc_reserved(16, 15, 14, 13, 12, 11, 10, 9, 4, 3, 2, 1, 0)

HEADER.add(Alias("DXGK_SEGMENTPREFERENCE", "D3DDDI_SEGMENTPREFERENCE", "d3dkmddi.h"))

DXGK_SEGMENTBANKPREFERENCE = HEADER.add(TypeDef(
    "DXGK_SEGMENTBANKPREFERENCE", "struct",
    (flags_union(*(b for i in range(4) for b in (Bits(f"Bank{i}", "UINT", 7), Bits(f"Direction{i}", "UINT", 1)))),),
    "d3dkmddi.h", tag="_DXGK_SEGMENTBANKPREFERENCE",
    doc=DDI + "ns-d3dkmddi-_dxgk_segmentbankpreference",
))

DXGK_SEGMENTFLAGS = HEADER.add(TypeDef(
    "DXGK_SEGMENTFLAGS", "struct",
    (flags_union(
        *one_bit("Aperture", "Agp", "CpuVisible", "UseBanking", "CacheCoherent", "PitchAlignment",
                 "PopulatedFromSystemMemory", "PreservedDuringStandby", "PreservedDuringHibernate",
                 "PartiallyPreservedDuringHibernate"),
        If(WIN8,
           (Bits("DirectFlip", "UINT", 1),
            If(WDDM2_0,
               (*one_bit("Use64KBPages", "ReservedSysMem", "SupportsCpuHostAperture",
                         "SupportsCachedCpuHostAperture", "ApplicationTarget", "VprSupported",
                         "VprPreservedDuringStandby", "EncryptedPagingSupported", "LocalBudgetGroup",
                         "NonLocalBudgetGroup"),
                If(WDDM2_9,
                   (Bits("PopulatedByReservedDDRByFirmware", "UINT", 1), Bits("Reserved", "UINT", 10)),
                   (Bits("Reserved", "UINT", 11),))),
               (Bits("Reserved", "UINT", 21),))),
           (Bits("Reserved", "UINT", 22),)),
    ),),
    "d3dkmddi.h", tag="_DXGK_SEGMENTFLAGS",
    doc=DDI + "ns-d3dkmddi-_dxgk_segmentflags",
))

DXGK_ALLOCATIONINFOFLAGS = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONINFOFLAGS", "struct",
    (flags_union(
        *one_bit(*ALLOC_FLAGS_0_TO_6, "Swizzled", "Overlay", "Capture", "UseAlternateVA", "SynchronousPaging", "LinkMirrored", "LinkInstanced", "HistoryBuffer"),
        If(WDDM2_0,
           one_bit("AccessedPhysically", "ExplicitResidencyNotification", "HardwareProtected",
                   "CpuVisibleOnDemand"),
           (Bits("Reserved", "UINT", 4),)),
        *ALLOC_RESERVED_TAIL,
    ),),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONINFOFLAGS",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationinfoflags",
))

DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "struct",
    (flags_union(
        *one_bit(*ALLOC_FLAGS_0_TO_6, "DisableLargePageMapping", "Overlay", "Capture"),
        If(WDDM2_1, (Bits("CreateInVpr", "UINT", 1),), (Bits("Reserved00", "UINT", 1),)),
        *alloc_reserved(17),
        Bits("Reserved02", "UINT", 1),
        If(WDDM2_9, (Bits("MapApertureCpuVisible", "UINT", 1),), (Bits("Reserved03", "UINT", 1),)),
        *one_bit("HistoryBuffer", "AccessedPhysically", "ExplicitResidencyNotification",
                 "HardwareProtected", "CpuVisibleOnDemand"),
        *ALLOC_RESERVED_TAIL,
    ),),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONINFOFLAGS_WDDM2_0",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationinfoflags_wddm2_0",
))

DXGK_ALLOCATIONINFOFLAGS2 = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONINFOFLAGS2", "struct",
    (flags_union(
        Bits("ShareBackingStoreWithKmd", "UINT", 1),
        If(WDDM3_2,
           (*one_bit("NoImplicitSynchronization", "DisablePartialResidency", "RestrictedToSingleSegment",
                     "NotifyEviction", "NotifyIoMmuUnmap"),
            Bits("Reserved", "UINT", 26)),
           (Bits("Reserved", "UINT", 31),)),
    ),),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONINFOFLAGS2", guard=WDDM3_0,
    doc=DDI + "ns-d3dkmddi-dxgk_allocationinfoflags2",
))

DXGK_ALLOCATIONUSAGEINFO1 = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONUSAGEINFO1", "struct",
    (flags_union(*one_bit("PrivateFormat", "Swizzled", "MipMap", "Cube", "Volume", "Vertex", "Index"),
                 Bits("Reserved", "UINT", 25), name="Flags"),
     Record("union", (Field("Format", "D3DDDIFORMAT"), Field("PrivateFormat", "UINT"))),
     *(Field(n, "UINT") for n in ("SwizzledFormat", "ByteOffset", "Width", "Height", "Pitch", "Depth",
                                  "SlicePitch"))),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONUSAGEINFO1",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationusageinfo1",
))

DXGK_ALLOCATIONUSAGEHINT = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONUSAGEHINT", "struct",
    (Field("Version", "UINT"), Field("v1", "DXGK_ALLOCATIONUSAGEINFO1")),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONUSAGEHINT",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationusagehint",
))

DXGK_ALLOCATIONINFO = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONINFO", "struct",
    (Field("pPrivateDriverData", "VOID*"),
     Field("PrivateDriverDataSize", "UINT"),
     Record("union", (Field("Alignment", "UINT"),
                      Record("struct", (Field("MinimumPageSize", "UINT16"),
                                        Field("RecommendedPageSize", "UINT16"))))),
     Field("Size", "SIZE_T"),
     Field("PitchAlignedSize", "SIZE_T"),
     Field("HintedBank", "DXGK_SEGMENTBANKPREFERENCE"),
     Field("PreferredSegment", "DXGK_SEGMENTPREFERENCE"),
     Record("union", (Field("SupportedReadSegmentSet", "UINT"), Field("MmuSet", "UINT"))),
     Field("SupportedWriteSegmentSet", "UINT"),
     Field("EvictionSegmentSet", "UINT"),
     Record("union", (Field("MaximumRenamingListLength", "UINT"), Field("PhysicalAdapterIndex", "UINT"))),
     Field("hAllocation", "HANDLE"),
     Record("union", (Field("Flags", "DXGK_ALLOCATIONINFOFLAGS"),
                      Field("FlagsWddm2", "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"))),
     Field("pAllocationUsageHint", "DXGK_ALLOCATIONUSAGEHINT*"),
     Field("AllocationPriority", "UINT"),
     If(AllOf((WDDM3_0, Arch64())), (Field("Flags2", "DXGK_ALLOCATIONINFOFLAGS2"),))),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONINFO",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationinfo",
))

# DxgkDdiCreateAllocation's argument and its flags.  Not in definitions.md: transcribed from the kit,
# d3dkmddi.h of WDK 10.0.26100 (KNSoft/WinSDK-Diff : Include/shared/d3dkmddi.h
# @ 38ce42f912cf25ff95493b28d48e64cc6733b947, right after DXGK_ALLOCATIONINFO_TEST), with no #if inside or
# around either struct; the Vista-era kit header ("Copyright (c) 2003", the same mask comments) has the same
# two structs, and the pages say "Available in Windows Vista and later".  The kit spells the first member
# ``CONST VOID*``; const does not change the layout.
DXGK_CREATEALLOCATIONFLAGS = HEADER.add(TypeDef(
    "DXGK_CREATEALLOCATIONFLAGS", "struct",
    (flags_union(Bits("Resource", "UINT", 1), Bits("Reserved", "UINT", 31)),),
    "d3dkmddi.h", tag="_DXGK_CREATEALLOCATIONFLAGS",
    doc=DDI + "ns-d3dkmddi-_dxgk_createallocationflags",
))

DXGKARG_CREATEALLOCATION = HEADER.add(TypeDef(
    "DXGKARG_CREATEALLOCATION", "struct",
    (Field("pPrivateDriverData", "VOID*"),
     Field("PrivateDriverDataSize", "UINT"),
     Field("NumAllocations", "UINT"),
     Field("pAllocationInfo", "DXGK_ALLOCATIONINFO*"),
     Field("hResource", "HANDLE"),
     Field("Flags", "DXGK_CREATEALLOCATIONFLAGS")),
    "d3dkmddi.h", tag="_DXGKARG_CREATEALLOCATION",
    doc=DDI + "ns-d3dkmddi-_dxgkarg_createallocation",
))

DXGK_ALLOCATIONLIST = HEADER.add(TypeDef(
    "DXGK_ALLOCATIONLIST", "struct",
    (Field("hDeviceSpecificAllocation", "HANDLE"),
     Record("struct", (Bits("WriteOperation", "UINT", 1), Bits("SegmentId", "UINT", 5),
                       Bits("Reserved", "UINT", 26))),
     If(WDDM2_0,
        (Record("union", (Field("PhysicalAddress", "PHYSICAL_ADDRESS"),
                          Field("VirtualAddress", "D3DGPU_VIRTUAL_ADDRESS"))),),
        (Field("PhysicalAddress", "PHYSICAL_ADDRESS"),))),
    "d3dkmddi.h", tag="_DXGK_ALLOCATIONLIST",
    doc=DDI + "ns-d3dkmddi-_dxgk_allocationlist",
))

DXGK_SEGMENTDESCRIPTOR = HEADER.add(TypeDef(
    "DXGK_SEGMENTDESCRIPTOR", "struct",
    (Field("BaseAddress", "PHYSICAL_ADDRESS"),
     Field("CpuTranslatedAddress", "PHYSICAL_ADDRESS"),
     Field("Size", "SIZE_T"),
     Field("NbOfBanks", "UINT"),
     Field("pBankRangeTable", "SIZE_T*"),
     Field("CommitLimit", "SIZE_T"),
     Field("Flags", "DXGK_SEGMENTFLAGS")),
    "d3dkmddi.h", tag="_DXGK_SEGMENTDESCRIPTOR",
    doc=DDI + "ns-d3dkmddi-_dxgk_segmentdescriptor",
))

DXGK_QUERYSEGMENTIN = HEADER.add(TypeDef(
    "DXGK_QUERYSEGMENTIN", "struct",
    (Field("AgpApertureBase", "PHYSICAL_ADDRESS"),
     Field("AgpApertureSize", "LARGE_INTEGER"),
     Field("AgpFlags", "DXGK_SEGMENTFLAGS")),
    "d3dkmddi.h", tag="_DXGK_QUERYSEGMENTIN",
    doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentin",
))


def query_segment_out(name, descriptor_pointer, guard=None, stride=False, doc=None):
    members = (Field("NbSegment", "UINT"),
               Field("pSegmentDescriptor", descriptor_pointer),
               Field("PagingBufferSegmentId", "UINT"),
               Field("PagingBufferSize", "UINT"),
               Field("PagingBufferPrivateDataSize", "UINT"))
    if stride:
        members += (Field("SegmentDescriptorStride", "SIZE_T"),)
    return HEADER.add(TypeDef(name, "struct", members, "d3dkmddi.h", tag="_" + name, guard=guard, doc=doc))


DXGK_QUERYSEGMENTOUT = query_segment_out("DXGK_QUERYSEGMENTOUT", "DXGK_SEGMENTDESCRIPTOR*",
                                         doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentout")

# Under the WIN7 guard: system-reserved segment description and the segment id constants.
DXGK_SEGMENTFLAGS2 = HEADER.add(TypeDef(
    "DXGK_SEGMENTFLAGS2", "struct",
    (flags_union(*one_bit("Aperture", "PopulatedFromSystemMemory", "SystemMemoryReservedByBios", "CpuVisible"),
                 Bits("Reserved", "UINT", 28)),),
    "d3dkmddi.h", tag="_DXGK_SEGMENTFLAGS2", guard=WIN7,
))
DXGK_SEGMENTDESCRIPTOR2 = HEADER.add(TypeDef(
    "DXGK_SEGMENTDESCRIPTOR2", "struct",
    (Field("Flags", "DXGK_SEGMENTFLAGS2"),
     Field("Size", "SIZE_T"),
     Field("pMdl", "PMDL"),
     Field("BaseAddress", "PHYSICAL_ADDRESS"),
     Field("CpuTranslatedAddress", "PHYSICAL_ADDRESS")),
    "d3dkmddi.h", tag="_DXGK_SEGMENTDESCRIPTOR2", guard=WIN7,
))
DXGK_QUERYSEGMENTOUT2 = HEADER.add(TypeDef(
    "DXGK_QUERYSEGMENTOUT2", "struct",
    (Field("SegmentCount", "UINT"), Field("pSegmentDescriptor", "DXGK_SEGMENTDESCRIPTOR2*")),
    "d3dkmddi.h", tag="_DXGK_QUERYSEGMENTOUT2", guard=WIN7,
))
HEADER.add(Const("DXGK_SEGMENT_ID_INVALID", 0, "d3dkmddi.h", guard=WIN7, c_text="0"))
HEADER.add(Const("DXGK_SEGMENT_ID_SYSTEMMEMORY", 31, "d3dkmddi.h", guard=WIN7, c_text="31"))
HEADER.add(Const("DXGK_SEGMENT_SET_SYSTEMMEMORY", 0x80000000, "d3dkmddi.h", guard=WIN7, c_text="0x80000000"))

DXGK_SEGMENTDESCRIPTOR3 = HEADER.add(TypeDef(
    "DXGK_SEGMENTDESCRIPTOR3", "struct",
    (Field("Flags", "DXGK_SEGMENTFLAGS"),
     Field("BaseAddress", "PHYSICAL_ADDRESS"),
     Field("CpuTranslatedAddress", "PHYSICAL_ADDRESS"),
     Field("Size", "SIZE_T"),
     Field("NbOfBanks", "UINT"),
     Field("pBankRangeTable", "SIZE_T*"),
     Field("CommitLimit", "SIZE_T"),
     Field("SystemMemoryEndAddress", "SIZE_T"),
     Field("Reserved", "SIZE_T")),
    "d3dkmddi.h", tag="_DXGK_SEGMENTDESCRIPTOR3", guard=WIN8,
    doc=DDI + "ns-d3dkmddi-_dxgk_segmentdescriptor3",
))
DXGK_QUERYSEGMENTOUT3 = query_segment_out("DXGK_QUERYSEGMENTOUT3", "DXGK_SEGMENTDESCRIPTOR3*", guard=WIN8,
                                          doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentout3")

DXGK_CPUHOSTAPERTURE = HEADER.add(TypeDef(
    "DXGK_CPUHOSTAPERTURE", "struct",
    (Field("PhysicalAddress", "UINT64"), Field("SizeInPages", "UINT32")),
    "d3dkmddi.h", tag="_DXGK_CPUHOSTAPERTURE", guard=WDDM2_0,
    doc=DDI + "ns-d3dkmddi-_dxgk_cpuhostaperture",
))

CPU_ADDRESS_UNION = Record("union", (Field("CpuTranslatedAddress", "PHYSICAL_ADDRESS"),
                                     Field("CpuHostAperture", "DXGK_CPUHOSTAPERTURE")))

DXGK_SEGMENTDESCRIPTOR4 = HEADER.add(TypeDef(
    "DXGK_SEGMENTDESCRIPTOR4", "struct",
    (Field("Flags", "DXGK_SEGMENTFLAGS"),
     Field("BaseAddress", "PHYSICAL_ADDRESS"),
     Field("Size", "SIZE_T"),
     Field("CommitLimit", "SIZE_T"),
     Field("SystemMemoryEndAddress", "SIZE_T"),
     CPU_ADDRESS_UNION,
     Field("NumInvalidMemoryRanges", "UINT"),
     Field("VprRangeStartOffset", "SIZE_T"),
     Field("VprRangeSize", "SIZE_T"),
     Field("VprAlignment", "UINT"),
     Field("NumVprSupported", "UINT"),
     Field("VprReserveSize", "UINT"),
     If(WDDM2_2, (Field("NumUEFIFrameBufferRanges", "UINT"),))),
    "d3dkmddi.h", tag="_DXGK_SEGMENTDESCRIPTOR4", guard=AllOf((WIN8, WDDM2_0)),
    doc=DDI + "ns-d3dkmddi-_dxgk_segmentdescriptor4",
))

DXGK_QUERYSEGMENTIN4 = HEADER.add(TypeDef(
    "DXGK_QUERYSEGMENTIN4", "struct", (Field("PhysicalAdapterIndex", "UINT"),),
    "d3dkmddi.h", tag="_DXGK_QUERYSEGMENTIN4", guard=AllOf((WIN8, WDDM2_0)),
    doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentin4",
))
DXGK_QUERYSEGMENTOUT4 = query_segment_out("DXGK_QUERYSEGMENTOUT4", "BYTE*", guard=AllOf((WIN8, WDDM2_0)), stride=True,
                                          doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentout4")

# definitions.md §11: the DxgkDdiQueryAdapterInfo(DXGKQAITYPE_SEGMENTMEMORYSTATE) query, >= WDDM2_0, also named
# DXGK_SEGMENTMEMORYSTATE; the count is a union with NumUEFIFrameBufferRanges from WDDM2_2.  The elements
# pMemoryRanges points to (DXGK_MEMORYRANGE, "two UINT64s", members unnamed in definitions.md) are not
# mirrored: the C mirror declares the type incomplete, enough for the pointer.
HEADER.add(Verbatim("typedef struct _DXGK_MEMORYRANGE DXGK_MEMORYRANGE;\n", "d3dkmddi.h"))
DXGK_QUERYSEGMENTMEMORYSTATE = HEADER.add(TypeDef(
    "DXGK_QUERYSEGMENTMEMORYSTATE", "struct",
    (Field("DriverSegmentId", "WORD"),
     Field("PhysicalAdapterIndex", "WORD"),
     If(WDDM2_2,
        (Record("union", (Field("NumInvalidMemoryRanges", "UINT"), Field("NumUEFIFrameBufferRanges", "UINT"))),),
        (Field("NumInvalidMemoryRanges", "UINT"),)),
     Field("pMemoryRanges", "DXGK_MEMORYRANGE*")),
    "d3dkmddi.h", tag="_DXGK_QUERYSEGMENTMEMORYSTATE", guard=WDDM2_0, aliases=("DXGK_SEGMENTMEMORYSTATE",),
    doc=DDI + "ns-d3dkmddi-_dxgk_querysegmentmemorystate",
))

DXGK_SEGMENTTYPE = HEADER.add(EnumDef(
    "DXGK_SEGMENTTYPE", (("DXGK_SEGMENTTYPE_SYSMEM", 0), ("DXGK_SEGMENTTYPE_LOCAL", 1)),
    "d3dkmddi.h", tag="_DXGK_SEGMENTTYPE", guard=WDDM3_2,
))

_PAGE_SIZES = ("4KB", "8KB", "16KB", "32KB", "64KB", "128KB", "256KB", "512KB",
               "1MB", "2MB", "4MB", "8MB", "16MB", "32MB", "64MB", "128MB")
DXGK_PAGESIZE = HEADER.add(EnumDef(
    "DXGK_PAGESIZE", tuple((f"DXGK_PAGESIZE_{s}", i) for i, s in enumerate(_PAGE_SIZES)),
    "d3dkmddi.h", tag="_DXGK_PAGESIZE", guard=WDDM3_2,
))

DXGK_SEGMENTDESCRIPTOR5 = HEADER.add(TypeDef(
    "DXGK_SEGMENTDESCRIPTOR5", "struct",
    (Field("SegmentType", "DXGK_SEGMENTTYPE"),
     Field("Flags", "DXGK_SEGMENTFLAGS"),
     Field("BaseAddress", "PHYSICAL_ADDRESS"),
     Field("Size", "UINT64"),
     Field("SystemMemoryEndAddress", "SIZE_T"),
     CPU_ADDRESS_UNION,
     Field("VprRangeStartOffset", "SIZE_T"),
     Field("VprRangeSize", "SIZE_T"),
     Field("VprAlignment", "UINT32"),
     Field("NumInvalidMemoryRanges", "UINT32"),
     Field("NumVprSupported", "UINT32"),
     Field("VprReserveSize", "UINT32"),
     Field("NumUEFIFrameBufferRanges", "UINT32"),
     Field("SlabSize", "DXGK_PAGESIZE")),
    "d3dkmddi.h", tag="_DXGK_SEGMENTDESCRIPTOR5", guard=WDDM3_2,
))


def _index_and_padding(name, first):
    return HEADER.add(TypeDef(
        name, "struct",
        (Field(first, "UINT16"), Field("Padding", "UINT16"), Field("Reserved", "UINT32")),
        "d3dkmddi.h", tag="_" + name, guard=WDDM3_2,
    ))


DXGK_QUERYSEGMENTCOUNTIN = _index_and_padding("DXGK_QUERYSEGMENTCOUNTIN", "PhysicalAdapterIndex")
DXGK_QUERYSEGMENTCOUNTOUT = _index_and_padding("DXGK_QUERYSEGMENTCOUNTOUT", "SegmentCount")
DXGK_QUERYSEGMENTIN5 = _index_and_padding("DXGK_QUERYSEGMENTIN5", "PhysicalAdapterIndex")
DXGK_QUERYSEGMENTOUT5 = HEADER.add(TypeDef(
    "DXGK_QUERYSEGMENTOUT5", "struct",
    (Field("SegmentDescriptors", "DXGK_SEGMENTDESCRIPTOR5*"), Field("Reserved", "UINT32", count=4)),
    "d3dkmddi.h", tag="_DXGK_QUERYSEGMENTOUT5", guard=WDDM3_2,
))


# ---------------------------------------------------------------- what each pointer member points to
# (owner typedef, member) -> PointsTo, each with the sentences that say it: of the page copies in
# ../shared/docs, of MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md (not in ../shared), or of the
# kit's own comments (WDK 10.0.26100 d3dkmddi.h) where no page covers the struct.  Every other pointer or
# handle member is in OPAQUE with the reason it is not followed.
KIT = "d3dkmddi.h (WDK 10.0.26100)"
_ARRAY_SIZE = "The size of the array is the value that NbSegment specifies."
_BANK_TABLE = ("An array of values that indicates the ranges that delimit each bank in the segment.",
               "The array specifies the end addresses of the first bank through the NbOfBanksth bank (that is, the "
               "end offsets into the segment for each bank).",
               "The driver specifies this array only if it also sets the UseBanking bit-field flag in the Flags "
               "member.")
POINTS_TO = {
    ("DXGK_QUERYSEGMENTOUT", "pSegmentDescriptor"): PointsTo(
        "DXGK_SEGMENTDESCRIPTOR", "NbSegment",
        ("An array of DXGK_SEGMENTDESCRIPTOR structures that the driver populates with information about the "
         "segments it supports.", _ARRAY_SIZE), DXGK_QUERYSEGMENTOUT.doc),
    ("DXGK_QUERYSEGMENTOUT2", "pSegmentDescriptor"): PointsTo(
        "DXGK_SEGMENTDESCRIPTOR2", "SegmentCount",
        ("Number of segment described.", "Buffer describing the segment."), KIT,
        note="no page (reserved for system use): the kit's comments on SegmentCount and pSegmentDescriptor"),
    ("DXGK_QUERYSEGMENTOUT3", "pSegmentDescriptor"): PointsTo(
        "DXGK_SEGMENTDESCRIPTOR3", "NbSegment",
        ("An array of DXGK_SEGMENTDESCRIPTOR3 structures that the driver populates with information about the "
         "segments it supports.", _ARRAY_SIZE), DXGK_QUERYSEGMENTOUT3.doc),
    # DXGK_SEGMENTDESCRIPTOR4 exists wherever DXGK_QUERYSEGMENTOUT4 does (both need WIN8 and WDDM2_0); its
    # size drifted between kits without a version guard (definitions.md §10.5), hence the stride
    ("DXGK_QUERYSEGMENTOUT4", "pSegmentDescriptor"): PointsTo(
        "DXGK_SEGMENTDESCRIPTOR4", "NbSegment",
        ("Number of elements in the pSegmentDescriptor array.",
         "Pointer to the array of DXGK_SEGMENTDESCRIPTOR4 structures.",
         "The size of the array element is defined by SegmentDescriptorStride."),
        DXGK_QUERYSEGMENTOUT4.doc, stride="SegmentDescriptorStride"),
    ("DXGK_QUERYSEGMENTOUT5", "SegmentDescriptors"): PointsTo(
        "DXGK_SEGMENTDESCRIPTOR5", None, (), None,
        note="unknown: no page covers DXGK_QUERYSEGMENTOUT5 and its only other member is Reserved[4]; the "
             "count is not in the structure (the kit's DXGK_QUERYSEGMENTCOUNTOUT.SegmentCount, a separate query, "
             "is the likely bound, which no page confirms)"),
    ("DXGK_SEGMENTDESCRIPTOR", "pBankRangeTable"): PointsTo(
        "SIZE_T", "NbOfBanks", _BANK_TABLE, DXGK_SEGMENTDESCRIPTOR.doc, when="Flags.UseBanking"),
    ("DXGK_SEGMENTDESCRIPTOR3", "pBankRangeTable"): PointsTo(
        "SIZE_T", "NbOfBanks", _BANK_TABLE, DXGK_SEGMENTDESCRIPTOR3.doc, when="Flags.UseBanking"),
    ("DXGK_ALLOCATIONINFO", "pAllocationUsageHint"): PointsTo(
        "DXGK_ALLOCATIONUSAGEHINT", 1,
        ("A pointer to a DXGK_ALLOCATIONUSAGEHINT structure that the memory manager uses to determine how to use "
         "the allocation.",), DXGK_ALLOCATIONINFO.doc),
    ("DXGK_ALLOCATIONINFO", "pPrivateDriverData"): PointsTo(
        "BYTE", "PrivateDriverDataSize",
        ("The size, in bytes, of the block of private data in pPrivateDriverData.",), DXGK_ALLOCATIONINFO.doc),
    ("DXGKARG_CREATEALLOCATION", "pAllocationInfo"): PointsTo(
        "DXGK_ALLOCATIONINFO", "NumAllocations",
        ("The number of elements in the array that pAllocationInfo specifies, which represents the number of "
         "allocations to create.",
         "An array of DXGK_ALLOCATIONINFO structures that describe the allocations to create."),
        DXGKARG_CREATEALLOCATION.doc),
    ("DXGKARG_CREATEALLOCATION", "pPrivateDriverData"): PointsTo(
        "BYTE", "PrivateDriverDataSize",
        ("The size, in bytes, of the private data that pPrivateDriverData points to.",),
        DXGKARG_CREATEALLOCATION.doc),
}

# (owner typedef, member) -> why a pointer-sized handle or pointer member is not followed.
OPAQUE = {
    ("DXGK_ALLOCATIONINFO", "hAllocation"):
        "a handle the driver chose for its own tracking structure, not memory this mirror describes",
    ("DXGK_ALLOCATIONLIST", "hDeviceSpecificAllocation"):
        "a handle the driver returned from DxgkDdiOpenAllocation, not memory this mirror describes",
    ("DXGKARG_CREATEALLOCATION", "hResource"):
        "a handle to the driver's resource, not memory this mirror describes",
    ("DXGK_SEGMENTDESCRIPTOR2", "pMdl"):
        "a PMDL: points to a memory descriptor list, a structure this mirror does not describe",
    ("DXGK_QUERYSEGMENTMEMORYSTATE", "pMemoryRanges"):
        "points to an array of DXGK_MEMORYRANGE (NumInvalidMemoryRanges of them, says its page), a structure this "
        "mirror does not describe",
}
