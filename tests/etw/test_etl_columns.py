"""The column-wise reading of an .etl file for the tables (etlcolumns) against the event-by-event
reader: the same tables byte for byte, in the same order and numbering, on traces built to be hard
(processors out of order, clocks that step back, ties across processors, mid-trace segment reports,
Stop events, two adapters, 32-bit events, compressed buffers, versions 2 and 3), on seeded mutations
of them, and where only the event-by-event reader can go on (it starts again and says why)."""
from __future__ import annotations

import io
import random

import pytest

from d3dkmddi_py.etw.readers import etlcolumns
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.etw.model.schema import PROVIDER_GUID
from d3dkmddi_py.samples import etl_build

from .etl_hard import hard_trace
from .etl_readings import column_runs, tables
from .helpers import alloc_fields, seg_fields


@pytest.fixture
def small_runs(monkeypatch):
    """One buffer per run: every merge step has to hold events back."""
    monkeypatch.setattr(etlcolumns, "_RUN_BYTES", 1)
    monkeypatch.setattr(etlcolumns, "_LEAST_RUN", 1)


@pytest.mark.parametrize("variant", [dict(), dict(pointer_size=4), dict(compress=True), dict(processors=1),
                                     dict(processors=7, skew=False)],
                         ids=["x64", "32-bit", "compressed", "one-cpu", "seven-cpus"])
def test_column_wise_tables_equal_the_event_by_event_ones(variant, tmp_path, small_runs):
    data = hard_trace(11, **variant)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert "error" not in exact and fast == exact
    assert exact["allocations.csv"].count(b"\n") > 500 and exact["findings.csv"].count(b"\n") > 50


@pytest.mark.parametrize("variant", [dict(), dict(pointer_size=4), dict(compress=True, processors=3)],
                         ids=["x64", "32-bit", "compressed"])
def test_column_wise_tables_with_the_memory_events_equal_the_event_by_event_ones(variant, tmp_path, small_runs):
    """Placements, priorities, device allocations, residency, usage and
    budgets among the allocations: each row where the event-by-event reader puts it, the live
    allocations a placement is checked against tracked alike on both paths."""
    data = hard_trace(16, memory=True, **variant)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert "error" not in exact and fast == exact
    assert exact["placements.csv"].count(b"\n") > 20 and exact["residency.csv"].count(b"\n") > 10
    assert b"ALLOCINFO.COMMITTED_OUTSIDE_SETS" in exact["findings.csv"]


@pytest.mark.parametrize("chunk", [65536, 97], ids=["one-chunk", "chunks-of-97"])
def test_memory_events_among_the_allocations_leave_them_column_wise(chunk, tmp_path, monkeypatch):
    """One event in three a memory event: the allocations between them are still read as columns (a run is cut
    only by a ReportSegment and a chunk's end), and each placement, priority and device allocation reads the live
    allocations as the ones before it left them (Stops among them), on both paths alike; chunks that end on
    either kind of event."""
    batches = column_runs(monkeypatch)
    data = hard_trace(17, n=4000, memory=True)
    fast = tables(data, tmp_path, True, chunk=chunk)
    assert sum(batches) > 2000  # the allocations went column-wise, not as Events
    batches.clear()
    exact = tables(data, tmp_path, False, chunk=chunk)
    assert not batches and "error" not in exact and fast == exact
    assert exact["placements.csv"].count(b"\n") > 150 and b"ALLOCINFO.COMMITTED_OUTSIDE_SETS" in exact["findings.csv"]
    assert exact["paging.csv"].count(b"\n") > 100 and exact["evictions.csv"].count(b"\n") > 50  # rows with a process
    assert len({line.split(b",")[4] for line in exact["paging.csv"].splitlines()[1:]}) > 1


def test_reading_the_tables_leaves_the_collectors_frozen_objects_as_it_found_them(tmp_path):
    """The tables freeze the objects from before while they read (the collector's full passes skip them), and give
    them back; a caller's own freeze is left alone, and so is the freeze when the reading fails."""
    import gc

    data = hard_trace(18, n=300, memory=True)
    assert gc.get_freeze_count() == 0
    tables(data, tmp_path, True)
    assert gc.get_freeze_count() == 0
    assert "error" in tables(data[:len(data) // 2] + b"\xff" * 64, tmp_path, False)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        tables(data, tmp_path, False)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_column_wise_in_big_runs_and_every_format(tmp_path):
    pytest.importorskip("pyarrow")
    data = hard_trace(12, n=3000)
    for fmt in ("jsonl", "parquet"):
        assert tables(data, tmp_path, True, fmt) == tables(data, tmp_path, False, fmt)


def test_mutants_give_the_same_tables_or_the_same_error(tmp_path, small_runs):
    data = hard_trace(13, n=120, processors=2)
    rng = random.Random(20261126)
    outcomes = {"same": 0, "refused": 0, "kept and reported": 0}
    for _ in range(150):
        b = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(2048, len(b))] = rng.randrange(256)  # the header buffer stays: an .etl file
        fast, exact = tables(bytes(b), tmp_path, True), tables(bytes(b), tmp_path, False)
        assert fast == exact
        odd = "error" not in fast and b",ETW." in fast["findings.csv"]  # an event not as its template says
        outcomes["refused" if "error" in fast else "kept and reported" if odd else "same"] += 1
    assert outcomes["same"] > 10 and outcomes["refused"] > 5 and outcomes["kept and reported"] > 10, outcomes


def test_an_unknown_version_late_in_the_trace_is_kept_and_reported_alike_on_both_paths(tmp_path, small_runs):
    """An unknown version refused the trace (and the column-wise path started again to name it); the event is
    kept, its payload as it is, and reported (ETW.NO_TEMPLATE), on both paths alike, without starting again."""
    events = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x11), ticks=1)]
    start = KIND_BY_NAME[("AdapterAllocation", "Start")]
    for i in range(400):
        events.append(etl_build.dxgkrnl_event(start, alloc_fields(hDxgGlobalAlloc=i + 1), ticks=10 + i))
    bad = etl_build.dxgkrnl_event(start, alloc_fields(), ticks=5000)
    events.append(etl_build.EtlEvent(PROVIDER_GUID, bad.event_id, 9, bad.payload, opcode=bad.opcode, ticks=5000))
    data = etl_build.etl_bytes(events, processors=2, buffer_size=1024)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert fast == exact and "error" not in fast
    assert b"403,ETW.NO_TEMPLATE,warning,payload," in fast["findings.csv"]  # after the header and 401 events
    assert b"version 9 of event 33" in fast["findings.csv"] and fast["undecoded.csv"].count(b"\n") == 2


def test_a_value_that_does_not_fit_the_abi_starts_again_and_names_it(tmp_path):
    data = hard_trace(14, n=50, sizes=(0x10000, 1 << 33))  # SIZE_T is 4 bytes on x86
    fast, exact = tables(data, tmp_path, True, abi="x86"), tables(data, tmp_path, False, abi="x86")
    assert fast == exact and "does not fit" in fast["error"] and "check --abi" in fast["error"]


def test_a_trace_without_dxgkrnl_events_is_named_as_before(tmp_path):
    data = etl_build.etl_bytes([etl_build.EtlEvent("22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", 1, 3, bytes(12))])
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert fast == exact and "no event of Microsoft-Windows-DxgKrnl" in fast["error"]


def test_a_restart_discards_parquet_files_cleanly(tmp_path, small_runs):
    pytest.importorskip("pyarrow")
    data = hard_trace(14, n=50, sizes=(0x10000, 1 << 33))
    fast, exact = tables(data, tmp_path, True, "parquet", abi="x86"), tables(data, tmp_path, False, "parquet", abi="x86")
    assert fast == exact and "does not fit" in fast["error"]
    assert not (tmp_path / "out-True-parquet").exists()


def test_damage_the_columns_read_ahead_is_named_as_the_event_reader_meets_it(tmp_path):
    """One reading of a damaged file: processor 0's last buffer does not decompress and processor 1's
    first event is damaged.  The column reader loads a processor's buffers ahead of time (processor 0's
    first, with the header buffer) and met the first; the event-by-event reader meets processor 1's
    event first, in time order.  The column reader defers every damage to it, so both name that event."""
    from d3dkmddi_py.etw.readers import etlfile

    data = bytearray(hard_trace(15, n=200, processors=2, compress=True))
    with etlfile.EtlFile(io.BytesIO(bytes(data)), "trace.etl") as etl:
        buffers = [(b.index, b.file_offset, b.processor) for b in etl.buffers()][1:]
    last_of_0 = [at for _i, at, cpu in buffers if cpu == 0][-1]
    first_of_1 = next((i, at) for i, at, cpu in buffers if cpu == 1)
    data[last_of_0 + etlfile.BUFFER_HEADER:last_of_0 + etlfile.BUFFER_HEADER + 4] = b"\xff\xff\xff\xff"  # all matches
    # the stream is literals after a flag word (etl_build): the first event's byte k is the stream's 4 + k
    data[first_of_1[1] + etlfile.BUFFER_HEADER + 4 + etlfile.EVENT_HEADER.offset["MarkerFlags"]] = 0x41
    fast, exact = tables(bytes(data), tmp_path, True), tables(bytes(data), tmp_path, False)
    assert fast == exact and f"buffer {first_of_1[0]} (file offset {first_of_1[1]}, byte 72 of it decompressed)" \
        in exact["error"] and "is not an event header's marker" in exact["error"]


def test_a_batch_reads_the_events_among_its_rows_at_once_as_each_alone():
    """``DxgBatch.events`` (the other events of a stretch, their columns read at once) gives the Events the reader
    gives one at a time."""
    from d3dkmddi_py import etw
    from d3dkmddi_py.etw.catalog import ENTRIES

    data = hard_trace(7, memory=True)
    reader = etw.read(data)
    reader.columns = True
    batches = [b for b in reader if isinstance(b, etlcolumns.DxgBatch)]
    exact = {e.number: e for e in etw.read(data)}
    singles = 0
    for batch in batches:
        rows = [i for i, k in enumerate(batch.ids.tolist()) if not ENTRIES[etw.catalog.KINDS[k].event].batched]
        events = batch.events(rows, [exact[n].time for n in batch.numbers[rows].tolist()], reader.name)
        assert events == [exact[e.number] for e in events]
        singles += len(events)
    assert singles


def test_an_extended_item_ending_unaligned_at_the_events_end_leaves_no_payload_on_both_paths(tmp_path, monkeypatch):
    """A DxgKrnl event whose last extended data item (1 byte) ends the event: the 8-byte padding after it is not
    there, so the payload is empty (every field missing, cut at 0 bytes) event by event and column-wise alike."""
    import struct

    from d3dkmddi_py import etw
    from d3dkmddi_py.etw.readers import etlfile

    item = struct.pack("<HHHH", 0, 1, 0, 1) + b"\x07"
    head = etlfile.EVENT_HEADER.struct.pack(
        etlfile.EVENT_HEADER.length + len(item), etlfile.EVENT64, 0xC0, etlfile.HEADER_64_BIT | etlfile.EXTENDED_INFO,
        0, 8, 4, etl_build.HEADER_TICKS + 7, etl_build.uuid.UUID(PROVIDER_GUID.strip("{}")).bytes_le, 250, 0, 0, 0,
        0, 0, 0, 0, 0, bytes(16))
    odd = head + item + bytes(-len(head + item) % 8)
    own = etl_build.event_bytes
    monkeypatch.setattr(etl_build, "event_bytes", lambda e, *a: odd if e.ticks == 7 else own(e, *a))
    node = {"pDxgAdapter": 0xFFFF800012340000, "NodeOrdinal": 1, "EngineType": 2, "FriendlyName": "3D"}
    data = etl_build.etl_bytes([etl_build.dxgkrnl_event(etw.KINDS[250], node, ticks=t) for t in (1, 7, 9)])
    (event,) = [e for e in etw.read(data) if e.number == 2 + 1]  # after the log-file header's own event
    assert event.fields == {} and event.odd.cut_at == 0 and event.odd.missing == tuple(node)
    assert tables(data, tmp_path / "c", True, "jsonl") == tables(data, tmp_path / "e", False, "jsonl")
