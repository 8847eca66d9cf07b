"""Issue 23, "Tables, typed" and the new tables: every table's time is a timestamp and ms a float from the
trace's start, pointers and handles 0x... in text and uint64 in Parquet, Booleans booleans, in every format;
Parquet row groups sized by rows; process_memory, live and processes hold the values the events give."""
from __future__ import annotations

import csv
import io
import json

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.bulk.table import ParquetWriter, Table, time_texts
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.etw.model.times import filetime_ns, milliseconds, time_ns
from d3dkmddi_py.samples import DIRECTORY, etw_build

from ..conftest import require
from .etl_hard import hard_trace
from .etl_readings import tables
from .etl_twin import Dxg, twin
from .helpers import ADAPTER, alloc_fields, run, seg_fields

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # the test extra installs it; under CI its absence fails
    pa = pq = None

SAMPLE = DIRECTORY / etw_build.FILE


@pytest.mark.parametrize("text, ns", [
    ("2026-11-23T10:15:02.124505365+0100", 1795425302124505365),  # tracerpt: nine digits, an offset
    ("2026-11-23T09:15:02.124505365Z", 1795425302124505365),
    ("2026-11-23T05:15:02.1245053-04:00", 1795425302124505300),  # Event Viewer's seven digits, ±hh:mm
    ("2026-11-23T09:15:02Z", 1795425302000000000),
    ("2026-11-23T09:15:02.1245053650000Z", 1795425302124505365),  # zeros past the ninth digit say nothing
])
def test_the_time_rule_reads_each_readers_form(text, ns):
    assert time_ns(text) == ns
    assert time_texts([ns, None]) == [f"2026-11-23T09:15:{ns // 10 ** 9 % 60:02d}.{ns % 10 ** 9:09d}Z", None]


@pytest.mark.parametrize("text", ["2026-11-23T09:15:02.1245053651Z", "2026-02-30T00:00:00Z", "12345", "", None,
                                  "2026-11-23 09:15:02Z", "1601-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                                  "2026-11-23T09:15:02+2400"])
def test_a_time_that_is_no_instant_or_past_int64_nanoseconds_is_none(text):
    """Finer than a nanosecond, no such date, no ISO 8601, or outside 1677-09-21..2262-04-11: None (empty, null)."""
    assert time_ns(text) is None


def test_the_etl_time_rule_and_the_text_rule_agree():
    header = etw.readers.etlfile.LogHeader({"clock_type": 1, "perf_freq": 10 ** 7, "cpu_mhz": 0,
                                    "start_filetime": 134_000_000_000_000_000}, 0)
    for ticks in (0, 1, 1234, 10 ** 9):
        assert filetime_ns(header.filetime(ticks)) == time_ns(header.utc(ticks)) == \
            (134_000_000_000_000_000 + ticks - 116_444_736_000_000_000) * 100


def _cells(directory, fmt: str, name: str) -> list:
    path = directory / f"{name}.{fmt}"
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(path.read_text())))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_typed_columns_in_csv_and_json(tmp_path):
    """The same text for a time and a handle in CSV and JSON; Booleans true/false; ms a number."""
    for fmt in ("csv", "jsonl"):
        run(["sample", "--format", fmt, "-o", str(tmp_path / fmt)])
    events = {e.number: e for e in etw.read(SAMPLE)}
    first = SAMPLE.read_text().split('SystemTime="', 1)[1].split('"', 1)[0]  # the XML's first event, any provider's
    start = time_ns(first)
    rows = {fmt: _cells(tmp_path / fmt, fmt, "placements") for fmt in ("csv", "jsonl")}
    for c, j in zip(rows["csv"], rows["jsonl"]):
        e = events[int(c["number"])]
        assert c["time"] == j["time"] == time_texts([time_ns(e.time)])[0]
        assert len(c["time"]) == 30 and c["time"].endswith("Z")  # 2026-11-23T09:15:02.174837013Z
        assert float(c["ms"]) == j["ms"] == milliseconds(time_ns(e.time), start)
        assert (c["adapter"] or None) == j["adapter"] and (c["allocation"] or None) == j["allocation"]
        assert all(v.startswith("0x") for v in (c["adapter"], c["allocation"], c["handle"]) if v)
    allocations = {fmt: _cells(tmp_path / fmt, fmt, "allocations") for fmt in ("csv", "jsonl")}
    assert {r["BackingStoreWasPinned"] for r in allocations["csv"]} == {"false"}
    assert {r["BackingStoreWasPinned"] for r in allocations["jsonl"]} == {False}


def test_parquet_types_every_table(tmp_path):
    require(pq is not None, "pyarrow (the test extra)")
    run(["sample", "--format", "parquet", "-o", str(tmp_path)])
    for path in tmp_path.iterdir():
        schema = pq.read_schema(path)
        if path.stem == "findings":
            continue
        times = [f.name for f in schema if f.name.endswith("time")]
        assert times and all(schema.field(n).type == pa.timestamp("ns", tz="UTC") for n in times), path.stem
        assert all(schema.field(n.replace("time", "ms")).type == pa.float64() for n in times), path.stem
    allocations = pq.read_schema(tmp_path / "allocations.parquet")
    assert allocations.field("adapter").type == allocations.field("hDxgGlobalAlloc").type == pa.uint64()
    assert allocations.field("BackingStoreWasPinned").type == pa.bool_()
    assert pq.read_schema(tmp_path / "placements.parquet").field("Pinned").type == pa.bool_()
    assert pq.read_schema(tmp_path / "live.parquet").field("hProcessId").type == pa.uint64()


def test_parquet_row_groups_are_sized_by_rows(tmp_path):
    """segments.parquet had one row group per row: a group is 65,536 rows now, the last one the rest."""
    require(pq is not None, "pyarrow (the test extra)")
    run(["sample", "--format", "parquet", "-o", str(tmp_path / "t")])
    assert {pq.ParquetFile(p).num_row_groups for p in (tmp_path / "t").iterdir()} == {1}
    for chunks, groups in (([1] * 10, [8, 2]), ([3] * 7, [8, 8, 5]), ([20, 1], [8, 8, 5]), ([4, 4], [8]),
                           ([0], [0])):
        out = io.BytesIO()
        w = ParquetWriter(out, group_rows=8)
        start = 0
        for n in chunks:
            w.write(Table(["x"], ["int"], [list(range(start, start + n))]))
            start += n
        w.close()
        f = pq.ParquetFile(io.BytesIO(out.getvalue()))
        assert [f.metadata.row_group(i).num_rows for i in range(f.num_row_groups)] == groups, chunks
        assert f.read().column("x").to_pylist() == list(range(start))


def test_parquet_holds_a_copy_of_a_numpy_chunk_it_waits_to_write():
    """A NumPy column the caller reuses (decode_array's chunks) is copied when its rows wait for a group."""
    require(pq is not None, "pyarrow (the test extra)")
    import numpy as np

    out, buffer = io.BytesIO(), np.arange(5, dtype=np.int64)
    w = ParquetWriter(out, group_rows=8)
    w.write(Table(["x"], ["int"], [buffer]))
    buffer[:] = 99
    w.close()
    assert pq.read_table(io.BytesIO(out.getvalue())).column("x").to_pylist() == [0, 1, 2, 3, 4]


# ---- the new tables' values
def _story():
    """Allocations of two processes started, one stopped, one restarted; usage and budget of one process."""
    start, stop = KIND_BY_NAME[("AdapterAllocation", "Start")], KIND_BY_NAME[("AdapterAllocation", "Stop")]
    usage, budget = KIND_BY_NAME[("VidMmProcessUsageChange", "Info")], KIND_BY_NAME[("VidMmProcessBudgetChange", "Info")]
    a = dict(hProcessId=0xA0, hVidMmGlobalAlloc=0xE1, hDxgGlobalAlloc=0xD1, allocSize=0x1000)
    b = dict(hProcessId=0xB0, hVidMmGlobalAlloc=0xE2, hDxgGlobalAlloc=0xD2, allocSize=0x4000, BackingStoreWasPinned=True)
    c = dict(hProcessId=0xA0, hVidMmGlobalAlloc=0xE3, hDxgGlobalAlloc=0xD3, allocSize=0x2000)
    memory = dict(pDxgAdapter=ADAPTER, ProcessId=7, PhysicalAdapterIndex=0, MemorySegmentGroup=0)
    return [Dxg(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x11), version=1),
            Dxg(start, alloc_fields(**a)), Dxg(start, alloc_fields(**b)), Dxg(start, alloc_fields(**c)),
            Dxg(stop, alloc_fields(**a)), Dxg(start, alloc_fields(**{**c, "allocSize": 0x8000})),
            Dxg(budget, {**memory, "NewBudget": 0x100000, "OldBudget": 0, "NewPriorityBand": 1, "OldPriorityBand": 1,
                         "NewVisibilityState": 2, "OldVisibilityState": 2}),
            Dxg(usage, {**memory, "NewUsage": 0x3000, "OldUsage": 0}),
            Dxg(usage, {**memory, "NewUsage": 0x2000, "OldUsage": 0x3000})]


def test_live_processes_and_process_memory_values_on_twins(tmp_path):
    """The .etl file and its XML twin give the same new tables, event by event and column-wise, with the
    values the story's events say."""
    etl, xml = twin(_story())
    got = {}
    for label, data in (("etl", etl), ("xml", xml.encode("ascii"))):
        (tmp_path / label).mkdir()
        path = tmp_path / label / "trace"
        path.write_bytes(data)
        run([str(path), "--format", "jsonl", "-o", str(tmp_path / label / "out")])
        got[label] = {n: _cells(tmp_path / label / "out", "jsonl", n) for n in ("live", "processes", "process_memory")}
    assert got["etl"] == got["xml"]
    assert tables(etl, tmp_path, True) == tables(etl, tmp_path, False)
    live, processes, memory = got["etl"]["live"], got["etl"]["processes"], got["etl"]["process_memory"]
    assert [(r["hVidMmGlobalAlloc"], r["hProcessId"], r["Size"], r["number"]) for r in live] == \
        [("0xe2", "0xb0", "0x4000", 4), ("0xe3", "0xa0", "0x8000", 7)]  # the restart replaced 0xe3's row
    assert [(r["hProcessId"], r["started"], r["stopped"], r["live"], r["live_bytes"], r["peak_live_bytes"],
             r["peak_number"]) for r in processes] == \
        [("0xa0", 3, 1, 1, "0x8000", "0x8000", 7), ("0xb0", 1, 0, 1, "0x4000", "0x4000", 4)]
    assert processes[0]["peak_time"] == live[1]["time"] and processes[0]["peak_ms"] == live[1]["ms"]
    assert [(r["usage"], r["budget"], r["NewUsage"], r["NewBudget"]) for r in memory] == \
        [(None, "0x100000", None, "0x100000"), ("0x3000", "0x100000", "0x3000", None),
         ("0x2000", "0x100000", "0x2000", None)]
    assert [r["ms"] for r in live] == [3 * 1234 / 1e4, 6 * 1234 / 1e4]  # ticks of 100 ns from the header event


def test_the_sample_live_and_processes_tables_say_what_the_text_says(tmp_path):
    run(["sample", "--format", "csv", "-o", str(tmp_path)])
    (a,) = etw.adapters(etw.read(SAMPLE)).values()
    live = _cells(tmp_path, "csv", "live")
    assert sorted(int(r["hVidMmGlobalAlloc"], 16) for r in live) == \
        sorted(e.event.fields["hVidMmGlobalAlloc"] for e in a.allocations.values())
    (process,) = _cells(tmp_path, "csv", "processes")
    assert (int(process["started"]), int(process["stopped"]), int(process["live"])) == (a.started, a.stopped, len(live))
    assert int(process["live_bytes"], 16) == sum(e.event.fields["allocSize"] for e in a.allocations.values())


def test_new_tables_column_wise_equal_event_by_event_on_a_long_trace(tmp_path):
    """Runs of more than 64 allocation events are read as columns: live and processes come out the same."""
    data = hard_trace(21, n=1500, memory=True)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert fast == exact and fast["live.csv"].count(b"\n") > 10 and fast["processes.csv"].count(b"\n") > 10
