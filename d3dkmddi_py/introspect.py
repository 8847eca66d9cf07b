"""Introspection: the leaves of a class, and its layout as WinDbg ``dt`` prints it."""
from __future__ import annotations

from .errors import NotAType
from .layout import Leaf


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
            what = f"Pos {leaf.bit_offset}, {leaf.bit_width} Bit{'s' if leaf.bit_width != 1 else ''}"
        else:
            what = leaf.c_type
        lines.append(f"   +0x{leaf.offset:03x} {leaf.path:<{width}} : {what}")
    return "\n".join(lines)
