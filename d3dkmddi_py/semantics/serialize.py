"""to_dict / from_dict: JSON-safe dicts that give back the same bytes, reserved bits and padding included.

The dict lists every leaf (every union arm, so a reader finds the name it knows) and the bytes no
leaf covers (struct padding) as hex.  Pointers, handles, pointer-sized and 64-bit leaves are
``"0x..."`` strings (jsonvalue decides which), so no JSON reader rounds them.  from_dict takes
either form, writes the padding, then each leaf, and refuses a dict whose overlapping leaves
disagree, naming both.
"""
from __future__ import annotations

import ctypes

from ..errors import InvalidFieldType, InvalidFieldValue, NotAType
from ..jsonvalue import hex_text, json_hex, json_number, json_value, leaf_from_json
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
    """{"type", "abi", "interface_version", "fields": {leaf path: value}, "padding": {"0x3c": "hex"}}.

    A field is an int, or a ``"0x..."`` string for pointers, handles, pointer-sized and 64-bit
    fields (jsonvalue.json_hex), so that no JSON reader rounds it.
    """
    cls, data, t = coerce(value, type_name, target)
    if not hasattr(cls, "_leaves_"):  # an enum: a value, not a record of leaves
        raise NotAType(f"to_dict takes a struct or union; {getattr(cls, '_c_name_', cls.__name__)} is an enum "
                       f"(its value is int(member))")
    fields = {leaf.path: json_value(leaf, read_leaf(data, leaf)) for leaf in cls._leaves_}
    padding = {f"{off:#x}": data[off:off + n].hex() for off, n in _gaps(cls)}
    return {"type": cls._c_name_, "abi": t.abi, "interface_version": t.interface_version.name,
            "fields": fields, "padding": padding}


_KEYS = {"type": (str, "a C type name such as 'DXGK_SEGMENTFLAGS'"),
         "abi": (str, "an abi name: x86, x64 or arm64"),
         "interface_version": ((str, int), "an interface version name such as 'WDDM3_2' or its number"),
         "fields": (dict, "a dict of leaf path -> int or '0x...' string"),
         "padding": (dict, "a dict of byte offset ('0x44') -> hex bytes ('00000000')")}


def from_dict(d: dict, type_name: str | None = None, *, target=None):
    """The instance a ``to_dict`` dict describes, at its own target unless ``target`` is given.

    Missing leaves count as 0.  A value is an int or a ``"0x..."`` string; a signed 64-bit leaf
    also takes its unsigned bit pattern (0xfffffffe00000000 for -0x200000000).  An unknown key or
    leaf, a value of the wrong kind or out of its range, or two overlapping leaves that disagree
    (say ``Flags.Agp`` edited but ``Flags.Value`` not) raise InvalidFieldValue/InvalidFieldType,
    naming the key and what is expected.
    """
    if not isinstance(d, dict):
        raise InvalidFieldType("from_dict", "d", d, "a dict from to_dict", f"is a {type(d).__name__}")
    for key, value in d.items():
        if key not in _KEYS:
            raise InvalidFieldValue("from_dict", _key_text(key), value, ", ".join(_KEYS),
                                    "is not a key of a to_dict dict", "delete it")
        kinds, what = _KEYS[key]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise InvalidFieldType("from_dict", key, value, what, f"is a {type(value).__name__}")
    if type_name is not None and not isinstance(type_name, str):
        raise InvalidFieldType("from_dict", "type_name", type_name, _KEYS["type"][1],
                               f"is a {type(type_name).__name__}")
    name = type_name or d.get("type")
    if name is None:
        raise InvalidFieldValue("from_dict", "type", None, "a C type name", "is missing: pass type_name=")
    if target is None and ("abi" in d or "interface_version" in d):
        for key in ("abi", "interface_version"):
            if key not in d:
                raise InvalidFieldValue("from_dict", key, None, _KEYS[key][1],
                                        "is missing: to_dict writes abi and interface_version together",
                                        "add it, or pass target=")
        target = (d["abi"], d["interface_version"])
    t = resolve_target(target)
    cls = class_for(t, name)
    if not hasattr(cls, "_leaves_"):
        raise InvalidFieldValue("from_dict", "type", name, "a struct or union type",
                                "is not a struct or union (an enum is a plain int)")
    if d.get("type") not in (None, name, cls._c_name_) and class_for(t, d["type"]) is not cls:
        raise InvalidFieldValue("from_dict", "type", d["type"], name, f"names another type than {name}")
    leaves = {leaf.path: leaf for leaf in cls._leaves_}
    buf = bytearray(ctypes.sizeof(cls))
    gaps = dict(_gaps(cls))
    valid_gaps = ", ".join(f"{o:#x}: {n} bytes" for o, n in gaps.items()) or "no padding"
    for key, text in d.get("padding", {}).items():
        where = f"padding[{_key_text(key)}]"
        off = json_number(key) if isinstance(key, str) else None
        raw = _hex_bytes(text)
        if raw is None:
            raise InvalidFieldType(cls._c_name_, where, text, "hex bytes such as '00000000'",
                                   "is not hex bytes")
        if off is None or gaps.get(off) != len(raw):
            raise InvalidFieldValue(cls._c_name_, where, text, valid_gaps,
                                    "is not a padding run of this type at this target")
        buf[off:off + len(raw)] = raw
    values = {}
    for path, value in d.get("fields", {}).items():
        leaf = leaves.get(path) if isinstance(path, str) else None
        if leaf is None:
            raise InvalidFieldValue(cls._c_name_, f"fields[{_key_text(path)}]", value, f"a leaf of {cls._c_name_} at "
                                    f"{t.label}", "names no leaf", "remove it, or give the target that has it "
                                    "(to_dict of an instance lists every leaf)")
        valid = _valid_text(leaf)
        number = leaf_from_json(leaf, value)
        if number is None:
            raise InvalidFieldType(cls._c_name_, path, value, valid,
                                   f"is a {type(value).__name__}, not an int or a '0x...' string")
        if not leaf.min_value <= number <= leaf.max_value:
            raise InvalidFieldValue(cls._c_name_, path, value, valid, f"does not fit in {leaf.bit_width} bits")
        write_leaf(buf, leaf, number)
        values[path] = number
    for path, number in values.items():
        got = read_leaf(buf, leaves[path])
        if got != number:
            other = _overlapping(leaves, path, values)
            raise InvalidFieldValue(cls._c_name_, path, d["fields"][path], f"the value {other} implies ({got})",
                                    f"disagrees with {other}, which shares its bits: edit one of them and "
                                    f"delete the other from the dict")
    return cls.from_buffer_copy(bytes(buf))


def _valid_text(leaf) -> str:
    if leaf.signed and json_hex(leaf):
        return (f"{hex_text(leaf.min_value)}..{hex_text(leaf.max_value)}, or the bit pattern "
                f"0..0x{(1 << leaf.bit_width) - 1:x}")
    if json_hex(leaf):
        return f"0..0x{leaf.max_value:x}"
    return f"{leaf.min_value}..{leaf.max_value}"


def _hex_bytes(text):
    if not isinstance(text, str) or len(text) > 2 * 4096:
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _key_text(key) -> str:
    """A dict key as messages show it, clipped and without control characters (it can be any string)."""
    if not isinstance(key, str):
        return f"<{type(key).__name__} key>"
    text = repr(key)[1:-1]
    return text if len(text) <= 40 else text[:37] + "..."


def _overlapping(leaves: dict, path: str, fields: dict) -> str:
    a = leaves[path]
    a_bits = set(range(a.offset * 8 + a.bit_offset, a.offset * 8 + a.bit_offset + a.bit_width))
    later = list(fields)[list(fields).index(path) + 1:]
    for other in reversed(later):
        b = leaves[other]
        if a_bits & set(range(b.offset * 8 + b.bit_offset, b.offset * 8 + b.bit_offset + b.bit_width)):
            return other
    return "another leaf"
