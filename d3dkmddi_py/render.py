"""What every output format says the same way: a value's number, an enumerator's name, a flag
word's set flags, a finding's plain values and tallies.

The formats build on it: ``dttext`` (the ``dt -r`` text) and ``jsonformat`` (one JSON object per
record); the tables take their cells from ``bulk.table``.
"""
from __future__ import annotations

import enum

from ._enums import enum_text
from .errors import NotAType, items_argument, mapping_argument
from .coltext import joined_column
from .jsonvalue import json_value
from .layout import TypeLayout, read_leaf, type_layout
from .names import ENUM_CLASSES
from .wording import noun

_POINTER_TYPES = ("HANDLE", "PMDL")


def is_pointer(c_type: str) -> bool:
    """Pointers and handles: addresses in the debuggee, printed in hex only."""
    return c_type.endswith("*") or c_type in _POINTER_TYPES


leaf_value = read_leaf  # the one scalar leaf reader (layout.read_leaf)


def layout_and_bytes(value) -> tuple:
    """(TypeLayout, bytes) of a d3dkmddi_py instance (or enum value): the currency of this module."""
    cls = type(value)
    own = getattr(cls, "_target_", None)
    if isinstance(own, tuple):
        return type_layout(cls._c_name_, *own), bytes(value)
    raise NotAType(f"{cls.__name__} is not a d3dkmddi_py struct (use target(...).<name> or decode())")


def findings_and_meanings(findings, meanings) -> tuple:
    """A caller's ``findings=`` (Findings, as semantics.check gives them) and ``meanings=`` (a dict, as
    semantics.field_meanings gives it, or None), checked the same for every format."""
    from .semantics._rules import Finding

    return (items_argument(findings, "findings", Finding, "a list of Finding (from semantics.check)"),
            mapping_argument(meanings, "meanings", "a dict of leaf path -> meaning (from semantics.field_meanings) "
                                                   "or None"))


def field_values(value) -> dict[str, int]:
    """Every leaf path -> its integer value, in declaration order (every union arm)."""
    layout, raw = layout_and_bytes(value)
    return layout.values(raw)


def format_number(number: int, size: int, c_type: str = "") -> str:
    """``0x485 (1157)``; pointers as WinDbg prints them (``0xfffff801`2a3b4000``)."""
    return number_texts((number,), size, is_pointer(c_type))[0]


def number_texts(values, size: int, pointer: bool = False) -> list:
    """``format_number`` of each value of a sequence (a column, or one value alone) of ``size`` bytes."""
    if pointer:
        if size == 8:
            return [f"0x{(n >> 32) & 0xFFFFFFFF:08x}`{n & 0xFFFFFFFF:08x}" for n in values]
        return [f"0x{n & 0xFFFFFFFF:08x}" for n in values]
    mask = (1 << (8 * size)) - 1
    return [f"0x{n:x} ({n})" if n >= 0 else f"0x{n & mask:x} ({n})" for n in values]


def enum_name(c_type: str, number: int) -> str | None:
    cls = ENUM_CLASSES.get(c_type)
    if cls is None:
        return None
    try:
        return cls(number).name
    except ValueError:
        return f"not a {c_type} value"


def flag_summary(values: dict, flags_of) -> str:
    """``Aperture|CpuVisible|Bank0=0x2``: the set bitfields of a flag word."""
    parts = []
    for path, width in flags_of:
        v = values.get(path, 0)
        if v:
            name = path.rsplit(".", 1)[-1]
            parts.append(name if width == 1 else f"{name}=0x{v:x}")
    return "|".join(parts) if parts else "(none set)"


def summary_column(np, columns, flags_of) -> list:
    """``flag_summary`` of every row, from the columns."""
    entries = [(columns[path], path.rsplit(".", 1)[-1] if width == 1 else
                (lambda v, name=path.rsplit(".", 1)[-1]: f"{name}=0x{v:x}")) for path, width in flags_of]
    return [text or "(none set)" for text in joined_column(np, entries, "|")]


def value_names(value) -> dict[str, str]:
    """Leaf path -> enumerator name or set-flag list, for the leaves that have one."""
    layout, raw = layout_and_bytes(value)
    return names_of(layout, layout.values(raw))


def names_of(layout: TypeLayout, values: dict) -> dict:
    out = {}
    for line in layout.lines:
        if line.leaf is None:
            continue
        name = enum_name(line.leaf.c_type, values[line.path])
        if name is not None:
            out[line.path] = name
        elif line.flags_of:
            out[line.path] = flag_summary(values, line.flags_of)
    return out


# ------------------------------------------------------------------ findings
def _attr(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _plain(value):
    """A JSON-safe copy: enums by name, tuples as lists, anything else as text."""
    if isinstance(value, enum.Enum):
        return enum_text(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def severity_text(finding) -> str:
    sev = _attr(finding, "severity", "error")
    if isinstance(sev, enum.Enum):
        sev = sev.value if isinstance(sev.value, str) else sev.name
    return str(sev).lower()


def count_severity(findings, severity: str) -> int:
    return sum(severity_text(f) == severity for f in findings)


def tally(findings, none: str = "no findings") -> str:
    """``2 errors, 1 warning``; ``none`` when there is nothing to count."""
    return tally_counts(count_severity(findings, "error"), count_severity(findings, "warning"), none)


def tally_counts(errors: int, warnings: int, none: str = "no findings") -> str:
    """``tally`` of counts already made (the sinks count a chunk's findings column-wise)."""
    parts = []
    for severity, n in (("error", errors), ("warning", warnings)):
        if n:
            parts.append(f"{n} {noun(n, severity)}")
    return ", ".join(parts) or none


def finding_value(layout, field, value):
    """A finding's value in JSON: as its field's leaf is written (hex for pointers and 64-bit fields),
    and never a number above 2**53."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    leaf = layout.by_path.get(field) if layout is not None and isinstance(field, str) else None
    if leaf is not None:
        return json_value(leaf, value)
    return value if -(1 << 53) <= value <= 1 << 53 else f"0x{value & ((1 << 64) - 1):x}"


RULE_KEY = "rule_id"  # a finding's rule id in every JSON object and table (validate's tables said "rule")
FINDING_CELLS = (RULE_KEY, "severity", "field", "message")  # a finding's row in a table, after where it is


def finding_json(finding, layout: TypeLayout | None = None) -> dict:
    ref = _attr(finding, "reference")
    return {
        RULE_KEY: str(_attr(finding, "rule_id", "")),
        "severity": severity_text(finding),
        "field": _attr(finding, "field"),
        "value": finding_value(layout, _attr(finding, "field"), _plain(_attr(finding, "value"))),
        "message": str(_attr(finding, "message", "")),
        "reference": None if ref is None else {"page": _plain(_attr(ref, "page")),
                                               "sentence": _plain(_attr(ref, "sentence"))},
    }


__all__ = ["finding_json", "RULE_KEY", "FINDING_CELLS",
           "field_values", "value_names", "format_number", "leaf_value", "severity_text"]
