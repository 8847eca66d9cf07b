"""A manifest event's payload, read field by field from its template (``model.templates``): what any DxgKrnl
event holds, whatever its template, and what of it does not fit.

A payload holds its template's fields in order, packed, with no names: numbers little-endian of their
in-type's width (a Pointer or SizeT of the event's pointer size, a Boolean 4 bytes), a counted array as many
values as its count says, a UnicodeString as UTF-16LE up to its NUL (or of its length), an AnsiString up to its
NUL, a Binary of its length.  ``decode`` never refuses a payload: it reads every field that fits and says what
did not (the fields the payload ends before, the bytes after the last field, the Booleans that are not 0 or 1),
so a reader keeps the event and reports the rest.  Nothing is allocated past the payload's own bytes: a count
that would run past its end is a field the payload ends before.
"""
from __future__ import annotations

import struct
import uuid
from typing import NamedTuple

from ..model.templates import IN_TYPES

_POINTER_CODES = {4: "I", 8: "Q"}
_SCALARS = ("int", "bool", "pointer", "float", "guid")


class Decoded(NamedTuple):
    """What ``decode`` read of a payload: the fields that fit (in template order), the names of those the payload
    ends before, the bytes after the last field, the Booleans that are neither 0 nor 1 (kept as their number),
    the byte where the first missing field would start (None when none is missing), and the fields whose bytes
    their in-type cannot read ((name, bytes as hex): a UnicodeString with an unpaired surrogate)."""

    fields: dict
    missing: tuple
    extra: bytes
    booleans: tuple
    cut_at: int | None
    unread: tuple = ()


class _NotText(bytes):
    """A string's bytes that are not text of its in-type (UTF-16 with an unpaired surrogate)."""


class Plan:
    """One template at one pointer size: one struct for its leading run of fixed-width scalars (most
    templates are nothing else), then the fields read one by one."""

    __slots__ = ("fields", "pointer", "head", "head_names", "head_booleans", "guids", "rest", "fixed")

    def __init__(self, fields: tuple, pointer_size: int):
        self.fields, self.pointer = fields, pointer_size
        codes, names = [], []
        for f in fields:
            t = IN_TYPES[f.in_type]
            if f.count is not None or t.kind not in _SCALARS:
                break
            codes.append(_POINTER_CODES[pointer_size] if t.kind == "pointer" else t.code)
            names.append(f.name)
        self.head = struct.Struct("<" + "".join(codes))
        self.head_names = tuple(names)
        self.head_booleans = tuple(f.name for f in fields[:len(names)] if IN_TYPES[f.in_type].kind == "bool")
        self.guids = tuple(f.name for f in fields[:len(names)] if IN_TYPES[f.in_type].kind == "guid")
        self.rest = fields[len(names):]
        self.fixed = not self.rest  # the payload is exactly head.size bytes

    @property
    def size(self) -> int:
        """The bytes of the fields of fixed width before the first field of variable length."""
        return self.head.size


_PLANS: dict = {}


def plan(fields: tuple, pointer_size: int) -> Plan:
    key = (fields, pointer_size)
    found = _PLANS.get(key)
    if found is None:
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        found = _PLANS[key] = Plan(fields, pointer_size)
    return found


def guid_text(raw: bytes) -> str:
    """A Windows GUID's 16 bytes (the first three groups little-endian) as ``{xxxxxxxx-...}``."""
    return "{" + str(uuid.UUID(bytes_le=bytes(raw))) + "}"


def decode(p: Plan, data, start: int, end: int) -> Decoded:
    """The fields of the payload ``data[start:end]`` by the plan ``p``."""
    size = p.head.size
    if end - start >= size:
        fields = dict(zip(p.head_names, p.head.unpack_from(data, start)))
        booleans = [n for n in p.head_booleans if fields[n] > 1] if p.head_booleans else ()
        for n in p.head_booleans:
            if fields[n] <= 1:
                fields[n] = fields[n] == 1
        for n in p.guids:
            fields[n] = guid_text(fields[n])
        if p.fixed:
            extra = bytes(data[start + size:end]) if end > start + size else b""
            return Decoded(fields, (), extra, tuple(booleans), None)
        return _walk(p, p.rest, data, start + size, end, fields, list(booleans))
    return _walk(p, p.fields, data, start, end, {}, [])


def _walk(p: Plan, fields: tuple, data, at: int, end: int, out: dict, booleans: list) -> Decoded:
    """The fields one by one from ``at``; the first that does not fit ends the reading."""
    unread = []
    for i, f in enumerate(fields):
        value, after = _field(p, f, data, at, end, out)
        if after is None:
            return Decoded(out, tuple(g.name for g in fields[i:]), b"", tuple(booleans), at, tuple(unread))
        kind = IN_TYPES[f.in_type].kind
        if kind == "bool":
            value, odd = _booleans(value)
            if odd:
                booleans.append(f.name)
        elif kind == "unicode" and (isinstance(value, _NotText) or
                                    isinstance(value, tuple) and any(isinstance(v, _NotText) for v in value)):
            unread.append((f.name, bytes(data[at:after]).hex()))
            at = after
            continue
        out[f.name] = value
        at = after
    return Decoded(out, (), bytes(data[at:end]) if end > at else b"", tuple(booleans), None, tuple(unread))


def _booleans(value):
    """A Boolean (or an array of them) as bool where it is 0 or 1; (value, whether one is not)."""
    if isinstance(value, tuple):
        items = [_booleans(v) for v in value]
        return tuple(v for v, _odd in items), any(odd for _v, odd in items)
    return (value == 1, False) if value <= 1 else (value, True)


def _units(ref, out: dict) -> int | None:
    """A count or length: a number, or the value of the field before it that holds it."""
    if ref is None or isinstance(ref, int):
        return ref
    value = out.get(ref)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _field(p: Plan, f, data, at: int, end: int, out: dict) -> tuple:
    """(value, where the next field starts) of one field at ``at``, or (None, None) when it does not fit."""
    t = IN_TYPES[f.in_type]
    n = _units(f.count, out) if f.count is not None else 1
    if n is None:
        return None, None
    if t.kind in _SCALARS:
        width = p.pointer if t.kind == "pointer" else t.width
        after = at + n * width
        if after > end:
            return None, None
        code = _POINTER_CODES[p.pointer] if t.kind == "pointer" else t.code
        if t.kind == "guid":
            values = tuple(guid_text(data[at + 16 * i:at + 16 * (i + 1)]) for i in range(n))
        else:
            values = struct.unpack_from(f"<{n}{code}", data, at)
        return (values if f.count is not None else values[0]), after
    values = []
    for _i in range(n):
        value, at = _text(t.kind, _units(f.length, out) if f.length is not None else None, f.length is not None,
                          data, at, end)
        if at is None:
            return None, None
        values.append(value)
    return (tuple(values) if f.count is not None else values[0]), at


def _text(kind: str, length, has_length: bool, data, at: int, end: int) -> tuple:
    """(value, next offset) of a UnicodeString, AnsiString or Binary at ``at``, or (None, None)."""
    if has_length and length is None:
        return None, None
    if kind == "binary":
        after = at + length
        return (bytes(data[at:after]), after) if after <= end else (None, None)
    unit = 2 if kind == "unicode" else 1
    if has_length:
        after = at + unit * length
        if after > end:
            return None, None
        raw = bytes(data[at:after])
    else:
        stop = _terminator(data, at, end, unit)
        if stop is None:
            return None, None
        raw, after = bytes(data[at:stop]), stop + unit
    if unit == 1:
        return raw.decode("latin-1"), after
    try:
        return raw.decode("utf-16-le"), after
    except UnicodeDecodeError:  # an unpaired surrogate: no text any writer can hold; its bytes are kept
        return _NotText(raw), after


def _terminator(data, base: int, end: int, unit: int) -> int | None:
    """Where the NUL that ends a string starts (a whole UTF-16 unit for a UnicodeString), or None before ``end``."""
    nul = b"\x00" * unit
    at = base
    while True:
        stop = data.find(nul, at, end)
        if stop < 0 or stop + unit > end:
            return None
        if (stop - base) % unit == 0:
            return stop
        at = stop + 1  # two zero bytes across two UTF-16 units: look on from the next byte
