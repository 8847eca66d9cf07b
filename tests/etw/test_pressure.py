"""Memory pressure, on a trace packed by the encoder written from the manifest's XML (``manifest_encoder``, not the
package's templates) into buffers appended to a real .etl file: two segments, three allocations of one process, its
budget passed, a fill and an eviction while over it, transfers both ways.  Each table (paging, evictions, pressure,
over_budget) holds exactly the rows worked out here from the events, in CSV, JSON lines and Parquet, column-wise and
event by event, and from the XML twin; the picture draws the same values."""
from __future__ import annotations

import csv
import io
import json
import random
import struct

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.outputs.plot import figure, series
from tests.etw import etl_files
from tests.etw.etl_readings import tables
from tests.etw.helpers import run
from tests.etw.manifest_encoder import buffers, event_record, manifest, payload, values, xml_event

ADAPTER, PROCESS, MB = 0xFFFFB80C4D2E5000, 4321, 1 << 20
G = {1: 0xFFFFB80C4E700100, 2: 0xFFFFB80C4E700200, 3: 0xFFFFB80C4E700300}  # hVidMmGlobalAlloc
SETS = {1: 0b011, 2: 0b001, 3: 0b011}  # segments 1 and 2; allocation 2's sets name segment 1 only
SIZES = {1: 8 * MB, 2: 2 * MB, 3: 4 * MB}


def _events() -> list:
    """(id, fields the test sets) of the trace, in order (the encoder gives every other field a value)."""
    segment = {"pDxgAdapter": ADAPTER, "NbOfBanks": 0, "Flags": 0, "MemorySegmentGroup": 0}
    out = [(78, {**segment, "ulSegmentId": 1, "Size": 256 * MB, "CommitLimit": 256 * MB}),
           (78, {**segment, "ulSegmentId": 2, "Size": 64 * MB, "CommitLimit": 64 * MB})]
    for n in (1, 2, 3):
        out.append((33, {"hProcessId": PROCESS, "pDxgAdapter": ADAPTER, "allocSize": SIZES[n], "dwReadSegment": SETS[n],
                         "dwWriteSegment": SETS[n], "hVidMmGlobalAlloc": G[n], "hDxgGlobalAlloc": G[n] + 8,
                         "BackingStoreWasPinned": False}))
    usage = {"pDxgAdapter": ADAPTER, "ProcessId": PROCESS, "PhysicalAdapterIndex": 0, "MemorySegmentGroup": 0}
    out += [
        (366, {**usage, "NewBudget": 16 * MB, "OldBudget": 0, "NewVisibilityState": 2, "OldVisibilityState": 2}),
        (367, {**usage, "NewUsage": 8 * MB, "OldUsage": 0}),
        (53, {"pDxgAdapter": ADAPTER, "ContinueNextBuffer": False, "hAllocationGlobalHandle": G[1],
              "TransferSize": 4 * MB, "SourceSegmentId": 2, "DestinationSegmentId": 1,
              "DestinationSegmentOffset": 0x100000}),  # #9: in, 2 -> 1
        (367, {**usage, "NewUsage": 24 * MB, "OldUsage": 8 * MB}),  # #10: over the budget
        (54, {"pDxgAdapter": ADAPTER, "ContinueNextBuffer": False, "hAllocationGlobalHandle": G[2],
              "FillSize": 1 * MB, "SegmentId": 1, "SegmentOffset": 0}),  # #11: a fill
        (74, {"hGlobalAllocationHandle": G[1]}),  # #12: evicted from segment 1 (where #9 put it)
        (53, {"pDxgAdapter": ADAPTER, "ContinueNextBuffer": False, "hAllocationGlobalHandle": G[3],
              "TransferSize": 2 * MB, "SourceSegmentId": 1, "DestinationSegmentId": 2,
              "DestinationSegmentOffset": 0}),  # #13: out, 1 -> 2
        (367, {**usage, "NewUsage": 12 * MB, "OldUsage": 24 * MB}),  # #14: under it again
        (53, {"pDxgAdapter": ADAPTER, "ContinueNextBuffer": False, "hAllocationGlobalHandle": G[2],
              "TransferSize": 2 * MB, "SourceSegmentId": 1, "DestinationSegmentId": 2,
              "DestinationSegmentOffset": 0}),  # #15: allocation 2 into segment 2, outside its sets
    ]
    return out


PAGING = [  # number, operation, allocation, process, source, destination, bytes, warnings
    (9, "PagingOpTransfer", G[1], PROCESS, 2, 1, 4 * MB, 0),
    (11, "PagingOpFill", G[2], PROCESS, None, 1, 1 * MB, 0),
    (13, "PagingOpTransfer", G[3], PROCESS, 1, 2, 2 * MB, 0),
    (15, "PagingOpTransfer", G[2], PROCESS, 1, 2, 2 * MB, 1),  # ALLOCINFO.COMMITTED_OUTSIDE_SETS
]
PRESSURE = {(2, 1): (1, 4 * MB), (None, 1): (1, 1 * MB), (1, 2): (2, 4 * MB)}  # direction -> operations, bytes
OVER_BUDGET = (10, 14, 24 * MB, 16 * MB, 1, 3 * MB)  # start, end, peak, budget, evictions, bytes paged inside


def _trace(pointer_size: int = 8, seed: int = 32):
    """(.etl bytes, XML text, the numbers the .etl gives the trace's events)."""
    real = etl_files.read("gcevents")
    size = struct.unpack_from("<I", real, 0)[0]
    last = max(struct.unpack_from("<q", real, at + 16)[0] for at in range(0, len(real), size))
    m, rng = manifest(), random.Random(seed)
    records, xml = [], []
    for i, (event_id, given) in enumerate(_events()):
        symbol, version, opcode, task, fields = m[event_id]
        vals = {**values(fields, rng, pointer_size), **given}
        records.append(event_record(event_id, version, opcode, task, payload(fields, vals, pointer_size),
                                    last + 10_000 * (i + 1), pointer_size))
        xml.append(xml_event(event_id, version, opcode, task, fields, vals))
    return real + buffers(records, size, last), "<Events>" + "".join(xml) + "</Events>"


def _rows(files: dict, name: str, fmt: str) -> list:
    data = files[f"{name}.{fmt}"]
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(data.decode())))
    if fmt == "jsonl":
        return [json.loads(line) for line in data.decode().splitlines()]
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data)).to_pylist()


def _int(v):
    return None if v in ("", None) else int(v, 0) if isinstance(v, str) else int(v)


@pytest.fixture(scope="module")
def read(tmp_path_factory):
    """The tables of the trace in every format, column-wise and event by event: (fmt, columns) -> files."""
    data, _xml = _trace()
    folder = tmp_path_factory.mktemp("pressure")
    out = {}
    for fmt in ("csv", "jsonl", "parquet"):
        for columns in (True, False):
            out[(fmt, columns)] = tables(data, folder / fmt, columns, fmt)
    numbers = {e.number for e in etw.read(data) if e.event_id in (53, 54, 74)}
    offset = min(numbers) - 9  # the real file's events come first: the trace's event #9 is the first paging row
    return out, offset


FORMATS = [(fmt, columns) for fmt in ("csv", "jsonl", "parquet") for columns in (True, False)]
IDS = [f"{fmt}-{'columns' if c else 'events'}" for fmt, c in FORMATS]


@pytest.mark.parametrize("fmt, columns", FORMATS, ids=IDS)
def test_paging_table_a_row_per_operation_with_its_process_segments_and_bytes(read, fmt, columns):
    files, offset = read
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    rows = _rows(files[(fmt, columns)], "paging", fmt)
    got = [(_int(r["number"]) - offset, r["operation"], _int(r["allocation"]), _int(r["process"]),
            _int(r["source_segment"]), _int(r["destination_segment"]), _int(r["bytes"]), _int(r["warnings"]))
           for r in rows]
    assert got == PAGING


@pytest.mark.parametrize("fmt, columns", FORMATS, ids=IDS)
def test_evictions_table_the_allocation_its_size_and_where_it_was_for_how_long(read, fmt, columns):
    files, offset = read
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    (row,) = _rows(files[(fmt, columns)], "evictions", fmt)
    assert (_int(row["number"]) - offset, row["operation"], _int(row["allocation"]), _int(row["process"]),
            _int(row["size"]), _int(row["segment"])) == (12, "EvictAllocation", G[1], PROCESS, SIZES[1], 1)
    (put,) = [r for r in _rows(files[(fmt, columns)], "paging", fmt) if _int(r["number"]) - offset == 9]
    assert float(row["resident_ms"]) == pytest.approx(float(row["ms"]) - float(put["ms"]))


@pytest.mark.parametrize("fmt, columns", FORMATS, ids=IDS)
def test_pressure_table_a_row_per_adapter_and_direction(read, fmt, columns):
    files, _offset = read
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    rows = _rows(files[(fmt, columns)], "pressure", fmt)
    assert {(_int(r["source_segment"]), _int(r["destination_segment"])): (_int(r["operations"]), _int(r["bytes"]))
            for r in rows} == PRESSURE
    assert {_int(r["adapter"]) for r in rows} == {ADAPTER}


@pytest.mark.parametrize("fmt, columns", FORMATS, ids=IDS)
def test_over_budget_table_the_stretch_its_peak_budget_evictions_and_bytes(read, fmt, columns):
    files, offset = read
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    (row,) = _rows(files[(fmt, columns)], "over_budget", fmt)
    assert (_int(row["start_number"]) - offset, _int(row["end_number"]) - offset, _int(row["peak"]),
            _int(row["budget"]), _int(row["evictions"]), _int(row["bytes"])) == OVER_BUDGET
    assert (_int(row["process"]), _int(row["adapter"])) == (PROCESS, ADAPTER)
    assert float(row["start_ms"]) < float(row["end_ms"])


def test_pressure_tables_column_wise_are_the_event_by_event_ones_byte_for_byte(read):
    files, _offset = read
    for fmt in ("csv", "jsonl"):
        assert files[(fmt, True)] == files[(fmt, False)]


def test_pressure_tables_from_the_xml_twin_are_the_etl_ones(tmp_path, monkeypatch):
    """The XML twin of the trace (tracerpt's form) gives the same pressure rows as its .etl."""
    data, text = _trace()
    path = tmp_path / "twin.xml"
    path.write_text(text)
    out = tmp_path / "xml"
    _out, status = run([str(path), "--format", "csv", "-o", str(out)])
    assert status == 1  # the warning of #15
    etl = tables(data, tmp_path / "etl", True, "csv")
    for name in ("paging", "evictions", "pressure", "over_budget"):
        mine = list(csv.DictReader(io.StringIO((out / f"{name}.csv").read_text())))
        theirs = list(csv.DictReader(io.StringIO(etl[f"{name}.csv"].decode())))
        drop = ("number", "time", "ms", "start_time", "start_ms", "end_time", "end_ms", "first_time", "first_ms",
                "last_time", "last_ms", "start_number", "end_number", "resident_ms")
        assert [{k: v for k, v in r.items() if k not in drop} for r in mine] == \
            [{k: v for k, v in r.items() if k not in drop} for r in theirs], name


def test_pressure_picture_draws_the_bytes_paged_evictions_and_the_stretch_over_budget(tmp_path):
    pytest.importorskip("matplotlib")
    data, _xml = _trace()
    path = tmp_path / "t.etl"
    path.write_bytes(data)
    picture, _errors = series(path)
    (a,) = picture.adapters.values()
    paged = {k: list(s.values) for k, s in a.group("paged").items()}
    none = (1 << 64) - 1
    assert paged == {(2, 1): [4 * MB], (none, 1): [1 * MB], (1, 2): [2 * MB, 4 * MB]}
    assert [len(s) for s in a.group("evicted").values()] == [1]
    fig = figure(picture)
    (usage,) = [ax for ax in fig.axes if "shaded: over it" in ax.get_title(loc="left")]
    assert len(usage.patches) == 1


def test_an_event_about_an_allocation_the_trace_did_not_show_starting_is_counted_and_said(tmp_path):
    """A transfer, an eviction and a page-in naming allocations never started (by global handle, by a device's
    handle): their rows are written with the process empty, each kind counted in the text, nothing refused."""
    from d3dkmddi_py.samples import etl_build

    k = etw.KINDS
    events = [
        etl_build.dxgkrnl_event(k[53], {"pDxgAdapter": ADAPTER, "hDmaBuffer": 1, "ContinueNextBuffer": False,
                                        "hAllocationGlobalHandle": 0xDEAD0, "TransferOffset": 0,
                                        "TransferSize": MB, "SourceSegmentId": 1, "SourceSegmentOffset": 0,
                                        "DestinationSegmentId": 2, "DestinationSegmentOffset": 0, "Flags": 0},
                                ticks=1),
        etl_build.dxgkrnl_event(k[321], {"pVidMmAlloc": 0xBEEF0, "ResidencyCount": 1}, ticks=2),
        etl_build.dxgkrnl_event(k[74], {"hGlobalAllocationHandle": 0xDEAD0}, ticks=3),
        etl_build.dxgkrnl_event(k[73], {"hAllocationHandle": 0xBEEF0, "uiSegmentId": 1, "uliOffset": 0}, ticks=4),
    ]
    path = tmp_path / "t.etl"
    path.write_bytes(etl_build.etl_bytes(events))
    text, status = run([str(path)])
    assert status == 0
    for name in ("PagingOpTransfer (53)", "VidMmEvict (321)", "EvictAllocation (74)", "PageInAllocation (73)"):
        line = text[text.index(name):].splitlines()
        assert line[1] == "   1 event named an allocation the trace did not show starting (its process and segment " \
                          "sets unknown)", name
    out = tmp_path / "tables"
    _out, status = run([str(path), "--format", "csv", "-o", str(out)])
    rows = list(csv.DictReader(io.StringIO((out / "evictions.csv").read_text())))
    assert [(r["operation"], r["allocation"], r["process"], r["size"]) for r in rows] == [
        ("VidMmEvict", "", "", ""), ("EvictAllocation", "0xdead0", "", "")]
    (paging,) = csv.DictReader(io.StringIO((out / "paging.csv").read_text()))
    assert (paging["allocation"], paging["process"], paging["bytes"]) == ("0xdead0", "", hex(MB))
