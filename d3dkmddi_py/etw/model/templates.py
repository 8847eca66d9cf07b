"""The templates of the DxgKrnl events, as the provider's manifest states them (``dxgkrnl_manifest``, generated),
and the in-types their fields are of: what a payload holds, field by field, for any event id and version.

A template is a tuple of ``Field``: its name, its in-type (the manifest's ``win:`` name without the prefix), a
``count`` (a counted array: a number, or the field before it that holds the number), a ``length`` (a string or
Binary of that many units: a number or a field) and the value or bit map its numbers are named by.  ``InType``
says how many bytes a value takes (None: the event's pointer size, or a variable length) and how it is read.
"""
from __future__ import annotations

from typing import NamedTuple

from . import dxgkrnl_manifest as manifest


class InType(NamedTuple):
    """One in-type of the Windows event schema: its struct code and width (None for a pointer: 4 or 8 bytes by
    the event's header; None too for a string or Binary, whose length varies), its kind, and whether signed."""

    name: str
    code: str | None
    width: int | None
    kind: str  # int, bool, pointer, float, guid, unicode, ansi, binary
    signed: bool = False


IN_TYPES = {t.name: t for t in (
    InType("UInt8", "B", 1, "int"), InType("Int8", "b", 1, "int", True),
    InType("UInt16", "H", 2, "int"), InType("Int16", "h", 2, "int", True),
    InType("UInt32", "I", 4, "int"), InType("Int32", "i", 4, "int", True),
    InType("UInt64", "Q", 8, "int"), InType("Int64", "q", 8, "int", True),
    InType("HexInt32", "I", 4, "int"), InType("HexInt64", "Q", 8, "int"),
    InType("Boolean", "I", 4, "bool"),  # a manifest event's win:Boolean is 32 bits (0 false, 1 true)
    InType("Pointer", None, None, "pointer"), InType("SizeT", None, None, "pointer"),
    InType("Float", "f", 4, "float"), InType("Double", "d", 8, "float"),
    InType("GUID", "16s", 16, "guid"),
    InType("UnicodeString", None, None, "unicode"), InType("AnsiString", None, None, "ansi"),
    InType("Binary", None, None, "binary"),
)}
PREFIX = "win:"


class Field(NamedTuple):
    """One field of a template, in payload order."""

    name: str
    in_type: str  # a key of IN_TYPES
    count: int | str | None = None  # a counted array: how many values (a number, or the field holding it)
    length: int | str | None = None  # a string's or Binary's units (a number, or the field holding it)
    map: str | None = None  # the value or bit map naming its numbers (dxgkrnl_manifest.MAPS)

    @property
    def fixed(self) -> bool:
        """Whether every payload gives it the same bytes at a pointer size (no count, no variable length)."""
        return self.count is None and (IN_TYPES[self.in_type].code is not None or self.in_type in ("Pointer", "SizeT")
                                       or isinstance(self.length, int))


def field_of(row: tuple) -> Field:
    """A Field of a generated template row (name, win:in-type, count, length, map)."""
    name, in_type, count, length, map_name = row
    return Field(name, in_type[len(PREFIX):] if in_type.startswith(PREFIX) else in_type, count, length, map_name)


def manifest_template(tid: str | None) -> tuple:
    """The Fields of a template of the manifest (an event without one has an empty payload)."""
    return () if tid is None else tuple(field_of(row) for row in manifest.TEMPLATES[tid])


class ManifestEvent(NamedTuple):
    """One event id as the manifest states it."""

    event_id: int
    symbol: str
    version: int
    task: str
    opcode: str  # Info, Start, Stop, DCStart (the manifest's win: opcode; Info where it names none)
    level: str
    keywords: tuple
    template: str | None

    @property
    def fields(self) -> tuple:
        return manifest_template(self.template)


def manifest_event(event_id: int) -> ManifestEvent | None:
    row = manifest.EVENTS.get(event_id)
    if row is None:
        return None
    symbol, version, task, opcode, level, keywords, template = row
    return ManifestEvent(event_id, symbol, version, task, (opcode or "win:Info")[len(PREFIX):], level, keywords,
                         template)


def map_names(map_name: str) -> tuple:
    """(kind, {value: name}) of a map of the manifest: kind is valueMap or bitMap."""
    kind, values = manifest.MAPS[map_name]
    return kind, dict(values)


def keyword_mask(names) -> int:
    return sum(manifest.KEYWORDS[n] for n in names)


def check_template(fields: tuple, where: str) -> str | None:
    """Why a template cannot be read, or None: an in-type this package does not know, a count or length that
    names no field before it (or one that is not an integer), a field name given twice."""
    seen: dict = {}
    for f in fields:
        if f.in_type not in IN_TYPES:
            return f"{where}: field {f.name} has in-type {f.in_type!r}, not one of {', '.join(IN_TYPES)}"
        if f.name in seen:
            return f"{where}: field {f.name} is given twice"
        for what in ("count", "length"):
            ref = getattr(f, what)
            if isinstance(ref, str) and (ref not in seen or IN_TYPES[seen[ref]].kind != "int"):
                return f"{where}: field {f.name}'s {what} {ref} is not an integer field before it"
            if isinstance(ref, bool) or (ref is not None and not isinstance(ref, (int, str))):
                return f"{where}: field {f.name}'s {what} is {ref!r}, not a number or a field's name"
        if f.length is not None and IN_TYPES[f.in_type].kind not in ("unicode", "ansi", "binary"):
            return f"{where}: field {f.name} has a length but is a {f.in_type}, not a string or Binary"
        if f.in_type == "Binary" and f.length is None:
            return f"{where}: field {f.name} is Binary without a length"
        seen[f.name] = f.in_type
    return None
