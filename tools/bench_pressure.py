"""Benchmark of the memory-pressure events (issue 32), figures as ratios measured in one run.

    python tools/bench_pressure.py [--events N] [--runs R]

- The mixed trace of ``bench_etl.memory_trace`` (the sample's allocations, and one event in four a memory event),
  with paging and eviction events one in four (transfers, fills, discards, evictions, each naming a live allocation
  of the trace), against the same trace without them: ``etw --format parquet -o DIR`` end to end and ``etw --plot``,
  the two traces in turn ``R`` times; CPU-time medians with their spread and the ratio of each pair.  Goal: within
  1.2 x.
- The peak RSS of each command on each trace (a child process, as bench_etl measures it).
- The floor of the tables: pyarrow building the same columns (``Table.from_pydict`` of each table's values, read
  back from the files the command wrote) and writing them (``pq.write_table``, the command's row groups), the files
  byte for byte the command's; the command's time for the paging trace against it.  Goal: within 4 x.
"""
from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from d3dkmddi_py import cli  # noqa: E402
from bench_etl import _clean_allocations, peak_rss  # noqa: E402
from bench_windbg import spread  # noqa: E402  (median and spread, one form for every benchmark)

PAGING_IDS = (53, 54, 55, 74, 191, 321)
CPU = "s of CPU"  # what the figures are: every thread's CPU time (``spread``'s unit)
GOAL_RATIO, GOAL_FLOOR = 1.2, 4.0


def traces(directory: str, n: int) -> tuple:
    """(path with the paging events, path without them): ``n`` events of which one in four is a paging or eviction
    event; the rest is ``bench_etl.memory_trace``'s pattern (allocations, one in four a memory event)."""
    from d3dkmddi_py.etw.catalog import KIND_BY_NAME, KINDS
    from d3dkmddi_py.samples import etl_build, etw_build

    segments = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], f, ticks=i)
                for i, f in enumerate(etw_build.segment_events())]
    allocations = _clean_allocations()
    made = [etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", o)], f) for o, f in allocations]
    memory = [etl_build.dxgkrnl_event(kind, f) for kind, f in etw_build.memory_events(etw_build.allocation_events())
              if kind.event_id not in PAGING_IDS and kind.event_id in (80, 227, 46, 274, 366, 367, 36, 37, 38)]
    adapter = allocations[0][1]["pDxgAdapter"]
    paging = []
    for i, (_o, f) in enumerate(allocations):
        handle = f["hVidMmGlobalAlloc"]
        sets = f["dwWriteSegment"] or 1
        home = (sets & -sets).bit_length()  # a segment its sets name: a transfer as VidMm makes them
        common = {"pDxgAdapter": adapter, "hDmaBuffer": 0xFFFFB80C4EC00000, "ContinueNextBuffer": False,
                  "hAllocationGlobalHandle": handle}
        paging.append(etl_build.dxgkrnl_event(KINDS[53], {
            **common, "TransferOffset": 0, "TransferSize": 0x10000 * (i + 1), "SourceSegmentId": 0,
            "SourceSegmentOffset": 0, "DestinationSegmentId": home, "DestinationSegmentOffset": 0x10000 * i,
            "Flags": 0}))
        paging.append(etl_build.dxgkrnl_event(KINDS[54], {**common, "FillSize": 0x1000, "FillPattern": 0,
                                                          "SegmentId": home, "SegmentOffset": 0x10000 * i}))
        paging.append(etl_build.dxgkrnl_event(KINDS[55], {**common, "Flags": 0, "SegmentId": home,
                                                          "SegmentOffset": 0}))
        paging.append(etl_build.dxgkrnl_event(KINDS[74], {"hGlobalAllocationHandle": handle}))
    with_paging, without = [], []
    kept = 0
    for i in range(n):
        if i % 4 == 3:
            with_paging.append(paging[(i // 4) % len(paging)])
            continue
        e = memory[(kept // 4) % len(memory)] if kept % 4 == 3 else made[kept % len(made)]
        kept += 1
        with_paging.append(e)
        without.append(e)
    paths = []
    for name, events in (("paging.etl", with_paging), ("without.etl", without)):
        out = list(segments)
        for i, e in enumerate(events):
            out.append(etl_build.EtlEvent(etl_build.PROVIDER_GUID, e.event_id, e.version, e.payload, opcode=e.opcode,
                                          task=e.task, keyword=e.keyword, ticks=100 + i, processor=i % 4))
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(etl_build.etl_bytes(out, processors=4, buffer_size=65536))
        paths.append(path)
    return tuple(paths)


def timed(argv: list) -> float:
    """The command's CPU time (every thread's, so pyarrow's too): what it costs, less moved by the other work of a
    shared machine than the time on the clock."""
    start = time.process_time()
    status = cli.execute(argv, io.StringIO(), io.StringIO())
    seconds = time.process_time() - start
    if status not in (0, 1):
        raise SystemExit(f"{argv}: exit {status}")
    return seconds


def floor(directory: str, runs: int) -> tuple:
    """(median seconds, whether every file came out byte for byte the command's) of pyarrow building and writing the
    command's tables from their values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from d3dkmddi_py.bulk.table import ROW_GROUP_ROWS

    tables = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        t = pq.read_table(path)
        tables.append((path, t.schema, t.to_pydict()))
    times, same = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            start = time.process_time()
            for path, schema, values in tables:
                pq.write_table(pa.Table.from_pydict(values, schema=schema), os.path.join(tmp, os.path.basename(path)),
                               row_group_size=ROW_GROUP_ROWS)
            times.append(time.process_time() - start)
        for path, _schema, _values in tables:
            with open(path, "rb") as a, open(os.path.join(tmp, os.path.basename(path)), "rb") as b:
                same = same and a.read() == b.read()
    return times, same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events of the trace with the paging events")
    parser.add_argument("--runs", type=int, default=3, help="turns of each measurement")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paging, without = traces(tmp, args.events)
        out = {}
        for what, extra in (("tables", lambda p, k: ["--format", "parquet", "-o", os.path.join(tmp, f"t{k}")]),
                            ("picture", lambda p, k: ["--plot", os.path.join(tmp, f"p{k}.png")])):
            pairs = []
            for k in range(args.runs):
                a = timed(["etw", paging, *extra(paging, f"a{k}")])
                b = timed(["etw", without, *extra(without, f"b{k}")])
                pairs.append((a, b))
            ratios = [a / b for a, b in pairs]
            out[what] = pairs
            r = statistics.median(ratios)
            print(f"{what} of {args.events:,} events, one in four a paging or eviction event: "
                  f"{spread([a for a, _b in pairs], CPU)}; without them ({args.events - args.events // 4:,} events): "
                  f"{spread([b for _a, b in pairs], CPU)}; ratio {r:.2f} ({min(ratios):.2f}..{max(ratios):.2f}) "
                  f"(goal <= {GOAL_RATIO}: {'met' if r <= GOAL_RATIO else 'NOT met'})")
        for label, path in (("with the paging events", paging), ("without them", without)):
            for what, extra in (("tables", ["--format", "parquet", "-o", os.path.join(tmp, "rss")]),
                                ("picture", ["--plot", os.path.join(tmp, "rss.png")])):
                status, peak, seconds = peak_rss(["etw", path, *extra])
                print(f"  peak RSS of the {what} {label}, in a child process: {peak:,.0f} MB ({seconds:.1f} s, "
                      f"exit {status})")
        times, same = floor(os.path.join(tmp, "ta0"), args.runs)
        ours = [a for a, _b in out["tables"]]
        ratio = statistics.median(ours) / statistics.median(times)
        print(f"pyarrow's floor for the same tables (Table.from_pydict + write_table): {spread(times, CPU)}, files "
              f"{'byte for byte the same' if same else 'NOT the same bytes'}; the command {ratio:.2f} x the floor "
              f"(goal <= {GOAL_FLOOR}: {'met' if ratio <= GOAL_FLOOR else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
