"""How to pull every leaf of one class out of an array of records, worked out once per class.

Leaves are grouped by storage unit (the ``UINT`` that holds a run of bitfields, the
``SIZE_T`` of a plain member).  The NumPy engine refines units into byte *windows*:
the smallest 1, 2, 4 or 8 bytes of a unit that hold a bitfield.  Every window and
every plain member is gathered out of the records once (one structured copy per
size, which walks the input once, in cache-sized blocks); each bitfield is then
cut from its contiguous window, 8, 4 or 2 records per 64-bit shift-and-mask when
its column is as wide as its window ("SWAR"), or with one narrowing cast when it
straddles a byte boundary (a 5-bit id across two bytes).
"""
from __future__ import annotations

from functools import lru_cache

from .._records import dataclass


def narrowest(width: int) -> int:
    """Bytes of the narrowest unsigned integer that holds ``width`` bits."""
    for size in (1, 2, 4, 8):
        if width <= size * 8:
            return size
    raise ValueError(f"a {width}-bit leaf is wider than 64 bits")


@dataclass(frozen=True)
class Column:
    path: str
    itemsize: int
    signed: bool

    @property
    def dtype(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.itemsize}"


@dataclass(frozen=True)
class UnitLeaf:
    column: int
    bit: int
    width: int


@dataclass(frozen=True)
class Unit:
    """One storage unit and every leaf stored in it (union arms share units)."""

    offset: int
    size: int
    leaves: tuple


@dataclass(frozen=True)
class Window:
    """``size`` bytes at ``offset`` of every record, made contiguous in a scratch slot."""

    offset: int
    size: int


# A *slot* is a contiguous array of one value per record: slots 0..C-1 are the
# columns, slots C.. the windows.


@dataclass(frozen=True)
class Gather:
    """Copy ``size`` bytes at ``offset`` of each element of ``source`` into slot ``dest``.

    ``source`` None means the records themselves (a pass over the input); otherwise
    it is a slot already gathered (a pass over that contiguous column only).
    """

    source: int | None
    offset: int
    size: int
    dest: int


@dataclass(frozen=True)
class Swar:
    """A bitfield cut from a slot as wide as its column: ``(w >> shift) & mask`` on 64-bit words."""

    column: int
    source: int
    shift: int
    mask: int  # the field's mask repeated in every lane of a uint64; 0 when the field is the whole lane
    lane: int


@dataclass(frozen=True)
class Narrow:
    """A bitfield from a wider slot: shift, cast to the column's dtype, mask."""

    column: int
    source: int
    shift: int
    mask: int  # 0: no mask needed


@dataclass(frozen=True, eq=False)  # one plan per layout (cached): compared and hashed by identity, in O(1)
class Plan:
    type_name: str
    label: str
    record_size: int
    columns: tuple
    units: tuple
    windows: tuple
    gathers: tuple
    swars: tuple
    narrows: tuple
    names: tuple = ()  # the columns' paths, in order (the keys of every Columns of this plan)

    @property
    def column_bytes(self) -> int:
        """Bytes of output per record: the sum of the columns' item sizes."""
        return sum(c.itemsize for c in self.columns)

    def slot_size(self, slot: int) -> int:
        n = len(self.columns)
        return self.columns[slot].itemsize if slot < n else self.windows[slot - n].size


def _repeat(mask: int, lane: int) -> int:
    return sum(mask << (8 * lane * i) for i in range(8 // lane))


def _window(bit: int, width: int, unit: int, at_least: int):
    """(byte, size, shift) of the smallest window of ``unit`` that holds the field."""
    for size in (1, 2, 4, 8):
        if size < at_least or size > unit:
            continue
        byte = min(bit // 8, unit - size)
        shift = bit - 8 * byte
        if shift + width <= 8 * size:
            return byte, size, shift
    raise AssertionError(f"no window of a {unit}-byte unit holds bits {bit}..{bit + width - 1}")


@lru_cache(maxsize=None)
def plan_for(layout) -> Plan:
    """The plan of a TypeLayout (worked out once per layout)."""
    columns, units = [], {}
    for leaf in layout.leaves:
        full = leaf.bit_offset == 0 and leaf.bit_width == leaf.size * 8
        # ctypes reads every bitfield unsigned (its fields are c_uintN), so only a
        # plain member keeps its C signedness
        signed = leaf.signed and not leaf.is_bitfield
        itemsize = leaf.size if full else narrowest(leaf.bit_width)
        columns.append(Column(leaf.path, itemsize, signed))
        units.setdefault((leaf.offset, leaf.size), []).append((len(columns) - 1, leaf, full))
    unit_list = tuple(Unit(o, n, tuple(UnitLeaf(c, leaf.bit_offset, leaf.bit_width) for c, leaf, _f in members))
                      for (o, n), members in units.items())

    windows, gathers, swars, narrows = [], [], [], []
    primaries = []  # (offset, size, slot): the byte ranges read from the input, none inside another
    known = {}  # (offset, size) -> a slot holding exactly those bytes

    def container(offset, size):
        for p in primaries:
            if p[0] <= offset and offset + size <= p[0] + p[1]:
                return p
        return None

    def new_window(offset, size) -> int:
        windows.append(Window(offset, size))
        return len(columns) + len(windows) - 1

    # 1. the widest units first: each one not inside another is read from the input once,
    #    into a column that is a copy of it when there is one
    for (offset, size) in sorted(units, key=lambda u: (-u[1], u[0])):
        if container(offset, size) is None:
            fulls = [c for c, _leaf, full in units[(offset, size)] if full]
            slot = fulls[0] if fulls else new_window(offset, size)
            primaries.append((offset, size, slot))
            known[(offset, size)] = slot
            gathers.append(Gather(None, offset, size, slot))

    def slot_for(offset, size, dest=None) -> int:
        """A slot holding bytes [offset, offset+size) of every record, gathered from its primary."""
        if (offset, size) in known and dest is None:
            return known[(offset, size)]
        p = container(offset, size)
        slot = dest if dest is not None else new_window(offset, size)
        gathers.append(Gather(p[2], offset - p[0], size, slot))
        known.setdefault((offset, size), slot)
        return slot

    # 2. every other leaf comes from the contiguous slot of its primary, never the input again
    for (offset, size), members in units.items():
        for column, leaf, full in members:
            if full:
                if known.get((offset, size)) != column:
                    p = container(offset, size)
                    if (p[0], p[1]) == (offset, size):  # a union's second full member: the same bytes of the
                        # input, read in the same pass as the first (a copy of its slot is a call more)
                        gathers.append(Gather(None, offset, size, column))
                    else:
                        slot_for(offset, size, dest=column)
                continue
            byte, width, shift = _window(leaf.bit_offset, leaf.bit_width, size, columns[column].itemsize)
            source = slot_for(offset + byte, width)
            lane = columns[column].itemsize
            if lane == width:
                # a shift moves the next lane's low bits into this lane's top: always
                # mask, unless the field is the whole lane
                whole = shift == 0 and leaf.bit_width == 8 * lane
                swars.append(Swar(column, source, shift, 0 if whole else _repeat((1 << leaf.bit_width) - 1, lane),
                                  lane))
            else:
                needs_mask = shift + leaf.bit_width < 8 * width and leaf.bit_width < 8 * lane
                narrows.append(Narrow(column, source, shift, (1 << leaf.bit_width) - 1 if needs_mask else 0))
    return Plan(layout.c_name, layout.label, layout.size, tuple(columns), unit_list, tuple(windows),
                tuple(gathers), tuple(swars), tuple(narrows), tuple(c.path for c in columns))
