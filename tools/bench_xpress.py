"""Benchmark of the XPRESS decompressor (etw/readers/xpress.py) on the compressed buffers of the real
net.4.5.2.x64.etl (tests/etw/real), in MB/s of output on one core, in one run:

- before: the decoder before the fast path (etw/xpress.py at BEFORE, taken from git);
- python: the package's own reading alone (etw/readers/xpress.py without libfwnt);
- now: the package's ``decompress``: libfwnt's C decoder (the fast extra) where installed, after the
  scan for the places where an escape libfwnt reads otherwise may be and a cut of the stream at each;
  the Python reading without it;
- libfwnt: libfwnt-python's ``lzxpress_decompress`` called directly (not always the package's answer);
- C: a plain C decoder of the same format (the benchmark's own reference, compiled here with gcc into
  a temporary folder and called with ctypes; never shipped, never imported by a test);

each first checked to give the same bytes as the others on every compressed buffer of the real
files.  The passes over the buffers are interleaved (a pass of each decoder in turn, ``--runs`` times),
and every figure is the median of the passes with its spread (the least and the most); a ratio is the
median of the ratios pass by pass.  Then now/libfwnt (the goal: at most 1.5), now/before, python/before,
where now's time goes (libfwnt, the scan, the cuts), the Python reading's cost per item (a literal run or
a match, the units a Python decoder steps through), and net.4.5.2.x64.etl end to end (``--summary``, and
the tables as ``etw --format`` makes them) in events/s with each decoder in place.

    python tools/bench_xpress.py [--runs R] [--end-to-end-runs R]
"""
from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_etl import to_columns  # noqa: E402
from d3dkmddi_py.etw.readers import etlfile, etlreader, xpress  # noqa: E402
from tests.etw import etl_files  # noqa: E402

BEFORE = "fe29b7d1d74e631bd188da8cd64552fcc8cd01f5"  # the commit before the fast path
GOAL = 3.0  # issue 23: now / before
GOAL_NATIVE = 1.5  # issue 30: now / libfwnt direct, at most
TRACE = "net.4.5.2.x64"

# MS-XCA 2.4 read as the Python exact path reads it, one item at a time; counts the items.
C_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Decompress in[0..n) into out[0..size); the bytes made, or -1 where the stream is not valid.
   items[0] += literal runs, items[1] += matches (the steps a Python decoder takes), items[2] += long ones. */
long xpress_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t size, long *items) {
    size_t i = 0, o = 0, half = 0;
    uint32_t flags = 0;
    int count = 0, in_run = 0;
    while (o < size) {
        if (count == 0) {
            if (i + 4 > n) return -1;
            flags = (uint32_t)in[i] | (uint32_t)in[i + 1] << 8 | (uint32_t)in[i + 2] << 16 | (uint32_t)in[i + 3] << 24;
            i += 4;
            count = 32;
            in_run = 0;
        }
        count--;
        if (!(flags >> count & 1)) {
            if (i >= n) return -1;
            out[o++] = in[i++];
            items[0] += !in_run;
            in_run = 1;
            continue;
        }
        in_run = 0;
        if (i + 2 > n) {
            if (i == n) break;  /* a final match bit with no match: the end marker */
            return -1;
        }
        size_t token = (size_t)in[i] | (size_t)in[i + 1] << 8, length = token & 7, distance = (token >> 3) + 1;
        i += 2;
        if (length == 7) {
            items[2]++;
            if (half == 0) {
                if (i >= n) return -1;
                length = in[i] & 15;
                half = i++;
            } else {
                length = in[half] >> 4;
                half = 0;
            }
            if (length == 15) {
                if (i >= n) return -1;
                length = in[i++];
                if (length == 255) {
                    if (i + 2 > n) return -1;
                    length = (size_t)in[i] | (size_t)in[i + 1] << 8;
                    i += 2;
                    if (length == 0) {
                        if (i + 4 > n) return -1;
                        length = (size_t)in[i] | (size_t)in[i + 1] << 8 | (size_t)in[i + 2] << 16
                                 | (size_t)in[i + 3] << 24;
                        i += 4;
                    }
                    if (length < 22) return -1;
                    length -= 22;
                }
                length += 15;
            }
            length += 7;
        }
        length += 3;
        if (distance > o || length > size - o) return -1;
        items[1]++;
        if (distance >= length) {
            memcpy(out + o, out + o - distance, length);
        } else {
            for (size_t k = 0; k < length; k++) out[o + k] = out[o - distance + k];
        }
        o += length;
    }
    return (long)o;
}
"""


def load_before(folder: str):
    """The xpress module as it was at BEFORE, written into ``folder`` and imported from there."""
    try:
        text = subprocess.run(["git", "-C", ROOT, "show", f"{BEFORE}:d3dkmddi_py/etw/xpress.py"], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"bench_xpress: the decoder before the fast path is read from git commit {BEFORE[:12]}, "
                         f"which this checkout cannot show ({exc}); run it in a clone with that history") from None
    path = os.path.join(folder, "xpress_before.py")
    with open(path, "wb") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("xpress_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_c(folder: str):
    """The C reference compiled with gcc -O2 into ``folder``: (decompress(src, size, out=None), items)."""
    source, library = os.path.join(folder, "xpress_ref.c"), os.path.join(folder, "xpress_ref.so")
    with open(source, "w") as f:
        f.write(C_SOURCE)
    try:
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"bench_xpress: the C reference needs gcc: {getattr(exc, 'stderr', b'').decode() or exc}") \
            from None
    lib = ctypes.CDLL(library)
    lib.xpress_decompress.restype = ctypes.c_long
    lib.xpress_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_long)]
    items = (ctypes.c_long * 3)()

    def decompress(src, size: int, out: bytearray | None = None) -> bytearray:
        """The package's signature, so it can stand in for it end to end."""
        made = ctypes.create_string_buffer(size)
        if lib.xpress_decompress(bytes(src), len(src), made, size, items) != size:
            raise xpress.XpressError("the C reference refuses the stream")
        out = bytearray() if out is None else out
        out += memoryview(made)[:size]
        return out

    return decompress, items


def python_floor(steps: int, piece: int, runs: int) -> tuple:
    """(ns to step, ns to copy) an item: the least any decoder that takes items one at a time in Python
    does per item: a loop turn with a table look-up and the position moved, and one slice copy of
    ``piece`` bytes from the output's end (the average item's), the output growing as a decoder's does."""
    words, moves = array("H", range(1 << 16)), (1, 2) * (steps // 2)

    def step():
        i = 0
        for move in moves:
            i = (i + move) & 0xFFFF
            words[i]

    def copy():
        out, back = bytearray(1 << 16), slice(-1000, -1000 + piece)
        for _ in moves:
            out += out[back]

    t_step, t_copy = median_of(runs, step)[0], median_of(runs, copy)[0]
    return t_step / len(moves) * 1e9, t_copy / len(moves) * 1e9


def median_of(runs: int, fn) -> tuple:
    """(median, least, most) seconds of ``runs`` calls of ``fn``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def spread(times: list) -> tuple:
    """(median, least, most) of ``times``."""
    return statistics.median(times), min(times), max(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="passes over the buffers per decoder; the median is kept")
    parser.add_argument("--end-to-end-runs", type=int, default=3, help="runs of each end-to-end reading")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        before = load_before(tmp)
        c_decompress, items = load_c(tmp)
        native = xpress._native_decoder()
        decoders = {"before": before.decompress, "python": xpress._python_decompress, "now": xpress.decompress}
        if native:
            def libfwnt(src, size: int, out: bytearray | None = None):
                """libfwnt alone, with the package's signature (the bytes appended to ``out`` where given)."""
                made = native(bytes(src), size)
                if out is None:
                    return made
                out += made
                return out

            decoders["libfwnt"] = libfwnt
        decoders["C"] = c_decompress
        xpress._short_matches()  # the table made once a process, not timed
        print("libfwnt-python:", "installed, now = libfwnt, after the scan and the cuts" if native else
              "NOT installed (pip install 'd3dkmddi_py[fast]'), now = the Python reading")

        checked = 0
        for name in etl_files.NAMES:
            for stream, size in etl_files.compressed_streams(etl_files.read(name)):
                made = {label: bytes(f(stream, size)) for label, f in decoders.items()}
                if len(set(made.values())) != 1:
                    raise SystemExit(f"bench_xpress: the decoders disagree on a buffer of {name}.etl")
                checked += 1
        raw = etl_files.read(TRACE)
        streams = etl_files.compressed_streams(raw)
        total = sum(size for _stream, size in streams)
        items[0] = items[1] = items[2] = 0
        for stream, size in streams:
            c_decompress(stream, size)
        runs, matches, long = items[0], items[1], items[2]
        print(f"{checked} compressed buffers of the real files: the {len(decoders)} decoders give the same bytes")

        times = {label: [] for label in decoders}
        for _ in range(args.runs):  # interleaved, so a busy moment costs each alike
            for label, f in decoders.items():
                start = time.perf_counter()
                for stream, size in streams:
                    f(stream, size)
                times[label].append(time.perf_counter() - start)
        steps = runs + matches
        print(f"{TRACE}.etl: {len(streams)} compressed buffers, {sum(len(s) for s, _ in streams) / 1e6:.1f} MB making "
              f"{total / 1e6:.1f} MB; {runs:,} literal runs and {matches:,} matches ({steps:,} items; {long:,} "
              f"matches of 10 bytes or more, whose length goes on past the token); median of {args.runs} passes "
              "(least..most):")
        median = {}
        for label in decoders:
            median[label], least, most = spread(times[label])
            print(f"  {label:>7}: {median[label] * 1e3:7.1f} ms ({least * 1e3:.1f}..{most * 1e3:.1f}) = "
                  f"{total / median[label] / 1e6:6.1f} MB/s of output ({total / most / 1e6:.1f}.."
                  f"{total / least / 1e6:.1f}), "
                  f"{median[label] / steps * 1e9:5.0f} ns an item")

        def ratio(slow: str, fast: str) -> str:
            each = [a / b for a, b in zip(times[slow], times[fast])]
            mid, least, most = spread(each)
            return f"{mid:.2f} x ({least:.2f}..{most:.2f})"

        print(f"before / now = {ratio('before', 'now')} (issue 23's goal >= {GOAL}); before / python = "
              f"{ratio('before', 'python')}; now / C = {ratio('now', 'C')} (the gap left)")
        if native:
            each = [a / b for a, b in zip(times["now"], times["libfwnt"])]
            verdict = "met" if statistics.median(each) <= GOAL_NATIVE else "NOT met"
            print(f"now / libfwnt direct = {ratio('now', 'libfwnt')} (goal <= {GOAL_NATIVE}: {verdict})")
            held = [(s, n, xpress._odd_escapes(s)) for s, n in streams]
            held = [h for h in held if h[2]]
            places = sum(len(at) for _s, _n, at in held)
            cuts = [0]

            def counted(src, size):
                cuts[0] += 1
                return native(src, size)

            assert all(xpress._cleared(counted, s, n, at) for s, n, at in held)
            t_native = median_of(args.runs, lambda: [native(s, n) for s, n in streams])
            t_scan = median_of(args.runs, lambda: [xpress._odd_escapes(s) for s, _ in streams])
            t_cuts = median_of(args.runs, lambda: [xpress._cleared(native, s, n, at) for s, n, at in held])
            print(f"now's time, median (least..most): libfwnt {t_native[0] * 1e3:.1f} ms ({t_native[1] * 1e3:.1f}.."
                  f"{t_native[2] * 1e3:.1f}); the scan of every stream for the places an escape libfwnt reads "
                  f"otherwise may be {t_scan[0] * 1e3:.1f} ms ({t_scan[1] * 1e3:.1f}..{t_scan[2] * 1e3:.1f}); "
                  f"the {places} places in {len(held)} of the {len(streams)} streams, each cleared by a cut "
                  f"({cuts[0]} cuts) {t_cuts[0] * 1e3:.1f} ms ({t_cuts[1] * 1e3:.1f}..{t_cuts[2] * 1e3:.1f})")
        stepping, copying = python_floor(steps, round(total / steps), args.runs)
        floor = stepping + copying
        per_item = {label: median[label] / steps * 1e9 for label in decoders}
        print(f"a Python loop's floor an item: {stepping:.0f} ns to step (a turn, a look-up, the position moved) + "
              f"{copying:.0f} ns to copy a {round(total / steps)}-byte slice = {floor:.0f} ns; {GOAL} x before would "
              f"be {per_item['before'] / GOAL:.0f} ns an item, leaving {per_item['before'] / GOAL - floor:.0f} ns for "
              f"all else an item asks (the Python reading spends {per_item['python'] - floor:.0f})")

        path = os.path.join(tmp, f"{TRACE}.etl")
        with open(path, "wb") as f:
            f.write(raw)

        def summary():
            with open(path, "rb") as f:
                return etlreader.summary(f, path)

        events = summary()["events"]
        print(f"{TRACE}.etl end to end, with each decoder in etlfile ({events:,} events; median of "
              f"{args.end_to_end_runs}, least..most):")
        for label, f in decoders.items():
            etlfile.decompress = f
            try:
                t_sum = median_of(args.end_to_end_runs, summary)
                t_tab = median_of(args.end_to_end_runs, lambda: to_columns(path, True))
            finally:
                etlfile.decompress = xpress.decompress
            print(f"  {label:>7}: --summary {events / t_sum[0]:9,.0f} events/s ({events / t_sum[2]:,.0f}.."
                  f"{events / t_sum[1]:,.0f}), the tables {events / t_tab[0]:9,.0f} events/s "
                  f"({events / t_tab[2]:,.0f}.."
                  f"{events / t_tab[1]:,.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
