"""The expat reader of a trace: pyexpat handlers that collect each <Event>'s values as a ``_Raw``.

It reads any well-formed document; the fast path hands it every block outside its grammar, and the
tests hold it as the fast path's oracle.
"""
from __future__ import annotations

import pyexpat

from ...errors import EtwInputError
from ..model.schema import EVENT_NAMESPACE, PROVIDER, PROVIDER_GUID

ETL_HINT = ("give an .etl file (read directly: its first buffer holds the log-file header), or tracerpt's "
            "or Event Viewer's XML of one")

_MORE = "more"  # a <Data> whose name came before in the same EventData: its text is appended
_SEP = "}"  # expat's namespace separator: names arrive as "uri}local" or "local"
_EVENT_NAMES = {EVENT_NAMESPACE + _SEP + "Event": EVENT_NAMESPACE + _SEP, "Event": ""}
_SECTIONS = ("System", "EventData", "ProcessingErrorData")  # the Event children whose children are read


def _local(tag: str) -> str:
    return tag.rsplit(_SEP, 1)[-1]


class _Raw:
    """What one top-level element of <Events> gave: the values the decoder reads, as text."""

    __slots__ = ("local", "system", "provider", "guid", "event_id", "version", "time", "pid", "tid", "data",
                 "undecoded", "binary")

    def __init__(self, local=None):
        self.local = local  # the local name when the element is not an <Event> of the schema
        self.system = False
        self.provider = self.guid = self.event_id = self.version = self.time = self.pid = self.tid = None
        self.data = self.undecoded = self.binary = None  # binary: <BinaryEventData>'s hex text


# ------------------------------------------------------------------ the expat path
class _ExpatEvents:
    """pyexpat handlers that turn <Event> elements into ``_Raw`` records, without building elements.

    ``resumed``: the parser is fed a copy of the root start tag and then bytes from the middle of the
    document; ``started`` continues the count of top-level elements begun.
    """

    def __init__(self, reader, *, resumed: bool = False, started: int = 0):
        p = pyexpat.ParserCreate(None, _SEP)
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
        self.section = None  # one of _SECTIONS or None, for the Event child being read
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
            self.section = local if local in _SECTIONS else None
            if local == "System":
                rec.system = True
                rec.provider = rec.guid = rec.event_id = rec.version = rec.time = rec.pid = rec.tid = None
            elif local == "EventData":
                rec.data = {}
            elif local in ("BinaryEventData", "ProcessingErrorData"):
                rec.undecoded, rec.binary = local, None
                if local == "BinaryEventData":
                    self.collect = ("binary", d + 1, False)
            return
        if rel != 2 or self.section is None:
            return
        if self.section == "ProcessingErrorData":  # its EventPayload: the payload as hex
            if name == prefix + "EventPayload":
                self.collect = ("binary", d + 1, False)
            return
        if self.section == "EventData":
            key = attrs.get("Name", "")  # no Name: kept under "", a name the template lacks
            if key in rec.data:  # the name again: a counted array's next value (parse_fields decides)
                held = rec.data[key]
                rec.data[key] = held if isinstance(held, list) else [held]
                self.collect = (key, d + 1, _MORE)
                return
            self.collect = (key, d + 1, True)
            rec.data[key] = None
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
        if is_data is _MORE:
            self.rec.data[key].append(text)
        elif is_data:
            self.rec.data[key] = text
        else:
            setattr(self.rec, key, "" if text is None and key == "binary" else text)  # an empty payload is b""

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


def _is_dxgkrnl(provider, guid) -> bool:
    return provider == PROVIDER or (guid is not None and guid.strip().lower() == PROVIDER_GUID)


def _mapped(origin: tuple, line: int, column: int) -> tuple:
    """A resumed parser's (line, column) in the file: its first line is the block's line, after the stub."""
    shift, first, _stub = origin
    return (first + line - 1, column + shift) if line == 1 else (first + line - 1, column)
