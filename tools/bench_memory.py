"""Following pointers from memory, timed: python tools/bench_memory.py [--runs N]

Issue 24's goal: following a DXGK_QUERYSEGMENTOUT3 with 16 descriptors from memory takes under 50 ms in
one process.  Printed per memory (WinDbg-like ranges, one record a range; a raw image; a full kernel dump
when kdmp-parser is installed): the follow alone, with its text (render_follow) and with its JSON, each as
ms and as the ratio to the goal; then, as a reference, decoding the same 17 records from bytes with
decode(), and the cost of an address lookup in Ranges of 1,000 and 100,000 ranges (bisection: O(log n)).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import d3dkmddi_py as kmd  # noqa: E402
from bench import best_of  # noqa: E402  (tools/bench.py, beside this script)
from d3dkmddi_py.follow import follow, follow_json, render_follow  # noqa: E402
from d3dkmddi_py.memory import ImageFile, Ranges  # noqa: E402

GOAL_MS = 50.0
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
        from tests.kdump import Machine, write_dump
    except ImportError:
        print("(kdmp-parser not installed: no kernel dump row)")
        return out
    from pathlib import Path

    out["full kernel dump"] = kmd.KernelDump(write_dump(Path(tmp) / "bench.dmp", Machine.holding(data), "full"))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="best of this many runs (default 20)")
    args = parser.parse_args(argv)
    print(f"Following DXGK_QUERYSEGMENTOUT3 -> 16 DXGK_SEGMENTDESCRIPTOR3 -> bank table ({TARGET[0]} {TARGET[1]}), "
          f"best of {args.runs}; goal {GOAL_MS:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, memory) in enumerate(memories(tmp).items()):
            start = time.perf_counter()
            node = follow("DXGK_QUERYSEGMENTOUT3", memory, QUERY, target=TARGET)  # warms the layout caches
            middle = time.perf_counter()
            render_follow(node)  # and the text's
            if index == 0:
                for what, ms in (("first follow", (middle - start) * 1000),
                                 ("first text", (time.perf_counter() - middle) * 1000)):
                    print(f"  {name:28} {what:14} {ms:8.2f} ms  {ms / GOAL_MS:6.3f} x the goal  "
                          f"{'met' if ms < GOAL_MS else 'NOT MET'}  (cold: layouts built"
                          f"{', semantics imported for the meanings' if what == 'first text' else ''})")
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
                                        kmd.decode("DXGK_QUERYSEGMENTOUT3", raw_query, target=TARGET)))
    print(f"  reference: decode() of the same 17 records from bytes: {plain:.2f} ms")
    rng = random.Random(24)
    for n in (1_000, 100_000):
        m = Ranges()
        for i in range(n):
            m.add(i * 64, b"\x00" * 16, "x")
        probes = [rng.randrange(n) * 64 for _ in range(100_000)]
        start = time.perf_counter()
        for address in probes:
            m.read(address, 8)
        per = (time.perf_counter() - start) / len(probes) * 1e6
        print(f"  Ranges.read in {n:>7,} ranges: {per:.2f} us a lookup")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
