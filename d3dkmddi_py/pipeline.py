"""The one path from input to output: source -> chunks of records -> decode -> check -> sink.

``decode`` and ``validate``, from Python and from the command line, for one record or millions,
run here.  A chunk is a run of whole records as bytes plus their TypeLayout; it is decoded
into columns (NumPy, when installed) or record by record, checked with the rules of
``semantics.checks`` (column-wise where it can), and handed to a sink that writes as it
goes, so memory stays at one chunk and the first record is printed at once.

Sinks: ``text`` (WinDbg ``dt -r`` style), ``json`` (JSON lines, one object per record),
and for ``decode`` the columns as ``csv``/``jsonl``/``parquet``; for ``validate`` the
findings as ``csv``/``jsonl``/``parquet``, one row per finding.
"""
from __future__ import annotations

import json
import os
import stat
from functools import lru_cache

from ._numpy import numpy_module
from ._records import dataclass
from .csvtext import csv_cell as _csv_cell
from .errors import DecodeError, InvalidArgument
from .span import _short, check_offset_count, check_range
from .layout import TypeLayout
from .semantics._rules import RULES
from .semantics._view import View
from .semantics.checks import checks_for, column_hits, column_messages, record_hits

BODY_CACHE = 4096  # records' printed bodies kept by their bytes (dumps repeat the same values a lot)
CHUNK_BYTES = 4 << 20  # input bytes per chunk: small enough to print at once, large enough for NumPy
MAX_UNSIZED_BYTES = 256 << 20  # pipes, devices and standard input hold at most this much (documented)


# ------------------------------------------------------------------ sources
@dataclass(frozen=True)
class Chunk:
    """``count`` whole records of ``layout``: record ``start`` is at byte ``offset`` of the input."""

    layout: TypeLayout
    start: int
    offset: int
    data: bytes
    address: int | None = None  # the debuggee address of data[0] (WinDbg input), else None

    @property
    def count(self) -> int:
        return len(self.data) // self.layout.size

    def record(self, row: int) -> bytes:
        size = self.layout.size
        return self.data[row * size:(row + 1) * size]


class Records:
    """A checked range of records to read: from bytes in memory or from a file, chunk by chunk.

    Everything is checked when it is made (type, offset, count, size), before the first read.
    ``more`` is how many whole records the input holds past the range (for the "--count all" hint).
    """

    def __init__(self, layout: TypeLayout, *, data: bytes | None = None, path=None, origin: str = "data",
                 offset: int = 0, count=1, address: int | None = None, address_bytes: int | None = None):
        self.layout, self.origin, self.address = layout, origin, address
        self.path, self.data = path, data
        if path is not None:
            self._file = open_input(path, origin)
            try:
                info = os.fstat(self._file.fileno())
                if stat.S_ISREG(info.st_mode):
                    total = info.st_size
                    try:
                        head = self._file.read(4096)
                    except OSError as exc:
                        raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
                    if looks_like_text_dump(head):
                        raise DecodeError(f"{origin} is WinDbg text, not raw bytes; read it with --windbg {origin}")
                else:  # a pipe or a device: read what the range needs (up to the limit), then from memory
                    self.data = read_unsized(self._file, origin, wanted_bytes(layout, offset, count))
                    self._file.close()
                    self._file, self.path = None, None
                    total = len(self.data)
            except BaseException:
                self.close()
                raise
        else:
            self._file = None
            total = len(data)
        self.total = total
        try:
            self.offset, self.count = check_range(layout, total, origin, offset, count, address_bytes=address_bytes)
        except BaseException:
            self.close()
            raise
        self.more = (total - self.offset) // layout.size - self.count

    @classmethod
    def from_memory(cls, layout: TypeLayout, memory, offset: int = 0, count=1) -> "Records":
        """From a ``decoding.Memory`` (bytes with an origin and maybe a debuggee address)."""
        return cls(layout, data=memory.data, origin=memory.origin, offset=offset, count=count,
                   address=memory.address, address_bytes=getattr(memory, "address_bytes", None))

    def chunks(self, records: int | None = None):
        """Consecutive Chunks of at most ``records`` records (default: about CHUNK_BYTES of input each)."""
        size = self.layout.size
        step = records or max(1, CHUNK_BYTES // size)
        try:
            for first in range(0, self.count, step):
                n = min(step, self.count - first)
                at = self.offset + first * size
                yield Chunk(self.layout, first, at, self._read(at, n * size),
                            None if self.address is None else self.address + at)
        finally:
            self.close()

    def _read(self, at: int, length: int) -> bytes:
        if self._file is None:
            return bytes(memoryview(self.data)[at:at + length])
        try:
            self._file.seek(at)
            data = self._file.read(length)
            now = os.fstat(self._file.fileno()).st_size
        except OSError as exc:
            raise DecodeError(f"cannot read {self.origin}: {exc.strerror or exc}") from None
        if len(data) != length or now != self.total:
            raise DecodeError(f"{self.origin} changed size while it was read (it had {self.total} bytes, now "
                              f"{now}); read a copy that nothing is writing to")
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def open_input(path, origin: str):
    """An input file opened for reading, or DecodeError naming it and the reason."""
    from .decoding import open_input as opened

    return opened(path, origin)


def looks_like_text_dump(head: bytes) -> bool:
    """Whether the first bytes of a file are WinDbg text rather than raw records."""
    from .decoding import looks_like_windbg, text_of_bytes

    text = text_of_bytes(head)
    return text is not None and looks_like_windbg(text)


def _text_dump_file(path) -> bool:
    """Whether a regular file holds WinDbg text (read whole, as decode(path=) reads it), not raw records."""
    with open_input(path, str(os.fspath(path))) as f:
        try:
            return stat.S_ISREG(os.fstat(f.fileno()).st_mode) and looks_like_text_dump(f.read(4096))
        except OSError:
            return False  # Records reports the read error with its own words


def read_unsized(f, origin: str, want: int | None = None) -> bytes:
    """A pipe or device, in chunks: all of it, or its first ``want`` bytes (all the records asked for
    need), refusing more than MAX_UNSIZED_BYTES (an endless /dev/zero with --count all)."""
    if want is not None and want > MAX_UNSIZED_BYTES:
        raise DecodeError(f"{origin} has no size, and the records asked for end at byte {want:,}, past the "
                          f"{MAX_UNSIZED_BYTES >> 20} MiB that pipes, devices and standard input are read to; "
                          f"save it to a file (files are read in chunks with no limit) or give a smaller "
                          f"--offset or --count")
    parts, total = [], 0
    while want is None or total < want:
        try:
            part = f.read(min(CHUNK_BYTES, MAX_UNSIZED_BYTES + 1 - total,
                              want - total if want is not None else CHUNK_BYTES))
        except OSError as exc:
            raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
        if not part:
            return b"".join(parts)
        parts.append(part)
        total += len(part)
        if total > MAX_UNSIZED_BYTES:
            raise DecodeError(f"{origin} has no size and gave more than {MAX_UNSIZED_BYTES >> 20} MiB, the "
                              f"limit for pipes, devices and standard input; save it to a file (files are read "
                              f"in chunks with no limit) or give a --count")
    return b"".join(parts)


def wanted_bytes(layout: TypeLayout, offset, count) -> int | None:
    """The bytes an unsized input must give for ``offset`` and ``count`` (None: all of it)."""
    offset, wanted = check_offset_count(offset, count)
    return None if wanted is None else offset + wanted * layout.size


# ------------------------------------------------------------------ decode + check
@dataclass
class Decoded:
    """One chunk decoded and checked: per record its leaf values (tuples in leaf order, or None
    when not asked for) and its hits (check, key) in rule order, and the chunk's tallies."""

    chunk: Chunk
    value_rows: list | None  # per record its leaf values (see ``rows``)
    row_hits: list | None  # per record: [(Check, key), ...] (see ``hits``); None until asked for
    errors: int = 0
    warnings: int = 0
    messages: dict | None = None  # column-wise: check -> (row -> index, messages) for templated messages
    full: list | None = None  # column-wise: per check key, the value it reports for every record
    constant: list | None = None  # column-wise: per check key, the value when the same in every hit
    columns: object = None  # column-wise: the chunk's columns (bulk.Columns)
    found: list | None = None  # column-wise: (check, rows, values) of every check some row breaks
    np: object = None  # column-wise: the NumPy module
    values: bool = False  # the leaf values were asked for

    @property
    def rows(self) -> list | None:
        """Per record its leaf values (a tuple in leaf order), None when not asked for; column-wise they
        are made when first asked for (the column sinks read the columns instead)."""
        if self.value_rows is None and self.values and self.columns is not None:
            self.value_rows = list(zip(*(self.columns[leaf.path].tolist() for leaf in self.chunk.layout.leaves)))
        return self.value_rows

    @property
    def hits(self) -> list:
        """Per record its hits (check, key) in rule order; records that break the same rules share one
        tuple.  Column-wise they are grouped when first asked for (the column sinks never ask)."""
        if self.row_hits is None:
            self.row_hits = _row_hits(self.np, self.found, self.chunk.count)
        return self.row_hits

    def value(self, key, row: int) -> int:
        """The value a finding reports: its key itself (record by record) or read from its column."""
        return key if self.full is None else int(self.full[key][row])

    def constant_value(self, key):
        """The value when every hit of this check in the chunk reports the same one, else None."""
        return key if self.full is None else self.constant[key]

    def view(self, row: int) -> View:
        layout = self.chunk.layout
        return View(layout.by_path, self.chunk.record(row), "", layout.abi, layout.version, layout.c_name)


def _numpy():
    return numpy_module()


NUMPY_FROM = 256  # fewer records are decoded one by one: importing NumPy costs more than it saves


def decode_chunk(chunk: Chunk, *, adapter=None, values: bool = True, findings: bool = True) -> Decoded:
    """Leaf values and rule hits of every record of a chunk: column-wise with NumPy, else per record."""
    layout, n = chunk.layout, chunk.count
    np = _numpy() if layout.kind != "enum" and n >= NUMPY_FROM else None
    hits = [[] for _ in range(n)]
    decoded = Decoded(chunk, None, hits, values=values)
    if np is None:
        if values:
            decoded.value_rows = [tuple(layout.values(chunk.record(i)).values()) for i in range(n)]
        if findings:
            for i in range(n):
                hits[i] = record_hits(layout, decoded.view(i), adapter)
                for c, _value in hits[i]:
                    _tally_hits(decoded, c, 1)
        return decoded
    if not (values or findings):  # the column sinks decode their own columns
        return decoded
    columns = _columns(np, layout, chunk)
    decoded.columns, decoded.np = columns, np
    if findings:
        found = decoded.found = list(column_hits(layout, columns, np, adapter))
        _column_values(np, decoded, found, n)
        decoded.row_hits = None
        decoded.messages = {}
        for check, where, _vals in found:
            if not check.static and (check.params is None or check.columnar):
                index = np.full(n, -1, dtype=np.int64)
                index[where] = np.arange(len(where))
                decoded.messages[check] = (index, column_messages(check, columns, np, where))
    return decoded


def _column_values(np, decoded: Decoded, found: list, n: int) -> None:
    """The tallies, and per check the value it reports in every record (``full``) and the value when
    the same in every hit (``constant``)."""
    if not found:
        return
    full, constant = [], []
    for check, where, vals in found:
        column = np.zeros(n, dtype=np.uint64)
        column[where] = vals
        full.append(column)
        constant.append(int(vals[0]) if bool((vals == vals[0]).all()) else None)
        _tally_hits(decoded, check, len(where))
    decoded.full, decoded.constant = full, constant


def _row_hits(np, found: list, n: int) -> list:
    """Each record's hits from the column hits, without a Python step per hit: records are grouped by
    the set of rules they break (a bit per check), and each group's hit tuple is built once."""
    if not found:
        return [[] for _ in range(n)]
    words = (len(found) + 62) // 63
    signature = np.zeros((n, words), dtype=np.uint64)
    for k, (_check, where, _vals) in enumerate(found):
        signature[where, k // 63] |= np.uint64(1 << (k % 63))
    unique, inverse = np.unique(signature, axis=0, return_inverse=True)
    groups = []
    for sig in unique.tolist():  # checks come in rule order, so each group's hits do too
        groups.append(tuple((found[k][0], k) for k in range(len(found)) if sig[k // 63] >> (k % 63) & 1))
    return [groups[g] for g in inverse.reshape(-1).tolist()]


def _tally_hits(decoded: Decoded, check, count: int) -> None:
    if _severity(check) == "error":
        decoded.errors += count
    else:
        decoded.warnings += count


def _columns(np, layout: TypeLayout, chunk: Chunk):
    from .bulk import columns_of_bytes

    return columns_of_bytes(layout, chunk.data, start=chunk.start, offset=chunk.offset)


def findings_of(decoded: Decoded, row: int, view: View | None = None) -> list:
    """The Finding objects (messages formatted) of one record of a decoded chunk."""
    if not decoded.hits[row]:
        return []
    if view is None:
        view = decoded.view(row)
    return [check.finding(view) for check, _key in decoded.hits[row]]


# ------------------------------------------------------------------ sinks
def record_title(layout: TypeLayout, index: int, offset: int, address: int | None, size: bool = True) -> str:
    from .render import record_title as title

    return title(layout.c_name, layout.label, index, offset, address, layout.size if size else None)


def _meanings(layout: TypeLayout, raw: bytes, adapter) -> dict:
    from .semantics.explain import meanings_of

    return meanings_of(layout, raw, adapter)


class _Texts:
    """Each check's finding text, worked out once: the lines under a field (decode), the lines of
    validate, so a million findings cost a lookup each, not a format."""

    def __init__(self):
        self.cache = {}

    def rule(self, check):
        got = self.cache.get(check)
        if got is None:
            rule = RULES[check.rule_id]
            got = self.cache[check] = (rule, rule.severity.value, f'"{rule.sentence}" ({rule.page})')
        return got

    def under(self, check, pad: str, decoded: Decoded, row: int, views: dict) -> list:
        """The two lines a finding prints under its field in ``decode``."""
        key = (check, pad)
        got = self.cache.get(key)
        if got is not None:
            return got
        rule, severity, ref = self.rule(check)
        lines = [f"{pad}^ {severity} {rule.rule_id}: {_message(check, decoded, row, views)}", f"{pad}  {ref}"]
        if check.static:
            self.cache[key] = lines
        return lines

    def validate_lines(self, check, decoded: Decoded, row: int, views: dict) -> str:
        got = self.cache.get((check, "v"))
        if got is not None:
            return got
        rule, severity, ref = self.rule(check)
        text = (f"   {severity} {rule.rule_id} {check.path}: {_message(check, decoded, row, views)}\n"
                f"      {ref}")
        if check.static:
            self.cache[(check, "v")] = text
        return text


def _message(check, decoded: Decoded, row: int, views: dict) -> str:
    if check.static:
        return check.message
    made = decoded.messages.get(check) if decoded.messages else None
    if made is not None:
        return made[1][made[0][row]]
    view = views.get(row)
    if view is None:
        view = views[row] = decoded.view(row)
    return check.text(view)


EMIT_CHARS = 1 << 20  # text handed to the output at once: larger strings cost the kernel a page fault per page


def _emit(out, items: list, sep: str = "\n", first: str = "") -> None:
    """``out.write(first + sep.join(items) + "\n")``, in pieces of about EMIT_CHARS (a fresh 20 MB string
    per chunk made writing a GB cost more in page faults than in copying), each text copied once."""
    if first:
        out.write(first)
    step = max(1, EMIT_CHARS // (len(items[0]) + len(sep)))
    for start in range(0, len(items), step):
        piece = items[start:start + step]
        last = start + step >= len(items)
        if not last or sep == "\n":
            piece.append("")  # the separator (or the final line end) after the last item
        out.write(sep.join(piece))
    if sep != "\n":
        out.write("\n")


def _hit_messages(decoded: Decoded, k: int, rows: list) -> list:
    """The messages of check ``k`` of a column-decoded chunk for its hit rows (in their order)."""
    check = decoded.found[k][0]
    if check.static:
        return [check.message] * len(rows)
    made = decoded.messages.get(check) if decoded.messages else None
    if made is not None:
        return made[1]
    views = {}
    return [_message(check, decoded, row, views) for row in rows]


def _distinct(decoded: Decoded):
    """(rows of the first occurrence of each distinct record, row -> its index among them) of a
    column-decoded chunk, or None when most records are distinct (nothing to share)."""
    np, chunk = decoded.np, decoded.chunk
    size = chunk.layout.size
    kind = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(size, np.dtype((np.void, size)))
    records = np.frombuffer(chunk.data, dtype=kind)  # words sort faster than opaque records
    _unique, first, inverse = np.unique(records, return_index=True, return_inverse=True)
    if len(first) * 2 > chunk.count:
        return None
    return first.tolist(), inverse.reshape(-1).tolist()


class TextDecode:
    """``decode`` as text: every record as ``dt -r`` prints it, meanings and findings inline."""

    chunk_records = 4096  # records whose output is built at once (~20 MB of text)

    def __init__(self, out, *, adapter=None, nonzero: bool = False):
        self.out, self.adapter, self.nonzero, self.first = out, adapter, nonzero, True
        self.texts, self.bodies = _Texts(), {}

    def write(self, decoded: Decoded) -> None:
        from .render import render_record, render_row, row_plan

        chunk, layout = decoded.chunk, decoded.chunk.layout
        plan = row_plan(layout) if layout.kind != "enum" else None
        bodies = self._column_bodies(decoded, plan) if plan is not None and not self.nonzero else None
        if bodies is not None:
            blocks = [f"{title}\n{body}" for title, body in zip(_titles(chunk), bodies)]
            if blocks:
                _emit(self.out, blocks, "\n\n", "" if self.first else "\n")
                self.first = False
            return
        blocks = []
        for row in range(chunk.count):
            raw = chunk.record(row)
            offset = chunk.offset + row * layout.size
            address = None if chunk.address is None else chunk.address + row * layout.size
            title = record_title(layout, chunk.start + row, offset, address)
            if plan is None:
                blocks.append(_render_enum_record(layout, raw, title))
                continue
            body = self.bodies.get(raw)
            if body is not None:  # the same bytes print the same lines (meanings and findings included)
                blocks.append(title + "\n" + body)
                continue
            meanings = _meanings(layout, raw, self.adapter)
            if self.nonzero or not all(k in plan.leaf_paths for k in meanings):
                values = dict(zip((leaf.path for leaf in layout.leaves), decoded.rows[row]))
                blocks.append(render_record(layout, values, findings=findings_of(decoded, row), meanings=meanings,
                                            title=title, nonzero=self.nonzero))
                continue
            placed, views = {}, {}
            for check, _key in decoded.hits[row]:
                path = check.path
                placed.setdefault(path, []).extend(self.texts.under(check, plan.pads[path], decoded, row, views))
            body = render_row(plan, decoded.rows[row], placed, [], meanings, None)
            if len(self.bodies) >= BODY_CACHE:
                self.bodies.clear()
            self.bodies[raw] = body
            blocks.append(title + "\n" + body)
        if blocks:
            _emit(self.out, blocks, "\n\n", "" if self.first else "\n")
            self.first = False

    def _column_bodies(self, decoded: Decoded, plan) -> list | None:
        """Every record's lines, built a line at a time from the chunk's columns (None when the chunk
        was decoded record by record, its records repeat, or its type's meanings are not
        column-wise): the same text as ``render_row``."""
        from .coltext import by_value, object_array
        from .render import summary_column
        from .semantics.explain import column_meanings

        np, columns, layout = decoded.np, decoded.columns, decoded.chunk.layout
        if columns is None or not decoded.values or decoded.found is None or _distinct(decoded) is not None:
            return None
        meanings = column_meanings(layout, columns, np, self.adapter)
        if meanings is None or not all(path in plan.leaf_paths for path in meanings):
            return None
        n = decoded.chunk.count
        texts, where = [], {}  # per line of the plan: its text in every row; line path -> its place
        for path, i, head, how, enum_cls, flags_of in plan.specs:
            where[path] = len(texts)
            if i is None:
                texts.append([head] * n)
                continue
            col, meaning = columns[path], meanings.get(path)
            if type(how) is tuple and enum_cls is None and (meaning is None or type(meaning) is tuple) \
                    and not flags_of:  # a narrow bitfield: every line it can print is in a table
                note = "" if meaning is None else f"  // {meaning[1]}"
                table = object_array(np, [head + text for text in how]
                                      + [(head + text + note).rstrip() for text in how])
                index = col.astype(np.intp) % len(how)
                if meaning is not None:
                    index = index + meaning[0].astype(np.intp) * len(how)
                texts.append(table[index].tolist())
                continue
            values = col.tolist()
            if type(how) is tuple:
                shown = [how[v] for v in values]
            elif how == "ptr8":
                shown = [f"0x{(v >> 32) & 0xFFFFFFFF:08x}`{v & 0xFFFFFFFF:08x}" for v in values]
            elif how == "ptr4":
                shown = [f"0x{v & 0xFFFFFFFF:08x}" for v in values]
            else:
                shown = [f"0x{v:x} ({v})" if v >= 0 else f"0x{v & how:x} ({v})" for v in values]
            if type(meaning) is tuple:
                meaning = object_array(np, [None, meaning[1]])[meaning[0].astype(np.intp)].tolist()
            if enum_cls is not None:
                names = by_value(np, col, lambda v, c=enum_cls: _enum_text(c, v))
                shown = [text + name for text, name in zip(shown, names)]
            elif flags_of:  # a meaning names the flags already
                summary = summary_column(np, columns, flags_of)
                shown = [text + " " + flags if meaning is None or meaning[row] is None else text
                         for row, (text, flags) in enumerate(zip(shown, summary))]
            if meaning is None:
                texts.append([head + text for text in shown])
            else:
                texts.append([head + text if note is None else f"{head}{text}  // {note}".rstrip()
                              for text, note in zip(shown, meaning)])
        for k, (check, rows, _vals) in enumerate(decoded.found):  # findings under their lines, in rule order
            column, pad = texts[where[check.path]], plan.pads[check.path]
            rows = rows.tolist()
            if check.static:
                extra = "\n" + "\n".join(self.texts.under(check, pad, decoded, rows[0], {}))
                for row in rows:
                    column[row] += extra
                continue
            _rule, severity, ref = self.texts.rule(check)
            lead, tail = f"\n{pad}^ {severity} {check.rule_id}: ", f"\n{pad}  {ref}"
            for row, message in zip(rows, _hit_messages(decoded, k, rows)):
                column[row] += lead + message + tail
        return ["\n".join(lines) for lines in zip(*texts)]

    def close(self, totals) -> None:
        pass


def _enum_text(cls, number: int) -> str:
    """What ``render_row`` puts after an enum leaf's number."""
    try:
        return f" {cls(number).name}"
    except ValueError:
        return f" not a {cls.__name__} value"


def _titles(chunk: Chunk) -> list:
    """``record_title`` of every record of a chunk."""
    from .render import format_number

    layout = chunk.layout
    size, head = layout.size, f"{layout.c_name}  {layout.label}  ["
    if chunk.address is None:
        return [f"{head}{chunk.start + row}] at +0x{chunk.offset + row * size:x}, {size} bytes"
                for row in range(chunk.count)]
    return [f"{head}{chunk.start + row}] at +0x{chunk.offset + row * size:x} "
            f"({format_number(chunk.address + row * size, 8, '*')[2:]}), {size} bytes" for row in range(chunk.count)]


def _render_enum_record(layout: TypeLayout, raw: bytes, title: str) -> str:
    from .render import _render_enum
    from .target import class_of

    return _render_enum(_enum_value(class_of(layout), raw), (), title)


def _enum_value(cls, raw: bytes):
    number = int.from_bytes(raw, "little", signed=True)
    try:
        return cls(number)
    except ValueError:
        return number


class JsonDecode:
    """``decode --json``: one object per record per line, with the same keys every time."""

    chunk_records = 4096  # records whose output is built at once (~20 MB of text)

    def __init__(self, out, *, adapter=None):
        self.out, self.adapter, self.head, self.tails = out, adapter, None, {}
        self.findings = _JsonFindings()

    def write(self, decoded: Decoded) -> None:
        from .jsonvalue import hex_text
        from .render import record_json, record_json_of
        from .target import class_of

        chunk, layout = decoded.chunk, decoded.chunk.layout
        paths = [leaf.path for leaf in layout.leaves]
        lines = self._column_lines(decoded) if layout.kind != "enum" else None
        if lines is not None:
            if lines:
                _emit(self.out, lines)
            return
        lines, groups = [], {}
        for row in range(chunk.count):
            raw = chunk.record(row)
            offset = chunk.offset + row * layout.size
            address = None if chunk.address is None else chunk.address + row * layout.size
            if layout.kind == "enum":
                obj = record_json(_enum_value(class_of(layout), raw), c_name=layout.c_name, tgt=layout,
                                  index=chunk.start + row, offset=offset, address=address)
                lines.append(json.dumps(obj))
                continue
            where = (f'{chunk.start + row}, "offset": {offset}, "address": '
                     f'{"null" if address is None else _json_str(hex_text(address))}, ')
            tail = self.tails.get(raw)
            if tail is None:  # everything after "address" depends on the bytes alone
                obj = record_json_of(layout, raw, dict(zip(paths, decoded.rows[row])), index=0, offset=0,
                                     address=None, meanings=_meanings(layout, raw, self.adapter))
                text = json.dumps(obj)
                assert text.endswith('"findings": []}')
                text = text[:-2] + self.findings.all(layout, decoded, row, groups) + "]}"
                head, tail = text.split('"index": 0, "offset": 0, "address": null, ', 1)
                if self.head is None:
                    self.head = head + '"index": '
                if len(self.tails) >= BODY_CACHE:
                    self.tails.clear()
                self.tails[raw] = tail
            lines.append(self.head + where + tail)
        if lines:
            _emit(self.out, lines)

    def _column_lines(self, decoded: Decoded) -> list | None:
        """Every record's line, built a key at a time from the chunk's columns (None when the chunk
        was decoded record by record, its records repeat, or its type's meanings are not column-wise):
        the same bytes as ``json.dumps(record_json_of(...))``."""
        from .jsonvalue import hex_text, json_hex
        from .coltext import by_value, joined_column
        from .render import enum_name, summary_column, target_json
        from .semantics.explain import column_meanings
        from .target import ENUM_CLASSES

        np, columns, chunk = decoded.np, decoded.columns, decoded.chunk
        layout = chunk.layout
        if columns is None or not decoded.values or decoded.found is None or _distinct(decoded) is not None:
            return None
        meanings = column_meanings(layout, columns, np, self.adapter)
        if meanings is None:
            return None
        if self.head is None:
            self.head = f'{{"type": {_json_str(layout.c_name)}, "target": {json.dumps(target_json(layout))}, "index": '
        n, size = chunk.count, layout.size
        fields, run = [], []  # the fields object's items: a table per eight one-bit leaves, the rest per row

        def flush():
            for start in range(0, len(run), 8):
                group = run[start:start + 8]
                index = np.zeros(n, dtype=np.intp)
                for i, leaf in enumerate(group):
                    index |= (columns[leaf.path] != 0).astype(np.intp) << i
                fields.append(_field_table(np, tuple(leaf.path for leaf in group))[index].tolist())
            run.clear()

        for leaf in layout.leaves:
            hexed = json_hex(leaf)
            if leaf.bit_width == 1 and not leaf.signed and not hexed:
                run.append(leaf)
                continue
            flush()
            key, values = _json_str(leaf.path), columns[leaf.path].tolist()
            if hexed:
                mask = (1 << leaf.bit_width) - 1
                fields.append([f'{key}: "0x{v & mask:x}"' for v in values])
            else:
                fields.append([f"{key}: {v}" for v in values])
        flush()
        names = []  # (key, per row text): as names_of writes them
        for line in layout.lines:
            if line.leaf is None:
                continue
            col = columns[line.path]
            if line.leaf.c_type in ENUM_CLASSES:
                names.append((line.path, by_value(np, col, lambda v, t=line.leaf.c_type: enum_name(t, v))))
            elif line.flags_of:
                names.append((line.path, summary_column(np, columns, line.flags_of)))
        if len(names) == 1:  # a flag word: its Value's set flags
            key = _json_str(names[0][0])
            name_texts = [f"{{{key}: {text}}}" for text in map(_json_str, names[0][1])]
        else:
            template = "{" + ", ".join(_json_str(path).replace("%", "%%") + ": %s" for path, _ in names) + "}"
            name_texts = [template % tuple(map(_json_str, texts)) for texts in zip(*(col for _p, col in names))] \
                if names else ["{}"] * n
        entries = []  # the meanings object's items: a table per eight flags, the rest per row
        for path, col in meanings.items():
            key = _json_str(str(path)) + ": "
            if type(col) is tuple:
                entries.append((col[0], key + _json_str(str(col[1]))))
                continue
            distinct = set(col)
            if len(distinct) * 2 > n and None not in distinct:
                entries.append((None, [key + _json_str(str(text)) for text in col]))
                continue
            memo = {text: None if text is None else key + _json_str(str(text)) for text in distinct}
            entries.append((None, list(map(memo.__getitem__, col))))
        meaning_texts = joined_column(np, entries, ", ") if entries else [""] * n
        hexed = chunk.data.hex(" ", size).split(" ")
        addresses = (["null"] * n if chunk.address is None else
                     [_json_str(hex_text(chunk.address + row * size)) for row in range(n)])
        head, base, first = self.head, chunk.offset, chunk.start
        return [f'{head}{first + row}, "offset": {base + row * size}, "address": {address}, "size": {size}, '
                f'"bytes": "{data}", "fields": {{{", ".join(values)}}}, "names": {named}, "meanings": {{{meant}}}, '
                f'"findings": [{found}]}}'
                for row, (address, data, values, named, meant, found) in
                enumerate(zip(addresses, hexed, zip(*fields), name_texts, meaning_texts,
                              self.findings.rows(layout, decoded)))]

    def close(self, totals) -> None:
        pass


@lru_cache(maxsize=256)
def _field_table(np, paths: tuple):
    """Entry v: the JSON items of one-bit leaves ``paths`` whose values are the bits of v."""
    from .coltext import object_array

    return object_array(np, [", ".join(f"{_json_str(path)}: {v >> i & 1}" for i, path in enumerate(paths))
                              for v in range(1 << len(paths))])


class TextValidate:
    """``validate`` as text: a line per record with its tally, then each finding and its sentence."""

    chunk_records = 4096  # records whose output is built at once

    def __init__(self, out):
        self.out, self.texts = out, _Texts()

    def write(self, decoded: Decoded) -> None:
        from .render import format_number

        chunk, layout = decoded.chunk, decoded.chunk.layout
        size, lines, texts = layout.size, [], self.texts
        prefix = f"{layout.c_name}  {layout.label}  ["
        found = self._column_lines(decoded, prefix) if decoded.found is not None else None
        if found is not None:
            if found:
                _emit(self.out, found)
            return
        groups = {}  # a hit tuple (shared by records that break the same rules) -> its tally and lines
        made = {check: (index.tolist(), messages) for check, (index, messages) in (decoded.messages or {}).items()}
        for row, hits in enumerate(decoded.hits):
            where = f"{prefix}{chunk.start + row}] at +0x{chunk.offset + row * size:x}"
            if chunk.address is not None:
                where += f" ({format_number(chunk.address + row * size, 8, '*')[2:]})"
            if not hits:
                lines.append(where + ": no findings")
                continue
            group = groups.get(id(hits))
            if group is None:
                errors = sum(texts.rule(check)[1] == "error" for check, _key in hits)
                parts = [texts.validate_lines(check, decoded, row, {}) if check.static else
                         (f"   {texts.rule(check)[1]} {check.rule_id} {check.path}: ", f"\n      {texts.rule(check)[2]}",
                          check, made.get(check)) for check, _key in hits]
                static = all(type(part) is str for part in parts)
                group = groups[id(hits)] = (f": {_tally(errors, len(hits) - errors)}\n", parts,
                                            "\n".join(parts) if static else None, hits)
            tally, parts, body, _keep = group
            if body is None:  # some message reads the record's values: from the columns where it can
                views = {}
                body = "\n".join(part if type(part) is str else
                                  part[0] + (part[3][1][part[3][0][row]] if part[3] is not None else
                                             _message(part[2], decoded, row, views)) + part[1]
                                  for part in parts)
            lines.append(where + tally + body)
        if lines:
            _emit(self.out, lines)

    def _column_lines(self, decoded: Decoded, prefix: str) -> list | None:
        """Every record's lines, built check by check from a column-decoded chunk (None when its
        records repeat: then records that break the same rules share their text)."""
        from .coltext import by_value

        if _distinct(decoded) is not None:
            return None
        np, chunk, texts = decoded.np, decoded.chunk, self.texts
        n, size = chunk.count, chunk.layout.size
        errors, total, items = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), [[] for _ in range(n)]
        for k, (check, rows, _vals) in enumerate(decoded.found):
            _rule, severity, ref = texts.rule(check)
            if severity == "error":
                errors[rows] += 1
            total[rows] += 1
            rows = rows.tolist()
            if check.static:
                text = texts.validate_lines(check, decoded, rows[0], {})
                for row in rows:
                    items[row].append(text)
                continue
            lead, tail = f"   {severity} {check.rule_id} {check.path}: ", f"\n      {ref}"
            for row, message in zip(rows, _hit_messages(decoded, k, rows)):
                items[row].append(lead + message + tail)
        tallies = by_value(np, errors << 32 | total, lambda v: f": {_tally(v >> 32, (v & 0xFFFFFFFF) - (v >> 32))}\n"
                           if v & 0xFFFFFFFF else ": no findings")
        if chunk.address is None:
            places = [f"{prefix}{chunk.start + row}] at +0x{chunk.offset + row * size:x}" for row in range(n)]
        else:
            from .render import format_number

            places = [f"{prefix}{chunk.start + row}] at +0x{chunk.offset + row * size:x} "
                      f"({format_number(chunk.address + row * size, 8, '*')[2:]})" for row in range(n)]
        return [place + tally + body for place, tally, body in zip(places, tallies, map("\n".join, items))]

    def close(self, totals) -> None:
        records, errors, warnings = totals
        self.out.write(f"{records} record{'s' if records != 1 else ''}: {errors} error{'s' if errors != 1 else ''}, "
                       f"{warnings} warning{'s' if warnings != 1 else ''}\n")


def _tally(errors: int, warnings: int) -> str:
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return ", ".join(parts) or "no findings"


class _JsonFindings:
    """Each check's finding as a JSON object, its fixed parts encoded once."""

    def __init__(self):
        self.parts, self.values, self.values_of = {}, {}, None

    def _parts(self, check):
        got = self.parts.get(check)
        if got is None:
            rule = RULES[check.rule_id]
            head = json.dumps({"rule_id": rule.rule_id, "severity": rule.severity.value, "field": check.path})[:-1]
            ref = json.dumps({"page": rule.page, "sentence": rule.sentence})
            got = self.parts[check] = (head, ref, json.dumps(check.message) if check.static else None)
        return got

    def _value_text(self, layout, path: str, value: int) -> str:
        """A finding's value as JSON, worked out once per field and value (chunks repeat them)."""
        from .render import finding_value

        got = self.values.get((path, value)) if self.values_of is layout else None
        if got is None:
            if len(self.values) >= BODY_CACHE or self.values_of is not layout:
                self.values.clear()
                self.values_of = layout
            got = self.values[(path, value)] = json.dumps(finding_value(layout, path, value))
        return got

    def one(self, layout, check, decoded: Decoded, key, row: int, views) -> str:
        from .render import finding_value

        fhead, ref, message = self._parts(check)
        if message is None:
            message = _json_str(_message(check, decoded, row, views if views is not None else {}))
        shown = json.dumps(finding_value(layout, check.path, decoded.value(key, row)))
        return f'{fhead}, "value": {shown}, "message": {message}, "reference": {ref}}}'

    def rows(self, layout, decoded: Decoded) -> list:
        """The findings array's items of every record of a column-decoded chunk, built check by
        check: a finding whose value and message are the same in every hit is encoded once."""
        from .coltext import by_value

        np = decoded.np
        items = [[] for _ in range(decoded.chunk.count)]
        for k, (check, where, _vals) in enumerate(decoded.found):
            fhead, ref, message = self._parts(check)
            rows = where.tolist()
            if message is not None and decoded.constant[k] is not None:
                piece = self.one(layout, check, decoded, k, rows[0], None)
                for row in rows:
                    items[row].append(piece)
                continue
            shown = by_value(np, decoded.full[k][where], lambda v, path=check.path: self._value_text(layout, path, v))
            messages = [message] * len(rows) if message is not None else \
                [_json_str(text) for text in _hit_messages(decoded, k, rows)]
            for row, value, text in zip(rows, shown, messages):
                items[row].append(f'{fhead}, "value": {value}, "message": {text}, "reference": {ref}}}')
        return [", ".join(parts) for parts in items]

    def all(self, layout, decoded: Decoded, row: int, groups: dict) -> str:
        """The findings array's items for one record; what a group of records shares is built once."""
        hits = decoded.hits[row]
        pieces = groups.get(id(hits))
        if pieces is None:
            pieces = groups[id(hits)] = ([self.one(layout, check, decoded, key, row, None)
                                          if check.static and decoded.constant_value(key) is not None else None
                                          for check, key in hits], hits)
        views = {}
        return ", ".join(piece if piece is not None else self.one(layout, check, decoded, key, row, views)
                         for piece, (check, key) in zip(pieces[0], hits))


class JsonValidate:
    """``validate --json``: one object per record per line: where it is and its findings (``decode --json``
    gives the fields too)."""

    chunk_records = 4096  # records whose output is built at once

    def __init__(self, out):
        self.out, self.findings = out, _JsonFindings()

    def write(self, decoded: Decoded) -> None:
        from .jsonvalue import hex_text

        chunk, layout = decoded.chunk, decoded.chunk.layout
        target = json.dumps({"abi": layout.abi, "interface_version": layout.label.split()[1],
                             "interface_version_value": layout.version, "label": layout.label})
        head = f'{{"type": "{layout.c_name}", "target": {target}, "index": '
        if decoded.found is not None:  # column-wise: every record's findings built check by check
            size, base = layout.size, chunk.offset
            addresses = (["null"] * chunk.count if chunk.address is None else
                         [f'"{hex_text(chunk.address + row * size)}"' for row in range(chunk.count)])
            lines = [f'{head}{index}, "offset": {base + row * size}, "address": {address}, "findings": [{found}]}}'
                     for row, (index, address, found) in enumerate(zip(range(chunk.start, chunk.start + chunk.count),
                                                                     addresses, self.findings.rows(layout, decoded)))]
            if lines:
                _emit(self.out, lines)
            return
        lines, groups = [], {}
        for row in range(chunk.count):
            offset = chunk.offset + row * layout.size
            address = "null" if chunk.address is None else f'"{hex_text(chunk.address + row * layout.size)}"'
            found = self.findings.all(layout, decoded, row, groups)
            lines.append(f'{head}{chunk.start + row}, "offset": {offset}, "address": {address}, '
                         f'"findings": [{found}]}}')
        if lines:
            _emit(self.out, lines)

    def close(self, totals) -> None:
        pass


from json.encoder import encode_basestring_ascii as _json_str  # noqa: E402 - the C encoder of one string


class FindingRows:
    """``validate --format csv|jsonl|parquet``: one row per finding: record, offset, rule, severity,
    field, message."""

    chunk_records = 4096  # records whose output is built at once

    FIELDS = ("record", "offset", "rule", "severity", "field", "message")

    def __init__(self, out, fmt: str):
        self.out, self.fmt, self.texts = out, fmt, _Texts()
        self.writer, self.tails = None, {}
        if fmt == "csv":
            import csv

            self.csv = csv.writer(out, lineterminator="\n")
            self.csv.writerow(self.FIELDS)

    def _csv(self, decoded: Decoded) -> None:
        """One row per finding, as csv.writer writes it: the part after the record and offset of a
        finding whose message is fixed is escaped once."""
        chunk, layout, texts = decoded.chunk, decoded.chunk.layout, self.texts
        tails, lines = self.tails, []
        if decoded.found is not None and _distinct(decoded) is None:  # column-wise: check by check
            items = [[] for _ in range(chunk.count)]
            for k, (check, rows, _vals) in enumerate(decoded.found):
                rows = rows.tolist()
                tail = tails.get(check)
                if tail is None and check.static:
                    tail = tails[check] = (f"{_csv_cell(check.rule_id)},{texts.rule(check)[1]},{_csv_cell(check.path)},"
                                           f"{_csv_cell(check.message)}")
                if tail is not None:
                    for row in rows:
                        items[row].append(tail)
                    continue
                head = f"{_csv_cell(check.rule_id)},{texts.rule(check)[1]},{_csv_cell(check.path)},"
                for row, message in zip(rows, _hit_messages(decoded, k, rows)):
                    items[row].append(head + _csv_cell(message))
            size, start, offset = layout.size, chunk.start, chunk.offset
            for row, found in enumerate(items):
                if found:
                    lead = f"{start + row},{offset + row * size},"
                    lines.append(lead + ("\n" + lead).join(found))
            if lines:
                _emit(self.out, lines)
            return
        for row, hits in enumerate(decoded.hits):
            if not hits:
                continue
            views, lead = {}, f"{chunk.start + row},{chunk.offset + row * layout.size},"
            for check, _key in hits:
                tail = tails.get(check)
                if tail is None:
                    tail = (f"{_csv_cell(check.rule_id)},{texts.rule(check)[1]},{_csv_cell(check.path)},"
                            f"{_csv_cell(_message(check, decoded, row, views))}")
                    if check.static:
                        tails[check] = tail
                lines.append(lead + tail)
        if lines:
            _emit(self.out, lines)

    def _rows(self, decoded: Decoded):
        chunk, layout = decoded.chunk, decoded.chunk.layout
        texts = self.texts
        for row, hits in enumerate(decoded.hits):
            if not hits:
                continue
            views, record, offset = {}, chunk.start + row, chunk.offset + row * layout.size
            for check, _key in hits:
                yield (record, offset, check.rule_id, texts.rule(check)[1], check.path,
                       _message(check, decoded, row, views))

    def write(self, decoded: Decoded) -> None:
        if self.fmt == "csv":
            self._csv(decoded)
        elif self.fmt == "jsonl":
            keys = [json.dumps(k) for k in self.FIELDS]
            self.out.writelines("{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in zip(keys, r)) + "}\n"
                                for r in self._rows(decoded))
        else:
            self._parquet(list(zip(*self._rows(decoded))) or [()] * len(self.FIELDS))

    def _parquet(self, columns) -> None:
        from .bulk.table import ParquetWriter, Table

        if self.writer is None:
            self.writer = ParquetWriter(self.out)
        self.writer.write(Table(self.FIELDS, ("int", "int", "text", "text", "text", "text"),
                                [list(c) for c in columns]))

    def close(self, totals) -> None:
        if self.fmt == "parquet":
            if self.writer is None:
                self._parquet([()] * len(self.FIELDS))
            self.writer.close()


class ColumnRows:
    """``decode --format csv|jsonl|parquet``: every leaf as a column (the bulk writers)."""

    chunk_records = 65536  # rows whose columns and text are built at once

    def __init__(self, out, fmt: str):
        from .bulk.table import writer

        self.writer = writer(fmt, out)

    def write(self, decoded: Decoded) -> None:
        from .bulk import columns_of_bytes
        from .bulk.table import columns_table

        chunk = decoded.chunk
        cols = columns_of_bytes(chunk.layout, chunk.data, start=chunk.start, offset=chunk.offset)
        self.writer.write(columns_table(cols, record=True))

    def close(self, totals) -> None:
        self.writer.close()


# ------------------------------------------------------------------ the run
@dataclass
class Summary:
    records: int = 0
    errors: int = 0
    warnings: int = 0
    more: int = 0  # whole records past the range that were not read


def run(records: Records, sink, *, adapter=None, values: bool = True, findings: bool = True,
        progress=None) -> Summary:
    """Stream every chunk of ``records`` through decode, check and ``sink``; returns the totals."""
    summary = Summary(more=records.more)
    checks_for(records.layout, adapter)  # an adapter of another target fails here, before any output
    # a chunk's output is built whole before it is written: bound it by the sink's records per chunk
    step = getattr(sink, "chunk_records", None)
    try:
        for chunk in records.chunks(step):
            decoded = decode_chunk(chunk, adapter=adapter, values=values, findings=findings)
            summary.errors += decoded.errors
            summary.warnings += decoded.warnings
            summary.records += chunk.count
            sink.write(decoded)
            if progress is not None:
                progress.update(summary.records)
    except BaseException:
        _abandon_writer(sink)
        raise
    sink.close((summary.records, summary.errors, summary.warnings))
    if progress is not None:
        progress.close(summary.records)
    return summary


def _abandon_writer(sink) -> None:
    """Close a sink's Parquet writer after a failure (Ctrl-C, SIGTERM, a full disk), ignoring what that
    raises: left open, its destructor runs after the file is gone and prints "Exception ignored"."""
    writer = getattr(sink, "writer", None)
    if writer is None:
        return
    sink.writer = None
    try:
        writer.close()
    except BaseException:  # noqa: BLE001 - the failure that brought us here is the one to report
        pass


@lru_cache(maxsize=None)
def keep_heap() -> None:
    """Let glibc keep up to 256 MiB of freed heap and serve blocks under 64 MiB from it.  By default it
    hands freed memory back past 128 KiB and maps every large block afresh, so each chunk's text
    (tens of MB) was page-faulted in again: decode and validate spent as long in the kernel as in
    Python.  Elsewhere (no glibc mallopt) nothing changes.  Called by the command's own process only:
    a library call must not retune the allocator of the program that embeds it (a debugger)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD
    mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD


def _severity(check) -> str:
    return RULES[check.rule_id].severity.value


def report(type, data=None, *, path=None, target=None, offset=0, count=1, adapter=None,  # noqa: A002
           validate: bool = False, fmt: str = "text", nonzero: bool = False, out=None, address=None,
           kind: str = "auto"):
    """What ``d3dkmddi decode`` (or ``validate`` with ``validate=True``) prints, from Python.

    ``data`` is bytes, hex text, an int word or WinDbg text (a str is always data); a file is
    ``path=``.  ``offset`` is a byte offset into the input, ``address`` a memory address of a WinDbg dump
    (as the command's --offset and --address).  ``kind`` chooses the reading of a text with two, as
    ``decode(kind=)`` does: "hex" or "windbg".  ``fmt`` is "text" or "json" (JSON lines).  Returns the text, or writes it to
    ``out`` (an open text file) as it goes and returns the summary of the run (records, errors,
    warnings) for inputs too large to hold.
    """
    import io

    from .resolve import resolve_layout

    layout = resolve_layout(type, target)
    if fmt not in ("text", "json"):
        raise InvalidArgument(f"fmt must be 'text' or 'json', not {_short(fmt)}")
    if path is not None and data is not None:
        raise InvalidArgument("give data or path=, not both")
    if path is not None and address is None and not _text_dump_file(path):
        records = Records(layout, path=os.fspath(path), origin=str(os.fspath(path)), offset=offset, count=count)
    else:
        import pathlib  # only here: a one-word decode does not pay for it at start-up

        from .decoding import TEXT_KINDS, memory_of, start_offset

        if kind not in TEXT_KINDS:
            raise InvalidArgument(f"kind must be one of {', '.join(map(repr, TEXT_KINDS))}, not {_short(kind)}")
        memory = memory_of(data if path is None else pathlib.Path(os.fspath(path)), layout,
                           kind=kind if path is None else "auto")
        records = Records.from_memory(layout, memory, start_offset(memory, offset, address), count)
    if adapter is not None:
        checks_for(layout, adapter)
    buffer = io.StringIO() if out is None else out
    if validate:
        sink = JsonValidate(buffer) if fmt == "json" else TextValidate(buffer)
    else:
        sink = JsonDecode(buffer, adapter=adapter) if fmt == "json" else TextDecode(buffer, adapter=adapter,
                                                                                     nonzero=nonzero)
    summary = run(records, sink, adapter=adapter, values=not validate)
    return buffer.getvalue() if out is None else summary


__all__ = ["Chunk", "Records", "Decoded", "Summary", "check_range", "decode_chunk", "findings_of", "run",
           "TextDecode", "JsonDecode", "TextValidate", "JsonValidate", "FindingRows", "ColumnRows",
           "CHUNK_BYTES", "MAX_UNSIZED_BYTES", "report"]
