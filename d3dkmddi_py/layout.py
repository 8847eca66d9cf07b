"""MSVC layout of the table's types for one target, and the leaves that come of it.

The layout is computed here with MSVC's rules, independent of the host; the ctypes
classes are then built to match it and checked against it (see types.py).
"""
from __future__ import annotations

from functools import lru_cache

from ._records import dataclass, field, replace
from . import _spec
from ._spec.base import POINTER_SIZE, SCALARS
from ._spec.model import Bits, If, Record
from .names import target_label  # noqa: F401 (re-exported: layouts carry their label)
from .wording import noun, plural


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
    since: str | None = field(default=None, compare=False)  # the interface version that introduced it

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


# ------------------------------------------------------------------ the one scalar leaf reader
def read_leaf(data, leaf: Leaf) -> int:
    """A leaf's value from a record's little-endian bytes, as C reads it (signed members two's complement).

    Bitfields read unsigned, as the ctypes classes (c_uintN bitfields) read them.
    """
    unit = int.from_bytes(data[leaf.offset:leaf.offset + leaf.size], "little")
    if leaf.is_bitfield:
        return (unit >> leaf.bit_offset) & ((1 << leaf.bit_width) - 1)
    if leaf.signed and unit >> (leaf.bit_width - 1):
        return unit - (1 << leaf.bit_width)
    return unit


def write_leaf(buf: bytearray, leaf: Leaf, value: int) -> None:
    """Store ``value`` (already range-checked, or masked on purpose) into a leaf's bits in place."""
    mask = (1 << leaf.bit_width) - 1
    unit = int.from_bytes(buf[leaf.offset:leaf.offset + leaf.size], "little")
    unit = (unit & ~(mask << leaf.bit_offset)) | ((value & mask) << leaf.bit_offset)
    buf[leaf.offset:leaf.offset + leaf.size] = unit.to_bytes(leaf.size, "little")


# ------------------------------------------------------------------ the lines dt -r prints
@dataclass(frozen=True)
class Line:
    """One printed line of a struct: a leaf, an array, or the header of a nested member."""

    depth: int
    offset: int  # relative to the enclosing named member, as dt -r prints it
    name: str
    path: str  # the leaf path (or member prefix for headers), as leaves() spells it
    kind: str  # "Pos 3, 1 Bit", "UINT", "DXGK_SEGMENTBANKPREFERENCE"
    leaf: Leaf | None = None
    flags_of: tuple = ()  # for a flag word's Value: the (path, width) of its bitfields


def bits_text(bit: int, width: int) -> str:
    """A bitfield as ``dt`` prints it: ``Pos 3, 1 Bit``, ``Pos 0, 5 Bits``."""
    return f"Pos {bit}, {width} {noun(width, 'Bit')}"


def layout_lines(rec: RecordLayout, leaves_by_path: dict, depth: int = 0, prefix: str = "") -> list:
    """The dt -r lines of a record, anonymous unions and structs flattened."""
    out = []
    for m in rec.members:
        if isinstance(m, BitField):
            out.append(Line(depth, m.offset, m.name, prefix + m.name, bits_text(m.bit, m.width),
                            leaves_by_path[prefix + m.name]))
        elif isinstance(m, Scalar):
            if m.count is None:
                flags = _flag_siblings(rec, prefix) if m.name == "Value" and rec.kind == "union" else ()
                out.append(Line(depth, m.offset, m.name, prefix + m.name, m.ctype,
                                leaves_by_path[prefix + m.name], flags))
            else:
                out.append(Line(depth, m.offset, m.name, prefix + m.name, f"[{m.count}] {m.ctype}"))
                for i in range(m.count):
                    path = f"{prefix}{m.name}[{i}]"
                    out.append(Line(depth + 1, i * m.size, f"[{i}]", path, m.ctype, leaves_by_path[path]))
        elif isinstance(m, Nested):
            if m.name is None:
                sub = layout_lines(m.record, leaves_by_path, depth, prefix)
                out.extend(Line(s.depth, s.offset + m.offset if s.depth == depth else s.offset, s.name, s.path,
                                s.kind, s.leaf, s.flags_of) for s in sub)
            else:
                out.append(Line(depth, m.offset, m.name, prefix + m.name, m.type_name or m.record.kind))
                out.extend(layout_lines(m.record, leaves_by_path, depth + 1, f"{prefix}{m.name}."))
    return out


def _flag_siblings(union: RecordLayout, prefix: str) -> tuple:
    """The bitfields that share a union with ``Value`` (the flag-word idiom)."""
    out = []
    for m in union.members:
        if isinstance(m, Nested) and m.name is None and m.record.kind == "struct":
            out.extend((prefix + b.name, b.width) for b in m.record.members if isinstance(b, BitField))
    return tuple(out)


def _member_leaves(m, prefix: str) -> tuple:
    """The leaf paths of one member of a record (``prefix`` its record's)."""
    if isinstance(m, BitField):
        return (prefix + m.name,)
    if isinstance(m, Scalar):
        return (prefix + m.name,) if m.count is None else tuple(f"{prefix}{m.name}[{i}]" for i in range(m.count))
    return tuple(leaf.path for leaf in record_leaves(m.record, prefix if m.name is None else f"{prefix}{m.name}."))


@dataclass(frozen=True)
class Arm:
    """One member of a union, as a renderer names it: ``Alignment``, ``FlagsWddm2``, or the leaves of an
    anonymous struct (``MinimumPageSize/RecommendedPageSize``)."""

    name: str
    paths: tuple


def _arms(rec: RecordLayout, prefix: str, out: dict) -> dict:
    """Leaf path -> (its own member, the other members) of the innermost union it is in, for every union
    but the flag-word idiom (bitfields beside their ``Value``, which names them already)."""
    if rec.kind == "union" and not _flag_siblings(rec, prefix):
        arms = []
        for m in rec.members:
            paths = _member_leaves(m, prefix)
            arms.append(Arm("/".join(paths) if m.name is None else prefix + m.name, paths))
        for arm in arms:
            others = tuple(a for a in arms if a is not arm)
            out.update((path, (arm, others)) for path in arm.paths)
    for m in rec.members:
        if isinstance(m, Nested):
            _arms(m.record, prefix if m.name is None else f"{prefix}{m.name}.", out)
    return out


@lru_cache(maxsize=None)
def union_arms(layout: "TypeLayout") -> dict:
    """Leaf path -> (its Arm, the other Arms of its union): the members that share its bytes (Alignment
    and MinimumPageSize/RecommendedPageSize; QuadPart and LowPart/HighPart), for a renderer to say which
    member a value is read as."""
    return {} if layout.record is None else _arms(layout.record, "", {})


# ------------------------------------------------------------------ one value per (type, target)
@dataclass(frozen=True, eq=False)
class TypeLayout:
    """Everything about one type at one target that is not ctypes: the value subsystems pass around
    with a record's bytes.  ``kind`` is "struct", "union" or "enum" (an MSVC enum: a 4-byte int)."""

    c_name: str
    abi: str
    version: int
    label: str
    kind: str
    size: int
    align: int
    record: RecordLayout | None
    leaves: tuple
    lines: tuple
    since: dict  # leaf path -> the interface version name that introduced it (at this abi)

    @property
    def target(self) -> tuple:
        return (self.abi, self.version)

    @property
    def by_path(self) -> dict:
        return _by_path(self)

    def values(self, data) -> dict:
        """Every leaf path -> its value in one record's bytes, in declaration order."""
        return {leaf.path: read_leaf(data, leaf) for leaf in self.leaves}

    def __reduce__(self):
        return (type_layout, (self.c_name, self.abi, self.version))

    def __repr__(self):
        return f"<TypeLayout {self.c_name} [{self.label}] {self.kind}, {self.size} bytes, {plural(len(self.leaves), 'leaf', 'leaves')}>"


@lru_cache(maxsize=None)
def _by_path(layout: TypeLayout) -> dict:
    return {leaf.path: leaf for leaf in layout.leaves}


@lru_cache(maxsize=None)
def type_layout(name: str, abi: str, version: int) -> TypeLayout:
    """The cached layout of a typedef or enum (by its C name, tag or alias) at one target.

    The caller checks that the type exists at the target (``resolve_layout`` does).
    """
    original = resolve_type_name(name)
    label = target_label(abi, version)
    if original in _spec.ENUMS:
        leaf = Leaf("", 0, 0, 32, original, 4, False, True)
        return TypeLayout(original, abi, version, label, "enum", 4, 4, None, (leaf,), (), {"": None})
    rec = typedef_layout(original, abi, version)
    since = _introduced(original, abi, version)
    leaves = tuple(replace(leaf, since=since[leaf.path]) for leaf in record_leaves(rec))
    lines = tuple(layout_lines(rec, {leaf.path: leaf for leaf in leaves}))
    return TypeLayout(original, abi, version, label, rec.kind, rec.size, rec.align, rec, leaves, lines, since)


def _introduced(name: str, abi: str, version: int) -> dict:
    """Leaf path -> name of the oldest interface version at which the typedef has that path."""
    out = {}
    guard = _spec.TYPEDEFS[name].guard
    for vname, v in _spec.d3dukmdt.INTERFACE_VERSIONS.items():
        if v > version:
            break
        if guard is not None and not guard.holds(abi, v):
            continue
        for leaf in record_leaves(typedef_layout(name, abi, v)):
            out.setdefault(leaf.path, vname)
    return out
