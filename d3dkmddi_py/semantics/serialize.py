"""to_dict / from_dict: JSON-safe dicts that give back the same bytes, reserved bits and padding included.

The dict lists every leaf (every union arm, so a reader finds the name it knows) and the bytes no
leaf covers (struct padding) as hex.  from_dict writes the padding, then each leaf, and refuses
a dict whose overlapping leaves disagree, naming both.
"""
from __future__ import annotations

import ctypes

from ..errors import InvalidFieldType, InvalidFieldValue, MissingMember
from ._view import class_for, coerce, read_leaf, resolve_target, write_leaf


def _covered(cls) -> list:
    """Per byte, the mask of bits some leaf covers."""
    size = ctypes.sizeof(cls)
    bits = [0] * size
    for leaf in cls._leaves_:
        mask = ((1 << leaf.bit_width) - 1) << leaf.bit_offset
        for i in range(leaf.size):
            bits[leaf.offset + i] |= (mask >> (8 * i)) & 0xFF
    return bits


def _gaps(cls) -> list:
    """(offset, length) runs of bytes that are not fully covered by leaves."""
    runs, start = [], None
    bits = _covered(cls)
    for i, b in enumerate(bits + [0xFF]):
        if b != 0xFF and start is None:
            start = i
        elif b == 0xFF and start is not None:
            runs.append((start, i - start))
            start = None
    return runs


def to_dict(value, type_name: str | None = None, *, target=None) -> dict:
    """{"type", "abi", "interface_version", "fields": {leaf path: int}, "padding": {"0x3c": "hex"}}."""
    cls, data, t = coerce(value, type_name, target)
    fields = {leaf.path: read_leaf(data, leaf) for leaf in cls._leaves_}
    padding = {f"{off:#x}": data[off:off + n].hex() for off, n in _gaps(cls)}
    return {"type": cls._c_name_, "abi": t.abi, "interface_version": t.interface_version.name,
            "fields": fields, "padding": padding}


def from_dict(d: dict, type_name: str | None = None, *, target=None):
    """The instance a ``to_dict`` dict describes, at its own target unless ``target`` is given.

    Missing leaves count as 0; an unknown leaf, a value out of its range, or two overlapping
    leaves that disagree (say ``Flags.Agp`` edited but ``Flags.Value`` not) raise with the fix.
    """
    if not isinstance(d, dict):
        raise InvalidFieldType("from_dict", "d", d, "a dict from to_dict", f"is a {type(d).__name__}")
    name = type_name or d.get("type")
    if name is None:
        raise InvalidFieldValue("from_dict", "type", None, "a C type name", "is missing: pass type_name=")
    if target is None and "abi" in d:
        target = (d["abi"], d.get("interface_version", "WDDM3_2"))
    t = resolve_target(target)
    cls = class_for(t, name)
    if d.get("type") not in (None, name, cls._c_name_) and class_for(t, d["type"])._c_name_ != cls._c_name_:
        raise InvalidFieldValue("from_dict", "type", d["type"], name, f"names another type than {name}")
    leaves = {leaf.path: leaf for leaf in cls._leaves_}
    buf = bytearray(ctypes.sizeof(cls))
    gaps = dict(_gaps(cls))
    for key, text in (d.get("padding") or {}).items():
        off = int(key, 0)
        raw = bytes.fromhex(text)
        if gaps.get(off) != len(raw):
            raise InvalidFieldValue(cls._c_name_, f"padding[{key}]", text,
                                    ", ".join(f"{o:#x}: {n} bytes" for o, n in gaps.items()) or "no padding",
                                    "is not a padding run of this type at this target")
        buf[off:off + len(raw)] = raw
    fields = d.get("fields") or {}
    for path, value in fields.items():
        leaf = leaves.get(path)
        if leaf is None:
            raise MissingMember(f"{cls._c_name_} at {t.label} has no leaf {path!r} "
                                f"(leaves: {', '.join(leaves)})")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidFieldType(cls._c_name_, path, value, f"{leaf.min_value}..{leaf.max_value}",
                                   f"is a {type(value).__name__}, not an int")
        if not leaf.min_value <= value <= leaf.max_value:
            raise InvalidFieldValue(cls._c_name_, path, value, f"{leaf.min_value}..{leaf.max_value}",
                                    f"does not fit in {leaf.bit_width} bits")
        write_leaf(buf, leaf, value)
    for path, value in fields.items():
        got = read_leaf(buf, leaves[path])
        if got != value:
            other = _overlapping(leaves, path, fields)
            raise InvalidFieldValue(cls._c_name_, path, value, f"the value {other} implies ({got})",
                                    f"disagrees with {other}, which shares its bits: edit one of them and "
                                    f"delete the other from the dict")
    return cls.from_buffer_copy(bytes(buf))


def _overlapping(leaves: dict, path: str, fields: dict) -> str:
    a = leaves[path]
    a_bits = set(range(a.offset * 8 + a.bit_offset, a.offset * 8 + a.bit_offset + a.bit_width))
    later = list(fields)[list(fields).index(path) + 1:]
    for other in reversed(later):
        b = leaves[other]
        if a_bits & set(range(b.offset * 8 + b.bit_offset, b.offset * 8 + b.bit_offset + b.bit_width)):
            return other
    return "another leaf"
