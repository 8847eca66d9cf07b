"""Benchmark of the ETW XML reader: events/s on one core, and the ratio to a bare iterparse.

    python tools/bench_etw.py [--events N] [--keep PATH]

Writes a tracerpt-shaped trace (CRLF, tabs, padded UInt32, RenderingInfo) of N AdapterAllocation
events (the sample's clean allocations, repeated) after the sample adapter's segments, then times,
each on the same file:
- expat only: the standard library's expat tokenizing the bytes, no handler, no tree (the floor);
- bare: xml.etree.ElementTree.iterparse, touching every <Event> and clearing it, decoding nothing;
- read: d3dkmddi_py.etw.read, every event decoded into typed fields;
- adapters: read plus the mapping and the checks against the segments (etw.adapters).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from d3dkmddi_py import etw  # noqa: E402
from d3dkmddi_py.etw.schema import KIND_BY_NAME  # noqa: E402
from d3dkmddi_py.samples import etw_build  # noqa: E402


def write_trace(path: str, n: int) -> int:
    clock = etw_build._Clock()
    # the sample's clean allocations: a real trace is mostly clean, and a record with findings is
    # checked once more one by one for its messages (the rare case)
    breaking = {a.note for a in etw_build.build.ALLOCATIONS if a.breaks}
    allocations = [a for a in etw_build.allocation_events() if a[1] not in breaking]
    with open(path, "w", encoding="ascii", newline="") as f:
        f.write("<Events>\r\n")
        for fields in etw_build.segment_events():
            f.write(etw_build._dxg(clock, KIND_BY_NAME[("ReportSegment", "Info")], fields))
        for i in range(n):
            opcode, _note, fields = allocations[i % len(allocations)]
            fields = dict(fields, hDxgGlobalAlloc=0xFFFFB80C50000000 + i * 0x100)
            f.write(etw_build._dxg(clock, KIND_BY_NAME[("AdapterAllocation", opcode)], fields))
        f.write("</Events>\r\n")
    return n + len(etw_build.segment_events())


def expat(path: str) -> int:
    """The floor: expat tokenizing the file with no handler and no tree (returns the events counted)."""
    import pyexpat

    parser = pyexpat.ParserCreate()
    n, tail = 0, b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 18)
            if not chunk:
                break
            n += (tail + chunk).count(b"<Event ") - tail.count(b"<Event ")
            tail = chunk[-6:]
            parser.Parse(chunk, False)
    parser.Parse(b"", True)
    return n


def bare(path: str) -> int:
    n = 0
    for _event, el in ET.iterparse(path, events=("end",)):
        if el.tag.endswith("}Event"):
            n += 1
            el.clear()
    return n


def read(path: str) -> int:
    return sum(1 for _e in etw.read(path))


def adapters(path: str) -> int:
    got = etw.adapters(etw.read(path), target=("x64", "WDDM3_0"))
    return sum(a.started + a.stopped + len(a.segments) for a in got.values())


def timed(fn, path, repeat: int):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        n = fn(path)
        dt = time.perf_counter() - t
        best = dt if best is None or dt < best else best
    return n, best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs (default 2)")
    ap.add_argument("--keep", help="write the trace here and keep it")
    args = ap.parse_args(argv)
    folder = None
    path = args.keep
    if path is None:
        folder = tempfile.mkdtemp(prefix="bench-etw-")
        path = os.path.join(folder, "trace.xml")
    try:
        total = write_trace(path, args.events)
        size = os.path.getsize(path)
        print(f"trace: {total:,} events, {size / 1e6:.1f} MB ({size / total:.0f} bytes per event), "
              f"Python {sys.version.split()[0]}, best of {args.repeat}")
        results = {}
        for name, fn in (("expat only", expat), ("bare iterparse", bare), ("etw.read", read),
                         ("etw.adapters", adapters)):
            n, dt = timed(fn, path, args.repeat)
            results[name] = dt
            print(f"{name:<15} {n:>9,} events  {dt:7.2f} s  {n / dt:>10,.0f} events/s  {size / dt / 1e6:6.1f} MB/s")
        print(f"etw.read / bare iterparse time: {results['etw.read'] / results['bare iterparse']:.2f}x; "
              f"target >= 100,000 events/s: {'met' if total / results['etw.read'] >= 100_000 else 'NOT met'}")
    finally:
        if folder is not None:
            os.unlink(path)
            os.rmdir(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
