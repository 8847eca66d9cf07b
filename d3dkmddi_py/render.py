"""Printing structs the way WinDbg users read them, and as JSON.

The text form follows ``dt -r``: hex offsets, C names, ``Pos N, M Bits`` for
bitfields, nested named members indented with offsets relative to their parent, and
anonymous unions flattened.  Values are shown in hex and decimal, enumerators and set
flags by name, and the meaning and findings of a field right under it.

The JSON form is one object per record with the same keys every time.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from .layout import BitField, Leaf, Nested, RecordLayout, Scalar
from .target import ENUM_CLASSES

_POINTER_TYPES = ("HANDLE", "PMDL")


def is_pointer(c_type: str) -> bool:
    """Pointers and handles: addresses in the debuggee, printed in hex only."""
    return c_type.endswith("*") or c_type in _POINTER_TYPES


def leaf_value(raw: bytes, leaf: Leaf) -> int:
    """A leaf's value read straight from the record's bytes."""
    unit = int.from_bytes(raw[leaf.offset:leaf.offset + leaf.size], "little", signed=leaf.signed and not leaf.is_bitfield)
    if leaf.is_bitfield:
        return (unit >> leaf.bit_offset) & ((1 << leaf.bit_width) - 1)
    return unit


def field_values(value) -> dict[str, int]:
    """Every leaf path -> its integer value, in declaration order (every union arm)."""
    raw = bytes(value)
    return {leaf.path: leaf_value(raw, leaf) for leaf in type(value)._leaves_}


def format_number(number: int, size: int, c_type: str = "") -> str:
    """``0x485 (1157)``; pointers as WinDbg prints them (``0xfffff801`2a3b4000``)."""
    if is_pointer(c_type):
        if size == 8:
            return f"0x{(number >> 32) & 0xFFFFFFFF:08x}`{number & 0xFFFFFFFF:08x}"
        return f"0x{number & 0xFFFFFFFF:08x}"
    shown = number & ((1 << (8 * size)) - 1) if number < 0 else number
    return f"0x{shown:x} ({number})"


def enum_name(c_type: str, number: int) -> str | None:
    cls = ENUM_CLASSES.get(c_type)
    if cls is None:
        return None
    try:
        return cls(number).name
    except ValueError:
        return f"not a {c_type} value"


# ------------------------------------------------------------------ the line model
@dataclass(frozen=True)
class Line:
    """One printed line of a struct: a leaf, an array, or the header of a nested member."""

    depth: int
    offset: int  # relative to the enclosing named member, as dt -r prints it
    name: str
    path: str  # the leaf path (or member prefix for headers), as introspect.leaves spells it
    kind: str  # "Pos 3, 1 Bit", "UINT", "DXGK_SEGMENTBANKPREFERENCE"
    leaf: Leaf | None = None
    flags_of: tuple = ()  # for a flag word's Value: the (path, width) of its bitfields


def layout_lines(rec: RecordLayout, leaves_by_path: dict, depth: int = 0, prefix: str = "") -> list[Line]:
    """The dt -r lines of a record, anonymous unions and structs flattened."""
    out = []
    for m in rec.members:
        if isinstance(m, BitField):
            bits = f"Pos {m.bit}, {m.width} Bit{'s' if m.width != 1 else ''}"
            out.append(Line(depth, m.offset, m.name, prefix + m.name, bits, leaves_by_path[prefix + m.name]))
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


def _lines_of(cls) -> list[Line]:
    cached = _LINES.get(cls)
    if cached is None:
        cached = _LINES[cls] = layout_lines(cls._layout_, {leaf.path: leaf for leaf in cls._leaves_})
    return cached


_LINES: dict = {}


def flag_summary(values: dict, flags_of) -> str:
    """``Aperture|CpuVisible|Bank0=0x2``: the set bitfields of a flag word."""
    parts = []
    for path, width in flags_of:
        v = values.get(path, 0)
        if v:
            name = path.rsplit(".", 1)[-1]
            parts.append(name if width == 1 else f"{name}=0x{v:x}")
    return "|".join(parts) if parts else "(none set)"


def value_names(value) -> dict[str, str]:
    """Leaf path -> enumerator name or set-flag list, for the leaves that have one."""
    cls = type(value)
    values = field_values(value)
    out = {}
    for line in _lines_of(cls):
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
        return value.name
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
    parts = []
    for severity in ("error", "warning"):
        n = count_severity(findings, severity)
        if n:
            parts.append(f"{n} {severity}{'s' if n != 1 else ''}")
    return ", ".join(parts) or none


def finding_json(finding) -> dict:
    ref = _attr(finding, "reference")
    return {
        "rule_id": str(_attr(finding, "rule_id", "")),
        "severity": severity_text(finding),
        "field": _attr(finding, "field"),
        "value": _plain(_attr(finding, "value")),
        "message": str(_attr(finding, "message", "")),
        "reference": None if ref is None else {"page": _plain(_attr(ref, "page")),
                                               "sentence": _plain(_attr(ref, "sentence"))},
    }


def _finding_lines(finding, pad: str) -> list[str]:
    f = finding_json(finding)
    lines = [f"{pad}^ {f['severity']} {f['rule_id']}: {f['message']}"]
    ref = f["reference"]
    if ref and (ref["sentence"] or ref["page"]):
        sentence = f'"{ref["sentence"]}"' if ref["sentence"] else ""
        page = f" ({ref['page']})" if ref["page"] else ""
        lines.append(f"{pad}  {sentence}{page}".rstrip())
    return lines


def _place_findings(findings, lines: list[Line]) -> tuple[dict, list]:
    """Finding -> the line it belongs under: the exact path, a unique suffix, or the record."""
    paths = [line.path for line in lines]
    placed, loose = {}, []
    for f in findings:
        field = _attr(f, "field")
        target = None
        if field:
            field = str(field)
            if field in paths:
                target = field
            else:
                ends = [p for p in paths if p.endswith("." + field)]
                if len(ends) == 1:
                    target = ends[0]
        if target is None:
            loose.append(f)
        else:
            placed.setdefault(target, []).append(f)
    return placed, loose


# ------------------------------------------------------------------ text
def render_text(value, *, findings=(), meanings=None, title: str | None = None, nonzero: bool = False) -> str:
    """The dt -r style text of one struct (or enum value), findings and meanings inline.

    ``nonzero`` keeps only lines with a non-zero value or a finding (and the headers
    above them): a compact view for listings of many records.
    """
    meanings = meanings or {}
    if isinstance(value, int) and not hasattr(type(value), "_leaves_"):
        return _render_enum(value, findings, title)
    cls = type(value)
    values = field_values(value)
    lines = _lines_of(cls)
    placed, loose = _place_findings(findings, lines)
    keep = _kept(lines, values, placed, meanings) if nonzero else [True] * len(lines)
    rows = []
    for line, kept in zip(lines, keep):
        if not kept:
            continue
        text = ""
        if line.leaf is not None:
            number = values[line.path]
            text = format_number(number, line.leaf.size if not line.leaf.is_bitfield else 8, line.leaf.c_type)
            name = enum_name(line.leaf.c_type, number)
            if name is not None:
                text += f" {name}"
            elif line.flags_of and line.path not in meanings:  # a meaning names the flags already
                text += f" {flag_summary(values, line.flags_of)}"
        if line.path in meanings:
            text += f"  // {meanings[line.path]}"
        rows.append((line, text))
    width = max((3 * line.depth + len(line.name) for line, _ in rows), default=0)
    kind_width = max((len(line.kind) for line, text in rows if text), default=0)
    out = [] if title is None else [title]
    pad0 = "   "
    for f in loose:
        out.extend(_finding_lines(f, pad0 + "! "))
    for line, text in rows:
        indent = pad0 + "   " * line.depth
        name = line.name.ljust(width - 3 * line.depth)
        if text:
            out.append(f"{indent}+0x{line.offset:03x} {name} : {line.kind.ljust(kind_width)}  {text}".rstrip())
        else:
            out.append(f"{indent}+0x{line.offset:03x} {name} : {line.kind}")
        for f in placed.get(line.path, ()):
            out.extend(_finding_lines(f, indent + "       "))
    return "\n".join(out)


def _kept(lines: list[Line], values: dict, placed: dict, meanings: dict) -> list[bool]:
    keep = [False] * len(lines)
    for i, line in enumerate(lines):
        wanted = line.path in placed or (line.leaf is not None and values[line.path] != 0)
        if wanted:
            keep[i] = True
            depth = line.depth  # keep the headers of the members it sits in
            for j in range(i - 1, -1, -1):
                if lines[j].depth < depth and lines[j].leaf is None:
                    keep[j] = True
                    depth = lines[j].depth
                if depth == 0:
                    break
    return keep


def _render_enum(value, findings, title) -> str:
    cls = type(value)
    c_type = cls.__name__ if isinstance(value, enum.Enum) else "int"
    shown = format_number(int(value), 4)
    name = value.name if isinstance(value, enum.Enum) else None
    out = [] if title is None else [title]
    out.append(f"   {c_type} : {shown}{' ' + name if name else ''}")
    for f in findings:
        out.extend(_finding_lines(f, "       "))
    return "\n".join(out)


def record_title(c_name: str, label: str, index: int | None = None, offset: int | None = None,
                 address: int | None = None, size: int | None = None) -> str:
    """``DXGK_ALLOCATIONINFO  x64 WDDM3_2 (0x11007)  [3] at +0x108 (fffff801`2a3b4108), 88 bytes``."""
    parts = [f"{c_name}  {label}"]
    if index is not None:
        where = f"[{index}]"
        if offset is not None:
            where += f" at +0x{offset:x}"
        if address is not None:
            where += f" ({format_number(address, 8, '*')[2:]})"
        parts.append(where)
    text = "  ".join(parts)
    return text + (f", {size} bytes" if size is not None else "")


def layout_text(cls, label: str) -> str:
    """``d3dkmddi layout``: the dt -r table of a type without values."""
    import ctypes

    lines = _lines_of(cls)
    width = max((3 * line.depth + len(line.name) for line in lines), default=0)
    out = [f"{cls._c_name_}  {label}  size 0x{ctypes.sizeof(cls):x} ({ctypes.sizeof(cls)}), "
           f"align {ctypes.alignment(cls)}"]
    for line in lines:
        indent = "   " + "   " * line.depth
        out.append(f"{indent}+0x{line.offset:03x} {line.name.ljust(width - 3 * line.depth)} : {line.kind}")
    return "\n".join(out)


# ------------------------------------------------------------------ JSON
def target_json(tgt) -> dict:
    return {"abi": tgt.abi, "interface_version": tgt.interface_version.name,
            "interface_version_value": int(tgt.interface_version), "label": tgt.label}


def record_json(value, *, c_name: str, tgt, index: int = 0, offset: int = 0, address: int | None = None,
                findings=(), meanings=None) -> dict:
    """One record as a JSON-safe dict; every key is always present."""
    if hasattr(type(value), "_leaves_"):
        raw = bytes(value)
        fields = field_values(value)
        names = value_names(value)
    else:  # an enum decoded on its own
        raw = (int(value) & 0xFFFFFFFF).to_bytes(4, "little")
        fields = {"": int(value)}
        names = {"": value.name} if isinstance(value, enum.Enum) else {}
    return {
        "type": c_name,
        "target": target_json(tgt),
        "index": index,
        "offset": offset,
        "address": address,
        "size": len(raw),
        "bytes": raw.hex(),
        "fields": fields,
        "names": names,
        "meanings": {str(k): str(v) for k, v in (meanings or {}).items()},
        "findings": [finding_json(f) for f in findings],
    }


def layout_json(cls, tgt) -> dict:
    import ctypes

    return {
        "type": cls._c_name_,
        "target": target_json(tgt),
        "size": ctypes.sizeof(cls),
        "align": ctypes.alignment(cls),
        "leaves": [{"path": leaf.path, "offset": leaf.offset, "bit_offset": leaf.bit_offset,
                    "bit_width": leaf.bit_width, "c_type": leaf.c_type, "size": leaf.size,
                    "is_bitfield": leaf.is_bitfield, "signed": leaf.signed, "mask": leaf.mask}
                   for leaf in cls._leaves_],
    }


__all__ = ["render_text", "record_title", "layout_text", "record_json", "layout_json", "finding_json",
           "field_values", "value_names", "format_number", "leaf_value", "target_json", "severity_text"]
