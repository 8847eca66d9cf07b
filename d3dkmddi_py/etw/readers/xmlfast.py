"""The fast path, for a UTF-8 document whose root is a plain <Events>.

Each <Event> ... </Event> block is matched by one regular expression of tracerpt's and Event
Viewer's layout, a grammar whose every match is well-formed XML with the values the expat path
reads.  The first block of a layout also teaches a "shape": its exact markup with the values as
groups, which later blocks of that layout match at little more than a string compare (a subset of
the grammar).  A block it does not match (CDATA, comments, character references, non-ASCII, other
attribute forms...) is parsed by the expat path, under a copy of the root start tag, with positions
mapped back to the file; when that parse does not end exactly at the block's end (a nested <Event>,
"</Event>" in a comment), the expat path reads the rest of the document.
"""
from __future__ import annotations

import pyexpat
import re

from ..model.schema import EVENT_NAMESPACE
from .xmlexpat import _ExpatEvents, _is_dxgkrnl, _mapped, _Raw

BLOCK_LIMIT = 1 << 20  # an <Event> longer than this is left to the expat path (memory stays bounded)

# ------------------------------------------------------------------ the fast path's grammar (on ASCII text)
_S = r"[ \t\r\n]"
_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_AVD, _AVS = r"[^\"<&\x00-\x1f]*", r"[^'<&\x00-\x1f]*"  # attribute values: no entity, no whitespace to normalise
_AV = r"(?:\"" + _AVD + r"\"|'" + _AVS + r"')"
_ENT = r"&(?:amp|lt|gt|quot|apos);"
# text as expat returns it unchanged but for the five entities: no CR (expat turns it into LF)
_VAL = r"[^<&\x00-\x08\x0b-\x1f]*(?:" + _ENT + r"[^<&\x00-\x08\x0b-\x1f]*)*"
# text that is only skipped: CR allowed
_ANY = r"[^<&\x00-\x08\x0b\x0c\x0e-\x1f]*(?:" + _ENT + r"[^<&\x00-\x08\x0b\x0c\x0e-\x1f]*)*"
_ONE_ATTR = r"(?:" + _S + r"+(?!xmlns)" + _NAME + r"=" + _AV + r")?"  # one at most: never a duplicate


def _element(level: int) -> str:
    """Any element nested ``level`` deep at most, one attribute each, mixed text (validated, skipped)."""
    g = f"e{level}"
    inner = "" if level == 0 else r"(?:" + _element(level - 1) + _ANY + r")*"
    return r"<(?P<" + g + r">" + _NAME + r")" + _ONE_ATTR + _S + r"*(?:/>|>" + _ANY + inner + r"</(?P=" + g + r")>)"


_ATTRS = r"(?:" + _S + r"+(?!xmlns)" + _NAME + r"=" + _AV + r")*"
_SYS_CHILD = r"<(" + _NAME + r")(" + _ATTRS + r")" + _S + r"*(?:/>|>(" + _VAL + r")</\1>)"
_DATA_DQ = r"<Data Name=\"([^\"'<&\x00-\x1f]*)\">(" + _VAL + r")</Data>"
_DATA_SQ = r"<Data Name='([^\"'<&\x00-\x1f]*)'>(" + _VAL + r")</Data>"
_NSATTR = r"(?:" + _S + r"+xmlns=(?:\"(?P<ns>" + _AVD + r")\"|'(?P<ns2>" + _AVS + r")'))?"
_BLOCK = re.compile(
    r"<Event" + _NSATTR + _S + r"*>"
    + _S + r"*<System>(?P<sys>(?:" + _S + r"*<(?P<s>" + _NAME + r")" + _ATTRS + _S + r"*(?:/>|>" + _VAL
    + r"</(?P=s)>))*)" + _S + r"*</System>"
    + r"(?:" + _S + r"*<EventData>(?P<data>(?:" + _S + r"*" + _DATA_DQ + r")*|(?:" + _S + r"*" + _DATA_SQ
    + r")*)" + _S + r"*</EventData>)?"
    + r"(?P<rest>(?:" + _S + r"*" + _element(2) + r")*)" + _S + r"*</Event>")
_SYS = re.compile(_SYS_CHILD)
_DATA = re.compile(_DATA_DQ)
_DATA1 = re.compile(_DATA_SQ)
_ATTR = re.compile(r"(" + _S + r"+)(" + _NAME + r")=(?:\"([^\"]*)\"|'([^']*)')")
_ROOT = re.compile((r"<Events" + _NSATTR + _S + r"*>").encode("ascii"))
_ENCODING = re.compile(rb"^(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding" + _S.encode() + rb"*=" + _S.encode()
                       + rb"*[\"']([A-Za-z0-9._\-]+)")
_TOP = re.compile(_S.encode("ascii") + rb"*")
_AFTER_NAME = (b" ", b"\t", b"\r", b"\n", b">")  # what may follow "<Event" in an <Event> start tag
_RESERVED = ("<System", "<EventData", "<BinaryEventData", "<ProcessingErrorData")
_CAPTURED = {("System", "Provider"): ("Name", "Guid"), ("System", "TimeCreated"): ("SystemTime", "RawTime"),
             ("System", "Execution"): ("ProcessID", "ThreadID")}
_TOKEN = re.compile(r"<(/?)(" + _NAME + r")((?:" + _S + r"+" + _NAME + r"=(?:\"[^\"]*\"|'[^']*'))*)(" + _S
                    + r"*)(/?)>|([^<]+)")


def _unescape(s: str) -> str:
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'") \
        .replace("&amp;", "&")


def _text(s: str):
    if not s:
        return None
    return _unescape(s) if "&" in s else s


def _attrs(raw: str):
    """Attribute dict of a System child, or None when a name repeats (left to expat's error)."""
    out = {}
    for _ws, key, dq, sq in _ATTR.findall(raw):
        if key in out:
            return None
        out[key] = dq or sq
    return out


def _generic(s: str, root_ns: str):
    """A ``_Raw`` of one <Event>...</Event> block matched by the grammar, or None when it is not."""
    m = _BLOCK.fullmatch(s)
    if m is None:
        return None
    ns = m.group("ns")
    if ns is None:
        ns = m.group("ns2")
    if (root_ns if ns is None else ns) not in ("", EVENT_NAMESPACE):
        return None
    rest = m.group("rest")
    if rest and "<System" in rest:  # a second System: the last one counts
        return None
    rec = _Raw()
    rec.system = True
    for name, attrs, text in _SYS.findall(m.group("sys")):
        if name == "Provider":
            a = _attrs(attrs)
            if a is None:
                return None
            rec.provider, rec.guid = a.get("Name"), a.get("Guid")
        elif name == "EventID":
            rec.event_id = _text(text)
        elif name == "Version":
            rec.version = _text(text)
        elif attrs.count("=") > 1 or name in ("TimeCreated", "Execution"):
            a = _attrs(attrs)
            if a is None:
                return None
            if name == "TimeCreated":
                rec.time = a.get("SystemTime") or a.get("RawTime")
            elif name == "Execution":
                rec.pid, rec.tid = a.get("ProcessID"), a.get("ThreadID")
    if not _is_dxgkrnl(rec.provider, rec.guid):
        rec.data = {}  # not read: the decoder skips the event on its provider
        return rec
    if rest and any(r in rest for r in _RESERVED):  # another EventData: the last one counts
        return None
    data = m.group("data")
    if data is not None:
        rec.data = data_dict((_DATA1 if "<Data Name='" in data else _DATA).findall(data), _text)
    return rec


def data_dict(pairs, text) -> dict:
    """The EventData values by name; a name given again (a counted array's values) gathers a list, as
    the expat reader does."""
    d: dict = {}
    for k, v in pairs:
        v = text(v)
        if k in d:
            held = d[k]
            d[k] = held + [v] if isinstance(held, list) else [held, v]
        else:
            d[k] = v
    return d


_CAPTURED_TEXT, _SKIPPED_TEXT = (True, "text"), (False, "text")
_NOT_IN_PLAIN = bytes(range(32)) + b"<"  # what a plain match's values may not hold
# every slot is a group in both expressions, so their groups are the same
_STRICT = {_CAPTURED_TEXT: "(" + _VAL + ")", _SKIPPED_TEXT: "(" + _ANY + ")",
           (True, '"'): "(" + _AVD + ")", (False, '"'): "(" + _AVD + ")",
           (True, "'"): "(" + _AVS + ")", (False, "'"): "(" + _AVS + ")"}
_PLAIN = {_CAPTURED_TEXT: "([^<]*)", _SKIPPED_TEXT: "([^<]*)",
          (True, '"'): '([^"]*)', (False, '"'): '([^"]*)', (True, "'"): "([^']*)", (False, "'"): "([^']*)"}


class _Shape:
    """A block's exact markup with its texts and attribute values as slots: a regular expression
    that only blocks with the same elements, attributes and spacing match, so the values sit in
    fixed groups.  Learnt from a block the grammar matched, it accepts a subset of the grammar.

    Two expressions with the same groups, one per text or attribute value: ``regex`` (the grammar's
    value classes) and ``plain``, for a block without "&", whose values are any text up to "<" or the
    quote; ``read`` accepts a plain match only when its values hold no "<" and no control character
    (so no CR or LF either), which makes it a strict match.  sre scans "[^<]*" about twice as
    fast as a class with ranges."""

    __slots__ = ("regex", "plain", "breaks", "ops", "data_at", "names", "dxgkrnl", "index", "absent", "repeats")

    def __init__(self, s: str, rec: _Raw):
        parts, ops, names = [], [], []
        stack: list = []
        groups = data_count = 0
        text_at = None  # index in parts of the text just after the last start tag
        self.dxgkrnl = _is_dxgkrnl(rec.provider, rec.guid)
        self.data_at = None
        for m in _TOKEN.finditer(s):
            close, name, attrs, space, empty, text = m.groups()
            if text is not None:
                text_at = len(parts) if text_at == len(parts) else None
                parts.append(re.escape(text))
                continue
            if close:
                path = tuple(stack[1:])
                leaf = stack and stack[-1] == name and text_at is not None
                stack.pop()
                role = None
                if leaf:
                    if path in (("System", "EventID"), ("System", "Version")):
                        role = "event_id" if name == "EventID" else "version"
                    elif path == ("EventData", "Data") and rec.data is not None and self.dxgkrnl:
                        role = "data"
                    slot = _CAPTURED_TEXT if role else _SKIPPED_TEXT
                    if text_at < len(parts):
                        parts[text_at] = slot
                    else:
                        parts.append(slot)
                    if role == "data":
                        if self.data_at is None:
                            self.data_at = groups
                        if self.data_at + len(names) - 1 != groups:
                            raise ValueError("Data values are not consecutive groups, one per name")
                        data_count += 1
                    elif role:
                        ops.append((role, groups))
                    groups += 1
                parts.append(re.escape(m.group(0)))
                text_at = None
                continue
            path = tuple(stack[1:]) + (name,)
            tag = [re.escape("<" + name)]
            found = {}
            for a in _ATTR.finditer(attrs):
                ws, key, dq, sq = a.groups()
                quote = '"' if dq is not None else "'"
                value = dq if dq is not None else sq
                literal = (len(stack) == 0 or (path == ("EventData", "Data") and key == "Name"))
                if literal:
                    tag.append(re.escape(ws + key + "=" + quote + value + quote))
                    if path == ("EventData", "Data"):
                        names.append(value)
                    continue
                captured = key in _CAPTURED.get(path, ())
                tag.append(re.escape(ws + key + "=" + quote))
                tag.append((captured, quote))
                tag.append(quote)
                if captured:
                    found[key] = groups
                groups += 1
            if path == ("System", "Provider"):
                ops.append(("provider", found.get("Name"), found.get("Guid")))
            elif path == ("System", "TimeCreated"):
                ops.append(("time", found.get("SystemTime"), found.get("RawTime")))
            elif path == ("System", "Execution"):
                ops.append(("execution", found.get("ProcessID"), found.get("ThreadID")))
            tag.append(re.escape(space + empty + ">"))
            parts.extend(tag)
            if empty:
                text_at = None
            else:
                stack.append(name)
                text_at = len(parts)
        if self.data_at is not None and data_count != len(names):
            raise ValueError("a Data element has no value slot")
        if self.data_at is None:
            names = []
        self.regex = re.compile("".join(_STRICT.get(p, p) for p in parts))
        self.plain = re.compile("".join(_PLAIN.get(p, p) for p in parts))
        own = self.regex.fullmatch(s)
        if own is None:
            raise ValueError("the shape does not match its own block")
        # the markup's line breaks: a plain match's values hold none
        self.breaks = _line_breaks(s) - sum(_line_breaks(v) for v in own.groups())
        self.ops = tuple(ops)
        self.names = tuple(names)
        self.repeats = len(set(names)) != len(names)  # a counted array's Data elements
        kinds = [op[0] for op in ops]
        self.index = None  # group of each System value (-1: absent), when each element occurs once
        if len(set(kinds)) == len(kinds):
            at = {op[0]: op[1:] for op in ops}
            self.index = tuple(-1 if i is None else i for i in (
                at.get("provider", (None, None)) + at.get("event_id", (None,)) + at.get("version", (None,))
                + at.get("time", (None, None)) + at.get("execution", (None, None))))
        self.absent = self.index is not None and -1 in self.index  # a System value the markup lacks

    def raw(self, g: tuple, amp: bool):
        """The ``_Raw`` of a match's groups; ``amp``: the block holds an entity."""
        if self.index is None:
            return self._raw_ops(g, amp)
        if self.absent:
            g += (None,)
        ip, ig, ie, iv, it1, it2, ipid, itid = self.index
        rec = _Raw()
        rec.system = True
        rec.provider, rec.guid, rec.pid, rec.tid = g[ip], g[ig], g[ipid], g[itid]
        rec.time = g[it1] or g[it2]
        rec.event_id = _text(g[ie]) if amp else (g[ie] or None)
        rec.version = _text(g[iv]) if amp else (g[iv] or None)
        return self._data(rec, g, amp)

    def _raw_ops(self, g: tuple, amp: bool):
        rec = _Raw()
        rec.system = True
        for op in self.ops:
            kind = op[0]
            if kind == "event_id":
                rec.event_id = _text(g[op[1]])
            elif kind == "version":
                rec.version = _text(g[op[1]])
            else:
                a = None if op[1] is None else g[op[1]]
                b = None if op[2] is None else g[op[2]]
                if kind == "provider":
                    rec.provider, rec.guid = a, b
                elif kind == "time":
                    rec.time = a or b
                else:
                    rec.pid, rec.tid = a, b
        return self._data(rec, g, amp)

    def _data(self, rec, g, amp: bool):
        """The EventData values of a matched block (unescaped only when the block holds an entity)."""
        if self.data_at is not None:
            values = g[self.data_at:self.data_at + len(self.names)]
            if self.repeats:
                rec.data = data_dict(zip(self.names, values), _text if amp or "" in values else str)
            elif amp or "" in values:
                rec.data = {k: _text(v) for k, v in zip(self.names, values)}
            else:
                rec.data = dict(zip(self.names, values))
        elif not _is_dxgkrnl(rec.provider, rec.guid):
            rec.data = {}
        return rec


class _Blocks:
    """Reads blocks: a learnt shape first (keyed by the Provider and EventID markup), else the grammar."""

    MAX_KEYS, MAX_SHAPES = 256, 4

    def __init__(self, root_ns: str):
        self.root_ns = root_ns
        self.shapes: dict = {}
        self.breaks = None  # the line breaks of the block just read, when its shape knows them

    def read(self, block: bytes):
        """A ``_Raw``, or None for a block outside the grammar."""
        try:
            s = block.decode("ascii")
        except UnicodeDecodeError:
            return None
        if "]]>" in s:
            return None
        start = s.find("<Provider", 0, 2048)
        end = s.find("</EventID>", start, 2048) if start >= 0 else -1
        key = s[start:end] if end >= 0 else None  # only a cache key: the shape's expression decides
        shapes = self.shapes.get(key)
        self.breaks = None
        if shapes:
            amp = "&" in s
            for shape in shapes:
                m = None if amp else shape.plain.fullmatch(s)
                if m is not None:
                    g = m.groups()
                    values = "".join(g).encode("ascii")
                    if len(values.translate(None, _NOT_IN_PLAIN)) == len(values):
                        self.breaks = shape.breaks
                    else:
                        m = None
                if m is None:
                    m = shape.regex.fullmatch(s)
                    g = None if m is None else m.groups()
                if m is not None:
                    rec = shape.raw(g, amp)
                    if shape.dxgkrnl or not _is_dxgkrnl(rec.provider, rec.guid):
                        return rec
                    break
        self.breaks = None
        rec = _generic(s, self.root_ns)
        if rec is not None and key is not None and (shapes is None or len(shapes) < self.MAX_SHAPES):
            try:
                shape = _Shape(s, rec)
            except ValueError:
                return rec
            if shapes is None:
                if len(self.shapes) >= self.MAX_KEYS:
                    self.shapes.clear()
                shapes = self.shapes[key] = []
            shapes.insert(0, shape)
        return rec


def root_of(head: bytes, root_at: int):
    """The root start tag's match when the fast path may read the document (a plain <Events>, UTF-8)."""
    root = _ROOT.match(head, root_at)
    enc = _ENCODING.match(head, 0, root_at)
    if root is not None and root.group(0).isascii() and (enc is None or enc.group(1).lower() in (b"utf-8", b"utf8")):
        return root
    return None


def events(reader, stream, buf: bytes, root):
    """Blocks matched by the grammar; any other block goes to expat (see the module docstring)."""
    root_tag = root.group(0)
    ns = root.group("ns") if root.group("ns") is not None else root.group("ns2")
    root_ns = "" if ns is None else ns.decode("ascii")
    blocks = _Blocks(root_ns)
    # the root start tag on one line: a resumed parser's positions map back by one offset
    stub = root_tag.replace(b"\r\n", b"  ").replace(b"\r", b" ").replace(b"\n", b" ")
    pos = root.end()
    mark = pos  # line breaks before buf[mark], and the column there (the prolog may hold any character)
    lines, col = _position(buf[:mark].decode("utf-8", "replace"))
    started = 0
    eof = False
    find, match_top = bytes.find, _TOP.match
    while True:
        pos = match_top(buf, pos).end()
        end = -1
        if buf.startswith(b"<Event", pos) and buf[pos + 6:pos + 7] in _AFTER_NAME:
            end = find(buf, b"</Event>", pos)
        if end < 0 and not eof and len(buf) - pos < BLOCK_LIMIT and (
                len(buf) - pos < 9 or buf.startswith(b"<Event", pos)):
            chunk = reader._read(stream)  # a block or the top-level item is not complete yet
            if chunk:
                cut = pos - (pos > 0 and buf[pos - 1] == 13)  # never between the CR and LF of a CRLF
                if cut:
                    lines, col = _advance(buf, mark, cut, lines, col)
                    buf = buf[cut:]
                    pos -= cut
                    mark = 0
                buf += chunk
                continue
            eof = True
            continue
        if end < 0:  # </Events>, something else, or the end of the input: expat reads the rest exactly
            while pos > mark and buf[pos - 1] in b" \t\r\n":  # from the last markup: expat counts a
                pos -= 1  # CR at the very end as no line break, so it must see the whitespace itself
            x = _ExpatEvents(reader, resumed=True, started=started)
            x.parser.Parse(stub, False)
            origin = _origin(buf, mark, pos, lines, col, len(stub))
            yield from reader._expat(stream, [buf[pos:]], x, origin)
            return
        end += 8
        started += 1
        rec = blocks.read(buf[pos:end])
        if rec is not None:
            lines, col = _advance(buf, mark, pos, lines, col)
            lines, col = _advance(buf, pos, end, lines, col, blocks.breaks)
            mark = end
            reader.blocks_fast += 1
            event = reader._decode(rec)
            if event is not None:
                yield event
            pos = end
            continue
        # a block outside the grammar: expat, under the root's start tag
        x = _ExpatEvents(reader, resumed=True, started=started - 1)
        x.parser.Parse(stub, False)
        origin = _origin(buf, mark, pos, lines, col, len(stub))
        error = None
        try:
            x.parser.Parse(buf[pos:end], False)
        except pyexpat.ExpatError as exc:
            error = exc
        if error is None and x.depth == 1 and x.ended == 1 and x.started == started:
            yield from _taken(reader, x)
            pos = end
            continue
        if error is not None:
            yield from _taken(reader, x)  # the events before the error come first
            line, column = _mapped(origin, error.lineno, error.offset)
            raise reader._xml_error(line, column, pyexpat.errors.messages[error.code], x.started) from None
        # the block did not end where it seemed to: the same parser reads the rest of the document
        yield from reader._expat(stream, [buf[end:]], x, origin)
        return


def _taken(reader, x):
    """The events of the blocks an expat reader has collected."""
    for rec in x.take():
        reader.blocks_expat += 1
        event = reader._decode(rec)
        if event is not None:
            yield event


def _advance(buf: bytes, start: int, stop: int, lines: int, col: int, breaks: int | None = None) -> tuple:
    """(line breaks, column) at buf[stop], from those at buf[start]; expat counts CRLF, CR and LF as one
    break, and a column per character (a block expat read may hold UTF-8).  ``breaks``: the count,
    when known (a plain match of a shape: ASCII)."""
    plain = breaks is not None
    if not plain:
        cr = buf.count(b"\r", start, stop)
        breaks = buf.count(b"\n", start, stop) + (cr and cr - buf.count(b"\r\n", start, stop))
    if breaks:
        lines, col = lines + breaks, 0
        start = max(buf.rfind(b"\n", start, stop), buf.rfind(b"\r", start, stop)) + 1
    if plain or stop == start:
        return lines, col + stop - start
    last = buf[start:stop]
    return lines, col + (len(last) if last.isascii() else len(last.translate(None, _CONTINUATION)))


_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character


def _position(text: str) -> tuple:
    """(line breaks, column) at the end of ``text`` as expat counts them: a column per character (the
    byte-order mark is one)."""
    breaks = _line_breaks(text)
    if breaks:
        return breaks, len(text) - max(text.rfind("\n"), text.rfind("\r")) - 1
    return 0, len(text)


def _line_breaks(text: str) -> int:
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _origin(buf: bytes, mark: int, pos: int, lines: int, col: int, stub: int) -> tuple:
    lines, col = _advance(buf, mark, pos, lines, col)
    return (col - stub, lines + 1, stub)
