"""Each rule runs on what its sentence speaks of (issue 30): not on a member the OS fills, not on a struct
that lacks the members its sentence names, not at a version its page says the flag is not supported yet.
The guards read every check of every type at every distinct layout, and the page copies in ../shared."""
from __future__ import annotations

import re
from functools import lru_cache

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py._spec import ALIASES, TYPEDEFS
from d3dkmddi_py.layout import type_layout
from d3dkmddi_py.semantics._rules import READING, SUPPORTED_FROM, SourceKind
from d3dkmddi_py.semantics.checks import CHECKS, adapter_facts
from d3dkmddi_py.semantics.engine import leaves_read
from tests.conftest import require
from tests.golden.access import distinct_layouts
from tests.golden.sources import SHARED, page_fields, type_copy
from tests.semantics.cases import adapter, descriptor, seg


@pytest.fixture(autouse=True)
def _shared():
    require((SHARED / "docs").is_dir(), f"the shared reference pages are not at {SHARED}/docs")


def _every_check():
    """(type name, abi, version, check, with an adapter) for every check the registry builds."""
    for name, build in CHECKS.items():
        for abi, version in (layout.target for layout in distinct_layouts(name)):
            alone = build(abi, version, None)
            yield from ((name, abi, version, c, False) for c in alone)
            if name == "DXGK_ALLOCATIONINFO":
                facts = adapter_facts(adapter(kmd.InterfaceVersion(version).name, abi))
                yield from ((name, abi, version, c, True) for c in build(abi, version, facts) if c not in alone)


CHECK_CASES = list(_every_check())


# ---- case 1: DXGK_QUERYSEGMENTIN.AgpFlags is filled by the OS, not a segment a driver describes

def test_querysegmentin_agpflags_is_not_checked_as_a_drivers_segment():
    query = kmd.target("x64", "WIN7").DXGK_QUERYSEGMENTIN()
    query.AgpFlags.Value = seg("Agp", "CpuVisible", "CacheCoherent")  # an AGP aperture's properties, as the OS says
    assert sem.check(query) == []
    meanings = sem.field_meanings(query)
    assert meanings["AgpFlags.Agp"] == "an AGP-type aperture segment"  # what the flag is, not what a driver must do
    assert not [text for text in meanings.values() if "driver must" in text or "should not be set" in text]
    assert meanings["AgpFlags.Value"].startswith("properties for the available AGP aperture in bit-field flags: ")
    assert page_fields(type_copy("DXGK_QUERYSEGMENTIN"))["AgpFlags"][0] == "in"


def _member_kinds(type_name, abi, version) -> dict:
    """Member path -> its C type, for the members of a layout that hold other members."""
    return {line.path: line.kind for line in type_layout(type_name, abi, version).lines if line.leaf is None}


@pytest.mark.parametrize("type_name", sorted(CHECKS))
def test_no_check_reaches_into_a_member_the_os_fills(type_name):
    # every rule's page speaks of what the driver provides: no check goes through a member its page marks [in]
    for name, abi, version, check, _with_adapter in CHECK_CASES:
        if name != type_name:
            continue
        kinds = _member_kinds(name, abi, version)
        owner, path = name, ""
        for part in check.path.split(".")[:-1]:
            copy = type_copy(owner)
            direction = page_fields(copy).get(part, (None, ""))[0] if copy else None
            assert direction != "in", (check.rule_id, check.path, f"{owner}.{part} is [in] on {copy}")
            path = f"{path}.{part}" if path else part
            owner = kinds.get(path, owner)


def test_the_os_filled_members_the_guard_knows():
    # the guard above is not vacuous: the pages mark these members [in], and none holds a check
    marked = {(name, field) for name in TYPEDEFS if type_copy(name)
              for field, (direction, _text) in page_fields(type_copy(name)).items() if direction == "in"}
    assert ("DXGK_QUERYSEGMENTIN", "AgpFlags") in marked and ("DXGK_ALLOCATIONINFO", "pPrivateDriverData") in marked


def _types_on(name, abi, version, check, with_adapter) -> set:
    """The types a check speaks of: its record's, each member's on the way to its field and to every leaf it
    reads, and with an adapter the segment descriptors' and their flags'."""
    kinds = _member_kinds(name, abi, version)
    types = {name}
    for path in {check.path, *leaves_read(check, type_layout(name, abi, version).by_path)}:
        walked = ""
        for part in path.split(".")[:-1]:
            walked = f"{walked}.{part}" if walked else part
            types.add(ALIASES.get(kinds.get(walked, ""), kinds.get(walked, "")))
    if with_adapter:
        types |= {"DXGK_SEGMENTFLAGS", "DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3"}
    return types - {""}


def _cites(quote, types) -> bool:
    """Whether a quote is on the page (current or earlier copy) or the kit comment of one of ``types``."""
    if quote.source.kind is SourceKind.KIT:
        return quote.source.copy.split(".")[0] in types
    current = f"docs/{quote.source.where.rsplit('/', 1)[1]}.md"
    return current in {type_copy(t) for t in types}


def test_every_check_cites_the_page_of_a_struct_it_checks():
    # a rule run on a struct quotes that struct's page, or the page of a member's type on the way to a field it
    # reads (the DXGK_ALLOCATIONINFOFLAGS page's sentences on FlagsWddm2 cite the _WDDM2_0 page too; DXGK_SEGMENTDESCRIPTOR's
    # on DXGK_SEGMENTDESCRIPTOR3 cite the ...3 page)
    wrong = set()
    for name, abi, version, check, with_adapter in CHECK_CASES:
        rule = sem.RULES[check.rule_id]
        types = _types_on(name, abi, version, check, with_adapter)
        if not any(_cites(q, types) for q in (rule.quote, *rule.also)):
            wrong.add((check.rule_id, name, check.path.split(".")[0]))
    assert not wrong, sorted(wrong)


@lru_cache(maxsize=None)
def _every_name() -> frozenset:
    """Every member name and type name of the mirrored structures, at any version."""
    names = set(TYPEDEFS) | set(ALIASES)
    for type_name in TYPEDEFS:
        for abi, version in (layout.target for layout in distinct_layouts(type_name)):
            names.update(line.name for line in type_layout(type_name, abi, version).lines)
    return frozenset(names)


def _record_names(type_name, abi, version, with_adapter: bool) -> set:
    """The names a record has: its members, their types and its own (with an adapter, the descriptors' too)."""
    names = {type_name, *(k for k, v in ALIASES.items() if v == type_name)}
    types = [type_name] + (["DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3"] if with_adapter else [])
    for t in (t for t in types if t in kmd.target(abi, version).types):
        for line in type_layout(t, abi, version).lines:
            names.update((line.name, line.kind))
            names.update(k for k, v in ALIASES.items() if v == line.kind)
    return names


def test_every_member_a_rules_sentence_names_is_in_the_record_it_checks():
    # a sentence that names a member or a struct the record does not have speaks of something else: the
    # check must not run there, or say it is the package's reading (DESC.USEBANKING_NEEDS_BANKS on
    # DXGK_SEGMENTDESCRIPTOR3; it ran on DXGK_SEGMENTDESCRIPTOR4 and 5, which have no bank members)
    wrong = set()
    for name, abi, version, check, with_adapter in CHECK_CASES:
        rule = sem.RULES[check.rule_id]
        said = set()
        for quote in (rule.quote, *rule.also):
            said.update(w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quote.text) if w in _every_name())
        missing = said - _record_names(name, abi, version, with_adapter)
        if missing and READING not in check.message:
            wrong.add((check.rule_id, name, kmd.InterfaceVersion(version).name, tuple(sorted(missing))))
    assert not wrong, sorted(wrong)


def test_usebanking_needs_banks_claims_nothing_of_descriptor4_and_5():
    t = kmd.target("x64", "WDDM3_2")
    for name in ("DXGK_SEGMENTDESCRIPTOR4", "DXGK_SEGMENTDESCRIPTOR5"):
        found = sem.check(descriptor(name, t, flags=seg("UseBanking")))
        assert "DESC.USEBANKING_NEEDS_BANKS" not in {f.rule_id for f in found}
    (three,) = [f for f in sem.check(descriptor("DXGK_SEGMENTDESCRIPTOR3", t, flags=seg("UseBanking")))
                if f.rule_id == "DESC.USEBANKING_NEEDS_BANKS"]
    assert f"{READING} the page asks this of DXGK_SEGMENTDESCRIPTOR's members" in three.message
    (one,) = [f for f in sem.check(descriptor("DXGK_SEGMENTDESCRIPTOR", t, flags=seg("UseBanking")))
              if f.rule_id == "DESC.USEBANKING_NEEDS_BANKS"]
    assert READING not in one.message


# ---- a flag the kit names at every version but its page dates later (SUPPORTED_FROM)

def test_every_dated_flag_is_dated_on_its_page():
    for (type_name, flag), (first, rule_id) in SUPPORTED_FROM.items():
        text = page_fields(type_copy(type_name))[flag][1]
        assert sem.RULES[rule_id].sentence in text, (type_name, flag)
        assert type_layout(type_name, "x64", int(kmd.InterfaceVersion.VISTA)).by_path.get(flag) is not None


@pytest.mark.parametrize("dated", sorted(SUPPORTED_FROM), ids=lambda d: f"{d[0]}.{d[1]}")
def test_no_rule_about_a_flag_runs_before_its_pages_date(dated):
    type_name, flag = dated
    first, rule_id = SUPPORTED_FROM[dated]
    for name, abi, version, check, _with_adapter in CHECK_CASES:
        if name != type_name:
            continue
        present = set(type_layout(name, abi, version).by_path)
        if flag in leaves_read(check, present):
            assert (check.rule_id == rule_id) == (version < kmd.InterfaceVersion[first]), (check.rule_id, version)


def test_segmentflags_value_below_win8_calls_no_power_combination_invalid():
    word = seg("PreservedDuringHibernate")  # the page's table marks it invalid, for flags supported from Windows 8
    old = sem.check(word, "DXGK_SEGMENTFLAGS", target=("x64", "WIN7"))
    assert [f.rule_id for f in old] == ["SEGFLAGS.POWER_FLAGS_BEFORE_WIN8"]
    assert "invalid" not in sem.field_meanings(word, "DXGK_SEGMENTFLAGS", target=("x64", "WIN7"))["Value"]
    assert '"Supported starting with Windows 8."' in sem.field_meanings(
        word, "DXGK_SEGMENTFLAGS", target=("x64", "WIN7"))["PreservedDuringHibernate"]
    now = sem.check(word, "DXGK_SEGMENTFLAGS", target=("x64", "WIN8"))
    assert [f.rule_id for f in now] == ["SEGFLAGS.HIBERNATE_NEEDS_STANDBY"]
    assert "a combination the table marks invalid" in sem.field_meanings(word, "DXGK_SEGMENTFLAGS",
                                                                          target=("x64", "WIN8"))["Value"]
    explained = sem.explain(sem.Adapter.build(word, interface_version="WIN7"))
    assert "power:" not in explained


def test_historybuffer_rules_run_from_windows_8_1():
    word = 1 << 14  # HistoryBuffer, without CpuVisible
    old = sem.check(word, "DXGK_ALLOCATIONINFOFLAGS", target=("x64", "WIN8"))
    assert [f.rule_id for f in old] == ["ALLOCFLAGS.HISTORYBUFFER_BEFORE_WDDM1_3"]
    assert old[0].message.endswith(f"({READING} Windows 8.1 is read as WDDM1_3, the interface version of WDDM 1.3)")
    now = sem.check(word, "DXGK_ALLOCATIONINFOFLAGS", target=("x64", "WDDM1_3"))
    assert [f.rule_id for f in now] == ["ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE"]
