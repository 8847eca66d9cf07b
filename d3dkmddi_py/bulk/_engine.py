"""The ways to run a Plan: NumPy (the fast path), NumPy for a few records (``decode_small``: a
call's fixed cost, not its records, dominates there), and the standard library (the fallback).

NumPy: every column and window is a row of one preallocated arena (one allocation, so the pages
are faulted in once, not once per column), and every operation writes straight into its output
(``out=``): no temporary array per leaf.  Rows of one width form a bank, so one call serves many
leaves: a call's fixed cost (~1 us) grows with the plan's sources and masks, not with its leaves.
"""
from __future__ import annotations

import array
import struct
from functools import lru_cache

from ._plan import Plan

_ALIGN = 64  # every row starts on a cache line, and has room for whole uint64 words
_WORD = "<u8"


def _round(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


_MAX_SPAN = (1 << 31) - 1  # a structured dtype's itemsize is a C int in NumPy 1.x
# Words in a row from which bitfields are cut a row per call (shifted and masked while the row is in
# cache) rather than a block of rows per call: below it a call costs more than its words (a broadcast
# operand takes NumPy's slower loop); measured crossover between 12,500 and 37,500 words.
_ROW_BY_ROW = 1 << 14
# Words in a row up to which the bitfields of a bank are cut in two calls over all its rows (a gather
# of their sources, a column of shifts, a column of masks) rather than a call per run of sources and of
# masks: below it a call costs more than its words.  Measured with tools/bench_bulk.py.
_SHORT_ROWS = 1 << 9
_CLASSES_BELOW = 1 << 16  # records; from here a new length's dtypes cost under a sixth of the decode


class _Program:
    """How ``decode_numpy`` runs a plan, worked out once per plan.

    The slots (columns and windows) of one byte width are the rows of one *bank*, a 2-D block of
    the arena, so that a step over many slots is one NumPy call over a block of rows: one structured
    copy per (source bank, width), one shift per run of sources for every bitfield cut from them, one
    mask per run of rows sharing it, and one view per dtype for the columns.  Rows of a bank: signed
    columns, unsigned columns, the bitfields cut whole-lane from a slot of their width (by source),
    then the windows.
    """

    __slots__ = ("widths", "rows", "gathers", "swars", "narrows", "outputs", "order")

    def __init__(self, np, plan: Plan):
        n = len(plan.columns)
        # a bitfield's row: by source, so one shift serves a block of rows; within a source by mask,
        # ascending and descending in turn, so that runs of one mask join across sources
        swar_of, turn = {op.column: op for op in plan.swars}, {}
        for i, (lane, source) in enumerate(sorted({(op.lane, op.source) for op in plan.swars})):
            turn[lane, source] = i % 2
        banks = {}
        for slot, c in enumerate(plan.columns):
            op = swar_of.get(slot)
            if op is None:
                key = (0,) if c.signed else (1,)
            else:
                key = (2, op.source, -op.mask if turn[op.lane, op.source] else op.mask)
            banks.setdefault(c.itemsize, []).append((key, slot))
        for i, w in enumerate(plan.windows):
            banks.setdefault(w.size, []).append(((3,), n + i))
        self.widths = tuple(sorted(banks))
        self.rows = tuple(tuple(slot for _key, slot in sorted(banks[w])) for w in self.widths)
        where = {slot: (b, r) for b, slots in enumerate(self.rows) for r, slot in enumerate(slots)}

        # gathers: one structured copy per (source bank, width); its fields reach into every row of
        # both banks (a source element is a record, or a value of one width).  A copy inside one bank
        # (a union's second full member) stays per source row: NumPy copies a source that overlaps
        # its destination first, and a source spanning many rows would be a large copy
        groups = {}
        for g in plan.gathers:
            bank, row = where[g.dest]
            src_bank, src_row = (None, 0) if g.source is None else where[g.source]
            own = src_row if src_bank == bank else -1
            groups.setdefault((src_bank is not None, src_bank or 0, own, -g.size),
                              (src_bank, g.size, bank, []))[3].append((row, src_row, g.offset))
        self.gathers = tuple((src_bank, plan.record_size if src_bank is None else self.widths[src_bank], width, bank,
                              tuple(sorted(items)))
                             for _key, (src_bank, width, bank, items) in sorted(groups.items()))

        # bitfields as wide as their column: per lane, one right shift per source row into the block
        # of rows cut from it (broadcast), then one mask per run of rows with the same mask (a scalar
        # over a contiguous block: three times as fast as a column of masks); and the same as one
        # shift and one mask per row, for rows long enough that a call per row costs nothing
        self.swars = []
        for b, w in enumerate(self.widths):
            ops = sorted((where[op.column][1], op) for op in plan.swars if op.lane == w)
            if not ops:
                continue
            sources, masks = {}, []
            for row, op in ops:
                sources.setdefault(where[op.source][1], []).append((row, op.shift))
                if op.mask and masks and masks[-1][0] == op.mask and masks[-1][2] == row:
                    masks[-1][2] = row + 1
                elif op.mask:  # 0: the field is the whole lane
                    masks.append([op.mask, row, row + 1])
            # consecutive sources with as many rows each: one shift, broadcast over (source, row, word)
            runs = []
            for src, rs in sorted(sources.items()):
                last = runs[-1] if runs else None
                if last and last[0] + last[1] == src and last[3] == len(rs) and last[2] + last[1] * last[3] == rs[0][0]:
                    last[1] += 1
                    last[4].append([s for _r, s in rs])
                else:
                    runs.append([src, 1, rs[0][0], len(rs), [[s for _r, s in rs]]])
            shifts = tuple((src, k, a, r, np.array(by, dtype=np.uint64)[:, :, None]) for src, k, a, r, by in runs)
            rows = tuple((where[op.source][1], row, np.uint64(op.shift), np.uint64(op.mask)) for row, op in ops)
            # for short rows, where a call costs more than its words: every row's source gathered in one
            # step, shifted by a column of shifts, then masked by a column of masks (all ones where the
            # field is the whole lane); the rows cut from a slot are consecutive
            first = ops[0][0]
            assert [row for row, _op in ops] == list(range(first, first + len(ops)))
            short = (first, first + len(ops), np.array([where[op.source][1] for _row, op in ops], dtype=np.intp),
                     np.array([op.shift for _row, op in ops], dtype=np.uint64)[:, None],
                     np.array([op.mask or (1 << 64) - 1 for _row, op in ops], dtype=np.uint64)[:, None])
            self.swars.append((b, w, tuple((np.uint64(m), a, z) for m, a, z in masks), shifts, rows, short))
        self.narrows = tuple((*where[op.source], plan.slot_size(op.source), np.dtype(f"<u{plan.slot_size(op.source)}"),
                              *where[op.column], plan.columns[op.column].itemsize,
                              np.dtype(f"<{plan.columns[op.column].dtype}"), op.shift, op.mask)
                             for op in plan.narrows)

        # the columns: one view per run of rows of one dtype, then put back in the plan's order
        self.outputs, position = [], {}
        for b, (w, slots) in enumerate(zip(self.widths, self.rows)):
            columns = [s for s in slots if s < n]
            for r, slot in enumerate(columns):
                position[slot] = len(position)
                if r == 0 or plan.columns[slot].dtype != plan.columns[columns[r - 1]].dtype:
                    self.outputs.append([b, r, r + 1, w, np.dtype(f"<{plan.columns[slot].dtype}")])
                else:
                    self.outputs[-1][2] = r + 1
        self.outputs = tuple(map(tuple, self.outputs))
        self.order = tuple(position[slot] for slot in range(n))


@lru_cache(maxsize=None)  # per plan (plans are cached per layout, and hash by identity)
def _program(np, plan: Plan) -> _Program:
    return _Program(np, plan)


def _lengths(program: _Program, count: int) -> tuple:
    """Each bank's row length for ``count`` records: whole cache lines, and below ``_CLASSES_BELOW``
    records the count rounded up to one of 16 sizes an octave (at most 1/16 more), so that the
    structured dtypes worked out for one length (~4 us each) serve every count near it."""
    if count < _CLASSES_BELOW:
        step = 1 << max(0, count.bit_length() - 5)
        count = -(-count // step) * step
    return tuple(_round(count * w) for w in program.widths)


class Buffers:
    """One arena for every column and window slot of a decode, reusable by a later decode of the same
    plan with at most ``capacity`` records.

    A bank's rows are as long as the decode's count needs (``_lengths``), one after the other, so every
    block of rows is contiguous: a NumPy call over a contiguous block runs as one flat loop, up to three
    times as fast as over rows with gaps.  ``shape(count)`` lays the banks out for a count.
    """

    __slots__ = ("plan", "capacity", "arena", "count", "banks", "words", "copies")

    def __init__(self, np, plan: Plan, capacity: int):
        self.plan, self.capacity, self.count = plan, capacity, None
        program = _program(np, plan)
        lengths = _lengths(program, capacity)
        self.arena = np.empty(sum(len(rows) * length for rows, length in zip(program.rows, lengths)), dtype=np.uint8)

    def fits(self, plan: Plan, count: int) -> bool:
        return self.plan is plan and count <= self.capacity

    def shape(self, np, count: int) -> Buffers:
        """Lay the banks out for ``count`` records (kept until a call with another count)."""
        if count != self.count:
            places, self.copies = _geometry(np, self.plan, _lengths(_program(np, self.plan), count))
            arena = self.arena
            self.banks = [np.ndarray((rows, length), np.uint8, arena, at) for at, rows, length in places]
            self.words = [np.ndarray((rows, length >> 3), _WORD, arena, at) for at, rows, length in places]
            self.count = count
        return self


@lru_cache(maxsize=4096)  # a plan has at most 16 lengths an octave below _CLASSES_BELOW
def _geometry(np, plan: Plan, lengths: tuple):
    """For banks whose rows are ``lengths`` bytes: each bank's (offset, rows, row length), and every
    structured copy as (from the input or the arena, source offset, source stride, source dtype,
    destination offset, width, destination dtype)."""
    program = _program(np, plan)
    places, at = [], 0
    for rows, length in zip(program.rows, lengths):
        places.append((at, len(rows), length))
        at += len(rows) * length
    copies = []
    for src_bank, stride, width, bank, items in program.gathers:
        src_base, src_length = (0, 0) if src_bank is None else places[src_bank][::2]
        base, length = places[bank][0], lengths[bank]
        part = []
        for item in items + (None,):
            if part and (item is None or not _fits(part + [item], src_length, length, width)):
                src = [r * src_length + offset for _row, r, offset in part]
                low = min(src)
                copies.append((src_bank is None, src_base + low, stride,
                               _struct(np, width, tuple(at - low for at in src), max(src) - low + width),
                               base + part[0][0] * length, width,
                               _struct(np, width, tuple((row - part[0][0]) * length for row, _r, _o in part),
                                       (part[-1][0] - part[0][0]) * length + width)))
                part = []
            part.append(item)
    return tuple(places), tuple(copies)


@lru_cache(maxsize=4096)
def _struct(np, width: int, offsets: tuple, itemsize: int, order: str = "<"):
    names = [f"f{i}" for i in range(len(offsets))]
    return np.dtype({"names": names, "formats": [f"{order}u{width}"] * len(offsets), "offsets": list(offsets),
                     "itemsize": itemsize})


# Up to these many cells (records times columns) a plan's 10-40 NumPy calls cost more than the work, and
# ``decode_small`` takes the records: one as one Python int, more as one word each when a record is one
# (1, 2, 4 or 8 bytes: every column shifted and masked in the record's width at once, ~5 calls), else as
# one 8-byte window a column (~15 calls, 8 bytes a cell).  A one-word record whose one-bit fields each
# have their own bit has them cut from byte rows from ``WORD_BITS_FROM`` records on (eight one-byte
# columns a call, a quarter of the bytes the word's width writes), and stays on this path up to
# ``SMALL_BITS_RECORDS``.  Measured with tools/bench_bulk.py: the paths cross at about 80,000 records
# for DXGK_SEGMENTFLAGS (at 2,000 without the byte rows) and 50 for DXGK_ALLOCATIONINFO (5,500 cells).
SMALL_CELLS = 5_000
SMALL_WORD_CELLS = 40_000
SMALL_BITS_RECORDS = 60_000
WORD_BITS_FROM = 800


@lru_cache(maxsize=None)
def small_records(np, plan: Plan) -> int:
    """The most records ``decode_small`` takes for ``plan`` (0: none, where a field fits no window)."""
    windows = _small_plan(np, plan)[2]
    if windows is None:
        return 0
    if not isinstance(windows[0], np.dtype):
        return max(1, SMALL_CELLS // len(plan.columns))
    if _word_bits(np, plan) is not None:
        return SMALL_BITS_RECORDS
    return max(1, SMALL_WORD_CELLS // len(plan.columns))


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
    if plan.record_size in (1, 2, 4, 8):  # the record is one word: read in place, shifted in its own width
        word = np.dtype(f"<u{plan.record_size}")
        windows = (word, np.array([bits[i][0] for i in order], dtype=word)[:, None],
                   np.array([(1 << bits[i][1]) - 1 for i in order], dtype=word)[:, None])
    elif plan.record_size <= 8:  # the whole record is one window: no gather
        windows = (None, np.array([bits[i][0] for i in order], dtype=np.uint64), masks)
    elif all(bit % 8 + width <= 64 for bit, width in bits.values()):
        windows = (np.array([bits[i][0] // 8 + k for i in order for k in range(8)], dtype=np.intp),
                   np.array([bits[i][0] % 8 for i in order], dtype=np.uint64), masks)
    parts, start = [], 0
    for dtype, unsigned, columns in groups:
        parts.append((unsigned, start, start + len(columns), None if dtype == unsigned else dtype))
        start += len(columns)
    at = {column: i for i, column in enumerate(order)}
    return tuple(groups), reads, windows, tuple(parts), tuple(at[column] for column in range(len(plan.columns)))


@lru_cache(maxsize=None)
def _word_bits(np, plan: Plan):
    """For a record of one word whose one-bit fields lie each at its own bit: (first byte, bytes, the word's
    dtype, the other columns' groups as (unsigned dtype, first row, stop, signed dtype or None) with their
    shifts and masks in the word's width, the row of every column among the bits block's rows (bit by
    bit, byte by byte in each) and then the groups', the shifts 0 to 7); else None."""
    word = _small_plan(np, plan)[2][0]
    ones, others = {}, []
    for unit in plan.units:
        for leaf in unit.leaves:
            if leaf.width == 1:
                at = 8 * unit.offset + leaf.bit
                if at in ones:
                    return None  # two union arms on one bit: the plain word path
                ones[at] = leaf.column
            else:
                others.append((leaf.column, 8 * unit.offset + leaf.bit, leaf.width))
    if not ones:
        return None
    low, high = min(ones) // 8, max(ones) // 8
    nbytes = high - low + 1
    position = {column: (at - 8 * low) % 8 * nbytes + (at - 8 * low) // 8 for at, column in ones.items()}
    by_dtype, groups, base, shifts, masks = {}, [], 8 * (high - low + 1), [], []
    for column, bit, width in others:
        by_dtype.setdefault(plan.columns[column].dtype, []).append((column, bit, width))
    for dtype, members in by_dtype.items():
        unsigned = np.dtype(f"<u{dtype[1:]}")
        groups.append((unsigned, len(shifts), len(shifts) + len(members),
                       None if unsigned == np.dtype(f"<{dtype}") else np.dtype(f"<{dtype}")))
        for column, bit, width in members:
            position[column] = base + len(shifts)
            shifts.append(bit)
            masks.append((1 << width) - 1)
    return (low, high - low + 1, word, tuple(groups), np.array(shifts, dtype=word)[:, None],
            np.array(masks, dtype=word)[:, None], tuple(position[i] for i in range(len(plan.columns))),
            np.arange(8, dtype=np.uint8)[:, None])


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
    """The matrices of a small call (one per dtype group, unsigned, rows are columns; or with ``bits``
    the byte rows, the one-bit rows and a matrix per other group), reusable by a later small call of the
    same plan and way with at most ``capacity`` records."""

    __slots__ = ("plan", "capacity", "matrices", "bits")

    def __init__(self, plan: Plan, capacity: int, matrices: list, bits: bool = False):
        self.plan, self.capacity, self.matrices, self.bits = plan, capacity, matrices, bits

    def fits(self, plan: Plan, count: int, bits: bool = False) -> bool:
        return self.plan is plan and count <= self.capacity and self.bits == bits


def decode_small(np, plan: Plan, raw, count: int, buffers: SmallBuffers | None = None):
    """The columns ``decode_numpy`` gives (same values, dtypes and order) for a few records, and
    their SmallBuffers: each column is a row of a (columns, records) matrix per dtype."""
    size = plan.record_size
    groups, reads, windows, parts, order = _small_plan(np, plan)
    if windows is None:
        return decode_numpy(np, plan, raw, count)
    index, shifts, masks = windows
    word = isinstance(index, np.dtype)
    if word and _word_bits(np, plan) is not None:  # the byte rows from WORD_BITS_FROM records, and at any
        # count into the memory of a call that took them
        if buffers is not None and buffers.fits(plan, count, True):
            return _decode_word_bits(np, plan, raw, count, buffers)
        if count >= WORD_BITS_FROM:
            return _decode_word_bits(np, plan, raw, count, None)
    if buffers is not None and not buffers.fits(plan, count):
        buffers = None  # another way's or too few records': new matrices
    if count == 1 and buffers is None:  # the record as one int, every value by Python, one struct call
        packer, offsets = _one_record(np, plan)
        value = int.from_bytes(bytes(raw[:size]), "little")
        arena = bytearray(packer.size)
        packer.pack_into(arena, 0, *[(value >> shift) & mask for shift, mask in reads])
        matrices = [np.ndarray((stop - start, 1), unsigned, arena, at)
                    for (unsigned, start, stop, _signed), at in zip(parts, offsets)]
        buffers = SmallBuffers(plan, 1, matrices)
    else:
        if word:  # (columns, records) at once, each row contiguous: ~5 NumPy calls in all
            values = np.ndarray((count,), index, raw, 0, (size,)) >> shifts
            np.bitwise_and(values, masks, out=values)
        else:  # each value from an 8-byte window of its record, zeros after each record (a window may run
            # past the record's end): ~15 NumPy calls in all
            padded = np.zeros((count, 8 if index is None else size + 8), dtype=np.uint8)
            padded[:, :size] = np.asarray(raw[:count * size]).reshape(count, size)
            words = padded.view("<u8") if index is None else np.take(padded, index, axis=1).view("<u8")
            values = ((words >> shifts) & masks).T
        if buffers is None:  # each row one contiguous column
            matrices = [values[start:stop].astype(unsigned, order="C") for unsigned, start, stop, _s in parts]
            buffers = SmallBuffers(plan, count, matrices)
        else:
            matrices = buffers.matrices
            if matrices[0].shape[1] != count:
                matrices = [matrix[:, :count] for matrix in matrices]
            for (_unsigned, start, stop, _signed), matrix in zip(parts, matrices):
                np.copyto(matrix, values[start:stop], casting="unsafe")  # unsigned: modulo the width
    rows = []
    for (_unsigned, _start, _stop, signed), matrix in zip(parts, matrices):
        rows.extend(matrix if signed is None else matrix.view(signed))
    return [rows[at] for at in order], buffers


def _decode_word_bits(np, plan: Plan, raw, count: int, buffers):
    """``decode_small`` for one-word records from ``WORD_BITS_FROM`` records: the bytes that hold one-bit
    fields copied as rows, every bit of them shifted out at once (eight one-byte rows a byte) and
    masked, a quarter of the bytes the word's width writes; the other columns from the word."""
    low, nbytes, word, groups, shifts, masks, order, eight = _word_bits(np, plan)
    size = plan.record_size
    if buffers is not None:  # the same memory, each matrix laid out again for ``count`` (contiguous)
        matrices = buffers.matrices
        if matrices[0].shape[1] != count:
            matrices = [np.ndarray((matrix.shape[0], count), matrix.dtype, matrix) for matrix in matrices]
    else:
        matrices = [np.empty((nbytes, count), np.uint8), np.empty((8 * nbytes, count), np.uint8)]
        matrices += [np.empty((stop - start, count), unsigned) for unsigned, start, stop, _signed in groups]
        buffers = SmallBuffers(plan, count, matrices, True)
    held, bits = matrices[0], matrices[1]
    np.copyto(held, np.ndarray((nbytes, count), np.uint8, raw, low, (1, size)))
    flat = bits.reshape(8, nbytes * count)  # row (bit, byte): every byte's bit b in one call's inner loop
    np.right_shift(held.reshape(1, nbytes * count), eight, out=flat)
    np.bitwise_and(flat, 1, out=flat)
    rows = list(bits)
    if groups:
        values = np.ndarray((count,), word, raw, 0, (size,)) >> shifts
        np.bitwise_and(values, masks, out=values)
        for (_unsigned, start, stop, signed), matrix in zip(groups, matrices[2:]):
            np.copyto(matrix, values[start:stop], casting="unsafe")  # unsigned: the mask kept each whole
            rows.extend(matrix if signed is None else matrix.view(signed))
    return [rows[at] for at in order], buffers


def decode_numpy(np, plan: Plan, raw, count: int, buffers: Buffers | None = None):
    """Columns (NumPy arrays, rows of the arena's banks) of ``count`` records in ``raw`` (uint8)."""
    if buffers is None or not buffers.fits(plan, count):
        buffers = Buffers(np, plan, count)
    program, arena = _program(np, plan), buffers.arena
    banks, words = buffers.shape(np, count).banks, buffers.words
    if count:
        # 1. gathers: one structured copy per (source bank, width).  The destination's elements
        #    overlap (stride ``width``, a field per row), which turns records into columns; NumPy walks
        #    the source once, in cache-sized blocks.  Rows hold little-endian values whatever the host, so
        #    a byte offset inside one means what it means in the record.
        for from_input, src_at, stride, src_dtype, dst_at, width, dst_dtype in buffers.copies:
            src = np.ndarray((count,), src_dtype, raw if from_input else arena, src_at, (stride,))
            np.copyto(np.ndarray((count,), dst_dtype, arena, dst_at, (width,)), src)
        # 2. bitfields as wide as their column, 8, 4 or 2 per 64-bit word, over whole rows (the words
        #    past the count are scratch): a block of rows per call, or for long rows a row per call
        for bank, _lane, masks, shifts, one_by_one, (first, stop, sources, by, cut) in program.swars:
            block = words[bank]
            if block.shape[1] <= _SHORT_ROWS:
                out = block[first:stop]
                np.right_shift(block[sources], by, out=out)
                np.bitwise_and(out, cut, out=out)
            elif block.shape[1] < _ROW_BY_ROW:
                for source, k, a, r, by in shifts:
                    np.right_shift(block[source:source + k, None], by, out=block[a:a + k * r].reshape(k, r, -1))
                for mask, a, b in masks:
                    np.bitwise_and(block[a:b], mask, out=block[a:b])
            else:
                for source, row, by, mask in one_by_one:
                    np.right_shift(block[source], by, out=block[row])
                    if mask:
                        np.bitwise_and(block[row], mask, out=block[row])
        # 3. bitfields narrower than their window: shift, cast, mask
        for src_bank, src_row, src_width, src_dtype, bank, row, itemsize, dtype, shift, mask in program.narrows:
            source = banks[src_bank][src_row, :count * src_width].view(src_dtype)
            out = banks[bank][row, :count * itemsize].view(dtype)
            if shift:
                np.right_shift(source, shift, out=out, casting="unsafe")
            else:
                np.copyto(out, source, casting="unsafe")
            if mask:
                np.bitwise_and(out, mask, out=out)
    rows = []
    for bank, first, stop, width, dtype in program.outputs:
        rows.extend(banks[bank][first:stop, :count * width].view(dtype))
    return [rows[i] for i in program.order], buffers


def _fits(items: list, src_length: int, length: int, width: int) -> bool:
    """Whether one structured copy of ``items`` spans at most a C int of bytes on both sides."""
    src = [r * src_length + offset for _row, r, offset in items]
    return (max(src) - min(src) + width <= _MAX_SPAN
            and (items[-1][0] - items[0][0]) * length + width <= _MAX_SPAN)


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
