"""The pipeline's two ways through a chunk print the same thing: record by record (small inputs, or no
NumPy) and column-wise (rules on NumPy columns, records grouped by the rules they break)."""
from __future__ import annotations

import io

import pytest

from d3dkmddi_py import pipeline
from d3dkmddi_py.resolve import resolve_layout
from d3dkmddi_py.samples import sample_adapter
from tests.pipeline.cases import CASES, SINKS, blob, printed


@pytest.mark.parametrize("sink_name", list(SINKS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1][0]}-{c[1][1]}" if isinstance(c, tuple) else c)
def test_column_wise_equals_record_by_record(case, sink_name, monkeypatch):
    name, where = case
    layout = resolve_layout(name, where)
    data = blob(layout.size, 700, seed=len(name) + len(where[1]))
    adapter = sample_adapter() if (name, where) == ("DXGK_ALLOCATIONINFO", ("x64", "WDDM3_0")) else None
    by_record = printed(layout, data, sink_name, adapter, monkeypatch, column_wise=False)
    by_column = printed(layout, data, sink_name, adapter, monkeypatch, column_wise=True)
    assert by_column == by_record
    assert "error" in by_record or name == "DXGK_SEGMENTBANKPREFERENCE"  # the rules did fire


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{c[0]}-{c[1][0]}-{c[1][1]}")
def test_findings_csv_reads_back_as_the_rows(case):
    """The hand-built CSV rows are what csv.reader reads back: every finding, cells quoted right."""
    import csv

    name, where = case
    layout = resolve_layout(name, where)
    data = blob(layout.size, 700, seed=7)
    out = io.StringIO()
    pipeline.run(pipeline.Records(layout, data=data, count="all"), pipeline.FindingRows(out, "csv"), values=False)
    expected = [list(map(str, row)) for chunk in pipeline.Records(layout, data=data, count="all").chunks()
                for row in pipeline.FindingRows(io.StringIO(), "jsonl")._rows(pipeline.decode_chunk(chunk))]
    got = list(csv.reader(io.StringIO(out.getvalue())))
    assert got[0] == list(pipeline.FindingRows.FIELDS) and got[1:] == expected and len(expected) > 100
    assert any("," in row[5] for row in got[1:])  # messages with commas were quoted
