"""d3dkmddi_py: the WDDM video-memory-manager structures of d3dkmddi.h and d3dukmdt.h, exactly as MSVC
lays them out, for x86, x64 and arm64 and every DXGKDDI_INTERFACE_VERSION from Vista (0x1052) to WDDM 3.2 (0x11007).

Start here::

    import d3dkmddi_py as kmd
    kmd.DXGK_ALLOCATIONINFO                       # ctypes class: x64 at the newest version
    t = kmd.target("x86", "WDDM2_0")              # any other target: t.DXGK_SEGMENTFLAGS, ...
    kmd.decode_one("DXGK_SEGMENTFLAGS", 0x485)    # bytes, hex text, WinDbg text, a pathlib.Path
    kmd.decode("DXGK_ALLOCATIONINFO", data, count=4)  # always a list
    print(kmd.report("DXGK_SEGMENTFLAGS", 0x485)) # what `d3dkmddi decode` prints
    kmd.semantics.check(0x485, "DXGK_SEGMENTFLAGS")   # the documented rules, as findings
    kmd.bulk.decode_array("DXGK_ALLOCATIONINFO", pathlib.Path("allocs.bin"))  # NumPy columns
    kmd.etw.read("trace.etl")                     # a GPU trace's segment and allocation events
    kmd.get_include()                             # the C mirror's folder, for -I

The command line is ``d3dkmddi`` (``d3dkmddi demo`` first): decode, validate, layout, types, etw.

Every entry point (``help(kmd.<name>)`` documents each):

    layouts   target, leaves, layout_table, layout_diff, parse_abi, parse_interface_version, get_include
    records   decode, decode_one, report, render_text, record_json, parse_hex, parse_windbg
    rules     check, validate, explain, field_meanings, to_dict, from_dict; all of them: semantics
    words     decode_segment_flags, decode_segment_preference, build_segment_preference,
              decode_bank_preference, build_bank_preference, segment_set, segment_set_mask,
              decode_priority, power_behaviour
    memory    as_memory, parse_address, follow, render_follow, follow_json, segments_adapter
              (a WinDbg log, bytes at a base, a read() object, a raw image or a crash dump)
    columns   decode_array, iter_chunks, column_findings, validate_array, write_records: bulk (NumPy)
    traces    etw: read, summary, adapters, from_records (.etl files and their XML)

Classes are documented by their own help: the C types (``dir(kmd)``, ``d3dkmddi types``), Target, Leaf,
Adapter, Finding, Columns, the memories (WinDbgLog, Ranges, ImageFile, KernelDump, ReadObject), and the errors of ``d3dkmddi_py.errors``, each a ValueError or a TypeError.

Names load on first use, so ``import d3dkmddi_py`` loads nothing else (a debugger's Python can use
the classes with the standard library alone).
"""
from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys
import types as _types

# Each exported function or class, by the module that defines it.
_EXPORTS = {
    ".errors": ("D3dkmddiError", "InvalidFieldType", "InvalidFieldValue", "MissingMember", "UnsupportedTarget"),
    ".introspect": ("LayoutDiff", "layout_diff", "layout_table", "leaves"),
    ".layout": ("Leaf",),
    ".names": ("ABIS", "NEWEST", "InterfaceVersion", "parse_abi", "parse_interface_version"),
    ".target": ("Target", "target"),
    ".semantics": (
        "RULES", "Adapter", "BankDirection", "Finding", "PowerBehaviour", "PriorityBand", "Reference",
        "SegmentDirection", "SegmentFlag", "Severity", "ValidationError", "build_bank_preference",
        "build_segment_preference", "check", "decode_bank_preference", "decode_priority", "decode_segment_flags",
        "decode_segment_preference", "explain", "field_meanings", "from_dict", "power_behaviour", "segment_set",
        "segment_set_mask", "to_dict", "validate",
    ),
    ".decoding": ("DecodeError", "TruncatedData", "UnknownType", "WinDbgTextError", "decode", "decode_one",
                  "parse_hex", "parse_windbg"),
    ".dttext": ("render_text",),
    ".jsonformat": ("record_json",),
    ".pipeline": ("report",),
    ".memory": ("AddressSpace", "ImageFile", "KernelDump", "MemoryConflict", "MemoryGap", "MemoryReadError", "Ranges",
                "ReadObject", "UnreadableMemory", "WinDbgLog", "as_memory", "parse_address"),
    ".follow": ("follow", "follow_json", "render_follow", "segments_adapter"),
    ".bulk": ("BulkInputError", "Columns", "NumpyMissingWarning", "column_findings", "decode_array", "iter_chunks",
              "validate_array", "write_records"),
}
_SUBPACKAGES = ("semantics", "bulk", "etw")  # exported as modules
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
_HIDDEN = {"ENUM_CLASSES": ".names"}  # importable as before, not in __all__
_HOME.update(_HIDDEN)


def get_include() -> str:
    """The folder holding d3dkmddi.h, d3dukmdt.h and d3dkmddi_base.h (pass it to ``-I``): the package's
    ``include`` in an installed wheel, the repository's ``headers/`` (the one copy) in a source checkout
    or an editable install."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    packaged = _os.path.join(here, "include")
    if _os.path.isfile(_os.path.join(packaged, "d3dkmddi.h")):
        return packaged
    return _os.path.join(_os.path.dirname(here), "headers")


def _default_target():
    from .target import NEWEST, target

    return target("x64", NEWEST)


def _constant(name: str):
    """The value of a d3dukmdt.h / d3dkmddi.h constant at the default target, or None."""
    from ._spec import CONSTS
    from ._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION

    newest = INTERFACE_VERSIONS[NEWEST_VERSION]
    if name == "DXGKDDI_INTERFACE_VERSION":  # the kit's default: its newest version
        return newest
    const = CONSTS.get(name)
    if const is None or not (const.guard is None or const.guard.holds("x64", newest)):
        return None
    return const.value


def _is_type_name(name: str) -> bool:
    from . import _spec

    return (name in _spec.TYPEDEFS or name in _spec.ALIASES or name in _spec.ENUMS
            or any(td.tag == name for td in _spec.TYPEDEFS.values()))


def _public_names() -> list:
    from ._spec import CONSTS

    default = _default_target()
    return [
        *(n for names in _EXPORTS.values() for n in names), *_SUBPACKAGES, "get_include",
        *(n for n in default.types if not n.startswith("_")),
        *(n for n in CONSTS if _constant(n) is not None), "DXGKDDI_INTERFACE_VERSION",
    ]


def _entry_points() -> list:
    """``__all__``: the public names that are no class (functions, subpackages, constants), so that
    help(d3dkmddi_py) stays a guide; each class has its own help, and dir() lists them all."""
    package = _sys.modules[__name__]
    return [n for n in dict.fromkeys(_public_names()) if not isinstance(getattr(package, n), type)]


def __getattr__(name: str):
    if name in _HOME:
        value = getattr(_importlib.import_module(_HOME[name], __name__), name)
    elif name == "__all__":
        value = _entry_points()
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    elif _constant(name) is not None:
        value = _constant(name)
    elif _is_type_name(name):
        value = getattr(_default_target(), name)
    else:
        try:
            value = _importlib.import_module("." + name, __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_public_names()) | set(_HIDDEN))


class _Package(_types.ModuleType):
    """Importing a submodule sets the package attribute of its name; the function ``target``
    must stay the function when the module ``d3dkmddi_py.target`` loads after it was looked up
    (an eager ``from .target import target`` got this by import order)."""

    def __setattr__(self, name, value):
        if isinstance(value, _types.ModuleType) and name in _HOME and _HOME[name] == "." + name:
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
