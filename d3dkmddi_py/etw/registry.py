"""The event registry: what each DxgKrnl event read here is and does, one entry an event, one call.

``register(EventEntry(...))`` states an event whole: its ids and opcodes, its template versions (field
names and in-types, as the provider's manifest gives them), the field naming its adapter, its bit maps
and counted arrays, which mirror members its fields fill (``Mapping`` rows with the evidence), how it
changes a trace's state (``apply``, a function on the Tracker), its table (columns with kinds) and its
text (a section per adapter, lines in the summary).  Every reader (XML, .etl event by event and
column-wise), the tables, the JSON and the text take them from here (volatility3's
``set_type_class``: one call says what a type does).  The entries themselves are the modules of
``etw.catalog``.

The dicts below are live views of the registry, updated in place; code that caches anything derived
from them registers a function with ``on_change``.
"""
from __future__ import annotations

import contextlib

from .._records import dataclass, field
from ..bulk.table import KINDS as COLUMN_KINDS
from ..errors import InvalidArgument
from ..span import _short
from .schema import BOOLEAN, IN_TYPE_BYTES, IN_TYPE_MAX, OPCODES, POINTER, UINT64, EventKind

# what a mirror member belongs to: the record types the events fill
ALLOCATION_TYPE = "DXGK_ALLOCATIONINFO"
USAGE_TYPE = "DXGK_ALLOCATIONUSAGEHINT"  # Version + v1 (DXGK_ALLOCATIONUSAGEINFO1)
SEGMENT = "segment descriptor"  # DXGK_SEGMENTDESCRIPTOR3 from WIN8, DXGK_SEGMENTDESCRIPTOR before
MIRROR_TYPES = (SEGMENT, ALLOCATION_TYPE, USAGE_TYPE)
FLAG_VIEW = "allocation flag view"  # Flags before WDDM2_0, FlagsWddm2 from it (the view the rules read)
# before an event's own columns, in every table: the event's number, time (and ms from the trace's start), opcode,
# process and adapter (empty for an event that names none and whose allocation was not found)
HEAD = (("number", "int"), ("time", "time"), ("ms", "float"), ("opcode", "text"), ("process", "opt"),
        ("adapter", "handle"))
MIRROR_PREFIX = {USAGE_TYPE: "UsageHint."}  # a mirror type's leaves are named with this prefix in a table


@dataclass(frozen=True)
class Mapping:
    """One event field: the mirror member it fills (None: none) and why."""

    event: str
    field: str
    mirror_type: str | None  # ALLOCATION_TYPE, USAGE_TYPE, SEGMENT, or None for a field with no mirror member
    mirror: str | None  # the leaf path it fills
    reason: str


@dataclass(frozen=True)
class Column:
    """A table column: its name, its kind (bulk.table's), and where its value comes from: an event
    field (``field``: read from an Event or column-wise from a batch), or ``value(event, applied)``,
    a function of the event and what ``apply`` returned."""

    name: str
    kind: str
    field: str | None = None
    value: object = None

    def of(self, event, applied):
        if self.value is not None:
            return self.value(event, applied)
        return _cell(event.fields.get(self.field))

    def cells(self, events, applied) -> list:
        """``of`` for each event (and what its ``apply`` returned), in one pass."""
        if self.value is not None:
            return [self.value(e, a) for e, a in zip(events, applied)]
        name = self.field
        if self.kind == "text":
            return [_cell(e.fields.get(name)) for e in events]
        return [int(f[name]) if name in f else None for f in [e.fields for e in events]]  # a number, a flag, a bool


def _cell(value):
    if isinstance(value, tuple):  # a counted array: its values, space-separated
        return " ".join(f"0x{v:x}" for v in value)
    return value if value is None or isinstance(value, str) else int(value)


@dataclass(frozen=True)
class TableSpec:
    """An event's table: after the head (number, time, opcode, process, adapter), ``columns``; with
    ``mirror``, the mirror records' leaves follow (as decode --format names them), then the event's
    errors and warnings.  Two entries may share a table when their columns are the same."""

    name: str
    columns: tuple = ()
    mirror: tuple = ()  # mirror types whose leaves follow (SEGMENT; ALLOCATION_TYPE, USAGE_TYPE)


@dataclass(frozen=True)
class StateTable:
    """A table of the trace's state at its end (a row per live allocation, per process), not of its events:
    ``rows(tracker, when)`` gives a tuple per row in ``columns``' order ((name, kind) pairs), ``when(t)``
    making an event's time as the Tracker keeps it (its reader's text, or nanoseconds) into the (time, ms)
    cells every table has."""

    name: str
    columns: tuple
    rows: object


@dataclass(frozen=True)
class EventEntry:
    """One event of the manifest (one task: Start, Stop and DCStart share an entry and a template)."""

    event: str  # the task's name (ReportSegment)
    ids: dict  # event id -> opcode (Info, Start, Stop, DCStart)
    task: int
    symbols: dict  # event id -> the manifest's symbol (ReportSegment_V1)
    versions: dict  # version -> template fields ((name, in-type), ...) in payload order
    manifest_version: int  # the manifest's version: its fields are required in XML
    templates: dict  # event id -> the manifest's template id (of the manifest's version)
    mapping: tuple  # a Mapping per field of every version
    table: TableSpec
    adapter: str | None = None  # the field holding pDxgAdapter, if any
    bit_maps: dict = field(default_factory=dict)  # field -> flag type (schema.AllocationFlag, ...)
    value_maps: dict = field(default_factory=dict)  # field -> {name: value}: the manifest's valueMap
    arrays: dict = field(default_factory=dict)  # counted array field -> the field holding its count
    apply: object = None  # apply(tracker, event) -> what the tables and JSON read, or None: no state change
    findings: object = None  # findings(tracker, event, applied) -> [Finding]
    text: object = None  # its section of the text (a section.Section); None: the default one
    rules: tuple = ()  # rule ids its own findings report (outside the record checks)
    batched: bool = False  # its findings are checked column-wise in batches (AdapterAllocation)
    unchecked: tuple = ()  # opcodes whose mirror record is not checked (a Stop: the allocation is gone)
    track: object = None  # track(np, tracker, columns, unchecked, adapters, numbers, times) -> advance(n): apply's
    # state for the next n of a batch's rows (the other events among them apply in between)
    barrier: bool = False  # it changes what batched events are checked against (ReportSegment)
    record: object = None  # record(tracker, event, applied) -> (mirror kind, bytes, adapter, checked) for --json
    json_names: dict = field(default_factory=dict)  # event field -> the record leaf whose names --json shows
    order: int = 100  # where its table and text come among the others' (the lowest first)
    state_tables: tuple = ()  # StateTable: tables of the state its events leave at the trace's end

    @property
    def fields(self) -> tuple:
        return self.versions[self.manifest_version]

    def optional(self) -> dict:
        """Fields of other versions, not in the manifest's: name -> in-type."""
        required = {n for n, _t in self.fields}
        return {n: t for v in self.versions.values() for n, t in v if n not in required}

    def kinds(self) -> list:
        return [KINDS[i] for i in self.ids]


# ---- the live views
ENTRIES: dict = {}  # event name -> EventEntry, in registration order
KINDS: dict = {}  # event id -> EventKind
KIND_BY_NAME: dict = {}  # (event, opcode) -> EventKind
TEMPLATES: dict = {}  # event -> {version: fields}
FIELDS: dict = {}  # event -> the manifest version's fields (required in XML)
OPTIONAL: dict = {}  # event -> {field: in-type} other versions add
BIT_MAPS: dict = {}  # (event, field) -> flag type
VALUE_MAPS: dict = {}  # (event, field) -> {name: value}
ARRAYS: dict = {}  # (event, field) -> its count field
SYMBOLS: dict = {}  # a symbol other readers use -> EventKind
_LISTENERS: list = []


def on_change(callback) -> None:
    """``callback()`` runs after every register and unregister (caches of derived values)."""
    _LISTENERS.append(callback)


def _problem(entry: EventEntry) -> str | None:
    """Why an entry cannot be registered, or None."""
    if not isinstance(entry, EventEntry):
        return f"register takes an EventEntry, not {type(entry).__name__}"
    if entry.event in ENTRIES:
        return f"event {entry.event} is registered already"
    taken = [i for i in entry.ids if i in KINDS]
    if taken:
        return f"event id {taken[0]} is {KINDS[taken[0]].label} already"
    if not entry.ids or set(entry.ids) != set(entry.symbols):
        return f"{entry.event}: give each event id its opcode and its symbol"
    bad_opcodes = [o for o in entry.ids.values() if o not in OPCODES]
    if bad_opcodes:
        return f"{entry.event}: opcode {bad_opcodes[0]!r} is not one of {', '.join(OPCODES)}"
    if entry.manifest_version not in entry.versions or set(entry.templates) != set(entry.ids):
        return f"{entry.event}: the manifest's version {entry.manifest_version} needs a template, and each id its name"
    types = {}
    for version, fields in entry.versions.items():
        for name, in_type in fields:
            if in_type not in IN_TYPE_MAX and in_type != BOOLEAN:
                return f"{entry.event} version {version}: field {name} has in-type {in_type!r}, not one of " \
                       f"{', '.join(list(IN_TYPE_MAX) + [BOOLEAN])}"
            if types.setdefault(name, in_type) != in_type:
                return f"{entry.event}: field {name} is {types[name]} in one version and {in_type} in another"
        names = [n for n, _t in fields]
        if len(set(names)) != len(names):
            return f"{entry.event} version {version}: a field name repeats"
        for array, count in entry.arrays.items():
            if array in names and (count not in names or names.index(count) > names.index(array)
                                   or names[-1] != array or dict(fields)[array] == BOOLEAN):
                return f"{entry.event}: the counted array {array} must be the last field, after its count {count}"
    mapped = sorted(m.field for m in entry.mapping)
    if mapped != sorted(types) or any(m.event != entry.event or not m.reason for m in entry.mapping) or \
            any(m.mirror_type not in (None,) + MIRROR_TYPES for m in entry.mapping):
        return f"{entry.event}: MAPPING must name every field of every version once, each with its reason"
    if entry.adapter is not None and entry.adapter not in dict(entry.fields):
        return f"{entry.event}: the adapter field {entry.adapter} is not a field of the manifest's version"
    if any(f not in types for f in list(entry.bit_maps) + list(entry.arrays) + list(entry.value_maps)):
        return f"{entry.event}: a bit map, value map or counted array names a field the templates lack"
    if any(not 0 <= v <= IN_TYPE_MAX.get(types[f], 1) for f, m in entry.value_maps.items() for v in m.values()):
        return f"{entry.event}: a value map holds a value its field's in-type cannot"
    spec = entry.table
    if not isinstance(spec, TableSpec) or any(c.kind not in COLUMN_KINDS or (c.field is None) == (c.value is None)
                                              or (c.field is not None and c.field not in types)
                                              for c in spec.columns):
        return f"{entry.event}: a table column needs a kind ({', '.join(COLUMN_KINDS)}) and a field or a value"
    if any(not isinstance(t, StateTable) or any(k not in COLUMN_KINDS for _n, k in t.columns) or
           t.name == spec.name or any(t.name in (o.table.name, *(u.name for u in o.state_tables))
                                      for o in ENTRIES.values()) for t in entry.state_tables):
        return f"{entry.event}: a state table is a StateTable of its own name, each column's kind one of " \
               f"{', '.join(COLUMN_KINDS)}"
    if any(c.field in entry.arrays and c.kind != "text" for c in spec.columns):
        return f"{entry.event}: a counted array's column is text (its values, space-separated)"
    for other in ENTRIES.values():
        if other.table.name == spec.name and [(c.name, c.kind) for c in other.table.columns] != \
                [(c.name, c.kind) for c in spec.columns]:
            return f"{entry.event}: table {spec.name} is {other.event}'s, with other columns"
    return None


def register(entry: EventEntry) -> EventEntry:
    """Add an event to every reader, table and renderer; returns it.  A bad entry is refused
    (errors.InvalidArgument, saying what to change) and changes nothing."""
    problem = _problem(entry)
    if problem is not None:
        raise InvalidArgument(problem)
    ENTRIES[entry.event] = entry
    ordered = sorted(ENTRIES.values(), key=lambda e: e.order)  # stable: registration order among equals
    ENTRIES.clear()
    ENTRIES.update((e.event, e) for e in ordered)
    for event_id, opcode in entry.ids.items():
        kind = EventKind(event_id, entry.event, opcode, entry.task, entry.manifest_version, entry.templates[event_id],
                         entry.adapter)
        KINDS[event_id] = KIND_BY_NAME[(entry.event, opcode)] = kind
        symbol = entry.symbols[event_id]
        SYMBOLS[symbol] = kind
        base = symbol.rsplit("_V", 1)[0]
        for version in entry.versions:  # the versioned symbols other readers print (_V2, _V3)
            SYMBOLS.setdefault(f"{base}_V{version}", kind)
        if base != entry.event:  # the task's own name takes an opcode (kind_of)
            SYMBOLS.setdefault(base, kind)
    TEMPLATES[entry.event] = dict(entry.versions)
    FIELDS[entry.event] = entry.fields
    OPTIONAL[entry.event] = entry.optional()
    BIT_MAPS.update({(entry.event, f): t for f, t in entry.bit_maps.items()})
    VALUE_MAPS.update({(entry.event, f): dict(m) for f, m in entry.value_maps.items()})
    ARRAYS.update({(entry.event, f): c for f, c in entry.arrays.items()})
    _changed()
    return entry


def unregister(event: str) -> None:
    """Remove an event registered before (a test's made-up event), by its name."""
    if not isinstance(event, str) or event not in ENTRIES:
        raise InvalidArgument(f"unregister takes the name of a registered event ({', '.join(ENTRIES)}), not "
                              f"{_short(event)}")
    entry = ENTRIES.pop(event)
    for event_id, opcode in entry.ids.items():
        del KINDS[event_id], KIND_BY_NAME[(entry.event, opcode)]
    for symbol in [s for s, k in SYMBOLS.items() if k.event == event]:
        del SYMBOLS[symbol]
    for table in (TEMPLATES, FIELDS, OPTIONAL):
        del table[event]
    for table in (BIT_MAPS, VALUE_MAPS, ARRAYS):
        for key in [k for k in table if k[0] == event]:
            del table[key]
    _changed()


@contextlib.contextmanager
def registered(entry: EventEntry):
    """``register(entry)`` for the length of a ``with`` block."""
    register(entry)
    try:
        yield entry
    finally:
        unregister(entry.event)


def _changed() -> None:
    for callback in _LISTENERS:
        callback()


def entry_of(kind: EventKind) -> EventEntry:
    return ENTRIES[kind.event]


_FIELD_KINDS = {POINTER: "handle", UINT64: "hex", BOOLEAN: "bool"}
_OPTIONAL_KINDS = {"int": "opt", "hex": "ohex"}  # the kind that also holds None; handle and bool do


def field_kind(in_type: str, optional: bool = False) -> str:
    """The table kind of a field of this in-type: pointers and handles "handle", other 64-bit words "hex",
    Booleans "bool", the rest numbers; ``optional``: a kind that holds None as well."""
    kind = _FIELD_KINDS.get(in_type, "int")
    return _OPTIONAL_KINDS.get(kind, kind) if optional else kind


def field_columns(fields, *, skip=(), optional=(), arrays=()) -> tuple:
    """A Column per template field (but ``skip``), named as the field, of its in-type's kind; a field only
    some versions have (``optional``) is of a kind that holds None (empty where the event's version lacks it),
    a counted array (``arrays``) "text" (its values, space-separated)."""
    return tuple(Column(n, "text" if n in arrays else field_kind(t, n in optional), field=n)
                 for n, t in fields if n not in skip)


def payload_bytes(in_type: str, pointer_size: int) -> int:
    return pointer_size if in_type == POINTER else IN_TYPE_BYTES[in_type]


def names(ids) -> str:
    """``ReportSegment (78), AdapterAllocation (33/34/35)``: the events of these ids, by name, in the
    catalog's order."""
    out: dict = {event: [] for event in ENTRIES}
    for i in sorted(ids):
        out[KINDS[i].event].append(str(i))
    return ", ".join(f"{event} ({'/'.join(ids)})" for event, ids in out.items() if ids)
