"""Typed events, and their fields parsed from text (tracerpt / Event Viewer XML) or from any other reader.

A value is accepted in the forms the two Windows writers use: decimal padded with spaces,
``0x`` hex in either case, ``true``/``false``/``0``/``1`` for booleans, and for a bit-map field
either a number or its names separated by ``|``, ``,`` or spaces.  A counted array (the
manifest's ``count=``) is its values as repeated <Data> elements of its name, or one element
holding them separated by spaces or commas (which of the two tracerpt writes is not confirmed),
as many as its count field says, and a Binary as many bytes as its length field says.  Any other text is, in a
trace, kept as given (``Odd.unread``) and the event read on; in a record a user gives, refused in one line naming the
event, the field, the text and what the in-type takes.  Which fields each event has is its entry's (``etw.catalog``).
"""
from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter

from ...bulk.table import INT64_MAX
from ...errors import (EtwInputError, InvalidArgument, bad_argument, integer_argument, items_argument, listed,
                      mapping_argument, shown, text_argument)
from ...jsonvalue import wide_text
from .registry import ENTRIES, ENTRY_OF, KIND_BY_NAME, KINDS, SYMBOLS, layout_of, on_change
from .schema import BOOLEAN, OPCODES, EventKind, flag_names, in_type_range
from .dxgkrnl_manifest import PROVIDER
from .templates import IN_TYPES, map_names
from ...wording import plural

_HEX = frozenset("0123456789abcdefABCDEF")
_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_SEPARATORS = str.maketrans({"|": " ", ",": " "})


class Odd:
    """How an event is not what its template says, kept on the Event for its report: the template fields its
    payload ends before (``missing``, with ``cut_at``, the payload's length), the bytes after its last field
    (``extra_bytes``), the Booleans that are neither 0 nor 1 (``booleans``, kept as their numbers), or the whole
    payload kept undecoded (``payload``) with why (``why``: "version", "id", "header", "tracerpt"); in XML, the
    <Data> names its template lacks (``names``, their texts kept in the Event's ``extra``); the fields whose value
    their in-type cannot read (``unread``: (name, the text as given, or the bytes as hex) pairs, not in the fields).
    """

    __slots__ = ("missing", "cut_at", "extra_bytes", "booleans", "payload", "why", "names", "unread")

    def __init__(self, missing=(), cut_at=None, extra_bytes=b"", booleans=(), payload=None, why="", names=(),
                 unread=()):
        self.missing = _names_of(missing, "missing")
        self.booleans, self.names = _names_of(booleans, "booleans"), _names_of(names, "names")
        if cut_at is not None:
            cut_at = integer_argument(cut_at, "Odd: cut_at", 0, INT64_MAX)
        self.cut_at = cut_at
        self.extra_bytes = _bytes_of(extra_bytes, "extra_bytes")
        self.payload = None if payload is None else _bytes_of(payload, "payload")
        if why not in _WHYS:
            raise bad_argument("Odd: why", why, "one of " + ", ".join(map(repr, _WHYS)))
        self.why = why
        if not isinstance(unread, tuple) or not all(isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], str)
                                                   and isinstance(u[1], str) for u in unread):
            raise bad_argument("Odd: unread", unread, "a tuple of (field name, its text) pairs")
        self.unread = unread

    @classmethod
    def _new(cls, missing=(), cut_at=None, extra_bytes=b"", booleans=(), payload=None, why="", names=(),
             unread=()) -> "Odd":
        """A reader's own Odd, unchecked (one per odd event read)."""
        self = _object_new(cls)
        self.missing, self.cut_at, self.extra_bytes, self.booleans = missing, cut_at, extra_bytes, booleans
        self.payload, self.why, self.names, self.unread = payload, why, names, unread
        return self

    @property
    def whole(self) -> bool:
        """Whether every field of the template is there and read (its entry can apply it); a System value
        (``System/ProcessID``) its header could not hold is no field of the template."""
        return not self.missing and not self.why and all(n.startswith(SYSTEM) for n, _t in self.unread)

    def __eq__(self, other):
        return isinstance(other, Odd) and all(getattr(self, n) == getattr(other, n) for n in Odd.__slots__)

    __hash__ = None

    def __reduce__(self):
        return Odd._new, tuple(getattr(self, n) for n in Odd.__slots__)

    def __repr__(self):
        return "Odd(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in Odd.__slots__ if getattr(self, n)) + ")"


_WHYS = ("", "version", "id", "header", "tracerpt")
SYSTEM = "System/"  # an unread name of a <System> value, never a template field's (no field name holds "/")


def _names_of(names, what: str) -> tuple:
    if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
        raise bad_argument(f"Odd: {what}", names, "a tuple of field names (str)")
    return names


def _bytes_of(data, what: str) -> bytes:
    if not isinstance(data, (bytes, bytearray)):
        raise bad_argument(f"Odd: {what}", data, "bytes")
    return bytes(data)


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

    __slots__ = ("number", "kind", "version", "fields", "time", "process_id", "thread_id", "extra", "source", "odd")

    def __init__(self, number: int, kind: EventKind, version: int, fields: dict, time: str | None = None,
                 process_id: int | None = None, thread_id: int | None = None, extra: dict | None = None,
                 source: str | None = None, odd=None):
        number = integer_argument(number, "Event: number", 1, INT64_MAX)
        kind = registered_kind(kind, "Event: kind")
        where = f"Event #{number} ({kind.label})"
        version = parse_value(version, "UInt8", "version", where)
        if not isinstance(fields, Mapping):
            raise bad_argument("Event: fields", fields, f"a dict of the fields of {kind.template}")
        fields, _extra, _odd = parse_fields(dict(fields), kind, where, version, strict=True)
        extra = mapping_argument(extra, "Event: extra", _EXTRA)
        items_argument(extra.keys(), "Event: extra", str, _EXTRA)
        text_argument(source, "Event: source", "the trace's name (a str), or None")
        time, process_id, thread_id = _system(time, process_id, thread_id, "Event")
        self.number, self.kind, self.version, self.fields = number, kind, version, fields
        self.time, self.process_id, self.thread_id = time, process_id, thread_id
        if odd is not None and not isinstance(odd, Odd):
            raise bad_argument("Event: odd", odd, "None, or an etw Odd (how a reader's event is not what its "
                                                  "template says)")
        self.extra, self.source, self.odd = extra, source, odd

    @classmethod
    def _new(cls, number: int, kind: EventKind, version: int, fields: dict, time, process_id, thread_id, extra: dict,
             source, odd=None) -> "Event":
        """An Event of a reader's own values, unchecked (one per event read)."""
        self = _object_new(cls)
        self.number, self.kind, self.version, self.fields = number, kind, version, fields
        self.time, self.process_id, self.thread_id = time, process_id, thread_id
        self.extra, self.source = extra, source  # source: the trace's name, or None for a record of another reader
        self.odd = odd  # None, or an Odd: how it is not what its template says
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
    def symbol(self) -> str:
        return self.kind.symbol

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
        return None if name is None else self.fields.get(name)  # None too where a short payload lacks it

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
        raise EtwInputError(f"{name} is {kind.label}, not an event registered now ({listed(ENTRIES)}): etw.register "
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


_DIGITS = 40  # more digits than any value of an in-type or a System number has (2**64: 20 decimal, 16 hex)
_PAST = 1 << 4 * _DIGITS  # stands for a number of more digits: past every range, never converted


def integer_of(s: str):
    """The int a stripped text writes in decimal (``-`` before it or not) or in 0x hex, or None when it writes
    none.  A number of more than ``_DIGITS`` digits (leading zeros aside) is ``_PAST`` (or minus it), out of every
    range, and never converted: no in-type holds it, and int() refuses a decimal text past 4,300 digits."""
    negative = s[:1] == "-"
    digits = s[1:] if negative else s
    if digits.isdigit() and digits.isascii():
        base = 10
    elif not negative and digits[:2] in ("0x", "0X") and len(digits) > 2 and _HEX.issuperset(digits[2:]):
        base, digits = 16, digits[2:]
    else:
        return None
    digits = digits.lstrip("0")
    value = _PAST if len(digits) > _DIGITS else int(digits or "0", base)
    return -value if negative else value


def parse_value(text, in_type: str, name: str, where: str, bit_map=None, value_map=None, booleans=None):
    """One field's value from its text (or from a Python value given by another reader).  ``bit_map``: a flag type
    or a bit map's {name: value}; ``value_map``: {name: value}.  ``booleans``: a list that takes the name of a
    Boolean given as another number (kept as that number, as a trace's reader keeps it); None: refused.  A text
    the in-type cannot read raises EtwInputError naming the field, the text and what it takes."""
    if isinstance(text, list):  # the field's <Data> element repeated
        raise _bad(where, name, _given(text),
                   f"is given {len(text)} times; a field that is not a counted array has one value")
    kind = IN_TYPES[in_type].kind
    if kind == "bool":
        return _boolean(text, name, where, booleans)
    if kind in ("unicode", "ansi", "guid", "binary", "float"):
        return _other(text, in_type, kind, name, where)
    low, top = in_type_range(in_type)
    pattern = low < 0 and top == (1 << 63) - 1  # an Int64: --json writes its bit pattern, so it is read back
    valid = f"valid {low}..{top:#x}" + (f", or its bit pattern 0x0..{2 * top + 1:#x}" if pattern else "") if low \
        else f"valid 0..{top:#x}"
    if isinstance(text, bool):
        raise _bad(where, name, text, f"is a Boolean, not a number ({in_type}, {valid})")
    if isinstance(text, int):
        value = text
    elif isinstance(text, str):
        s = text.strip()
        value = integer_of(s)
        if value is not None:
            pass
        elif bit_map is not None and s:
            value = _names(s, bit_map, name, where)
            return value if isinstance(bit_map, dict) else bit_map(value)
        elif value_map is not None and s in value_map:
            return value_map[s]  # the manifest's valueMap, by name
        elif not s:
            raise _bad(where, name, text, f"is empty; a {in_type} is a decimal or 0x-hex number ({valid})")
        elif value_map is not None:
            raise _bad(where, name, text, f"is not a number ({in_type}: decimal or 0x-hex, {valid}) or a name of its "
                                          f"value map ({', '.join(value_map)})")
        else:
            raise _bad(where, name, text, f"is not a number ({in_type}: decimal or 0x-hex, {valid})")
    else:
        raise _bad(where, name, text, f"is a {type(text).__name__}, not a number ({in_type}, {valid})")
    if pattern and top < value <= 2 * top + 1 and isinstance(text, str) and text.strip()[:2] in ("0x", "0X"):
        value -= 2 * (top + 1)
    if not low <= value <= top:
        raise _bad(where, name, text, f"is out of range for {in_type} ({valid})")
    return bit_map(value) if bit_map is not None and not isinstance(bit_map, dict) else value


def _given(text) -> str:
    """A field's text as given: a repeated element's texts joined by " | " (as its message shows them)."""
    if isinstance(text, list):
        return " | ".join("" if t is None else str(t) for t in text)
    return text if isinstance(text, str) else str(text)


def _boolean(text, name: str, where: str, booleans):
    """A Boolean: true, false, 0 or 1; another number only where the caller keeps it (``booleans``)."""
    if isinstance(text, bool):
        return text
    if isinstance(text, int):
        value = text
    elif isinstance(text, str):
        s = text.strip()
        b = _BOOLS.get(s.lower())
        if b is not None:
            return b
        value = integer_of(s)
    else:
        value = None
    if value in (0, 1):
        return value == 1
    if value is None or booleans is None or not 0 <= value <= 0xFFFFFFFF:
        raise _bad(where, name, text, "is not a Boolean (true, false, 0 or 1" +
                   (", or another number of its 32 bits)" if booleans is not None else ")"))
    booleans.append(name)
    return value


def hex_bytes(text) -> bytes | None:
    """The bytes of a hex text (two digits a byte, 0x before them or not, white space between bytes), or None when
    it is not one (an odd number of digits, a character that is no hex digit)."""
    s = text.strip()
    s = s[2:] if s[:2] in ("0x", "0X") else s
    try:
        return bytes.fromhex(s) if s.isascii() else None
    except ValueError:
        return None


def _other(text, in_type: str, kind: str, name: str, where: str):
    """A string, GUID, Binary (hex) or floating-point field from its text, or as another reader gives it."""
    if kind in ("unicode", "ansi"):
        if isinstance(text, str):
            return text
        raise _bad(where, name, text, f"is a {type(text).__name__}, not text ({in_type})")
    if kind == "binary":
        if isinstance(text, (bytes, bytearray)):
            return bytes(text)
        value = hex_bytes(text) if isinstance(text, str) else None
        if value is not None:
            return value
        raise _bad(where, name, text, "is not Binary (hex digits, two a byte, 0x before them or not)")
    if kind == "guid":
        s = text.strip().strip("{}") if isinstance(text, str) else None
        if s is not None and len(s) == 36 and _HEX.issuperset(s.replace("-", "")) and \
                [len(p) for p in s.split("-")] == [8, 4, 4, 4, 12]:
            return "{" + s.lower() + "}"
        raise _bad(where, name, text, "is not a GUID ({xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})")
    if isinstance(text, str):  # ASCII, no "_": as the numbers of the other in-types are read
        s = text.strip()
        text_ok = s.isascii() and "_" not in s
    else:
        s, text_ok = text, isinstance(text, (int, float)) and not isinstance(text, bool)
    try:
        if text_ok:
            return float(s)
    except (ValueError, OverflowError):  # OverflowError: an int past a double's range
        pass
    raise _bad(where, name, text, f"is not a number ({in_type})")


def _names(text: str, bit_map, name: str, where: str) -> int:
    members = bit_map if isinstance(bit_map, dict) else bit_map.__members__
    value = 0
    for part in text.translate(_SEPARATORS).split():
        member = members.get(part)
        if member is None:
            valid = ", ".join(members) if isinstance(bit_map, dict) else flag_names(bit_map, sum(bit_map))
            raise _bad(where, name, text, f"names {shown(part, 40)}, which is not a bit of "
                                          f"{'its bit map' if isinstance(bit_map, dict) else bit_map.__name__} "
                                          f"(valid: a number, or names among {valid})")
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
        if text.__class__ is not str or len(text) > 64:  # a long text (padding) is not kept: the exact path reads it
            raise KeyError(text)
        s = text.strip()
        if self.in_type == BOOLEAN:
            value = _BOOLS[s.lower()]
        elif s.isdigit() and s.isascii() and len(s) <= 20:  # 2**64 has 20 digits; a longer text: the exact path
            value = int(s)
        elif s[:2] == "0x" and 2 < len(s) <= 18 and _HEX.issuperset(s[2:]):
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
_FAST_KINDS = ("int", "bool", "pointer")
_TEXTS = ("unicode", "ansi", "binary")  # an element without text is an empty value of these, not a missing one


class _Whole:
    """One (event id, version)'s template fields read in one pass: the unsigned numbers' texts by one itemgetter,
    each converted through its field's cache by one map; then every other field (a counted array, a string, a
    signed number, ...) by ``parse_value``.  Any text the pass does not take goes field by field (``_each``)."""

    def __init__(self, kind: EventKind, fields: tuple):
        entry = ENTRY_OF.get(kind.event_id)
        bit_maps = entry.bit_maps if entry is not None else {}
        value_maps = entry.value_maps if entry is not None else {}
        self.plan = []  # (field, bit map, value map) of every field, in order
        fast = []
        for f in fields:
            t = IN_TYPES[f.in_type]
            bit_map, value_map = bit_maps.get(f.name), value_maps.get(f.name)
            if f.map is not None and bit_map is None and value_map is None:  # an event no entry reads: the manifest's
                map_kind, values = map_names(f.map)
                named = {n: v for v, n in values.items()}
                bit_map, value_map = (named, None) if map_kind == "bitMap" else (None, named)
            self.plan.append((f, bit_map, value_map))
            if f.count is None and t.kind in _FAST_KINDS and not t.signed:
                fast.append((f.name, _Converted(f.in_type, in_type_range(f.in_type)[1],
                                                bit_map if not isinstance(bit_map, dict) else None)))
        self.names = tuple(n for n, _c in fast)
        self.texts = itemgetter(*self.names) if len(self.names) > 1 else \
            (lambda raw, n=self.names: (raw[n[0]],)) if self.names else (lambda raw: ())
        self.converted = tuple(c for _n, c in fast)
        self.rest = tuple(row for row in self.plan if row[0].name not in self.names)
        self.fields = fields
        self.all = frozenset(f.name for f in fields)
        self.order = {f.name: i for i, f in enumerate(fields)}


_WHOLE: dict = {}  # (event id, version) -> its _Whole, made on first use


def _whole(kind: EventKind, version: int) -> _Whole | None:
    key = (kind.event_id, version)
    whole = _WHOLE.get(key, False)
    if whole is False:
        fields = layout_of(kind.event_id, version) if kind.symbol else None
        whole = None if fields is None else _Whole(kind, fields)
        if len(_WHOLE) >= 4096:
            _WHOLE.clear()
        _WHOLE[key] = whole
    return whole


on_change(_WHOLE.clear)
_CONVERT = dict.__getitem__  # with a _Converted, a miss calls its __missing__


def parse_fields(raw: dict, kind: EventKind, where: str, version: int | None = None, *,
                 strict: bool = False) -> tuple:
    """(typed template fields, fields this package does not know as text, Odd or None) of one event given by
    name (XML's <Data>, another reader's record), at ``version`` (default: the manifest's).

    A field missing (or empty), a name its template lacks, a Boolean that is neither 0 nor 1, a text its in-type
    cannot read (``unread``: not a number, past its width, a counted array or a Binary of another length than its
    count or length field says, a scalar given twice): kept and said in the Odd, as a trace's reader keeps an
    event; ``strict``: refused instead (a record a user gives).  A version without a template: nothing decoded,
    every field kept as text (no <Data> at all: an empty payload, as its .etl twin).  The common event (every field
    there, in the spellings tracerpt writes, in range) is read in one pass; any other goes field by field.
    """
    version = kind.version if version is None else version
    whole = _whole(kind, version)
    if whole is None:
        if strict:
            raise EtwInputError(f"{where}: version {version} of event {kind.event_id} has no template here (it reads "
                                f"{_versions(kind)}); give one of those", field="version")
        return {}, dict(raw), Odd._new(payload=None if raw else b"", why="version" if kind.symbol else "id",
                                       names=tuple(raw))
    booleans, unread = (None, None) if strict else ([], [])
    try:
        out = dict(zip(whole.names, map(_CONVERT, whole.converted, whole.texts(raw))))
        missing = ()
    except (KeyError, TypeError):
        out, missing = _each(raw, whole, where, booleans, unread)
    for f, bit_map, value_map in whole.rest:
        text = raw.get(f.name)
        if f.count is not None:
            if _absent(text) and (f.name in raw or _units(f.count, out) != 0):
                missing += (f.name,)
                continue
            value = _read(unread, f.name, text, _array, text, f, out, where, bit_map, value_map, booleans)
        elif IN_TYPES[f.in_type].kind in _TEXTS and f.name in raw and not isinstance(text, list):
            value = _read(unread, f.name, text, _text, text or "", f, out, where)  # an empty element: an empty one
        elif _absent(text):
            missing += (f.name,)
            continue
        else:
            value = _read(unread, f.name, text, parse_value, text, f.in_type, f.name, where, bit_map, value_map,
                          booleans)
        if value is not _UNREAD:
            out[f.name] = value
    if whole.rest:  # in the template's order, as the .etl reader gives them
        out = {f.name: out[f.name] for f in whole.fields if f.name in out}
    if missing and strict:
        raise EtwInputError(f"{where}: {len(missing)} of the {len(whole.fields)} fields of {kind.template} missing or "
                            f"None: {', '.join(missing)}", field=missing[0])
    extra = {}
    if len(raw) > len(out) + (len(unread) if unread else 0):  # a name of the raw is neither read nor unread
        extra = {name: text for name, text in raw.items() if name not in whole.all}
    odd = None
    if missing or extra or booleans or unread:
        if strict and extra:
            name = next(iter(extra))
            raise InvalidArgument(f"{where}: field {shown(name, 40)} is not one of {kind.template} ("
                                  f"{', '.join(f.name for f in whole.fields)}); give a field this package does not "
                                  f"know in extra")
        order = whole.order
        odd = Odd._new(missing=tuple(sorted(missing, key=order.__getitem__)), booleans=tuple(booleans or ()),
                       names=tuple(extra), unread=tuple(sorted(unread or (), key=lambda u: order[u[0]])))
    return out, extra, odd


_UNREAD = object()  # what _read gives for a text its field's in-type cannot read


def _read(unread, name: str, text, parse, *args):
    """``parse(*args)``; for a trace (``unread`` a list), a text it refuses is named in ``unread`` as given and
    _UNREAD returned, so the event is kept and the others read; for a record a user gives (None), refused."""
    if unread is None:
        return parse(*args)
    try:
        return parse(*args)
    except EtwInputError:
        unread.append((name, _given(text)))
        return _UNREAD


def _text(text: str, f, out: dict, where: str):
    """A string or Binary field; a Binary of another length than its length field says is refused, since in an
    .etl payload the length decides where the next field starts."""
    value = parse_value(text, f.in_type, f.name, where)
    if f.length is not None and isinstance(value, bytes):
        length = _units(f.length, out)
        if length != len(value):
            raise EtwInputError(f"{where}: field {f.name} holds {plural(len(value), 'byte')} but "
                                f"{f.length} = {length} (a Binary has exactly as many as its length field says)",
                                field=f.name)
    return value


def _versions(kind: EventKind) -> str:
    entry = ENTRY_OF.get(kind.event_id)
    return ", ".join(map(str, sorted(entry.layouts))) if entry is not None else str(kind.version)


def _absent(text) -> bool:
    return text is None or (isinstance(text, str) and not text.strip()) and not isinstance(text, list)


def _units(ref, out: dict):
    """A count or length: a number, or the value of the field that holds it (None when that was not read)."""
    if isinstance(ref, int):
        return ref
    value = out.get(ref)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _each(raw: dict, whole: _Whole, where: str, booleans, unread) -> tuple:
    """The numbers of the one-pass read, field by field: the field's cache for the common spellings,
    ``parse_value`` for any other text (a flag's names, a value map's name, "0X") and for every error; the
    missing ones named."""
    out, missing = {}, ()
    converted = dict(zip(whole.names, whole.converted))
    for f, bit_map, value_map in whole.plan:
        if f.name not in converted:
            continue
        text = raw.get(f.name)
        if _absent(text):
            missing += (f.name,)
            continue
        try:
            out[f.name] = converted[f.name][text]
        except (KeyError, TypeError):
            value = _read(unread, f.name, text, parse_value, text, f.in_type, f.name, where, bit_map, value_map,
                          booleans)
            if value is not _UNREAD:
                out[f.name] = value
    return out, missing


def _array(text, f, out: dict, where: str, bit_map, value_map, booleans) -> tuple:
    """A counted array's values: repeated elements (a list), one text of values, or another reader's list."""
    count = _units(f.count, out)
    if text is None or (isinstance(text, str) and not text.strip()):
        items = []
    elif isinstance(text, (list, tuple)):
        items = list(text)
    elif isinstance(text, str):
        items = text.translate(_SEPARATORS).split() if IN_TYPES[f.in_type].kind not in ("unicode", "ansi") else [text]
    else:
        items = [text]
    if count is None or len(items) != count:
        raise EtwInputError(f"{where}: field {f.name} holds {plural(len(items), 'value')} but "
                            f"{f.count} = {count} (a counted array has exactly as many)", field=f.name)
    odd = None if booleans is None else []
    values = tuple(parse_value(item, f.in_type, f.name, where, bit_map, value_map, odd) for item in items)
    if odd:  # named once, as the .etl reader names an array of Booleans
        booleans.append(f.name)
    return values


# ---- from any other reader
def kind_of(record: dict, where: str) -> EventKind:
    """The event a record names: an id (33), a symbol (AdapterAllocationStart_V2), or an entry's name plus
    opcode; any event of the manifest."""
    name = record.get("event", record.get("id", record.get("EventID")))
    if isinstance(name, int) and not isinstance(name, bool):
        kind = KINDS.get(name)
        if kind is None:
            raise EtwInputError(f"{where}: EventID {name} is not an event of the {PROVIDER} manifest (its ids are "
                                f"{min(KINDS)}..{max(KINDS)}, {len(KINDS)} of them)", field="event")
        return kind
    if isinstance(name, str):
        kind = SYMBOLS.get(name.strip())
        entry = ENTRIES.get(name.strip())
        if kind is None and entry is not None:
            opcodes = list(entry.opcodes.values())
            opcode = record.get("opcode", opcodes[0] if len(opcodes) == 1 else None)
            if isinstance(opcode, int) and not isinstance(opcode, bool):
                opcode = {v: k for k, v in OPCODES.items()}.get(opcode)
            kind = KIND_BY_NAME.get((entry.event, opcode))
        if kind is not None:
            return kind
    raise EtwInputError(f"{where}: event {shown(name, 60)} is not an event of the {PROVIDER} manifest (give 'event' as "
                        f"an id such as 33, a symbol such as AdapterAllocationStart_V2, or an entry's name ("
                        f"{listed(sorted(ENTRIES))}) with 'opcode')", field="event")


def from_records(records):
    """Typed events from dicts of any other ETW reader: ``{"event": 33 or "AdapterAllocationStart_V2" or
    "AdapterAllocation", "opcode": "Start", "version": 2, "fields": {...}}``, any event of the manifest.

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
        fields, extra = _record_fields(raw, kind, where, version)
        yield new_event(number, kind, version, fields,
                        *_system(record.get("time"), record.get("process_id"), record.get("thread_id"), where),
                        extra, None)


def _record_fields(raw: dict, kind: EventKind, where: str, version: int) -> tuple[dict, dict]:
    """``parse_fields`` of fields a user gives (a record of another reader, an Event built by hand): every field of
    the template there, the missing ones named all at once, since the caller's reader, not a manifest, left them
    out; names the template lacks go in ``extra`` (a record's are kept there, as text)."""
    known = {k: v for k, v in raw.items() if _known(kind, version, k)}
    fields, _extra, _odd = parse_fields(known, kind, where, version, strict=True)
    return fields, {k: v for k, v in raw.items() if k not in known}


def _known(kind: EventKind, version: int, name) -> bool:
    fields = layout_of(kind.event_id, version)
    return fields is not None and any(f.name == name for f in fields)


_HEX_KINDS = ("pointer",)


def json_value(name: str, in_type: str, value):
    """64-bit values (a signed one as its bit pattern) and pointers as ``0x`` strings (JSON numbers lose them),
    Binary as hex, a float that JSON has no number for as the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``,
    others as they are; a counted array as a list of them."""
    if value.__class__ is int:  # the common case first
        return wide_text(value) if _hex(in_type) else value
    if isinstance(value, float):
        return value if value - value == 0 else "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, tuple):
        return [json_value(name, in_type, v) for v in value]
    if isinstance(value, int):
        return wide_text(value) if _hex(in_type) else int(value)
    return value


def _hex(in_type: str) -> bool:
    """Pointers, and numbers of 64 bits, signed ones as their bit pattern (a JSON number past 2**53 is rounded by its
    readers)."""
    t = IN_TYPES.get(in_type)
    return t is not None and (t.kind == "pointer" or t.kind == "int" and t.width == 8)
