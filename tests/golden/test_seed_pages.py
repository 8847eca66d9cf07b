"""What the Microsoft doc pages in ../shared/seeds/ print, typed in by hand, checked against
leaves() and against the bytes of an instance.  Where a page and the kit disagree, the
test is named after the disagreement and asserts the kit's value."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, read_path, target_id

TARGET_IDS = [target_id(abi, v) for abi, v in ALL_TARGETS]


def _leaf(cls, path):
    return next(l for l in kmd.leaves(cls) if l.path == path)


def _bits_from_1(first: int, last: int) -> int:
    """The mask of a page's "bits <first> through <last>", which the pages count from 1."""
    return ((1 << (last - first + 1)) - 1) << (first - 1)


# ---- seeds 000 / 001: DXGK_SEGMENTBANKPREFERENCE ("bits 9 through 15 ... (0x00007F00)")
# (field, first bit counted from 1, last bit counted from 1, printed mask)
BANK_PAGE = (
    ("Bank0", 1, 7, 0x0000007F),  # "the first 7 bits"
    ("Direction0", 8, 8, 0x00000080),  # "the eighth bit"
    ("Bank1", 9, 15, 0x00007F00),
    ("Direction1", 16, 16, 0x00008000),  # "the sixteenth bit"
    ("Bank2", 17, 23, 0x007F0000),
    ("Direction2", 24, 24, 0x00800000),  # "the twenty-fourth bit"
    ("Bank3", 25, 31, 0x7F000000),
    ("Direction3", 32, 32, 0x80000000),  # "the thirty-secondbit"
)


def test_bankpreference_page_masks_agree_with_its_bit_ranges():
    for field, first, last, mask in BANK_PAGE:
        assert _bits_from_1(first, last) == mask, field


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_bankpreference_page_masks(abi, version):
    cls = kmd.target(abi, version).DXGK_SEGMENTBANKPREFERENCE
    for field, _first, _last, mask in BANK_PAGE:
        leaf = _leaf(cls, field)
        assert (leaf.offset, leaf.mask) == (0, mask), field
        obj = cls()
        setattr(obj, field, mask >> leaf.bit_offset)
        assert bytes(obj) == mask.to_bytes(4, "little"), field
        assert obj.Value == mask


def test_bankpreference_page_valid_bank_ids_1_to_127():
    # "Valid values are from 1 to 127" (0: no preference): 7 bits, 127 fits, 128 does not.
    pref = kmd.DXGK_SEGMENTBANKPREFERENCE()
    for field in ("Bank0", "Bank1", "Bank2", "Bank3"):
        setattr(pref, field, 127)
        assert getattr(pref, field) == 127
        with pytest.raises(kmd.InvalidFieldValue):
            setattr(pref, field, 128)
    assert pref.Value == 0x7F7F7F7F


# ---- seed 002: D3DDDI_SEGMENTPREFERENCE, bits counted from 1, no masks printed
SEGMENTPREFERENCE_PAGE = (
    ("SegmentId0", 1, 5),  # "the first 5 bits"
    ("Direction0", 6, 6),  # "the sixth bit"
    ("SegmentId1", 7, 11),  # "bits 7 through 11"
    ("Direction1", 12, 12),  # "the 12th bit"
    ("SegmentId2", 13, 17),
    ("Direction2", 18, 18),
    ("SegmentId3", 19, 23),
    ("Direction3", 24, 24),
    ("SegmentId4", 25, 29),
    ("Direction4", 30, 30),
    ("Reserved", 31, 32),  # "Reserved (bits 31-32)"
)


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_docs_segmentpreference_bits_counted_from_1(abi, version):
    # The page numbers bits from 1; the kit's masks (0x000007C0 for SegmentId1) count from 0.
    # Read as 0-based, "bits 7 through 11" would be 0x00000F80, which is not the layout.
    t = kmd.target(abi, version)
    for cls in (t.D3DDDI_SEGMENTPREFERENCE, t.DXGK_SEGMENTPREFERENCE):
        for field, first, last in SEGMENTPREFERENCE_PAGE:
            leaf = _leaf(cls, field)
            assert (leaf.bit_offset, leaf.bit_width) == (first - 1, last - first + 1), field
            assert leaf.mask == _bits_from_1(first, last)
            assert leaf.mask != ((1 << (last - first + 1)) - 1) << first  # the 0-based misreading
            obj = cls()
            setattr(obj, field, leaf.max_value)
            assert bytes(obj) == _bits_from_1(first, last).to_bytes(4, "little"), field
    assert _leaf(t.D3DDDI_SEGMENTPREFERENCE, "SegmentId1").mask == 0x000007C0


def test_segmentpreference_page_valid_ids_0_to_31():
    pref = kmd.D3DDDI_SEGMENTPREFERENCE()
    for i in range(5):
        setattr(pref, f"SegmentId{i}", 31)
        with pytest.raises(kmd.InvalidFieldValue):
            setattr(pref, f"SegmentId{i}", 32)
    assert pref.Value == 0x1F7DF7DF


# ---- seed 004: DXGK_SEGMENTFLAGS (2017 page): "equivalent to setting the eleventh bit ... (0x00000400)"
# (field, n-th bit counted from 1, printed mask, first version the kit has it)
SEGMENTFLAGS_PAGE = (
    ("Aperture", 1, 0x00000001, "VISTA"),
    ("Agp", 2, 0x00000002, "VISTA"),
    ("CpuVisible", 3, 0x00000004, "VISTA"),
    ("UseBanking", 4, 0x00000008, "VISTA"),
    ("CacheCoherent", 5, 0x00000010, "VISTA"),
    ("PitchAlignment", 6, 0x00000020, "VISTA"),
    ("PopulatedFromSystemMemory", 7, 0x00000040, "VISTA"),
    ("PreservedDuringStandby", 8, 0x00000080, "VISTA"),  # page: "Supported starting with Windows 8"
    ("PreservedDuringHibernate", 9, 0x00000100, "VISTA"),  # page: Windows 8
    ("PartiallyPreservedDuringHibernate", 10, 0x00000200, "VISTA"),  # page: Windows 8
    ("DirectFlip", 11, 0x00000400, "WIN8"),  # page: Windows 8; kit: #if >= WIN8
)
# "the remaining 21 bits (0xFFFFF800)" (#else of WDDM2_0), "the remaining 22 bits (0xFFFFFC00)" (#else of WIN8)
SEGMENTFLAGS_PAGE_RESERVED = {
    "VISTA": 0xFFFFFC00, "VISTA_SP1": 0xFFFFFC00, "WIN7": 0xFFFFFC00,
    "WIN8": 0xFFFFF800, "WDDM1_3": 0xFFFFF800, "WDDM1_3_PATH_INDEPENDENT_ROTATION": 0xFFFFF800,
}


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_segmentflags_page_masks(abi, version):
    cls = kmd.target(abi, version).DXGK_SEGMENTFLAGS
    for field, nth, mask, since in SEGMENTFLAGS_PAGE:
        assert mask == 1 << (nth - 1)
        if version < kmd.InterfaceVersion[since]:
            assert getattr(cls(), field, None) is None
            continue
        leaf = _leaf(cls, field)
        assert (leaf.offset, leaf.mask) == (0, mask), field
        obj = cls()
        setattr(obj, field, 1)
        assert bytes(obj) == mask.to_bytes(4, "little")
    if version.name in SEGMENTFLAGS_PAGE_RESERVED:
        mask = SEGMENTFLAGS_PAGE_RESERVED[version.name]
        leaf = _leaf(cls, "Reserved")
        assert leaf.mask == mask
        obj = cls()
        obj.Reserved = mask >> leaf.bit_offset
        assert bytes(obj) == mask.to_bytes(4, "little")


def test_segmentflags_page_issue_example():
    # The issue: x86 WDDM2_0, bytes 85 04 00 00 -> Aperture 1, UseBanking 0, DirectFlip 1, Value 0x485.
    f = kmd.target("x86", kmd.DXGKDDI_INTERFACE_VERSION_WDDM2_0).DXGK_SEGMENTFLAGS.from_buffer_copy(
        bytes.fromhex("85040000"))
    assert (f.Aperture, f.UseBanking, f.DirectFlip, f.Value) == (1, 0, 1, 0x485)
    assert (f.CpuVisible, f.PreservedDuringStandby) == (1, 1)  # 0x4 and 0x80 per the page


@pytest.mark.parametrize("version", [v for v in kmd.InterfaceVersion if v >= 0x5023], ids=lambda v: v.name)
def test_docs2018_segmentflags_reserved16_prerelease(version):
    # The 2017/2018 page's WDDM2_0 branch ends "ApplicationTarget : 1; Reserved : 16" (bits 16-31,
    # 0xFFFF0000): pre-release headers.  Every shipped kit puts VprSupported..NonLocalBudgetGroup
    # at bits 16-20 under the same WDDM2_0 guard, then Reserved:11 (or :10 from WDDM2_9).
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_SEGMENTFLAGS
        fields = {l.path: l for l in kmd.leaves(cls)}
        assert fields["ApplicationTarget"].mask == 0x00008000
        assert fields["VprSupported"].mask == 0x00010000
        assert fields["NonLocalBudgetGroup"].mask == 0x00100000
        assert fields["Reserved"].mask != 0xFFFF0000
        assert fields["Reserved"].bit_width in (11, 10)


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_docs_segmentflags_preserved_bits_win8__kit_unguarded(abi):
    # The page says bits 7-9 are "Supported starting with Windows 8"; the kit names them with
    # no guard, so they exist at VISTA too (only DirectFlip waits for WIN8).
    for version in ("VISTA", "VISTA_SP1", "WIN7"):
        cls = kmd.target(abi, version).DXGK_SEGMENTFLAGS
        obj = cls()
        obj.PreservedDuringStandby = 1
        obj.PreservedDuringHibernate = 1
        obj.PartiallyPreservedDuringHibernate = 1
        assert obj.Value == 0x00000380
        with pytest.raises(AttributeError, match="WIN8"):
            obj.DirectFlip = 1


# ---- seed 003: DXGK_ALLOCATIONINFO (2018 page)
ALLOCATIONINFO_PAGE_FIELDS = (
    "pPrivateDriverData", "PrivateDriverDataSize", "Alignment", "Size", "PitchAlignedSize", "HintedBank",
    "PreferredSegment", "SupportedReadSegmentSet", "SupportedWriteSegmentSet", "EvictionSegmentSet",
    "MaximumRenamingListLength", "PhysicalAdapterIndex", "hAllocation", "Flags", "FlagsWddm2",
    "pAllocationUsageHint", "AllocationPriority",
)


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_allocationinfo_page_fields_exist_at_every_target(abi, version):
    obj = kmd.target(abi, version).DXGK_ALLOCATIONINFO()
    for field in ALLOCATIONINFO_PAGE_FIELDS:
        read_path(obj, field)


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_docs_physicaladapterindex_and_flagswddm2_wddm2__kit_unguarded(abi):
    # The page: PhysicalAdapterIndex and FlagsWddm2 "Support for this member started with
    # Windows 10 and the WDDM v2" (and describes FlagsWddm2 as "The index of the physical
    # adapter").  The kit declares both unions with no guard: they exist at VISTA, where
    # PhysicalAdapterIndex shares MaximumRenamingListLength's UINT and FlagsWddm2 is the
    # DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 view of the Flags word.
    cls = kmd.target(abi, "VISTA").DXGK_ALLOCATIONINFO
    leaves = {l.path: l for l in kmd.leaves(cls)}
    assert leaves["PhysicalAdapterIndex"].offset == leaves["MaximumRenamingListLength"].offset
    assert leaves["FlagsWddm2.Value"].offset == leaves["Flags.Value"].offset
    info = cls()
    info.FlagsWddm2.DisableLargePageMapping = 1
    assert info.Flags.Swizzled == 1
    info.PhysicalAdapterIndex = 3
    assert info.MaximumRenamingListLength == 3
