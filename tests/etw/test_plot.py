"""The picture of a trace (``etw --plot``, ``etw.plot``): its series are the tables' values (the sample, and
an .etl twin with residency events against its XML), a trace without the memory events says what to record,
the output is deterministic and goes through outfile, matplotlib is imported only to draw, and the README's
picture of the sample is fresh."""
from __future__ import annotations

import csv
import importlib
import io
import os
from operator import itemgetter
import pathlib
import subprocess
import sys
import tracemalloc

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.etw.outputs.command import SAMPLE_FILE, SAMPLE_PATH
from d3dkmddi_py.etw.catalog.process_usage import key_text
from d3dkmddi_py.etw.outputs.panels import POINTS_PER_COLUMN, record_hint, reduce
from d3dkmddi_py.etw.outputs.plot import digest, figure, series
from d3dkmddi_py.semantics.explain import _size_text
from d3dkmddi_py.samples import etl_build, etw_build
from tests.etw.etl_twin import Dxg, outputs, sample_items, twin
from tests.etw.helpers import ADAPTER, alloc_fields, run, seg_fields
from tests.etw.memory_story import RESIDENT, SEGMENT, START, resident, story

np = pytest.importorskip("numpy")
pytest.importorskip("matplotlib")  # the test extra has it: a missing one is a broken environment
REPO = pathlib.Path(__file__).resolve().parents[2]
README_PICTURE = REPO / "docs" / "etw_sample.png"
PLOT = importlib.import_module("d3dkmddi_py.etw.outputs.plot")  # the module (etw.plot is its function)


def lines(fig) -> dict:
    """label -> (x, y) of every line drawn."""
    return {ln.get_label(): (np.asarray(ln.get_xdata(), dtype=float), np.asarray(ln.get_ydata(), dtype=float))
            for ax in fig.axes for ln in ax.get_lines()}


def table(tables: dict, name: str) -> list:
    return list(csv.DictReader(io.StringIO(tables[f"{name}.csv"].decode())))


def csv_tables(data: bytes, monkeypatch, tmp_path) -> dict:
    return outputs(data, monkeypatch, tmp_path)["csv"][0]


def steps(xy) -> list:
    """A step line's values without the point that holds the last one to the end."""
    x, y = xy
    return y[:-1].tolist() if len(x) > 1 and x[-1] > x[-2] and y[-1] == y[-2] else y.tolist()


def test_the_samples_picture_draws_the_values_of_its_tables(monkeypatch, tmp_path):
    picture, errors = series(SAMPLE_PATH)
    drawn = lines(figure(picture))
    tables = csv_tables(SAMPLE_PATH.read_bytes(), monkeypatch, tmp_path)
    residency = table(tables, "residency")
    for sid in {int(r["SegmentId"]) for r in residency}:
        assert steps(drawn[f"segment {sid}"]) == [int(r["TotalBytesResident"], 16) for r in residency
                                                  if int(r["SegmentId"]) == sid]
    for kind, value in (("usage", "NewUsage"), ("budget", "NewBudget")):
        rows = [r for r in table(tables, "process_memory") if r[value] != ""]  # the event's own rows
        key_of = itemgetter("ProcessId", "PhysicalAdapterIndex", "MemorySegmentGroup")
        for key in {key_of(r) for r in rows}:
            label = f"{key_text(tuple(map(int, key)))}: {kind}"
            assert steps(drawn[label]) == [int(r[value], 16) for r in rows if key_of(r) == key]
    segments = {int(r["ulSegmentId"]): int(r["Size"], 16) for r in table(tables, "segments")}  # the last report
    for sid, size in segments.items():
        (y,) = set(drawn[f"segment {sid} Size {_size_text(size)}"][1].tolist())
        assert y == size
    state = {t.name for e in etw.ENTRIES.values() for t in e.state_tables}  # tables of the end, not of events
    of_events = [name[:-4] for name in tables if name != "findings.csv" and name[:-4] not in state]
    assert errors == sum(int(r["errors"]) for name in of_events for r in table(tables, name))
    findings = [r for r in table(tables, "findings") if r["severity"] == "error"]
    assert sum(picture.rules.values()) == len(findings) and picture.rules
    (a,) = picture.adapters.values()
    assert sorted(a.marks.numbers) == sorted({int(r["number"]) for r in findings})


def test_the_pressure_panels_draw_the_paging_evictions_and_over_budget_tables(monkeypatch, tmp_path):
    """The paging panel: per direction the paging table's bytes summed from the start, a tick at each eviction row;
    the usage panel shades each over_budget row's stretch."""
    picture, _errors = series(SAMPLE_PATH)
    fig = figure(picture)
    drawn = lines(fig)
    tables = csv_tables(SAMPLE_PATH.read_bytes(), monkeypatch, tmp_path)
    totals: dict = {}
    for r in table(tables, "paging"):
        key = f"{r['source_segment'] or '-'} -> {r['destination_segment'] or '-'}"
        so_far = totals.setdefault(key, [])
        so_far.append((so_far[-1] if so_far else 0) + int(r["bytes"] or "0", 16))
    assert len(totals) == 4 and {k: steps(drawn[k]) for k in totals} == totals
    (a,) = picture.adapters.values()
    (evicted,) = a.group("evicted").values()
    assert list(evicted.numbers) == [int(r["number"]) for r in table(tables, "evictions")]
    (row,) = table(tables, "over_budget")
    (spans,) = [list(ax.patches) for ax in fig.axes if "shaded: over it" in ax.get_title(loc="left")]
    (span,) = spans
    start, end = span.get_x(), span.get_x() + span.get_width()
    origin = picture.origin * 1000
    assert (start * 1000 + origin, end * 1000 + origin) == pytest.approx((float(row["start_ms"]), float(row["end_ms"])))


def test_the_live_bytes_are_the_trackers_live_allocations_after_each_event():
    events = list(etw.read(SAMPLE_PATH))
    picture, _errors = series(SAMPLE_PATH)
    (a,) = picture.adapters.values()
    (process,) = a.group("live")
    s = a.group("live")[process]
    assert len(s) > 30
    for number, value in zip(s.numbers, s.values):
        (state,) = etw.adapters([e for e in events if e.number <= number], series=False).values()
        assert value == sum(e.event.fields["allocSize"] for e in state.allocations.values()
                            if e.event.fields["hProcessId"] == process)
    assert a.notes.get("unmatched", 0) == 1  # the sample's Stop of an allocation created before the trace


@pytest.mark.parametrize("variant", [dict(), dict(compress=True, processors=3)], ids=["etl", "compressed etl"])
def test_an_etl_twin_with_residency_events_draws_what_its_xml_draws_and_its_tables_hold(variant, monkeypatch,
                                                                                        tmp_path):
    etl, xml = twin(story(), **variant)
    from_etl, _ = series(etl)
    from_xml, _ = series(xml.encode())
    (a,), (b,) = from_etl.adapters.values(), from_xml.adapters.values()
    for panel in ("resident", "usage", "budget", "live"):
        assert {k: (list(s.numbers), list(s.values)) for k, s in a.group(panel).items()} == \
               {k: (list(s.numbers), list(s.values)) for k, s in b.group(panel).items()}
    assert {k: list(s.values) for k, s in a.group("resident").items()} == {1: [0x100000, 0x300000], 3: [5]}
    rows = table(csv_tables(etl, monkeypatch, tmp_path), "residency")
    drawn = lines(figure(from_etl))
    for sid in (1, 3):
        assert steps(drawn[f"segment {sid}"]) == [int(r["TotalBytesResident"], 16) for r in rows
                                                  if int(r["SegmentId"]) == sid]
    x, _y = drawn["segment 1"]
    assert x[0] == pytest.approx(from_etl.x(a.group("resident")[1])[0])  # the x of a row is its time, from the first point


def test_a_trace_without_residency_events_draws_live_bytes_and_says_which_keywords_record_the_rest():
    items = [i for i in sample_items() if isinstance(i, Dxg) and i.kind.event in ("ReportSegment", "AdapterAllocation")]
    etl, _xml = twin(items)
    picture, _ = series(etl)
    (a,) = picture.adapters.values()
    assert not a.group("resident") and not a.group("usage") and a.group("live")
    fig = figure(picture)
    texts = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text") and hasattr(o, "get_position"))]
    resident_note = next(t for t in texts if t.startswith("no TotalBytesResidentInSegment events"))
    assert "keyword Base (0x1)" in resident_note and "{802ec45a-1e99-4b83-9920-87c98277ba9d}" in resident_note
    memory_note = next(t for t in texts if t.startswith("no VidMmProcessUsageChange or VidMmProcessBudgetChange"))
    assert "keyword References (0x4)" in memory_note
    assert any(label.startswith("process ") for label in lines(fig))


def test_the_keywords_to_record_are_the_manifests():
    """The keywords a panel's hint names are those the manifest gives its events (generated from it, never typed):
    read here from ../shared's copy of the manifest itself."""
    import xml.etree.ElementTree as ET

    from tests.conftest import require
    from tests.etw.manifest_xml import MANIFEST

    require(MANIFEST.is_file(), f"the DxgKrnl manifest is not at {MANIFEST}")
    root = ET.parse(MANIFEST).getroot()
    tag = lambda e: e.tag.rpartition("}")[2]  # noqa: E731
    masks = {k.get("name"): int(k.get("mask"), 16) for k in root.iter() if tag(k) == "keyword"}
    words = {int(e.get("value")): e.get("keywords").split() for e in root.iter() if tag(e) == "event"}
    for ids in ((274,), (367, 366), (33, 34, 35)):
        named = dict.fromkeys(w for i in ids for w in words[i])
        assert record_hint(ids).endswith(" and ".join(f"{w} (0x{masks[w]:x})" for w in named))
    assert record_hint((274,)).endswith("keyword Base (0x1)")


def test_a_trace_without_times_is_drawn_against_event_numbers():
    _etl, xml = twin(story())
    xml = xml.replace('SystemTime="', 'RawTime="1').replace("RawTime=\"1", "RawTime=\"", 1)
    picture, _ = series(xml.encode())
    (a,) = picture.adapters.values()
    assert picture.axis == "number"
    assert picture.x(a.group("resident")[1]).tolist() == [float(n) for n in a.group("resident")[1].numbers]


def test_reduce_keeps_each_pixel_columns_first_lowest_highest_and_last_point():
    rng = np.random.default_rng(23)
    x = np.sort(rng.random(100_000))
    y = rng.integers(0, 1 << 40, len(x)).astype(np.float64)
    columns = 300
    rx, ry = reduce(np, x, y, columns)
    assert len(rx) <= POINTS_PER_COLUMN * columns
    bins = np.minimum(((x - x[0]) / (x[-1] - x[0]) * columns).astype(int), columns - 1)
    kept = np.minimum(((rx - x[0]) / (x[-1] - x[0]) * columns).astype(int), columns - 1)
    for c in range(columns):
        inside, got = y[bins == c], ry[kept == c]
        assert got.min() == inside.min() and got.max() == inside.max()
        assert got[0] == inside[0] and got[-1] == inside[-1]
    assert reduce(np, x[:10], y[:10], columns)[0].tolist() == x[:10].tolist()  # few points: all of them


@pytest.mark.parametrize("n", [1000, 100_000], ids=["below the reduction", "above it"])
def test_a_time_that_goes_back_is_drawn_in_event_order_at_any_count(n):
    """The picture drew a time that goes back in event order below 4,800 samples and re-sorted by time above, so
    its last value disagreed with the text's: samples are in event order everywhere."""
    rng = np.random.default_rng(29)
    x = np.sort(rng.random(n))
    x[n // 2:] -= 0.5  # the clock steps back half way
    y = rng.integers(0, 1 << 40, n).astype(np.float64)
    rx, ry = reduce(np, x, y, 300)
    assert ry[-1] == y[-1] and rx[-1] == x[-1] and ry[0] == y[0]  # the text's first and last, drawn last and first
    assert ry.max() == y.max() and ry.min() == y.min()


def test_series_past_the_bound_are_counted_and_said(monkeypatch):
    monkeypatch.setattr(PLOT, "MAX_SERIES", 2)
    items = [Dxg(SEGMENT, seg_fields(i, 0), version=1) for i in (1, 2, 3)]
    items += [Dxg(RESIDENT, resident(i, 0x1000 * i)) for i in (1, 2, 3, 3)]
    etl, _xml = twin(items)
    picture, _ = series(etl)
    (a,) = picture.adapters.values()
    assert list(a.group("resident")) == [1, 2] and a.dropped == {"resident": 2}
    legend = [ax.get_legend() for ax in figure(picture).axes if ax.get_legend() is not None][0]
    assert legend.get_title().get_text() == "1 more segment not drawn"


def test_adapters_past_the_bound_are_counted_and_said(monkeypatch):
    monkeypatch.setattr(PLOT, "MAX_ADAPTERS", 1)
    other = ADAPTER + 0x1000
    items = [Dxg(START, alloc_fields()), Dxg(START, alloc_fields(pDxgAdapter=other, hDxgGlobalAlloc=0xFFFF0002,
                                                                 hVidMmGlobalAlloc=0xEEEE0002))]
    picture, _ = series(twin(items)[0])
    assert list(picture.adapters) == [ADAPTER] and picture.dropped_events == 1
    fig = figure(picture)
    assert any("1 event of adapters past the first 1 not collected" in t.get_text() for t in fig.texts + [
        t for ax in fig.axes for t in ax.texts])


def test_the_picture_holds_arrays_not_an_object_per_event():
    """24 bytes a sample (x, number, value), whatever the events: a trace of 40,000 allocation events (the
    sample's, repeated: few live at once) retains well under 100 bytes an event."""
    kind = KIND_BY_NAME
    made = [etl_build.dxgkrnl_event(kind[("AdapterAllocation", o)], f) for o, _n, f in etw_build.allocation_events()]
    n = 40_000
    events = [etl_build.EtlEvent(etl_build.PROVIDER_GUID, e.event_id, e.version, e.payload, opcode=e.opcode,
                                 task=e.task, keyword=e.keyword, ticks=100 + i, processor=i % 2)
              for i, e in ((i, made[i % len(made)]) for i in range(n))]
    data = etl_build.etl_bytes(events, processors=2, buffer_size=65536)
    series(data)  # warm: the schema, the layouts, NumPy
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        picture, _ = series(data)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    samples = sum(len(s) for a in picture.adapters.values() for s in a.group("live").values())
    assert samples == n
    assert held / n < 100, held / n


# ---- the file
def _draw(tmp_path, name: str) -> bytes:
    out = tmp_path / name
    etw.plot(SAMPLE_PATH, out)
    return out.read_bytes()


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_the_picture_is_the_same_bytes_every_run_and_carries_no_date(suffix, tmp_path):
    first, second = _draw(tmp_path, f"a.{suffix}"), _draw(tmp_path, f"b.{suffix}")
    assert first == second
    if suffix == "svg":
        assert b"<dc:date>" not in first and b"sha256 of what is drawn" in first
    else:
        from PIL import Image

        text = Image.open(io.BytesIO(first)).text
        assert set(text) == {"Title", "Description"} and text["Description"].startswith("sha256 of what is drawn")


def test_plot_from_the_command_writes_the_picture_and_says_what_it_holds(monkeypatch, tmp_path):
    out = tmp_path / "sample.svg"
    err = io.StringIO()
    status = run_stderr(["sample", "--plot", str(out)], err)
    assert status == 1  # the sample has error findings, as its tables
    assert out.read_bytes().startswith(b"<?xml")
    assert err.getvalue() == f"d3dkmddi: wrote the picture of 1 adapter (13 series, 11 error findings) to {out}\n"


def run_stderr(argv, err) -> int:
    import argparse

    from d3dkmddi_py.etw.outputs import command

    p = argparse.ArgumentParser(prog="d3dkmddi etw")
    command.add_arguments(p)
    return command.run(p.parse_args(argv), io.StringIO(), err)


def _cli(args, tmp_path, *, block_matplotlib: bool = False) -> subprocess.CompletedProcess:
    code = "import sys\n"
    if block_matplotlib:
        code += "sys.modules['matplotlib'] = None\n"
    code += "from d3dkmddi_py.__main__ import main\nsys.exit(main())\n"
    return subprocess.run([sys.executable, "-c", code, "etw", *args], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)


def test_plot_without_matplotlib_says_the_one_command_that_installs_it(tmp_path):
    done = _cli(["sample", "--plot", "out.png"], tmp_path, block_matplotlib=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "pip install 'd3dkmddi_py[plot]'" in done.stderr
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("argv, words", [
    (["sample", "--plot", "out.txt"], "a file name ending in .png or .svg"),
    (["sample", "--plot", "-"], "a file name ending in .png or .svg"),
    (["sample", "--plot", "out.png", "--json"], "--plot writes a picture alone"),
    (["sample", "--plot", "out.png", "--format", "csv", "-o", "t"], "--plot writes a picture alone"),
    (["trace.png", "--plot", "trace.png"], "it is the input trace.png"),
    (["missing.xml", "--plot", "out.png"], "missing.xml"),
], ids=["suffix", "stdout", "json", "format", "the input", "no trace"])
def test_a_picture_that_cannot_be_written_is_one_line_and_no_file(argv, words, tmp_path):
    (tmp_path / "trace.png").write_bytes(SAMPLE_PATH.read_bytes())
    done = _cli(argv, tmp_path)
    assert done.returncode == 2 and words in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.png"]
    assert (tmp_path / "trace.png").read_bytes() == SAMPLE_PATH.read_bytes()


def test_a_trace_that_cannot_be_read_leaves_an_existing_picture_as_it_was(tmp_path):
    (tmp_path / "out.png").write_bytes(b"before")
    (tmp_path / "bad.xml").write_text("<Events><Event>")
    done = _cli(["bad.xml", "--plot", "out.png"], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.xml", "out.png"]
    assert (tmp_path / "out.png").read_bytes() == b"before"


def test_importing_the_package_and_reading_a_trace_do_not_import_matplotlib():
    code = ("import sys, d3dkmddi_py; from d3dkmddi_py import etw; from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH; "
            "list(etw.read(SAMPLE_PATH)); etw.plot; print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == "False", done.stderr


def test_the_readme_picture_of_the_sample_is_fresh():
    """docs/etw_sample.png carries the digest of what it draws; redraw the sample and compare
    (``d3dkmddi etw sample --plot docs/etw_sample.png`` makes it again)."""
    from PIL import Image

    fig = figure(series(SAMPLE_PATH, name=f"<samples>/{SAMPLE_FILE}")[0])  # as the command names it
    held = Image.open(README_PICTURE).text["Description"]
    assert held == f"sha256 of what is drawn: {digest(fig)}", \
        "stale: run d3dkmddi etw sample --plot docs/etw_sample.png"
    assert "![" in (REPO / "README.md").read_text() and "docs/etw_sample.png" in (REPO / "README.md").read_text()



def _live_bytes_row_by_row(rows) -> dict:
    """The live bytes per (adapter, hProcessId) after each row, one row at a time (the rule the picture follows:
    a Start of a live allocation of the same process replaces it in one change)."""
    held, totals, out = {}, {}, {}
    for number, (opcode, adapter, dxg, vidmm, process, size) in enumerate(rows):
        live = held.setdefault(adapter, {})
        gone = live.pop(("d", dxg) if dxg else ("v", vidmm), None)
        if opcode == "Stop" and gone is None:
            continue
        replaced = 0
        changes = []
        if gone is not None:
            if opcode != "Stop" and gone[0] == process:
                replaced = gone[1]
            else:
                changes.append((gone[0], -gone[1]))
        if opcode != "Stop":
            live[("d", dxg) if dxg else ("v", vidmm)] = (process, size)
            changes.append((process, size - replaced))
        for owner, delta in changes:
            key = (adapter, owner)
            totals[key] = totals.get(key, 0) + delta
            out.setdefault(key, []).append((number, totals[key]))
    return out


def test_live_bytes_per_process_are_found_column_wise_across_chunks():
    """The live bytes series are computed from each chunk's columns at once (the live allocations kept as
    arrays between chunks), and equal the row-by-row rule: Starts again, Stops of unknown allocations, handles
    of either kind, a process's allocation taken over by another, on two adapters."""
    import random

    from d3dkmddi_py.bulk.table import Table
    from d3dkmddi_py.etw.outputs.plot import _Collector

    rng = random.Random(23)
    rows = [(rng.choice(("Start", "DCStart", "Stop")), rng.choice((0x10, 0x20)), rng.choice((0, 1, 2, 3)),
             rng.choice((5, 6, 7)), rng.choice((100, 200, 300)), rng.randrange(1, 1 << 40)) for _ in range(3000)]
    names = ["number", "ms", "adapter", "opcode", "hDxgGlobalAlloc", "hVidMmGlobalAlloc", "hProcessId", "Size",
             "errors"]
    collector = _Collector()
    for lo in range(0, len(rows), 700):  # chunks, as the tables write them
        part = rows[lo:lo + 700]
        columns = [list(range(lo, lo + len(part))), [float(n) for n in range(lo, lo + len(part))],
                   [r[1] for r in part], [r[0] for r in part]] + [[r[k] for r in part] for k in range(2, 6)] + \
            [[0] * len(part)]
        collector.take("allocations", Table(names, ["int"] * len(names), columns))
    assert isinstance(collector.state["live"]["handle"], type(collector.np.zeros(0)))  # arrays, not a dict a row
    drawn = {(a.pointer, p): list(zip(s.numbers, s.values)) for a in collector.adapters.values()
             for p, s in a.group("live").items()}
    assert drawn == _live_bytes_row_by_row(rows)
    unmatched = {a.pointer: a.notes.get("unmatched", 0) for a in collector.adapters.values()}
    expected = {}
    held = {}
    for opcode, adapter, dxg, vidmm, _p, _s in rows:
        key = ("d", dxg) if dxg else ("v", vidmm)
        gone = held.setdefault(adapter, {}).pop(key, None)
        if opcode == "Stop":
            expected[adapter] = expected.get(adapter, 0) + (gone is None)
        else:
            held[adapter][key] = 1
    assert unmatched == {a: expected.get(a, 0) for a in unmatched}


def test_the_tables_make_only_the_columns_the_pictures_sinks_read():
    """The picture's sinks say which columns they read: the tables make only those (the allocations' mirror
    leaves but Size are not made, the tables of the state at the end not at all), each cell as the full tables
    make it."""
    from d3dkmddi_py.etw.outputs.plot import _Collector
    from d3dkmddi_py.etw.outputs.tables import TraceTables
    from d3dkmddi_py.etw.model.tracker import Tracker

    class Keep:
        def __init__(self, columns=None):
            self.columns, self.tables = columns, []

        def write(self, table):
            self.tables.append(dict(zip(table.names, table.columns)))

        def close(self):
            pass

    def tables(reads):
        sinks = {name: Keep(columns) for name, columns in reads.items()}
        t = TraceTables(None, None, Tracker(None), sinks=sinks)
        with t:
            t.read(etw.read(SAMPLE_PATH))
        return sinks

    reads = _Collector().reads()
    some, every = tables(reads), tables(dict.fromkeys(reads))
    assert reads["live"] == reads["processes"] == frozenset() and not some["live"].tables
    for name, columns in reads.items():
        if columns:
            for part, whole in zip(some[name].tables, every[name].tables, strict=True):
                assert set(part) == set(whole) & (columns | {"warnings"})  # counted with errors
                assert {c: list(v) for c, v in part.items()} == {c: list(whole[c]) for c in part}
    assert "Flags.CpuVisible" in every["allocations"].tables[0] and "Size" in some["allocations"].tables[0]


def test_a_series_highest_value_is_found_by_numpy_and_is_its_samples_max():
    from d3dkmddi_py.etw.outputs.panels import Samples

    s = Samples()
    for i, v in enumerate((5, (1 << 64) - 1, 0, 7)):
        s.append(float(i), i, v)
    assert s.highest() == max(s.values) == (1 << 64) - 1 and type(s.highest()) is int


def test_a_process_is_spelled_alike_in_every_panel_and_the_text():
    """Issue 31: a process was ``process 8000`` in the usage panel and ``hProcessId 0x1f40`` in the live one (and
    ``process 0x1f40`` in the text's allocation lines): now ``process 8000`` (etw.model.section.process_text)."""
    picture, _ = series(SAMPLE_PATH)
    labels = list(lines(figure(picture)))
    live = [label for label in labels if label.startswith("process ") and "," not in label]
    usage = [label for label in labels if label.startswith("process ") and ", physical adapter" in label]
    assert live and usage and {label.split(",")[0] for label in usage} <= set(live) | {"process 4"}
    assert not any("0x1f40" in label or "hProcessId" in label for label in labels)
    out, _status = run(["sample"])
    assert "process 8000" in out and "process 0x" not in out
