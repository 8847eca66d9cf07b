"""The bit tables of definitions.md §2-§4, §6-§8, §10.2 (flag words) per interface
version, against leaves() and against the bytes an instance holds."""
from __future__ import annotations

import ctypes

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, read_path, target_id
from tests.golden.tables import BIT_TABLES, FLAG_TYPE_EXISTS, VERSIONS, golden_leaves

FLAG_CASES = [(abi, v, name) for abi, v in ALL_TARGETS for name in FLAG_TYPE_EXISTS
              if FLAG_TYPE_EXISTS[name].holds(abi, v)]
FLAG_IDS = [f"{target_id(abi, v)}-{name}" for abi, v, name in FLAG_CASES]


@pytest.mark.parametrize("table", sorted(BIT_TABLES))
def test_typed_masks_agree_with_typed_bit_and_width(table):
    # Guards against a typo in the golden table itself.
    for field, bit, width, mask, _cond in BIT_TABLES[table]:
        assert mask == ((1 << width) - 1) << bit, (table, field)


@pytest.mark.parametrize("table", sorted(BIT_TABLES))
@pytest.mark.parametrize("version", list(VERSIONS))
def test_typed_bitfields_tile_32_bits_at_every_version(table, version):
    # §1: every flag word's widths add up to exactly 32, with no overlap, for every version.
    for abi in ("x86", "x64"):
        rows = [r for r in BIT_TABLES[table] if r[0] != "Value" and r[4].holds(abi, VERSIONS[version])]
        covered = 0
        for field, _bit, _width, mask, _cond in rows:
            assert covered & mask == 0, (table, version, field)
            covered |= mask
        assert covered == 0xFFFFFFFF, (table, version)


@pytest.mark.parametrize("abi,version,name", FLAG_CASES, ids=FLAG_IDS)
def test_leaves_match_bit_table(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    got = [(l.path, l.offset, l.bit_offset, l.bit_width, l.mask, l.c_type) for l in kmd.leaves(cls)]
    want = [(g.path, 0, g.bit, g.width, g.mask, "UINT") for g in golden_leaves(name, abi, version)]
    assert got == want
    assert (ctypes.sizeof(cls), ctypes.alignment(cls)) == (4, 4)


@pytest.mark.parametrize("abi,version,name", FLAG_CASES, ids=FLAG_IDS)
def test_setting_each_field_writes_its_typed_mask(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    for g in golden_leaves(name, abi, version):
        obj = cls()
        setattr(obj, g.path, g.mask >> g.bit)
        assert bytes(obj) == g.mask.to_bytes(4, "little"), g.path
        assert obj.Value == g.mask, g.path
        # and back: a word with exactly these bits reads as all ones in this field only
        back = cls.from_buffer_copy(g.mask.to_bytes(4, "little"))
        for other in golden_leaves(name, abi, version):
            expected = (other.mask & g.mask) >> other.bit
            assert read_path(back, other.path) == expected, (g.path, other.path)


# ---- the version-dependent rows spelled out per version (definitions.md §4, §6, §7, §8)

SEGMENTFLAGS_RESERVED = {  # version -> (bit, width) of DXGK_SEGMENTFLAGS.Reserved
    "VISTA": (10, 22), "VISTA_SP1": (10, 22), "WIN7": (10, 22),
    "WIN8": (11, 21), "WDDM1_3": (11, 21), "WDDM1_3_PATH_INDEPENDENT_ROTATION": (11, 21),
    "WDDM2_0": (21, 11), "WDDM2_1": (21, 11), "WDDM2_1_5": (21, 11), "WDDM2_1_6": (21, 11),
    "WDDM2_2": (21, 11), "WDDM2_3": (21, 11), "WDDM2_4": (21, 11), "WDDM2_5": (21, 11),
    "WDDM2_6": (21, 11), "WDDM2_7": (21, 11), "WDDM2_8": (21, 11),
    "WDDM2_9": (22, 10), "WDDM3_0": (22, 10), "WDDM3_1": (22, 10), "WDDM3_2": (22, 10),
}


@pytest.mark.parametrize("version", list(VERSIONS))  # every version: a new one without its row fails
def test_segmentflags_reserved_is_22_21_11_or_10_bits(version):
    bit, width = SEGMENTFLAGS_RESERVED[version]
    for abi in kmd.ABIS:
        leaf = next(l for l in kmd.leaves(kmd.target(abi, version).DXGK_SEGMENTFLAGS) if l.path == "Reserved")
        assert (leaf.bit_offset, leaf.bit_width) == (bit, width)
        assert leaf.mask == (0xFFFFFFFF >> bit) << bit


ALLOCFLAGS_WDDM2_0_BIT10 = {  # CreateInVpr from WDDM2_1, else Reserved00
    "VISTA": "Reserved00", "VISTA_SP1": "Reserved00", "WIN7": "Reserved00", "WIN8": "Reserved00",
    "WDDM1_3": "Reserved00", "WDDM1_3_PATH_INDEPENDENT_ROTATION": "Reserved00", "WDDM2_0": "Reserved00",
    "WDDM2_1": "CreateInVpr", "WDDM2_1_5": "CreateInVpr", "WDDM2_1_6": "CreateInVpr", "WDDM2_2": "CreateInVpr",
    "WDDM2_3": "CreateInVpr", "WDDM2_4": "CreateInVpr", "WDDM2_5": "CreateInVpr", "WDDM2_6": "CreateInVpr",
    "WDDM2_7": "CreateInVpr", "WDDM2_8": "CreateInVpr", "WDDM2_9": "CreateInVpr", "WDDM3_0": "CreateInVpr",
    "WDDM3_1": "CreateInVpr", "WDDM3_2": "CreateInVpr",
}
ALLOCFLAGS_WDDM2_0_BIT13 = {  # MapApertureCpuVisible from WDDM2_9, else Reserved03
    "VISTA": "Reserved03", "VISTA_SP1": "Reserved03", "WIN7": "Reserved03", "WIN8": "Reserved03",
    "WDDM1_3": "Reserved03", "WDDM1_3_PATH_INDEPENDENT_ROTATION": "Reserved03", "WDDM2_0": "Reserved03",
    "WDDM2_1": "Reserved03", "WDDM2_1_5": "Reserved03", "WDDM2_1_6": "Reserved03", "WDDM2_2": "Reserved03",
    "WDDM2_3": "Reserved03", "WDDM2_4": "Reserved03", "WDDM2_5": "Reserved03", "WDDM2_6": "Reserved03",
    "WDDM2_7": "Reserved03", "WDDM2_8": "Reserved03", "WDDM2_9": "MapApertureCpuVisible",
    "WDDM3_0": "MapApertureCpuVisible", "WDDM3_1": "MapApertureCpuVisible", "WDDM3_2": "MapApertureCpuVisible",
}


@pytest.mark.parametrize("version", list(VERSIONS))
def test_allocationinfoflags_wddm2_0_bits_10_and_13_per_version(version):
    for abi in kmd.ABIS:
        by_bit = {}
        for leaf in kmd.leaves(kmd.target(abi, version).DXGK_ALLOCATIONINFOFLAGS_WDDM2_0):
            if leaf.is_bitfield:
                by_bit.setdefault(leaf.bit_offset, []).append((leaf.path, leaf.bit_width))
        assert by_bit[10] == [(ALLOCFLAGS_WDDM2_0_BIT10[version], 1)]
        assert by_bit[13] == [(ALLOCFLAGS_WDDM2_0_BIT13[version], 1)]


@pytest.mark.parametrize("version", list(VERSIONS))
def test_allocationinfoflags_bits_15_to_18_reserved4_before_wddm2_0(version):
    before = VERSIONS[version] < 0x5023
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_ALLOCATIONINFOFLAGS
        fields = {l.path: (l.bit_offset, l.bit_width) for l in kmd.leaves(cls)}
        if before:
            assert fields["Reserved"] == (15, 4)
            assert "AccessedPhysically" not in fields and "CpuVisibleOnDemand" not in fields
        else:
            assert "Reserved" not in fields
            assert fields["AccessedPhysically"] == (15, 1)
            assert fields["ExplicitResidencyNotification"] == (16, 1)
            assert fields["HardwareProtected"] == (17, 1)
            assert fields["CpuVisibleOnDemand"] == (18, 1)


FLAGS2_RESERVED = {"WDDM3_0": (1, 31), "WDDM3_1": (1, 31), "WDDM3_2": (6, 26)}


@pytest.mark.parametrize("version", list(VERSIONS))
def test_allocationinfoflags2_reserved_31_then_26_bits(version):
    for abi in kmd.ABIS:
        cls = getattr(kmd.target(abi, version), "DXGK_ALLOCATIONINFOFLAGS2", None)
        if version not in FLAGS2_RESERVED:
            assert cls is None
            continue
        fields = {l.path: (l.bit_offset, l.bit_width) for l in kmd.leaves(cls)}
        assert fields["ShareBackingStoreWithKmd"] == (0, 1)
        assert fields["Reserved"] == FLAGS2_RESERVED[version]
        assert ("NotifyIoMmuUnmap" in fields) == (VERSIONS[version] >= VERSIONS["WDDM3_2"])  # new in WDDM3_2
