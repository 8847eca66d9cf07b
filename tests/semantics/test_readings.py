"""A reading of the package's is labelled wherever its statement is shown (issue 30): the union of the two
segment sets before WDDM v2 in the findings that rest on it (their text, JSON and table rows), in rule_text(),
and in explain()'s note; every rule's own reading in rule_text()."""
from __future__ import annotations

import csv
import io
import json

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import pipeline
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.semantics._rules import READING
from d3dkmddi_py.semantics.checks import CHECKS, adapter_facts
from d3dkmddi_py.semantics.engine import leaves_read
from d3dkmddi_py.layout import type_layout
from tests.semantics.cases import adapter, alloc

OLD = "WDDM1_3"
UNION = "SupportedReadSegmentSet | SupportedWriteSegmentSet ([reading] before WDDM v2 a segment of either set supports"
PITCH_RULES = ("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", "ALLOCINFO.PITCHALIGNEDSIZE_MISSING")


def _old_allocations():
    """Before WDDM v2: a pitch-aligned size with no pitch-aligned segment in either set, and none with one."""
    t = kmd.target("x64", OLD)
    return (alloc(t, PitchAlignedSize=0x20000),
            alloc(t, SupportedReadSegmentSet=0b111, SupportedWriteSegmentSet=0b101))


def test_pitchalignedsize_unused_and_missing_say_the_union_is_a_reading_in_findings_text_and_json():
    found = {}
    for value in _old_allocations():
        found.update({f.rule_id: f for f in sem.check(value, adapter=adapter(OLD))})
        text = kmd.report("DXGK_ALLOCATIONINFO", bytes(value), target=("x64", OLD), adapter=adapter(OLD),
                          validate=True)
        obj = json.loads(kmd.report("DXGK_ALLOCATIONINFO", bytes(value), target=("x64", OLD), adapter=adapter(OLD),
                                    validate=True, fmt="json"))
        for f in obj["findings"]:
            if f["rule_id"] in PITCH_RULES:
                assert UNION in f["message"]
                assert UNION in next(line for line in text.splitlines() if f["rule_id"] in line)
    assert set(PITCH_RULES) <= set(found)
    for rule_id in PITCH_RULES:
        assert UNION in found[rule_id].message
        assert f"before, {READING} SupportedReadSegmentSet | SupportedWriteSegmentSet" in sem.rule_text(rule_id)
    newer = sem.check(alloc(PitchAlignedSize=0x20000), adapter=adapter())  # from WDDM v2 the page's own set
    assert [f.message for f in newer if f.rule_id == PITCH_RULES[0]] == [
        "PitchAlignedSize = 0x20000 but no segment of SupportedWriteSegmentSet is pitch aligned"]


def test_pitchalignedsize_union_reading_is_in_the_table_rows():
    t = kmd.target("x64", OLD)
    raw = bytes(alloc(t, SupportedReadSegmentSet=0b111, SupportedWriteSegmentSet=0b101))
    out = io.StringIO()
    records = pipeline.Records(type_layout("DXGK_ALLOCATIONINFO", "x64", int(t.interface_version)), data=raw,
                               count="all")
    pipeline.run(records, pipeline.FindingRows(out, "csv"), adapter=adapter(OLD))
    rows = [r for r in csv.DictReader(io.StringIO(out.getvalue())) if r["rule_id"] == PITCH_RULES[1]]
    assert rows and all(UNION in r["message"] for r in rows)


def test_the_set_in_force_note_before_wddm2_labels_the_union_where_it_states_it():
    note = next(line for line in sem.explain(_old_allocations()[0]).splitlines() if "set in force" in line)
    assert note == f"  note: the supported set in force is {UNION} the allocation (the page gives a read set and a " \
                   f"write set, each for its operations))"
    assert sem.effective_segment_set(_old_allocations()[0]).note.startswith(READING)


def _allocation_checks():
    for abi in ("x64", "x86"):
        for version in kmd.InterfaceVersion:
            facts = adapter_facts(adapter(version.name, abi))
            present = type_layout("DXGK_ALLOCATIONINFO", abi, int(version)).by_path
            for check in (*CHECKS["DXGK_ALLOCATIONINFO"](abi, int(version), None),
                          *CHECKS["DXGK_ALLOCATIONINFO"](abi, int(version), facts)):
                yield version, check, leaves_read(check, present)


def test_every_check_that_reads_both_sets_as_one_before_wddm2_says_it_is_a_reading():
    both = {"SupportedReadSegmentSet", "SupportedWriteSegmentSet"}
    seen = set()
    for version, check, read in _allocation_checks():
        if version < kmd.InterfaceVersion.WDDM2_0 and both <= read:
            seen.add(check.rule_id)
            assert READING in check.message, (check.rule_id, version.name)
    assert set(PITCH_RULES) <= seen  # the guard sees the rules the issue names


def test_a_placement_before_wddm2_says_the_union_is_a_reading():
    t = kmd.target("x64", OLD)
    (f,) = sem.check(sem.Placement(alloc(t, SupportedReadSegmentSet=0b001, SupportedWriteSegmentSet=0b010), 3))
    assert "[reading] before WDDM v2 a segment of either set supports the allocation" in f.message


@pytest.mark.parametrize("rule_id", sorted(sem.RULES))
def test_rule_text_shows_every_reading_of_its_rule(rule_id):
    rule = sem.RULES[rule_id]
    messages = [c.message for version, c, _read in _allocation_checks() if c.rule_id == rule_id]
    for name, build in CHECKS.items():
        if name != "DXGK_ALLOCATIONINFO":
            for version in kmd.InterfaceVersion:
                if name in kmd.target("x64", version).types:
                    messages += [c.message for c in build("x64", int(version), None) if c.rule_id == rule_id]
    if rule.reading or any(READING in m for m in messages):
        assert READING in sem.rule_text(rule_id), rule_id
    if rule.reading:
        assert f"{READING} {rule.reading}" in sem.rule_text(rule_id)


@pytest.mark.parametrize("version", [v.name for v in kmd.InterfaceVersion if v < kmd.InterfaceVersion.WDDM2_0])
def test_bit_31_and_id_31_before_wddm2_say_they_are_read_as_a_segment_where_the_kit_names_system_memory(version):
    # the kit defines DXGK_SEGMENT_ID_SYSTEMMEMORY / _SET_SYSTEMMEMORY from WIN7; the package reads them from WDDM2_0
    t = kmd.target("x64", version)
    value = alloc(t, SupportedReadSegmentSet=0x80000005, SupportedWriteSegmentSet=0x80000005, preferred=(1, 31))
    texts = [m for p, m in sem.field_meanings(value).items() if p in ("SupportedReadSegmentSet",
                                                                         "PreferredSegment.SegmentId1")]
    texts += [f.message for f in sem.check(value, adapter=adapter(version))
              if f.rule_id in ("ALLOCINFO.SET_UNKNOWN_SEGMENT", "ALLOCINFO.PREFERRED_NOT_SUPPORTED")]
    assert len(texts) == 6  # two meanings; preferred id 31 and bit 31 unknown, each for the read and the write set
    defined = t.interface_version >= kmd.InterfaceVersion.WIN7
    assert all((READING in text) == defined for text in texts), texts
