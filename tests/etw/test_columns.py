"""The million-event path: packed records, decode_array, column_findings; and --format output."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from d3dkmddi_py import etw, target
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw.model import tracker as model
from d3dkmddi_py.etw.outputs import tables
from d3dkmddi_py.samples import DIRECTORY, etw_build

from .helpers import alloc_fields, run, trace, tracerpt_event

SAMPLE = DIRECTORY / etw_build.FILE


@pytest.mark.parametrize("version", ["WDDM1_3", "WDDM2_0", "WDDM3_0", "WDDM3_2"])
def test_column_findings_equal_the_per_event_checks(version):
    t = target("x64", version)
    events = list(etw.read(SAMPLE))
    tracker = etw.Tracker(t)
    for e in events:
        if e.event == "ReportSegment":
            tracker.apply(e)
    adapter, _note = tracker.view(next(e.adapter for e in events if e.event == "ReportSegment"))
    columns, rows = tables.allocation_columns(events, target=t)
    assert len(rows) == columns.count == sum(1 for e in events if e.event == "AdapterAllocation" and e.opcode != "Stop")
    by_row = {}
    for row, rule_id, _sev, field, value in model.findings_rows(columns, adapter=adapter):
        by_row.setdefault(row, []).append((rule_id, field, value))
    for i, e in enumerate(rows):
        single = tracker.check(e.adapter, "DXGK_ALLOCATIONINFO", tracker.packer.record("DXGK_ALLOCATIONINFO", e.fields))
        assert sorted(by_row.get(i, [])) == sorted((f.rule_id, f.field, f.value) for f in single), e.number
    assert by_row  # the sample breaks rules


def read_tables(directory, fmt: str) -> dict:
    """table -> list of row dicts, every integer as int (CSV decimal, JSON "0x..." for hex columns)."""
    out = {}
    for name in ("segments", "allocations", "findings"):
        path = directory / f"{name}.{fmt}"
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(path.read_text())))
            header = path.read_text().split("\n", 1)[0].split(",")
        elif fmt == "jsonl":
            rows = [json.loads(line) for line in path.read_text().splitlines()]
            header = list(rows[0]) if rows else None
        else:
            pq = pytest.importorskip("pyarrow.parquet")
            import pyarrow as pa

            table = pq.read_table(path)
            if "time" in table.column_names:  # a timestamp[ns, UTC]: its nanoseconds
                table = table.set_column(1, "time", table.column("time").cast(pa.int64()))
            rows, header = table.to_pylist(), table.column_names
        out[name] = (header, [{k: _value(k, v) for k, v in row.items()} for row in rows])
    return out


def _value(name, v):
    """A cell as a Python value: "0x..." and decimal text int, true/false bool, the ISO time nanoseconds
    (read by NumPy, not by the package), the ms float."""
    if isinstance(v, str):
        if name == "time":
            assert v.endswith("Z") and len(v) == 30, v  # 2026-11-23T09:15:02.174837013Z
            return int(np.datetime64(v[:-1], "ns").astype(np.int64))
        if name == "ms":
            return float(v) if v else None
        if v.startswith("0x"):
            return int(v, 16)
        if v.lstrip("-").isdigit():
            return int(v)
        if v in ("true", "false"):
            return v == "true"
        return v if v else None
    return v


def test_tables_carry_the_findings_json_reports(tmp_path):
    json_out, _ = run(["sample", "--json"])
    expected = sorted((o["number"], f["rule_id"], f["severity"], f["field"], f["message"])
                      for o in map(json.loads, json_out.splitlines()) for f in o["findings"])
    _, status = run(["sample", "--format", "csv", "-o", str(tmp_path)])
    tables = read_tables(tmp_path, "csv")
    header, rows = tables["findings"]
    assert header == ["number", "rule_id", "severity", "field", "message"] and status == 1
    assert sorted((r["number"], r["rule_id"], r["severity"], r["field"], r["message"]) for r in rows) == expected
    per_event = {}
    for n, _rule, severity, *_ in expected:
        per_event.setdefault(n, [0, 0])[severity == "warning"] += 1
    for table in ("segments", "allocations"):
        for r in tables[table][1]:
            assert [r["errors"], r["warnings"]] == per_event.get(r["number"], [0, 0])


def test_tables_rows_and_columns(tmp_path):
    run(["sample", "--format", "jsonl", "-o", str(tmp_path)])
    tables = read_tables(tmp_path, "jsonl")
    events = list(etw.read(SAMPLE))
    segs, allocs = tables["segments"][1], tables["allocations"][1]
    assert [r["number"] for r in segs] == [e.number for e in events if e.event == "ReportSegment"]
    assert [r["number"] for r in allocs] == [e.number for e in events if e.event == "AdapterAllocation"]
    by_number = {e.number: e for e in events}
    for r in allocs:
        e = by_number[r["number"]]
        assert (r["opcode"], r["adapter"], r["hDxgGlobalAlloc"], r["AllocationFlags"]) == \
            (e.opcode, e.adapter, e.fields["hDxgGlobalAlloc"], int(e.fields["Flags"]))
        # the decoded structure, as decode names its leaves: PreferredSegment decoded, Flags by bit
        assert r["PreferredSegment.Value"] == e.fields["PreferredSegment"]
        assert r["PreferredSegment.SegmentId0"] == e.fields["PreferredSegment"] & 0x1F
        assert r["Size"] == e.fields["allocSize"] and r["AllocationPriority"] == e.fields["Priority"]
        assert r["UsageHint.v1.Width"] == e.fields["Width"]
    header = tables["allocations"][0]
    assert header[:6] == ["number", "time", "ms", "opcode", "process", "adapter"] and \
        header[-2:] == ["errors", "warnings"]
    assert "FlagsWddm2.CpuVisible" in header and "pPrivateDriverData" not in header  # no event fills it


def test_the_same_columns_and_values_in_every_format(tmp_path):
    pytest.importorskip("pyarrow")
    got = {}
    for fmt in ("csv", "jsonl", "parquet"):
        run(["sample", "--format", fmt, "-o", str(tmp_path / fmt)])
        got[fmt] = read_tables(tmp_path / fmt, fmt)
    assert got["csv"] == got["jsonl"] == got["parquet"]


def test_parquet_types(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    _, status = run(["sample", "--format", "parquet", "--output", str(tmp_path)])
    allocations = pq.read_table(tmp_path / "allocations.parquet")
    assert status == 1 and allocations.num_rows == 41
    assert allocations.schema.field("hDxgGlobalAlloc").type == "uint64"
    assert allocations.schema.field("number").type == "int64"
    json_out, _ = run(["sample", "--json"])
    found = sum(len(json.loads(line)["findings"]) for line in json_out.splitlines())
    assert pq.read_table(tmp_path / "findings.parquet").num_rows == found == 21


def test_a_trace_without_findings_still_gets_every_table(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(trace(tracerpt_event(33, alloc_fields())))
    _, status = run([str(p), "--format", "csv", "-o", str(tmp_path / "out")])
    assert status == 0
    assert (tmp_path / "out" / "findings.csv").read_text() == "number,rule_id,severity,field,message\n"
    assert (tmp_path / "out" / "segments.csv").read_text().startswith("number,time,ms,opcode,process,adapter,")


def test_output_may_not_be_the_input(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(trace(tracerpt_event(33, alloc_fields())))
    with pytest.raises(Exception, match="not a directory"):
        run([str(p), "--format", "csv", "--output", str(p)])
    out = tmp_path / "out"
    out.mkdir()
    (out / "allocations.csv").symlink_to(p)  # a table over the input, through a symlink
    with pytest.raises(Exception, match="t.xml"):
        run([str(p), "--format", "csv", "--output", str(out)])
    assert p.read_bytes().startswith(b"<Events>")
    assert sorted(x.name for x in out.iterdir()) == ["allocations.csv"]  # nothing half-written is left


def test_option_conflicts():
    with pytest.raises(EtwInputError, match="not both"):
        run(["sample", "--json", "--format", "csv"])
    with pytest.raises(EtwInputError, match="--output is for --format"):
        run(["sample", "--output", "x.csv"])
    for argv in (["sample", "--format", "csv"], ["sample", "--format", "csv", "-o", "-"]):
        with pytest.raises(EtwInputError, match="give --output DIR"):
            run(argv)


def test_standard_input(monkeypatch):
    data = trace(tracerpt_event(33, alloc_fields(Priority=0)))
    out, status = run(["-", "--json"], stdin=data, monkeypatch=monkeypatch)
    (obj,) = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and [f["rule_id"] for f in obj["findings"]] == ["ALLOCINFO.PRIORITY_ZERO"]


WITHOUT_PYARROW = """
import importlib.util, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] == "pyarrow" else real(name, *a)
sys.modules["pyarrow"] = None  # an import of it fails as if it were not installed
sys.argv = ["d3dkmddi", *{argv!r}]
from d3dkmddi_py.__main__ import main
sys.exit(main())
"""


@pytest.mark.parametrize("argv", [["etw", "sample", "--format", "parquet", "-o", "OUT"],
                                  ["decode", "DXGK_SEGMENTFLAGS", "0x485", "--format", "parquet", "-o", "OUT/x"]],
                         ids=["etw", "decode"])
def test_parquet_without_pyarrow_is_one_line(argv, tmp_path):
    import subprocess
    import sys

    argv = [str(tmp_path / "out") if a == "OUT" else str(tmp_path / "x") if a == "OUT/x" else a for a in argv]
    p = subprocess.run([sys.executable, "-c", WITHOUT_PYARROW.format(argv=argv)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and p.stdout == "", p
    assert p.stderr == "d3dkmddi: error: --format parquet needs pyarrow, which is not installed; pip install " \
                       "'d3dkmddi_py[arrow]' " \
                       "(or use --format csv or jsonl)\n", p.stderr
    assert not (tmp_path / "out").exists()
