"""The text format: a record as WinDbg ``dt -r`` prints it, with meanings and findings inline.

One plan per layout (each line's head and how its value is written) serves the record form
(``render_record``, ``render_row``) and the column form (``column_bodies``); record titles and
finding lines are made here too, so a change to the format touches this file only.
"""
from __future__ import annotations

import enum
from functools import lru_cache, partial

from ._records import dataclass
from .coltext import by_value, object_array
from .errors import NotAType, flag_argument, text_argument
from .introspect import compare_text, size_text as _size_text  # noqa: F401 - compare_text: the command's table
from .layout import TypeLayout, bits_text, union_arms
from .names import ENUM_CLASSES
from .render import (_attr, enum_name, finding_json, findings_and_meanings, flag_summary, format_number, is_pointer,
                     layout_and_bytes, number_texts, summary_column)


# ------------------------------------------------------------------ finding lines and titles
def finding_frame(pad: str, severity: str, rule_id: str, ref: str) -> tuple[str, str]:
    """(lead, tail): a finding under its field prints ``lead + message + tail``."""
    return f"{pad}^ {severity} {rule_id}: ", f"\n{pad}  {ref}".rstrip() if ref else ""


def reference_text(sentence, page) -> str:
    """``"sentence" (page)``: the second line of a finding."""
    return (f'"{sentence}"' if sentence else "") + (f" ({page})" if page else "")


def validate_frame(severity: str, rule_id: str, path: str, ref: str) -> tuple[str, str]:
    """(lead, tail): a finding in ``validate``'s text prints ``lead + message + tail``."""
    return f"   {severity} {rule_id} {path}: ", f"\n      {ref}"


def _finding_lines(finding, pad: str) -> list[str]:
    f = finding_json(finding)
    ref = f["reference"]
    lead, tail = finding_frame(pad, f["severity"], f["rule_id"],
                               reference_text(ref["sentence"], ref["page"]) if ref else "")
    return (lead + f["message"] + tail).split("\n")


def titles(c_name: str, label: str, start: int, offset: int, step: int, count: int, address: int | None = None,
           size: bool = True) -> list:
    """``record_title`` of ``count`` records one after another (``size``: with ", N bytes", as decode
    prints it; validate's lines go without)."""
    head, tail = f"{c_name}  {label}  [", f", {step} bytes" if size else ""
    if address is None:
        return [f"{head}{start + row}] at +0x{offset + row * step:x}{tail}" for row in range(count)]
    return [f"{head}{start + row}] at +0x{offset + row * step:x} "
            f"({format_number(address + row * step, 8, '*')[2:]}){tail}" for row in range(count)]


def record_title(c_name: str, label: str, index: int | None = None, offset: int | None = None,
                 address: int | None = None, size: int | None = None) -> str:
    """``DXGK_ALLOCATIONINFO  x64 WDDM3_2 (0x11007)  [3] at +0x108 (fffff801`2a3b4108), 88 bytes``."""
    if index is not None and offset is not None:
        return titles(c_name, label, index, offset, size or 0, 1, address, size is not None)[0]
    text = f"{c_name}  {label}"
    if index is not None:
        where = f"[{index}]"
        if address is not None:
            where += f" ({format_number(address, 8, '*')[2:]})"
        text += "  " + where
    return text + (f", {size} bytes" if size is not None else "")


# ------------------------------------------------------------------ the plan
def _from_table(table: tuple, values: list) -> list:
    return list(map(table.__getitem__, values))


@lru_cache(maxsize=None)
def _narrow_table(bit_width: int) -> tuple:
    """Every value's text of an unsigned bitfield of at most 8 bits (shared by every plan)."""
    return tuple(number_texts(range(1 << bit_width), 8))


def _enum_suffix(c_type: str, number: int) -> str:
    """What follows an enum leaf's number: its enumerator's name (render.enum_name)."""
    return " " + enum_name(c_type, number)


@dataclass(frozen=True)
class RowPlan:
    """What every record of one layout prints the same way, worked out once: each line's head
    (indent, offset, padded name and kind), how its value is written, and where findings go."""

    layout: TypeLayout
    specs: tuple  # (path, leaf index or None, head, show (values -> texts), table, enum C type, flags_of)
    pads: dict  # line path -> the indent of a finding printed under it
    leaf_paths: frozenset
    arms: dict  # leaf path -> (its union member, the others): union_arms of the layout


# ------------------------------------------------------------------ union members side by side
def arm_note(read: tuple) -> str:
    """What a union member's line says when its bytes are explained through ``read``, the other members
    with a meaning in this record, and it has none: which member the value is read as, and why."""
    names = " and ".join(read)
    return f"same bytes as {names} (one union): read as {names}, the member this record's meanings explain"


def with_arm_notes(plan: RowPlan, meanings: dict) -> dict:
    """``meanings`` of one record, plus the note of every union member with no meaning of its own whose
    bytes another member explains (RecommendedPageSize 0x1 beside Alignment 0x10000)."""
    notes = {}
    for path, (own, others) in plan.arms.items():
        if path in meanings or any(p in meanings for p in own.paths):
            continue
        read = tuple(arm.name for arm in others if any(p in meanings for p in arm.paths))
        if read:
            notes[path] = arm_note(read)
    return {**meanings, **notes} if notes else meanings


def _column_arm_notes(np, plan: RowPlan, meanings: dict, n: int) -> dict:
    """``with_arm_notes`` of columns: ``meanings`` maps a path to per-row texts (None where none) or
    (index column, text), and a note goes where the row's own member has no meaning and another has."""
    def explained(path):
        col = meanings.get(path)
        if col is None:
            return None
        if type(col) is tuple:
            return col[0] != 0
        return np.fromiter((text is not None for text in col), dtype=bool, count=n)

    out, done = dict(meanings), set()
    for path, (own, others) in plan.arms.items():
        if own.paths in done:
            continue
        done.add(own.paths)
        own_rows = [e for e in map(explained, own.paths) if e is not None]
        mine = np.logical_or.reduce(own_rows) if own_rows else np.zeros(n, dtype=bool)
        code = np.zeros(n, dtype=np.intp)
        for i, arm in enumerate(others):
            rows = [e for e in map(explained, arm.paths) if e is not None]
            if rows:
                code |= np.logical_or.reduce(rows).astype(np.intp) << i
        code[mine] = 0
        if not code.any():
            continue
        texts = {c: arm_note(tuple(a.name for i, a in enumerate(others) if c >> i & 1))
                 for c in np.unique(code).tolist() if c}
        notes = [texts.get(c) for c in code.tolist()]
        for p in own.paths:
            col = out.get(p)
            if type(col) is tuple:
                col = object_array(np, [None, col[1]])[col[0].astype(np.intp)].tolist()
            out[p] = notes if col is None else [t if t is not None else note for t, note in zip(col, notes)]
    return out


def _widths(lines, noted: frozenset) -> tuple:
    """(name column, kind column) widths of the lines printed; ``noted`` are the member headers that
    carry a meaning (they print a value column, so they count in the kind column)."""
    return (max((3 * line.depth + len(line.name) for line in lines), default=0),
            max((len(line.kind) for line in lines if line.leaf is not None or line.path in noted), default=0))


@lru_cache(maxsize=256)
def row_plan(layout: TypeLayout, widths: tuple | None = None, noted: frozenset = frozenset()) -> RowPlan:
    """The plan of every line of ``layout``, padded to ``widths`` (default: all its lines'; ``nonzero``
    pads to the lines it keeps); ``noted``: the member headers that carry a meaning."""
    lines = layout.lines
    index = {leaf.path: i for i, leaf in enumerate(layout.leaves)}
    width, kind_width = _widths(lines, noted) if widths is None else widths
    specs, pads = [], {}
    for line in lines:
        indent = "   " + "   " * line.depth
        name = line.name.ljust(width - 3 * line.depth)
        pads[line.path] = indent + "       "
        leaf = line.leaf
        if leaf is None:
            head = (f"{indent}+0x{line.offset:03x} {name} : {line.kind.ljust(kind_width)}  " if line.path in noted
                    else f"{indent}+0x{line.offset:03x} {name} : {line.kind}")
            specs.append((line.path, None, head, None, None, None, ()))
            continue
        table = _narrow_table(leaf.bit_width) if leaf.is_bitfield and leaf.bit_width <= 8 and not leaf.signed else None
        show = (partial(_from_table, table) if table is not None else
                partial(number_texts, size=8 if leaf.is_bitfield else leaf.size, pointer=is_pointer(leaf.c_type)))
        specs.append((line.path, index[line.path], f"{indent}+0x{line.offset:03x} {name} : {line.kind.ljust(kind_width)}  ",
                      show, table, leaf.c_type if leaf.c_type in ENUM_CLASSES else None, line.flags_of))
    return RowPlan(layout, tuple(specs), pads, frozenset(index), union_arms(layout))


# ------------------------------------------------------------------ a record
def render_text(value, *, findings=(), meanings=None, title: str | None = None, nonzero: bool = False) -> str:
    """The dt -r style text of one struct (or enum value), findings and meanings inline.

    ``nonzero`` keeps only lines with a non-zero value or a finding (and the headers
    above them): a compact view for listings of many records.  A list of instances (or of
    ``decode_records`` records) gives the command line's ``decode`` text for them, titles,
    meanings and findings included (``findings``/``meanings``/``title`` then do not apply).
    """
    nonzero = flag_argument(nonzero, "nonzero")
    findings, meanings = findings_and_meanings(findings, meanings)
    title = text_argument(title, "title")
    if isinstance(value, (list, tuple)):
        return _text_of_list(value, nonzero)
    if isinstance(value, int) and not hasattr(type(value), "_leaves_"):
        if isinstance(value, bool) or not -(1 << 31) <= value < 1 << 32:
            raise NotAType(f"render_text takes an instance, an enum value or the int of an enum (4 bytes), "
                           f"not {'a bool' if isinstance(value, bool) else f'a {value.bit_length()}-bit int'}")
        return render_enum(value, findings, title)
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
                  nonzero: bool = False, after=None) -> str:
    """``render_text`` of one record given as its layout and its leaf values; ``after``: line path -> more
    lines printed under that line, after its findings (what a followed pointer points to)."""
    meanings = meanings or {}
    lines = layout.lines
    placed, loose = _place_findings(findings, lines)
    keep = _kept(lines, values, placed) if nonzero else None
    noted = frozenset(line.path for line in lines if line.leaf is None and line.path in meanings)
    widths = None if keep is None else _widths([line for line, kept in zip(lines, keep) if kept], noted)
    plan = row_plan(layout, widths, noted)
    under = {path: [t for f in fs for t in _finding_lines(f, plan.pads[path])] for path, fs in placed.items()}
    for path, more in (after or {}).items():
        under[path] = under.get(path, []) + list(more)
    return render_row(plan, [values[leaf.path] for leaf in layout.leaves], under,
                      [t for f in loose for t in _finding_lines(f, "   ! ")], meanings, title, keep)


def render_row(plan: RowPlan, row, placed: dict, loose: list, meanings: dict, title: str | None,
               keep: tuple | None = None) -> str:
    """One record's text from its leaf values in leaf order; ``placed`` maps a line path to the
    finding lines printed under it, ``loose`` go first; ``keep``: a bool per line (``nonzero``)."""
    out = [] if title is None else [title]
    out.extend(loose)
    values = None
    if plan.arms:
        meanings = with_arm_notes(plan, meanings)
    specs = plan.specs if keep is None else [spec for spec, kept in zip(plan.specs, keep) if kept]
    for path, i, head, show, _table, enum_type, flags_of in specs:
        meaning = meanings.get(path)
        if i is None:
            out.append(head if meaning is None else f"{head}  // {meaning}".rstrip())
        else:
            n = row[i]
            text = show((n,))[0]
            if enum_type is not None:
                text += _enum_suffix(enum_type, n)
            elif flags_of and meaning is None:  # a meaning names the flags already
                if values is None:
                    values = dict(zip((leaf.path for leaf in plan.layout.leaves), row))
                text += f" {flag_summary(values, flags_of)}"
            out.append(head + text if meaning is None else f"{head}{text}  // {meaning}".rstrip())
        extra = placed.get(path)
        if extra:
            out.extend(extra)
    return "\n".join(out)


def _place_findings(findings, lines: list) -> tuple[dict, list]:
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


def _kept(lines: list, values: dict, placed: dict) -> tuple:
    """Per line: shown by ``nonzero`` (a non-zero value, a finding, or a header above one)."""
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
    return tuple(keep)


def render_enum(value, findings, title) -> str:
    """The text of an enum value (or the int of one)."""
    cls = type(value)
    c_type = cls.__name__ if isinstance(value, enum.Enum) else "int"
    shown = format_number(int(value), 4)
    name = value.name if isinstance(value, enum.Enum) else None
    out = [] if title is None else [title]
    out.append(f"   {c_type} : {shown}{' ' + name if name else ''}")
    for f in findings:
        out.extend(_finding_lines(f, "       "))
    return "\n".join(out)


# ------------------------------------------------------------------ columns
def column_bodies(np, plan: RowPlan, columns, meanings: dict, n: int, findings) -> list:
    """Every record's lines, built a line at a time from columns: the same text as ``render_row``.

    ``meanings``: line path -> per-row texts (None where none) or (index column, text);
    ``findings``: (path, rows, texts) in rule order, each text printed under that line in that row.
    """
    texts, where = [], {}  # per line of the plan: its text in every row; line path -> its place
    if plan.arms:
        meanings = _column_arm_notes(np, plan, meanings, n)
    for path, i, head, show, table, enum_type, flags_of in plan.specs:
        where[path] = len(texts)
        if i is None:
            texts.append([head] * n)
            continue
        col, meaning = columns[path], meanings.get(path)
        if table is not None and enum_type is None and (meaning is None or type(meaning) is tuple) \
                and not flags_of:  # a narrow bitfield: every line it can print is in a table
            note = "" if meaning is None else f"  // {meaning[1]}"
            lines = object_array(np, [head + text for text in table] + [(head + text + note).rstrip() for text in table])
            index = col.astype(np.intp)
            if meaning is not None:
                index = index + meaning[0].astype(np.intp) * len(table)
            texts.append(lines[index].tolist())
            continue
        shown = show(col.tolist())
        if type(meaning) is tuple:
            meaning = object_array(np, [None, meaning[1]])[meaning[0].astype(np.intp)].tolist()
        if enum_type is not None:
            names = by_value(np, col, partial(_enum_suffix, enum_type))
            shown = [text + name for text, name in zip(shown, names)]
        elif flags_of:  # a meaning names the flags already
            summary = summary_column(np, columns, flags_of)
            shown = [text + " " + flags if meaning is None or meaning[row] is None else text
                     for row, (text, flags) in enumerate(zip(shown, summary))]
        if meaning is None:
            texts.append([head + text for text in shown])
        else:
            texts.append([head + text if note is None else f"{head}{text}  // {note}".rstrip()
                          for text, note in zip(shown, meaning)])
    for path, rows, found in findings:  # findings under their lines, in rule order
        column = texts[where[path]]
        for row, text in zip(rows, found):
            column[row] += "\n" + text
    return ["\n".join(lines) for lines in zip(*texts)]


def layout_text(layout: TypeLayout, label: str | None = None) -> str:
    """``d3dkmddi layout``: the dt -r table of a type without values."""
    if not isinstance(layout, TypeLayout):
        layout = layout_and_bytes(layout())[0] if isinstance(layout, type) else layout
    lines = layout.lines
    width = _widths(lines, frozenset())[0]
    out = [f"{layout.c_name}  {label or layout.label}  {_size_text(layout)}"]
    for line in lines:
        indent = "   " + "   " * line.depth
        out.append(f"{indent}+0x{line.offset:03x} {line.name.ljust(width - 3 * line.depth)} : {line.kind}")
    return "\n".join(out)
