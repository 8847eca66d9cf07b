"""Streaming reader of a trace: an .etl file (``etlreader``) or tracerpt / Event Viewer XML, told
apart by their first bytes.  The XML is read in constant memory, no DTD, no entities, no element tree.

Three parts: the prolog guard (``xmlguard``) refuses any DOCTYPE or entity declaration before the
root starts; the expat reader (``xmlexpat``) reads any well-formed document; the fast path
(``xmlfast``) reads tracerpt's and Event Viewer's own layout with regular expressions and hands
any other block to expat.  Both give the same raw records (System values and EventData/Data
texts), decoded here by one function in document order.
"""
from __future__ import annotations

import io
import os
import pyexpat

from ...errors import EtwInputError, ReadOnce, flag_argument, integer_argument, shown, text_argument
from ...outfile import safe_name
from . import etlcolumns, etlfile, etlreader, xmlfast
from ..model.registry import ENTRY_OF, KINDS
from ..model.events import SYSTEM, _UNREAD, Event, Odd, hex_bytes, integer_of, new_event, parse_fields
from ..model.registry import unknown_kind
from ..model.schema import EVENT_NAMESPACE, PROVIDER, PROVIDER_GUID
from ..model.section import plural
from .xmlexpat import ETL_HINT, _ExpatEvents, _mapped, _Raw
from .xmlguard import _guard, _RootSeen

CHUNK = 1 << 18
CHUNK_MAX = (1 << 31) - 1  # the most one read() takes on every platform


class TraceReader:
    """Iterate to get the DxgKrnl events of a trace (``Event``), in order; then read the counts.

    ``source``: a path, a binary or text file object, or bytes: an .etl file or its XML.  After
    iterating, ``format`` is "etl" or "xml" and ``etl_header`` the .etl file's log-file header.  Every DxgKrnl
    event is read (``decoded``; ``other_dxgkrnl`` of them no catalog entry reads); events of other providers are
    skipped and counted (``other_providers``); ``total`` counts every <Event>.  A trace can be iterated once (a second pass raises errors.ReadOnce).  ``fast=False``
    reads every block with expat (the fast path's oracle in the tests); ``blocks_fast`` / ``blocks_expat``
    say how the blocks were read.
    """

    def __init__(self, source, *, name: str | None = None, chunk_size: int = CHUNK, fast: bool = True):
        self.source, self.fast = source, flag_argument(fast, "fast")
        self.chunk_size = integer_argument(chunk_size, "TraceReader: chunk_size", 1, CHUNK_MAX)
        self.name = safe_name(text_argument(name, "name") or _name_of(source))  # echoed in one-line messages
        self.total = 0
        self.decoded = 0
        self.other_providers = 0
        self.other_dxgkrnl = 0
        self.providers: dict = {}  # name or GUID -> events skipped
        self.blocks_fast = 0
        self.blocks_expat = 0
        self.format = None
        self.etl_header = None
        self.first_time = None  # the time text of an XML trace's first event, any provider's: the trace's start
        # set by a reader of columns (the tables): an .etl file then gives etlcolumns.DxgBatch objects,
        # or etlcolumns.RESTART and then Events from the start
        self.columns = False
        self._used = False
        self._root_seen = False  # the root element started: the input is XML
        self._root_at = None  # byte offset of the root start tag, from the guard
        self._kinds: dict = {}  # (Provider Name, Guid, EventID text) -> the DxgKrnl event it names

    # ---- counts
    def check_found(self) -> None:
        """Raise when the trace held none of the events this package reads (call after iterating)."""
        if self.decoded:
            return
        others = ", ".join(f"{n:,} {name}" for name, n in sorted(self.providers.items(), key=lambda kv: -kv[1])[:3])
        raise EtwInputError(
            f"{self.name}: no event of {PROVIDER}: it has {plural(self.total, 'event')}, {self.other_providers:,} of "
            f"other providers" + (f" ({others})" if others else "") + "; record a GPU trace (wpr -start GPU) or add the "
            "DxgKrnl provider with its Resource keyword (0x40)")

    # ---- iteration
    def __iter__(self):
        if self._used:
            raise ReadOnce(f"{self.name}: a TraceReader is iterated once (it keeps no events); call etw.read() again "
                           f"for another pass, or keep the events (list(reader))")
        self._used = True
        return self._events()

    def _open(self):
        src = self.source
        if isinstance(src, (bytes, bytearray, memoryview)):
            return io.BytesIO(bytes(src)), False
        if hasattr(src, "read"):
            return src, False
        try:
            return open(os.fspath(src), "rb"), True
        except (OSError, TypeError, ValueError) as exc:  # ValueError: a NUL in the path
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise EtwInputError(f"cannot read {self.name}: {why}") from None

    def _events(self):
        stream, owned = self._open()
        try:
            head = self._read(stream)
            if isinstance(head, bytes) and etlfile.is_etl(head):
                self.format = "etl"
                read = etlcolumns.column_events if self.columns else etlreader.events
                yield from read(self, stream, head)
            else:
                self.format = "xml"
                yield from self._parse(stream, head)
        finally:
            if owned:
                stream.close()

    def _read(self, stream):
        try:
            return stream.read(self.chunk_size)
        except (OSError, UnicodeDecodeError) as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc}") from None

    def _parse(self, stream, first):
        guard = _guard(self)
        head = []  # chunks read before the root start tag was seen
        chunk = None
        while guard is not None:
            chunk, first = (first, None) if first is not None else (self._read(stream), None)
            if not chunk:
                break
            head.append(chunk)
            try:
                guard.Parse(chunk, False)
            except _RootSeen:
                guard = None
                self._root_seen = True
            except pyexpat.ExpatError as exc:
                raise self._xml_error(exc.lineno, exc.offset, pyexpat.errors.messages[exc.code], 0) from None
            except EtwInputError:
                raise
            except (LookupError, ValueError) as exc:  # pyexpat asks Python for the declared encoding
                raise self._encoding_error(exc) from None
        if head and isinstance(head[0], bytes) and self._root_seen and self.fast:
            data = b"".join(head)
            root = xmlfast.root_of(data, self._root_at)
            if root is not None:
                yield from xmlfast.events(self, stream, data, root)
                return
        yield from self._expat(stream, head, _ExpatEvents(self), (0, 1, 0))

    # ---- the expat path, from the start or from a block on
    def _expat(self, stream, pending, x: _ExpatEvents, origin):
        """Feed ``pending`` chunks, then the rest of ``stream``, to ``x``; ``origin`` maps its positions."""
        p = x.parser
        while True:
            if pending:
                chunk = pending.pop(0)
            else:
                chunk = self._read(stream)
                if not chunk:
                    break
            error = None
            try:
                p.Parse(chunk, False)
            except pyexpat.ExpatError as exc:
                error = exc
            except EtwInputError:
                raise
            except (LookupError, ValueError) as exc:
                raise self._encoding_error(exc) from None
            for rec in x.take():
                self.blocks_expat += 1
                event = self._decode(rec)
                if event is not None:
                    yield event
            if error is not None:
                line, column = _mapped(origin, error.lineno, error.offset)
                raise self._xml_error(line, column, pyexpat.errors.messages[error.code], x.started) from None
        try:
            p.Parse(b"", True)
        except pyexpat.ExpatError as exc:
            line, column = _mapped(origin, exc.lineno, exc.offset)
            if not self._root_seen and self.total == 0 and line <= 1 and column == 0:
                raise EtwInputError(f"{self.name} is empty: neither an .etl file nor XML; {ETL_HINT}") from None
            inside = f" (in event #{x.started})" if x.started else ""
            raise EtwInputError(f"{self.name}: the XML ends early (truncated) at line {line}, column {column}"
                                f"{inside}: {pyexpat.errors.messages[exc.code]}") from None
        for rec in x.take():
            self.blocks_expat += 1
            event = self._decode(rec)
            if event is not None:
                yield event

    def _encoding_error(self, exc) -> EtwInputError:
        # LookupError: no Python codec; ValueError: a codec expat cannot take (multi-byte, stateful)
        what = "Python does not know" if isinstance(exc, LookupError) else "expat cannot read"
        return EtwInputError(f"{self.name}: the XML declaration names an encoding {what} ({exc}); "
                             f"save the trace as UTF-8 or UTF-16 (tracerpt writes UTF-8)", field="encoding")

    def _xml_error(self, line, column, reason, started) -> EtwInputError:
        if not self._root_seen:
            return EtwInputError(f"{self.name} is neither an .etl file nor XML: {reason} at line {line}, column "
                                 f"{column}; {ETL_HINT}")
        inside = f" (in event #{started})" if started else ""
        return EtwInputError(f"{self.name}: not well-formed XML at line {line}, column {column}{inside}: {reason}")

    # ---- one <Event>
    def _decode(self, rec: _Raw) -> Event | None:
        self.total += 1
        number = self.total
        if number == 1:
            self.first_time = rec.time
        if rec.local is not None:
            raise EtwInputError(f"{self.name}: event #{number} is an <{rec.local}> element in <Events>, not an "
                                f"<Event> of {EVENT_NAMESPACE}: another schema", event=number)
        if not rec.system:
            raise EtwInputError(f"{self.name}: event #{number} has no <System> element: not the Windows event "
                                f"schema", event=number, field="System")
        key = (rec.provider, rec.guid, rec.event_id)
        kind = self._kinds.get(key)
        if kind is None:
            kind = self._kind(rec, number)
            if kind is None:
                return None
            if len(self._kinds) < 256 and sum(len(t) for t in key if t is not None) <= 256:
                self._kinds[key] = kind
        where = _Where(self.name, number, kind)
        ver = kind.version if rec.version is None else _header(rec.version, "Version", where, number)
        if rec.data is not None or rec.undecoded is None:  # no <EventData> at all: an empty payload, as in .etl
            fields, extra, odd = parse_fields({} if rec.data is None else rec.data, kind, where, ver)
        else:  # tracerpt wrote the event without its fields: its payload as it gave it, or its text if not hex
            text = rec.binary
            payload = None if text is None else hex_bytes(text)
            unread = ((_UNDECODED[rec.undecoded], text),) if payload is None and text is not None else ()
            fields, extra, odd = {}, {}, Odd._new(payload=payload, why="tracerpt", unread=unread)
        self.decoded += 1
        if kind.event_id not in ENTRY_OF:
            self.other_dxgkrnl += 1
        pid, tid = _execution(rec.pid), _execution(rec.tid)
        if pid is _UNREAD or tid is _UNREAD:  # not a 32-bit id: unknown, said, the event kept
            unread = tuple((SYSTEM + name, text) for name, text, value in (("ProcessID", rec.pid, pid),
                                                                           ("ThreadID", rec.tid, tid))
                           if value is _UNREAD)
            if odd is None:
                odd = Odd._new(unread=unread)
            else:
                odd.unread += unread
            pid, tid = (None if pid is _UNREAD else pid), (None if tid is _UNREAD else tid)
        return new_event(number, kind, ver, fields, rec.time, pid, tid, extra, self.name, odd)

    def _kind(self, rec: _Raw, number: int):
        """The DxgKrnl event a record is, or None (counted) for another provider's or another DxgKrnl event."""
        provider, guid = rec.provider, rec.guid
        if provider != PROVIDER and (guid is None or guid.strip().lower() != PROVIDER_GUID):
            if provider is None and guid is None:
                raise EtwInputError(f"{self.name}: event #{number} has no <Provider> in <System>: not the Windows "
                                    f"event schema", event=number, field="Provider")
            key = provider or guid
            if key in self.providers or len(self.providers) < 64:
                self.providers[key] = self.providers.get(key, 0) + 1
            self.other_providers += 1
            return None
        where = _Where(self.name, number, None)
        event_id = _header(rec.event_id, "EventID", where, number)
        kind = KINDS.get(event_id)
        if kind is None:  # an id the manifest does not have: kept, its data undecoded
            version = 0 if rec.version is None else _header(rec.version, "Version", where, number)
            kind = unknown_kind(event_id, version, 0)
        return kind


class _Where:
    """The "<trace>: event #N (kind)" an error message starts with, formatted only when one is raised."""

    __slots__ = ("name", "number", "kind")

    def __init__(self, name: str, number: int, kind):
        self.name, self.number, self.kind = name, number, kind

    def __str__(self):
        label = "" if self.kind is None else f" ({self.kind.label})"
        return f"{self.name}: event #{self.number}{label}"

    def __format__(self, spec):
        return format(str(self), spec)


_UNDECODED = {"BinaryEventData": "BinaryEventData", "ProcessingErrorData": "ProcessingErrorData/EventPayload"}
_NUMBERS: dict = {}  # System texts seen (ids, versions, process and thread ids) -> their number, or None
_WIDTHS = {"EventID": (0xFFFF, "USHORT"), "Version": (0xFF, "UCHAR")}  # as the event header holds them


def _number(text):
    """The number a System value's text writes (decimal or 0x hex, bounded: ``integer_of``), or None."""
    value = _NUMBERS.get(text, _UNREAD)
    if value is _UNREAD:
        value = integer_of(text.strip()) if isinstance(text, str) else None
        if len(_NUMBERS) < 4096 and len(text or "") <= 64:  # bounded: a text may be long
            _NUMBERS[text] = value
    return value


def _header(text, name: str, where, number: int) -> int:
    """<EventID> or <Version>: every reader, table and report holds an event by its id and version of the header's
    width, so one that is not such a number is damage to the event's header, refused naming it."""
    value = _number(text)
    top, width = _WIDTHS[name]
    if value is not None and 0 <= value <= top:
        return value
    what = "is not a number" if value is None else "is out of range"
    raise EtwInputError(f"{where}: System/{name} = {shown((text or '').strip(), 60)} {what} (valid 0..{top}, the "
                        f"event header's {width}); the event's header is damaged: fix or remove that <Event>",
                        event=number, field=name)


def _execution(text):
    """<Execution>'s ProcessID or ThreadID: None when absent, _UNREAD when not a 32-bit id (kept unknown)."""
    if text is None:
        return None
    value = _number(text)
    return value if value is not None and 0 <= value <= 0xFFFFFFFF else _UNREAD


def _name_of(source) -> str:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    if hasattr(source, "read"):
        return str(getattr(source, "name", "<stream>"))
    try:
        return os.fspath(source)
    except TypeError:
        return f"<{type(source).__name__}>"  # repr() of a 5000-digit int raises; the type is what matters


def summary(source, *, name: str | None = None) -> dict:
    """What an .etl file holds, for any provider: the log-file header's facts (pointer size, processors,
    buffer size, start and end time, lost events and buffers) and the events per provider and id.

    ``source`` as for ``read``.  An XML trace is refused: it has no log-file header.
    """
    reader = TraceReader(source, name=name)
    stream, owned = reader._open()
    try:
        head = reader._read(stream)
        if not isinstance(head, bytes) or not etlfile.is_etl(head):
            raise EtwInputError(f"{reader.name} is not an .etl file (its first buffer is not a log-file header); "
                                f"a summary reads .etl files")
        return etlreader.summary(stream, reader.name, head)
    finally:
        if owned:
            stream.close()


def read(source, *, name: str | None = None, fast: bool = True) -> TraceReader:
    """The DxgKrnl segment and allocation events of an .etl file or its tracerpt / Event Viewer XML, streamed.

    ``source``: a path, a file object (binary or text), or bytes.  Iterate the result for ``Event``
    values; afterwards ``total``, ``decoded``, ``other_providers``, ``other_dxgkrnl`` say what was
    seen, and ``check_found()`` raises when none of these events was there.  ``fast=False`` reads
    every event through expat handlers (the same events; slower).
    """
    return TraceReader(source, name=name, fast=fast)
