"""Issue 22, "two union members shown side by side say which member the value is read as and why":
RecommendedPageSize 0x1 printed beside Alignment 0x10000 (the same bytes) says it is read as Alignment."""
from __future__ import annotations

import numpy as np

import d3dkmddi_py as kmd
from d3dkmddi_py import samples
from d3dkmddi_py.dttext import column_bodies, render_record, row_plan, with_arm_notes
from d3dkmddi_py.layout import type_layout, union_arms
from d3dkmddi_py.pipeline import report
from d3dkmddi_py.semantics.explain import meanings_of

TEXTURE = 0x210  # the sample's "texture with a 64 KB recommended page size": Alignment 0x10000


def _line(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.split(":")[0].split()[-1:] == [name])


def _texture(version: str) -> str:
    return report("DXGK_ALLOCATIONINFO", path=samples.ALLOCATIONS_PATH, target=("x64", version), offset=TEXTURE,
                  adapter=samples.sample_adapter(("x64", version)))


def test_recommended_page_size_beside_alignment_says_it_is_read_as_alignment():
    text = _texture("WDDM3_0")
    assert "0x10000 (65536)  // 64 KB alignment" in _line(text, "Alignment")
    line = _line(text, "RecommendedPageSize")
    assert line.split("//")[0].rstrip().endswith("0x1 (1)")
    assert line.split("// ")[1] == ("same bytes as Alignment (one union): read as Alignment, the member this "
                                    "record's meanings explain")
    assert "read as Alignment" in _line(text, "MinimumPageSize")


def test_where_the_page_size_codes_exist_both_members_say_their_own_reading():
    """From WDDM3_2 (DXGK_PAGESIZE) the page-size member has a meaning of its own: no note."""
    text = _texture("WDDM3_2")
    assert "DXGK_PAGESIZE" in _line(text, "RecommendedPageSize") and "read as" not in text


def test_the_note_names_the_member_that_has_a_meaning_either_way():
    plan = row_plan(type_layout("DXGK_ALLOCATIONINFO", "x64", 0xF003))
    notes = with_arm_notes(plan, {"MinimumPageSize": "a code"})
    assert notes["Alignment"].startswith("same bytes as MinimumPageSize/RecommendedPageSize (one union)")
    assert "RecommendedPageSize" not in notes  # its own member is explained
    assert with_arm_notes(plan, {}) == {}  # nothing explained: nothing read as anything


def test_flag_words_and_large_integers_get_no_note():
    """A flag word's bits beside its Value (the idiom) are not two readings; nor are a LARGE_INTEGER's
    halves when nothing explains either (its QuadPart explained, they say they are read as it); Flags beside
    FlagsWddm2 each carry their own meaning."""
    assert union_arms(type_layout("DXGK_SEGMENTFLAGS", "x64", int(kmd.NEWEST))) == {}
    two = kmd.target("x64", "WDDM3_0").DXGK_SEGMENTDESCRIPTOR2()  # no page: nothing explains its addresses
    assert "read as" not in report("DXGK_SEGMENTDESCRIPTOR2", bytes(two), target=("x64", "WDDM3_0"))
    text = report("DXGK_SEGMENTDESCRIPTOR", path=samples.SEGMENTS_PATH, target=("x64", "WDDM3_0"), count="all")
    noted = {line.split(":")[0].split()[-1] for line in text.splitlines() if "read as" in line}
    assert noted == {"LowPart", "HighPart"}
    assert all("read as BaseAddress.QuadPart" in line or "read as CpuTranslatedAddress.QuadPart" in line
               for line in text.splitlines() if "read as" in line)
    assert "read as" not in _line(_texture("WDDM3_0"), "CpuVisible")


def test_the_column_form_writes_the_same_notes():
    """Columns (decode --count all): per-row meanings, and a meaning given as (rows, text), get the notes
    the record form gives."""
    layout = type_layout("DXGK_ALLOCATIONINFO", "x64", 0xF003)
    data = samples.ALLOCATIONS_PATH.read_bytes()
    count = len(data) // layout.size
    raws = [data[i * layout.size:(i + 1) * layout.size] for i in range(count)]
    columns = kmd.bulk.decode_array("DXGK_ALLOCATIONINFO", data, target=("x64", "WDDM3_0"))
    plan = row_plan(layout)
    per_row = [meanings_of(layout, raw) for raw in raws]
    keys = dict.fromkeys(k for m in per_row for k in m)
    meanings = {k: [m.get(k) for m in per_row] for k in keys}
    bodies = column_bodies(np, plan, columns, meanings, count, [])
    for row, raw in enumerate(raws):
        assert bodies[row] == render_record(layout, layout.values(raw), meanings=per_row[row])
    explained = sum("Alignment" in m for m in per_row)  # the page gives an Alignment of 0 no meaning
    assert 0 < explained < count and sum("read as Alignment" in body for body in bodies) == explained
    odd = np.arange(count) % 2
    shared = {"Alignment": (odd, "a shared meaning")}
    bodies = column_bodies(np, plan, columns, shared, count, [])
    for row, raw in enumerate(raws):
        assert bodies[row] == render_record(layout, layout.values(raw),
                                            meanings={"Alignment": "a shared meaning"} if odd[row] else {})
