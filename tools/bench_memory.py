"""Memory at addresses, timed: python tools/bench_memory.py [--runs N] [--log-mb MB] [--processes N]

Issue 24's goals, each printed with its figure and its ratio to the goal:
- a WinDbg log of 10,000 dumps (--log-mb of text, default 100) reads into memory (memory.WinDbgLog) at no
  less than half the speed per byte of the single-dump reader (windbg.parse_windbg) on a dump of the same
  size: both rates and their ratio, in one run;
- an address lookup in Ranges is O(log ranges): lookups/s at 1,000 and at 100,000 ranges;
- following a DXGK_QUERYSEGMENTOUT3 with 16 descriptors from a log takes under 50 ms in one process: fresh
  processes (best of --processes) time the import, reading the log, the follow and its text, with the
  bytecode caches Python normally writes (kept in a temporary folder) and without them
  (PYTHONDONTWRITEBYTECODE, every module compiled from source);
then, warm in this process: the follow alone, with its text (render_follow) and with its JSON, per memory
(WinDbg-like ranges, one record a range; a raw image; a full kernel dump when kdmp-parser is installed),
and decoding the same 17 records from bytes with decode() as a reference.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import d3dkmddi_py as kmd  # noqa: E402
from bench import best_of  # noqa: E402  (tools/bench.py, beside this script)
from d3dkmddi_py.follow import follow, follow_json, render_follow  # noqa: E402
from d3dkmddi_py.memory import ImageFile, Ranges, WinDbgLog  # noqa: E402
from d3dkmddi_py.samples.build import dump_lines  # noqa: E402
from d3dkmddi_py.windbg import parse_windbg  # noqa: E402

GOAL_MS = 50.0
LOG_DUMPS = 10_000
LOG_RATIO_GOAL = 0.5
TARGET = ("x64", "WDDM2_7")
QUERY, DESCRIPTORS, BANKS = 0xFFFFF8012A3B4058, 0xFFFFF8012A3B5000, 0xFFFFF8012A3B6000


def placements() -> dict:
    t = kmd.target(*TARGET)
    q = t.DXGK_QUERYSEGMENTOUT3()
    q.NbSegment, q.pSegmentDescriptor = 16, DESCRIPTORS
    descriptors = (t.DXGK_SEGMENTDESCRIPTOR3 * 16)()
    for i, d in enumerate(descriptors):
        d.Flags.Value, d.Size, d.CommitLimit = 0x4, (i + 1) << 24, (i + 1) << 24
    descriptors[0].Flags.UseBanking, descriptors[0].NbOfBanks, descriptors[0].pBankRangeTable = 1, 2, BANKS
    out = {QUERY: bytes(q), BANKS: (0x4000000).to_bytes(8, "little") + (0x8000000).to_bytes(8, "little")}
    for i in range(16):
        out[DESCRIPTORS + 72 * i] = bytes(descriptors[i])
    return out


def best_ms(runs: int, fn) -> float:
    return best_of(runs, fn) * 1000


def memories(tmp: str) -> dict:
    data = placements()
    ranges = Ranges("bench log")
    for line, (address, raw) in enumerate(data.items(), 1):
        ranges.add(address, raw, f"line {line}")
    base = QUERY & ~0xFFF
    image = bytearray(0x3000)
    for address, raw in data.items():
        image[address - base:address - base + len(raw)] = raw
    path = os.path.join(tmp, "image.bin")
    with open(path, "wb") as f:
        f.write(image)
    out = {"ranges (one record a range)": ranges, "raw image file": ImageFile(path, base)}
    try:
        import kdmp_parser  # noqa: F401
        from d3dkmddi_py.samples.dump_build import Machine, write_dump
    except ImportError:
        print("(kdmp-parser not installed: no kernel dump row)")
        return out
    from pathlib import Path

    out["full kernel dump"] = kmd.KernelDump(write_dump(Path(tmp) / "bench.dmp", Machine.holding(data), "full"))
    return out


def _dq_dump(rng, address: int, size: int) -> list:
    return dump_lines("dq", address, rng.randbytes(size))


def log_texts(megabytes: float, dumps: int = LOG_DUMPS) -> tuple:
    """(one dump, a session log of ``dumps`` dumps), each about ``megabytes`` of text: the log's dumps at
    addresses in random order, each after its prompt, with a breakpoint line or dt output every few."""
    rng = random.Random(24)
    size = max(16, int(megabytes * 1e6 / dumps / 55) * 16)  # a dq line holds 16 bytes in 55 characters
    single = "\n".join(["0: kd> dq ffffb80c`40000000", *_dq_dump(rng, 0xFFFFB80C40000000, size * dumps)]) + "\n"
    slots = list(range(dumps))
    rng.shuffle(slots)
    lines = ["Opened log file 'C:\\bench.log'"]
    for n, slot in enumerate(slots):
        address = 0xFFFFB80C40000000 + slot * (size + 0x1000)  # a gap between dumps: one range each
        lines.append(f"0: kd> dq {address >> 32:08x}`{address & 0xFFFFFFFF:08x} L{size // 8:x}")
        lines += _dq_dump(rng, address, size)
        if n % 4 == 0:
            lines += ["0: kd> g", "Breakpoint 0 hit", "   +0x000 Aperture         : 0y1"]
    return single, "\n".join(lines) + "\n"


def log_rates(megabytes: float, runs: int) -> list:
    single, log = log_texts(megabytes)
    one = many = float("inf")
    for _ in range(runs):  # interleaved, so a busy moment of the machine weighs on both alike
        one = min(one, best_of(1, lambda: parse_windbg(single)))
        many = min(many, best_of(1, lambda: WinDbgLog(log)))
    memory = WinDbgLog(log)
    assert len(memory) == LOG_DUMPS and len(memory.scan.dumps) == LOG_DUMPS
    one_rate, many_rate = len(single) / one / 1e6, len(log) / many / 1e6
    ratio = many_rate / one_rate
    return [f"  single dump, parse_windbg: {len(single) / 1e6:.1f} MB in {one:.2f} s, {one_rate:.1f} MB/s",
            f"  log of {LOG_DUMPS:,} dumps, WinDbgLog: {len(log) / 1e6:.1f} MB in {many:.2f} s, {many_rate:.1f} MB/s "
            f"({memory.scan.skipped:,} lines skipped)",
            f"  ratio {ratio:.2f} (goal >= {LOG_RATIO_GOAL}): {'met' if ratio >= LOG_RATIO_GOAL else 'NOT MET'}"]


def lookup_rates() -> list:
    rng = random.Random(24)
    out = []
    for n in (1_000, 100_000):
        m = Ranges()
        for i in range(n):
            m.add(i * 64, b"\x00" * 16, "x")
        probes = [rng.randrange(n) * 64 for _ in range(100_000)]
        start = time.perf_counter()
        for address in probes:
            m.read(address, 8)
        per = (time.perf_counter() - start) / len(probes)
        out.append((n, per))
    lines = [f"  Ranges.read in {n:>7,} ranges: {1 / per:,.0f} lookups/s ({per * 1e6:.2f} us)" for n, per in out]
    lines.append(f"  100,000 ranges cost {out[1][1] / out[0][1]:.2f} x 1,000 (log2: {17 / 10:.2f} x; linear: 100 x)")
    return lines


_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from d3dkmddi_py.memory import WinDbgLog
from d3dkmddi_py.follow import follow, render_follow
t1 = time.perf_counter()
log = WinDbgLog(open(sys.argv[1]).read())
t2 = time.perf_counter()
node = follow("DXGK_QUERYSEGMENTOUT3", log, int(sys.argv[2]), target=("x64", "WDDM2_7"))
t3 = time.perf_counter()
render_follow(node)
t4 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2, t4 - t3]))
"""


def cold_follow(processes: int, tmp: str) -> list:
    """The follow from a log in fresh processes: best of ``processes`` per step, with and without bytecode caches."""
    data = placements()
    lines = ["Opened log file 'C:\\bench.log'", "Breakpoint 0 hit"]
    for address, raw in data.items():
        lines += [f"0: kd> dq {address >> 32:08x}`{address & 0xFFFFFFFF:08x}", *dump_lines("dq", address, raw)]
    path = os.path.join(tmp, "follow.log")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    out = []
    for label, cache in (("with bytecode caches", os.path.join(tmp, "pycache")), ("without (compiled each time)", None)):
        env = dict(os.environ, PYTHONPATH=ROOT)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if cache is None:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        else:
            env["PYTHONPYCACHEPREFIX"] = cache
        steps = []
        for k in range(processes + (cache is not None)):  # with caches, a first run writes them
            p = subprocess.run([sys.executable, "-c", _CHILD, path, str(QUERY)], env=env, capture_output=True,
                               text=True, check=True)
            if cache is None or k:
                steps.append(json.loads(p.stdout))
        best = [min(run[i] for run in steps) * 1000 for i in range(4)]
        follow_ms, total = sum(best[:3]), sum(best)
        out.append(f"  one process, {label}: import {best[0]:.1f} ms, read the log {best[1]:.1f} ms, follow "
                   f"{best[2]:.1f} ms: {follow_ms:.1f} ms, {follow_ms / GOAL_MS:.2f} x the goal "
                   f"{'met' if follow_ms < GOAL_MS else 'NOT MET'}; with its text (meanings and findings) "
                   f"{total:.1f} ms ({total / GOAL_MS:.2f} x)")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="best of this many runs (default 20)")
    parser.add_argument("--log-mb", type=float, default=100.0, help="MB of text in each log (default 100)")
    parser.add_argument("--log-runs", type=int, default=3, help="best of this many reads of the logs (default 3)")
    parser.add_argument("--processes", type=int, default=7, help="fresh processes for the cold follow (default 7)")
    args = parser.parse_args(argv)
    print(f"A WinDbg log of {LOG_DUMPS:,} dumps against one dump of the same size (best of {args.log_runs}):")
    print("\n".join(log_rates(args.log_mb, args.log_runs)))
    print("Address lookups:")
    print("\n".join(lookup_rates()))
    print(f"Following DXGK_QUERYSEGMENTOUT3 -> 16 DXGK_SEGMENTDESCRIPTOR3 -> bank table ({TARGET[0]} {TARGET[1]}) "
          f"from a log; goal {GOAL_MS:.0f} ms in one process (best of {args.processes} processes):")
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(cold_follow(args.processes, tmp)))
    print(f"Warm, in this process (best of {args.runs}):")
    with tempfile.TemporaryDirectory() as tmp:
        for name, memory in memories(tmp).items():
            rows = (("follow", lambda: follow("DXGK_QUERYSEGMENTOUT3", memory, QUERY, target=TARGET)),
                    ("follow + text", lambda: render_follow(follow("DXGK_QUERYSEGMENTOUT3", memory, QUERY,
                                                                   target=TARGET))),
                    ("follow + JSON", lambda: follow_json(follow("DXGK_QUERYSEGMENTOUT3", memory, QUERY,
                                                                 target=TARGET))))
            for what, fn in rows:
                ms = best_ms(args.runs, fn)
                print(f"  {name:28} {what:14} {ms:8.2f} ms  {ms / GOAL_MS:6.3f} x the goal  "
                      f"{'met' if ms < GOAL_MS else 'NOT MET'}")
    data = placements()
    raw_query, raw_descriptors = data[QUERY], b"".join(data[DESCRIPTORS + 72 * i] for i in range(16))
    plain = best_ms(args.runs, lambda: (kmd.decode("DXGK_SEGMENTDESCRIPTOR3", raw_descriptors, target=TARGET,
                                                   count=16),
                                        kmd.decode_one("DXGK_QUERYSEGMENTOUT3", raw_query, target=TARGET)))
    print(f"  reference: decode() of the same 17 records from bytes: {plain:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
