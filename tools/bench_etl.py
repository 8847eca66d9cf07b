"""Benchmark of the .etl reader: ``--summary`` and DxgKrnl decoding, in events/s on one core.

    python tools/bench_etl.py [--copies N] [--allocations N] [--runs R]

- ``--summary`` on a large trace built by repeating the data buffers of the real
  ShutdownPerfDiagLogger.etl (tests/etw/real) after its header buffer, against the floor: a bare loop
  that reads the same file buffer by buffer and walks each buffer's events reading only their sizes.
  Goals (issue 15): >= 1,000,000 events/s, and >= 0.5 x the floor.
- ``etw.read`` of a generated .etl of AdapterAllocation events (samples.etl_build, the sample's
  allocations repeated) decoded to columns (``etw --format csv``'s path), in events/s.
  Goal: >= 300,000 events/s.
- the same with the events that say where memory is among them (the sample's device allocations,
  placements, priority changes, residency, usage and budgets, one event in four), to every table.
- ``--plot``: the picture (``etw --plot``) of a trace of ``--plot-events`` events (default 1,000,000; the
  memory events one in four), against today's three tables: the tables of as many AdapterAllocation events
  (``allocation_trace``: segments, allocations, findings), in one run; and its peak RSS beside the tables'.
  Goal (issue 23): the new tables and the picture within 2 x the three tables' time.
- ``--tables N`` (1,000,000 by default; 0 skips it): issue 23's goal, the tables of an N-event trace with the
  memory events (one in four) against today's three tables' work (segments, allocations, findings: the same
  number of events, all allocations), ``etw --format parquet -o DIR`` end to end, both in one run and the
  ratio (goal <= 2).  ``--tables-only``: that measurement alone.
- ``--memory``: the peak RSS of the command on the worst files the limits let through (kilobytes
  that decompress to the most each path holds: one buffer per processor, up to 256 MiB in time order,
  64 MiB as columns; 16-byte events and DxgKrnl events; thousands of processors), against the bound
  the README states (600 MB).  About three minutes.
"""
from __future__ import annotations

import argparse
import gzip
import io
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from d3dkmddi_py import cli, etw  # noqa: E402
from d3dkmddi_py.etw.readers import etlreader  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import _WRAPPER  # noqa: E402  (how the command-line benchmarks measure a command's own peak)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SHUTDOWN = os.path.join(ROOT, "tests", "etw", "real", "ShutdownPerfDiagLogger.etl.gz")
GOAL_SUMMARY_RATE, GOAL_SUMMARY_VS_FLOOR, GOAL_DECODE_RATE = 1_000_000, 0.5, 300_000
GOAL_TABLES_RATIO = 2.0  # issue 23: the new tables within 2 x the time of the three of before
MEMORY_BOUND_MB = 600  # the README's bound on any input


def best_of(runs: int, fn):
    best, value = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def repeated_trace(path: str, copies: int) -> None:
    """The header buffer of the real file, then its other buffers ``copies`` times."""
    raw = gzip.decompress(open(SHUTDOWN, "rb").read())
    first = struct.unpack_from("<I", raw, 0)[0]
    with open(path, "wb") as f:
        f.write(raw[:first])
        for _ in range(copies):
            f.write(raw[first:])


def allocation_trace(path: str, n: int) -> None:
    """The bundled sample's segments, then ``n`` AdapterAllocation events (its clean allocations
    repeated, Start and DCStart), on 4 processors, in 64 KB buffers."""
    from d3dkmddi_py.etw.catalog import KIND_BY_NAME
    from d3dkmddi_py.samples import etl_build, etw_build

    segments = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], f, ticks=i)
                for i, f in enumerate(etw_build.segment_events())]
    made = [etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", o)], f) for o, f in _clean_allocations()]
    events = list(segments)
    for i in range(n):
        e = made[i % len(made)]
        events.append(etl_build.EtlEvent(etl_build.PROVIDER_GUID, e.event_id, e.version, e.payload, opcode=e.opcode,
                                          task=e.task, keyword=e.keyword, ticks=100 + i, processor=i % 4))
    with open(path, "wb") as f:
        f.write(etl_build.etl_bytes(events, processors=4, buffer_size=65536))


def memory_trace(path: str, n: int, skip=()) -> None:
    """``allocation_trace`` with one event in four one of the sample's memory events (repeated; but the ids in
    ``skip``)."""
    from d3dkmddi_py.etw.catalog import KIND_BY_NAME
    from d3dkmddi_py.samples import etl_build, etw_build

    segments = [etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], f, ticks=i)
                for i, f in enumerate(etw_build.segment_events())]
    made = [etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", o)], f) for o, f in _clean_allocations()]
    from d3dkmddi_py.etw.catalog import ENTRY_OF

    memory = [etl_build.dxgkrnl_event(kind, f) for kind, f in etw_build.memory_events(etw_build.allocation_events())
              if kind.event_id in ENTRY_OF and kind.event_id not in skip]  # the catalog's (the goals' trace)
    events = list(segments)
    for i in range(n):
        e = memory[(i // 4) % len(memory)] if i % 4 == 3 else made[i % len(made)]
        events.append(etl_build.EtlEvent(etl_build.PROVIDER_GUID, e.event_id, e.version, e.payload, opcode=e.opcode,
                                         task=e.task, keyword=e.keyword, ticks=100 + i, processor=i % 4))
    with open(path, "wb") as f:
        f.write(etl_build.etl_bytes(events, processors=4, buffer_size=65536))


def floor_walk(path: str) -> int:
    """Events counted by reading each buffer and following each event's size: nothing else."""
    from d3dkmddi_py.etw.readers.etlfile import BUFFER, BUFFER_HEADER, SIZE_IN_SECOND_WORD

    events = 0
    second = bytes(k in SIZE_IN_SECOND_WORD for k in range(256))  # size in the second word
    with open(path, "rb") as f:
        while True:
            head = f.read(BUFFER_HEADER)
            if not head:
                return events
            size, end = struct.unpack_from("<I", head)[0], struct.unpack_from("<I", head, BUFFER.offset["Offset"])[0]
            body = f.read(size - BUFFER_HEADER)
            words = memoryview(head + body).cast("H")
            q, stop = BUFFER_HEADER >> 1, end >> 1
            while q < stop:
                w = words[q + 1]
                if w == 0xFFFF:
                    break
                events += 1
                q += (((words[q + 2] if second[w & 0xFF] else words[q]) + 7) >> 1) & ~3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=60, help="times the real file's data buffers are repeated")
    parser.add_argument("--allocations", type=int, default=300_000, help="AdapterAllocation events to decode")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; the best is kept")
    parser.add_argument("--memory", action="store_true", help="only the peak memory on the worst files")
    parser.add_argument("--plot", action="store_true", help="only the picture against the three tables")
    parser.add_argument("--plot-events", type=int, default=1_000_000, help="events of --plot's traces")
    parser.add_argument("--tables", type=int, default=1_000_000, help="events of the tables' measurement (0: skip it)")
    parser.add_argument("--tables-only", action="store_true", help="only the tables' measurement")
    args = parser.parse_args(argv)
    if args.memory:
        return memory()
    if args.plot:
        return plot(args.plot_events, args.runs)
    if args.tables_only:
        return tables_ratio(args.tables)
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.etl")
        repeated_trace(big, args.copies)
        mb = os.path.getsize(big) / 1e6

        def summary():
            with open(big, "rb") as f:
                return etlreader.summary(f, big)

        t_floor, floor_events = best_of(args.runs, lambda: floor_walk(big))
        t_sum, result = best_of(args.runs, summary)
        assert result["events"] == floor_events, (result["events"], floor_events)
        rate = result["events"] / t_sum
        ratio = t_floor / t_sum
        print(f".etl --summary: {result['events']:,} events ({mb:,.0f} MB: ShutdownPerfDiagLogger.etl's buffers "
              f"x {args.copies}) in {t_sum:.3f} s = {rate:,.0f} events/s "
              f"(goal >= {GOAL_SUMMARY_RATE:,}: {'met' if rate >= GOAL_SUMMARY_RATE else 'NOT met'}); "
              f"the floor (read the buffers, follow each event's size) {t_floor:.3f} s = {ratio:.2f} x the floor's "
              f"speed (goal >= {GOAL_SUMMARY_VS_FLOOR}: {'met' if ratio >= GOAL_SUMMARY_VS_FLOOR else 'NOT met'})")
        t_plain, _ = best_of(1, lambda: etlreader.summary(open(big, "rb"), big, columns=False))
        print(f"  the same, every event read one by one (the count's oracle): {result['events'] / t_plain:,.0f} events/s")

        alloc = os.path.join(tmp, "allocations.etl")
        allocation_trace(alloc, args.allocations)
        n = args.allocations
        t_cols, rows = best_of(args.runs, lambda: to_columns(alloc, True))
        assert rows == n, rows
        t_exact, _ = best_of(1, lambda: to_columns(alloc, False))
        rate = n / t_cols
        print(f"AdapterAllocation events decoded to columns (the tables' rows: DXGK_ALLOCATIONINFO and usage-hint "
              f"leaves, findings against the segments; nothing written): {n:,} events in {t_cols:.2f} s = {rate:,.0f} "
              f"events/s (goal >= {GOAL_DECODE_RATE:,}: {'met' if rate >= GOAL_DECODE_RATE else 'NOT met'}); "
              f"event by event: {n / t_exact:,.0f} events/s")
        for fmt in ("csv", "parquet"):
            out = os.path.join(tmp, f"tables-{fmt}")
            t_fmt, _ = best_of(1, lambda: cli.execute(["etw", alloc, "--format", fmt, "-o", out], io.StringIO(),
                                                      io.StringIO()))
            print(f"  etw --format {fmt} -o DIR, end to end in this process: {n / t_fmt:,.0f} events/s")
        mixed = os.path.join(tmp, "memory.etl")
        memory_trace(mixed, n)
        t_mix, _ = best_of(args.runs, lambda: to_columns(mixed, True))
        t_mix_exact, _ = best_of(1, lambda: to_columns(mixed, False))
        print(f"with the memory events (one in four: placements, priorities, residency, usage, budgets, device "
              f"allocations), to every table: {n:,} events in {t_mix:.2f} s = {n / t_mix:,.0f} events/s; event by "
              f"event: {n / t_mix_exact:,.0f} events/s")
    return tables_ratio(args.tables) if args.tables else 0


def tables_ratio(n: int) -> int:
    """Every table of an ``n``-event trace with the memory events, against the three tables of before (the same
    number of events, all allocations: segments, allocations, findings), end to end to Parquet; one run each."""
    with tempfile.TemporaryDirectory() as tmp:
        three, every = os.path.join(tmp, "three.etl"), os.path.join(tmp, "every.etl")
        allocation_trace(three, n)
        memory_trace(every, n)
        times, rows = {}, {}
        for label, path in (("three", three), ("every", every)):
            out, err = os.path.join(tmp, f"out-{label}"), io.StringIO()
            times[label], _ = best_of(1, lambda: cli.execute(["etw", path, "--format", "parquet", "-o", out],
                                                             io.StringIO(), err))
            rows[label] = err.getvalue().strip()
        ratio = times["every"] / times["three"]
        print(f"the tables of a {n:,}-event trace, etw --format parquet -o DIR end to end:")
        print(f"  all allocations (today's three tables' work: segments, allocations, findings): {times['three']:.2f} s "
              f"= {n / times['three']:,.0f} events/s\n    {rows['three']}")
        print(f"  one event in four a memory event, every table (residency, process_memory, placements, priorities, "
              f"live, processes too): {times['every']:.2f} s = {n / times['every']:,.0f} events/s\n    {rows['every']}")
        print(f"  ratio {ratio:.2f} (goal <= {GOAL_TABLES_RATIO}: {'met' if ratio <= GOAL_TABLES_RATIO else 'NOT met'})")
    return 0


def peak_rss(args: list) -> tuple:
    """(exit status, peak RSS in MB, seconds) of one command line, started by bench.py's small wrapper (a
    child of this process, which holds the traces it built, would report this process's peak: Linux keeps
    a process's high-water mark across exec)."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "d3dkmddi_py", *args], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[2]), int(out[1]) / 1024, float(out[0])


def memory() -> int:
    """Peak RSS of the command on files that decompress to the most each path may hold."""
    from d3dkmddi_py.etw.readers import etlcolumns, etlfile
    from d3dkmddi_py.etw.catalog import KIND_BY_NAME
    from d3dkmddi_py.samples import etl_build

    alloc = etl_build.event_bytes(etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", "Start")],
                                                          _clean_allocations()[0][1]))
    mb16 = etlfile.LARGEST_BUFFER
    in_order = etlfile.HELD_BYTES // (mb16 + etlfile.PROCESSOR_BYTES)  # processors of 16 MB buffers that fit
    as_columns = etlcolumns.COLUMN_HELD_BYTES // (mb16 + etlfile.PROCESSOR_BYTES)
    many = etlcolumns.COLUMN_HELD_BYTES // (1024 + etlfile.PROCESSOR_BYTES)
    files = {
        f"{as_columns} x 16 MB of 16-byte events (columns)": (etl_build.SMALLEST_EVENT, as_columns, mb16),
        f"{as_columns} x 16 MB of AdapterAllocation events (columns)": (alloc, as_columns, mb16),
        f"{in_order} x 16 MB of AdapterAllocation events (event by event)": (alloc, in_order, mb16),
        f"{in_order} x 16 MB of 16-byte events (event by event)": (etl_build.SMALLEST_EVENT, in_order, mb16),
        f"{many} processors x 1 KB of AdapterAllocation events (columns)": (alloc, many, 1024),
    }
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for label, (unit, processors, held) in files.items():
            path = os.path.join(tmp, "hostile.etl")
            data = etl_build.expanding_bytes(unit, processors, processors=processors, held=held)
            with open(path, "wb") as f:
                f.write(data)
            for mode in (["--summary"], [], ["--json"], ["--format", "csv", "-o", os.path.join(tmp, "tables")]):
                status, peak, seconds = peak_rss(["etw", path, *mode])
                worst = max(worst, peak)
                print(f"{label}, {len(data):,} bytes, etw {' '.join(mode[:2]) or '(text)'}: peak {peak:,.0f} MB "
                      f"= {peak / MEMORY_BOUND_MB:.2f} x the bound, exit {status}, {seconds:.1f} s", flush=True)
    print(f"worst peak {worst:,.0f} MB = {worst / MEMORY_BOUND_MB:.2f} x the {MEMORY_BOUND_MB} MB bound "
          f"({'met' if worst <= MEMORY_BOUND_MB else 'NOT met'})")
    return 0


GOAL_PLOT_RATIO = 2.0  # issue 23: the new tables and the picture within 2 x today's three tables


def plot(n: int, runs: int) -> int:
    """The picture of ``n`` events (the memory events one in four) and the new tables of them, against the
    three tables (segments, allocations, findings) of ``n`` AdapterAllocation events, in one run."""
    with tempfile.TemporaryDirectory() as tmp:
        alloc, mixed = os.path.join(tmp, "allocations.etl"), os.path.join(tmp, "memory.etl")
        allocation_trace(alloc, n)
        memory_trace(mixed, n)
        picture = os.path.join(tmp, "memory.png")
        t_three, _ = best_of(runs, lambda: to_columns(alloc, True))
        t_tables, _ = best_of(runs, lambda: to_columns(mixed, True))
        t_plot, _ = best_of(runs, lambda: etw.plot(mixed, picture))
        ratio = t_plot / t_three
        print(f"today's three tables of {n:,} AdapterAllocation events (segments, allocations, findings; made, not "
              f"written): {t_three:.2f} s = {n / t_three:,.0f} events/s")
        print(f"every table of {n:,} events, the memory events one in four: {t_tables:.2f} s = "
              f"{t_tables / t_three:.2f} x the three tables")
        print(f"etw.plot of the same {n:,} events to PNG (the tables' rows, the series, the figure): {t_plot:.2f} s = "
              f"{ratio:.2f} x the three tables, {t_plot / t_tables:.2f} x every table (goal <= {GOAL_PLOT_RATIO} x the "
              f"three tables: {'met' if ratio <= GOAL_PLOT_RATIO else 'NOT met'})")
        tables = os.path.join(tmp, "tables")
        for label, args in (("etw --format csv", ["--format", "csv", "-o", tables]), ("etw --plot", ["--plot", picture])):
            status, peak, seconds = peak_rss(["etw", mixed, *args])
            print(f"  {label} of the {n:,} events in a child process: peak RSS {peak:,.0f} MB, {seconds:.1f} s, "
                  f"exit {status}")
    return 0


def _clean_allocations() -> list:
    """(opcode, event fields) of the sample's allocations that break no rule."""
    from d3dkmddi_py.samples import etw_build

    breaking = {a.note for a in etw_build.build.ALLOCATIONS if a.breaks}
    return [(o, f) for o, note, f in etw_build.allocation_events() if note not in breaking]


class _Discard:
    def write(self, table):
        pass

    def close(self):
        pass

    def restart(self):
        pass


def to_columns(path: str, columns: bool) -> int:
    """The tables' rows of a trace, made and dropped (sinks that discard them): allocations counted."""
    from d3dkmddi_py.etw.outputs import tables

    reader = etw.read(path)
    t = tables.TraceTables(None, None, tables.Tracker(None), sinks={name: _Discard() for name in tables.TABLES})
    with t:
        t.read(reader, columns=columns)
    return t.counts["allocations"]


if __name__ == "__main__":
    raise SystemExit(main())
