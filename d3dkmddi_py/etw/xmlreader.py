"""Streaming reader of tracerpt / Event Viewer XML: constant memory, no DTD, no entities, no element tree.

Safety: a guard expat parser sees the prolog only (everything before the root element, the one place
XML allows a DOCTYPE) and refuses any DOCTYPE or entity declaration, so no entity is ever defined,
let alone expanded (billion laughs, external references).  After the root starts, expat rejects a
DOCTYPE, and a reference to an undefined entity is an error.

Two readers give the same raw records (System values and EventData/Data texts), decoded by one
function in document order:
- the expat path: pyexpat handlers collect only those values (no Element objects); it reads any
  well-formed document;
- the fast path, for a UTF-8 document whose root is a plain <Events>: each <Event> ... </Event>
  block is matched by one regular expression of tracerpt's and Event Viewer's layout, a grammar
  whose every match is well-formed XML with the values the expat path reads.  A block it does not
  match (CDATA, comments, character references, non-ASCII, other attribute forms...) is parsed by
  the expat path, under a copy of the root start tag, with positions mapped back to the file; when
  that parse does not end exactly at the block's end (a nested <Event>, "</Event>" in a comment),
  the expat path reads the rest of the document.
"""
from __future__ import annotations

import io
import os
import pyexpat
import re

from ..errors import EtwInputError
from .events import Event, parse_fields
from .schema import EVENT_NAMESPACE, KINDS, PROVIDER, PROVIDER_GUID

CHUNK = 1 << 18
BLOCK_LIMIT = 1 << 20  # an <Event> longer than this is left to the expat path (memory stays bounded)
ETL_HINT = "for an .etl file run: tracerpt FILE.etl -o FILE.xml -of XML"

_SEP = "}"  # expat's namespace separator: names arrive as "uri}local" or "local"
_CHILDREN = ("System", "EventData", "BinaryEventData", "ProcessingErrorData")
_SYSTEM = ("Provider", "EventID", "Version", "TimeCreated", "Execution")
_EVENT_NAMES = {EVENT_NAMESPACE + _SEP + "Event": EVENT_NAMESPACE + _SEP, "Event": ""}


class _RootSeen(Exception):
    pass


def _local(tag: str) -> str:
    return tag.rsplit(_SEP, 1)[-1]


class _Raw:
    """What one top-level element of <Events> gave: the values the decoder reads, as text."""

    __slots__ = ("local", "system", "provider", "guid", "event_id", "version", "time", "pid", "tid", "data",
                 "undecoded")

    def __init__(self, local=None):
        self.local = local  # the local name when the element is not an <Event> of the schema
        self.system = False
        self.provider = self.guid = self.event_id = self.version = self.time = self.pid = self.tid = None
        self.data = self.undecoded = None


# ------------------------------------------------------------------ the expat path
class _ExpatEvents:
    """pyexpat handlers that turn <Event> elements into ``_Raw`` records, without building elements.

    ``resumed``: the parser is fed a copy of the root start tag and then bytes from the middle of the
    document; ``started`` continues the count of top-level elements begun.
    """

    def __init__(self, reader, *, resumed: bool = False, started: int = 0, encoding=None):
        p = pyexpat.ParserCreate(encoding, _SEP)
        p.buffer_text = True
        p.buffer_size = 1 << 16
        p.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._text
        self.parser, self.reader = p, reader
        self.depth = 0
        self.ev_depth = 1  # depth of the <Event> elements: 1 under <Events>, 0 in a one-event document
        self.resumed = resumed
        self.started = started
        self.ended = 0  # top-level elements ended (resumed parsers check they ended exactly one)
        self.records: list = []
        self.rec = None
        self.prefix = ""
        self.section = None  # "System", "EventData" or None, for the Event child being read
        self.collect = None  # (record attribute or data key, depth) whose text is being gathered
        self.pieces: list = []

    # handlers
    def _start(self, name, attrs):
        d = self.depth
        self.depth = d + 1
        if self.collect is not None:  # an element's text is the text before its first child
            self._finish_text()
        if d == 0:
            self._root(name)
            if self.ev_depth == 0:
                self._begin(name)
            return
        rel = d - self.ev_depth
        if rel == 0:
            self._begin(name)
            return
        rec = self.rec
        if rec is None or rec.local is not None or rel < 0:
            return
        prefix = self.prefix
        if rel == 1:
            local = name[len(prefix):] if name.startswith(prefix) and _SEP not in name[len(prefix):] else None
            self.section = local if local in ("System", "EventData") else None
            if local == "System":
                rec.system = True
                rec.provider = rec.guid = rec.event_id = rec.version = rec.time = rec.pid = rec.tid = None
            elif local == "EventData":
                rec.data = {}
            elif local in ("BinaryEventData", "ProcessingErrorData"):
                rec.undecoded = local
            return
        if rel != 2 or self.section is None:
            return
        if self.section == "EventData":
            self.collect = (attrs.get("Name"), d + 1, True)
            rec.data[attrs.get("Name")] = None
            return
        if name == prefix + "Provider":
            rec.provider, rec.guid = attrs.get("Name"), attrs.get("Guid")
        elif name == prefix + "EventID":
            rec.event_id = None
            self.collect = ("event_id", d + 1, False)
        elif name == prefix + "Version":
            rec.version = None
            self.collect = ("version", d + 1, False)
        elif name == prefix + "TimeCreated":
            rec.time = attrs.get("SystemTime") or attrs.get("RawTime")
        elif name == prefix + "Execution":
            rec.pid, rec.tid = attrs.get("ProcessID"), attrs.get("ThreadID")

    def _text(self, data):
        if self.collect is not None:
            self.pieces.append(data)

    def _end(self, name):
        if self.collect is not None and self.collect[1] == self.depth:
            self._finish_text()
        self.depth -= 1
        d = self.depth  # the depth of the element that ended
        if d == self.ev_depth + 1:
            self.section = None
        elif d == self.ev_depth and self.rec is not None:
            self.records.append(self.rec)
            self.rec = None
            self.ended += 1

    def _finish_text(self):
        key, _depth, is_data = self.collect
        text = "".join(self.pieces) if self.pieces else None
        self.pieces = []
        self.collect = None
        if is_data:
            self.rec.data[key] = text
        else:
            setattr(self.rec, key, text)

    def _root(self, name):
        if self.resumed:
            return
        self.reader._root_seen = True
        if name in _EVENT_NAMES:
            self.ev_depth = 0
            return
        local = _local(name)
        if local != "Events":
            raise EtwInputError(f"{self.reader.name}: the root element is <{local}>, not <Events> or <Event> of "
                                f"the Windows event schema ({EVENT_NAMESPACE}) that tracerpt -of XML and Event "
                                f"Viewer write; {ETL_HINT}", event=None)

    def _begin(self, name):
        self.started += 1
        prefix = _EVENT_NAMES.get(name)
        self.section = None
        if prefix is None:
            self.rec = _Raw(_local(name))
            return
        self.prefix = prefix
        self.rec = _Raw()

    def take(self) -> list:
        out, self.records = self.records, []
        return out


# ------------------------------------------------------------------ the fast path's grammar
_S = rb"[ \t\r\n]"
_NAME = rb"[A-Za-z_][A-Za-z0-9_.\-]*"
_AV = rb"(?:\"[^\"<&\x00-\x1f]*\"|'[^'<&\x00-\x1f]*')"  # no entity, no whitespace to normalise
_ENT = rb"&(?:amp|lt|gt|quot|apos);"
# text as expat returns it unchanged but for the five entities: no CR (expat turns it into LF)
_VAL = rb"[^<&\x00-\x08\x0b-\x1f]*(?:" + _ENT + rb"[^<&\x00-\x08\x0b-\x1f]*)*"
# text that is only skipped: CR allowed
_ANY = rb"[^<&\x00-\x08\x0b\x0c\x0e-\x1f]*(?:" + _ENT + rb"[^<&\x00-\x08\x0b\x0c\x0e-\x1f]*)*"
_ONE_ATTR = rb"(?:" + _S + rb"+(?!xmlns)" + _NAME + rb"=" + _AV + rb")?"  # one at most: never a duplicate


def _element(level: int) -> bytes:
    """Any element nested ``level`` deep at most, one attribute each, mixed text (validated, skipped)."""
    g = b"e%d" % level
    inner = b"" if level == 0 else rb"(?:" + _element(level - 1) + _ANY + rb")*"
    return (rb"<(?P<" + g + rb">" + _NAME + rb")" + _ONE_ATTR + _S + rb"*(?:/>|>" + _ANY + inner +
            rb"</(?P=" + g + rb")>)")


_SYS_CHILD = rb"<(" + _NAME + rb")((?:" + _S + rb"+(?!xmlns)" + _NAME + rb"=" + _AV + rb")*)" + _S + \
    rb"*(?:/>|>(" + _VAL + rb")</\1>)"
_DATA_DQ = rb"<Data Name=\"([^\"'<&\x00-\x1f]*)\">(" + _VAL + rb")</Data>"
_DATA_SQ = rb"<Data Name='([^\"'<&\x00-\x1f]*)'>(" + _VAL + rb")</Data>"
_BLOCK = re.compile(
    rb"<Event(?:" + _S + rb"+xmlns=(?:\"(?P<ns>[^\"<&\x00-\x1f]*)\"|'(?P<ns2>[^'<&\x00-\x1f]*)'))?" + _S + rb"*>"
    + _S + rb"*<System>(?P<sys>(?:" + _S + rb"*" + _SYS_CHILD.replace(rb"\1", rb"(?P=s)").replace(
        rb"<(" + _NAME + rb")", rb"<(?P<s>" + _NAME + rb")", 1) + rb")*)" + _S + rb"*</System>"
    + rb"(?:" + _S + rb"*<EventData>(?P<data>(?:" + _S + rb"*" + _DATA_DQ + rb")*|(?:" + _S + rb"*" + _DATA_SQ
    + rb")*)" + _S + rb"*</EventData>)?"
    + rb"(?P<rest>(?:" + _S + rb"*" + _element(2) + rb")*)" + _S + rb"*</Event>")
_SYS = re.compile(_SYS_CHILD)
_DATA = re.compile(_DATA_DQ)
_DATA1 = re.compile(_DATA_SQ)
_ATTR = re.compile(rb"(" + _NAME + rb")=(?:\"([^\"]*)\"|'([^']*)')")
_ROOT = re.compile(rb"<Events(?:" + _S + rb"+xmlns=(?:\"(?P<ns>[^\"<&\x00-\x1f]*)\"|'(?P<ns2>[^'<&\x00-\x1f]*)'))?"
                   + _S + rb"*>")
_ENCODING = re.compile(rb"^(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding" + _S + rb"*=" + _S + rb"*[\"']([A-Za-z0-9._\-]+)")
_TOP = re.compile(_S + rb"*")
_EVENT_START = re.compile(rb"<Event[ \t\r\n>]")
_RESERVED = (b"<System", b"<EventData", b"<BinaryEventData", b"<ProcessingErrorData")


def _unescape(s: str) -> str:
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'") \
        .replace("&amp;", "&")


def _text(b: bytes):
    if not b:
        return None
    s = b.decode("ascii")
    return _unescape(s) if "&" in s else s


def _attrs(raw: bytes):
    """Attribute dict of a System child, or None when a name repeats (left to expat's error)."""
    out = {}
    for name, dq, sq in _ATTR.findall(raw):
        key = name.decode("ascii")
        if key in out:
            return None
        v = (dq or sq).decode("ascii")
        out[key] = _unescape(v) if "&" in v else v
    return out


def _fast_block(block: bytes, root_ns: str):
    """A ``_Raw`` of one <Event>...</Event> block, or None when the block is not in the grammar."""
    if not block.isascii() or b"]]>" in block:
        return None
    m = _BLOCK.fullmatch(block)
    if m is None:
        return None
    ns = m.group("ns")
    if ns is None:
        ns = m.group("ns2")
    ns = root_ns if ns is None else ns.decode("ascii")
    if ns not in ("", EVENT_NAMESPACE):
        return None
    rest = m.group("rest")
    if rest and b"<System" in rest:  # a second System: the last one counts
        return None
    rec = _Raw()
    rec.system = True
    for name, attrs, text in _SYS.findall(m.group("sys")):
        if name == b"Provider":
            a = _attrs(attrs)
            if a is None:
                return None
            rec.provider, rec.guid = a.get("Name"), a.get("Guid")
        elif name == b"EventID":
            rec.event_id = _text(text)
        elif name == b"Version":
            rec.version = _text(text)
        elif attrs.count(b"=") > 1 or name in (b"TimeCreated", b"Execution"):
            a = _attrs(attrs)
            if a is None:
                return None
            if name == b"TimeCreated":
                rec.time = a.get("SystemTime") or a.get("RawTime")
            elif name == b"Execution":
                rec.pid, rec.tid = a.get("ProcessID"), a.get("ThreadID")
    if not _is_dxgkrnl(rec.provider, rec.guid):
        rec.data = {}  # not read: the decoder skips the event on its provider
        return rec
    if rest and any(r in rest for r in _RESERVED):  # another EventData: the last one counts
        return None
    data = m.group("data")
    if data is not None:
        pairs = (_DATA1 if b"<Data Name='" in data else _DATA).findall(data)
        raw = dict(pairs)
        if len(raw) == len(pairs) and b"&" not in data:
            rec.data = {k.decode("ascii"): (v.decode("ascii") if v else None) for k, v in raw.items()}
        else:
            d: dict = {}
            for k, v in pairs:
                d[k.decode("ascii")] = _text(v)
            rec.data = d
    return rec


def _is_dxgkrnl(provider, guid) -> bool:
    return provider == PROVIDER or (guid is not None and guid.strip().lower() == PROVIDER_GUID)


class TraceReader:
    """Iterate to get the DxgKrnl events of a trace (``Event``), in order; then read the counts.

    ``source``: a path, a binary or text file object, or bytes.  Events of other providers and other
    DxgKrnl events are skipped and counted (``other_providers``, ``other_dxgkrnl``); ``total`` counts
    every <Event>.  A trace can be iterated once.  ``fast=False`` reads every block with expat (the
    fast path's oracle in the tests); ``blocks_fast`` / ``blocks_expat`` say how the blocks were read.
    """

    def __init__(self, source, *, name: str | None = None, chunk_size: int = CHUNK, fast: bool = True):
        self.source, self.chunk_size, self.fast = source, chunk_size, fast
        self.name = name or _name_of(source)
        self.total = 0
        self.decoded = 0
        self.other_providers = 0
        self.other_dxgkrnl = 0
        self.providers: dict = {}  # name or GUID -> events skipped
        self.blocks_fast = 0
        self.blocks_expat = 0
        self._used = False
        self._root_seen = False  # the root element started: the input is XML
        self._root_at = None  # byte offset of the root start tag, from the guard

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

    def _read(self, stream):
        try:
            return stream.read(self.chunk_size)
        except (OSError, UnicodeDecodeError) as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc}") from None

    def _parse(self, stream):
        guard = _guard(self)
        head = []  # chunks read before the root start tag was seen
        chunk = None
        while guard is not None:
            chunk = self._read(stream)
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
        if head and isinstance(head[0], bytes) and self._root_seen and self.fast:
            data = b"".join(head)
            root = _ROOT.match(data, self._root_at)
            enc = _ENCODING.match(data, 0, self._root_at)
            if root is not None and (enc is None or enc.group(1).lower() in (b"utf-8", b"utf8")):
                yield from self._fast(stream, data, root)
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
                raise EtwInputError(f"{self.name} is empty: no XML at all; {ETL_HINT}") from None
            inside = f" (in event #{x.started})" if x.started else ""
            raise EtwInputError(f"{self.name}: the XML ends early (truncated) at line {line}, column {column}"
                                f"{inside}: {pyexpat.errors.messages[exc.code]}") from None
        for rec in x.take():
            self.blocks_expat += 1
            event = self._decode(rec)
            if event is not None:
                yield event

    # ---- the fast path
    def _fast(self, stream, buf: bytes, root):
        """Blocks matched by the grammar; any other block goes to expat (see the module docstring)."""
        root_tag = root.group(0)
        ns = root.group("ns") if root.group("ns") is not None else root.group("ns2")
        root_ns = "" if ns is None else ns.decode("ascii")
        # the root start tag on one line: a resumed parser's positions map back by one offset
        stub = root_tag.replace(b"\r\n", b"  ").replace(b"\r", b" ").replace(b"\n", b" ")
        pos = root.end()
        lines, col0 = 0, 0  # line breaks before buf[0], and the column at buf[0]
        started = 0
        eof = False
        find, match_top = bytes.find, _TOP.match
        while True:
            pos = match_top(buf, pos).end()
            end = -1
            if buf.startswith(b"<Event", pos) and _EVENT_START.match(buf, pos):
                end = find(buf, b"</Event>", pos)
            if end < 0 and not eof and len(buf) - pos < BLOCK_LIMIT and (
                    len(buf) - pos < 9 or buf.startswith(b"<Event", pos)):
                chunk = self._read(stream)  # a block or the top-level item is not complete yet
                if chunk:
                    if pos:
                        lines, col0 = _advance(buf, pos, lines, col0)
                        buf = buf[pos:]
                        pos = 0
                    buf += chunk
                    continue
                eof = True
                continue
            if end < 0:  # </Events>, something else, or the end of the input: expat reads the rest exactly
                x = _ExpatEvents(self, resumed=True, started=started)
                x.parser.Parse(stub, False)
                origin = _origin(buf, pos, lines, col0, len(stub))
                yield from self._expat(stream, [buf[pos:]], x, origin)
                return
            end += 8
            started += 1
            rec = _fast_block(buf[pos:end], root_ns)
            if rec is not None:
                self.blocks_fast += 1
                event = self._decode(rec)
                if event is not None:
                    yield event
                pos = end
                continue
            # a block outside the grammar: expat, under the root's start tag
            x = _ExpatEvents(self, resumed=True, started=started - 1)
            x.parser.Parse(stub, False)
            origin = _origin(buf, pos, lines, col0, len(stub))
            error = None
            try:
                x.parser.Parse(buf[pos:end], False)
            except pyexpat.ExpatError as exc:
                error = exc
            if error is None and x.depth == 1 and x.ended == 1 and x.started == started:
                for rec in x.take():
                    self.blocks_expat += 1
                    event = self._decode(rec)
                    if event is not None:
                        yield event
                pos = end
                continue
            if error is not None:
                for rec in x.take():
                    self.blocks_expat += 1
                    event = self._decode(rec)
                    if event is not None:
                        yield event
                line, column = _mapped(origin, error.lineno, error.offset)
                raise self._xml_error(line, column, pyexpat.errors.messages[error.code], x.started) from None
            # the block did not end where it seemed to: the same parser reads the rest of the document
            yield from self._expat(stream, [buf[end:]], x, origin)
            return

    def _xml_error(self, line, column, reason, started) -> EtwInputError:
        if not self._root_seen:
            hint = ETL_HINT if not str(self.name).lower().endswith(".etl") else \
                "an .etl file is binary; convert it: tracerpt FILE.etl -o FILE.xml -of XML"
            return EtwInputError(f"{self.name} is not XML: {reason} at line {line}, column {column}; {hint}")
        inside = f" (in event #{started})" if started else ""
        return EtwInputError(f"{self.name}: not well-formed XML at line {line}, column {column}{inside}: {reason}")

    # ---- one <Event>
    def _decode(self, rec: _Raw) -> Event | None:
        self.total += 1
        number = self.total
        if rec.local is not None:
            raise EtwInputError(f"{self.name}: event #{number} is an <{rec.local}> element in <Events>, not an "
                                f"<Event> of {EVENT_NAMESPACE}: another schema", event=number)
        if not rec.system:
            raise EtwInputError(f"{self.name}: event #{number} has no <System> element: not the Windows event "
                                f"schema", event=number, field="System")
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
        where = f"{self.name}: event #{number}"
        eid = _system_number(rec.event_id, "EventID", where, number)
        kind = KINDS.get(eid)
        if kind is None:
            self.other_dxgkrnl += 1
            return None
        where = f"{self.name}: event #{number} ({kind.label})"
        if rec.data is None:
            what = (f"<{rec.undecoded}> instead of <EventData>: tracerpt had no schema for it" if rec.undecoded
                    else "no <EventData>")
            raise EtwInputError(f"{where} has {what}; decode the trace on a machine with the {PROVIDER} "
                                f"manifest (tracerpt FILE.etl -o FILE.xml -of XML)", event=number, field="EventData")
        try:
            fields, extra = parse_fields(rec.data, kind, where)
        except EtwInputError as exc:
            exc.event = number
            raise
        ver = kind.version if rec.version is None else _system_number(rec.version, "Version", where, number)
        self.decoded += 1
        pid, tid = rec.pid, rec.tid
        return Event(number, kind, ver, fields, rec.time,
                     None if pid is None else _system_number(pid, "ProcessID", where, number),
                     None if tid is None else _system_number(tid, "ThreadID", where, number), extra, self.name)


def _advance(buf: bytes, pos: int, lines: int, col0: int) -> tuple:
    """(line breaks, column) at buf[pos], from those at buf[0]; expat counts CRLF, CR and LF as one break."""
    head = buf[:pos]
    lines += head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")
    last = max(head.rfind(b"\n"), head.rfind(b"\r"))
    return lines, (col0 + pos if last < 0 else pos - last - 1)


def _origin(buf: bytes, pos: int, lines: int, col0: int, stub: int) -> tuple:
    lines, col = _advance(buf, pos, lines, col0)
    return (col - stub, lines + 1, stub)


def _mapped(origin: tuple, line: int, column: int) -> tuple:
    """A resumed parser's (line, column) in the file: its first line is the block's line, after the stub."""
    shift, first, _stub = origin
    return (first + line - 1, column + shift) if line == 1 else (first + line - 1, column)


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
        reader._root_at = g.CurrentByteIndex
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


def read(source, *, name: str | None = None, fast: bool = True) -> TraceReader:
    """The DxgKrnl segment and allocation events of a tracerpt or Event Viewer XML trace, streamed.

    ``source``: a path, a file object (binary or text), or bytes.  Iterate the result for ``Event``
    values; afterwards ``total``, ``decoded``, ``other_providers``, ``other_dxgkrnl`` say what was
    seen, and ``check_found()`` raises when none of these events was there.  ``fast=False`` reads
    every event through expat handlers (the same events; slower).
    """
    return TraceReader(source, name=name, fast=fast)
