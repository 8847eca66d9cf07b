"""MSVC layout of the table's types for one target, and the leaves that come of it.

The layout is computed here with MSVC's rules, independent of the host; the ctypes
classes are then built to match it and checked against it (see types.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import _spec
from ._spec.base import POINTER_SIZE, SCALARS
from ._spec.model import Bits, If, Record


@dataclass(frozen=True)
class Scalar:
    name: str
    ctype: str  # C spelling: UINT, SIZE_T, VOID*, DXGK_PAGESIZE
    size: int
    signed: bool
    offset: int
    count: int | None = None


@dataclass(frozen=True)
class BitField:
    name: str
    ctype: str
    size: int  # storage unit bytes
    offset: int  # storage unit byte offset
    bit: int
    width: int


@dataclass(frozen=True)
class Nested:
    """A member of record type: an inline record (``type_name`` None) or a typedef."""

    name: str | None  # None: anonymous
    record: "RecordLayout"
    offset: int
    type_name: str | None = None


@dataclass(frozen=True)
class RecordLayout:
    kind: str
    members: tuple
    size: int
    align: int
    c_name: str | None = None  # typedef name, None for inline records


@dataclass(frozen=True)
class Leaf:
    """One addressable value: where it lives and what C type holds it.

    ``offset`` is the byte offset of the storage unit; ``bit_offset``/``bit_width``
    place the value inside it, counting from its least significant bit.
    """

    path: str
    offset: int
    bit_offset: int
    bit_width: int
    c_type: str
    size: int
    is_bitfield: bool
    signed: bool

    @property
    def mask(self) -> int:
        """The leaf's bits within its little-endian storage unit."""
        return ((1 << self.bit_width) - 1) << self.bit_offset

    @property
    def max_value(self) -> int:
        return (1 << (self.bit_width - 1)) - 1 if self.signed else (1 << self.bit_width) - 1

    @property
    def min_value(self) -> int:
        return -(1 << (self.bit_width - 1)) if self.signed else 0


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def active_members(members, abi: str, version: int):
    """The members the preprocessor keeps for this target, ``#if`` nodes resolved."""
    for m in members:
        if isinstance(m, If):
            yield from active_members(m.then if m.cond.holds(abi, version) else m.otherwise, abi, version)
        else:
            yield m


def resolve_type_name(ctype: str) -> str:
    return _spec.ALIASES.get(ctype, ctype)


def _scalar_info(ctype: str, abi: str):
    """(size, signed) for a non-record C type, or None when it names a record."""
    if ctype.endswith("*"):
        return POINTER_SIZE[abi], False
    if ctype in SCALARS:
        size, signed = SCALARS[ctype]
        return (POINTER_SIZE[abi] if size == "ptr" else size), signed
    if ctype in _spec.ENUMS:
        return 4, True  # an MSVC enum is an int
    return None


@lru_cache(maxsize=None)
def typedef_layout(name: str, abi: str, version: int) -> RecordLayout:
    td = _spec.TYPEDEFS[resolve_type_name(name)]
    return _record(td.kind, td.members, abi, version, td.name)


def _member_layout(m, abi, version):
    """(size, align, builder(offset)) of one non-bitfield member."""
    if isinstance(m, Record):
        rec = _record(m.kind, m.members, abi, version, None)
        return rec.size, rec.align, lambda off: Nested(m.name, rec, off)
    info = _scalar_info(m.ctype, abi)
    if info is None:
        rec = typedef_layout(m.ctype, abi, version)
        return rec.size, rec.align, lambda off: Nested(m.name, rec, off, type_name=m.ctype)
    size, signed = info
    count = m.count or 1
    return size * count, size, lambda off: Scalar(m.name, m.ctype, size, signed, off, m.count)


def _record(kind: str, members, abi: str, version: int, c_name) -> RecordLayout:
    out = []
    offset = 0
    align = 1
    unit = None  # (offset, size, bits used) of the open bitfield storage unit
    for m in active_members(members, abi, version):
        if isinstance(m, Bits):
            size, _signed = _scalar_info(m.ctype, abi)
            if kind == "union":
                unit = None
            if unit is not None and unit[1] == size and unit[2] + m.width <= size * 8:
                out.append(BitField(m.name, m.ctype, size, unit[0], unit[2], m.width))
                unit = (unit[0], size, unit[2] + m.width)
            else:
                start = 0 if kind == "union" else _align_up(offset, size)
                out.append(BitField(m.name, m.ctype, size, start, 0, m.width))
                unit = (start, size, m.width)
                offset = max(offset, start + size)
            align = max(align, size)
            continue
        unit = None
        size, malign, build = _member_layout(m, abi, version)
        start = 0 if kind == "union" else _align_up(offset, malign)
        out.append(build(start))
        offset = max(offset, start + size)
        align = max(align, malign)
    return RecordLayout(kind, tuple(out), _align_up(offset, align), align, c_name)


def record_leaves(rec: RecordLayout, prefix: str = "", base: int = 0):
    """Every leaf of a record, depth first in declaration order; unions give every arm."""
    for m in rec.members:
        if isinstance(m, BitField):
            yield Leaf(prefix + m.name, base + m.offset, m.bit, m.width, m.ctype, m.size, True, False)
        elif isinstance(m, Scalar):
            if m.count is None:
                yield Leaf(prefix + m.name, base + m.offset, 0, m.size * 8, m.ctype, m.size, False, m.signed)
            else:
                for i in range(m.count):
                    yield Leaf(f"{prefix}{m.name}[{i}]", base + m.offset + i * m.size, 0, m.size * 8,
                               m.ctype, m.size, False, m.signed)
        else:
            sub = prefix if m.name is None else f"{prefix}{m.name}."
            yield from record_leaves(m.record, sub, base + m.offset)
