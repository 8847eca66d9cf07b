"""The public API of targets: how a target is named, what it holds, what it refuses, and
that its layout never depends on the host (issue 2, requirements 1, 2 and 4)."""
from __future__ import annotations

import ctypes
import re

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from tests.golden.access import ALL_TARGETS, read_path, target_id, write_path

TARGET_IDS = [target_id(a, v) for a, v in ALL_TARGETS]


# ---------------------------------------------------------------- naming a target

@pytest.mark.parametrize("spelling", [
    0x5023, kmd.DXGKDDI_INTERFACE_VERSION_WDDM2_0, kmd.InterfaceVersion.WDDM2_0, "WDDM2_0", "wddm2_0",
    "DXGKDDI_INTERFACE_VERSION_WDDM2_0", "0x5023", "0X5023", " 0x5023 ", "20515",
])
def test_interface_version_spellings_name_the_same_cached_target(spelling):
    t = kmd.target("x86", spelling)
    assert t is kmd.target("x86", 0x5023)
    assert t.interface_version is kmd.InterfaceVersion.WDDM2_0
    assert t.abi == "x86"
    assert t.label == "x86 WDDM2_0 (0x5023)"


@pytest.mark.parametrize("spelling", ["x64", "X64", " x64 "])
def test_abi_spellings(spelling):
    assert kmd.target(spelling, "WDDM3_2") is kmd.target("x64", 0x11007)


def test_defaults_are_x64_newest():
    assert kmd.target() is kmd.target("x64", INTERFACE_VERSIONS[NEWEST_VERSION])
    assert kmd.target("arm64") is kmd.target("arm64", NEWEST_VERSION)
    assert kmd.target().label == f"x64 {NEWEST_VERSION} ({INTERFACE_VERSIONS[NEWEST_VERSION]:#x})"


def test_targets_are_cached_per_abi_and_version():
    seen = {}
    for abi, version in ALL_TARGETS:
        t = kmd.target(abi, version)
        assert kmd.target(abi, int(version)) is t
        assert kmd.target(abi, version.name) is t
        seen[id(t)] = t
    assert len(seen) == len(kmd.ABIS) * len(INTERFACE_VERSIONS)
    assert kmd.target("x64", "WDDM2_0").DXGK_SEGMENTFLAGS is kmd.target("x64", 0x5023).DXGK_SEGMENTFLAGS


@pytest.mark.parametrize("abi", ["x32", "amd", "386", "", "arm", None, 64])
def test_unknown_abi_is_a_value_error_listing_the_valid_ones(abi):
    with pytest.raises(ValueError) as err:
        kmd.target(abi, "WDDM2_0")
    assert isinstance(err.value, kmd.UnsupportedTarget)
    for valid in ("x86", "x64", "arm64"):
        assert valid in str(err.value)


BETWEEN_VERSIONS = next(v for v in range(min(INTERFACE_VERSIONS.values()), max(INTERFACE_VERSIONS.values()))
                        if v not in INTERFACE_VERSIONS.values())  # a gap in the table, whatever versions it gains


@pytest.mark.parametrize("version", [0, 0x5022, BETWEEN_VERSIONS, max(INTERFACE_VERSIONS.values()) + 1, -1, "WDDM9_9",
                                     "WDDM2", "0x5024", "", "newest",
                                     1.5, None, True, b"WDDM2_0"])
def test_unknown_interface_version_is_a_value_error_listing_the_valid_ones(version):
    with pytest.raises(ValueError) as err:
        kmd.target("x64", version)
    assert isinstance(err.value, kmd.UnsupportedTarget)
    message = str(err.value)
    for name in ("VISTA", "WDDM1_3_PATH_INDEPENDENT_ROTATION", "WDDM2_1_5", "WDDM3_2", "0x5023", "0x11007"):
        assert name in message


def test_the_target_constructor_takes_what_target_takes_and_names_itself_refusing_the_rest():
    """Target(...) builds a second, uncached set of classes: it once stored any abi and failed later on
    ``version.name`` (an AttributeError) or a KeyError."""
    from d3dkmddi_py.target import Target

    t = Target("AMD64", "wddm2_0")
    assert (t.abi, t.interface_version) == ("x64", kmd.InterfaceVersion.WDDM2_0) and t is not kmd.target("x64", 0x5023)
    with pytest.raises(kmd.UnsupportedTarget, match=r"^Target: unknown abi None; valid: x86, x64, arm64"):
        Target(None, "WDDM2_0")
    with pytest.raises(kmd.UnsupportedTarget, match=r"^Target: interface version must be an int or a name, not "
                                                    r"NoneType; valid: VISTA \(0x1052\)"):
        Target("x64", None)
    with pytest.raises(kmd.D3dkmddiError, match=r"^Target: force_padding must be True or False, not 'yes'$"):
        Target("x64", "WDDM2_0", "yes")


def test_parse_helpers():
    assert kmd.parse_abi("ARM64") == "arm64"
    assert kmd.parse_interface_version("DXGKDDI_INTERFACE_VERSION_WIN8") is kmd.InterfaceVersion.WIN8
    assert kmd.parse_interface_version(0x300E) is kmd.InterfaceVersion.WIN8
    assert kmd.ABIS == ("x86", "x64", "arm64")


# ---------------------------------------------------------------- what a target holds

# type -> the first interface version that has it (definitions.md §2-§13, typed by hand)
GUARDED_TYPES = {
    "DXGK_SEGMENTFLAGS2": "WIN7", "DXGK_SEGMENTDESCRIPTOR2": "WIN7", "DXGK_QUERYSEGMENTOUT2": "WIN7",
    "DXGK_SEGMENTDESCRIPTOR3": "WIN8", "DXGK_QUERYSEGMENTOUT3": "WIN8",
    "DXGK_CPUHOSTAPERTURE": "WDDM2_0", "DXGK_SEGMENTDESCRIPTOR4": "WDDM2_0",
    "DXGK_QUERYSEGMENTIN4": "WDDM2_0", "DXGK_QUERYSEGMENTOUT4": "WDDM2_0",
    "DXGK_ALLOCATIONINFOFLAGS2": "WDDM3_0",
    "DXGK_SEGMENTDESCRIPTOR5": "WDDM3_2", "DXGK_QUERYSEGMENTIN5": "WDDM3_2", "DXGK_QUERYSEGMENTOUT5": "WDDM3_2",
    "DXGK_QUERYSEGMENTCOUNTIN": "WDDM3_2", "DXGK_QUERYSEGMENTCOUNTOUT": "WDDM3_2",
    "DXGK_SEGMENTTYPE": "WDDM3_2", "DXGK_PAGESIZE": "WDDM3_2",
}
UNGUARDED_TYPES = (
    "D3DDDI_SEGMENTPREFERENCE", "DXGK_SEGMENTPREFERENCE", "DXGK_SEGMENTBANKPREFERENCE", "DXGK_SEGMENTFLAGS",
    "DXGK_ALLOCATIONINFOFLAGS", "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "DXGK_ALLOCATIONUSAGEINFO1",
    "DXGK_ALLOCATIONUSAGEHINT", "DXGK_ALLOCATIONINFO", "DXGK_ALLOCATIONLIST", "DXGK_SEGMENTDESCRIPTOR",
    "DXGK_QUERYSEGMENTIN", "DXGK_QUERYSEGMENTOUT", "PHYSICAL_ADDRESS", "LARGE_INTEGER",
)


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_a_type_absent_at_a_version_is_not_an_attribute(abi, version):
    t = kmd.target(abi, version)
    for name in UNGUARDED_TYPES:
        assert getattr(t, name, None) is not None, name
        assert name in t.types
    for name, since in GUARDED_TYPES.items():
        present = version >= kmd.InterfaceVersion[since]
        assert (getattr(t, name, None) is not None) == present, name
        assert (name in t.types) == present
        assert hasattr(t, name) == present
        if present:
            continue
        with pytest.raises(AttributeError) as err:
            getattr(t, name)
        assert isinstance(err.value, kmd.MissingMember)
        assert since in str(err.value) and name in str(err.value)
        assert t.label in str(err.value)


def test_tag_of_an_absent_type_names_its_version_too():
    t = kmd.target("x64", "WDDM3_1")
    assert getattr(t, "_DXGK_SEGMENTDESCRIPTOR5", None) is None
    with pytest.raises(AttributeError, match="WDDM3_2"):
        t._DXGK_SEGMENTDESCRIPTOR5


def test_an_unknown_name_is_an_attribute_error():
    t = kmd.target()
    assert getattr(t, "DXGK_SEGMENTDESCRIPTOR6", None) is None
    with pytest.raises(AttributeError, match="DXGK_SEGMENTDESCRIPTOR6"):
        t.DXGK_SEGMENTDESCRIPTOR6


# Every tag of the excerpt's list (typedef struct _X {...} X;), and the two typedef aliases.
TAGS = ("_D3DDDI_SEGMENTPREFERENCE", "_DXGK_SEGMENTBANKPREFERENCE", "_DXGK_ALLOCATIONLIST", "_DXGK_CPUHOSTAPERTURE",
        "_DXGK_SEGMENTFLAGS", "_DXGK_SEGMENTDESCRIPTOR", "_DXGK_QUERYSEGMENTIN", "_DXGK_QUERYSEGMENTOUT",
        "_DXGK_SEGMENTFLAGS2", "_DXGK_SEGMENTDESCRIPTOR2", "_DXGK_QUERYSEGMENTOUT2", "_DXGK_SEGMENTDESCRIPTOR3",
        "_DXGK_QUERYSEGMENTOUT3", "_DXGK_QUERYSEGMENTIN4", "_DXGK_SEGMENTDESCRIPTOR4", "_DXGK_QUERYSEGMENTOUT4",
        "_DXGK_ALLOCATIONINFOFLAGS", "_DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "_DXGK_ALLOCATIONINFOFLAGS2",
        "_DXGK_ALLOCATIONUSAGEINFO1", "_DXGK_ALLOCATIONUSAGEHINT", "_DXGK_ALLOCATIONINFO",
        "_DXGK_QUERYSEGMENTCOUNTIN", "_DXGK_QUERYSEGMENTCOUNTOUT", "_DXGK_SEGMENTDESCRIPTOR5",
        "_DXGK_QUERYSEGMENTIN5", "_DXGK_QUERYSEGMENTOUT5")


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_tag_names_and_typedef_aliases_are_the_same_classes(abi):
    t = kmd.target(abi, "WDDM3_2")
    for tag in TAGS:
        assert getattr(t, tag) is getattr(t, tag[1:]), tag
        assert t.types[tag] is t.types[tag[1:]]
    assert t.DXGK_SEGMENTPREFERENCE is t.D3DDDI_SEGMENTPREFERENCE
    assert t.PHYSICAL_ADDRESS is t.LARGE_INTEGER
    assert t.DXGK_SEGMENTPREFERENCE._c_name_ == "D3DDDI_SEGMENTPREFERENCE"


def test_module_level_names_are_the_x64_newest_target():
    t = kmd.target("x64", kmd.NEWEST)
    assert t.interface_version.name == NEWEST_VERSION
    for name, cls in t.types.items():
        assert getattr(kmd, name) is cls, name
    for name in TAGS:
        assert getattr(kmd, name) is getattr(t, name[1:])
    assert kmd.DXGK_SEGMENTPREFERENCE is kmd.D3DDDI_SEGMENTPREFERENCE
    for name, value in t.constants.items():
        assert getattr(kmd, name) == value
    for name in t.types:  # classes are listed by dir(); __all__ holds what help(d3dkmddi_py) documents
        if not name.startswith("_"):
            assert name in dir(kmd) and name not in kmd.__all__


def test_target_exposes_constants_and_lists_its_names():
    t = kmd.target("x86", "WIN7")
    assert t.DXGKDDI_INTERFACE_VERSION_WIN7 == 0x2005
    assert t.constants["DXGK_SEGMENT_SET_SYSTEMMEMORY"] == 0x80000000
    names = dir(t)
    assert "DXGK_SEGMENTDESCRIPTOR2" in names and "_DXGK_SEGMENTFLAGS" in names
    assert "DXGK_SEGMENTDESCRIPTOR3" not in names
    assert "x86 WIN7 (0x2005)" in repr(t)


def test_classes_know_their_target():
    cls = kmd.target("x86", "WDDM2_2").DXGK_SEGMENTDESCRIPTOR4
    assert cls._c_name_ == "DXGK_SEGMENTDESCRIPTOR4"
    assert cls._target_ == ("x86", 0x700A)
    assert cls._target_label_ == "x86 WDDM2_2 (0x700A)"
    assert cls._layout_.size == ctypes.sizeof(cls) == 80


# ---------------------------------------------------------------- members a target lacks

# (type, member, abi, a version that lacks it, a version that has it, word in the explanation)
ABSENT_MEMBERS = (
    ("DXGK_ALLOCATIONINFO", "Flags2", "x86", "WDDM3_2", None, "64-bit"),
    ("DXGK_ALLOCATIONINFO", "Flags2", "x64", "WDDM2_9", "WDDM3_0", "WDDM3_0"),
    ("DXGK_ALLOCATIONINFO", "Flags2", "arm64", "WDDM2_9", "WDDM3_0", "WDDM3_0"),
    ("DXGK_SEGMENTFLAGS", "DirectFlip", "x64", "WIN7", "WIN8", "WIN8"),
    ("DXGK_SEGMENTFLAGS", "Use64KBPages", "x86", "WDDM1_3_PATH_INDEPENDENT_ROTATION", "WDDM2_0", "WDDM2_0"),
    ("DXGK_SEGMENTFLAGS", "PopulatedByReservedDDRByFirmware", "x64", "WDDM2_8", "WDDM2_9", "WDDM2_9"),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "CreateInVpr", "x64", "WDDM2_0", "WDDM2_1", "WDDM2_1"),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Reserved00", "x64", "WDDM2_1", "WDDM2_0", "WDDM2_1"),
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "MapApertureCpuVisible", "arm64", "WDDM2_8", "WDDM2_9", "WDDM2_9"),
    ("DXGK_ALLOCATIONINFOFLAGS", "CpuVisibleOnDemand", "x86", "WIN8", "WDDM2_0", "WDDM2_0"),
    ("DXGK_ALLOCATIONINFOFLAGS2", "NotifyEviction", "x64", "WDDM3_1", "WDDM3_2", "WDDM3_2"),
    ("DXGK_SEGMENTDESCRIPTOR4", "NumUEFIFrameBufferRanges", "x86", "WDDM2_1_6", "WDDM2_2", "WDDM2_2"),
    ("DXGK_ALLOCATIONLIST", "VirtualAddress", "x64", "WDDM1_3", "WDDM2_0", "WDDM2_0"),
)


@pytest.mark.parametrize("type_name,member,abi,lacks,has,why", ABSENT_MEMBERS,
                         ids=[f"{r[0]}.{r[1]}-{r[2]}-{r[3]}" for r in ABSENT_MEMBERS])
def test_a_member_a_target_lacks_is_not_a_field(type_name, member, abi, lacks, has, why):
    cls = getattr(kmd.target(abi, lacks), type_name)
    assert not hasattr(cls, member)
    assert not any(l.path == member or l.path.startswith(member + ".") for l in kmd.leaves(cls))
    obj = cls()
    assert getattr(obj, member, None) is None
    for access in (lambda: getattr(obj, member), lambda: setattr(obj, member, 0)):
        with pytest.raises(AttributeError) as err:
            access()
        message = str(err.value)
        assert isinstance(err.value, kmd.MissingMember)
        assert member in message and type_name in message and why in message and lacks in message
    assert bytes(obj) == bytes(ctypes.sizeof(cls))  # the failed assignment wrote nothing
    if has is not None:
        newer = getattr(kmd.target(abi, has), type_name)()
        read_path(newer, member)


# ---------------------------------------------------------------- the issue's example

def test_issue_example():
    t = kmd.target("x86", kmd.DXGKDDI_INTERFACE_VERSION_WDDM2_0)
    assert ctypes.sizeof(t.DXGK_ALLOCATIONINFO) == 60
    f = t.DXGK_SEGMENTFLAGS.from_buffer_copy(bytes.fromhex("85040000"))
    assert (f.Aperture, f.UseBanking, f.DirectFlip, f.Value) == (1, 0, 1, 0x485)
    assert all(type(v) is int for v in (f.Aperture, f.UseBanking, f.DirectFlip, f.Value))
    assert kmd.DXGK_ALLOCATIONINFO is kmd.target("x64", NEWEST_VERSION).DXGK_ALLOCATIONINFO


def test_flattened_and_named_members_from_the_issue():
    info = kmd.DXGK_ALLOCATIONINFO()
    info.Flags.CpuVisible = 1
    info.FlagsWddm2.CreateInVpr = 1
    info.PhysicalAdapterIndex = 2
    info.MinimumPageSize = 4
    info.HintedBank.Bank0 = 5
    assert (info.Flags.Value, info.FlagsWddm2.Value) == (0x401, 0x401)
    assert (info.MaximumRenamingListLength, info.Alignment, info.HintedBank.Value) == (2, 4, 5)
    flags = kmd.DXGK_SEGMENTFLAGS()
    flags.Value = 0x400
    assert flags.DirectFlip == 1
    desc = kmd.DXGK_SEGMENTDESCRIPTOR()
    desc.BaseAddress.QuadPart = 0x1_2345_6789
    assert (desc.BaseAddress.LowPart, desc.BaseAddress.HighPart) == (0x2345_6789, 1)
    assert (desc.BaseAddress.u.LowPart, desc.BaseAddress.u.HighPart) == (0x2345_6789, 1)


# ---------------------------------------------------------------- leaves()

def _leaf(cls, path):
    return next(l for l in kmd.leaves(cls) if l.path == path)


def test_leaves_of_a_few_classes():
    info = kmd.target("x64", "WDDM3_2").DXGK_ALLOCATIONINFO
    bank0 = _leaf(info, "HintedBank.Bank0")
    assert (bank0.offset, bank0.bit_offset, bank0.bit_width, bank0.c_type, bank0.is_bitfield) == (32, 0, 7, "UINT", True)
    assert bank0.mask == 0x7F and bank0.max_value == 127 and bank0.min_value == 0
    assert _leaf(info, "Flags2.NotifyIoMmuUnmap").offset == 84
    assert [l.path for l in kmd.leaves(info)][:5] == [
        "pPrivateDriverData", "PrivateDriverDataSize", "Alignment", "MinimumPageSize", "RecommendedPageSize"]

    desc = kmd.target("x86", "VISTA").DXGK_SEGMENTDESCRIPTOR
    quad = _leaf(desc, "BaseAddress.QuadPart")
    assert (quad.offset, quad.bit_width, quad.c_type, quad.signed, quad.is_bitfield) == (0, 64, "LONGLONG", True, False)
    assert (quad.min_value, quad.max_value) == (-(1 << 63), (1 << 63) - 1)
    assert _leaf(desc, "CpuTranslatedAddress.u.HighPart").offset == 12
    assert _leaf(desc, "pBankRangeTable").c_type == "SIZE_T*"
    assert _leaf(desc, "Flags.Value").offset == 32

    for abi, base in (("x64", 8), ("x86", 4)):
        out5 = kmd.target(abi, "WDDM3_2").DXGK_QUERYSEGMENTOUT5
        reserved = [l for l in kmd.leaves(out5) if l.path.startswith("Reserved")]
        assert [l.path for l in reserved] == ["Reserved[0]", "Reserved[1]", "Reserved[2]", "Reserved[3]"]
        assert [l.offset for l in reserved] == [base, base + 4, base + 8, base + 12]
        assert _leaf(out5, "Reserved[2]").c_type == "UINT32"


def test_leaves_of_an_instance_and_of_a_non_type():
    flags = kmd.DXGK_SEGMENTFLAGS(Value=1)
    assert kmd.leaves(flags) == kmd.leaves(kmd.DXGK_SEGMENTFLAGS)
    assert all(isinstance(l, kmd.Leaf) for l in kmd.leaves(flags))
    with pytest.raises(TypeError):
        kmd.leaves(int)
    with pytest.raises(TypeError):
        kmd.leaves(ctypes.c_uint32)


def test_layout_table_prints_dt_style_lines():
    text = kmd.layout_table(kmd.target("x64", "WDDM3_2").DXGK_ALLOCATIONINFO)
    assert re.search(r"^\s*\+0x020 HintedBank\.Bank0\s+: Pos 0, 7 Bits$", text, re.M)
    assert re.search(r"^\s*\+0x054 Flags2\.ShareBackingStoreWithKmd\s+: Pos 0, 1 Bit$", text, re.M)
    assert re.search(r"^\s*\+0x010 Size\s+: SIZE_T$", text, re.M)
    assert len(text.splitlines()) == len(kmd.leaves(kmd.DXGK_ALLOCATIONINFO))


# ---------------------------------------------------------------- pointer-sized integers

@pytest.mark.parametrize("abi,bits", [("x86", 32), ("x64", 64), ("arm64", 64)])
def test_pointers_handles_and_size_t_are_unsigned_of_the_target_width(abi, bits):
    info = kmd.target(abi, "WDDM2_0").DXGK_ALLOCATIONINFO()
    for field in ("pPrivateDriverData", "Size", "hAllocation", "pAllocationUsageHint"):
        setattr(info, field, (1 << bits) - 1)
        assert getattr(info, field) == (1 << bits) - 1
        with pytest.raises(kmd.InvalidFieldValue):
            setattr(info, field, 1 << bits)
        with pytest.raises(kmd.InvalidFieldValue):
            setattr(info, field, -1)
        assert _leaf(type(info), field).bit_width == bits


# ---------------------------------------------------------------- layout never depends on the host

def _pattern(size: int, seed: int) -> bytes:
    return bytes((seed * 131 + i * 29 + (i >> 3) * 7) & 0xFF for i in range(size))


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=TARGET_IDS)
def test_forced_padding_classes_are_the_same_layout(abi, version):
    # The fallback used where host ctypes disagrees with MSVC (e.g. 32-bit Linux) must give
    # the same sizes, leaves and bytes as the natural classes.
    normal = kmd.target(abi, version)
    padded = kmd.Target(abi, version, force_padding=True)
    assert sorted(normal.types) == sorted(padded.types)
    assert padded.label == normal.label
    forced = 0
    for name, cls in normal.types.items():
        if not isinstance(cls, type) or not issubclass(cls, (ctypes.Structure, ctypes.Union)):
            assert padded.types[name] is cls  # the enums are shared
            continue
        other = padded.types[name]
        assert other is not cls
        forced += getattr(other, "_pack_", 0) == 1
        assert ctypes.sizeof(other) == ctypes.sizeof(cls), name
        assert kmd.leaves(other) == kmd.leaves(cls), name
        blob = _pattern(ctypes.sizeof(cls), len(name))
        a, b = cls.from_buffer_copy(blob), other.from_buffer_copy(blob)
        assert bytes(a) == bytes(b) == blob
        for leaf in kmd.leaves(cls):
            assert read_path(a, leaf.path) == read_path(b, leaf.path), (name, leaf.path)
        a, b = cls(), other()
        for i, leaf in enumerate(kmd.leaves(cls)):
            value = (0x9E3779B97F4A7C15 >> (i % 11)) & ((1 << leaf.bit_width) - 1)
            if value > leaf.max_value:  # a signed leaf: the same bits, as a negative number
                value -= 1 << leaf.bit_width
            write_path(a, leaf.path, value)
            write_path(b, leaf.path, value)
            assert bytes(a) == bytes(b), (name, leaf.path)
    assert forced == len([c for c in padded.types.values() if isinstance(c, type) and hasattr(c, "_fields_")])


def test_little_endian_on_any_host():
    flags = kmd.DXGK_SEGMENTFLAGS(Value=0x12345678)
    assert bytes(flags) == bytes.fromhex("78563412")
    desc = kmd.target("x86", "WDDM2_0").DXGK_SEGMENTDESCRIPTOR()
    desc.Size = 0x0A0B0C0D
    assert bytes(desc)[16:20] == bytes.fromhex("0D0C0B0A")
