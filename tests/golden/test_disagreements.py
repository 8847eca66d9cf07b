"""Every place where the docs, older kits or independent headers disagree with the newest
kit (definitions.md §15, §17, §18 and the history notes of §4-§10), and where the words of the
current page, its earlier copy, another page and the kit differ (issue 22).  Each test is named
after the disagreement (``<what one source says>__<what the other says>``) and asserts the kit's
value, or records both sides and what the package prints of them.  The seed-page layout
disagreements live in test_seed_pages.py."""
from __future__ import annotations

import ctypes
import re

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.semantics.segments import SEGMENT_FLAG_MEANINGS
from tests.conftest import require
from tests.golden.sources import SHARED, copy_text, kit_comments

VERSIONS = list(kmd.InterfaceVersion)


def _bitfields(cls):
    return [l for l in kmd.leaves(cls) if l.is_bitfield]


def _fields(cls):
    return {l.path: l for l in kmd.leaves(cls)}


# ---- §18.1: the docs' flattened syntax blocks print both sides of each #if/#else

# DocsNow DXGK_ALLOCATIONINFOFLAGS: 15 flags, then AccessedPhysically, ExplicitResidencyNotification,
# HardwareProtected, CpuVisibleOnDemand *and* Reserved:4, then 13 reserved bits.
DOCS_ALLOCATIONINFOFLAGS_WIDTHS = [1] * 15 + [1, 1, 1, 1] + [4] + [1] * 13
# DocsNow DXGK_ALLOCATIONINFOFLAGS_WDDM2_0: CreateInVpr *and* Reserved00, MapApertureCpuVisible *and* Reserved03.
DOCS_ALLOCATIONINFOFLAGS_WDDM2_0_WIDTHS = [1] * 10 + [1, 1] + [1, 1] + [1, 1] + [1] * 5 + [1] * 13


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_docs_allocationinfoflags_syntax_adds_to_36_bits__kit_32(version):
    assert sum(DOCS_ALLOCATIONINFOFLAGS_WIDTHS) == 36
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_ALLOCATIONINFOFLAGS
        assert sum(l.bit_width for l in _bitfields(cls)) == 32
        fields = _fields(cls)
        assert ("AccessedPhysically" in fields) != ("Reserved" in fields)
        assert ctypes.sizeof(cls) == 4


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_docs_allocationinfoflags_wddm2_0_syntax_adds_to_34_bits__kit_32(version):
    assert sum(DOCS_ALLOCATIONINFOFLAGS_WDDM2_0_WIDTHS) == 34
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_ALLOCATIONINFOFLAGS_WDDM2_0
        assert sum(l.bit_width for l in _bitfields(cls)) == 32
        fields = _fields(cls)
        assert ("CreateInVpr" in fields) != ("Reserved00" in fields)
        assert ("MapApertureCpuVisible" in fields) != ("Reserved03" in fields)


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_docs_segmentflags_collapse_nested_guards_into_elif__kit_nests_win8_wddm2_0_wddm2_9(version):
    # Docs: "#if ... Reserved:10 #elif 11 #elif 21 #else 22"; the kit nests
    # >= WIN8 { DirectFlip; >= WDDM2_0 { ...; >= WDDM2_9 {...} } }.
    expected = 22 if version < 0x300E else 21 if version < 0x5023 else 11 if version < 0xE003 else 10
    for abi in kmd.ABIS:
        cls = kmd.target(abi, version).DXGK_SEGMENTFLAGS
        assert _fields(cls)["Reserved"].bit_width == expected
        assert sum(l.bit_width for l in _bitfields(cls)) == 32
        assert ("DirectFlip" in _fields(cls)) == (version >= 0x300E)


# ---- §18.2: Flags2

@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_docs_flags2_unconditional__kit_guards_wddm3_0_and_64bit(version):
    for abi in kmd.ABIS:
        info = kmd.target(abi, version).DXGK_ALLOCATIONINFO()
        if abi != "x86" and version >= 0xF003:
            info.Flags2.ShareBackingStoreWithKmd = 1
            assert bytes(info)[84] == 1
            continue
        assert getattr(info, "Flags2", None) is None
        with pytest.raises(AttributeError) as err:
            info.Flags2
        assert "WDDM3_0" in str(err.value) and "64-bit" in str(err.value)


# ---- §18.3 and §5: the 26100 kit's name-only unions, added without a version guard

@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_kit26100_page_size_and_mmuset_unions_have_no_version_guard(version):
    for abi in kmd.ABIS:
        fields = _fields(kmd.target(abi, version).DXGK_ALLOCATIONINFO)
        assert fields["MinimumPageSize"].offset == fields["Alignment"].offset
        assert fields["RecommendedPageSize"].offset == fields["Alignment"].offset + 2
        assert fields["MmuSet"].offset == fields["SupportedReadSegmentSet"].offset


# ---- §18.4: Docs2018 (pre-release WDDM 2.0 headers)

@pytest.mark.parametrize("abi", kmd.ABIS)
def test_docs2018_allocationinfoflags_reserved2_prerelease__kit_hardwareprotected_cpuvisibleondemand(abi):
    # Docs2018 WDDM2_0 branch: AccessedPhysically, ExplicitResidencyNotification, Reserved:2.
    fields = _fields(kmd.target(abi, "WDDM2_0").DXGK_ALLOCATIONINFOFLAGS)
    assert fields["HardwareProtected"].mask == 0x00020000
    assert fields["CpuVisibleOnDemand"].mask == 0x00040000
    assert "Reserved" not in fields


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_docs2018_segmentdescriptor4_ends_at_numinvalidmemoryranges__kit_has_vpr_fields(abi):
    cls = kmd.target(abi, "WDDM2_0").DXGK_SEGMENTDESCRIPTOR4
    fields = _fields(cls)
    for name in ("VprRangeStartOffset", "VprRangeSize", "VprAlignment", "NumVprSupported", "VprReserveSize"):
        assert fields[name].offset > fields["NumInvalidMemoryRanges"].offset
    assert ctypes.sizeof(cls) == (72 if abi == "x86" else 96)


# ---- §18.5: the old "system use" DXGK_ALLOCATIONINFOFLAGS2 page

@pytest.mark.parametrize("abi", kmd.ABIS)
def test_old_allocationinfoflags2_page_win7_era__kit_has_only_the_wddm3_0_type(abi):
    assert getattr(kmd.target(abi, "WIN7"), "DXGK_ALLOCATIONINFOFLAGS2", None) is None
    assert getattr(kmd.target(abi, "WDDM2_9"), "DXGK_ALLOCATIONINFOFLAGS2", None) is None
    cls = kmd.target(abi, "WDDM3_0").DXGK_ALLOCATIONINFOFLAGS2
    fields = _fields(cls)
    assert fields["ShareBackingStoreWithKmd"].mask == 0x00000001
    for old_name in ("CpuVisible", "ReadOnly", "PermanentSysMem"):
        assert old_name not in fields
        assert getattr(cls(), old_name, None) is None


# ---- §18.6: WDDM2_0's value

def test_kit_10240_wddm2_0_is_0x5022__official_0x5023():
    assert kmd.DXGKDDI_INTERFACE_VERSION_WDDM2_0 == 0x5023
    assert kmd.target("x64", 0x5023).interface_version.name == "WDDM2_0"
    with pytest.raises(kmd.UnsupportedTarget) as err:
        kmd.target("x64", 0x5022)
    assert "0x5023" in str(err.value)
    assert isinstance(err.value, ValueError)


# ---- §18.7 / §17: ReactOS's hand-made headers

@pytest.mark.parametrize("version", ["WDDM3_0", "WDDM3_1", "WDDM3_2"])
def test_reactos_flags2_without_arch_guard_gives_x86_64_bytes__kit_x86_60(version):
    cls = kmd.target("x86", version).DXGK_ALLOCATIONINFO
    assert ctypes.sizeof(cls) == 60
    assert not any(l.path.startswith("Flags2.") for l in kmd.leaves(cls))


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_reactos_guards_flagswddm2_by_wddm2_0__kit_unguarded(abi):
    for version in ("VISTA", "WIN8", "WDDM1_3"):
        fields = _fields(kmd.target(abi, version).DXGK_ALLOCATIONINFO)
        assert fields["FlagsWddm2.Value"].offset == fields["Flags.Value"].offset


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_reactos_createinvpr_unconditional__kit_from_wddm2_1(abi):
    flags = kmd.target(abi, "WDDM2_0").DXGK_ALLOCATIONINFOFLAGS_WDDM2_0()
    flags.Reserved00 = 1
    assert flags.Value == 0x400
    with pytest.raises(AttributeError, match="WDDM2_1"):
        flags.CreateInVpr = 1
    later = kmd.target(abi, "WDDM2_1").DXGK_ALLOCATIONINFOFLAGS_WDDM2_0()
    later.CreateInVpr = 1
    assert later.Value == 0x400


def test_reactos_lacks_seven_version_constants__kit_defines_all_21():
    missing_in_reactos = {"VISTA": 0x1052, "WDDM1_3_PATH_INDEPENDENT_ROTATION": 0x4003, "WDDM2_1": 0x6003,
                          "WDDM2_1_5": 0x6010, "WDDM2_1_6": 0x6011, "WDDM3_1": 0x10004, "WDDM3_2": 0x11007}
    for name, value in missing_in_reactos.items():
        assert getattr(kmd, f"DXGKDDI_INTERFACE_VERSION_{name}") == value
        assert kmd.target("x86", name).interface_version == value


# ---- §18.8: comment typo DXGK_PAGE_SIZE (the SegmentId 0x2E mask is in test_kit_mask_comments.py)

def test_kit_comment_says_dxgk_page_size__enum_is_dxgk_pagesize():
    t = kmd.target("x64", "WDDM3_2")
    assert getattr(t, "DXGK_PAGE_SIZE", None) is None
    assert t.DXGK_PAGESIZE.DXGK_PAGESIZE_64KB == 4
    info = t.DXGK_ALLOCATIONINFO()
    info.MinimumPageSize = t.DXGK_PAGESIZE.DXGK_PAGESIZE_64KB
    assert info.Alignment == 4


# ---- kit history (§4-§10): older kits spelled or sized things differently

@pytest.mark.parametrize("abi", kmd.ABIS)
def test_kit10240_bit18_reserved__later_kits_cpuvisibleondemand(abi):
    t = kmd.target(abi, "WDDM2_0")
    for cls in (t.DXGK_ALLOCATIONINFOFLAGS, t.DXGK_ALLOCATIONINFOFLAGS_WDDM2_0):
        assert _fields(cls)["CpuVisibleOnDemand"].mask == 0x00040000


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_kit14393_reserved01__later_kits_dxgk_alloc_reserved17(version):
    fields = _fields(kmd.target("x64", version).DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)
    assert fields["DXGK_ALLOC_RESERVED17"].mask == 0x00000800
    assert "Reserved01" not in fields


@pytest.mark.parametrize("name", ["DXGK_ALLOCATIONINFOFLAGS", "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"])
def test_dxgk_alloc_reserved16_and_17_have_no_macro__literal_names_kept(name):
    # d3dkmddi.h #defines DXGK_ALLOC_RESERVED0..15 as Reserved0..15; 16 and 17 keep their spelling.
    fields = _fields(getattr(kmd, name))
    assert fields["DXGK_ALLOC_RESERVED16"].mask == 0x00080000
    assert "Reserved16" not in fields and "Reserved17" not in fields
    assert [f"Reserved{n}" for n in (15, 14, 13, 12, 11, 10, 9, 4, 3, 2, 1, 0)] == \
        [p for p in fields if re.fullmatch(r"Reserved(0|[1-9][0-9]*)", p)]
    assert not any(f"DXGK_ALLOC_RESERVED{n}" in fields for n in range(16))


@pytest.mark.parametrize("abi", ["x64", "arm64"])
def test_kit10240_segmentdescriptor4_88__later_kits_96_with_unguarded_vprreservesize(abi):
    cls = kmd.target(abi, "WDDM2_0").DXGK_SEGMENTDESCRIPTOR4
    assert ctypes.sizeof(cls) == 96
    assert _fields(cls)["VprReserveSize"].offset == 88


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_docs_historybuffer_win8_1__kit_unguarded(abi):
    fields = _fields(kmd.target(abi, "VISTA").DXGK_ALLOCATIONINFOFLAGS)
    assert fields["HistoryBuffer"].mask == 0x00004000


# ---- §1, §16: the spec's x86 numbers come from gcc -m32 -malign-double, i.e. MSVC's 8-byte
# alignment of LARGE_INTEGER; plain i386 rules (ctypes on 32-bit Linux) align it to 4.

@pytest.mark.parametrize("version", ["VISTA", "WDDM2_0", "WDDM3_2"])
def test_i386_aligns_int64_to_4__msvc_x86_aligns_8(version):
    t = kmd.target("x86", version)
    assert ctypes.sizeof(t.DXGK_ALLOCATIONLIST) == 16  # i386 rules: 12
    assert ctypes.sizeof(t.DXGK_SEGMENTDESCRIPTOR) == 40  # i386 rules: 36
    assert ctypes.alignment(t.DXGK_SEGMENTDESCRIPTOR) == 8
    if version != "VISTA":
        assert ctypes.sizeof(t.DXGK_CPUHOSTAPERTURE) == 16  # i386 rules: 12
        assert _fields(t.DXGK_SEGMENTDESCRIPTOR2)["BaseAddress.QuadPart"].offset == 16  # i386 rules: 12


# ---- issue 22: where the current page, its earlier copy, another page and the kit say different things.
# Each test records both sides (read from ../shared) and what the package prints of them.

def _page(name: str) -> str:
    require((SHARED / "docs").is_dir(), f"the shared reference pages are not at {SHARED}")
    return copy_text(name)


SEGFLAGS_NOW, SEGFLAGS_2017 = "docs/ns-d3dkmddi-_dxgk_segmentflags.md", "seeds/004_514edaf6af042189.txt"
HIBERNATE_FLAGS = ("PartiallyPreservedDuringHibernate and PreservedDuringHibernate cannot both be set on the same "
                   "segment, and they cannot be set on aperture segments.")


def test_page_dates_maximumrenaminglistlength_and_physicaladapterindex_from_wddm2__kit_one_union_word_at_every_version():
    page = _page("docs/ns-d3dkmddi-_dxgk_allocationinfo.md")
    said = "Support for this member started with Windows 10 and the WDDM v2."
    for field, following in (("MaximumRenamingListLength", "PhysicalAdapterIndex"), ("PhysicalAdapterIndex", "hAllocation")):
        section = page.split(f"-field {field}")[1].split(f"-field {following}")[0]
        assert said in section, field
    for version in ("VISTA", "WDDM2_0"):
        leaves = _fields(kmd.target("x64", version).DXGK_ALLOCATIONINFO)
        assert leaves["PhysicalAdapterIndex"].offset == leaves["MaximumRenamingListLength"].offset
        m = sem.field_meanings(kmd.target("x64", version).DXGK_ALLOCATIONINFO())
        assert said in m["MaximumRenamingListLength"] and said in m["PhysicalAdapterIndex"]
        assert "neither source says which one a driver means" in m["PhysicalAdapterIndex"]


def test_earlier_segmentflags_page_forbids_hibernate_flags_on_apertures__current_page_marks_rows_invalid_only():
    now, then = _page(SEGFLAGS_NOW), _page(SEGFLAGS_2017)
    assert HIBERNATE_FLAGS in then and HIBERNATE_FLAGS not in now
    assert "1 1 1 invalid invalid" in now and "0 1 1 invalid invalid" in now  # both hibernate flags: invalid rows
    assert "aperture" not in now.split("### Optimized standby settings")[1]
    assert sem.RULES["SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE"].source.note == ""  # rests on the current table
    for rule_id in ("SEGFLAGS.PARTIAL_ON_APERTURE", "SEGFLAGS.HIBERNATE_ON_APERTURE"):
        assert sem.RULES[rule_id].source.note == "earlier version of the page"


def test_earlier_segmentflags_page_recommends_preservedduringhibernate_on_apertures__and_forbids_it():
    then = _page(SEGFLAGS_2017)
    recommends = ("These two members should also both be set for aperture segments in which page table content "
                  "should be preserved during power transitions.")
    assert recommends in then and HIBERNATE_FLAGS in then and recommends not in _page(SEGFLAGS_NOW)
    rule = sem.RULES["SEGFLAGS.HIBERNATE_ON_APERTURE"]
    assert rule.severity is sem.Severity.WARNING and rule.softened_by.text == recommends
    (f,) = sem.check(0x181, "DXGK_SEGMENTFLAGS")
    assert "should be set on apertures" in f.message and "the current page says neither" in f.message


def test_kit_comment_deprecates_applicationtarget__page_does_not():
    assert kit_comments("DXGK_SEGMENTFLAGS.ApplicationTarget") == (
        "Deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup",)
    page = _page(SEGFLAGS_NOW).split("-field ApplicationTarget")[1].split("-field VprSupported")[0]
    assert "should be targeted by application budgets" in page and "eprecated" not in page
    assert SEGMENT_FLAG_MEANINGS["ApplicationTarget"].startswith("this segment should be targeted by application "
                                                                 "budgets (kit header comment: Deprecated")


def test_segmentdescriptor3_purges_allocations_beginning_after_systemmemoryendaddress__descriptor4_ending_after():
    three, four = _page("docs/ns-d3dkmddi-_dxgk_segmentdescriptor3.md"), _page("docs/ns-d3dkmddi-_dxgk_segmentdescriptor4.md")
    assert "all allocations that begin after this address are purged in a transition to a hibernate state" in three
    assert "all allocations ending after this address are purged during hibernate" in four
    t = kmd.target("x64", "WDDM2_0")
    for name, words in (("DXGK_SEGMENTDESCRIPTOR3", "begin after"), ("DXGK_SEGMENTDESCRIPTOR4", "ending after")):
        d = getattr(t, name)()
        d.SystemMemoryEndAddress = 0x1000
        assert words in sem.field_meanings(d)["SystemMemoryEndAddress"]


def test_segmentdescriptor_commitlimit_is_the_size_of_a_memory_segment__descriptor4_applies_to_apertures_only():
    one_and_three = "For a memory segment, the commit limit is always the same as the size of the segment"
    assert one_and_three in _page("docs/ns-d3dkmddi-_dxgk_segmentdescriptor.md")
    assert one_and_three in _page("docs/ns-d3dkmddi-_dxgk_segmentdescriptor3.md")
    four = _page("docs/ns-d3dkmddi-_dxgk_segmentdescriptor4.md")
    assert "This value applies to the aperture segment only." in four and one_and_three not in four
    assert "must be a multiple of the native host page size" not in four  # nor Size's page multiple
    t = kmd.target("x64", "WDDM2_0")
    for name, checked in (("DXGK_SEGMENTDESCRIPTOR3", True), ("DXGK_SEGMENTDESCRIPTOR4", False)):
        d = getattr(t, name)()
        d.Size, d.CommitLimit = 0x2000, 0x1000
        assert ("DESC.COMMITLIMIT_MEMORY" in {f.rule_id for f in sem.check(d)}) is checked


def test_page_ignores_the_read_set_from_wddm2__kit_names_the_word_mmuset_too_with_no_version_guard():
    page = _page("docs/ns-d3dkmddi-_dxgk_allocationinfo.md")
    assert "will ignore the SupportedReadSegmentSet value" in page and "MmuSet" not in page
    for version in ("WDDM2_0", "WDDM3_2"):
        info = kmd.target("x64", version).DXGK_ALLOCATIONINFO()
        leaves = _fields(type(info))
        assert leaves["MmuSet"].offset == leaves["SupportedReadSegmentSet"].offset
        info.SupportedReadSegmentSet, info.SupportedWriteSegmentSet, info.AllocationPriority = 1, 2, 0x78000000
        assert "ALLOCINFO.READ_SET_IGNORED" in {f.rule_id for f in sem.check(info)}  # no bound at WDDM3_2


# ---- issue 30: what the reading of the remaining words found

def test_page_dates_allocationinfoflags_reserved_from_windows10__kit_has_it_before_wddm2_0_only():
    page = _page("docs/ns-d3dkmddi-_dxgk_allocationinfoflags.md")
    assert "Reserved Reserved for system use. Available starting with Windows 10." in page
    for version, has in (("WDDM1_3", True), ("WDDM2_0", False)):
        assert ("Reserved" in _fields(kmd.target("x64", version).DXGK_ALLOCATIONINFOFLAGS)) is has
    # the package quotes the member's own words, not the date the kit contradicts
    m = sem.field_meanings(1 << 15, "DXGK_ALLOCATIONINFOFLAGS", target=("x64", "WDDM1_3"))
    assert m["Reserved"] == "reserved bits set (0x1): Reserved for system use."


def test_page_dates_allocationlist_physicaladdress_from_windows10__kit_has_it_at_every_version():
    page = _page("docs/ns-d3dkmddi-_dxgk_allocationlist.md")
    section = page.split("-field PhysicalAddress")[1].split("-field VirtualAddress")[0]
    assert "Supported starting with Windows 10." in section
    assert "PhysicalAddress.QuadPart" in _fields(kmd.target("x64", "VISTA").DXGK_ALLOCATIONLIST)
    m = sem.field_meanings(kmd.target("x64", "VISTA").DXGK_ALLOCATIONLIST())
    assert "Windows 10" not in m["PhysicalAddress.QuadPart"]


def test_cpuhostaperture_page_says_size_d3ddiin_cpu_host_pages__package_quotes_cpu_host_pages():
    page = _page("docs/ns-d3dkmddi-_dxgk_cpuhostaperture.md")
    assert "The size d3ddiin CPU host pages." in page  # a stray word on the page
    assert sem.field_meanings(kmd.target("x64", "WDDM2_0").DXGK_CPUHOSTAPERTURE(SizeInPages=4))["SizeInPages"] == \
        "4 CPU host pages"
