"""One time per event, whichever path reads it: the log-file header's clock (QPC, system time, CPU
cycles; any frequency, any start) gives the same time in the column-wise tables as in the
event-by-event reader (whose time --json and text print; the tables write that instant in nanoseconds,
``etw.times``), or none on both ("" in CSV, null in JSON), and the same ``ms`` from the trace's start."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from d3dkmddi_py.bulk.table import time_texts
from d3dkmddi_py.etw import read
from d3dkmddi_py.etw.model.times import NS_HIGH, NS_LOW, filetime_ns, milliseconds, time_ns, time_text, utc_text
from d3dkmddi_py.etw.readers.etlfile import _LAST_FILETIME, LogHeader, filetime_text
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.samples import etl_build
from d3dkmddi_py.samples.etl_build import START_FILETIME, Clock

from .etl_readings import column_runs, tables
from .helpers import ADAPTER, alloc_fields, seg_fields

INT64 = 1 << 63


def trace(clock: Clock, header_ticks: int, ticks: list) -> bytes:
    start = KIND_BY_NAME[("AdapterAllocation", "Start")]
    events = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x11), ticks=ticks[0])]
    events += [etl_build.dxgkrnl_event(start, alloc_fields(hDxgGlobalAlloc=i + 1), ticks=t, processor=i)
               for i, t in enumerate(ticks)]
    return etl_build.etl_bytes(events, clock=clock, header_ticks=header_ticks)


def times_of(csv: bytes) -> list:
    """The time column of a table."""
    return [line.split(b",")[1] for line in csv.splitlines()[1:]]


def ms_of(csv: bytes) -> list:
    """The ms column of a table, as floats (None for an empty cell)."""
    return [float(line.split(b",")[2]) if line.split(b",")[2] else None for line in csv.splitlines()[1:]]


STEPS = [0, 1, 1234, 10 ** 7, 3600 * 10 ** 7, 10 ** 12 - 1, 10 ** 15, 2 ** 40]
CLOCKS = {
    "QPC at 10 MHz": (Clock(), 5_000_000_000),
    "a timer frequency of 10**12": (Clock(perf_freq=10 ** 12), 5_000_000_000),
    "a timer frequency of 2**63 - 1": (Clock(perf_freq=INT64 - 1), 0),
    "a timer frequency of 1": (Clock(perf_freq=1), 0),
    "a timer frequency of 0": (Clock(perf_freq=0), 0),
    "a negative timer frequency": (Clock(perf_freq=-10 ** 7), 0),
    "system time": (Clock(clock_type=2, perf_freq=0), 5_000_000_000),
    "a CPU-cycle clock at 3000 MHz": (Clock(clock_type=3, cpu_mhz=3000), 0),
    "a CPU-cycle clock of 0 MHz": (Clock(clock_type=3, cpu_mhz=0), 0),
    "a CPU-cycle clock of 2**32 - 1 MHz": (Clock(clock_type=3, cpu_mhz=2 ** 32 - 1), 0),
    "an unknown clock type": (Clock(clock_type=7), 0),
    "a header time of -2**63": (Clock(), -INT64),
    "a header time of 2**63 - 2**51": (Clock(), INT64 - 2 ** 51),
    "a start time of 0": (Clock(start_filetime=0), 0),
    "a start time of -1": (Clock(start_filetime=-1), 0),
    "a start time just before year 10000": (Clock(start_filetime=_LAST_FILETIME - 10 ** 7), 0),
    "a start time of 2**63 - 1": (Clock(start_filetime=INT64 - 1), 0),
}


@pytest.mark.parametrize("case", list(CLOCKS))
def test_one_time_per_event_whichever_path_reads_it(case, tmp_path):
    """The issue's cases (a CPU-cycle clock of 0 MHz or huge, a timer frequency of 10**12, extreme
    header times) once printed year 6947 in the column-wise CSV and null in --json."""
    clock, header_ticks = CLOCKS[case]
    data = trace(clock, header_ticks, STEPS)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert fast == exact and "error" not in exact
    reader = read(io.BytesIO(data), name="trace.etl")
    events = [e for e in reader if e.event == "AdapterAllocation"]  # what --json and text print
    ns = [time_ns(e.time) for e in events]
    assert times_of(exact["allocations.csv"]) == [(t or "").encode() for t in time_texts(ns)]
    start = filetime_ns(reader.etl_header.start_filetime)
    assert ms_of(exact["allocations.csv"]) == [milliseconds(t, start) for t in ns]


@pytest.mark.parametrize("case", list(CLOCKS))
def test_one_time_per_event_among_allocations_read_as_columns(case, tmp_path, monkeypatch):
    """An event among a run of allocations read as columns (residency here) takes its time from the clock as the
    allocations do (``LogHeader.nanoseconds``), the time the event-by-event reader's text reads as."""
    clock, header_ticks = CLOCKS[case]
    resident = KIND_BY_NAME[("TotalBytesResidentInSegment", "Info")]
    start = KIND_BY_NAME[("AdapterAllocation", "Start")]
    events = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x11), ticks=STEPS[0])]
    for i, t in enumerate(STEPS):
        events += [etl_build.dxgkrnl_event(start, alloc_fields(hDxgGlobalAlloc=i * 10 + j + 1), ticks=t)
                   for j in range(10)]
        events.append(etl_build.dxgkrnl_event(resident, {"DxgAdapter": ADAPTER, "SegmentId": 1,
                                                         "TotalBytesResident": i}, ticks=t))
    data = etl_build.etl_bytes(events, clock=clock, header_ticks=header_ticks)
    runs = column_runs(monkeypatch)
    fast = tables(data, tmp_path, True)
    assert sum(runs) == 10 * len(STEPS)
    exact = tables(data, tmp_path, False)
    assert fast == exact and "error" not in exact
    reader = read(io.BytesIO(data), name="trace.etl")
    ns = [time_ns(e.time) for e in reader if e.event == "TotalBytesResidentInSegment"]
    assert times_of(exact["residency.csv"]) == [(t or "").encode() for t in time_texts(ns)]


def test_a_clock_without_a_rate_gives_no_time_not_a_made_up_one(tmp_path):
    for case in ("a timer frequency of 0", "a negative timer frequency", "a CPU-cycle clock of 0 MHz"):
        clock, header_ticks = CLOCKS[case]
        got = tables(trace(clock, header_ticks, STEPS), tmp_path, True)
        assert set(times_of(got["allocations.csv"])) == {b""}, case


def test_the_times_are_the_clocks():
    """A spot check of the rule itself: 1234 ticks of a 10 MHz QPC are 123.4 us after the start."""
    header = LogHeader({"clock_type": 1, "perf_freq": 10 ** 7, "cpu_mhz": 0, "start_filetime": START_FILETIME}, 100)
    assert header.utc(100 + 1234) == "2025-11-22T17:35:02.1235801Z"
    cycles = LogHeader({"clock_type": 3, "perf_freq": 0, "cpu_mhz": 3000, "start_filetime": START_FILETIME}, 0)
    assert cycles.utc(3_000_000_000) == "2025-11-22T17:35:03.1234567Z"  # a second of a 3 GHz counter


@pytest.mark.parametrize("hundred_ns, text", [
    (1, "1601-01-01T00:00:00.0000001Z"), (10 ** 7 - 1, "1601-01-01T00:00:00.9999999Z"),
    (10 ** 7, "1601-01-01T00:00:01.0000000Z"), (_LAST_FILETIME + 10 ** 7 - 1, "9999-12-31T23:59:59.9999999Z"),
    (_LAST_FILETIME + 10 ** 7, None), (0, None), (None, None)])
def test_an_etl_time_text_from_its_second_and_its_fraction(hundred_ns, text):
    """The text is its second's (cached: events come in time order), then the 7 digits of 100 ns, to the last
    of 9999 (typed in by hand)."""
    assert filetime_text(hundred_ns) == text == filetime_text(hundred_ns)  # the second time from the cache


int64 = st.integers(-INT64, INT64 - 1)


@settings(max_examples=400, deadline=None, database=None)
@given(clock_type=st.sampled_from([0, 1, 2, 3, 7]), perf_freq=st.one_of(int64, st.integers(1, 10 ** 13)),
       cpu_mhz=st.integers(0, 2 ** 32 - 1), start=st.one_of(int64, st.integers(0, _LAST_FILETIME)),
       header_time=int64, timestamps=st.lists(st.one_of(int64, st.integers(-10 ** 12, 10 ** 12)), min_size=1,
                                              max_size=8))
def test_the_column_wise_time_rule_is_the_rule(clock_type, perf_freq, cpu_mhz, start, header_time, timestamps):
    """``nanoseconds`` (NumPy, column-wise) equals ``utc`` (exact integers) read by ``time_ns``, the rule of
    every table's time, on any header and timestamps."""
    header = LogHeader({"clock_type": clock_type, "perf_freq": perf_freq, "cpu_mhz": cpu_mhz,
                        "start_filetime": start}, header_time)
    near = [header_time + t if -INT64 <= header_time + t < INT64 else t for t in timestamps]  # times near the start
    for values in (timestamps, near):
        got = header.nanoseconds(np, np.array(values, dtype=np.int64))
        assert list(got.tolist() if hasattr(got, "tolist") else got) == [time_ns(header.utc(t)) for t in values]


@pytest.mark.parametrize("form", ["etl", "xml with two offsets"])
def test_a_time_that_goes_back_is_said_with_the_first_event_and_every_event_read_in_order(form, tmp_path):
    """A processor's clock that steps back (.etl), or times in two zones out of order (XML): the text counts the
    events whose time is before the one before them and names the first; nothing is re-sorted or dropped."""
    from d3dkmddi_py.etw.model.tracker import Tracker
    from tests.etw.helpers import trace as xml_trace, tracerpt_event

    if form == "etl":  # one processor's clock: 20 and 35 go back
        start = KIND_BY_NAME[("AdapterAllocation", "Start")]
        data = etl_build.etl_bytes([etl_build.dxgkrnl_event(start, alloc_fields(hDxgGlobalAlloc=i + 1), ticks=t)
                                    for i, t in enumerate([10, 30, 20, 40, 35])], processors=1)
        events = list(read(data))
        want = (2, events[2].number)
    else:
        times = ("2026-11-23T10:00:00.000000002+0100", "2026-11-23T09:00:00.000000001Z",
                 "2026-11-23T09:00:00.000000003Z")  # the second is 1 ns before the first, in another form
        default = 'SystemTime="2026-11-23T10:00:00.000000001+0100"'
        events = list(read(xml_trace(*(tracerpt_event(78, seg_fields(i + 1, 0x11)).replace(
            default, f'SystemTime="{t}"') for i, t in enumerate(times)))))
        want = (1, events[1].number)
    tracker = Tracker()
    for e in events:
        tracker._apply(e)
    assert (tracker.back.count, tracker.back.first[0]) == want
    assert [e.number for e in events] == sorted(e.number for e in events)
    if form == "etl":
        from tests.etw.helpers import run

        path = tmp_path / "back.etl"
        path.write_bytes(data)
        text, _status = run([str(path)])
        assert f"times that go back: 2 events whose time is before the time of the event before them, each read in " \
               f"the order given (the first: event #{want[1]} at {time_text(events[2].time)}, after " \
               f"{time_text(events[1].time)})" in text


@given(st.integers(NS_LOW, NS_HIGH))
@settings(max_examples=300, deadline=None)
def test_utc_text_is_the_tables_time_text(ns):
    """One form for a time in every output: the text and --json (times.utc_text) write what the tables do."""
    assert utc_text(ns) == time_texts([ns])[0] == time_texts(np.array([ns], dtype=np.int64))[0]
    assert time_ns(utc_text(ns)) == ns


@pytest.mark.parametrize("given_text, want", [
    ("2026-11-23T10:15:02.127651093+0100", "2026-11-23T09:15:02.127651093Z"),  # tracerpt's local time
    ("2026-11-23T09:15:02.1276510Z", "2026-11-23T09:15:02.127651000Z"),  # an .etl's 7 digits
    ("2026-11-23T09:15:02Z", "2026-11-23T09:15:02.000000000Z"),  # Event Viewer without a fraction
    ("yesterday", "yesterday"), (None, None)])  # no instant: as the source gave it
def test_an_event_time_is_written_in_the_one_utc_form(given_text, want):
    assert time_text(given_text) == want


@pytest.mark.parametrize("text", ["2026-11-23T09:15:02.124505365", "2026-11-23T09:15:02.124505365123Z",
                                  "2026-11-23 09:15:02.124505365Z"], ids=["no zone", "twelve digits", "a space"])
def test_a_time_no_reader_reads_is_null_in_json_kept_as_given_and_said_in_the_text(text, tmp_path):
    """--json echoed such a text where the tables left the cell empty, and nothing said it."""
    import re

    from d3dkmddi_py import cli
    from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH

    xml = SAMPLE_PATH.read_text(encoding="utf-8")
    first = re.findall(r'SystemTime="([^"]+)"', xml)[5]
    path = tmp_path / "t.xml"
    path.write_text(xml.replace(first, text, 1), encoding="utf-8")
    out, _err, _status = cli.run(["etw", str(path), "--json"])
    (event,) = [e for e in map(json.loads, out.splitlines()) if e.get("number") == 6]
    assert event["time"] is None and event["time_as_given"] == text
    out, _err, _status = cli.run(["etw", str(path)])
    assert f"times not read: 1 event whose time is no instant this reader knows (ISO 8601 with a zone), empty in " \
           f"every output (the first: event #6, {text!r})" in out
