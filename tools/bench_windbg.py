"""A WinDbg log read as --windbg reads it, against its floor: python tools/bench_windbg.py [--log-mb MB] [--runs N]

Issue 30's speed goal: a log of 10,000 dumps (--log-mb of text, default 100, built as tools/bench_memory.py builds
it: dq dumps at addresses in random order, each after its prompt, a breakpoint line or dt output every few) is
read into memory (the file read a chunk at a time, every dump into a memory.WinDbgLog) within 3 x the floor: a
plain read of the same file as text and one regular-expression pass over its dump lines (matching each, keeping
nothing).  The two are timed in turns in this one run (--runs of each); the medians are printed with their spread
(lowest..highest), and the ratio of the medians with the spread of the ratios of each turn.

Memory: a fresh process reads the log at a tenth of its size and at its size; the peak of what Python allocated
meanwhile (tracemalloc), beside the text's size and the bytes the dumps hold (what a log must keep).  Flat means
the peak follows the bytes held (plus a chunk), not the text.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_memory import LOG_DUMPS, log_texts  # noqa: E402  (tools/bench_memory.py, beside this script)
from d3dkmddi_py.decoding import open_input  # noqa: E402
from d3dkmddi_py.memory import WinDbgLog  # noqa: E402
from d3dkmddi_py.pipeline.source import read_text  # noqa: E402

GOAL = 3.0
# a dump line as the floor finds it: the address column, two spaces, hex values (dq's backticks included)
DUMP_LINE = re.compile(r"^[0-9a-fA-F]{8}`?[0-9a-fA-F]{8}  [0-9a-fA-F` ]+$", re.M)


def floor(path: str) -> int:
    """A plain read of the file as text and one regular-expression pass over its dump lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return sum(1 for _ in DUMP_LINE.finditer(text))


def read_log(path: str) -> WinDbgLog:
    """What --windbg PATH does: the file's text a chunk at a time, every dump into memory."""
    text, _head = read_text(open_input(path, "bench.log"), "bench.log")
    return WinDbgLog(text, "bench.log")


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def spread(values: list, unit: str = "s", scale: float = 1.0) -> str:
    return (f"median {statistics.median(values) * scale:.2f} {unit} (spread {min(values) * scale:.2f}.."
            f"{max(values) * scale:.2f})")


_CHILD = """
import json, sys, tracemalloc
sys.path.insert(0, sys.argv[2])
from d3dkmddi_py.decoding import open_input
from d3dkmddi_py.memory import WinDbgLog
from d3dkmddi_py.pipeline.source import read_text
tracemalloc.start()
text, _ = read_text(open_input(sys.argv[1], "log"), "log")
log = WinDbgLog(text, "log")
held = sum(len(d.data) for d in log.scan.dumps)
print(json.dumps([tracemalloc.get_traced_memory()[1], held]))
"""


def peak(path: str) -> tuple:
    """(peak bytes Python allocated while reading ``path``, bytes the dumps hold), in a fresh process."""
    p = subprocess.run([sys.executable, "-c", _CHILD, path, ROOT], capture_output=True, text=True, check=True)
    return tuple(json.loads(p.stdout))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-mb", type=float, default=100.0, help="MB of text in the log (default 100)")
    parser.add_argument("--runs", type=int, default=5, help="turns of each, timed in turns (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for mb in (args.log_mb / 10, args.log_mb):
            _single, text = log_texts(mb)
            paths[mb] = os.path.join(tmp, f"log{mb:g}.txt")
            with open(paths[mb], "w", encoding="utf-8") as f:
                f.write(text)
            del text
        path = paths[args.log_mb]
        size = os.path.getsize(path)
        log = read_log(path)
        assert len(log.scan.dumps) == LOG_DUMPS and floor(path) == sum(d.last_line - d.first_line + 1
                                                                       for d in log.scan.dumps)
        del log
        floors, reads, ratios = [], [], []
        for _ in range(args.runs):  # in turns, so a busy moment of the machine weighs on both alike
            f, r = timed(floor, path), timed(read_log, path)
            floors.append(f)
            reads.append(r)
            ratios.append(r / f)
        print(f"A WinDbg log of {LOG_DUMPS:,} dumps, {size / 1e6:.1f} MB of text, {args.runs} turns of each:")
        print(f"  floor (read the file as text, one regex pass over its {floor(path):,} dump lines): "
              f"{spread(floors)}, {size / statistics.median(floors) / 1e6:.1f} MB/s")
        print(f"  --windbg's read (the file a chunk at a time, every dump into a WinDbgLog): {spread(reads)}, "
              f"{size / statistics.median(reads) / 1e6:.1f} MB/s")
        ratio = statistics.median(reads) / statistics.median(floors)
        print(f"  ratio of the medians {ratio:.2f} x the floor (turn by turn: {spread(ratios, 'x')}); goal <= "
              f"{GOAL:g} x: {'met' if ratio <= GOAL else 'NOT MET'}")
        print("Peak memory a fresh process allocates reading the log (tracemalloc):")
        for mb, p in paths.items():
            used, held = peak(p)
            print(f"  {os.path.getsize(p) / 1e6:6.1f} MB of text, its dumps hold {held / 1e6:5.1f} MB: peak "
                  f"{used / 1e6:6.1f} MB ({used / held:.2f} x the bytes held, {used / os.path.getsize(p):.2f} x the "
                  f"text)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
