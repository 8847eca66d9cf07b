"""The WinDbg-style text and the JSON of a struct.

Expected lines are typed by hand from the dt format (``+0x000 Aperture : Pos 0, 1 Bit``)
and definitions.md offsets; values read from bytes by render are checked against the
ctypes classes' own reads for random blobs.
"""
from __future__ import annotations

import ctypes

import pytest
from hypothesis import given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py._classes import _read
from d3dkmddi_py.dttext import layout_text, record_title, render_text
from d3dkmddi_py.jsonformat import layout_json, record_json
from d3dkmddi_py.render import field_values, finding_json, format_number, value_names
from d3dkmddi_py.semantics import Finding, Reference, Severity

X64 = kmd.target("x64", "WDDM3_2")


def flags(value, tgt=X64):
    return tgt.DXGK_SEGMENTFLAGS.from_buffer_copy(value.to_bytes(4, "little"))


def test_number_formats():
    assert format_number(0x485, 4, "UINT") == "0x485 (1157)"
    assert format_number(0, 4, "UINT") == "0x0 (0)"
    assert format_number(-1, 4, "LONG") == "0xffffffff (-1)"
    assert format_number(0xFFFFF8012A3B4000, 8, "VOID*") == "0xfffff801`2a3b4000"
    assert format_number(0x8A3B4000, 4, "HANDLE") == "0x8a3b4000"


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


def _finding(field, rule="R.TEST", severity=Severity.ERROR):
    return Finding(rule, severity, field, 1, f"{field} is wrong", Reference("page", "The sentence."))


def test_findings_sit_under_their_field():
    f = flags(0x3)
    lines = render_text(f, findings=[_finding("Agp"), _finding(None, "R.LOOSE", Severity.WARNING)]).splitlines()
    assert lines[0].strip() == "! ^ warning R.LOOSE: None is wrong"
    agp = next(i for i, ln in enumerate(lines) if ln.split()[1:2] == ["Agp"])
    assert lines[agp + 1].strip() == "^ error R.TEST: Agp is wrong"
    assert lines[agp + 2].strip() == '"The sentence." (page)'


def test_finding_with_a_relative_field_name_finds_the_leaf():
    info = X64.DXGK_ALLOCATIONINFO()
    lines = render_text(info, findings=[_finding("AllocationPriority"), _finding("Bank0")]).splitlines()
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


def test_finding_json_is_plain():
    j = finding_json(_finding("Agp"))
    assert j == {"rule_id": "R.TEST", "severity": "error", "field": "Agp", "value": 1, "message": "Agp is wrong",
                 "reference": {"page": "page", "sentence": "The sentence."}}


def test_record_json_keys_and_bytes():
    f = flags(0x485)
    obj = record_json(f, c_name="DXGK_SEGMENTFLAGS", tgt=X64, index=2, offset=8, address=None)
    assert list(obj) == ["type", "target", "index", "offset", "address", "size", "bytes", "fields", "names",
                         "meanings", "findings"]
    assert obj["bytes"] == "85040000" and obj["size"] == 4
    assert obj["target"] == {"abi": "x64", "interface_version": "WDDM3_2", "interface_version_value": 0x11007,
                             "label": "x64 WDDM3_2 (0x11007)"}
    assert obj["fields"]["DirectFlip"] == 1 and obj["names"]["Value"].startswith("Aperture|")


def test_layout_json_masks():
    obj = layout_json(X64.DXGK_SEGMENTBANKPREFERENCE, X64)
    masks = {leaf["path"]: leaf["mask"] for leaf in obj["leaves"]}
    # the DXGK_SEGMENTBANKPREFERENCE page's bit ranges: Bank1 bits 8-14, Direction3 bit 31
    assert masks["Bank1"] == 0x7F00 and masks["Direction3"] == 0x80000000


TARGETS = [kmd.target(abi, v) for abi in kmd.ABIS for v in ("WIN7", "WDDM2_0", "WDDM3_2")]


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


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(TARGETS), st.data())
def test_values_read_from_bytes_match_ctypes(tgt, data):
    names = sorted(n for n, c in tgt.types.items() if hasattr(c, "_leaves_") and not n.startswith("_"))
    cls = tgt.types[data.draw(st.sampled_from(names))]
    blob = data.draw(st.binary(min_size=ctypes.sizeof(cls), max_size=ctypes.sizeof(cls)))
    obj = cls.from_buffer_copy(blob)
    assert field_values(obj) == {leaf.path: _read(obj, leaf.path) for leaf in cls._leaves_}
    text = render_text(obj)
    assert len(text.splitlines()) >= len(cls._leaves_)
