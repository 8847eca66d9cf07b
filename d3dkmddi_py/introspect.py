"""Introspection: the leaves of a class, its layout as WinDbg ``dt`` prints it, and how two targets
lay out one type differently."""
from __future__ import annotations

from ._records import dataclass
from .errors import NotAType, UnknownType
from .layout import Leaf, TypeLayout, bits_text
from .wording import noun, plural


def leaves(type_or_instance) -> tuple[Leaf, ...]:
    """Every leaf of a class (or of an instance's class), in declaration order.

    Each leaf gives its dotted path (anonymous unions and structs flattened, array
    elements as ``Reserved[2]``), the byte offset of its storage unit, its bit
    position and width inside that unit, and its C type name.  Every arm of a union
    is listed.
    """
    cls = type_or_instance if isinstance(type_or_instance, type) else type(type_or_instance)
    try:
        return cls._leaves_
    except AttributeError:
        raise NotAType(f"{cls.__name__} is not a d3dkmddi_py type (use target(...).<name>)") from None


def layout_table(type_or_instance) -> str:
    """``dt``-style lines: ``+0x010 Size : SIZE_T`` or ``+0x000 Agp : Pos 1, 1 Bit``."""
    items = leaves(type_or_instance)
    width = max((len(leaf.path) for leaf in items), default=0)
    lines = []
    for leaf in items:
        if leaf.is_bitfield:
            what = bits_text(leaf.bit_offset, leaf.bit_width)
        else:
            what = leaf.c_type
        lines.append(f"   +0x{leaf.offset:03x} {leaf.path:<{width}} : {what}")
    return "\n".join(lines)


# ------------------------------------------------------------------ two targets side by side
ASPECTS = ("offset", "bit_offset", "bit_width")  # what places a leaf's bits; "presence" when one side lacks it


@dataclass(frozen=True)
class Side:
    """One target of a comparison: its layout of the type, or None with where the type exists."""

    abi: str
    version: int
    label: str
    layout: TypeLayout | None
    absent: str | None = None


@dataclass(frozen=True)
class LeafDiff:
    """A leaf laid out differently at the two targets: ``a``/``b`` None where it does not exist;
    ``differs`` names the aspects that differ ("presence", or some of ASPECTS)."""

    path: str
    a: Leaf | None
    b: Leaf | None
    differs: tuple


@dataclass(frozen=True)
class Shifted:
    """Consecutive leaves that differ only in offset, each moved by the same ``shift`` bytes (b's offset minus
    a's): ``leaves`` their LeafDiffs, in layout order."""

    shift: int
    leaves: tuple


@dataclass(frozen=True)
class LayoutDiff:
    """``layout_diff``: the type, both sides, the leaves that differ (in layout order) and how many leaves
    the two targets place alike.  ``print(diff)`` prints the ``layout --compare`` table; ``groups()`` the rows
    as it prints them, leaves that move by the same amount one after another as one ``Shifted``."""

    type_name: str
    a: Side
    b: Side
    leaves: tuple
    same: int

    @property
    def differs(self) -> bool:
        return bool(self.leaves) or self.a.layout is None or self.b.layout is None or \
            (self.a.layout.size, self.a.layout.align) != (self.b.layout.size, self.b.layout.align)

    def groups(self) -> tuple:
        """The differing leaves in layout order, each a LeafDiff, but a run of two or more that differ in offset
        alone by one shift: a Shifted."""
        out, run = [], []

        def close():
            out.extend(run) if len(run) < 2 else out.append(Shifted(run[0].b.offset - run[0].a.offset, tuple(run)))
            run.clear()

        for row in self.leaves:
            if row.differs != ("offset",):
                close()
                out.append(row)
                continue
            if run and row.b.offset - row.a.offset != run[0].b.offset - run[0].a.offset:
                close()
            run.append(row)
        close()
        return tuple(out)

    def __str__(self) -> str:
        return compare_text(self)

    def __repr__(self) -> str:
        return (f"<LayoutDiff {self.type_name} {self.a.label} against {self.b.label}: {len(self.leaves)} of "
                f"{plural(self.same + len(self.leaves), 'leaf', 'leaves')} "
                f"{'differs' if len(self.leaves) == 1 else 'differ'}>")


def layout_diff(type_, a, b) -> LayoutDiff:
    """The leaves of a type whose offset, bit position, width or presence differ between two targets,
    as ``dt`` users diff two layouts by hand.

    ``type_``: a C name (any case, a tag or an alias) or a class (its C name); ``a``/``b``: a Target, an
    ABI name or an (abi, interface version) pair, as everywhere.  A type that exists at one target only
    gives every leaf as present on that side; at neither, the first side's error is raised.
    """
    from .names import parse_target, target_label, type_guard
    from .resolve import resolve_layout

    name = getattr(type_, "_c_name_", type_)
    found, errors = [], []
    for tgt in (a, b):
        abi, version = parse_target(tgt)
        try:
            found.append((abi, version, resolve_layout(name, (abi, version))))
        except UnknownType as exc:
            found.append((abi, version, None))
            errors.append(exc)
    if len(errors) == 2:
        raise errors[0]
    c_name = next(layout.c_name for _abi, _version, layout in found if layout is not None)
    a_side, b_side = (Side(abi, version, target_label(abi, version), layout,
                           None if layout is not None else f"only where {type_guard(c_name).describe()}")
                      for abi, version, layout in found)
    a_leaves = a_side.layout.by_path if a_side.layout is not None else {}
    b_leaves = b_side.layout.by_path if b_side.layout is not None else {}
    rows, same = [], 0
    for path in _merged_paths(list(a_leaves), list(b_leaves)):
        left, right = a_leaves.get(path), b_leaves.get(path)
        if left is None or right is None:
            rows.append(LeafDiff(path, left, right, ("presence",)))
            continue
        differs = tuple(k for k in ASPECTS if getattr(left, k) != getattr(right, k))
        if differs:
            rows.append(LeafDiff(path, left, right, differs))
        else:
            same += 1
    return LayoutDiff(c_name, a_side, b_side, tuple(rows), same)


def _merged_paths(first: list, second: list) -> list:
    """Both sides' leaf paths in layout order: ``first``'s, each path only ``second`` has placed after
    the path it follows there."""
    out = list(first)
    known = set(out)
    last = -1
    for path in second:
        if path in known:
            last = out.index(path)
            continue
        last += 1
        out.insert(last, path)
        known.add(path)
    return out


_ASPECT_WORDS = {"presence": "presence", "offset": "offset", "bit_offset": "bit", "bit_width": "width"}


def _leaf_cell(leaf) -> str:
    """A leaf at one target as a dt line places it: ``+0x010 SIZE_T, 8 bytes`` or ``+0x000 Pos 3, 1 Bit``."""
    if leaf is None:
        return "-"
    if leaf.is_bitfield:
        return f"+0x{leaf.offset:03x} {bits_text(leaf.bit_offset, leaf.bit_width)}"
    return f"+0x{leaf.offset:03x} {leaf.c_type}, {leaf.bit_width // 8} {noun(leaf.bit_width // 8, 'byte')}"


def size_text(layout: TypeLayout) -> str:
    """``size 0x58 (88), align 8``: a layout's size and alignment as the tables head them."""
    return f"size 0x{layout.size:x} ({layout.size}), align {layout.align}"


def _side_size(side) -> str:
    return f"not at this target (exists {side.absent})" if side.layout is None else size_text(side.layout)


def compare_text(diff) -> str:
    """``d3dkmddi layout TYPE --compare A,B``: the leaves whose offset, bit, width or presence differ,
    each side as dt places it (an ``introspect.LayoutDiff``)."""
    a, b = diff.a, diff.b
    out = [f"{diff.type_name}  {a.label}  against  {b.label}", f"   {a.label}: {_side_size(a)}",
           f"   {b.label}: {_side_size(b)}"]
    total = diff.same + len(diff.leaves)
    if not diff.leaves:
        out.append(f"   every one of the {total} leaves has the same offset, bit and width at both" if total != 1 else
                   "   its one leaf has the same offset, bit and width at both")
        return "\n".join(out)
    out.append(f"   {len(diff.leaves)} of {plural(total, 'leaf', 'leaves')} "
               f"{'differs' if len(diff.leaves) == 1 else 'differ'} in offset, bit, width or presence"
               + (f" ({diff.same} the same)" if diff.same else "") + ":")
    groups = diff.groups()
    rows = [(row.path, _leaf_cell(row.a), _leaf_cell(row.b), ", ".join(_ASPECT_WORDS[k] for k in row.differs))
            for row in groups if not hasattr(row, "shift")]
    head = ("leaf", a.label, b.label, "differs in")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    cells = iter(rows)
    for row in [head, *groups]:
        if hasattr(row, "shift"):  # a run that moved by one shift: one line, outside the columns
            first, last = row.leaves[0], row.leaves[-1]
            out.append(f"   {first.path} .. {last.path}: {len(row.leaves)} leaves, each offset {_shift_text(row.shift)} "
                       f"({_offsets(r.a for r in row.leaves)} -> {_offsets(r.b for r in row.leaves)}), bit and width "
                       f"the same")
            continue
        cell = row if row is head else next(cells)
        out.append("   " + "  ".join(c.ljust(w) for c, w in zip(cell, widths)) + "  " + cell[3])
    return "\n".join(out)


def _offsets(leaves) -> str:
    """``+0x014..+0x028``: the offsets a run of leaves spans (one when they share a storage unit)."""
    offsets = [leaf.offset for leaf in leaves]
    low, high = min(offsets), max(offsets)
    return f"+0x{low:03x}" + (f"..+0x{high:03x}" if high != low else "")


def _shift_text(shift: int) -> str:
    """``shifted by +0xc (12)``, ``shifted by -0x4 (-4)``."""
    return f"shifted by {'-' if shift < 0 else '+'}0x{abs(shift):x} ({shift})"
