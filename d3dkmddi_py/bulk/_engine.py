"""The two ways to run a Plan: NumPy (the fast path) and the standard library (the fallback).

NumPy: every column is a slice of one preallocated arena (one allocation, so the
pages are faulted in once, not once per column), planes live in one scratch
buffer, and every operation writes straight into its output (``out=``): no
temporary array per leaf.
"""
from __future__ import annotations

import array
import struct

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


def _groups(plan: Plan):
    """Gathers that run as one structured copy: same source, same size; from the input first."""
    groups = {}
    for g in plan.gathers:
        groups.setdefault((g.source is not None, g.source or 0, -g.size), []).append(g)
    return sorted(groups.items())


def _struct(np, width: int, offsets, itemsize: int, order: str = "<"):
    names = [f"f{i}" for i in range(len(offsets))]
    return np.dtype({"names": names, "formats": [f"{order}u{width}"] * len(offsets), "offsets": list(offsets),
                     "itemsize": itemsize})


def decode_numpy(np, plan: Plan, raw, count: int, buffers: Buffers | None = None):
    """Columns (NumPy arrays, views into one arena) of ``count`` records in ``raw`` (uint8)."""
    if buffers is None or not buffers.fits(plan, count):
        buffers = Buffers(np, plan, count)
    arena, slots = buffers.arena, buffers.slots
    # slots hold little-endian values whatever the host, so a byte offset inside one
    # means the same thing as in the record (and costs nothing on a little-endian host)
    columns = [arena[at:at + count * c.itemsize].view(f"<{c.dtype}") for at, c in zip(slots, plan.columns)]
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
                             dtype=_struct(np, width, [g.offset for g in part], stride))
            dst = np.ndarray((count,), buffer=arena, offset=base, strides=(width,),
                             dtype=_struct(np, width, [slots[g.dest] - base for g in part],
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
