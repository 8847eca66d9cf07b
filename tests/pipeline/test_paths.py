"""The pipeline's two ways through a chunk print the same thing: record by record (small inputs, or no
NumPy) and column-wise (rules on NumPy columns, records grouped by the rules they break)."""
from __future__ import annotations

import io

import pytest

from d3dkmddi_py import pipeline
from d3dkmddi_py.bulk.table import Table
from d3dkmddi_py.resolve import resolve_layout
from d3dkmddi_py.samples import sample_adapter
from ..conftest import require
from tests.pipeline.cases import CASES, SINKS, blob, printed

try:
    import pyarrow.parquet as pq
except ImportError:  # the test extra installs it; under CI its absence fails
    pq = None


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
    # the rules did fire (DXGK_QUERYSEGMENTIN has none: its AgpFlags is the OS's, not a driver's segment)
    assert "error" in by_record or name in ("DXGK_SEGMENTBANKPREFERENCE", "DXGK_QUERYSEGMENTIN")


def _findings(layout, data: bytes) -> list:
    """(record, offset, rule_id, severity, field, message) of every finding, from the Finding objects."""
    return [[chunk.start + row, chunk.offset + row * layout.size, f.rule_id, f.severity.value, f.field, f.message]
            for chunk in pipeline.Records(layout, data=data, count="all").chunks()
            for decoded in [pipeline.decode_chunk(chunk)] for row in range(chunk.count)
            for f in pipeline.findings_of(decoded, row)]


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{c[0]}-{c[1][0]}-{c[1][1]}")
def test_findings_csv_reads_back_as_the_rows(case):
    """The CSV rows are what csv.reader reads back: every finding, cells quoted right."""
    import csv

    name, where = case
    layout = resolve_layout(name, where)
    data = blob(layout.size, 700, seed=7)
    out = io.StringIO()
    pipeline.run(pipeline.Records(layout, data=data, count="all"), pipeline.FindingRows(out, "csv"), values=False)
    expected = [list(map(str, row)) for row in _findings(layout, data)]
    got = list(csv.reader(io.StringIO(out.getvalue())))
    assert got[0] == list(pipeline.FindingRows.FIELDS) and got[1:] == expected and len(expected) > 100
    assert any("," in row[5] for row in got[1:])  # messages with commas were quoted


@pytest.mark.parametrize("column_wise", [True, False])
@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{c[0]}-{c[1][0]}-{c[1][1]}")
def test_validate_tables_are_the_one_writers_in_every_format(case, column_wise, monkeypatch, tmp_path):
    """Issue 23: FindingRows wrote its own CSV and JSON lines.  Now bulk.table's writers write all three
    formats: the same rows read back from each, JSON lines in the writers' compact form, Parquet typed."""
    import json

    from d3dkmddi_py.bulk.table import JsonlWriter

    require(pq is not None, "pyarrow (the test extra)")

    monkeypatch.setattr(pipeline.decode, "NUMPY_FROM", 1 if column_wise else 1 << 40)
    name, where = case
    layout = resolve_layout(name, where)
    data = blob(layout.size, 700, seed=11)
    expected = _findings(layout, data)
    fields = list(pipeline.FindingRows.FIELDS)
    out = io.StringIO()
    pipeline.run(pipeline.Records(layout, data=data, count="all"), pipeline.FindingRows(out, "jsonl"), values=False)
    lines = out.getvalue().splitlines()
    assert [list(json.loads(line).values()) for line in lines] == expected and len(expected) > 100
    assert all(list(json.loads(line)) == fields for line in lines)
    plain = io.StringIO()  # the writer given plain columns writes the same bytes
    JsonlWriter(plain).write(Table(fields, ["int", "int", "text", "text", "text", "text"], list(zip(*expected))))
    assert plain.getvalue() == out.getvalue()
    with open(tmp_path / "f.parquet", "wb") as f:
        pipeline.run(pipeline.Records(layout, data=data, count="all"), pipeline.FindingRows(f, "parquet"),
                     values=False)
    back = pq.read_table(tmp_path / "f.parquet")
    assert back.column_names == fields and [str(t) for t in back.schema.types] == ["int64"] * 2 + ["string"] * 4
    assert [list(row.values()) for row in back.to_pylist()] == expected


def test_validate_table_with_no_finding_has_its_columns(tmp_path):
    require(pq is not None, "pyarrow (the test extra)")
    layout = resolve_layout("DXGK_SEGMENTFLAGS", ("x64", "WDDM3_2"))
    for fmt, want in (("csv", ",".join(pipeline.FindingRows.FIELDS) + "\n"), ("jsonl", "")):
        out = io.StringIO()
        pipeline.run(pipeline.Records(layout, data=bytes(4000), count="all"), pipeline.FindingRows(out, fmt))
        assert out.getvalue() == want
    with open(tmp_path / "f.parquet", "wb") as f:
        pipeline.run(pipeline.Records(layout, data=bytes(4000), count="all"), pipeline.FindingRows(f, "parquet"))
    assert pq.read_table(tmp_path / "f.parquet").column_names == list(pipeline.FindingRows.FIELDS)
