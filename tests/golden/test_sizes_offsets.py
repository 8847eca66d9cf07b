"""Sizes, alignments and every leaf offset per abi and interface version, from the
hand-typed tables of definitions.md §5, §9-§12, §16 (arm64 takes the x64 values)."""
from __future__ import annotations

import ctypes

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, class_layout, target_id, write_path
from tests.golden.tables import ALL_TYPES, golden_leaves, golden_size, type_exists

ALL_CASES = [(abi, v, name) for abi, v in ALL_TARGETS for name in ALL_TYPES if type_exists(name, abi, v)]


def _golden(abi, version, name) -> tuple:
    return (golden_size(name, abi, version), tuple((g.path, g.offset, g.bit, g.width, g.mask, g.c_type, g.signed)
                                                   for g in golden_leaves(name, abi, version)))


# the golden data's distinct layouts: each is checked once, on its first target; test_golden_groups
# holds every other target's class to that target's, so no target goes unchecked
GROUPS: dict = {}
for _case in ALL_CASES:
    GROUPS.setdefault((_case[2], _golden(*_case)), []).append(_case)
CASES = [members[0] for members in GROUPS.values()]
IDS = [f"{target_id(abi, v)}-{name}" for abi, v, name in CASES]


def test_golden_groups():
    assert len(ALL_CASES) == sum(map(len, GROUPS.values())) and len(CASES) < len(ALL_CASES)
    for (name, _golden_layout), members in GROUPS.items():
        abi, v, _name = members[0]
        want = class_layout(getattr(kmd.target(abi, v), name))
        for abi, v, _name in members[1:]:
            assert class_layout(getattr(kmd.target(abi, v), name)) == want, (name, target_id(abi, v))


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=[target_id(a, v) for a, v in ALL_TARGETS])
def test_which_types_exist(abi, version):
    t = kmd.target(abi, version)
    for name in ALL_TYPES:
        assert (getattr(t, name, None) is not None) == type_exists(name, abi, version), name


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_size_and_alignment(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    assert (ctypes.sizeof(cls), ctypes.alignment(cls)) == golden_size(name, abi, version)


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_every_leaf(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    got = [(l.path, l.offset, l.bit_offset, l.bit_width, l.mask, l.c_type, l.signed) for l in kmd.leaves(cls)]
    want = [(g.path, g.offset, g.bit, g.width, g.mask, g.c_type, g.signed)
            for g in golden_leaves(name, abi, version)]
    assert got == want


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_every_whole_leaf_lands_at_its_typed_offset(abi, version, name):
    # A distinct byte pattern written through each non-bitfield leaf must appear in bytes(obj)
    # at the offset the table gives, and nowhere else.
    cls = getattr(kmd.target(abi, version), name)
    size = golden_size(name, abi, version)[0]
    for g in golden_leaves(name, abi, version):
        if g.width % 8 or g.bit:
            continue
        nbytes = g.width // 8
        pattern = bytes(range(0x11, 0x11 + nbytes))
        value = int.from_bytes(pattern, "little", signed=g.signed)
        obj = cls()
        write_path(obj, g.path, value)
        expected = bytes(g.offset) + pattern + bytes(size - g.offset - nbytes)
        assert bytes(obj) == expected, g.path


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_every_leaf_set_to_all_ones_writes_its_typed_mask_at_its_typed_offset(abi, version, name):
    # Covers the bitfields inside structs too (DXGK_ALLOCATIONLIST.SegmentId at 8/4,
    # DXGK_ALLOCATIONUSAGEHINT.v1.Flags.Index at 4, DXGK_ALLOCATIONINFO.Flags2.NotifyEviction at 84).
    cls = getattr(kmd.target(abi, version), name)
    size = golden_size(name, abi, version)[0]
    for g in golden_leaves(name, abi, version):
        obj = cls()
        write_path(obj, g.path, -1 if g.signed else g.mask >> g.bit)
        assert bytes(obj) == (g.mask << (8 * g.offset)).to_bytes(size, "little"), g.path


# ---- the size drifts spelled out per version

SEGMENTDESCRIPTOR4_X86 = {  # §10.5: 72 before WDDM2_2, 80 from it; x64 is 96 throughout
    "WDDM2_0": 72, "WDDM2_1": 72, "WDDM2_1_5": 72, "WDDM2_1_6": 72,
    "WDDM2_2": 80, "WDDM2_3": 80, "WDDM2_4": 80, "WDDM2_5": 80, "WDDM2_6": 80, "WDDM2_7": 80,
    "WDDM2_8": 80, "WDDM2_9": 80, "WDDM3_0": 80, "WDDM3_1": 80, "WDDM3_2": 80,
}


@pytest.mark.parametrize("version", list(kmd.InterfaceVersion), ids=lambda v: v.name)
def test_segmentdescriptor4_x86_72_before_wddm2_2_then_80(version):
    for abi in kmd.ABIS:
        cls = getattr(kmd.target(abi, version), "DXGK_SEGMENTDESCRIPTOR4", None)
        if version.name not in SEGMENTDESCRIPTOR4_X86:
            assert cls is None
            continue
        expected = SEGMENTDESCRIPTOR4_X86[version.name] if abi == "x86" else 96
        assert ctypes.sizeof(cls) == expected
        paths = {l.path: l.offset for l in kmd.leaves(cls)}
        if version >= 0x700A:
            assert paths["NumUEFIFrameBufferRanges"] == (72 if abi == "x86" else 92)
        else:
            assert "NumUEFIFrameBufferRanges" not in paths


@pytest.mark.parametrize("version", list(kmd.InterfaceVersion), ids=lambda v: v.name)
def test_allocationinfo_flags2_at_84_only_on_64bit_from_wddm3_0(version):
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_ALLOCATIONINFO
        offsets = {l.path: l.offset for l in kmd.leaves(cls)}
        has_flags2 = abi != "x86" and version >= 0xF003
        assert ("Flags2.Value" in offsets) == has_flags2
        if has_flags2:
            assert offsets["Flags2.Value"] == 84
        assert ctypes.sizeof(cls) == (60 if abi == "x86" else 88)


@pytest.mark.parametrize("version", list(kmd.InterfaceVersion), ids=lambda v: v.name)
def test_arm64_layout_is_the_x64_layout(version):
    x64, arm64 = kmd.target("x64", version), kmd.target("arm64", version)
    assert sorted(x64.types) == sorted(arm64.types)
    for name in ALL_TYPES:
        a, b = getattr(x64, name, None), getattr(arm64, name, None)
        if a is None:
            continue
        assert ctypes.sizeof(a) == ctypes.sizeof(b)
        assert kmd.leaves(a) == kmd.leaves(b)


@pytest.mark.parametrize("version", list(kmd.InterfaceVersion), ids=lambda v: v.name)
def test_createallocation_40_bytes_x64_24_x86_at_every_version_from_vista(version):
    """DXGKARG_CREATEALLOCATION as the kit declares it, unguarded (d3dkmddi.h of WDK 10.0.26100 and the
    Vista-era kit; MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md: "Available in Windows Vista and
    later"): a pointer, two UINTs, a pointer, a HANDLE and the 4-byte DXGK_CREATEALLOCATIONFLAGS."""
    offsets = {"x64": (0, 8, 12, 16, 24, 32, 40, 8), "x86": (0, 4, 8, 12, 16, 20, 24, 4)}
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGKARG_CREATEALLOCATION
        at = {leaf.path: leaf.offset for leaf in kmd.leaves(cls)}
        got = (at["pPrivateDriverData"], at["PrivateDriverDataSize"], at["NumAllocations"], at["pAllocationInfo"],
               at["hResource"], at["Flags.Value"], ctypes.sizeof(cls), ctypes.alignment(cls))
        assert got == offsets["x86" if abi == "x86" else "x64"]
        assert ctypes.sizeof(kmd.target(abi, version).DXGK_CREATEALLOCATIONFLAGS) == 4
