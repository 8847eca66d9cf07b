"""decode_array (d3dkmddi_py.bulk) at every count against the best NumPy decoder written by hand for the
same type, in one run.

    python tools/bench_bulk.py [--runs R] [--max-count N] [--types DXGK_SEGMENTFLAGS,DXGK_ALLOCATIONINFO]

The rival (``numpy_rival``) is what a NumPy user who knows the layout writes for speed, worked out once
per type outside the timing: the bytes holding bitfields gathered in one pass over the records (a byte
used by two union arms twice) and made rows; every bit of the bytes holding one-bit fields unpacked at
once (one broadcast shift of those rows by 0 to 7, one mask: ``np.unpackbits`` along the records' axis
was 10 times slower here); a field inside one byte shifted and masked from its gathered row; a wider
bitfield shifted and masked from the narrowest window that holds it, straight into its column
(``out=``); a plain member copied from a strided view of its field.  It gives what decode_array gives:
for every leaf an array of the same values and dtype, C-contiguous, its own memory (sharing none with the
input or another column), checked at every count.  The plain peer (``numpy_peer``) is a structured dtype
over the record and ``(word >> bit) & mask`` per field, as tools/bench.py had it.

Each count is timed in batches of calls lasting about 5 ms (one call at the large counts), the three
decoders in turn batch by batch; a time is this process's CPU time (``time.process_time``: page faults
included, the other processes of a busy machine not); figures are the median time a call with the least
and the most beside it, and the ratio rival / ours is the median of the batch-by-batch
ratios (above 1: ours is faster); beside them the traced peak memory of one call of ours and of the
rival over the bytes of the columns.  Then, at the largest count, ``decode_array`` into fresh columns and
into the columns of an earlier call (``out=``, as a chunked decode runs) with the page faults each takes
(``resource.getrusage``): a fresh output faults its pages in on every call.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402  (the benchmark needs NumPy)

import d3dkmddi_py as kmd  # noqa: E402
from d3dkmddi_py.bulk import column_dtypes, decode_array  # noqa: E402

SEED = 20240605
TYPES = ("DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO")
COUNTS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)
BATCH_SECONDS = 0.005


def numpy_peer(cls):
    """The plain peer: one structured dtype over the record (a field per storage unit at its offset; a
    plain signed member signed), a plain member's column a copy of its field, a bitfield's
    ``(word >> bit) & mask`` cast to the column's dtype."""
    dtypes = column_dtypes(cls)
    fields, steps = {}, []
    for leaf in kmd.leaves(cls):
        signed = leaf.signed and not leaf.is_bitfield  # bitfields read unsigned, as ctypes does
        name = fields.setdefault((leaf.offset, leaf.size, signed), f"f{len(fields)}")
        if leaf.is_bitfield or leaf.bit_width != 8 * leaf.size:
            steps.append((leaf.path, name, leaf.bit_offset, (1 << leaf.bit_width) - 1, np.dtype(dtypes[leaf.path])))
        else:
            steps.append((leaf.path, name, None, None, None))
    record = np.dtype({"names": list(fields.values()), "offsets": [offset for offset, _size, _s in fields],
                       "formats": [f"<{'i' if s else 'u'}{size}" for _offset, size, s in fields],
                       "itemsize": cls._layout_.size})

    def peer(raw):
        records = np.frombuffer(raw, dtype=record)
        return {path: records[name].copy() if shift is None else ((records[name] >> shift) & mask).astype(dtype)
                for path, name, shift, mask, dtype in steps}
    return peer


def numpy_rival(cls):
    """The best hand-written NumPy decoder of ``cls`` (see the module's docstring)."""
    size = cls._layout_.size
    dtypes = {path: np.dtype(d) for path, d in column_dtypes(cls).items()}
    slots, taken = [], {}  # unpacked byte rows: the record byte of each; (slot, bit) -> the leaf it gives
    bits, in_byte, wide, plain = [], [], [], []
    for leaf in kmd.leaves(cls):
        whole = not leaf.is_bitfield and leaf.bit_width == 8 * leaf.size
        if whole:
            plain.append((leaf.path, leaf.offset, dtypes[leaf.path]))
            continue
        byte, bit = leaf.offset + leaf.bit_offset // 8, leaf.bit_offset % 8
        if leaf.bit_width == 1:
            slot = next((s for s, b in enumerate(slots) if b == byte and (s, bit) not in taken), None)
            if slot is None:
                slots.append(byte)
                slot = len(slots) - 1
            taken[slot, bit] = leaf.path
            bits.append((leaf.path, 8 * slot + bit))
        elif bit + leaf.bit_width <= 8:
            in_byte.append((leaf.path, byte, bit, (1 << leaf.bit_width) - 1, bit + leaf.bit_width == 8))
        else:
            for window in (2, 4, 8):  # the narrowest aligned-or-not window of the unit holding the field
                start = min(leaf.offset + leaf.bit_offset // 8, leaf.offset + leaf.size - window)
                shift = leaf.offset * 8 + leaf.bit_offset - start * 8
                if shift + leaf.bit_width <= 8 * window:
                    break
            wide.append((leaf.path, start, np.dtype(f"<u{window}"), shift, (1 << leaf.bit_width) - 1,
                         dtypes[leaf.path]))
    rows = slots + sorted({byte for _p, byte, _b, _m, _top in in_byte} - set(slots))
    row_of = {byte: rows.index(byte) for byte in rows}
    order = [leaf.path for leaf in kmd.leaves(cls)]

    units = len(slots)
    every_bit = np.arange(8, dtype=np.uint8)[None, :, None]

    def rival(raw):
        data = np.frombuffer(raw, dtype=np.uint8)
        n = data.size // size
        # one gather of the byte rows, record-major (reads each record once), then made row-major
        gathered = np.ascontiguousarray(np.take(data.reshape(n, size), rows, axis=1).T)
        out = {}
        if units:  # every bit of every unpacked byte: one broadcast shift, one mask
            unpacked = np.empty((units, 8, n), dtype=np.uint8)
            np.right_shift(gathered[:units, None, :], every_bit, out=unpacked)
            np.bitwise_and(unpacked, 1, out=unpacked)
            unpacked = unpacked.reshape(8 * units, n)
            out = {path: unpacked[row] for path, row in bits}
        for path, byte, shift, mask, top in in_byte:
            row = gathered[row_of[byte]]
            out[path] = row >> shift if top else (row >> shift) & mask if shift else row & mask
        for path, start, window, shift, mask, dtype in wide:
            view = np.ndarray((n,), window, data, start, (size,))
            column = np.empty(n, dtype)
            np.bitwise_and(view >> shift, mask, out=column, casting="unsafe")
            out[path] = column
        for path, offset, dtype in plain:
            out[path] = np.ndarray((n,), dtype.newbyteorder("<"), data, offset, (size,)).copy()
        return {path: out[path] for path in order}
    return rival


def same_columns(ours, theirs) -> bool:
    """The same leaves, values and dtypes; each of the rival's columns C-contiguous and its own memory."""
    if list(ours) != list(theirs):
        return False
    arrays = list(theirs.values())
    for i, (path, column) in enumerate(theirs.items()):
        if not (np.array_equal(ours[path], column) and ours[path].dtype == column.dtype
                and column.flags.c_contiguous):
            return False
        if any(np.shares_memory(column, other) for other in arrays[i + 1:]):
            return False
    return True


def traced_peak(fn) -> int:
    """Peak bytes NumPy and Python allocate during one call of ``fn`` (its result included)."""
    tracemalloc.start()
    try:
        result = fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        del result


def _batch(calls: int, fn, raw) -> float:
    """CPU seconds a call of ``fn(raw)``, over ``calls`` calls: this process's time (page faults included),
    to which the other processes of a busy machine add nothing."""
    start = time.process_time()
    for _ in range(calls):
        fn(raw)
    return (time.process_time() - start) / calls


def spread(values) -> str:
    return f"({_seconds(min(values))}..{_seconds(max(values))})"


def _seconds(t: float) -> str:
    return f"{t * 1e6:,.1f} us" if t < 1e-2 else f"{t * 1e3:,.1f} ms"


def sweep(name: str, counts, runs: int) -> list:
    cls = kmd.target("x64").types[name]
    size = cls._layout_.size
    decoders = {"ours": lambda raw: decode_array(cls, raw), "rival": numpy_rival(cls), "peer": numpy_peer(cls)}
    lines = [f"{name} [{cls._target_label_}], {size}-byte records, {len(kmd.leaves(cls))} columns; median time a "
             f"call (least..most) of {runs} batches; rival / ours above 1: ours is faster"]
    behind = []
    for n in counts:
        raw = np.random.default_rng(SEED + n).bytes(n * size)
        ours = decode_array(cls, raw)
        for label in ("rival", "peer"):
            if not same_columns(ours, decoders[label](raw)):
                raise SystemExit(f"bench_bulk: the {label} decoder's columns of {n:,} {name} are not decode_array's")
        column_bytes = ours.nbytes
        del ours
        one = min(_batch(1, fn, raw) for fn in decoders.values())
        calls = max(1, round(BATCH_SECONDS / one))
        times = {label: [] for label in decoders}
        for _ in range(runs):
            for label, fn in decoders.items():
                times[label].append(_batch(calls, fn, raw))
        ratio = [r / o for r, o in zip(times["rival"], times["ours"])]
        mid = statistics.median(ratio)
        if mid <= 1:
            behind.append(n)
        peaks = {label: traced_peak(lambda: decoders[label](raw)) for label in ("ours", "rival")}
        lines.append(f"  {n:>9,}: ours {_seconds(statistics.median(times['ours'])):>9} {spread(times['ours']):>21}  "
                     f"rival {_seconds(statistics.median(times['rival'])):>9} {spread(times['rival']):>21}  "
                     f"rival/ours {mid:5.2f} ({min(ratio):.2f}..{max(ratio):.2f})  "
                     f"plain peer {_seconds(statistics.median(times['peer'])):>9}  peak memory ours "
                     f"{peaks['ours'] / column_bytes:.2f} x the columns, rival {peaks['rival'] / column_bytes:.2f} x")
    lines.append(f"  ahead of the rival at every count (median ratio above 1): {'met' if not behind else 'NOT met'}"
                 + (f" (behind at {', '.join(f'{n:,}' for n in behind)})" if behind else ""))
    return lines


def faults(name: str, n: int, runs: int) -> list:
    """decode_array of ``n`` records into fresh columns and into reused ones: median time and the page
    faults a call takes (minor and major, from the process's counters)."""
    cls = kmd.target("x64").types[name]
    raw = np.random.default_rng(SEED).bytes(n * cls._layout_.size)
    previous = decode_array(cls, raw)
    lines = []
    for label, fn in (("fresh columns", lambda: decode_array(cls, raw)),
                      ("out= reused", lambda: decode_array(cls, raw, out=previous))):
        times, minor, major = [], [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_SELF)
            start = time.process_time()
            result = fn()
            times.append(time.process_time() - start)
            after = resource.getrusage(resource.RUSAGE_SELF)
            minor.append(after.ru_minflt - before.ru_minflt)
            major.append(after.ru_majflt - before.ru_majflt)
            del result
        lines.append(f"  {name} x {n:,}, {label}: {_seconds(statistics.median(times))} {spread(times)}, "
                     f"{statistics.median(minor):,.0f} minor page faults a call ({min(minor):,}..{max(minor):,}), "
                     f"{statistics.median(major):,.0f} major")
    return lines


def csv_spelling(name: str, n: int, runs: int) -> list:
    """``decode --format csv``'s writer on ``n`` records of ``name``: pointers and 64-bit leaves as ``0x...``
    (issue 31) by pyarrow's path and by the template, against every column decimal (the spelling before), by
    pyarrow; the runs in turn, CPU medians, the ratio hex / decimal of each run, and each one's traced peak."""
    import io

    from d3dkmddi_py.bulk.table import CsvWriter, Table, columns_table

    cls = kmd.target("x64", "WDDM3_2").types[name]
    raw = np.random.default_rng(5).integers(0, 256, cls._layout_.size * n, dtype=np.uint8).tobytes()
    hexed = columns_table(decode_array(cls, raw), record=True)
    decimal = Table(hexed.names, ["int"] * len(hexed.kinds), hexed.columns)
    cases = {"0x... by pyarrow": (hexed, True), "0x... by the template": (hexed, False),
             "decimal by pyarrow (before)": (decimal, True)}

    def write(case):
        table, arrow = cases[case]
        CsvWriter(io.StringIO(), arrow=arrow).write(table)

    times = {case: [] for case in cases}
    for case in cases:
        write(case)  # imports and first touches outside the timing
    for _ in range(runs):
        for case in cases:
            times[case].append(_batch(1, write, case))
    ratios = [a / b for a, b in zip(times["0x... by pyarrow"], times["decimal by pyarrow (before)"])]
    lines = [f"CSV of {n:,} {name} records ({sum(k == 'hex' for k in hexed.kinds)} of {len(hexed.kinds)} columns "
             f"hex), CPU median of {runs}:"]
    for case in cases:
        peak = traced_peak(lambda case=case: write(case))
        lines.append(f"  {case}: {_seconds(statistics.median(times[case]))} {spread(times[case])}, "
                     f"traced peak {peak / 2**20:.1f} MB")
    lines.append(f"  0x... / decimal by pyarrow: {statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="batches per decoder and count; the median is kept")
    parser.add_argument("--max-count", type=int, default=COUNTS[-1])
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument("--csv-only", action="store_true", help="only the CSV writer's spelling of hex columns")
    args = parser.parse_args(argv)
    if args.csv_only:
        for line in csv_spelling("DXGK_ALLOCATIONINFO", 100_000, max(3, args.runs // 2)):
            print(line)
        return 0
    counts = tuple(n for n in COUNTS if n <= args.max_count)
    print(f"NumPy {np.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    for name in args.types.split(","):
        for line in sweep(name, counts, args.runs):
            print(line)
    print("Page faults at the largest count (a fresh output's pages are faulted in on every call):")
    for name in args.types.split(","):
        for line in faults(name, counts[-1], max(3, args.runs // 2)):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
