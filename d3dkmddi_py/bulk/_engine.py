"""The ways to run a Plan: NumPy (the fast path), NumPy for a few records (``decode_small``: a
call's fixed cost, not its records, dominates there), and the standard library (the fallback).

NumPy: every column is a slice of one preallocated arena (one allocation, so the
pages are faulted in once, not once per column), planes live in one scratch
buffer, and every operation writes straight into its output (``out=``): no
temporary array per leaf.
"""
from __future__ import annotations

import array
import struct
from functools import lru_cache

from ._plan import Plan

_ALIGN = 64  # every column starts on a cache line, and has room for whole uint64 words


def _round(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


_MAX_SPAN = (1 << 31) - 1  # a structured dtype's itemsize is a C int in NumPy 1.x


class Buffers:
    """One arena for every column and window slot of a decode, reusable by a later decode of the same plan.

    Slots filled by one structured copy lie next to each other (the copy's
    destination dtype spans them), then come the columns cut from windows.
    """

    __slots__ = ("plan", "capacity", "arena", "slots")

    def __init__(self, np, plan: Plan, capacity: int):
        self.plan, self.capacity = plan, capacity
        self.slots = [None] * (len(plan.columns) + len(plan.windows))
        at = 0
        for _key, items in _groups(plan):
            for g in items:
                self.slots[g.dest] = at
                at += _round(capacity * g.size)
        for slot, position in enumerate(self.slots):
            if position is None:
                self.slots[slot] = at
                at += _round(capacity * plan.slot_size(slot))
        self.arena = np.empty(at, dtype=np.uint8)

    def fits(self, plan: Plan, count: int) -> bool:
        return self.plan is plan and count <= self.capacity


@lru_cache(maxsize=None)  # per plan (plans are cached per layout, and hash by identity)
def _groups(plan: Plan):
    """Gathers that run as one structured copy: same source, same size; from the input first."""
    groups = {}
    for g in plan.gathers:
        groups.setdefault((g.source is not None, g.source or 0, -g.size), []).append(g)
    return sorted(groups.items())


@lru_cache(maxsize=4096)
def _struct(np, width: int, offsets: tuple, itemsize: int, order: str = "<"):
    names = [f"f{i}" for i in range(len(offsets))]
    return np.dtype({"names": names, "formats": [f"{order}u{width}"] * len(offsets), "offsets": list(offsets),
                     "itemsize": itemsize})


@lru_cache(maxsize=None)
def _column_dtypes(np, plan: Plan) -> tuple:
    """The little-endian dtype of every column (slots hold little-endian values whatever the host)."""
    return tuple(np.dtype(f"<{c.dtype}") for c in plan.columns)


# Below these sizes NumPy's ~300 operations per call (one per gather group and bitfield) cost more than
# the work: one record is read as one Python int, a few as one 8-byte window per column (~20 operations).
SMALL_RECORDS = 256
SMALL_CELLS = 1 << 14  # records times columns: the windows take 8 bytes each


@lru_cache(maxsize=None)
def _small_plan(np, plan: Plan) -> tuple:
    """What ``decode_small`` needs, worked out once per plan: the columns grouped by dtype (a group is
    ``(dtype, unsigned dtype, column indices)``); in group order, every column's (shift, mask) in a
    record read as one int; and the NumPy form of each column's 8-byte window of its record (byte
    indices, or None when the record is one 8-byte word; shifts; masks), or None when a field fits
    no window (a 64-bit unit's bitfield wider than 57 bits that does not start on a byte)."""
    by_dtype = {}
    for i, c in enumerate(plan.columns):
        by_dtype.setdefault(c.dtype, []).append(i)
    bits = {leaf.column: (8 * unit.offset + leaf.bit, leaf.width) for unit in plan.units for leaf in unit.leaves}
    groups, order = [], []
    for dtype, columns in by_dtype.items():
        groups.append((np.dtype(f"<{dtype}"), np.dtype(f"<u{dtype[1:]}"), tuple(columns)))
        order += columns
    reads = tuple((bits[i][0], (1 << bits[i][1]) - 1) for i in order)
    windows = None
    masks = np.array([(1 << bits[i][1]) - 1 for i in order], dtype=np.uint64)
    if plan.record_size <= 8:  # the whole record is one window: no gather
        windows = (None, np.array([bits[i][0] for i in order], dtype=np.uint64), masks)
    elif all(bit % 8 + width <= 64 for bit, width in bits.values()):
        windows = (np.array([bits[i][0] // 8 + k for i in order for k in range(8)], dtype=np.intp),
                   np.array([bits[i][0] % 8 for i in order], dtype=np.uint64), masks)
    return tuple(groups), reads, windows


@lru_cache(maxsize=None)
def _one_record(np, plan: Plan):
    """(struct packing one record's columns in group order, each group's byte offset): a group is a
    run of values on an 8-byte boundary, packed unsigned (its dtype reads them back)."""
    parts, offsets, at = ["<"], [], 0
    for dtype, _unsigned, columns in _small_plan(np, plan)[0]:
        nbytes = len(columns) * dtype.itemsize
        offsets.append(at)
        parts.append(f"{len(columns)}{_STRUCT_CODES[dtype.itemsize]}{-nbytes % 8}x")
        at += nbytes + -nbytes % 8
    return struct.Struct("".join(parts)), tuple(offsets)


class SmallBuffers:
    """The matrices of a small call, one per dtype group (unsigned; rows are columns), reusable by a
    later small call of the same plan with at most ``capacity`` records."""

    __slots__ = ("plan", "capacity", "matrices")

    def __init__(self, plan: Plan, capacity: int, matrices: list):
        self.plan, self.capacity, self.matrices = plan, capacity, matrices

    def fits(self, plan: Plan, count: int) -> bool:
        return self.plan is plan and count <= self.capacity


def decode_small(np, plan: Plan, raw, count: int, buffers: SmallBuffers | None = None):
    """The columns ``decode_numpy`` gives (same values, dtypes and order) for a few records, and
    their SmallBuffers: each column is a row of a (columns, records) matrix per dtype."""
    size = plan.record_size
    groups, reads, windows = _small_plan(np, plan)
    if windows is None or (count > 1 and buffers is not None and not buffers.fits(plan, count)):
        return decode_numpy(np, plan, raw, count)
    if count == 1 and buffers is None:  # the record as one int, every value by Python, one struct call
        packer, offsets = _one_record(np, plan)
        word = int.from_bytes(bytes(raw[:size]), "little")
        arena = bytearray(packer.size)
        packer.pack_into(arena, 0, *[(word >> shift) & mask for shift, mask in reads])
        buffers = SmallBuffers(plan, 1, [np.ndarray((len(columns), 1), unsigned, arena, at)
                                         for (_dtype, unsigned, columns), at in zip(groups, offsets)])
    else:  # each value from an 8-byte window of its record: ~15 NumPy calls in all
        index, shifts, masks = windows
        # zeros after each record: a window may run past the record's end
        padded = np.zeros((count, 8 if index is None else size + 8), dtype=np.uint8)
        padded[:, :size] = np.asarray(raw[:count * size]).reshape(count, size)
        words = padded.view("<u8") if index is None else np.take(padded, index, axis=1).view("<u8")
        values = ((words >> shifts) & masks).T
        row, fresh = 0, buffers is None or not buffers.fits(plan, count)
        matrices = [] if fresh else buffers.matrices
        for i, (_dtype, unsigned, columns) in enumerate(groups):
            part = values[row:row + len(columns)]
            if fresh:
                matrices.append(part.astype(unsigned, order="C"))  # each row one contiguous column
            else:
                np.copyto(matrices[i][:, :count], part, casting="unsafe")  # unsigned: modulo the width
            row += len(columns)
        if fresh:
            buffers = SmallBuffers(plan, count, matrices)
    out = [None] * len(plan.columns)
    for (dtype, unsigned, columns), matrix in zip(groups, buffers.matrices):
        rows = matrix[:, :count]
        for column, array in zip(columns, rows if dtype == unsigned else rows.view(dtype)):
            out[column] = array
    return out, buffers


def decode_numpy(np, plan: Plan, raw, count: int, buffers: Buffers | None = None):
    """Columns (NumPy arrays, views into one arena) of ``count`` records in ``raw`` (uint8)."""
    if buffers is None or not buffers.fits(plan, count):
        buffers = Buffers(np, plan, count)
    arena, slots = buffers.arena, buffers.slots
    # slots hold little-endian values whatever the host, so a byte offset inside one
    # means the same thing as in the record (and costs nothing on a little-endian host)
    columns = [arena[at:at + count * c.itemsize].view(dtype)
               for at, c, dtype in zip(slots, plan.columns, _column_dtypes(np, plan))]
    if count == 0:
        return columns, buffers

    # 1. gathers: one structured copy per (source, size).  The destination's elements
    #    overlap (stride ``size``, fields at each slot), which turns records into columns;
    #    NumPy walks the source once, in cache-sized blocks.
    for (_derived, source, _size), items in _groups(plan):
        width = items[0].size
        if items[0].source is None:
            buffer, start, stride = raw, 0, plan.record_size
        else:
            buffer, start, stride = arena, slots[source], plan.slot_size(source)
        for part in _spans(items, slots, width):
            base = slots[part[0].dest]
            src = np.ndarray((count,), buffer=buffer, offset=start, strides=(stride,),
                             dtype=_struct(np, width, tuple(g.offset for g in part), stride))
            dst = np.ndarray((count,), buffer=arena, offset=base, strides=(width,),
                             dtype=_struct(np, width, tuple(slots[g.dest] - base for g in part),
                                           slots[part[-1].dest] - base + width))
            np.copyto(dst, src)

    # 2. bitfields from their contiguous slots
    def words(slot: int, lane: int):  # slots are padded to whole 64-bit words
        at = slots[slot]
        return arena[at:at + -(-count * lane // 8) * 8].view("<u8")

    for op in plan.swars:
        source, out = words(op.source, op.lane), words(op.column, op.lane)
        if not op.mask:
            np.copyto(out, source)
        elif op.shift:
            np.right_shift(source, op.shift, out=out)
            np.bitwise_and(out, op.mask, out=out)
        else:
            np.bitwise_and(source, op.mask, out=out)
    for op in plan.narrows:
        width, at = plan.slot_size(op.source), slots[op.source]
        source, out = arena[at:at + count * width].view(f"<u{width}"), columns[op.column]
        if op.shift:
            np.right_shift(source, op.shift, out=out, casting="unsafe")
        else:
            np.copyto(out, source, casting="unsafe")
        if op.mask:
            np.bitwise_and(out, op.mask, out=out)
    return columns, buffers


def _spans(items, slots, width):
    """Split a group so that no structured dtype spans more than a C int of bytes."""
    part = []
    for g in items:
        if part and slots[g.dest] + width - slots[part[0].dest] > _MAX_SPAN:
            yield part
            part = []
        part.append(g)
    if part:
        yield part


_STRUCT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _typecode(itemsize: int, signed: bool) -> str:
    for code in ("bhilq" if signed else "BHILQ"):
        if array.array(code).itemsize == itemsize:
            return code
    raise AssertionError(f"no array typecode of {itemsize} bytes")


def decode_pure(plan: Plan, raw: memoryview, count: int):
    """The same columns as ``array.array`` objects, with the standard library only."""
    columns = [None] * len(plan.columns)
    size = plan.record_size
    for unit in plan.units:
        record = struct.Struct(f"<{unit.offset}x{_STRUCT_CODES[unit.size]}{size - unit.offset - unit.size}x")
        values = [v for (v,) in record.iter_unpack(raw[:count * size])] if count else []
        for leaf in unit.leaves:
            column = plan.columns[leaf.column]
            if leaf.bit == 0 and leaf.width == unit.size * 8:
                unsigned = array.array(_typecode(column.itemsize, False), values)
                if column.signed:  # the same bytes read as two's complement, as ctypes does
                    signed = array.array(_typecode(column.itemsize, True))
                    signed.frombytes(unsigned.tobytes())
                    unsigned = signed
                columns[leaf.column] = unsigned
            else:
                shift, mask = leaf.bit, (1 << leaf.width) - 1
                columns[leaf.column] = array.array(_typecode(column.itemsize, False),
                                                   [(v >> shift) & mask for v in values])
    return columns
