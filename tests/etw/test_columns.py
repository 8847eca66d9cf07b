"""The million-event path: packed records, decode_array, column_findings; and --format output."""
from __future__ import annotations

import csv
import io
import json

import pytest

from d3dkmddi_py import etw, target
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw import bulkpath, model
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
    adapter, _note = tracker.view(events[0].adapter)
    columns, rows = bulkpath.allocation_columns(events, target=t)
    assert len(rows) == columns.count == sum(1 for e in events if e.event == "AdapterAllocation" and e.opcode != "Stop")
    by_row = {}
    for row, rule_id, _sev, field, value in model.findings_rows(columns, adapter=adapter):
        by_row.setdefault(row, []).append((rule_id, field, value))
    for i, e in enumerate(rows):
        single = tracker.check_allocation(e.adapter, tracker.packer.allocation(e.fields))
        assert sorted(by_row.get(i, [])) == sorted((f.rule_id, f.field, f.value) for f in single), e.number
    assert by_row  # the sample breaks rules


def test_csv_and_jsonl_rows_carry_the_same_findings_as_json():
    json_out, _ = run(["sample", "--json"])
    expected = {o["number"]: sorted(f["rule"] for f in o["findings"]) for o in map(json.loads, json_out.splitlines())
                if o["event"] == "AdapterAllocation"}
    out, status = run(["sample", "--format", "jsonl"])
    got = {o["number"]: sorted(f["rule"] for f in o["findings"]) for o in map(json.loads, out.splitlines())}
    assert got == expected and status == 1
    out, _ = run(["sample", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {int(r["number"]): sorted(x.split("@")[0] for x in r["findings"].split(";") if x) for r in rows} == expected
    assert rows[0]["hDxgGlobalAlloc"].startswith("0x")


def test_parquet_to_a_path(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "rows.parquet"
    _, status = run(["sample", "--format", "parquet", "--output", str(out)])
    table = pq.read_table(out)
    assert status == 1 and table.num_rows == 41 and "findings" in table.column_names
    assert table.schema.field("hDxgGlobalAlloc").type == "uint64"


def test_output_may_not_be_the_input(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(trace(tracerpt_event(33, alloc_fields())))
    with pytest.raises(Exception, match="t.xml"):
        run([str(p), "--format", "csv", "--output", str(p)])
    assert p.read_bytes().startswith(b"<Events>")


def test_option_conflicts():
    with pytest.raises(EtwInputError, match="not both"):
        run(["sample", "--json", "--format", "csv"])
    with pytest.raises(EtwInputError, match="--output is for --format"):
        run(["sample", "--output", "x.csv"])


def test_standard_input(monkeypatch):
    data = trace(tracerpt_event(33, alloc_fields(Priority=0)))
    out, status = run(["-", "--json"], stdin=data, monkeypatch=monkeypatch)
    (obj,) = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and [f["rule"] for f in obj["findings"]] == ["ALLOCINFO.PRIORITY_ZERO"]
