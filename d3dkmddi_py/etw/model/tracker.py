"""The Tracker: a trace's state as its events leave it, per adapter, through each event's entry (``etw.catalog``).

It names no event.  An entry changes the state through the Tracker's public interface: ``adapter(pointer)`` (an
adapter's record), ``part(name)`` (the state an entry keeps for itself, made by its ``state`` function),
``sample`` (one more value of a series), ``note`` (an event its state change could not be applied to),
``keep_loose`` (findings of an event no record holds), ``view`` (the adapter's segments as the rules read them:
the entry that declares ``view`` gives it) and ``check`` (a record against them).  The readers call ``_apply``
and the batch checks with the Events they made, unchecked.
"""
from __future__ import annotations

from ... import bulk
from ..._spec.base import POINTER_SIZE
from ...semantics import Finding, check as check_record
from ...errors import EtwInputError, InvalidArgument, bad_argument, flag_argument, shown
from ...target import as_target
from .registry import ENTRIES, ENTRY_OF, layout_of
from .templates import IN_TYPES
from .mapping import applies, keep, packer
from .events import Event, registered_kind
from .times import time_ns
from .odd import OddReports
from .schema import EventKind
from ...wording import noun, plural
from .state import SERIES_GROUPS, AdapterTrace, Series

LOOSE_KEPT = 10_000  # findings of events with no record to sit under that the text lists (the rest are counted)
_TOP = (1 << 64) - 1


def findings_rows(columns, *, adapter=None) -> list:
    """(row, rule_id, severity, field, value) of ``bulk.column_findings``, only rules that hold for events."""
    table = bulk.column_findings(columns, adapter=adapter)
    return [r for r in table.rows() if applies(r[1])]


def _pointer(value, name: str) -> int:
    if type(value) is not int or not 0 <= value <= _TOP:  # noqa: E721 - a bool is no pointer
        raise bad_argument(name, value, "an adapter pointer (an integer 0..0xffffffffffffffff)")
    return value


def _event_argument(event, name: str):
    if type(event) is not Event:  # noqa: E721
        raise bad_argument(name, event, "an etw Event (etw.read, etw.from_records)")
    return event


class TimeBack:
    """Events whose time is before the time of the event before them (a processor's clock that stepped back, or a
    trace put together out of order): counted, the first kept to be said, every event read in its order."""

    def __init__(self):  # a plain object: it pickles with the Tracker by every protocol
        self.last = self.last_ns = None  # the time of the event before (its text, its nanoseconds)
        self.count = 0
        self.first = None  # (event number, its time, the time before it)
        self.unread = 0  # events whose time text is no instant ``time_ns`` reads (every output leaves it empty)
        self.first_unread = None  # (event number, its time text)

    def take(self, event, ns=None) -> None:
        """One event, in order; ``ns``: its time as ``time_ns`` reads it, where the caller has it (the tables do)."""
        time = event.time
        if ns is None and time is not None:
            ns = time_ns(time)
            if ns is None:  # a text that is no instant: every output leaves it empty
                self.unread += 1
                if self.first_unread is None:
                    self.first_unread = (event.number, time)
                return
        last, before = self.last, self.last_ns
        self.last, self.last_ns = time, ns
        if ns is not None and before is not None and ns < before:
            self.count += 1
            if self.first is None:
                self.first = (event.number, time, last)


_NARROW_TOP = 0xFFFFFFFF  # the highest 4-byte pointer


def _pointer_fields(event_id: int, version: int) -> tuple:
    """The names of the Pointer fields of an event's template (none when no template has that version)."""
    key = (event_id, version)
    found = _POINTERS.get(key)
    if found is None:
        template = layout_of(event_id, version) or ()
        found = _POINTERS[key] = tuple(f.name for f in template if IN_TYPES[f.in_type].kind == "pointer")
    return found


_POINTERS: dict = {}


class WidePointers:
    """Pointer values above 4 GB in a trace read at a target of 4-byte pointers (--abi x86): the traced machine is
    64-bit, so the x86 layouts are the wrong ones.  Counted, the first kept to be said (``note``)."""

    def __init__(self):  # a plain object: it pickles with the Tracker by every protocol
        self.count = 0
        self.first = None  # (event number, field, value)

    def take(self, event) -> None:
        fields = event.fields
        for name in _pointer_fields(event.kind.event_id, event.version):
            value = fields.get(name)
            for v in (value if isinstance(value, (list, tuple)) else (value,)):
                if type(v) is int and v > _NARROW_TOP:  # noqa: E721
                    self.count += 1
                    if self.first is None:
                        self.first = (event.number, name, v)
                    return

    def note(self, abi: str) -> str | None:
        """The line the outputs say, or None when every pointer fit 4 bytes."""
        if not self.count:
            return None
        number, name, value = self.first
        return (f"--abi {abi} reads 4-byte pointers, and {plural(self.count, 'event')} "
                f"{noun(self.count, 'carries', 'carry')} pointers above 4 GB, as a 64-bit machine's are (the first: event #{number} {name} 0x{value:x}): "
                f"the records are laid out for the wrong machine; pass --abi x64 or arm64")


class Tracker:
    """Applies events in order (each event's entry says how), checking records against the segments reported so
    far; ``finish()`` lets each entry finish its state and gives the adapters.

    ``entries``: keep each record whole (its event, bytes and findings: the text and ``adapters()``), else only
    what later events read of it (--json and the tables).  ``series``: keep every sample of the values over time as
    columns (else their summaries only).  ``Tracker(...)``, ``apply`` and the interface entries use check what
    they are given."""

    def __init__(self, target=None, *, entries: bool = True, series: bool = False):
        tgt = as_target(target)  # every spelling target() takes; a bad one is the package's own error
        self.target = tgt
        self.packer = packer(tgt.abi, tgt.interface_version)
        self.entries, self.series = flag_argument(entries, "Tracker: entries"), flag_argument(series, "Tracker: series")
        self.adapters: dict = {}
        self.counts: dict = {}  # event name -> events applied
        self.parts: dict = {}  # entry name -> the state it keeps across the trace (its ``state``'s)
        self.notes: dict = {}  # event name -> {what: count}: what its events could not be applied to
        self.loose: list = []  # (event, findings) of events whose findings sit under no record (``entries``)
        self.loose_more = 0  # and how many more there were
        self._views: dict = {}  # pointer -> (Adapter or None, note)
        self.odd = OddReports()  # events not as their template says: reported once a kind, counted
        self.partial: dict = {}  # entry name -> events of it whose payload lacked fields (read, not applied)
        self.back = TimeBack()  # events whose time is before the one before them
        self.wide = WidePointers()  # pointers a 4-byte target cannot hold (--abi x86 on a 64-bit trace)
        self._narrow = POINTER_SIZE[tgt.abi] == 4

    # ---- what a user calls
    def apply(self, event):
        """Update the state with one Event (``etw.read``'s, ``etw.from_records``'); returns what its entry's
        ``apply`` returns (a mirror record's bytes, a placement, ...)."""
        return self._apply(_event(event, "Tracker.apply: event"))

    def finish(self) -> dict:
        """Let each entry finish what it keeps (check the segments and records left against the final segments);
        returns the adapters."""
        for pointer in self.adapters:
            self._views.pop(pointer, None)
        for entry in ENTRIES.values():
            if entry.finish is not None:
                entry.finish(self)
        return self.adapters

    def pointer_note(self, header_pointer_size=None) -> str | None:
        """What the outputs say when the trace's pointers do not fit the target's, else None: the .etl log-file
        header's PointerSize (``header_pointer_size``, 4 or 8) against --abi's, or pointers above 4 GB at a 4-byte
        target (``WidePointers``; all an XML trace can show)."""
        if header_pointer_size is not None and (type(header_pointer_size) is not int or  # noqa: E721 - not a bool
                                                header_pointer_size not in (4, 8)):
            raise bad_argument("Tracker.pointer_note: header_pointer_size", header_pointer_size, "4, 8 or None")
        abi = self.target.abi
        mine = 4 if abi == "x86" else 8
        if header_pointer_size is not None and header_pointer_size != mine:
            return (f"--abi {abi} reads {mine}-byte pointers, and the trace's log-file header says the machine that "
                    f"wrote it has {header_pointer_size}-byte ones (PointerSize): the records are laid out for the "
                    f"wrong machine; pass --abi {'x86' if header_pointer_size == 4 else 'x64 or arm64'}")
        return self.wide.note(abi)

    # ---- the interface an entry's functions use
    def adapter(self, pointer: int) -> AdapterTrace:
        """The record of the adapter ``pointer`` (made on first use)."""
        a = self.adapters.get(pointer) if type(pointer) is int else None  # noqa: E721 - a bool is no pointer
        if a is None:
            a = self.adapters[_pointer(pointer, "Tracker.adapter: pointer")] = AdapterTrace(pointer)
        return a

    def part(self, name: str):
        """What the entry ``name`` keeps across the trace: its ``state(tracker)``'s object, made on first use."""
        found = self.parts.get(name) if isinstance(name, str) else None
        if found is None:
            entry = ENTRIES.get(name) if isinstance(name, str) else None
            if entry is None or entry.state is None:
                raise InvalidArgument(f"Tracker.part: {shown(name, 40)} is not a registered entry that keeps state "
                                      f"({', '.join(e.event for e in ENTRIES.values() if e.state is not None)})")
            found = self.parts[name] = entry.state(self)
        return found

    def sample(self, event, group: str, key, value: int) -> None:
        """One more value of a series: ``group`` names the adapter's dict of Series (``resident``, ...), ``key``
        the series in it, ``value`` what the event says (0..2**64-1)."""
        series = self.adapter(event.adapter).series.setdefault(group, {}) if type(event) is Event and \
            isinstance(group, str) and group in SERIES_GROUPS else None  # noqa: E721 - an entry's declared group, never another attribute
        if series is None or type(value) is not int or not 0 <= value <= _TOP:  # noqa: E721
            _event_argument(event, "Tracker.sample: event")
            if series is None:
                raise bad_argument("Tracker.sample: group", group, "a series group an entry declares (" +
                                   ", ".join(sorted(SERIES_GROUPS)) + ")")
            raise bad_argument("Tracker.sample: value", value, "an integer 0..0xffffffffffffffff")
        try:
            s = series.get(key)
        except TypeError:  # unhashable
            raise bad_argument("Tracker.sample: key", key, "a hashable key (a number, a tuple)") from None
        if s is None:
            s = series[key] = Series._new(self.series)
        s._add(event.number, value)

    def note(self, event, what: str) -> None:
        """Count an event its state change could not be applied to (``what`` says why)."""
        if not isinstance(what, str) or not what:
            raise bad_argument("Tracker.note: what", what, "why the event could not be applied (a str)")
        notes = self.notes.setdefault(_event_argument(event, "Tracker.note: event").kind.event, {})
        notes[what] = notes.get(what, 0) + 1

    def keep_loose(self, event, findings) -> None:
        """Findings of an event that sit under no record: the text lists them after the adapters."""
        if not isinstance(findings, (list, tuple)) or not all(isinstance(f, Finding) for f in findings):
            raise bad_argument("Tracker.keep_loose: findings", findings, "a list of findings (semantics Finding)")
        if not findings or not self.entries:
            return
        if len(self.loose) < LOOSE_KEPT:
            self.loose.append((_event_argument(event, "Tracker.keep_loose: event"), list(findings)))
        else:
            self.loose_more += 1

    def view(self, pointer: int) -> tuple:
        """(semantics Adapter or None, why none) of the segments the adapter has reported so far: what the entry
        that declares ``view`` makes of them (None when no entry does)."""
        cached = self._views.get(pointer) if type(pointer) is int else None  # noqa: E721
        if cached is None:
            maker = next((e.view for e in ENTRIES.values() if e.view is not None), None)
            a = self.adapter(pointer)
            cached = self._views[pointer] = maker(self, a) if maker is not None else (None, "")
        return cached

    def segments_changed(self, pointer: int) -> None:
        """The adapter's segments changed: its view is made again when next asked for."""
        self._views.pop(_pointer(pointer, "Tracker.segments_changed: pointer"), None)

    def check(self, pointer, type_name: str, data: bytes) -> list:
        """The findings of a record of ``type_name`` (its bytes at the Tracker's target) against the segments the
        adapter ``pointer`` has reported so far (None: alone), only the rules that hold for events."""
        cls = getattr(self.target, type_name, None) if isinstance(type_name, str) else None
        if cls is None or not hasattr(cls, "_layout_"):
            raise bad_argument("Tracker.check: type_name", type_name, f"a record type of {self.target.label}")
        if not isinstance(data, (bytes, bytearray)) or len(data) != cls._layout_.size:
            raise bad_argument("Tracker.check: data", data, f"the {cls._layout_.size} bytes of a {type_name} at "
                                                            f"{self.target.label}")
        adapter = None if pointer is None else self.view(pointer)[0]
        return keep(check_record(bytes(data), type_name, target=self.target, adapter=adapter))

    # ---- the readers' per-event machinery, unchecked
    def _apply(self, event, ns=None):
        """``ns``: the event's time in nanoseconds where the caller has read it (None: read here)."""
        kind = event.kind
        name = kind.event
        self.counts[name] = self.counts.get(name, 0) + 1
        self.back.take(event, ns)
        if self._narrow:
            self.wide.take(event)
        entry = ENTRY_OF.get(kind.event_id)
        if entry is None or entry.apply is None:
            return None
        odd = event.odd
        if odd is not None and not odd.whole:  # its entry reads every field of the template: this one lacks some
            self.partial[entry.event] = self.partial.get(entry.event, 0) + 1
            return None
        return entry.apply(self, event)

    def _applied(self, event) -> bool:
        """Whether an event is one its entry applies (an entry's event with every field of its template)."""
        odd = event.odd
        return event.kind.event_id in ENTRY_OF and (odd is None or odd.whole)

    def _findings(self, event, applied) -> list:
        """The findings of an event just applied (those its entry checks one event at a time)."""
        entry = ENTRY_OF.get(event.kind.event_id)
        if entry is None or entry.findings is None or not self._applied(event):
            return []
        return entry.findings(self, event, applied)

    def _found(self, type_name: str, adapters, checked, data: bytes) -> dict:
        """row -> its (rule_id, severity, field) findings, for the rows that have any."""
        found: dict = {}
        if not len(adapters):
            return found
        size = len(data) // len(adapters)
        if all(checked) and len(set(adapters)) == 1:  # the common case: one adapter, nothing unchecked
            groups = {adapters[0]: range(len(adapters))}
        else:
            groups = {}
            for i, (pointer, check_it) in enumerate(zip(adapters, checked)):
                if check_it:
                    groups.setdefault(pointer, []).append(i)
        for pointer, rows in groups.items():
            adapter, _note = self.view(pointer)
            part = data if len(rows) == len(adapters) else b"".join(data[i * size:(i + 1) * size] for i in rows)
            columns = bulk.decode_array(type_name, part, target=self.target)
            for row, rule_id, severity, name, _value in findings_rows(columns, adapter=adapter):
                found.setdefault(rows[row], []).append((rule_id, severity, name))
        return found

    def _batch_findings(self, type_name: str, items) -> list:
        """Per (Event, record bytes) item, its Finding objects (with messages): column-wise checks find the records
        that have any, and only those are checked one by one for the messages."""
        entries = [ENTRY_OF[e.kind.event_id] for e, _d in items]
        return self._findings_of_rows(type_name, [e.adapter for e, _d in items],
                                      [e.opcode not in entry.unchecked for (e, _d), entry in zip(items, entries)],
                                      b"".join(d for _e, d in items))

    def check_rows(self, type_name: str, adapters, checked, data: bytes) -> list:
        """``check`` of many records of ``type_name`` at once: each row's adapter pointer, whether it is checked,
        and the records' bytes, one after another.  A row's findings are a list, or an empty tuple when it has
        none (column-wise checks find the rows that have any; only those are checked one by one)."""
        for name, value in (("adapters", adapters), ("checked", checked)):
            if not isinstance(value, (list, tuple)):
                raise bad_argument(f"Tracker.check_rows: {name}", value, "a list, one item a record")
        cls = getattr(self.target, type_name, None) if isinstance(type_name, str) else None
        if cls is None or not hasattr(cls, "_layout_"):
            raise bad_argument("Tracker.check_rows: type_name", type_name, f"a record type of {self.target.label}")
        size = cls._layout_.size
        if not isinstance(data, (bytes, bytearray)) or len(data) != size * len(adapters) or len(checked) != \
                len(adapters):
            raise bad_argument("Tracker.check_rows: data", data, f"the bytes of len(adapters) records of {type_name} "
                                                                 f"({size} bytes each), and a checked flag for each")
        for pointer in adapters:
            if pointer is not None:
                _pointer(pointer, "Tracker.check_rows: an adapter")
        return self._findings_of_rows(type_name, list(adapters), [bool(c) for c in checked], bytes(data))

    def _findings_of_rows(self, type_name: str, adapters, checked, data: bytes) -> list:
        size = len(data) // len(adapters) if len(adapters) else 0
        out = [()] * len(adapters)  # most rows have none: one shared empty tuple, not a list a row
        for i in self._found(type_name, adapters, checked, data):
            out[i] = self.check(adapters[i], type_name, data[i * size:(i + 1) * size])
        return out


def adapters(events, *, target=None, series: bool = True) -> dict:
    """pDxgAdapter -> AdapterTrace, from events in trace order (``read(...)`` or ``from_records(...)``).

    Each entry keeps its part of an adapter (``etw.catalog``): the segments (the last ReportSegment of each id),
    the live allocations (Start and DCStart add one, Stop removes it by hDxgGlobalAlloc, hVidMmGlobalAlloc when that
    is 0), resident bytes per segment and each process's usage and budget per segment group as ``Series`` (every
    sample as columns unless ``series=False``), and the findings of each segment, of the adapter and of each live
    allocation against the adapter's segments, with only the rules that hold for these events (``RULES_APPLY``).
    ``target``: a Target or (abi, version); default x64 at the newest interface version (the trace does not say
    the driver's).
    """
    tracker = Tracker(target, series=flag_argument(series, "series"))
    if isinstance(events, (str, bytes, dict)) or not hasattr(events, "__iter__"):
        raise EtwInputError(f"events must be an iterable of etw Events (etw.read, etw.from_records), not "
                            f"{type(events).__name__}")
    for event in events:
        tracker._apply(_event(event, "events: an item"))
    return tracker.finish()


def _event(event, name: str):
    """An Event of a registered event, as the readers make them (what the per-event machinery takes)."""
    if not isinstance(event, Event):
        raise EtwInputError(f"{name} must be an etw Event (etw.read, etw.from_records), not {shown(event, 40)}")
    kind = event.kind  # an Event's kind is checked when it is built; one assigned since is named as the kind
    registered_kind(kind, name if isinstance(kind, EventKind) else f"{name}'s kind")
    return event
