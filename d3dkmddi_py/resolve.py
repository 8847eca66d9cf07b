"""The one type/target resolver: a C name or class, at a target, to its TypeLayout; no ctypes built.

Targets come as a Target, an ABI name, an (abi, interface version) pair, or None (x64, newest).
Names may carry WinDbg decoration (``dxgkrnl!_DXGK_ALLOCATIONINFO``) and any case.
"""
from __future__ import annotations

import difflib
import enum
from functools import lru_cache

from . import _spec
from ._spec.d3dukmdt import INTERFACE_VERSIONS, NEWEST_VERSION
from .errors import DecodeError, UnknownType, UnsupportedTarget, shown
from .layout import TypeLayout, target_label, type_layout

ABIS = ("x86", "x64", "arm64")
NEWEST_VALUE = INTERFACE_VERSIONS[NEWEST_VERSION]


def _version_list() -> str:
    return ", ".join(f"{name} (0x{value:X})" for name, value in INTERFACE_VERSIONS.items())


def parse_version(value) -> int:
    """An official interface version from its value, its name or its macro name (as an int)."""
    if isinstance(value, str):
        text = value.strip()
        name = text.upper().removeprefix("DXGKDDI_INTERFACE_VERSION_")
        if name in INTERFACE_VERSIONS:
            return INTERFACE_VERSIONS[name]
        try:
            value = int(text.replace("`", ""), 0)
        except ValueError:
            raise UnsupportedTarget(f"unknown interface version {text[:40]!r}; valid: {_version_list()}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnsupportedTarget(f"interface version must be an int or a name, not {type(value).__name__}; "
                                f"valid: {_version_list()}")
    if int(value) not in INTERFACE_VERSIONS.values():
        hint = " (0x5022 is WDDM2_0 in the 10240 kit only; every later kit says 0x5023)" if value == 0x5022 else ""
        number = f"0x{int(value):X}" if abs(int(value)) < 1 << 256 else "that number"
        raise UnsupportedTarget(f"{number} is not an official DXGKDDI_INTERFACE_VERSION{hint}; "
                                f"valid: {_version_list()}")
    return int(value)


_ABI_ALIASES = {"amd64": "x64", "x86_64": "x64", "i386": "x86", "i686": "x86", "aarch64": "arm64"}


def parse_abi_name(value) -> str:
    if isinstance(value, str):
        text = value.strip().lower()
        text = _ABI_ALIASES.get(text, text)
        if text in ABIS:
            return text
    raise UnsupportedTarget(f"unknown abi {shown(value)}; valid: {', '.join(ABIS)} (amd64 means x64)")


def parse_target(value=None) -> tuple:
    """(abi, interface version int) from a Target, an abi name, an (abi, version) pair, or None."""
    if value is None:
        return ("x64", NEWEST_VALUE)
    abi = getattr(value, "abi", None)
    version = getattr(value, "interface_version", None)
    if abi is not None and version is not None:
        return (abi, int(version))
    if isinstance(value, str):
        return (parse_abi_name(value), NEWEST_VALUE)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return (parse_abi_name(value[0]), parse_version(value[1]))
    raise UnsupportedTarget(f"target must be a Target, an abi name or an (abi, interface version) pair, "
                            f"not {type(value).__name__}")


@lru_cache(maxsize=None)
def known_names(abi: str, version: int) -> dict:
    """Every C name (typedef, tag, pointer-free alias, enum) that exists at a target -> its typedef name."""
    out = {}
    for td in _spec.TYPEDEFS.values():
        if td.guard is None or td.guard.holds(abi, version):
            for name in (td.name, td.tag, *td.aliases):
                if name:
                    out[name] = td.name
    for alias, original in _spec.ALIASES.items():
        if original in out.values():
            out.setdefault(alias, original)
    for e in _spec.ENUMS.values():
        if e.guard is None or e.guard.holds(abi, version):
            out[e.name] = e.name
            if e.tag:
                out[e.tag] = e.name
    return out


def _absent_note(name: str, abi: str, version: int) -> str | None:
    """Where a known type exists when this target lacks it, else None."""
    original = _spec.ALIASES.get(name, name)
    td = _spec.TYPEDEFS.get(original) or _spec.ENUMS.get(original)
    if td is None:
        td = next((t for t in _spec.TYPEDEFS.values() if t.tag == name), None)
    if td is None or td.guard is None:
        return None
    return f"{name} exists only where {td.guard.describe()}; this target is {target_label(abi, version)}"


def resolve_layout(type_, target=None) -> TypeLayout:
    """The TypeLayout of a class (which keeps its own target) or of a C name at ``target``."""
    if isinstance(type_, type):
        own = getattr(type_, "_target_", None)
        if isinstance(own, tuple):
            if target is not None and parse_target(target) != own:
                there = target_label(*parse_target(target))
                raise DecodeError(f"{type_._c_name_} is the class of {type_._target_label_} but target "
                                  f"{there} was also given; pass the name {type_._c_name_!r} with the target, "
                                  f"or the class alone")
            return type_layout(type_._c_name_, *own)
        if issubclass(type_, enum.IntEnum) and type_.__name__ in _spec.ENUMS:
            return type_layout(type_.__name__, *parse_target(target))
        raise DecodeError(f"{type_.__name__} is not a d3dkmddi_py type; pass a C name such as "
                          f"'DXGK_ALLOCATIONINFO' or a class from d3dkmddi_py.target(...)")
    if isinstance(type_, TypeLayout):
        if target is not None and parse_target(target) != type_.target:
            raise DecodeError(f"{type_.c_name} is laid out for {type_.label} but another target was given")
        return type_
    if not isinstance(type_, str):
        raise DecodeError(f"type must be a C name or a d3dkmddi_py class, not {type(type_).__name__}")
    abi, version = parse_target(target)
    name = type_.strip().split("!")[-1].strip()
    names = known_names(abi, version)
    if name in names:
        return type_layout(names[name], abi, version)
    by_upper = {n.upper(): n for n in names}
    if name.upper() in by_upper:
        return type_layout(names[by_upper[name.upper()]], abi, version)
    note = _absent_note(name, abi, version)
    if note is not None:
        raise UnknownType(note)
    public = [n for n in names if not n.startswith("_")]
    close = difflib.get_close_matches(name.upper()[:200], [n.upper() for n in public], n=3, cutoff=0.6)
    close = [by_upper[c] for c in close] or [n for n in public if name.upper() in n.upper()][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; `d3dkmddi types` lists them"
    shown = name if len(name) <= 60 else name[:57] + "..."
    raise UnknownType(f"unknown type {shown!r} at {target_label(abi, version)}{hint}")


def class_of(layout: TypeLayout):
    """The user-facing ctypes class (or enum) for a layout: built on first use, for the way out only."""
    from .target import ENUM_CLASSES, target

    if layout.kind == "enum":
        return ENUM_CLASSES[layout.c_name]
    return target(layout.abi, layout.version).types[layout.c_name]
