"""Streaming reader of tracerpt / Event Viewer XML: constant memory, no DTD, no entities.

The bytes go through the standard library's expat twice, never whole:
- a guard parser sees the prolog only (everything before the root element, the one place XML
  allows a DOCTYPE) and refuses any DOCTYPE or entity declaration, so no entity is ever defined,
  let alone expanded (billion laughs, external references).  After the root starts, expat itself
  rejects a DOCTYPE, and a reference to an undefined entity is an error;
- ElementTree's XMLPullParser builds each <Event> in C; a completed event is decoded, then
  deleted from the root, so memory holds one chunk and the event being built.
"""
from __future__ import annotations

import io
import os
import pyexpat
import xml.etree.ElementTree as ET

from ..errors import EtwInputError
from .events import Event, parse_fields
from .schema import EVENT_NAMESPACE, KINDS, PROVIDER, PROVIDER_GUID

CHUNK = 1 << 18
ETL_HINT = "for an .etl file run: tracerpt FILE.etl -o FILE.xml -of XML"


class _Tags:
    def __init__(self, prefix: str):
        for name in ("Event", "System", "EventData", "BinaryEventData", "ProcessingErrorData", "Provider",
                     "EventID", "Version", "Task", "Opcode", "TimeCreated", "Execution"):
            setattr(self, name, prefix + name)


_NS = _Tags("{%s}" % EVENT_NAMESPACE)
_PLAIN = _Tags("")
_TAGS = {_NS.Event: _NS, _PLAIN.Event: _PLAIN}


class _RootSeen(Exception):
    pass


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class TraceReader:
    """Iterate to get the DxgKrnl events of a trace (``Event``), in order; then read the counts.

    ``source``: a path, a binary or text file object, or bytes.  Events of other providers and other
    DxgKrnl events are skipped and counted (``other_providers``, ``other_dxgkrnl``); ``total`` counts
    every <Event>.  A trace can be iterated once.
    """

    def __init__(self, source, *, name: str | None = None, chunk_size: int = CHUNK):
        self.source, self.chunk_size = source, chunk_size
        self.name = name or _name_of(source)
        self.total = 0
        self.decoded = 0
        self.other_providers = 0
        self.other_dxgkrnl = 0
        self.providers: dict = {}  # name or GUID -> events skipped
        self._used = False
        self._root_seen = False  # the guard saw the root element start: the input is XML
        self._began = 0  # events begun in a first chunk that failed to parse

    # ---- counts
    def check_found(self) -> None:
        """Raise when the trace held none of the events this package reads (call after iterating)."""
        if self.decoded:
            return
        others = ", ".join(f"{n} {name}" for name, n in sorted(self.providers.items(), key=lambda kv: -kv[1])[:3])
        raise EtwInputError(
            f"{self.name}: no ReportSegment (78) or AdapterAllocation (33/34/35) event of {PROVIDER}: it has "
            f"{self.total} events, {self.other_providers} of other providers"
            + (f" ({others})" if others else "") + f" and {self.other_dxgkrnl} other DxgKrnl events; record "
            f"a GPU trace (wpr -start GPU) or add the DxgKrnl provider with its Resource keyword (0x40)")

    # ---- iteration
    def __iter__(self):
        if self._used:
            raise RuntimeError("a TraceReader can be iterated once; call read() again")
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
        except (OSError, TypeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise EtwInputError(f"cannot read {self.name}: {why}") from None

    def _events(self):
        stream, owned = self._open()
        try:
            yield from self._parse(stream)
        finally:
            if owned:
                stream.close()

    def _parse(self, stream):
        guard = _guard(self)
        parser = ET.XMLPullParser(events=("start",))
        queue = getattr(parser, "_events_queue", None)  # drained in C; read_events() is the fallback
        root = None
        single = False
        while True:
            try:
                chunk = stream.read(self.chunk_size)
            except (OSError, UnicodeDecodeError) as exc:
                raise EtwInputError(f"cannot read {self.name}: {exc}") from None
            if not chunk:
                break
            if guard is not None:
                try:
                    guard.Parse(chunk, False)
                except _RootSeen:
                    guard = None
                    self._root_seen = True
                except pyexpat.ExpatError as exc:
                    raise self._xml_error(exc.lineno, exc.offset, pyexpat.errors.messages[exc.code], root) from None
            try:
                parser.feed(chunk)
                starts = self._drain(parser, queue, root)
            except ET.ParseError as exc:
                raise self._xml_error(*exc.position, _reason(exc), root) from None
            if root is None and starts is not None:
                root = starts
                single = self._check_root(root)
            if root is not None and not single:
                done = len(root) - 1
                if done > 0:
                    for el in root[:done]:
                        event = self._event(el)
                        if event is not None:
                            yield event
                    del root[:done]
        try:
            parser.close()
        except ET.ParseError as exc:
            line, column = exc.position
            if root is None and self.total == 0 and line <= 1 and column == 0:
                raise EtwInputError(f"{self.name} is empty: no XML at all; {ETL_HINT}") from None
            raise EtwInputError(f"{self.name}: the XML ends early (truncated) at line {line}, column {column}"
                                f"{self._inside(root)}: {_reason(exc)}") from None
        if root is None:  # close() succeeded, so there was a root; the start event is in the queue
            root = self._drain(parser, queue, None)
            single = self._check_root(root)
        for el in ([root] if single else list(root)):
            event = self._event(el)
            if event is not None:
                yield event
        root.clear()

    def _drain(self, parser, queue, root):
        """The first element started in this chunk when ``root`` is None; re-raises a queued parse error."""
        if queue is None:
            items = list(parser.read_events())
            return items[0][1] if root is None and items else None
        first = queue[0] if queue else None
        if queue and isinstance(queue[-1], BaseException):
            if root is None:  # the error is in the first chunk: count the events it began
                self._began = sum(1 for item in queue if type(item) is tuple and item[1].tag in _TAGS)
            raise queue[-1]
        queue.clear()
        return first[1] if root is None and first is not None else None

    def _check_root(self, root) -> bool:
        """True when the document is a single <Event>; refuses any other schema."""
        local = _local(root.tag)
        if root.tag in _TAGS:
            return True
        if local == "Events":
            return False
        raise EtwInputError(f"{self.name}: the root element is <{local}>, not <Events> or <Event> of the Windows "
                            f"event schema ({EVENT_NAMESPACE}) that tracerpt -of XML and Event Viewer write; "
                            f"{ETL_HINT}", event=None)

    def _inside(self, root) -> str:
        began = self._began if root is None else self.total + max(len(root), 1)
        return f" (in event #{began})" if began else ""

    def _xml_error(self, line, column, reason, root) -> EtwInputError:
        if not self._root_seen:
            hint = ETL_HINT if not str(self.name).lower().endswith(".etl") else \
                "an .etl file is binary; convert it: tracerpt FILE.etl -o FILE.xml -of XML"
            return EtwInputError(f"{self.name} is not XML: {reason} at line {line}, column {column}; {hint}")
        return EtwInputError(f"{self.name}: not well-formed XML at line {line}, column {column}"
                             f"{self._inside(root)}: {reason}")

    # ---- one <Event>
    def _event(self, el) -> Event | None:
        self.total += 1
        number = self.total
        tags = _TAGS.get(el.tag)
        if tags is None:
            raise EtwInputError(f"{self.name}: event #{number} is an <{_local(el.tag)}> element in <Events>, not an "
                                f"<Event> of {EVENT_NAMESPACE}: another schema", event=number)
        system = data = undecoded = None
        for child in el:
            tag = child.tag
            if tag == tags.System:
                system = child
            elif tag == tags.EventData:
                data = child
            elif tag == tags.BinaryEventData or tag == tags.ProcessingErrorData:
                undecoded = _local(tag)
        if system is None:
            raise EtwInputError(f"{self.name}: event #{number} has no <System> element: not the Windows event "
                                f"schema", event=number, field="System")
        provider = guid = event_id = version = time = pid = tid = None
        for c in system:
            tag = c.tag
            if tag == tags.Provider:
                provider, guid = c.get("Name"), c.get("Guid")
            elif tag == tags.EventID:
                event_id = c.text
            elif tag == tags.Version:
                version = c.text
            elif tag == tags.TimeCreated:
                time = c.get("SystemTime") or c.get("RawTime")
            elif tag == tags.Execution:
                pid, tid = c.get("ProcessID"), c.get("ThreadID")
        if provider != PROVIDER and (guid is None or guid.strip().lower() != PROVIDER_GUID):
            if provider is None and guid is None:
                raise EtwInputError(f"{self.name}: event #{number} has no <Provider> in <System>: not the Windows "
                                    f"event schema", event=number, field="Provider")
            key = provider or guid
            if key in self.providers or len(self.providers) < 64:
                self.providers[key] = self.providers.get(key, 0) + 1
            self.other_providers += 1
            return None
        where = f"{self.name}: event #{number}"
        eid = _system_number(event_id, "EventID", where, number)
        kind = KINDS.get(eid)
        if kind is None:
            self.other_dxgkrnl += 1
            return None
        where = f"{self.name}: event #{number} ({kind.label})"
        if data is None:
            what = (f"<{undecoded}> instead of <EventData>: tracerpt had no schema for it" if undecoded else
                    "no <EventData>")
            raise EtwInputError(f"{where} has {what}; decode the trace on a machine with the {PROVIDER} "
                                f"manifest (tracerpt FILE.etl -o FILE.xml -of XML)", event=number, field="EventData")
        raw = {d.get("Name"): d.text for d in data}
        try:
            fields, extra = parse_fields(raw, kind, where)
        except EtwInputError as exc:
            exc.event = number
            raise
        ver = kind.version if version is None else _system_number(version, "Version", where, number)
        self.decoded += 1
        return Event(number, kind, ver, fields, time,
                     None if pid is None else _system_number(pid, "ProcessID", where, number),
                     None if tid is None else _system_number(tid, "ThreadID", where, number), extra, self.name)


def _system_number(text, name: str, where: str, number: int) -> int:
    s = (text or "").strip()
    if s.isdigit() and s.isascii():
        return int(s)
    if s[:2] in ("0x", "0X") and len(s) > 2:
        try:
            return int(s[2:], 16)
        except ValueError:
            pass
    raise EtwInputError(f"{where}: System/{name} = {s!r} is not a number", event=number, field=name)


def _reason(exc) -> str:
    code = getattr(exc, "code", None)
    try:
        return pyexpat.errors.messages[code]
    except (KeyError, TypeError):
        return str(exc).split(":")[0]


def _guard(reader: TraceReader):
    """An expat parser for the prolog that refuses DOCTYPE and entity declarations."""
    g = pyexpat.ParserCreate()
    g.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)

    def doctype(name, *args):
        raise EtwInputError(f"{reader.name}: refusing a <!DOCTYPE {name}> declaration: a trace has none, and a "
                            f"DTD can define entities (billion laughs, external files); nothing was expanded",
                            field="DOCTYPE")

    def entity(name, *args):
        raise EtwInputError(f"{reader.name}: refusing the entity declaration {name!r}: nothing was expanded",
                            field="ENTITY")

    def root(name, attrs):
        raise _RootSeen

    g.StartDoctypeDeclHandler = doctype
    g.EntityDeclHandler = entity
    g.StartElementHandler = root
    return g


def _name_of(source) -> str:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    if hasattr(source, "read"):
        return str(getattr(source, "name", "<stream>"))
    try:
        return os.fspath(source)
    except TypeError:
        return repr(source)


def read(source, *, name: str | None = None) -> TraceReader:
    """The DxgKrnl segment and allocation events of a tracerpt or Event Viewer XML trace, streamed.

    ``source``: a path, a file object (binary or text), or bytes.  Iterate the result for ``Event``
    values; afterwards ``total``, ``decoded``, ``other_providers``, ``other_dxgkrnl`` say what was
    seen, and ``check_found()`` raises when none of these events was there.
    """
    return TraceReader(source, name=name)
