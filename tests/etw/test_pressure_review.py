"""The hostile review of the memory-pressure events (issue 32), each case a test named after it: rows in event order
on both paths when one event of a run is odd, a row's counts holding its event's own reports, an allocation paged on
another adapter, a duration that would be negative, segment 0, sums past 2**64-1, the text bounded, handle 0, a
stretch begun by the last event, and the readings labelled."""
from __future__ import annotations

import csv
import io

import pytest

from d3dkmddi_py import cli, etw
from d3dkmddi_py.etw.catalog._pressure import (BEFORE_PLACED, ENDED_BEFORE, OTHER_ADAPTER, SHOWN_LINES, UNSEEN,
                                                WHERE_NEXT, ZERO)
from d3dkmddi_py.etw.model.registry import layout_of
from d3dkmddi_py.samples import etl_build
from tests.etw.etl_readings import tables

A1, A2 = 0xFFFFB80C4D2E5000, 0xFFFFB80C4D2E9000
MB = 1 << 20
MS = 10_000  # ticks of the builder's 10 MHz clock in a millisecond
MOST = (1 << 64) - 1


def fields_of(event_id: int, **given) -> dict:
    """Every field of the event's template (zero, Booleans false), then ``given``."""
    out = {f.name: False if f.in_type == "Boolean" else 0 for f in layout_of(event_id, etw.KINDS[event_id].version)}
    assert set(given) <= set(out), set(given) - set(out)
    return {**out, **given}


def segment(sid, adapter=A1):
    return 78, dict(ulSegmentId=sid, pDxgAdapter=adapter, Size=256 * MB, CommitLimit=256 * MB)


def allocation(handle, adapter=A1, process=4321):
    return 33, dict(hProcessId=process, pDxgAdapter=adapter, allocSize=MB, dwReadSegment=0b11, dwWriteSegment=0b11,
                    hVidMmGlobalAlloc=handle, hDxgGlobalAlloc=handle + 8, PreferredSegment=1)


def transfer(handle, source, destination, size, adapter=A1):
    return 53, dict(pDxgAdapter=adapter, hAllocationGlobalHandle=handle, TransferSize=size, SourceSegmentId=source,
                    DestinationSegmentId=destination)


def evict(handle):
    return 74, dict(hGlobalAllocationHandle=handle)


def usage(value, adapter=A1):
    return 367, dict(NewUsage=value, pDxgAdapter=adapter, ProcessId=4321)


def budget(value, adapter=A1):
    return 366, dict(NewBudget=value, pDxgAdapter=adapter, ProcessId=4321)


def trace(spec, extra: dict = ()) -> bytes:
    """An .etl of ``spec``: (id, fields) or (id, fields, ticks); ``extra``: index -> bytes after that payload."""
    events = []
    for i, (event_id, given, *ticks) in enumerate(spec):
        e = etl_build.dxgkrnl_event(etw.KINDS[event_id], fields_of(event_id, **given),
                                    ticks=ticks[0] if ticks else 100 + i, processor=0)
        if i in dict(extra):
            e = etl_build.EtlEvent(e.provider, e.event_id, e.version, e.payload + dict(extra)[i], opcode=e.opcode,
                                   task=e.task, keyword=e.keyword, ticks=e.ticks)
        events.append(e)
    return etl_build.etl_bytes(events, processors=1, buffer_size=65536)


def both(data: bytes, tmp_path) -> dict:
    """The CSV tables column-wise, held equal to event by event's."""
    columns = tables(data, tmp_path / "c", True, "csv")
    assert columns == tables(data, tmp_path / "e", False, "csv")
    return columns


def rows(files: dict, name: str) -> list:
    return list(csv.DictReader(io.StringIO(files[f"{name}.csv"].decode())))


def text(data: bytes, tmp_path) -> str:
    path = tmp_path / "t.etl"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    assert cli.execute(["etw", str(path)], out, err) in (0, 1), err.getvalue()
    return out.getvalue()


RUNS = {"paging": lambda i: transfer(0x1000, 2, 1, MB + i), "evictions": lambda i: evict(0x1000),
        "allocations": lambda i: allocation(0x2000 + 0x10 * i)}


@pytest.mark.parametrize("table, odd", [("paging", "eight bytes more"), ("paging", "a Boolean of 2"),
                                        ("evictions", "eight bytes more"), ("allocations", "eight bytes more")])
def test_an_odd_event_in_a_run_keeps_its_row_in_event_order_on_both_paths(table, odd, tmp_path):
    """Column-wise, the odd event (an Event among a batch's run) was written after the run's later rows."""
    spec = [segment(1), segment(2), allocation(0x1000)] + [RUNS[table](i) for i in range(100)]
    if odd == "a Boolean of 2":
        spec[53] = (53, {**spec[53][1], "ContinueNextBuffer": 2})
    found = both(trace(spec, {53: bytes(8)} if odd == "eight bytes more" else {}), tmp_path)
    numbers = [int(r["number"]) for r in rows(found, table)]
    assert numbers == sorted(numbers) and len(numbers) >= 100


@pytest.mark.parametrize("event, table", [(transfer(0x1000, 2, 1, MB), "paging"), (evict(0x1000), "evictions"),
                                          (allocation(0x3000), "allocations"), (usage(5), "process_memory")])
def test_a_rows_warnings_count_its_events_own_reports_in_every_table(event, table, tmp_path):
    """A batched entry's row counted only its rule findings; the event's ETW.PAYLOAD_LONGER was in findings.csv
    alone."""
    found = both(trace([segment(1), segment(2), allocation(0x1000), event], {3: bytes(8)}), tmp_path)
    row = rows(found, table)[-1]  # the odd event's: the last
    mine = [r for r in rows(found, "findings") if r["number"] == row["number"]]
    assert "ETW.PAYLOAD_LONGER" in [r["rule_id"] for r in mine]
    assert (int(row["errors"]), int(row["warnings"])) == (sum(r["severity"] == "error" for r in mine),
                                                          sum(r["severity"] == "warning" for r in mine))


def test_an_allocation_paged_on_another_adapter_is_not_its_process_and_is_said(tmp_path):
    data = trace([segment(1), segment(2), segment(1, A2), segment(2, A2), allocation(0x1000), budget(1), usage(5),
                  transfer(0x1000, 2, 1, 4 * MB, adapter=A2), evict(0x1000), usage(0)])
    found = both(data, tmp_path)
    (paged,) = rows(found, "paging")
    assert (paged["adapter"], paged["process"]) == (f"0x{A2:x}", "")
    (stretch,) = rows(found, "over_budget")
    assert int(stretch["bytes"], 0) == 0  # A1's process paged nothing on A1
    (evicted,) = rows(found, "evictions")
    assert evicted["segment"] == "" and evicted["resident_ms"] == ""  # A2's transfer did not place A1's allocation
    assert f"1 event {OTHER_ADAPTER}" in text(data, tmp_path)


def test_an_eviction_before_the_transfer_that_placed_it_leaves_resident_ms_empty_and_says_why(tmp_path):
    data = trace([segment(1), segment(2), allocation(0x1000), (*transfer(0x1000, 2, 1, MB), 5 * MS),
                  (*evict(0x1000), 1 * MS)])
    (evicted,) = rows(both(data, tmp_path), "evictions")
    assert (evicted["segment"], evicted["resident_ms"]) == ("1", "")
    assert f"1 event {BEFORE_PLACED}" in text(data, tmp_path)


def test_a_stretch_ended_before_it_began_keeps_both_times_and_says_so(tmp_path):
    data = trace([segment(1), (*budget(1), 1 * MS), (*usage(5), 5 * MS), (*usage(0), 2 * MS)])
    (stretch,) = rows(both(data, tmp_path), "over_budget")
    assert float(stretch["end_ms"]) < float(stretch["start_ms"])  # as the events say
    said = text(data, tmp_path)
    assert f"1 event {ENDED_BEFORE}" in said and "times that go back: 1 event" in said


@pytest.mark.parametrize("away", [transfer(0x1000, 1, 0, MB), (73, {"hAllocationHandle": 0xD001, "uiSegmentId": 0})],
                         ids=["a transfer to segment 0", "a page-in to segment 0"])
def test_an_allocation_moved_to_segment_0_is_in_no_segment_then_and_its_eviction_says_neither(away, tmp_path):
    """The row said no segment but a resident_ms measured from the move to segment 0."""
    data = trace([segment(1), segment(2), allocation(0x1000), (36, dict(hVidMmAlloc=0xD001, hVidMmGlobalAlloc=0x1000,
                                                                         pDxgAdapter=A1, hProcessId=4321)),
                  (*transfer(0x1000, 2, 1, MB), 1 * MS), (*away, 2 * MS), (*evict(0x1000), 3 * MS)])
    (evicted,) = rows(both(data, tmp_path), "evictions")
    assert (evicted["segment"], evicted["resident_ms"]) == ("", "")


def test_a_sum_of_bytes_past_2_64_is_said_wherever_it_is_shown_capped(tmp_path):
    data = trace([segment(1), segment(2), allocation(0x1000), budget(1), usage(5), transfer(0x1000, 2, 1, MOST),
                  transfer(0x1000, 2, 1, MOST), usage(0)])
    found = both(data, tmp_path)
    assert int(rows(found, "pressure")[0]["bytes"], 0) == int(rows(found, "over_budget")[0]["bytes"], 0) == MOST
    said = text(data, tmp_path)
    direction = next(line for line in said.splitlines() if "segment 2 -> segment 1" in line)
    stretch = next(line for line in said.splitlines() if "paged" in line and "physical adapter" in line)
    summary = next(line for line in said.splitlines() if "moving" in line)
    for line in (direction, stretch, summary):
        assert "(the sum passed 2**64-1: shown as that, in the tables and the picture too)" in line, line


def test_the_picture_says_bytes_paged_past_2_64(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (the test extra)")
    path = tmp_path / "t.etl"
    path.write_bytes(trace([segment(1), segment(2), allocation(0x1000), transfer(0x1000, 2, 1, MOST),
                            transfer(0x1000, 2, 1, MOST)]))
    out, err = io.StringIO(), io.StringIO()
    assert cli.execute(["etw", str(path), "--plot", str(tmp_path / "p.svg")], out, err) in (0, 1), err.getvalue()
    assert "bytes paged passed 2**64-1 and are drawn at 0xffffffffffffffff" in (tmp_path / "p.svg").read_text()


def test_the_text_shows_the_first_directions_and_stretches_and_counts_the_rest(tmp_path):
    """200,000 directions or 100,000 stretches printed a line each."""
    n = SHOWN_LINES + 5
    spec = [segment(1), segment(2), allocation(0x1000), budget(1)]
    spec += [transfer(0x1000, 100 + i, 1, MB) for i in range(n)]
    spec += [usage(5) if i % 2 == 0 else usage(0) for i in range(2 * n)]
    data = trace(spec)
    found = both(data, tmp_path)
    assert len(rows(found, "pressure")) == n and len(rows(found, "over_budget")) == n  # every one in the tables
    said = text(data, tmp_path)
    assert said.count(" -> segment 1: ") == SHOWN_LINES
    assert "   ... and 5 directions more (every one in the pressure table)" in said
    assert "   ... and 5 stretches more (every one in the over_budget table)" in said


def test_handle_0_is_said_as_naming_no_allocation_not_as_one_not_seen_starting(tmp_path):
    data = trace([segment(1), allocation(0x1000), evict(0), evict(0x9999)])
    said = text(data, tmp_path)
    assert f"1 event {ZERO}" in said and f"1 event {UNSEEN}" in said


def test_a_stretch_begun_by_the_last_event_is_drawn(tmp_path, monkeypatch):
    """A zero-width span cannot be seen: such a stretch is a line where it begins (and a trace without one draws
    no such line)."""
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the test extra)")
    import matplotlib.axes

    lines, real = [], matplotlib.axes.Axes.axvline

    def spy(self, *args, **kwargs):
        lines.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "axvline", spy)
    drawn = []
    for last in (0, 5):  # under the budget at the end, then over it from the last event
        path = tmp_path / f"t{last}.etl"
        path.write_bytes(trace([segment(1), (*budget(1), 1 * MS), (*usage(0), 2 * MS), (*usage(last), 3 * MS)]))
        etw.plot(str(path), str(tmp_path / f"p{last}.png"))
        drawn.append(len(lines))
    assert drawn == [0, 1]


def test_where_an_allocation_is_after_a_paging_event_is_labelled_a_reading_for_every_event_that_sets_it():
    """The code takes a fill's, a virtual transfer's and a page-in's segment as where the allocation is, as a
    transfer's: each says so, as the package's reading."""
    assert "[reading]" in WHERE_NEXT
    for event, field in (("PagingOpTransfer", "DestinationSegmentId"), ("PagingOpFill", "SegmentId"),
                         ("PagingOpVirtualTransfer", "DestinationSegmentId"), ("PagingOpVirtualFill", "SegmentId"),
                         ("PageInAllocation", "uiSegmentId")):
        (mapping,) = [m for m in etw.ENTRIES[event].mapping if m.field == field]
        assert WHERE_NEXT in mapping.reason, event


def test_a_process_handle_that_cannot_be_a_process_id_is_an_empty_process_cell_in_every_format_not_a_traceback(
        tmp_path):
    """Second hostile pass of issue 31: an allocation's hProcessId of 2**64-16 made --format parquet (and the Dask
    recipe) raise OverflowError, and CSV, JSON lines and --json's resolved wrote a decimal past 2**53. A process id
    is 32 bits, so such a handle names no process there: the cell is empty; --json's fields keep the handle."""
    import json

    import pyarrow.parquet as pq

    handle = (1 << 64) - 16
    data = trace([segment(1), segment(2), allocation(0x1000, process=handle), transfer(0x1000, 2, 1, 4 * MB),
                  evict(0x1000)])
    found = both(data, tmp_path)
    assert [r["process"] for r in rows(found, "paging") + rows(found, "evictions")] == ["", ""]
    for name in ("paging", "evictions"):
        (line,) = tables(data, tmp_path / "j", True, "jsonl")[f"{name}.jsonl"].decode().splitlines()
        assert json.loads(line)["process"] is None
    assert "error" not in tables(data, tmp_path / "p", True, "parquet")
    assert pq.read_table(tmp_path / "p" / "out-True-parquet" / "evictions.parquet").column("process").to_pylist() == \
        [None]
    path = tmp_path / "t.etl"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    assert cli.execute(["etw", str(path), "--json"], out, err) in (0, 1), err.getvalue()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    (evicted,) = [e for e in lines if e.get("symbol") == "EvictAllocation"]
    assert evicted["resolved"]["process"] is None and evicted["resolved"]["size"] == f"0x{MB:x}"
    (started,) = [e for e in lines if e.get("id") == 33]
    assert started["fields"]["hProcessId"] == f"0x{handle:x}"
