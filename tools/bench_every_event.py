"""Benchmark of reading every DxgKrnl event (issue 29), in one run:

    python tools/bench_every_event.py [--events N] [--runs R] [--before COMMIT] [--kinds K]

- The tables of the N-event mixed trace (``bench_etl.memory_trace``: AdapterAllocation events, one in four an
  event the catalog read before but ReportCommittedAllocation, whose manifest payload the package before refused,
  on 4 processors), ``etw --format parquet -o DIR`` end to end, by this tree and
  by the package at ``--before`` (a temporary git worktree of that commit), the two alternated, R runs each:
  CPU-time medians with their spread, and the ratio.  Goal: within 1.1 x the time before.
- An N-event trace of K kinds of event no entry reads (the first K of the manifest whose templates have numbers,
  pointers, Booleans, GUIDs, strings or counted arrays, their values made from the manifest's templates, in turn),
  read by ``--summary`` (the header walk), ``--json`` and ``--format csv`` / ``jsonl`` / ``parquet`` (a table per
  kind), by this tree and by ``--before``, alternated: medians and spread, each as a ratio to ``--summary``'s time
  and to the same output before, and each one's peak RSS.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_etl import memory_trace  # noqa: E402
from bench_windbg import spread  # noqa: E402  (median and spread, one form for every benchmark)
from d3dkmddi_py.etw.catalog import ENTRY_OF, KINDS  # noqa: E402
from d3dkmddi_py.etw.model.registry import layout_of  # noqa: E402
from d3dkmddi_py.samples import etl_build, etw_build  # noqa: E402

# a command's CPU time (user and system: what it costs, which the other work of a shared machine moves less than the
# clock) and peak RSS, in a child of its own
_WRAPPER = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(u.ru_utime + u.ru_stime, u.ru_maxrss, p.returncode)\n")
CPU = "s of CPU"  # what the figures are (``spread``'s unit)
GOAL_MIXED_RATIO = 1.1
BEFORE = "7d7fc84"  # main before issue 29: 13 event ids read, the others counted and dropped
OLD_TEMPLATE = (80,)  # ReportCommittedAllocation: the package before refuses its manifest payload (four fields more)


def run(tree: str, args: list, refusal: bool = False) -> tuple:
    """(seconds, peak RSS in MB) of ``python -m d3dkmddi_py ARGS`` with the package of ``tree``; with ``refusal``,
    exit 2 (the trace refused, as a package before issue 29 refuses events it does not know) gives None."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "d3dkmddi_py", *args], cwd=tree,
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    status = int(out[2])
    if refusal and status == 2:
        return None
    if status not in (0, 1):
        raise SystemExit(f"{' '.join(args)} with {tree} exited {status}")
    return float(out[0]), int(out[1]) / 1024


def kinds_trace(path: str, n: int, kinds: int, seed: int = 29) -> list:
    """An N-event trace of ``kinds`` kinds no entry reads, their values the manifest's templates make; the kinds."""
    rng = random.Random(seed)
    chosen = [k for i, k in sorted(KINDS.items()) if i not in ENTRY_OF and layout_of(i, k.version)][:kinds]
    made = []
    for kind in chosen:
        given = {}
        for f in layout_of(kind.event_id, kind.version):
            if f.in_type in ("UInt32", "UInt64", "Pointer") and f.count is None and f.length is None:
                given[f.name] = rng.randrange(1 << 31)
        counts = {c for f in layout_of(kind.event_id, kind.version) for c in (f.count, f.length) if isinstance(c, str)}
        for name in counts:
            given[name] = 2
        made.append(etl_build.dxgkrnl_event(kind, etw_build.manifest_values(kind.event_id, given)))
    events = []
    for i in range(n):
        e = made[i % len(made)]
        events.append(etl_build.EtlEvent(etl_build.PROVIDER_GUID, e.event_id, e.version, e.payload, opcode=e.opcode,
                                         task=e.task, keyword=e.keyword, ticks=100 + i, processor=i % 4))
    with open(path, "wb") as f:
        f.write(etl_build.etl_bytes(events, processors=4, buffer_size=65536))
    return chosen


def ids_read_by(tree: str) -> set:
    """The event ids the catalog of the package in ``tree`` reads (its ENTRIES' ids)."""
    out = subprocess.run([sys.executable, "-c", "from d3dkmddi_py.etw.catalog import ENTRIES\n"
                          "print(*sorted({i for e in ENTRIES.values() for i in e.ids}))"],
                         cwd=tree, env=dict(os.environ, PYTHONPATH=tree), capture_output=True, text=True, check=True)
    return {int(i) for i in out.stdout.split()}


def mixed_tables(args, tmp: str, before: str) -> None:
    """The mixed trace of the events the package read before (but OLD_TEMPLATE's), so both trees do the same work:
    the catalog's later entries (memory pressure) would be work the tree before does not do."""
    mixed = os.path.join(tmp, "mixed.etl")
    old = ids_read_by(before)
    memory_trace(mixed, args.events, skip=set(ENTRY_OF) - old | set(OLD_TEMPLATE))
    times = {"before": [], "now": []}
    peaks = {"before": [], "now": []}
    for r in range(args.runs):
        for label, tree in (("before", before), ("now", ROOT)):
            t, peak = run(tree, ["etw", mixed, "--format", "parquet", "-o", os.path.join(tmp, f"out-{label}-{r}")])
            times[label].append(t)
            peaks[label].append(peak)
    ratio = statistics.median(times["now"]) / statistics.median(times["before"])
    print(f"the tables of the {args.events:,}-event mixed trace (etw --format parquet -o DIR; the {len(old)} event ids "
          f"the package before read, without {', '.join(map(str, OLD_TEMPLATE))}, which it refuses), {args.runs} "
          f"runs each, alternated:")
    for label in ("before", "now"):
        print(f"  {label:<6} ({args.before if label == 'before' else 'this tree'}): {spread(times[label], CPU)}, "
              f"peak RSS {max(peaks[label]):.0f} MB")
    print(f"  ratio of the medians {ratio:.3f} (goal <= {GOAL_MIXED_RATIO}: "
          f"{'met' if ratio <= GOAL_MIXED_RATIO else 'NOT met'})")


def kinds_outputs(args, tmp: str, before: str) -> None:
    """The kinds trace by every output, this tree and ``before`` alternated: each one's time as a ratio to
    --summary's (this tree's) and to the same output before."""
    path = os.path.join(tmp, "kinds.etl")
    chosen = kinds_trace(path, args.events, args.kinds)
    print(f"\na {args.events:,}-event trace of {len(chosen)} kinds no entry reads "
          f"({chosen[0].symbol} .. {chosen[-1].symbol}), {os.path.getsize(path) / 1e6:.0f} MB, "
          f"{args.runs} runs each, {args.before} and this tree alternated:")
    modes = {"--summary": ["--summary"], "--json": ["--json"],
             "--format csv": ["--format", "csv", "-o", os.path.join(tmp, "csv")],
             "--format jsonl": ["--format", "jsonl", "-o", os.path.join(tmp, "jsonl")],
             "--format parquet": ["--format", "parquet", "-o", os.path.join(tmp, "parquet")]}
    results = {}
    for label, extra in modes.items():
        got = {"before": [], "now": []}
        for r in range(args.runs):
            for which, tree in (("before", before), ("now", ROOT)):
                more = [e + f"-{which}-{r}" if e.startswith(tmp) else e for e in extra]
                got[which].append(run(tree, ["etw", path, *more], refusal=which == "before"))
        results[label] = got
    base = statistics.median(t for t, _p in results["--summary"]["now"])
    for label, got in results.items():
        now = [t for t, _p in got["now"]]
        head = (f"  {label:<17} now {spread(now, CPU)} = {args.events / statistics.median(now):,.0f} events/s, "
                f"{statistics.median(now) / base:.1f} x --summary, peak RSS {max(p for _t, p in got['now']):.0f} MB; ")
        if any(r is None for r in got["before"]):
            print(head + "before: the trace refused (exit 2)")
            continue
        then = [t for t, _p in got["before"]]
        print(head + f"before {spread(then, CPU)}, peak RSS {max(p for _t, p in got['before']):.0f} MB; "
                     f"now / before {statistics.median(now) / statistics.median(then):.3f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help="the commit the mixed trace's tables are timed against")
    parser.add_argument("--kinds", type=int, default=50)
    parser.add_argument("--only", choices=("mixed", "kinds"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        before = os.path.join(tmp, "before")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", before, args.before], check=True)
        try:
            if args.only in (None, "mixed"):
                mixed_tables(args, tmp, before)
            if args.only in (None, "kinds"):
                kinds_outputs(args, tmp, before)
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", before], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
