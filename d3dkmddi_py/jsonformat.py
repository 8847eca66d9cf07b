"""The JSON format: a record as one object with the same keys every time.

The record form (``record_json``, ``record_json_of``, and ``record_tail`` for a line) and the column
form (``column_lines``) are both here, so a change to the format touches this file only.
"""
from __future__ import annotations

import enum
import json
from functools import lru_cache
from json.encoder import encode_basestring_ascii as _json_str

from .coltext import by_value, joined_column, object_array
from .errors import NotAType, integer_argument
from .jsonvalue import hex_text, json_hex, json_mask
from .layout import TypeLayout, type_layout
from .names import ENUM_CLASSES, parse_target
from .render import RULE_KEY, enum_name, finding_json, findings_and_meanings, layout_and_bytes, names_of, \
    summary_column


def target_json(tgt) -> dict:
    """A Target or a TypeLayout's target as JSON."""
    version = int(getattr(tgt, "interface_version", getattr(tgt, "version", 0)))
    return {"abi": tgt.abi, "interface_version": tgt.label.split()[1], "interface_version_value": version,
            "label": tgt.label}


def record_json(value, *, c_name: str | None = None, tgt=None, index: int = 0, offset: int = 0,
                address: int | None = None, findings=(), meanings=None) -> dict:
    """One record (an instance, or an enum value) as a JSON-safe dict; every key is always present."""
    index, offset = integer_argument(index, "index", 0), integer_argument(offset, "offset", 0)
    if address is not None:
        integer_argument(address, "address", 0)
    findings, meanings = findings_and_meanings(findings, meanings)
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
                    "is_bitfield": leaf.is_bitfield, "signed": leaf.signed, "mask": json_mask(leaf)}
                   for leaf in layout.leaves],
    }


def layout_diff_json(diff) -> dict:
    """``layout --compare --json``: both targets (size and alignment, or why the type is absent) and every
    leaf that differs, each side's placement or null, and the aspects that differ."""
    def side(s) -> dict:
        placed = {"size": s.layout.size, "align": s.layout.align} if s.layout is not None else {"absent": s.absent}
        return {"target": target_json(s), **placed}

    def leaf(value) -> dict | None:
        return None if value is None else {"offset": value.offset, "bit_offset": value.bit_offset,
                                            "bit_width": value.bit_width, "c_type": value.c_type}

    return {"type": diff.type_name, "a": side(diff.a), "b": side(diff.b), "same": diff.same,
            "leaves": [{"path": row.path, "a": leaf(row.a), "b": leaf(row.b), "differs": list(row.differs)}
                       for row in diff.leaves]}


# ------------------------------------------------------------------ lines
def line_head(layout: TypeLayout) -> str:
    """The start of every line of one type: ``{"type": ..., "target": ..., "index": ``."""
    return f'{{"type": {_json_str(layout.c_name)}, "target": {json.dumps(target_json(layout))}, "index": '


def where_text(index: int, offset: int, address: int | None) -> str:
    """The record's place, after ``line_head``: ``index, "offset": ..., "address": ..., ``."""
    return f'{index}, "offset": {offset}, "address": {"null" if address is None else _json_str(hex_text(address))}, '


def record_tail(layout: TypeLayout, raw: bytes, values: dict, meanings: dict, findings: str) -> str:
    """A record's line after ``where_text``: what depends on its bytes alone (``findings``: the
    findings array's items, already JSON)."""
    text = json.dumps(record_json_of(layout, raw, values, meanings=meanings))
    return text.split(', "address": null, ', 1)[1][:-2] + findings + "]}"


def finding_parts(rule_id: str, severity: str, field, page, sentence) -> tuple[str, str]:
    """(head, reference) of a finding's object, encoded once; ``finding_text`` completes it."""
    head = json.dumps({RULE_KEY: rule_id, "severity": severity, "field": field})[:-1]
    return head, json.dumps({"page": page, "sentence": sentence})


def finding_text(head: str, value: str, message: str, reference: str) -> str:
    """A finding's object as ``finding_json`` has it, from parts already JSON."""
    return f'{head}, "value": {value}, "message": {message}, "reference": {reference}}}'


@lru_cache(maxsize=256)
def _field_table(np, paths: tuple):
    """Entry v: the JSON items of one-bit leaves ``paths`` whose values are the bits of v."""
    return object_array(np, [", ".join(f"{_json_str(path)}: {v >> i & 1}" for i, path in enumerate(paths))
                              for v in range(1 << len(paths))])


def column_lines(np, layout: TypeLayout, columns, meanings: dict, n: int, *, start: int, offset: int,
                 address: int | None, data: bytes, findings: list) -> list:
    """Every record's line, built a key at a time from columns: the same bytes as ``line_head``,
    ``where_text`` and ``record_tail`` give.  ``meanings``: path -> per-row texts (None where none)
    or (index column, text); ``findings``: per row the findings array's items, already JSON."""
    fields, run = [], []  # the fields object's items: a table per eight one-bit leaves, the rest per row

    def flush():
        for first in range(0, len(run), 8):
            group = run[first:first + 8]
            index = np.zeros(n, dtype=np.intp)
            for i, leaf in enumerate(group):
                index |= (columns[leaf.path] != 0).astype(np.intp) << i
            fields.append(_field_table(np, tuple(leaf.path for leaf in group))[index].tolist())
        run.clear()

    for leaf in layout.leaves:
        hexed = json_hex(leaf)
        if leaf.bit_width == 1 and not leaf.signed and not hexed:
            run.append(leaf)
            continue
        flush()
        key, values = _json_str(leaf.path), columns[leaf.path].tolist()
        if hexed:
            mask = (1 << leaf.bit_width) - 1
            fields.append([f'{key}: "0x{v & mask:x}"' for v in values])
        else:
            fields.append([f"{key}: {v}" for v in values])
    flush()
    names = []  # (key, per row text): as names_of writes them
    for line in layout.lines:
        if line.leaf is None:
            continue
        col = columns[line.path]
        if line.leaf.c_type in ENUM_CLASSES:
            names.append((line.path, by_value(np, col, lambda v, t=line.leaf.c_type: enum_name(t, v))))
        elif line.flags_of:
            names.append((line.path, summary_column(np, columns, line.flags_of)))
    if len(names) == 1:  # a flag word: its Value's set flags
        key = _json_str(names[0][0])
        name_texts = [f"{{{key}: {text}}}" for text in map(_json_str, names[0][1])]
    else:
        template = "{" + ", ".join(_json_str(path).replace("%", "%%") + ": %s" for path, _ in names) + "}"
        name_texts = [template % tuple(map(_json_str, texts)) for texts in zip(*(col for _p, col in names))] \
            if names else ["{}"] * n
    entries = []  # the meanings object's items: a table per eight flags, the rest per row
    for path, col in meanings.items():
        key = _json_str(str(path)) + ": "
        if type(col) is tuple:
            entries.append((col[0], key + _json_str(str(col[1]))))
            continue
        distinct = set(col)
        if len(distinct) * 2 > n and None not in distinct:
            entries.append((None, [key + _json_str(str(text)) for text in col]))
            continue
        memo = {text: None if text is None else key + _json_str(str(text)) for text in distinct}
        entries.append((None, list(map(memo.__getitem__, col))))
    meaning_texts = joined_column(np, entries, ", ") if entries else [""] * n
    size = layout.size
    hexed = data.hex(" ", size).split(" ")
    head = line_head(layout)
    addresses = (["null"] * n if address is None else
                 [_json_str(hex_text(address + row * size)) for row in range(n)])
    return [f'{head}{start + row}, "offset": {offset + row * size}, "address": {where}, "size": {size}, '
            f'"bytes": "{raw}", "fields": {{{", ".join(values)}}}, "names": {named}, "meanings": {{{meant}}}, '
            f'"findings": [{found}]}}'
            for row, (where, raw, values, named, meant, found) in
            enumerate(zip(addresses, hexed, zip(*fields), name_texts, meaning_texts, findings))]
