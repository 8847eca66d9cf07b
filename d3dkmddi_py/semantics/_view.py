"""Reading leaves straight from bytes, and turning any accepted input into (class, bytes, target).

Every helper here works on the little-endian bytes of one record, so the same code serves an int
from an ETW event, a blob, or a ctypes instance, and nested records are just a path prefix.
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache

from .._numpy import numpy_module
from ..coltext import joined_column
from ..errors import InvalidFieldType, InvalidFieldValue, UnsupportedTarget
from ..layout import Leaf, read_leaf, record_leaves, typedef_layout, write_leaf  # noqa: F401 (re-exported)
from ..names import ENUM_CLASSES, InterfaceVersion, parse_target
from ..resolve import resolve_layout
from ..wording import plural

_RESERVED_NAME = re.compile(r"Reserved\d*|DXGK_ALLOC_RESERVED\d+")


def is_reserved_name(path: str) -> bool:
    """Reserved, Reserved00, Reserved15, DXGK_ALLOC_RESERVED16, but not ReservedSysMem."""
    return bool(_RESERVED_NAME.fullmatch(path.rsplit(".", 1)[-1]))


class View:
    """The leaves of one record (or of a nested member) over a byte string.

    ``prefix`` is what findings and meanings put before a leaf path, so a check written for
    DXGK_SEGMENTFLAGS reports ``Flags.Agp`` when it runs inside a segment descriptor.
    """

    __slots__ = ("leaves", "data", "prefix", "abi", "version", "type_name")

    def __init__(self, leaves: dict, data: bytes, prefix: str, abi: str, version: int, type_name: str):
        self.leaves, self.data, self.prefix = leaves, data, prefix
        self.abi, self.version, self.type_name = abi, int(version), type_name

    @classmethod
    def of(cls, layout, data: bytes) -> "View":
        """The leaves of one record of a TypeLayout over its bytes."""
        return cls(layout.by_path, bytes(data), "", layout.abi, layout.version, layout.c_name)

    def has(self, path: str) -> bool:
        return path in self.leaves

    def get(self, path: str, default: int | None = None) -> int | None:
        leaf = self.leaves.get(path)
        return default if leaf is None else read_leaf(self.data, leaf)

    def __getitem__(self, path: str) -> int:
        return read_leaf(self.data, self.leaves[path])

    def bit(self, name: str) -> bool:
        """A one-bit flag by name; False when the flag does not exist at this version."""
        return bool(self.get(name, 0))

    def where(self, path: str) -> str:
        return self.prefix + path

    def sub(self, name: str, type_name: str) -> "View":
        head = name + "."
        return View(_under(self.leaves, head), self.data, self.prefix + head, self.abi, self.version, type_name)

    def word(self) -> int:
        """The 32-bit ``Value`` of a flag union."""
        return self["Value"]

    def sub_prefix(self, prefix: str) -> "View":
        """The leaves under ``prefix`` (ending in a dot), named relative to it."""
        return View(_under(self.leaves, prefix), self.data, self.prefix + prefix, self.abi, self.version,
                    self.type_name)

    @staticmethod
    def pick(cond, a, b):
        return a if cond else b

    @staticmethod
    def lookup(table, index):
        return table[index]


_UNDER: dict = {}


def _under(leaves: dict, prefix: str) -> dict:
    """The leaves under a prefix, renamed relative to it (cached: layouts' leaf dicts live forever)."""
    key = (id(leaves), prefix)
    got = _UNDER.get(key)
    if got is None or got[0] is not leaves:
        if len(_UNDER) > 4096:  # views of ad hoc leaf dicts: keep the cache bounded
            _UNDER.clear()
        got = _UNDER[key] = (leaves, {p[len(prefix):]: leaf for p, leaf in leaves.items() if p.startswith(prefix)})
    return got[1]


@lru_cache(maxsize=None)
def named_bits(type_name: str, abi: str, version: int) -> tuple[int, int]:
    """(mask of bits named as flags, mask of bits named Reserved*) of a 32-bit flag union at a version."""
    named = reserved = 0
    for leaf in record_leaves(typedef_layout(type_name, abi, version)):
        if leaf.path.endswith("Value") or leaf.bit_width == 32:
            continue
        mask = ((1 << leaf.bit_width) - 1) << (leaf.bit_offset + 8 * leaf.offset)
        if is_reserved_name(leaf.path):
            reserved |= mask
        else:
            named |= mask
    return named, reserved


@lru_cache(maxsize=None)
def ever_named_bits(type_name: str, abi: str) -> int:
    """Bits of a flag union that name a flag at some interface version (given the type exists there)."""
    out = 0
    for v in InterfaceVersion:
        try:
            out |= named_bits(type_name, abi, int(v))[0]
        except KeyError:
            continue
    return out


@lru_cache(maxsize=None)
def flag_names(type_name: str, abi: str, version: int) -> dict:
    """bit mask -> flag name, for the one-bit flags of a flag union at a version."""
    out = {}
    for leaf in record_leaves(typedef_layout(type_name, abi, version)):
        if leaf.bit_width == 1 and not is_reserved_name(leaf.path):
            out[1 << (leaf.bit_offset + 8 * leaf.offset)] = leaf.path
    return out


def describe_flags(type_name: str, word: int, abi: str, version: int, empty: str, reserved: bool = True) -> str:
    """The set flags' names joined by `` | ``, then the set reserved bits (unless ``reserved`` is False);
    for a NumPy column of words, that text for every row (a rule's message formatted column-wise)."""
    names = flag_names(type_name, abi, version)
    reserved_bits = named_bits(type_name, abi, version)[1] if reserved else 0
    if getattr(word, "ndim", 0):
        np = numpy_module()

        entries = [((word & m) != 0, names[m]) for m in sorted(names)]
        if reserved_bits:
            entries.append((word & reserved_bits, lambda v: f"reserved bits {v:#x}"))
        return [text or empty for text in joined_column(np, entries, " | ")]
    shown = [names[m] for m in sorted(names) if word & m]
    if word & reserved_bits:
        shown.append(f"reserved bits {word & reserved_bits:#x}")
    return " | ".join(shown) if shown else empty


def resolve_target(tgt=None, instance=None):
    """A Target from None (the instance's own, else x64 newest), a Target, or (abi, version)."""
    from ..target import as_target  # ctypes: only for callers that want classes, not for a word's meaning

    return as_target(tgt, instance=instance)


def class_for(tgt, type_name: str):
    """The class of a C name at a Target; raises MissingMember (an AttributeError) with the reason."""
    return getattr(tgt, type_name)


def _spec_enums() -> dict:
    return ENUM_CLASSES


def _instance(value) -> bool:
    """Whether ``value`` is an instance of a package class (ctypes is loaded when one exists)."""
    ctypes = sys.modules.get("ctypes")
    return (ctypes is not None and isinstance(value, (ctypes.Structure, ctypes.Union))
            and hasattr(type(value), "_c_name_"))


def coerce_layout(value, type_name: str | None, tgt=None):
    """(TypeLayout, bytes) for an instance, a plain int (flag words) or bytes, plus a type name.

    No ctypes class is built: an int or bytes is checked against the layout alone.
    """
    if _instance(value):
        own = type(value)
        where = own._target_ if tgt is None else parse_target(tgt)
        layout = resolve_layout(own._c_name_, where)
        if type_name is not None and resolve_layout(type_name, where).c_name != layout.c_name:
            raise InvalidFieldType(own._c_name_, "(value)", value, f"an instance of {type_name}",
                                   f"is a {own._c_name_}, not a {type_name}")
        data = bytes(value)
        if len(data) != layout.size:
            raise UnsupportedTarget(f"{own._c_name_} from {own._target_label_} is {plural(len(data), 'byte')}; at "
                                    f"{layout.label} it is {layout.size}: pass target=None or the bytes")
        return layout, data
    if type_name is None and isinstance(value, int) and getattr(type(value), "__name__", None) in _spec_enums():
        # an enumerator of DXGK_SEGMENTTYPE or DXGK_PAGESIZE: its class names the type (a 4-byte int)
        type_name, value = type(value).__name__, int(value) & 0xFFFFFFFF
    if type_name is None:
        raise InvalidFieldType("(value)", "type_name", value, "a C type name such as 'DXGK_SEGMENTFLAGS'",
                               "is a plain value: say which type it is (type_name=...)")
    if not isinstance(type_name, str):
        raise InvalidFieldType("(value)", "type_name", type_name, "a C type name such as 'DXGK_SEGMENTFLAGS'",
                               f"is a {type(type_name).__name__}")
    layout = resolve_layout(type_name, tgt)
    size, name = layout.size, layout.c_name
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        if len(data) != size:
            raise InvalidFieldValue(name, "(bytes)", f"{len(data)} bytes", f"exactly {size} bytes",
                                    f"has the wrong length for {name} at {layout.label}")
        return layout, data
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidFieldType(name, "(value)", value, "an int, bytes or an instance", f"is a {type(value).__name__}")
    if not 0 <= value < 1 << (8 * size):
        shown = value if abs(value) < 1 << 256 else f"a {value.bit_length()}-bit number"
        raise InvalidFieldValue(name, "Value", shown, f"0..0x{(1 << 8 * size) - 1:X}",
                                f"does not fit in the {size} bytes of {name}")
    return layout, value.to_bytes(size, "little")


def coerce(value, type_name: str | None, tgt=None):
    """(class, bytes, target) for callers that hand a ctypes instance back to the user."""
    from ..target import as_target, class_of  # ctypes, for an instance handed back

    layout, data = coerce_layout(value, type_name, tgt)
    return class_of(layout), data, as_target(layout.target)


def word_of(value, type_names: tuple[str, ...]) -> int:
    """The 32-bit word of a flag union given as an int or as an instance of one of ``type_names``."""
    if _instance(value):
        if type(value)._c_name_ not in type_names:
            raise InvalidFieldType(type_names[0], "(value)", value, f"an int or a {' / '.join(type_names)}",
                                   f"is a {type(value)._c_name_}")
        return int.from_bytes(bytes(value)[:4], "little")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidFieldType(type_names[0], "Value", value, "0..0xFFFFFFFF or an instance",
                               f"is a {type(value).__name__}")
    if not 0 <= value <= 0xFFFFFFFF:
        raise InvalidFieldValue(type_names[0], "Value", value, "0..0xFFFFFFFF (0xFFFFFFFF)",
                                "does not fit in 32 bits")
    return value
