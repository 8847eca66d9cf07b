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
import enum
import functools
import operator
import re
from functools import cached_property

from ..._records import dataclass, field
from ...bulk.table import KINDS as COLUMN_KINDS
from ...errors import (D3dkmddiError, InvalidArgument, bad_argument, choice_argument, flag_argument, integer_argument,
                      items_argument, listed, mapping_argument, name_argument, text_argument)
from ...jsonvalue import wide_text
from ...names import InterfaceVersion, parse_version
from ...span import _short
from .dxgkrnl_manifest import EVENTS as MANIFEST_EVENTS, PROVIDER as PROVIDER_NAME, TASKS
from .schema import OPCODES, EventKind
from .state import PART_ATTRIBUTES, SERIES_GROUPS, AdapterTrace
from .templates import IN_TYPES, Field, check_template, manifest_event, map_names

# what a mirror member belongs to: the record types the events fill
ALLOCATION_TYPE = "DXGK_ALLOCATIONINFO"
USAGE_TYPE = "DXGK_ALLOCATIONUSAGEHINT"  # Version + v1 (DXGK_ALLOCATIONUSAGEINFO1)
SEGMENT = "segment descriptor"  # DXGK_SEGMENTDESCRIPTOR3 from WIN8, DXGK_SEGMENTDESCRIPTOR before
MIRROR_TYPES = (SEGMENT, ALLOCATION_TYPE, USAGE_TYPE)
# the entry whose fields each mirror type is packed from (etw.mapping.Packer): the entry whose table shows that
# record (one entry a mirror type), kept with the registry
PACKED_BY: dict = {}


def descriptor_type(version) -> str:
    """The descriptor the event fills: DESCRIPTOR3 (it has SystemMemoryEndAddress) from WIN8."""
    return "DXGK_SEGMENTDESCRIPTOR3" if parse_version(version) >= InterfaceVersion.WIN8 else "DXGK_SEGMENTDESCRIPTOR"
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


class Applied:
    """A ``Column.value`` that is one attribute of what ``apply`` returned (a NamedTuple's field): the tables read
    it for a whole chunk at once, with no Python call per row."""

    __slots__ = ("attribute", "get")

    def __init__(self, attribute: str):
        self.attribute = name_argument(attribute, "Applied: attribute", "the attribute's name (a str)")
        self.get = operator.attrgetter(attribute)

    def __call__(self, event, applied):
        return self.get(applied)

    def __repr__(self) -> str:
        return f"Applied({self.attribute!r})"


@dataclass(frozen=True)
class Column:
    """A table column: its name, its kind (bulk.table's), and where its value comes from: an event
    field (``field``: read from an Event or column-wise from a batch), or ``value(event, applied)``,
    a function of the event and what ``apply`` returned.  Checked when built: the tables make its cells
    for every chunk unchecked."""

    name: str
    kind: str
    field: str | None = None
    value: object = None

    def __post_init__(self):
        name_argument(self.name, "Column: name", "a column's name (a str)")
        choice_argument(self.kind, f"Column {self.name}: kind", COLUMN_KINDS)
        text_argument(self.field, f"Column {self.name}: field", "an event field's name (a str) or None")
        _function(self.value, f"Column {self.name}: value", "event, applied")
        if (self.field is None) == (self.value is None):
            raise InvalidArgument(f"Column {self.name}: give it a field or a value function, one of the two")

    def _values(self, events, applied) -> list:
        """The column's value of each event (and what its ``apply`` returned), before the cell rule: a field the
        event lacks (its version's template has none, or its in-type could not read it) is None."""
        if self.value.__class__ is Applied:
            return list(map(self.value.get, applied))
        if self.value is not None:
            return [self.value(e, a) for e, a in zip(events, applied)]
        name = self.field
        return [e.fields.get(name) for e in events]

    def _cells(self, events, applied, elements=None) -> list:
        """The column's cell of each event, by ``cells``; ``elements``: its entry's ``elements``."""
        return cells(self._values(events, applied), self.kind, (elements or {}).get(self.field))


# ---- the one cell rule, for every table of events (an entry's, a kind's; scalars and counted arrays)
_BOOLS = {0: False, 1: True}  # False and True are equal to 0 and 1, so they find themselves
_HEX_KINDS = frozenset(("hex", "ohex", "handle", "shex"))


def cells(values: list, kind: str, element: str | None = None) -> list:
    """The table cells of a column of ``kind`` (bulk.table's) from its values: numbers as
    they are (the kind writes signed ones decimal, unsigned as it says), a Boolean ``True``/``False`` and one that is
    neither 0 nor 1 empty (its number is in --json and its report), a float that is not finite (NaN, inf) empty, None
    (a field the event's version lacks, or one its in-type cannot read: Odd.unread) empty, never ``int()`` of a float.
    A ``text`` column holds a string, a Binary as hex, a counted array as its values separated by spaces, each as
    ``element`` (the kind its field's in-type gives one value, ``field_kind``) writes it in text: decimal, ``0x...``
    for the hex kinds, ``true``/``false``, a float's shortest round trip; a value that would be an empty cell alone
    is an empty item there (two spaces, or one at the end), so every value keeps its place."""
    if kind == "bool":
        return [_BOOLS.get(v) if v.__class__ is not float else None for v in values]
    if kind == "float":
        return [v if v is None or v - v == 0 else None for v in values]  # v - v is NaN for NaN and +-inf
    if kind == "text":
        return [v if v is None or v.__class__ is str else _text(v, element) for v in values]
    return values


def _text(value, element: str | None) -> str | None:
    """A value of a text column that is not a string: a counted array, Binary, or a number."""
    if isinstance(value, tuple):
        return " ".join(_item(v, element) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return _item(value, element)


def _item(value, kind: str | None) -> str:
    """One value as text, as a cell of ``kind`` holds it ("" where that cell would be empty)."""
    if value is None:
        return ""
    if kind == "bool" or value.__class__ is bool:
        found = _BOOLS.get(value) if value.__class__ is not float else None
        return "" if found is None else "true" if found else "false"
    if value.__class__ is float or kind == "float":
        return repr(float(value)) if value - value == 0 else ""
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, int):
        return wide_text(value) if kind == "shex" else \
            f"0x{value:x}" if kind in _HEX_KINDS and value >= 0 else str(int(value))
    return str(value)


@dataclass(frozen=True)
class TableSpec:
    """An event's table: after the head (number, time, opcode, process, adapter), ``columns`` (one named as a head
    column takes its place: an entry's own ``process``); with ``mirror``, the mirror records' leaves follow (as
    decode --format names them), then the event's errors and warnings.  Two entries may share a table when their
    columns are the same."""

    name: str
    columns: tuple = ()
    mirror: tuple = ()  # mirror types whose leaves follow (SEGMENT; ALLOCATION_TYPE, USAGE_TYPE)


@dataclass(frozen=True)
class Panel:
    """An entry's part of the picture (``etw --plot``).  ``take(collector, np, cells, x, numbers, adapters)``: a
    chunk of its table's rows (``cells``: column name -> values, of the columns in ``reads`` and the head's) into
    series; ``draw(np, picture, adapter_picture, ax, columns)``: the panel of one adapter, for the entry that draws
    ``name`` (None: it only feeds the panel another entry draws), at ``order`` among the panels."""

    name: str
    reads: tuple
    take: object
    draw: object = None
    order: int = 100


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
class Newer:
    """A version of an entry's events that the manifest lacks: the fields it adds after the manifest version's
    ((name, in-type) pairs, in payload order) and the evidence that Windows logs it: each a file under ../shared
    or a public source at a commit, with what it says (tests/etw/test_manifest.py reads the files under
    ../shared)."""

    version: int
    adds: tuple
    evidence: tuple  # (where, what it says)


@dataclass(frozen=True)
class EventEntry:
    """What this package does with some events of the manifest: ``ids`` (Start, Stop and DCStart of one task share
    an entry when their templates are one).  Their opcodes, symbols, task, version and template fields come from
    the provider's manifest (``dxgkrnl_manifest``, generated); ``newer`` adds the versions it lacks, each with
    its evidence."""

    event: str  # the entry's name (the task's, by custom: ReportSegment)
    ids: tuple  # event ids of the manifest
    mapping: tuple  # a Mapping per field of every version
    table: TableSpec
    adapter: str | None = None  # the field holding pDxgAdapter, if any
    bit_maps: dict = field(default_factory=dict)  # field -> flag type (schema.AllocationFlag, ...): the manifest's map
    newer: tuple = ()  # Newer: versions the manifest lacks
    apply: object = None  # apply(tracker, event) -> what the tables and JSON read, or None: no state change
    findings: object = None  # findings(tracker, event, applied) -> [Finding]
    text: object = None  # its section of the text (a section.Section); None: the default one
    rules: tuple = ()  # rule ids its own findings report (outside the record checks)
    batched: bool = False  # read column-wise in batches: its records checked so (AdapterAllocation), or, with no
    # mirror in its table, its rows applied by ``track`` (the paging events): their value columns and findings then
    # read only what ``apply`` and ``track``'s rows returned (a Resolved-like object with ``adapter`` and ``findings``)
    unchecked: tuple = ()  # opcodes whose mirror record is not checked (a Stop: the allocation is gone)
    track: object = None  # track(np, tracker, columns, unchecked, adapters, numbers, times) -> advance(n): apply's
    # state for the next n of a batch's rows (the other events among them apply in between); advance returns what
    # apply would for each row (a list) where the table has no mirror, else None.  ``adapters`` is None for an
    # entry without an adapter field
    barrier: bool = False  # it changes what batched events are checked against (ReportSegment)
    record: object = None  # record(tracker, event, applied) -> (mirror kind, bytes, adapter, checked) for --json
    json_names: dict = field(default_factory=dict)  # event field -> the record leaf whose names --json shows
    resolved: object = None  # resolved(applied) -> dict: what apply found (an allocation, its process), for --json
    order: int = 100  # where its table and text come among the others' (the lowest first)
    state_tables: tuple = ()  # StateTable: tables of the state its events leave at the trace's end
    panel: object = None  # its part of the picture (a Panel), or None
    state: object = None  # state(tracker) -> what it keeps across the trace (Tracker.part(its name))
    finish: object = None  # finish(tracker): at the trace's end, what it kept checked against the final segments
    view: object = None  # view(tracker, adapter_trace) -> (semantics Adapter or None, why): the adapter's segments
    adapter_state: object = None  # adapter_state() -> its part of each adapter (AdapterTrace.part(its name))
    groups: tuple = ()  # the adapter's series groups its events sample (Tracker.sample), as attributes of it

    # ---- what the manifest says of its ids (read once)
    @cached_property
    def _manifest(self) -> tuple:
        return tuple(manifest_event(i) for i in self.ids)

    @cached_property
    def opcodes(self) -> dict:
        """event id -> opcode (Info, Start, Stop, DCStart)."""
        return {m.event_id: m.opcode for m in self._manifest}

    @cached_property
    def symbols(self) -> dict:
        return {m.event_id: m.symbol for m in self._manifest}

    @cached_property
    def templates(self) -> dict:
        """event id -> the manifest's template id (None: no payload)."""
        return {m.event_id: m.template for m in self._manifest}

    @property
    def task(self) -> int:
        return TASKS[self._manifest[0].task]

    @property
    def manifest_version(self) -> int:
        return self._manifest[0].version

    @cached_property
    def layouts(self) -> dict:
        """version -> its Fields, in payload order: the manifest's, then each newer version's."""
        base = self._manifest[0].fields
        out = {self.manifest_version: base}
        for n in self.newer:
            out[n.version] = base + tuple(Field(name, in_type) for name, in_type in n.adds)
        return out

    @cached_property
    def versions(self) -> dict:
        """version -> ((field name, in-type), ...) in payload order."""
        return {v: tuple((f.name, f.in_type) for f in fields) for v, fields in self.layouts.items()}

    @property
    def fields(self) -> tuple:
        return self.versions[self.manifest_version]

    @cached_property
    def arrays(self) -> dict:
        """counted array field -> the field holding its count."""
        return {f.name: f.count for fields in self.layouts.values() for f in fields if isinstance(f.count, str)}

    @cached_property
    def elements(self) -> dict:
        """counted array field -> the kind (``field_kind``) of one of its values: how its table cell writes each."""
        types = {n: t for fields in self.versions.values() for n, t in fields}
        return {name: field_kind(types[name]) for name in self.arrays}

    @cached_property
    def value_maps(self) -> dict:
        """field -> {name: value} of the manifest's value map it is named by."""
        out = {}
        for m in self._manifest:  # each id's template: the maps are its own (Stop's Format is named, Start's not)
            for f in m.fields:
                if f.map is not None and map_names(f.map)[0] == "valueMap":
                    out[f.name] = {name: value for value, name in map_names(f.map)[1].items()}
        return out

    def optional(self) -> dict:
        """Fields of other versions, not in the manifest's: name -> in-type."""
        required = {n for n, _t in self.fields}
        return {n: t for v in self.versions.values() for n, t in v if n not in required}

    def kinds(self) -> list:
        return [KINDS[i] for i in self.ids]


# ---- the live views
ENTRIES: dict = {}  # event name -> EventEntry, in registration order
ENTRY_OF: dict = {}  # event id -> its EventEntry (the ids an entry reads)
KINDS: dict = {}  # event id -> EventKind: every event of the manifest (an entry's ids by its name)
KIND_BY_NAME: dict = {}  # (event, opcode) -> EventKind of an entry's event
TEMPLATES: dict = {}  # event -> {version: fields}
FIELDS: dict = {}  # event -> the manifest version's fields (required in XML)
OPTIONAL: dict = {}  # event -> {field: in-type} other versions add
BIT_MAPS: dict = {}  # (event, field) -> flag type
VALUE_MAPS: dict = {}  # (event, field) -> {name: value}
ARRAYS: dict = {}  # (event, field) -> its count field
SYMBOLS: dict = {}  # a symbol other readers use -> EventKind
_LISTENERS: list = []


def manifest_kind(event_id: int) -> EventKind:
    """The EventKind of a manifest event no entry reads: named by its symbol."""
    m = manifest_event(event_id)
    return EventKind(event_id, m.symbol, m.opcode, TASKS[m.task], m.version, m.template, None, m.symbol)


def _manifest_kinds() -> None:
    for event_id in MANIFEST_EVENTS:
        kind = KINDS[event_id] = manifest_kind(event_id)
        SYMBOLS[kind.symbol] = kind


_manifest_kinds()


def unknown_kind(event_id: int, version: int, opcode: int) -> EventKind:
    """The EventKind of an event id the manifest does not have (its payload is kept undecoded)."""
    name = next((n for n, v in OPCODES.items() if v == opcode), f"opcode {opcode}")
    return EventKind(event_id, f"EventID {event_id}", name, 0, version, None, None, "")


def classic_kind(class_type: int, opcode: int) -> EventKind:
    """The EventKind of an event of the provider on a classic header: its Type is an opcode, not a manifest id, so
    it names no manifest event (its payload is kept undecoded)."""
    name = next((n for n, v in OPCODES.items() if v == opcode), f"opcode {opcode}")
    return EventKind(class_type, f"classic Type {class_type}", name, 0, 0, None, None, "")


def manifest_fields(event_id: int) -> tuple:
    """((name, in-type), ...) of a manifest event's template, for an entry's own columns and rows."""
    return tuple((f.name, f.in_type) for f in manifest_event(event_id).fields)


def versioned_symbol(symbol: str, version: int | None) -> str:
    """A manifest symbol as other readers print it for ``version`` (``AdapterAllocationStart_V3``: its ``_V<n>``
    replaced), or for None its base, without one."""
    base = re.sub(r"_V\d+$", "", symbol)
    return base if version is None else f"{base}_V{version}"


_LAYOUT_OF: dict = {}


def layout_of(event_id: int, version: int):
    """The Fields a payload of this event id and version holds (its entry's, else the manifest's), or None when
    neither has that version (or the manifest has no such id)."""
    key = (event_id, version)
    found = _LAYOUT_OF.get(key, False)
    if found is False:
        entry = ENTRY_OF.get(event_id)
        if entry is not None:
            found = entry.layouts.get(version)
        else:
            m = manifest_event(event_id)
            found = m.fields if m is not None and m.version == version else None
        _LAYOUT_OF[key] = found
    return found


def on_change(callback) -> None:
    """``callback()`` runs after every register and unregister (caches of derived values)."""
    _LISTENERS.append(callback)


on_change(_LAYOUT_OF.clear)


# ---- registration: an entry is checked whole, once; the readers then call its parts for every event unchecked
def _function(value, name: str, params: str, *, optional: bool = True) -> None:
    """A function its callers can give ``params`` (the arguments' names, as the message says them); None when
    ``optional``.  A class is not one (calling it would build an instance, once per event; an entry's ``state``
    and ``adapter_state`` are functions that make what it keeps, such as ``lambda tracker: Allocations(tracker)``)."""
    if value is None and optional:
        return
    import inspect  # loaded already by the time entries register

    try:
        inspect.signature(value).bind(*(params.split(", ") if params else ()))
        fits = not isinstance(value, type)
    except TypeError:  # not callable, or not with these arguments
        fits = False
    except ValueError:  # a callable whose signature cannot be read (a builtin): callable is all that is known
        fits = callable(value) and not isinstance(value, type)  # a class of C (a ctypes record) makes nothing here
    if not fits:
        raise bad_argument(name, value, f"a function of ({params})" + (" or None" if optional else ""))


def _dict(value, name: str, accepted: str) -> dict:
    """A mapping (None is not an empty one here: the field has a default)."""
    if value is None:
        raise bad_argument(name, value, accepted)
    return mapping_argument(value, name, accepted)


def _rows(value, name: str, kind: type, accepted: str) -> tuple:
    """A tuple or list of ``kind`` (an iterator would be spent by the check and read empty after)."""
    if not isinstance(value, (tuple, list)):
        raise bad_argument(name, value, accepted)
    return items_argument(value, name, kind, accepted)


def _pairs(value, name: str, accepted: str) -> tuple:
    """A tuple of (str, str) pairs: template fields (name, in-type), state table columns (name, kind)."""
    rows = _rows(value, name, tuple, accepted)
    for pair in rows:
        if len(pair) != 2 or not all(isinstance(p, str) and p for p in pair):
            raise InvalidArgument(f"{name} must be {accepted}; it holds {_short(pair)}")
    return rows


def _kinds(entry) -> None:
    """Refuse an entry whose fields are not of their kinds, naming the field, its value and what it takes
    (``_problem`` and every reader read them as these kinds)."""
    if not isinstance(entry, EventEntry):
        raise InvalidArgument(f"register takes an EventEntry, not {_short(entry)}")
    at = f"EventEntry {name_argument(entry.event, 'EventEntry: event', 'the event task name (a str)')}"
    for event_id in _rows(entry.ids, f"{at}: ids", int, "a tuple of event ids of the DxgKrnl manifest"):
        integer_argument(event_id, f"{at}: event id", 0, 0xFFFF)
    for n in _rows(entry.newer, f"{at}: newer", Newer, "a tuple of etw Newer (a version the manifest lacks)"):
        integer_argument(n.version, f"{at}: a newer version", 0, 0xFF)
        _pairs(n.adds, f"{at}: version {n.version}: adds", "a tuple of (field name, in-type) pairs")
        for pair in _pairs(n.evidence, f"{at}: version {n.version}: evidence", "a tuple of (where, what it says)"):
            pass
    for m in _rows(entry.mapping, f"{at}: mapping", Mapping, "a tuple of etw.Mapping rows"):
        name_argument(m.event, f"{at}: a Mapping's event", "the event task name (a str)")
        name_argument(m.field, f"{at}: a Mapping's field", "a field's name (a str)")
        text_argument(m.mirror_type, f"{at}: Mapping {m.field}: mirror_type", "a mirror type (" +
                      ", ".join(MIRROR_TYPES) + ") or None")
        text_argument(m.mirror, f"{at}: Mapping {m.field}: mirror", "a leaf path (a str) or None")
        name_argument(m.reason, f"{at}: Mapping {m.field}: reason", "the evidence (a str)")
    spec = entry.table
    if not isinstance(spec, TableSpec):
        raise bad_argument(f"{at}: table", spec, "an etw.TableSpec")
    name_argument(spec.name, f"{at}: table name", "a table's name (a str)")
    _rows(spec.columns, f"{at}: table {spec.name}: columns", Column, "a tuple of etw.Column")
    _rows(spec.mirror, f"{at}: table {spec.name}: mirror", str, "a tuple of mirror types (" + ", ".join(MIRROR_TYPES) + ")")
    text_argument(entry.adapter, f"{at}: adapter", "the name of the field holding pDxgAdapter (a str) or None")
    for name, flag_type in _dict(entry.bit_maps, f"{at}: bit_maps", "a dict of field -> flag type").items():
        if not (isinstance(flag_type, type) and issubclass(flag_type, enum.IntFlag)):
            raise bad_argument(f"{at}: bit_maps[{_short(name)}]", flag_type, "a flag type (an enum.IntFlag)")
    for name, params in (("apply", "tracker, event"), ("findings", "tracker, event, applied"),
                         ("record", "tracker, event, applied"), ("state", "tracker"), ("finish", "tracker"),
                         ("view", "tracker, adapter"), ("resolved", "applied"),
                         ("track", "np, tracker, columns, unchecked, adapters, numbers, times")):
        _function(getattr(entry, name), f"{at}: {name}", params)
    from .section import Section  # here: the text's module is not needed to read a trace

    if entry.text is not None and not isinstance(entry.text, Section):
        raise bad_argument(f"{at}: text", entry.text, "an etw.model.section.Section or None")
    if entry.panel is not None:
        if not isinstance(entry.panel, Panel):
            raise bad_argument(f"{at}: panel", entry.panel, "an etw Panel (etw.model.registry.Panel) or None")
        name_argument(entry.panel.name, f"{at}: panel name", "the panel's name (a str)")
        _rows(entry.panel.reads, f"{at}: panel reads", str, "a tuple of its table's column names")
        _function(entry.panel.take, f"{at}: panel take", "collector, np, cells, x, numbers, adapters", optional=False)
        _function(entry.panel.draw, f"{at}: panel draw", "np, picture, adapter, ax, columns")
        integer_argument(entry.panel.order, f"{at}: panel order")
    _function(entry.adapter_state, f"{at}: adapter_state", "")
    _rows(entry.groups, f"{at}: groups", str, "a tuple of series group names")
    _rows(entry.rules, f"{at}: rules", str, "a tuple of rule ids (semantics.RULES)")
    flag_argument(entry.batched, f"{at}: batched")
    flag_argument(entry.barrier, f"{at}: barrier")
    _rows(entry.unchecked, f"{at}: unchecked", str, "a tuple of opcodes")
    for name, leaf in _dict(entry.json_names, f"{at}: json_names", "a dict of field -> record leaf").items():
        name_argument(leaf, f"{at}: json_names[{_short(name)}]", "a record leaf's path (a str)")
    integer_argument(entry.order, f"{at}: order")
    for t in _rows(entry.state_tables, f"{at}: state_tables", StateTable, "a tuple of etw StateTable"):
        name_argument(t.name, f"{at}: a state table's name", "a table's name (a str)")
        _pairs(t.columns, f"{at}: state table {t.name}: columns", "a tuple of (column name, kind) pairs")
        _function(t.rows, f"{at}: state table {t.name}: rows", "tracker, when", optional=False)


def _is_leaf(kind: str, path: str) -> bool:
    """Whether ``path`` names a leaf of the mirror type at some target: the newest first, which has nearly every
    member (a path named at no target would be packed at none, silently)."""
    from ..._spec.versions import INTERFACE_VERSIONS

    return any(path in _leaf_paths(descriptor_type(version) if kind == SEGMENT else kind, abi, version)
               for version in sorted({int(v) for v in INTERFACE_VERSIONS.values()}, reverse=True)
               for abi in ("x64", "x86", "arm64"))


@functools.lru_cache(maxsize=None)
def _leaf_paths(type_name: str, abi: str, version: int) -> frozenset:
    from ...layout import record_leaves, typedef_layout

    try:
        return frozenset(leaf.path for leaf in record_leaves(typedef_layout(type_name, abi, version)))
    except D3dkmddiError:  # not a type of that target
        return frozenset()


RESERVED_TABLES = ("findings", "undecoded")  # the tables of every trace that no entry may take


def _table_names(entry: EventEntry) -> list:
    return [entry.table.name] + [t.name for t in entry.state_tables]


def _version_tables(entry: EventEntry) -> list:
    """The tables of an entry's events of a newer version that it cannot apply (tables.kind_table names them)."""
    return [versioned_symbol(m.symbol, n.version) for n in entry.newer for m in entry._manifest]


def _problem(entry: EventEntry) -> str | None:
    """Why an entry of the right kinds cannot be registered, or None."""
    if entry.event in ENTRIES:
        return f"event {entry.event} is registered already"
    if not entry.ids or len(set(entry.ids)) != len(entry.ids):
        return f"{entry.event}: give its event ids, each once"
    unknown = [i for i in entry.ids if i not in MANIFEST_EVENTS]
    if unknown:
        return f"{entry.event}: event id {unknown[0]} is not an event of the {PROVIDER_NAME} manifest " \
               f"(etw/model/dxgkrnl_manifest.py, generated from it); an entry reads events the manifest states"
    taken = [i for i in entry.ids if i in ENTRY_OF]
    if taken:
        return f"event id {taken[0]} is {KINDS[taken[0]].label} already"
    clash = [i for i, row in MANIFEST_EVENTS.items() if row[0] == entry.event and i not in entry.ids]
    if clash:
        return f"{entry.event}: the name is the symbol of event {clash[0]}, which is not among its ids"
    first = entry._manifest[0]
    shape = [f[:4] for f in first.fields]  # a map may differ (Start's Flags are named, Stop's Format): not the fields
    odd = next((m for m in entry._manifest if [f[:4] for f in m.fields] != shape or m.version != first.version), None)
    if odd is not None:
        return f"{entry.event}: event {odd.event_id} ({odd.symbol}) has another template or version than " \
               f"{first.event_id} ({first.symbol}) in the manifest; give each its own entry"
    for n in entry.newer:
        if n.version in (first.version,) or [m.version for m in entry.newer].count(n.version) > 1:
            return f"{entry.event}: newer version {n.version} is the manifest's or given twice"
        if not n.evidence or not all(where and said for where, said in n.evidence):
            return f"{entry.event}: newer version {n.version} names no evidence (a file under ../shared or a " \
                   f"public source, and what it says)"
    for version, fields in entry.layouts.items():
        problem = check_template(fields, f"{entry.event} version {version}")
        if problem is not None:
            return problem
    types = {}
    for version, fields in entry.versions.items():
        for name, in_type in fields:
            if types.setdefault(name, in_type) != in_type:
                return f"{entry.event}: field {name} is {types[name]} in one version and {in_type} in another"
    mapped = sorted(m.field for m in entry.mapping)
    if mapped != sorted(types) or any(m.event != entry.event or not m.reason for m in entry.mapping) or \
            any(m.mirror_type not in (None,) + MIRROR_TYPES or (m.mirror_type is None) != (m.mirror is None)
                for m in entry.mapping):
        return f"{entry.event}: MAPPING must name every field of every version once, each with its reason " \
               f"(a mirror member with its mirror type, or neither)"
    unknown = next((m for m in entry.mapping if m.mirror_type is not None and m.mirror != FLAG_VIEW
                    and not _is_leaf(m.mirror_type, m.mirror)), None)
    if unknown is not None:
        return f"{entry.event}: MAPPING's {unknown.field} fills {unknown.mirror_type}.{unknown.mirror}, which is a leaf " \
               f"of it at no target (decode --format names the leaves)"
    if entry.adapter is not None and entry.adapter not in dict(entry.fields):
        return f"{entry.event}: the adapter field {entry.adapter} is not a field of the manifest's version"
    maps = {f.name: f.map for m in entry._manifest for f in m.fields if f.map is not None}
    for name, flag_type in entry.bit_maps.items():
        if name not in maps or maps[name] is None or map_names(maps[name])[0] != "bitMap":
            return f"{entry.event}: bit_maps names {name}, which the manifest names by no bit map"
        members = {m.value: m.name for m in flag_type}
        if members != map_names(maps[name])[1]:
            return f"{entry.event}: bit_maps[{name}] is {flag_type.__name__}, whose bits and names are not those of " \
                   f"the manifest's bit map {maps[name]}"
    spec = entry.table
    missing = [c.field for c in spec.columns if c.field is not None and c.field not in types]
    if missing:
        return f"{entry.event}: table column {missing[0]} reads a field the templates lack"
    every = set(types).intersection(*(dict(fields) for fields in entry.versions.values()))  # in every version
    problem = next(filter(None, (_column_problem(entry, c, types, every) for c in spec.columns)), None)
    if problem is not None:
        return problem
    names = _table_names(entry)
    for other in ENTRIES.values():  # a newer version's events it cannot apply go to a table of that version's symbol
        for mine, theirs in ((names, _version_tables(other)), (_version_tables(entry), _table_names(other))):
            clash = next((n for n in mine if n.lower() in {t.lower() for t in theirs}), None)
            if clash is not None:
                return f"{entry.event}: table {clash} would be {other.event}'s too (an entry's table, or the table of " \
                       f"the events of a newer version that its entry cannot apply, named by that version's symbol)"
    bad_name = next((n for n in names if not n.isidentifier() or n in RESERVED_TABLES
                     or any(n.lower() == row[0].lower() for row in MANIFEST_EVENTS.values())), None)
    if bad_name is not None:
        return f"{entry.event}: table name {bad_name!r} must be letters, digits and _ (it names a file in the output " \
               f"folder), not {' or '.join(RESERVED_TABLES)} and not an event's symbol (the table of an event no " \
               f"entry reads is named so)"
    for kind in spec.mirror:
        owner = PACKED_BY.get(kind)
        if kind not in MIRROR_TYPES or owner is not None and owner != entry.event:
            return f"{entry.event}: table mirror {kind!r} is not a mirror type ({', '.join(MIRROR_TYPES)}) or is " \
                   f"packed from another entry's events ({owner})"
    if entry.batched and spec.mirror and (tuple(spec.mirror[:1]) != (ALLOCATION_TYPE,) or entry.record is None):
        return f"{entry.event}: a batched event's records are checked column-wise as {ALLOCATION_TYPE}: its table's " \
               f"first mirror type is that and it has a record function"
    if entry.batched and not spec.mirror and (entry.track is None or entry.apply is None):
        return f"{entry.event}: a batched event without a mirror record is applied column-wise by its track and one " \
               f"by one by its apply: give both"
    if entry.batched and any(not f.fixed for fields in entry.layouts.values() for f in fields):
        return f"{entry.event}: a batched event's templates are of fixed width (read as columns)"
    if any(any(k not in COLUMN_KINDS for _n, k in t.columns) or
           t.name == spec.name or any(t.name in (o.table.name, *(u.name for u in o.state_tables))
                                      for o in ENTRIES.values()) for t in entry.state_tables):
        return f"{entry.event}: a state table is a StateTable of its own name, each column's kind one of " \
               f"{', '.join(COLUMN_KINDS)}"
    if entry.adapter_state is not None:
        mine = _attributes(entry.adapter_state())
        clash = next((n for n in mine if n in PART_ATTRIBUTES or n in SERIES_GROUPS or n in entry.groups
                      or hasattr(AdapterTrace, n)), None)
        if clash is not None:
            return f"{entry.event}: its adapter part's {clash} is an attribute of adapters already"
    if any(g in PART_ATTRIBUTES or hasattr(AdapterTrace, g) for g in entry.groups):
        return f"{entry.event}: a series group is named as an attribute of adapters already"
    if entry.view is not None and any(o.view is not None for o in ENTRIES.values()):
        return f"{entry.event}: {next(o.event for o in ENTRIES.values() if o.view is not None)} gives the adapters' " \
               f"view already (one entry makes it)"
    if any(o not in entry.opcodes.values() for o in entry.unchecked):
        return f"{entry.event}: unchecked names an opcode its ids do not have ({', '.join(entry.opcodes.values())})"
    if any(f not in types for f in entry.json_names):
        return f"{entry.event}: json_names names a field the templates lack"
    from ...semantics import RULES

    unknown = [r for r in entry.rules if r not in RULES]
    if unknown:
        return f"{entry.event}: rule {unknown[0]} is not a rule id; semantics.RULES lists them"
    for other in ENTRIES.values():
        if other.table.name == spec.name and [(c.name, c.kind) for c in other.table.columns] != \
                [(c.name, c.kind) for c in spec.columns]:
            return f"{entry.event}: table {spec.name} is {other.event}'s, with other columns"
    return None


# the column kinds a field of each in-type kind (templates.IN_TYPES) is written as: a number, a Boolean, a float or text
KINDS_OF_FIELDS = {"int": ("int", "opt"), "pointer": ("hex", "ohex", "handle"),
                   "bool": ("bool",), "float": ("float",), "guid": ("text",), "unicode": ("text",),
                   "ansi": ("text",), "binary": ("text",)}
EMPTY_KINDS = ("opt", "ohex", "handle", "shex", "text", "time", "float", "bool")  # the kinds whose cell may be empty


def kinds_of_field(in_type: str) -> tuple:
    """The column kinds a field of this in-type may be written as, each spelling it as --json does: a pointer and a
    64-bit number only as ``0x...`` (a JSON number past 2**53 is rounded), a signed one as its bit pattern
    (``shex``), a narrower number in decimal."""
    t = IN_TYPES[in_type]
    if t.kind == "int" and t.width == 8:
        return ("shex",) if t.signed else ("hex", "ohex", "handle")
    return KINDS_OF_FIELDS[t.kind]


def _column_problem(entry: EventEntry, column: Column, types: dict, required: set) -> str | None:
    """Why a column cannot hold its field's values, or None: its kind must fit the field's in-type (a counted array
    is text), and a field some versions lack needs a kind whose cell may be empty."""
    if column.field is None:
        return None
    in_type = types[column.field]
    allowed = ("text",) if column.field in entry.arrays else kinds_of_field(in_type)
    what = f"a counted array of {in_type}" if column.field in entry.arrays else f"a {in_type}"
    if column.kind not in allowed:
        return f"{entry.event}: table column {column.name} reads field {column.field}, {what}: its kind must be " \
               f"{' or '.join(allowed)}, not {column.kind}"
    if column.field not in required and column.kind not in EMPTY_KINDS:
        return f"{entry.event}: table column {column.name} reads field {column.field}, which some versions lack: " \
               f"its kind must be one whose cell may be empty ({', '.join(k for k in allowed if k in EMPTY_KINDS)}), " \
               f"not {column.kind}"
    return None


def register(entry: EventEntry) -> EventEntry:
    """Add an event to every reader, table and renderer; returns it.  A bad entry is refused
    (errors.InvalidArgument, saying what to change) and changes nothing."""
    _kinds(entry)
    problem = _problem(entry)
    if problem is not None:
        raise InvalidArgument(problem)
    ordered = sorted([*ENTRIES.values(), entry], key=lambda e: e.order)  # stable: registration order among equals
    ENTRIES.clear()
    ENTRIES.update((e.event, e) for e in ordered)
    for event_id in entry.ids:
        SYMBOLS.pop(KINDS[event_id].symbol, None)
        kind = EventKind(event_id, entry.event, entry.opcodes[event_id], entry.task, entry.manifest_version,
                         entry.templates[event_id], entry.adapter, entry.symbols[event_id])
        KINDS[event_id] = KIND_BY_NAME[(entry.event, kind.opcode)] = kind
        ENTRY_OF[event_id] = entry
        symbol = entry.symbols[event_id]
        SYMBOLS[symbol] = kind
        base = versioned_symbol(symbol, None)
        for version in entry.versions:  # the versioned symbols other readers print (_V2, _V3)
            SYMBOLS.setdefault(versioned_symbol(symbol, version), kind)
        if base != entry.event:  # the task's own name takes an opcode (kind_of)
            SYMBOLS.setdefault(base, kind)
    for kind in entry.table.mirror:
        PACKED_BY.setdefault(kind, entry.event)
    if entry.adapter_state is not None:
        PART_ATTRIBUTES.update({name: (entry.event, entry.adapter_state) for name in _attributes(entry.adapter_state())})
    SERIES_GROUPS.update(entry.groups)
    TEMPLATES[entry.event] = dict(entry.versions)
    FIELDS[entry.event] = entry.fields
    OPTIONAL[entry.event] = entry.optional()
    BIT_MAPS.update({(entry.event, f): t for f, t in entry.bit_maps.items()})
    VALUE_MAPS.update({(entry.event, f): dict(m) for f, m in entry.value_maps.items()})
    ARRAYS.update({(entry.event, f): c for f, c in entry.arrays.items()})
    _changed()
    return entry


def unregister(event: str) -> None:
    """Remove an event registered before (a test's made-up event), by its name: its ids are the manifest's again."""
    if not isinstance(event, str) or event not in ENTRIES:
        raise InvalidArgument(f"unregister takes the name of a registered event ({listed(ENTRIES)}), not "
                              f"{_short(event)}")
    entry = ENTRIES.pop(event)
    for event_id, opcode in entry.opcodes.items():
        del KIND_BY_NAME[(entry.event, opcode)], ENTRY_OF[event_id]
    for symbol in [s for s, k in SYMBOLS.items() if k.event == event]:
        del SYMBOLS[symbol]
    for event_id in entry.ids:
        kind = KINDS[event_id] = manifest_kind(event_id)
        SYMBOLS[kind.symbol] = kind
    for kind in [k for k, owner in PACKED_BY.items() if owner == event]:
        del PACKED_BY[kind]
    for name in [n for n, (owner, _make) in PART_ATTRIBUTES.items() if owner == event]:
        del PART_ATTRIBUTES[name]
    SERIES_GROUPS.clear()
    SERIES_GROUPS.update(g for e in ENTRIES.values() for g in e.groups)
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


def _attributes(part) -> list:
    """The public attribute names of an entry's adapter part (its slots or its instance dict)."""
    names = getattr(type(part), "__slots__", None) or list(getattr(part, "__dict__", ()))
    return [n for n in names if isinstance(n, str) and not n.startswith("_")]


def _changed() -> None:
    for callback in _LISTENERS:
        callback()


def entry_of(kind: EventKind) -> EventEntry | None:
    """The entry that reads an event, or None for an event no entry reads."""
    return ENTRY_OF.get(kind.event_id)


def field_kind(in_type: str, optional: bool = False) -> str:
    """The table kind of a field of this in-type: pointers "handle", unsigned 64-bit words "hex", signed ones "shex"
    (0x... of the bit pattern, as JSON writes them: a JSON number past 2**53 is rounded), Booleans "bool",
    Float and Double "float", strings, GUIDs and Binary "text", the rest numbers; ``optional``: a kind that holds
    None as well."""
    t = IN_TYPES[in_type]
    if t.kind in ("pointer", "bool", "float"):
        return {"pointer": "handle", "bool": "bool", "float": "float"}[t.kind]
    if t.kind != "int":
        return "text"
    if t.width == 8 and t.signed:
        return "shex"  # holds None as well
    kind = "hex" if t.width == 8 else "int"
    return {"int": "opt", "hex": "ohex"}[kind] if optional else kind


def field_columns(fields, *, skip=(), optional=(), arrays=()) -> tuple:
    """A Column per template field (but ``skip``), named as the field, of its in-type's kind; a field only
    some versions have (``optional``) is of a kind that holds None (empty where the event's version lacks it),
    a counted array (``arrays``) "text" (its values, space-separated)."""
    return tuple(Column(n, "text" if n in arrays else field_kind(t, n in optional), field=n)
                 for n, t in fields if n not in skip)
