"""Printing structs the way WinDbg users read them, and as JSON.

The text form follows ``dt -r``: hex offsets, C names, ``Pos N, M Bits`` for
bitfields, nested named members indented with offsets relative to their parent, and
anonymous unions flattened.  Values are shown in hex and decimal, enumerators and set
flags by name, and the meaning and findings of a field right under it.

The JSON form is one object per record with the same keys every time.
"""
from __future__ import annotations

import enum
from functools import lru_cache

from ._records import dataclass
from ._enums import enum_text
from .errors import NotAType
from .coltext import joined_column
from .jsonvalue import hex_text, json_value
from .layout import Line, TypeLayout, read_leaf, type_layout
from .names import ENUM_CLASSES, parse_target

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


def field_values(value) -> dict[str, int]:
    """Every leaf path -> its integer value, in declaration order (every union arm)."""
    layout, raw = layout_and_bytes(value)
    return layout.values(raw)


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
            parts.append(f"{n} {severity}{'s' if n != 1 else ''}")
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


def finding_json(finding, layout: TypeLayout | None = None) -> dict:
    ref = _attr(finding, "reference")
    return {
        "rule_id": str(_attr(finding, "rule_id", "")),
        "severity": severity_text(finding),
        "field": _attr(finding, "field"),
        "value": finding_value(layout, _attr(finding, "field"), _plain(_attr(finding, "value"))),
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
    above them): a compact view for listings of many records.  A list of instances (or of
    ``decode_records`` records) gives the command line's ``decode`` text for them, titles,
    meanings and findings included (``findings``/``meanings``/``title`` then do not apply).
    """
    if isinstance(value, (list, tuple)):
        return _text_of_list(value, nonzero)
    meanings = meanings or {}
    if isinstance(value, int) and not hasattr(type(value), "_leaves_"):
        if isinstance(value, bool) or not -(1 << 31) <= value < 1 << 32:
            raise NotAType(f"render_text takes an instance, an enum value or the int of an enum (4 bytes), "
                           f"not {'a bool' if isinstance(value, bool) else f'a {value.bit_length()}-bit int'}")
        return _render_enum(value, findings, title)
    layout, raw = layout_and_bytes(value)
    return render_record(layout, layout.values(raw), findings=findings, meanings=meanings, title=title,
                         nonzero=nonzero)


def _text_of_list(items, nonzero: bool) -> str:
    """The ``decode`` text of instances (or ``decode_records`` records): titles, meanings and findings."""
    from .semantics.checks import check_record
    from .semantics.explain import meanings_of

    blocks = []
    for i, item in enumerate(items):
        value = getattr(item, "value", item)
        layout, raw = layout_and_bytes(value)
        offset = getattr(item, "offset", i * layout.size)  # instances: as if read one after another
        title = record_title(layout.c_name, layout.label, getattr(item, "index", i), offset,
                             getattr(item, "address", None), layout.size)
        blocks.append(render_record(layout, layout.values(raw), findings=check_record(layout, raw),
                                    meanings=meanings_of(layout, raw), title=title, nonzero=nonzero))
    return "\n\n".join(blocks)


def render_record(layout: TypeLayout, values: dict, *, findings=(), meanings=None, title: str | None = None,
                  nonzero: bool = False) -> str:
    """``render_text`` of one record given as its layout and its leaf values."""
    meanings = meanings or {}
    lines = layout.lines
    placed, loose = _place_findings(findings, lines)
    plan = row_plan(layout)
    if not nonzero and all(k in plan.leaf_paths for k in meanings):
        placed_lines = {path: [t for f in fs for t in _finding_lines(f, plan.pads[path])]
                        for path, fs in placed.items()}
        loose_lines = [t for f in loose for t in _finding_lines(f, "   ! ")]
        return render_row(plan, [values[leaf.path] for leaf in layout.leaves], placed_lines, loose_lines,
                          meanings, title)
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


@dataclass(frozen=True)
class RowPlan:
    """What every record of one layout prints the same way, worked out once: each line's head
    (indent, offset, padded name and kind), how its value is written, and where findings go."""

    layout: TypeLayout
    specs: tuple  # (path, leaf index or None, head, how, enum class, flags_of)
    pads: dict  # line path -> the indent of a finding printed under it
    leaf_paths: frozenset


@lru_cache(maxsize=None)
def row_plan(layout: TypeLayout) -> RowPlan:
    lines = layout.lines
    index = {leaf.path: i for i, leaf in enumerate(layout.leaves)}
    width = max((3 * line.depth + len(line.name) for line in lines), default=0)
    kind_width = max((len(line.kind) for line in lines if line.leaf is not None), default=0)
    specs, pads = [], {}
    for line in lines:
        indent = "   " + "   " * line.depth
        name = line.name.ljust(width - 3 * line.depth)
        pads[line.path] = indent + "       "
        if line.leaf is None:
            specs.append((line.path, None, f"{indent}+0x{line.offset:03x} {name} : {line.kind}", None, None, ()))
            continue
        leaf = line.leaf
        how = (("ptr8" if leaf.size == 8 else "ptr4") if is_pointer(leaf.c_type)
               else tuple(f"0x{n:x} ({n})" for n in range(1 << leaf.bit_width))
               if leaf.is_bitfield and leaf.bit_width <= 8
               else (1 << (8 * (8 if leaf.is_bitfield else leaf.size))) - 1)
        specs.append((line.path, index[line.path], f"{indent}+0x{line.offset:03x} {name} : {line.kind.ljust(kind_width)}  ",
                      how, ENUM_CLASSES.get(leaf.c_type), line.flags_of))
    return RowPlan(layout, tuple(specs), pads, frozenset(index))


def render_row(plan: RowPlan, row, placed: dict, loose: list, meanings: dict, title: str | None) -> str:
    """One record's text from its leaf values in leaf order (the fast path of ``render_record``);
    ``placed`` maps a line path to the finding lines printed under it, ``loose`` go first."""
    out = [] if title is None else [title]
    out.extend(loose)
    values = None
    for path, i, head, how, enum_cls, flags_of in plan.specs:
        if i is None:
            out.append(head)
        else:
            n = row[i]
            if type(how) is tuple:  # a narrow bitfield: every value's text is in the table
                text = how[n]
            elif how == "ptr8":
                text = f"0x{(n >> 32) & 0xFFFFFFFF:08x}`{n & 0xFFFFFFFF:08x}"
            elif how == "ptr4":
                text = f"0x{n & 0xFFFFFFFF:08x}"
            elif n >= 0:
                text = f"0x{n:x} ({n})"
            else:
                text = f"0x{n & how:x} ({n})"
            meaning = meanings.get(path)
            if enum_cls is not None:
                try:
                    text += f" {enum_cls(n).name}"
                except ValueError:
                    text += f" not a {enum_cls.__name__} value"
            elif flags_of and meaning is None:  # a meaning names the flags already
                if values is None:
                    values = dict(zip((leaf.path for leaf in plan.layout.leaves), row))
                text += f" {flag_summary(values, flags_of)}"
            if meaning is not None:
                out.append((f"{head}{text}  // {meaning}").rstrip())
            else:
                out.append(head + text)
        extra = placed.get(path)
        if extra:
            out.extend(extra)
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


def layout_text(layout: TypeLayout, label: str | None = None) -> str:
    """``d3dkmddi layout``: the dt -r table of a type without values."""
    if not isinstance(layout, TypeLayout):
        layout = layout_and_bytes(layout())[0] if isinstance(layout, type) else layout
    lines = layout.lines
    width = max((3 * line.depth + len(line.name) for line in lines), default=0)
    out = [f"{layout.c_name}  {label or layout.label}  size 0x{layout.size:x} ({layout.size}), align {layout.align}"]
    for line in lines:
        indent = "   " + "   " * line.depth
        out.append(f"{indent}+0x{line.offset:03x} {line.name.ljust(width - 3 * line.depth)} : {line.kind}")
    return "\n".join(out)


# ------------------------------------------------------------------ JSON
def target_json(tgt) -> dict:
    """A Target or a TypeLayout's target as JSON."""
    version = int(getattr(tgt, "interface_version", getattr(tgt, "version", 0)))
    return {"abi": tgt.abi, "interface_version": tgt.label.split()[1], "interface_version_value": version,
            "label": tgt.label}


def record_json(value, *, c_name: str | None = None, tgt=None, index: int = 0, offset: int = 0,
                address: int | None = None, findings=(), meanings=None) -> dict:
    """One record (an instance, or an enum value) as a JSON-safe dict; every key is always present."""
    if hasattr(type(value), "_leaves_"):
        layout, raw = layout_and_bytes(value)
        return record_json_of(layout, raw, layout.values(raw), index=index, offset=offset, address=address,
                              findings=findings, meanings=meanings)
    known = isinstance(value, enum.IntEnum) and type(value).__name__ in ENUM_CLASSES
    unnamed = type(value) is int and isinstance(c_name, str) and c_name in ENUM_CLASSES  # no enumerator has it
    if not known and not unnamed:
        raise NotAType(f"record_json takes a d3dkmddi_py instance or enum value, not {type(value).__name__}")
    raw = (int(value) & 0xFFFFFFFF).to_bytes(4, "little")  # an enum decoded on its own
    if tgt is None:  # an enum is the same on every target: name the default one (no class is built)
        name = c_name if isinstance(c_name, str) and c_name in ENUM_CLASSES else type(value).__name__
        tgt = type_layout(name, *parse_target(None))
    return {"type": c_name or type(value).__name__, "target": target_json(tgt), "index": index, "offset": offset,
            "address": None if address is None else hex_text(address), "size": 4, "bytes": raw.hex(),
            "fields": {"": int(value)}, "names": {"": value.name} if isinstance(value, enum.Enum) else {},
            "meanings": {}, "findings": [finding_json(f) for f in findings]}


@lru_cache(maxsize=None)
def _json_leaves(layout: TypeLayout) -> tuple:
    """(path, None for a JSON number or the bit mask of a "0x..." string) per leaf (see jsonvalue)."""
    from .jsonvalue import json_hex

    return tuple((leaf.path, ((1 << leaf.bit_width) - 1) if json_hex(leaf) else None) for leaf in layout.leaves)


def record_json_of(layout: TypeLayout, raw: bytes, values: dict, *, index: int = 0, offset: int = 0,
                   address: int | None = None, findings=(), meanings=None) -> dict:
    """``record_json`` of one record given as its layout, bytes and leaf values.

    Pointers, handles, addresses and 64-bit fields are ``"0x..."`` strings (see jsonvalue).
    """
    return {
        "type": layout.c_name,
        "target": target_json(layout),
        "index": index,
        "offset": offset,
        "address": None if address is None else hex_text(address),
        "size": len(raw),
        "bytes": raw.hex(),
        "fields": {path: values[path] if mask is None else f"0x{values[path] & mask:x}"
                   for path, mask in _json_leaves(layout)},
        "names": names_of(layout, values),
        "meanings": {str(k): str(v) for k, v in (meanings or {}).items()},
        "findings": [finding_json(f, layout) for f in findings],
    }


def layout_json(layout: TypeLayout, tgt=None) -> dict:
    if not isinstance(layout, TypeLayout):
        layout = layout_and_bytes(layout())[0]
    return {
        "type": layout.c_name,
        "target": target_json(layout),
        "size": layout.size,
        "align": layout.align,
        "leaves": [{"path": leaf.path, "offset": leaf.offset, "bit_offset": leaf.bit_offset,
                    "bit_width": leaf.bit_width, "c_type": leaf.c_type, "size": leaf.size,
                    "is_bitfield": leaf.is_bitfield, "signed": leaf.signed, "mask": leaf.mask}
                   for leaf in layout.leaves],
    }


__all__ = ["render_text", "record_title", "layout_text", "record_json", "layout_json", "finding_json",
           "field_values", "value_names", "format_number", "leaf_value", "target_json", "severity_text"]
