"""Typed events, and their fields parsed from text (tracerpt / Event Viewer XML) or from any other reader.

A value is accepted in the forms the two Windows writers use: decimal padded with spaces,
``0x`` hex in either case, ``true``/``false``/``0``/``1`` for booleans, and for a bit-map field
either a number or its names separated by ``|``, ``,`` or spaces.  A counted array (the
manifest's ``count=``) is its values as repeated <Data> elements of its name, or one element
holding them separated by spaces or commas (which of the two tracerpt writes is not confirmed),
as many as its count field says.  Anything else is refused with the event number and the field.
Which fields each event has is its entry's (``etw.catalog``).
"""
from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter

from ...bulk.table import INT64_MAX
from ...errors import (EtwInputError, InvalidArgument, bad_argument, integer_argument, items_argument, mapping_argument,
                      shown, text_argument)
from ...jsonvalue import wide_text
from ..catalog import ARRAYS, BIT_MAPS, ENTRIES, FIELDS, KIND_BY_NAME, KINDS, OPTIONAL, SYMBOLS, VALUE_MAPS
from .registry import names as event_names, on_change
from .schema import BOOLEAN, FORMAT_NAME_PREFIX, IN_TYPE_MAX, OPCODES, POINTER, UINT64, EventKind, flag_names

_HEX = frozenset("0123456789abcdefABCDEF")
_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_SEPARATORS = str.maketrans({"|": " ", ",": " "})


class Event:
    """One decoded DxgKrnl event: which one, where it came from, and its fields as Python values.

    ``number`` is the 1-based position of the event in its source (every provider counted), so an
    error message and a JSON line name the same event.  ``fields`` maps each template field to an
    int (bit-map fields to AllocationFlag / UsageFlag), a bool, or, for a Stop event's Format given
    by name, the name.  ``extra`` holds fields this package does not know, as text.

    ``Event(...)`` checks what it is given as ``from_records`` checks a record (``kind`` an EventKind of an
    event registered now, every template field there and in its range, in any form ``from_records`` takes);
    the readers build theirs with ``_new``, unchecked.
    """

    __slots__ = ("number", "kind", "version", "fields", "time", "process_id", "thread_id", "extra", "source")

    def __init__(self, number: int, kind: EventKind, version: int, fields: dict, time: str | None = None,
                 process_id: int | None = None, thread_id: int | None = None, extra: dict | None = None,
                 source: str | None = None):
        number = integer_argument(number, "Event: number", 1, INT64_MAX)
        kind = registered_kind(kind, "Event: kind")
        where = f"Event #{number} ({kind.label})"
        version = parse_value(version, "UInt8", "version", where)
        if not isinstance(fields, Mapping):
            raise bad_argument("Event: fields", fields, f"a dict of the fields of {kind.template}")
        fields, unknown = _record_fields(dict(fields), kind, where)
        if unknown:
            raise InvalidArgument(f"{where}: field {shown(next(iter(unknown)), 40)} is not one of {kind.template} "
                                  f"({', '.join(n for n, _t in FIELDS[kind.event])}); give a field this package does "
                                  f"not know in extra")
        extra = mapping_argument(extra, "Event: extra", _EXTRA)
        items_argument(extra.keys(), "Event: extra", str, _EXTRA)
        text_argument(source, "Event: source", "the trace's name (a str), or None")
        time, process_id, thread_id = _system(time, process_id, thread_id, "Event")
        self.number, self.kind, self.version, self.fields = number, kind, version, fields
        self.time, self.process_id, self.thread_id = time, process_id, thread_id
        self.extra, self.source = extra, source

    @classmethod
    def _new(cls, number: int, kind: EventKind, version: int, fields: dict, time, process_id, thread_id, extra: dict,
             source) -> "Event":
        """An Event of a reader's own values, unchecked (one per event read)."""
        self = _object_new(cls)
        self.number, self.kind, self.version, self.fields = number, kind, version, fields
        self.time, self.process_id, self.thread_id = time, process_id, thread_id
        self.extra, self.source = extra, source  # source: the trace's name, or None for a record of another reader
        return self

    def __reduce__(self):  # every pickle protocol, 0 and 1 too (slots alone need protocol 2)
        return Event._new, tuple(getattr(self, name) for name in Event.__slots__)

    def __eq__(self, other):
        if not isinstance(other, Event):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None

    def __repr__(self):
        adapter = self.adapter
        return f"Event(#{self.number} {self.kind.label}, version {self.version}" + \
            (f", adapter 0x{adapter:x})" if adapter is not None else ")")

    @property
    def event(self) -> str:
        return self.kind.event

    @property
    def opcode(self) -> str:
        return self.kind.opcode

    @property
    def event_id(self) -> int:
        return self.kind.event_id

    @property
    def adapter(self) -> int | None:
        """The pDxgAdapter the event names, or None for an event that names none (its entry says which field)."""
        name = self.kind.adapter
        return None if name is None else self.fields[name]

    def where(self) -> str:
        if self.source is None:
            return f"record #{self.number} ({self.kind.label})"
        return f"{self.source}: event #{self.number} ({self.kind.label})"


_EXTRA = "a dict of the fields this package does not know by their names (strs), or None"
new_event = Event._new  # the readers' constructor: one per event read, unchecked
_object_new = object.__new__


def registered_kind(kind, name: str) -> EventKind:
    """``kind`` when it is the EventKind of an event registered now (what the per-event machinery reads)."""
    if not isinstance(kind, EventKind):
        raise bad_argument(name, kind, "an EventKind of an event registered now (a value of etw.KINDS)")
    if KINDS.get(kind.event_id) != kind:
        raise EtwInputError(f"{name} is {kind.label}, not an event registered now ({', '.join(ENTRIES)}): etw.register "
                            f"its entry first")
    return kind


def _system(time, process_id, thread_id, at: str) -> tuple:
    """(time, process id, thread id) of an event a user gives (an Event, a record of another reader): text or None,
    and the two ids 32-bit or None."""
    text_argument(time, f"{at}: time", "the event's time as text (ISO 8601), or None")
    ids = tuple(None if value is None else integer_argument(value, f"{at}: {name}", 0, 0xFFFFFFFF)
                for name, value in (("process_id", process_id), ("thread_id", thread_id)))
    return (time, *ids)


def _bad(where: str, name: str, text, what: str) -> EtwInputError:
    value = text.strip() if isinstance(text, str) else text
    return EtwInputError(f"{where}: field {name} = {shown(value)} {what}", field=name)  # one line: an array's too


def parse_value(text, in_type: str, name: str, where: str, bit_map=None, value_map=None):
    """One field's value from its text (or from a Python int/bool given by another reader)."""
    if isinstance(text, list):  # the field's <Data> element repeated
        raise _bad(where, name, " | ".join(map(str, text)),
                   f"is given {len(text)} times; a field that is not a counted array has one value")
    if isinstance(text, bool):
        if in_type == BOOLEAN:
            return text
        raise _bad(where, name, text, f"is a Boolean, not a number ({in_type})")
    if isinstance(text, int) and in_type == BOOLEAN:
        if text in (0, 1):
            return bool(text)
        raise _bad(where, name, text, "is not a Boolean (true, false, 0 or 1)")
    if isinstance(text, int):
        value = text
    elif isinstance(text, str):
        s = text.strip()
        if in_type == BOOLEAN:
            b = _BOOLS.get(s.lower())
            if b is None:
                raise _bad(where, name, text, "is not a Boolean (true, false, 0 or 1)")
            return b
        if s.isdigit() and s.isascii():
            value = int(s)
        elif s[:2] in ("0x", "0X") and len(s) > 2 and _HEX.issuperset(s[2:]):
            value = int(s[2:], 16)
        elif bit_map is not None and s:
            return bit_map(_names(s, bit_map, name, where))
        elif value_map is not None and s in value_map:
            return value_map[s]  # the manifest's valueMap, by name
        elif name == "Format" and s.startswith(FORMAT_NAME_PREFIX) and s.isidentifier():
            return s  # the Stop template's D3DFormat value map, rendered by name
        elif not s:
            raise _bad(where, name, text, f"is empty; a {in_type} is a decimal or 0x-hex number")
        elif value_map is not None:
            raise _bad(where, name, text, f"is not a number ({in_type}: decimal or 0x-hex) or a name of its value map "
                                          f"({', '.join(value_map)})")
        else:
            raise _bad(where, name, text, f"is not a number ({in_type}: decimal or 0x-hex)")
    else:
        raise _bad(where, name, text, f"is a {type(text).__name__}, not a number ({in_type})")
    top = IN_TYPE_MAX[in_type]
    if not 0 <= value <= top:
        raise _bad(where, name, text, f"is out of range for {in_type} (valid 0..{top:#x})")
    return bit_map(value) if bit_map is not None else value


def _names(text: str, bit_map, name: str, where: str) -> int:
    value = 0
    for part in text.translate(_SEPARATORS).split():
        member = bit_map.__members__.get(part)
        if member is None:
            raise _bad(where, name, text, f"names {part!r}, which is not a bit of {bit_map.__name__} "
                                          f"(valid: a number, or names among {flag_names(bit_map, sum(bit_map))})")
        value |= member
    return value


_FLAG_CACHE: dict = {}  # (bit map, value) -> member; IntFlag values are immutable


def _flag(bit_map, value: int):
    key = (bit_map, value)
    member = _FLAG_CACHE.get(key)
    if member is None:
        member = bit_map(value)
        if len(_FLAG_CACHE) < 65536:
            _FLAG_CACHE[key] = member
    return member


class _Converted(dict):
    """One template field's texts -> values, for the spellings tracerpt writes (decimal padded with
    spaces, lower-case 0x hex, true/false); any other text, or a value out of range, is a KeyError, and
    the exact path decides.  Bounded: pointers rarely repeat."""

    def __init__(self, in_type: str, top: int, bit_map):
        super().__init__()
        self.in_type, self.top, self.bit_map = in_type, top, bit_map

    def __missing__(self, text):
        if text.__class__ is not str:
            raise KeyError(text)
        s = text.strip()
        if self.in_type == BOOLEAN:
            value = _BOOLS[s.lower()]
        elif s.isdigit() and s.isascii():
            value = int(s)
        elif s[:2] == "0x" and len(s) > 2 and _HEX.issuperset(s[2:]):
            value = int(s[2:], 16)
        else:
            raise KeyError(text)
        if self.in_type != BOOLEAN:
            if value > self.top:
                raise KeyError(text)
            if self.bit_map is not None:
                value = _flag(self.bit_map, value)
        if len(self) >= VALUES_KEPT:
            self.clear()
        self[text] = value
        return value


VALUES_KEPT = 512


def _plan(event: str) -> tuple:
    """(name, in-type, bit map, values converted) per template field but the counted arrays.  A trace
    repeats most values (0, the adapter, the flags): each field keeps the values it converted by their
    exact text, up to VALUES_KEPT, so a repeat is one dict lookup."""
    rows = []
    for name, in_type in FIELDS[event]:
        if (event, name) in ARRAYS:
            continue
        bit_map = BIT_MAPS.get((event, name))
        rows.append((name, in_type, bit_map, _Converted(in_type, IN_TYPE_MAX.get(in_type), bit_map),
                     VALUE_MAPS.get((event, name))))
    return tuple(rows)


class _Whole:
    """An event's template fields read in one pass: their texts by one itemgetter, each converted
    through its field's cache by one map; then its counted arrays."""

    def __init__(self, event: str):
        plan = _plan(event)
        self.plan = plan
        self.names = tuple(row[0] for row in plan)
        self.texts = itemgetter(*self.names) if len(self.names) > 1 else (lambda raw, n=self.names: (raw[n[0]],))
        self.converted = tuple(row[3] for row in plan)
        self.arrays = tuple((n, t, ARRAYS[(event, n)]) for n, t in FIELDS[event] if (event, n) in ARRAYS)
        self.fields = len(FIELDS[event])


_WHOLE: dict = {}  # event -> its _Whole, made on first use


def _whole(event: str) -> _Whole:
    whole = _WHOLE.get(event)
    if whole is None:
        whole = _WHOLE[event] = _Whole(event)
    return whole


on_change(_WHOLE.clear)
_CONVERT = dict.__getitem__  # with a _Converted, a miss calls its __missing__


def parse_fields(raw: dict, kind: EventKind, where: str) -> tuple[dict, dict]:
    """(typed template fields, unknown extra fields as text) of one event; every template field is required.

    The common event (every field there, in the spellings tracerpt writes, in range) is read in one
    pass; any other, and every error, goes field by field through ``parse_value``.
    """
    whole = _whole(kind.event)
    try:
        out = dict(zip(whole.names, map(_CONVERT, whole.converted, whole.texts(raw))))
    except (KeyError, TypeError):
        out = _each(raw, kind, where, whole)
    for name, in_type, count in whole.arrays:
        out[name] = _array(raw.get(name), in_type, name, out[count], count, where)
    extra = {}
    if len(raw) > len(out):
        optional = OPTIONAL[kind.event]
        for name, text in raw.items():
            if name in out:
                continue
            if name in optional:
                out[name] = parse_value(text, optional[name], name, where)
            else:
                extra[name] = text
    return out, extra


def _each(raw: dict, kind: EventKind, where: str, whole: _Whole) -> dict:
    """Field by field: the field's cache for the common spellings, ``parse_value`` for any other text
    (a flag's names, a Format by name, "0X") and for every error."""
    out = {}
    for name, in_type, bit_map, converted, value_map in whole.plan:
        text = raw.get(name)
        if text is None:
            present = sum(1 for n, _t in FIELDS[kind.event] if raw.get(n) is not None)
            missing = "is missing" if name not in raw else "is empty"
            raise EtwInputError(f"{where}: field {name} {missing} (the event has {present} of the "
                                f"{whole.fields} fields of {kind.template}); decode the trace with the "
                                f"Microsoft-Windows-DxgKrnl manifest (tracerpt on the machine that recorded it)",
                                field=name)
        try:
            out[name] = converted[text]
        except (KeyError, TypeError):
            out[name] = parse_value(text, in_type, name, where, bit_map, value_map)
    if kind.opcode != "Stop" and isinstance(out.get("Format"), str):
        raise _bad(where, "Format", out["Format"], "is not a number (UInt32: decimal or 0x-hex)")
    return out


def _array(text, in_type: str, name: str, count: int, count_name: str, where: str) -> tuple:
    """A counted array's values: repeated elements (a list), one text of values, or another reader's list."""
    if text is None or (isinstance(text, str) and not text.strip()):
        items = []
    elif isinstance(text, (list, tuple)):
        items = list(text)
    elif isinstance(text, str):
        items = text.translate(_SEPARATORS).split()
    else:
        items = [text]
    if len(items) != count:
        raise EtwInputError(f"{where}: field {name} holds {len(items)} value{'s' if len(items) != 1 else ''} but "
                            f"{count_name} = {count} (a counted array has exactly as many)", field=name)
    return tuple(parse_value(item, in_type, name, where) for item in items)


# ---- from any other reader
def kind_of(record: dict, where: str) -> EventKind:
    """The event a record names: an id (33), a symbol (AdapterAllocationStart_V2), or a name plus opcode."""
    name = record.get("event", record.get("id", record.get("EventID")))
    if isinstance(name, int) and not isinstance(name, bool):
        kind = KINDS.get(name)
        if kind is None:
            raise EtwInputError(f"{where}: EventID {name} is not one of {', '.join(map(str, sorted(KINDS)))} "
                                f"({event_names(KINDS)})", field="event")
        return kind
    if isinstance(name, str):
        kind = SYMBOLS.get(name.strip())
        entry = ENTRIES.get(name.strip())
        if kind is None and entry is not None:
            opcodes = list(entry.ids.values())
            opcode = record.get("opcode", opcodes[0] if len(opcodes) == 1 else None)
            if isinstance(opcode, int) and not isinstance(opcode, bool):
                opcode = {v: k for k, v in OPCODES.items()}.get(opcode)
            kind = KIND_BY_NAME.get((entry.event, opcode))
        if kind is not None:
            return kind
    raise EtwInputError(f"{where}: event {name!r} is not one of {', '.join(sorted(ENTRIES))} with one of their "
                        f"opcodes (give 'event' as an id such as 33, a symbol such as AdapterAllocationStart_V2, or "
                        f"a name with 'opcode')", field="event")


def from_records(records):
    """Typed events from dicts of any other ETW reader: ``{"event": 33 or "AdapterAllocationStart_V2" or
    "AdapterAllocation", "opcode": "Start", "version": 2, "fields": {...}}``.

    Field values may be ints, bools or the text forms the XML reader takes.  Records are numbered
    from 1 in the order given; a bad one raises EtwInputError naming its number and field.
    """
    if isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise EtwInputError(f"records must be an iterable of dicts, not {type(records).__name__}")
    for number, record in enumerate(records, 1):
        where = f"record #{number}"
        if not isinstance(record, dict):
            raise EtwInputError(f"{where}: a record is a dict with 'event', 'version' and 'fields', not a "
                                f"{type(record).__name__}")
        kind = kind_of(record, where)
        where = f"record #{number} ({kind.label})"
        raw = record.get("fields")
        if not isinstance(raw, dict):
            raise EtwInputError(f"{where}: 'fields' must be a dict of field name -> value", field="fields")
        version = record.get("version", kind.version)
        version = parse_value(version, "UInt8", "version", where)
        fields, extra = _record_fields(raw, kind, where)
        yield new_event(number, kind, version, fields,
                        *_system(record.get("time"), record.get("process_id"), record.get("thread_id"), where),
                        extra, None)


def _record_fields(raw: dict, kind: EventKind, where: str) -> tuple[dict, dict]:
    """``parse_fields`` of fields a user gives (a record of another reader, an Event built by hand): the missing
    ones named all at once, since the caller's reader, not a manifest, left them out."""
    missing = [name for name, _in_type in FIELDS[kind.event] if raw.get(name) is None
               and (kind.event, name) not in ARRAYS]
    if missing:
        raise EtwInputError(f"{where}: {len(missing)} of the {len(FIELDS[kind.event])} fields of "
                            f"{kind.template} missing or None: {', '.join(missing)}", field=missing[0])
    return parse_fields(raw, kind, where)


def json_value(name: str, in_type: str, value):
    """64-bit values and pointers as ``0x`` strings (JSON numbers lose them); others as they are; a
    counted array as a list of them."""
    if value.__class__ is int:  # the common case first
        return wide_text(value) if in_type in _HEX_TYPES else value
    if in_type in _HEX_TYPES and isinstance(value, int):
        return wide_text(value)
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return [json_value(name, in_type, v) for v in value]
    return int(value)


_HEX_TYPES = (UINT64, POINTER)
