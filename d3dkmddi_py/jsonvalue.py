"""How a leaf's value is written to JSON, and read back: the one place that decides.

JSON numbers above 2**53 are rounded by JavaScript and jq without a word, so every pointer,
handle, pointer-sized integer (SIZE_T, ULONG_PTR) and 64-bit field is written as a hex string
``"0x..."`` holding its bit pattern (two's complement for LONGLONG).  The choice depends on the
leaf's C type only, so one field is written the same way for every value and every ABI.  CSV spells
such a leaf the same way, without the quotes (``bulk.table``'s ``hex`` kind).
"""
from __future__ import annotations

import re

from ._spec.base import SCALARS

_HEX_TEXT = re.compile(r"[+-]?0[xX][0-9a-fA-F]+")
_MAX_HEX_CHARS = 64  # room for any leaf (64 bits is 16 digits) and for a readable error


def json_hex(leaf) -> bool:
    """True when ``leaf`` (a layout.Leaf) is written to JSON as a hex string."""
    if leaf.c_type.endswith("*"):
        return True
    size = SCALARS.get(leaf.c_type, (None, False))[0]
    return size in ("ptr", 8) or leaf.bit_width > 32


def json_value(leaf, value: int):
    """The JSON form of a leaf's value: the int, or ``"0x..."`` (lowercase, the unsigned bit pattern)."""
    if json_hex(leaf):
        return wide_text(value, leaf.bit_width)
    return value


def wide_text(value: int, bits: int = 64) -> str:
    """The ``"0x..."`` form of a ``bits``-wide value: its unsigned bit pattern (lowercase), for a leaf and
    for a 64-bit number that is not one (an ETW event's UInt64 or pointer, an .etl header's LARGE_INTEGER)."""
    return f"0x{value & ((1 << bits) - 1):x}"


def json_mask(leaf):
    """A leaf's mask in its storage unit, in the form the leaf's values take (a 64-bit leaf's mask is
    ``"0x..."`` as its values are): within the unit, so a number only where the unit is 32 bits or less."""
    return f"0x{leaf.mask:x}" if json_hex(leaf) else leaf.mask


def hex_text(value: int) -> str:
    """A number that is not a leaf (an address, an offset) as the same ``"0x..."`` string."""
    return f"-0x{-value:x}" if value < 0 else f"0x{value:x}"


def json_number(value):
    """The int a JSON value stands for: an int, or a ``"0x..."`` string; None for anything else
    (the caller says what was expected, with the field's name)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and len(value) <= _MAX_HEX_CHARS and _HEX_TEXT.fullmatch(value.strip()):
        return int(value.strip(), 16)
    return None


def leaf_from_json(leaf, value):
    """The number a leaf's JSON value stands for (range not checked), or None when it is no number.

    A signed leaf written as hex may also be given as its unsigned bit pattern, as C code and
    to_dict write it: LONGLONG 0xfffffffe00000000 is -0x200000000.
    """
    number = json_number(value)
    if number is not None and leaf.signed and json_hex(leaf) and leaf.max_value < number < 1 << leaf.bit_width:
        number -= 1 << leaf.bit_width
    return number


__all__ = ["json_hex", "json_value", "json_mask", "wide_text", "hex_text", "json_number", "leaf_from_json"]
