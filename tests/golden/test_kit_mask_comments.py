"""The kit header's own mask comments (``UINT Bank1 : 7;    // 0x00007F00``), typed in by hand
from d3dkmddi.h / d3dukmdt.h, with the guard each line sits under.  One comment is wrong
in the kit (DXGK_ALLOCATIONLIST.SegmentId); it is kept out of the table and has its own test."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, target_id
from tests.golden.tables import ALWAYS, Cond

W8, V20, V21, V29 = Cond(since="WIN8"), Cond(since="WDDM2_0"), Cond(since="WDDM2_1"), Cond(since="WDDM2_9")
W7 = Cond(since="WIN7")
V30, V32 = Cond(since="WDDM3_0"), Cond(since="WDDM3_2")

# (type, leaf path, mask in the comment, guard around the line and its type)
KIT_MASK_COMMENTS = (
    # d3dukmdt.h D3DDDI_SEGMENTPREFERENCE
    ("D3DDDI_SEGMENTPREFERENCE", "SegmentId0", 0x0000001F, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Direction0", 0x00000020, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "SegmentId1", 0x000007C0, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Direction1", 0x00000800, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "SegmentId2", 0x0001F000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Direction2", 0x00020000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "SegmentId3", 0x007C0000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Direction3", 0x00800000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "SegmentId4", 0x1F000000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Direction4", 0x20000000, ALWAYS),
    ("D3DDDI_SEGMENTPREFERENCE", "Reserved", 0xC0000000, ALWAYS),
    # d3dkmddi.h DXGK_SEGMENTBANKPREFERENCE
    ("DXGK_SEGMENTBANKPREFERENCE", "Bank0", 0x0000007F, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Direction0", 0x00000080, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Bank1", 0x00007F00, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Direction1", 0x00008000, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Bank2", 0x007F0000, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Direction2", 0x00800000, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Bank3", 0x7F000000, ALWAYS),
    ("DXGK_SEGMENTBANKPREFERENCE", "Direction3", 0x80000000, ALWAYS),
    # DXGK_ALLOCATIONLIST (SegmentId's comment is the erratum, see below)
    ("DXGK_ALLOCATIONLIST", "WriteOperation", 0x00000001, ALWAYS),
    ("DXGK_ALLOCATIONLIST", "Reserved", 0xFFFFFFC0, ALWAYS),
    # DXGK_SEGMENTFLAGS
    ("DXGK_SEGMENTFLAGS", "Aperture", 0x00000001, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "Agp", 0x00000002, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "CpuVisible", 0x00000004, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "UseBanking", 0x00000008, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "CacheCoherent", 0x00000010, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "PitchAlignment", 0x00000020, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "PopulatedFromSystemMemory", 0x00000040, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "PreservedDuringStandby", 0x00000080, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "PreservedDuringHibernate", 0x00000100, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "PartiallyPreservedDuringHibernate", 0x00000200, ALWAYS),
    ("DXGK_SEGMENTFLAGS", "DirectFlip", 0x00000400, W8),
    ("DXGK_SEGMENTFLAGS", "Use64KBPages", 0x00000800, V20),
    ("DXGK_SEGMENTFLAGS", "ReservedSysMem", 0x00001000, V20),
    ("DXGK_SEGMENTFLAGS", "SupportsCpuHostAperture", 0x00002000, V20),
    ("DXGK_SEGMENTFLAGS", "SupportsCachedCpuHostAperture", 0x00004000, V20),
    ("DXGK_SEGMENTFLAGS", "ApplicationTarget", 0x00008000, V20),
    ("DXGK_SEGMENTFLAGS", "VprSupported", 0x00010000, V20),
    ("DXGK_SEGMENTFLAGS", "VprPreservedDuringStandby", 0x00020000, V20),
    ("DXGK_SEGMENTFLAGS", "EncryptedPagingSupported", 0x00040000, V20),
    ("DXGK_SEGMENTFLAGS", "LocalBudgetGroup", 0x00080000, V20),
    ("DXGK_SEGMENTFLAGS", "NonLocalBudgetGroup", 0x00100000, V20),
    ("DXGK_SEGMENTFLAGS", "PopulatedByReservedDDRByFirmware", 0x00200000, V29),
    ("DXGK_SEGMENTFLAGS", "Reserved", 0xFFC00000, V29),
    ("DXGK_SEGMENTFLAGS", "Reserved", 0xFFE00000, Cond(since="WDDM2_0", until="WDDM2_9")),
    ("DXGK_SEGMENTFLAGS", "Reserved", 0xFFFFF800, Cond(since="WIN8", until="WDDM2_0")),
    ("DXGK_SEGMENTFLAGS", "Reserved", 0xFFFFFC00, Cond(until="WIN8")),
    # DXGK_SEGMENTFLAGS2 (inside #if >= WIN7)
    ("DXGK_SEGMENTFLAGS2", "Aperture", 0x00000001, W7),
    ("DXGK_SEGMENTFLAGS2", "PopulatedFromSystemMemory", 0x00000002, W7),
    ("DXGK_SEGMENTFLAGS2", "SystemMemoryReservedByBios", 0x00000004, W7),
    ("DXGK_SEGMENTFLAGS2", "CpuVisible", 0x00000008, W7),
    ("DXGK_SEGMENTFLAGS2", "Reserved", 0xFFFFFFF0, W7),
    # DXGK_ALLOCATIONINFOFLAGS
    ("DXGK_ALLOCATIONINFOFLAGS", "CpuVisible", 0x00000001, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "PermanentSysMem", 0x00000002, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "Cached", 0x00000004, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "Protected", 0x00000008, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "ExistingSysMem", 0x00000010, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "ExistingKernelSysMem", 0x00000020, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "FromEndOfSegment", 0x00000040, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "Swizzled", 0x00000080, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "Overlay", 0x00000100, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "Capture", 0x00000200, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "UseAlternateVA", 0x00000400, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "SynchronousPaging", 0x00000800, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "LinkMirrored", 0x00001000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "LinkInstanced", 0x00002000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "HistoryBuffer", 0x00004000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS", "AccessedPhysically", 0x00008000, V20),
    ("DXGK_ALLOCATIONINFOFLAGS", "ExplicitResidencyNotification", 0x00010000, V20),  # comment on the next line
    ("DXGK_ALLOCATIONINFOFLAGS", "HardwareProtected", 0x00020000, V20),
    ("DXGK_ALLOCATIONINFOFLAGS", "CpuVisibleOnDemand", 0x00040000, V20),
    ("DXGK_ALLOCATIONINFOFLAGS", "Reserved", 0x00078000, Cond(until="WDDM2_0")),
    # DXGK_ALLOCATIONINFOFLAGS_WDDM2_0
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "CpuVisible", 0x00000001, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "PermanentSysMem", 0x00000002, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Cached", 0x00000004, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Protected", 0x00000008, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "ExistingSysMem", 0x00000010, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "ExistingKernelSysMem", 0x00000020, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "FromEndOfSegment", 0x00000040, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "DisableLargePageMapping", 0x00000080, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Overlay", 0x00000100, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Capture", 0x00000200, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "CreateInVpr", 0x00000400, V21),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Reserved00", 0x00000400, Cond(until="WDDM2_1")),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "DXGK_ALLOC_RESERVED17", 0x00000800, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Reserved02", 0x00001000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "MapApertureCpuVisible", 0x00002000, V29),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Reserved03", 0x00002000, Cond(until="WDDM2_9")),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "HistoryBuffer", 0x00004000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "AccessedPhysically", 0x00008000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "ExplicitResidencyNotification", 0x00010000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "HardwareProtected", 0x00020000, ALWAYS),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "CpuVisibleOnDemand", 0x00040000, ALWAYS),
    # DXGK_ALLOCATIONINFOFLAGS2 (whole type inside #if >= WDDM3_0)
    ("DXGK_ALLOCATIONINFOFLAGS2", "ShareBackingStoreWithKmd", 0x00000001, V30),
    ("DXGK_ALLOCATIONINFOFLAGS2", "NoImplicitSynchronization", 0x00000002, V32),
    ("DXGK_ALLOCATIONINFOFLAGS2", "DisablePartialResidency", 0x00000004, V32),
    ("DXGK_ALLOCATIONINFOFLAGS2", "RestrictedToSingleSegment", 0x00000008, V32),
    ("DXGK_ALLOCATIONINFOFLAGS2", "NotifyEviction", 0x00000010, V32),
    ("DXGK_ALLOCATIONINFOFLAGS2", "NotifyIoMmuUnmap", 0x00000020, V32),
    # DXGK_ALLOCATIONUSAGEINFO1.Flags
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.PrivateFormat", 0x00000001, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Swizzled", 0x00000002, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.MipMap", 0x00000004, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Cube", 0x00000008, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Volume", 0x00000010, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Vertex", 0x00000020, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Index", 0x00000040, ALWAYS),
    ("DXGK_ALLOCATIONUSAGEINFO1", "Flags.Reserved", 0xFFFFFF80, ALWAYS),
    # DXGK_CREATEALLOCATIONFLAGS (unguarded; the same comments in the Vista-era kit)
    ("DXGK_CREATEALLOCATIONFLAGS", "Resource", 0x00000001, ALWAYS),
    ("DXGK_CREATEALLOCATIONFLAGS", "Reserved", 0xFFFFFFFE, ALWAYS),
    # the same word as DXGKARG_CREATEALLOCATION.Flags (x64 offset 32, x86 offset 20)
    ("DXGKARG_CREATEALLOCATION", "Flags.Resource", 0x00000001, ALWAYS),
    ("DXGKARG_CREATEALLOCATION", "Flags.Reserved", 0xFFFFFFFE, ALWAYS),
)

# DXGK_ALLOCATIONLIST: "UINT SegmentId : 5;    // 0x0000002E" (definitions.md §12, §18.8)
ALLOCATIONLIST_SEGMENTID_COMMENT = 0x0000002E
ALLOCATIONLIST_SEGMENTID_MASK = 0x0000003E


def _write_all_ones(cls, path):
    obj = cls()
    head, _, last = path.rpartition(".")
    owner = getattr(obj, head) if head else obj
    leaf = next(l for l in kmd.leaves(cls) if l.path == path)
    setattr(owner, last, leaf.max_value)
    return obj, leaf


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=[target_id(a, v) for a, v in ALL_TARGETS])
def test_kit_mask_comments(abi, version):
    t = kmd.target(abi, version)
    checked = 0
    for type_name, path, mask, cond in KIT_MASK_COMMENTS:
        if not cond.holds(abi, version):
            continue
        cls = getattr(t, type_name)
        obj, leaf = _write_all_ones(cls, path)
        assert leaf.mask == mask, (type_name, path)
        # the comment's mask, little-endian, is exactly what the object holds
        expected = bytearray(len(bytes(obj)))
        expected[leaf.offset:leaf.offset + 4] = mask.to_bytes(4, "little")
        assert bytes(obj) == bytes(expected), (type_name, path)
        checked += 1
    assert checked >= 70


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_kit_comment_allocationlist_segmentid_0x0000002E_is_an_erratum__mask_is_0x3E(abi):
    # 0x2E = 0b101110 has a hole at bit 4; a 5-bit field at bit 1 covers 0x3E.
    assert bin(ALLOCATIONLIST_SEGMENTID_COMMENT).count("1") == 4
    for version in kmd.InterfaceVersion:
        cls = kmd.target(abi, version).DXGK_ALLOCATIONLIST
        obj, leaf = _write_all_ones(cls, "SegmentId")
        assert (leaf.bit_offset, leaf.bit_width) == (1, 5)
        assert leaf.mask == ALLOCATIONLIST_SEGMENTID_MASK != ALLOCATIONLIST_SEGMENTID_COMMENT
        assert bytes(obj)[leaf.offset] == 0x3E
        assert leaf.offset == (4 if abi == "x86" else 8)
