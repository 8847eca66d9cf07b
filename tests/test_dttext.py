"""The dt -r text of a struct (dttext).

Expected lines are typed by hand from the dt format (``+0x000 Aperture : Pos 0, 1 Bit``)
and definitions.md offsets.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from d3dkmddi_py.dttext import column_bodies, layout_text, record_title, render_row, render_text, row_plan
from d3dkmddi_py.semantics.explain import column_meanings, meanings_of
from d3dkmddi_py.render import field_values, value_names
from d3dkmddi_py.semantics import Severity
from tests.records import TARGETS, X64, finding, flags, struct_columns


def test_bitfield_lines_of_segment_flags():
    text = render_text(flags(0x485))
    lines = text.splitlines()
    assert lines[0].split() == ["+0x000", "Aperture", ":", "Pos", "0,", "1", "Bit", "0x1", "(1)"]
    assert lines[10].split() == ["+0x000", "DirectFlip", ":", "Pos", "10,", "1", "Bit", "0x1", "(1)"]
    assert lines[-2].split() == ["+0x000", "Reserved", ":", "Pos", "22,", "10", "Bits", "0x0", "(0)"]
    assert lines[-1].split()[:5] == ["+0x000", "Value", ":", "UINT", "0x485"]
    assert lines[-1].endswith("Aperture|CpuVisible|PreservedDuringStandby|DirectFlip")


def test_title_line():
    assert record_title("DXGK_ALLOCATIONINFO", X64.label, 3, 0x108, 0xFFFFB80C4E2F1108, 88) == \
        "DXGK_ALLOCATIONINFO  x64 WDDM3_2 (0x11007)  [3] at +0x108 (ffffb80c`4e2f1108), 88 bytes"


def test_nesting_and_flattening_of_allocation_info():
    info = X64.DXGK_ALLOCATIONINFO()
    info.HintedBank.Bank0 = 2
    lines = render_text(info).splitlines()
    by_name = {}
    for ln in lines:
        by_name.setdefault(ln.split(":")[0].strip().split()[-1], []).append(ln)
    # anonymous union members sit at the top level, at the union's offset (definitions.md §5)
    assert by_name["Alignment"][0].startswith("   +0x00c Alignment")
    assert by_name["MinimumPageSize"][0].startswith("   +0x00c MinimumPageSize")
    assert by_name["RecommendedPageSize"][0].startswith("   +0x00e RecommendedPageSize")
    # a named member: a header, then its members indented with offsets relative to it
    assert by_name["HintedBank"][0].split() == ["+0x020", "HintedBank", ":", "DXGK_SEGMENTBANKPREFERENCE"]
    assert by_name["Bank0"][0].startswith("      +0x000 Bank0") and "0x2 (2)" in by_name["Bank0"][0]
    assert by_name["Flags2"][0].startswith("   +0x054 Flags2")


def test_arrays_list_every_element():
    lines = render_text(X64.DXGK_QUERYSEGMENTOUT5()).splitlines()
    assert lines[1].split() == ["+0x008", "Reserved", ":", "[4]", "UINT32"]
    # elements are nested under the array, their offsets relative to it, as for a nested member
    assert [ln.split()[:2] for ln in lines[2:6]] == [["+0x000", "[0]"], ["+0x004", "[1]"], ["+0x008", "[2]"],
                                                      ["+0x00c", "[3]"]]


def test_enum_fields_by_name():
    d = X64.DXGK_SEGMENTDESCRIPTOR5()
    d.SegmentType = 1
    d.SlabSize = 4
    text = render_text(d)
    assert "DXGK_SEGMENTTYPE_LOCAL" in text and "DXGK_PAGESIZE_64KB" in text
    d.SlabSize = 99
    assert "not a DXGK_PAGESIZE value" in render_text(d)
    assert value_names(d)["SegmentType"] == "DXGK_SEGMENTTYPE_LOCAL"


def test_signed_members():
    d = X64.DXGK_SEGMENTDESCRIPTOR()
    d.BaseAddress.QuadPart = -2
    assert "0xfffffffffffffffe (-2)" in render_text(d)
    assert field_values(d)["BaseAddress.HighPart"] == -1


def test_findings_sit_under_their_field():
    f = flags(0x3)
    lines = render_text(f, findings=[finding("Agp"), finding(None, "R.LOOSE", Severity.WARNING)]).splitlines()
    assert lines[0].strip() == "! ^ warning R.LOOSE: None is wrong"
    agp = next(i for i, ln in enumerate(lines) if ln.split()[1:2] == ["Agp"])
    assert lines[agp + 1].strip() == "^ error R.TEST: Agp is wrong"
    assert lines[agp + 2].strip() == '"The sentence." (page)'


def test_finding_with_a_relative_field_name_finds_the_leaf():
    info = X64.DXGK_ALLOCATIONINFO()
    lines = render_text(info, findings=[finding("AllocationPriority"), finding("Bank0")]).splitlines()
    assert lines[lines.index(next(ln for ln in lines if "AllocationPriority" in ln)) + 1].strip().startswith("^ error")
    assert lines[lines.index(next(ln for ln in lines if " Bank0 " in ln)) + 1].strip().startswith("^ error")


def test_meanings_follow_the_value():
    text = render_text(flags(0x1), meanings={"Aperture": "an aperture"})
    assert next(ln for ln in text.splitlines() if " Aperture " in ln).endswith("0x1 (1)  // an aperture")


def test_nonzero_keeps_headers_of_nested_members():
    info = X64.DXGK_ALLOCATIONINFO()
    info.PreferredSegment.SegmentId1 = 3
    lines = render_text(info, nonzero=True).splitlines()
    assert [ln.split()[1] for ln in lines] == ["PreferredSegment", "SegmentId1", "Value"]


@pytest.mark.parametrize("tgt", TARGETS, ids=lambda t: t.label)
def test_layout_text_offsets_add_up_to_every_leaf(tgt):
    """Relative offsets of nested lines, summed down the indentation, give each leaf's offset."""
    for name, cls in tgt.types.items():
        if name.startswith("_") or not hasattr(cls, "_leaves_"):
            continue
        bases, absolute = {}, []
        for line in layout_text(cls, tgt.label).splitlines()[1:]:
            depth = (len(line) - len(line.lstrip()) - 3) // 3
            offset = int(line.split()[0][1:], 16) + (bases[depth - 1] if depth else 0)
            bases[depth] = offset
            if "Pos " in line or not _is_header(line, cls):
                absolute.append(offset)
        assert absolute == [leaf.offset for leaf in cls._leaves_], name


def _is_header(line: str, cls) -> bool:
    kind = line.split(":", 1)[1].strip()
    return kind in ("struct", "union") or kind.startswith("[") or kind.replace("_", "").isupper() and \
        kind not in {leaf.c_type for leaf in cls._leaves_}


def test_a_meaning_on_a_member_header_sits_in_the_value_column():
    info = X64.DXGK_ALLOCATIONINFO()
    lines = render_text(info, meanings={"HintedBank": "a note"}).splitlines()
    header = next(ln for ln in lines if " HintedBank " in ln)
    leaf = next(ln for ln in lines if " Bank0 " in ln)
    assert header.endswith("  // a note")
    assert header.index("//") == leaf.index("0x0 (0)") + 2  # an empty value, then the note


@pytest.mark.parametrize("tgt", TARGETS, ids=lambda t: t.label)
def test_column_bodies_are_the_record_bodies(tgt):
    """Every struct: the column form's text is the record form's, meanings and findings under their lines."""
    count = 40
    for layout, data, columns in struct_columns(tgt, count):
        meanings = column_meanings(layout, columns, np) or {}
        plan = row_plan(layout)
        path = layout.leaves[-1].path
        hit = [row for row in range(count) if row % 3 == 0]
        found = [(path, hit, [f"{plan.pads[path]}^ error R.X: row {row}" for row in hit])]
        bodies = column_bodies(np, plan, columns, meanings, count, found)
        for row, body in enumerate(bodies):
            raw = data[row * layout.size:(row + 1) * layout.size]
            values = layout.values(raw)
            under = {path: [f"{plan.pads[path]}^ error R.X: row {row}"]} if row in hit else {}
            expected = render_row(plan, list(values.values()), under, [], meanings_of(layout, raw) if meanings else {},
                                  None)
            assert body == expected, (layout.c_name, row)


def test_nonzero_plans_follow_the_padding_not_the_lines_kept():
    """A nonzero listing pads to the lines it keeps; its plans are keyed by those widths, so a stream of
    records with ever other sets of non-zero flags reuses a few plans (one per set rebuilt a plan per
    record: 1M records took 174 s instead of 60)."""
    row_plan.cache_clear()
    rng = random.Random(3)
    for _ in range(500):
        render_text(flags(rng.getrandbits(32)), nonzero=True)
    assert row_plan.cache_info().misses <= 40  # distinct (name, kind) column widths; 2**22 sets of flags
