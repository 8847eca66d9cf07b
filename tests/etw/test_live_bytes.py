"""Live allocations have one key and one rule in every output (issue 30, "three answers for live bytes"): the
tables (``live``, ``processes``) keyed them by hVidMmGlobalAlloc across adapters, the text and the picture per
adapter by hDxgGlobalAlloc; a Start with a zero handle, a Stop whose handle differs from its Start's, or one
handle on two adapters gave three answers.  Now each case gives one, the same in the tables, the text and the
picture (``catalog/_allocations.key``)."""
from __future__ import annotations

import csv
import io

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.outputs.plot import series
from tests.etw.etl_readings import tables
from tests.etw.etl_twin import Dxg, twin
from tests.etw.helpers import ADAPTER, alloc_fields, seg_fields

START, STOP, SEGMENT = etw.KINDS[33], etw.KINDS[34], etw.KINDS[78]
OTHER = ADAPTER + 0x1000  # a second adapter
P1, P2 = 0x1F40, 0x2A00


def start(dxg, vidmm, size, process=P1, adapter=ADAPTER):
    return Dxg(START, alloc_fields(hDxgGlobalAlloc=dxg, hVidMmGlobalAlloc=vidmm, allocSize=size, hProcessId=process,
                                   pDxgAdapter=adapter))


def stop(dxg, vidmm, size=0x1000, process=P1, adapter=ADAPTER):
    return Dxg(STOP, alloc_fields(hDxgGlobalAlloc=dxg, hVidMmGlobalAlloc=vidmm, allocSize=size, hProcessId=process,
                                  pDxgAdapter=adapter))


def answers(items, tmp_path) -> dict:
    """Live bytes per process, and the live allocations, as the tables, the text (etw.adapters) and the picture
    give them."""
    etl, _xml = twin([Dxg(SEGMENT, seg_fields(1, 0x0), version=1)] + items)
    got = tables(etl, tmp_path, True)
    processes = {int(r["hProcessId"], 16): int(r["live_bytes"], 16)
                 for r in csv.DictReader(io.StringIO(got["processes.csv"].decode()))}
    live_rows = sorted((int(r["adapter"], 16), int(r["hDxgGlobalAlloc"], 16), int(r["hVidMmGlobalAlloc"], 16))
                       for r in csv.DictReader(io.StringIO(got["live.csv"].decode())))
    text: dict = {}
    text_live = []
    for pointer, a in etw.adapters(etw.read(etl)).items():
        for e in a.allocations.values():
            f = e.event.fields
            text[f["hProcessId"]] = text.get(f["hProcessId"], 0) + f["allocSize"]
            text_live.append((pointer, f["hDxgGlobalAlloc"], f["hVidMmGlobalAlloc"]))
    picture, _errors = series(etl)
    drawn: dict = {}
    for a in picture.adapters.values():
        for process, s in a.group("live").items():
            drawn[process] = drawn.get(process, 0) + s.values[-1]
    return {"tables": ({p: n for p, n in processes.items() if n}, live_rows),
            "text": (text, sorted(text_live)), "picture": ({p: n for p, n in drawn.items() if n}, None)}


def one_answer(items, tmp_path) -> dict:
    got = answers(items, tmp_path)
    assert got["tables"][0] == got["text"][0] == got["picture"][0]
    assert got["tables"][1] == got["text"][1]
    return got["tables"][0]


def test_a_start_with_a_zero_hvidmm_handle_is_live_by_its_hdxg_handle_everywhere(tmp_path):
    assert one_answer([start(0xA, 0, 0x1000), start(0xB, 0xB1, 0x2000)], tmp_path) == {P1: 0x3000}


def test_a_start_with_both_handles_zero_is_live_nowhere(tmp_path):
    assert one_answer([start(0, 0, 0x1000), start(0xB, 0xB1, 0x2000)], tmp_path) == {P1: 0x2000}


def test_a_stop_whose_hvidmm_handle_differs_from_its_starts_removes_it_by_hdxg_everywhere(tmp_path):
    assert one_answer([start(0xA, 0xA1, 0x1000), start(0xB, 0xB1, 0x2000), stop(0xA, 0xA9)], tmp_path) == {P1: 0x2000}


def test_one_handle_on_two_adapters_is_two_live_allocations_everywhere(tmp_path):
    items = [start(0xA, 0xA1, 0x1000), start(0xA, 0xA1, 0x2000, process=P2, adapter=OTHER)]
    assert one_answer(items, tmp_path) == {P1: 0x1000, P2: 0x2000}
    items.append(stop(0xA, 0xA1, adapter=OTHER))  # stops the second adapter's only
    assert one_answer(items, tmp_path) == {P1: 0x1000}


def test_a_start_again_of_a_live_allocation_replaces_it_everywhere(tmp_path):
    items = [start(0xA, 0xA1, 0x1000), start(0xA, 0xA1, 0x3000, process=P2)]
    assert one_answer(items, tmp_path) == {P2: 0x3000}


def test_a_later_event_finds_the_allocation_that_last_started_with_its_global_handle():
    """A placement names hVidMmGlobalAlloc: on two adapters, the one that started last answers."""
    tracker = etw.Tracker()
    for item in ([start(0xA, 0xA1, 0x1000), start(0xC, 0xA1, 0x2000, adapter=OTHER)]):
        tracker.apply(next(iter(etw.from_records([{"event": item.kind.event_id, "fields": item.fields}]))))
    live = tracker.part("AdapterAllocation")
    assert live.of(0xA1)[0] == OTHER and len(live.live) == 2


def test_a_chunk_of_only_stops_of_allocations_not_seen_starting_is_drawn_and_counted(tmp_path):
    """[Start, ReportSegment, an unmatched Stop]: the picture raised IndexError (its chunk after the segment report
    held the Stop alone)."""
    etl, _xml = twin([start(0xA, 0xA1, 0x1000), Dxg(SEGMENT, seg_fields(1, 0x0), version=1), stop(0x99, 0x98)])
    picture, _errors = series(etl)
    (a,) = picture.adapters.values()
    assert a.notes["unmatched"] == 1 and list(a.group("live")[P1].values) == [0x1000]


@pytest.mark.parametrize("n", [1, 3])
def test_many_stops_of_unknown_allocations_in_one_chunk_change_no_process(n, tmp_path):
    etl, _xml = twin([Dxg(SEGMENT, seg_fields(1, 0x0), version=1)] + [stop(0x90 + i, 0x80 + i) for i in range(n)])
    picture, _errors = series(etl)
    (a,) = picture.adapters.values()
    assert a.notes["unmatched"] == n and not a.group("live")


def test_live_bytes_past_2_64_are_shown_as_2_64_minus_1_and_said_in_every_output(tmp_path):
    """Three allocations of 2**63 bytes: --plot and Parquet raised OverflowError, JSONL wrote a 65-bit value, CSV a
    20-digit one.  Every output now shows 0xffffffffffffffff, and the text and the picture say why."""
    from tests.etw.helpers import run

    etl, _xml = twin([Dxg(SEGMENT, seg_fields(1, 0x0), version=1)] +
                     [start(i + 1, 0x100 + i, 1 << 63) for i in range(3)])
    for fmt in ("csv", "jsonl", "parquet"):
        got = tables(etl, tmp_path, True, fmt)
        assert "error" not in got, got
    rows = list(csv.DictReader(io.StringIO(tables(etl, tmp_path, True)["processes.csv"].decode())))
    assert [(r["live_bytes"], r["peak_live_bytes"]) for r in rows] == [(hex((1 << 64) - 1), hex((1 << 64) - 1))]
    assert '"live_bytes":"0xffffffffffffffff"' in tables(etl, tmp_path, True, "jsonl")["processes.jsonl"].decode()
    path = tmp_path / "big.etl"
    path.write_bytes(etl)
    text, status = run([str(path)])
    assert "the live bytes of 1 process passed 2**64-1 (0xffffffffffffffff)" in text and status == 0  # warnings only
    picture, _errors = series(etl)
    (a,) = picture.adapters.values()
    assert list(a.group("live")[P1].values) == [1 << 63, (1 << 64) - 1, (1 << 64) - 1]
    assert picture.said == {"live bytes passed 2**64-1 and are drawn at 0xffffffffffffffff": 1}


def test_a_trace_without_one_event_family_keeps_the_time_labels_of_the_others():
    """Allocations alone (no residency, usage or budget events, as a trace without the Base and References
    keywords): the empty panels cleared the shared time axis, so no panel had time labels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from d3dkmddi_py.etw.outputs.plot import figure

    etl, _xml = twin([Dxg(SEGMENT, seg_fields(1, 0x0), version=1)] + [start(i + 1, 0x100 + i, 0x1000)
                                                                       for i in range(5)])
    picture, _errors = series(etl)
    fig = figure(picture)
    FigureCanvasAgg(fig).draw()
    live = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith(f"adapter 0x{ADAPTER:x}: live allocated"))
    assert any(t.get_text() for t in live.get_xticklabels()), "no time labels on the live panel"
    empty = next(ax for ax in fig.axes if "bytes resident" in ax.get_title(loc="left"))
    assert not any(t.get_text() for t in empty.get_xticklabels() if t.get_visible())


def test_eight_threads_drawing_svgs_at_once_write_the_same_bytes(tmp_path):
    """matplotlib's rc settings (the SVG hash salt) are the process's: 3 or 4 of 32 pictures drawn on 8 threads
    differed.  One figure is saved at a time."""
    from concurrent.futures import ThreadPoolExecutor

    from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH

    outs = [tmp_path / f"p{i}.svg" for i in range(32)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda out: etw.plot(SAMPLE_PATH, out), outs))
    assert len({p.read_bytes() for p in outs}) == 1
