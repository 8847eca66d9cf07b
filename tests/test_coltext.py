"""Distinct records (random words: nothing repeats, ~5 findings each) are printed column-wise: a flag
word's meanings, names and rule messages come from its columns, and the text is the same as record
by record."""
from __future__ import annotations

import io

import numpy as np
import pytest

from d3dkmddi_py import pipeline
from d3dkmddi_py.bulk import columns_of_bytes
from d3dkmddi_py.render import flag_summary, summary_column
from d3dkmddi_py.resolve import resolve_layout
from d3dkmddi_py.semantics._view import describe_flags
from d3dkmddi_py.semantics.explain import column_meanings, meanings_of
from tests.pipeline.cases import CASES, SINKS, printed

FLAG_CASES = [("DXGK_SEGMENTFLAGS", ("x64", "WDDM3_2")), ("DXGK_SEGMENTFLAGS", ("x86", "WIN7")),
              ("DXGK_SEGMENTFLAGS", ("x64", "VISTA")), ("DXGK_ALLOCATIONINFOFLAGS", ("x64", "WDDM1_3")),
              ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", ("arm64", "WDDM2_7")),
              ("DXGK_ALLOCATIONINFOFLAGS2", ("x64", "WDDM3_2"))]


def words(count: int, seed: int) -> bytes:
    """Distinct 32-bit words, with the edges (none and every bit set) among them."""
    rng = np.random.default_rng(seed)
    out = np.unique(rng.integers(0, 2**32, count, dtype=np.uint32))
    out[:2] = (0, 0xFFFFFFFF)
    rng.shuffle(out)
    return out.astype("<u4").tobytes()


def case_id(case) -> str:
    return f"{case[0]}-{case[1][0]}-{case[1][1]}"


@pytest.mark.parametrize("case", FLAG_CASES, ids=case_id)
def test_column_meanings_are_each_records_meanings(case):
    layout = resolve_layout(*case)
    data = words(3000, 1)
    columns = columns_of_bytes(layout, data)
    got = column_meanings(layout, columns, np)
    for row in range(columns.count):
        mine = {}
        for path, col in got.items():
            text = (col[1] if col[0][row] else None) if type(col) is tuple else col[row]
            if text is not None:
                mine[path] = text
        assert list(mine.items()) == list(meanings_of(layout, data[4 * row:4 * row + 4]).items())


@pytest.mark.parametrize("case", FLAG_CASES, ids=case_id)
def test_flag_texts_of_a_column_are_each_words_texts(case):
    layout = resolve_layout(*case)
    data = words(2000, 2)
    columns = columns_of_bytes(layout, data)
    values = [layout.values(data[4 * row:4 * row + 4]) for row in range(columns.count)]
    flags_of = next(line.flags_of for line in layout.lines if line.flags_of)
    assert summary_column(np, columns, flags_of) == [flag_summary(v, flags_of) for v in values]
    described = describe_flags(layout.c_name, columns["Value"], layout.abi, layout.version, "none")
    assert described == [describe_flags(layout.c_name, v["Value"], layout.abi, layout.version, "none")
                         for v in values]


def distinct_records(size: int, count: int, seed: int) -> bytes:
    """Records with no repeats (sparse bytes, so rules both fire and hold)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size * count, dtype=np.uint8)
    raw[rng.random(raw.size) < 0.5] = 0
    records = np.unique(raw.reshape(count, size), axis=0)
    return records[rng.permutation(len(records))].tobytes()


@pytest.mark.parametrize("sink_name", list(SINKS))
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_distinct_records_column_wise_equal_record_by_record(case, sink_name, monkeypatch):
    from d3dkmddi_py.samples import sample_adapter

    name, where = case
    layout = resolve_layout(name, where)
    data = distinct_records(layout.size, 600, seed=len(name))
    adapter = sample_adapter() if (name, where) == ("DXGK_ALLOCATIONINFO", ("x64", "WDDM3_0")) else None
    by_record = printed(layout, data, sink_name, adapter, monkeypatch, column_wise=False)
    assert printed(layout, data, sink_name, adapter, monkeypatch, column_wise=True) == by_record


@pytest.mark.parametrize("sink_name", list(SINKS))
def test_distinct_flag_words_are_not_read_one_by_one(sink_name, monkeypatch):
    """Column-wise, no record of a flag word is viewed alone: not for a rule's message, nor for its
    meanings (that per-record work made random words 5x slower than a realistic mix)."""
    layout = resolve_layout("DXGK_SEGMENTFLAGS", ("x64", "WDDM3_2"))
    data = words(5000, 3)

    def alone(*args, **kwargs):
        raise AssertionError("a record was read on its own")

    monkeypatch.setattr(pipeline.Decoded, "view", alone)
    for sink_module in (pipeline.text, pipeline.jsonl):  # every sink that asks for a record's meanings
        monkeypatch.setattr(sink_module, "_meanings", alone)
    out = io.StringIO()
    summary = pipeline.run(pipeline.Records(layout, data=data, count="all"), SINKS[sink_name](out, None),
                           values="decode" in sink_name)
    assert summary.records == len(data) // 4 and summary.errors > summary.records
