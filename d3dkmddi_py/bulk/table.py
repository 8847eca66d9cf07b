"""One writer per table format (CSV, JSON lines, Parquet) for tables given a chunk of rows at a time.

A chunk is a ``Table``: column names, a kind per column and one sequence per column.  The kinds say
how a value is written, the same in every chunk and the same rule as ``decode --format``:

- ``int``: CSV and JSON numbers; Parquet int64 (a NumPy column keeps its own type).
- ``hex``: a pointer, handle, pointer-sized or 64-bit word: ``0x...`` in CSV and JSON alike (lowercase, a
  JSON string), Parquet uint64 (a NumPy column keeps its own type: a pointer at x86 is uint32).  A signed leaf
  (LARGE_INTEGER) is written as its bit pattern (its ``mask``) in CSV and JSON, and keeps its value in Parquet.
- ``text``: a string or None: CSV quoted where needed (empty for None), JSON string or null, Parquet string.
- ``opt``: an integer or None (a field some versions of an event lack): empty, null, Parquet int64.
- ``ohex``: a 64-bit number, or None (a field some events lack): written as ``handle`` is.
- ``handle``: a pointer or handle, or None (an adapter only a later lookup names): ``0x...`` in CSV and
  JSON alike (lowercase hex; empty, null), Parquet uint64.
- ``shex``: a signed 64-bit number, or None (an event's Int64): ``0x...`` of its bit pattern in CSV and JSON, as a
  signed 64-bit leaf is (empty, null), Parquet int64 (its value).
- ``time``: nanoseconds since 1970-01-01 UTC, or None: ISO 8601 UTC with nine fractional digits
  (``2024-03-01T12:34:56.123456789Z``) in CSV and JSON (empty, null), Parquet ``timestamp[ns, UTC]``.
- ``float``: a float, or None: its shortest round-trip decimal (Python's ``repr``) in CSV and JSON, Parquet
  float64.
- ``bool``: a bool (or 0 / 1), or None: ``true`` / ``false`` in CSV (``csvtext.csv_bool``) and JSON, Parquet bool.

A column is a sequence, or ``Coded``: codes into a list of values, for cells that repeat (a finding's
record, its rule, severity and field).  Each value is written once and the codes pick them; adjacent
Coded columns on one codes array are written as one group of cells.
"""
from __future__ import annotations

import csv
import io
import json
import os
from itertools import islice

from ..csvtext import csv_bool, csv_cell
from ..jsonvalue import wide_text
from ..outfile import binary_stream, write_lines
from .._numpy import numpy_module, optional_module as _need, pyarrow_installed

KINDS = ("int", "hex", "text", "opt", "ohex", "handle", "shex", "time", "float", "bool")
INT64_MAX = (1 << 63) - 1  # the most an int column holds (Parquet int64): record and event numbers
ROW_GROUP_ROWS = 65536  # rows of a Parquet row group (the last of a file may have fewer)
FORMATS = ("csv", "jsonl", "parquet")
LINES_AT_ONCE = 1024  # rows of plain columns made into text before it is written


class Coded:
    """A column given as ``values[codes[i]]`` for each row ``i``: ``codes`` a NumPy integer array or a list;
    ``values`` a list, or Coded in turn."""

    __slots__ = ("codes", "values")

    def __init__(self, codes, values):
        self.codes, self.values = codes, values

    def __len__(self) -> int:
        return len(self.codes)


def _take(values: list, codes) -> list:
    """``[values[c] for c in codes]``, by NumPy where the codes are an array."""
    if hasattr(codes, "dtype"):
        np = numpy_module()
        held = np.empty(len(values), dtype=object)
        held[:] = values  # element by element: a list of tuples would become a 2-D array
        return held[codes].tolist()
    return [values[c] for c in codes]


def _runs(leads: list, codes, tails: list) -> list:
    """Each row's lead (by its code) and then its tail.  Where the codes are sorted, the rows of one code
    (a record's findings) share one copy of their lead: a string per run, not per row."""
    if hasattr(codes, "dtype") and len(codes) > 1 and bool((codes[1:] >= codes[:-1]).all()):
        ends = (numpy_module().flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()
        starts = [0, *ends]
        ends.append(len(codes))
        return [lead + tails[a] if b - a == 1 else lead + ("\n" + lead).join(tails[a:b])
                for lead, a, b in zip(_take(leads, codes[starts]), starts, ends)]
    return list(map(str.__add__, _take(leads, codes), tails))


def _groups(columns: list, *, plain_runs: bool = False) -> list:
    """(first, past the last) of each run of Coded columns on one codes array, and of each other column (or,
    ``plain_runs``, each run of them)."""
    groups, i = [], 0
    while i < len(columns):
        end = i + 1
        if isinstance(columns[i], Coded):
            while end < len(columns) and isinstance(columns[end], Coded) and columns[end].codes is columns[i].codes:
                end += 1
        elif plain_runs:
            while end < len(columns) and not isinstance(columns[end], Coded):
                end += 1
        groups.append((i, end))
        i = end
    return groups


class Table:
    __slots__ = ("names", "kinds", "columns", "masks", "metadata")

    def __init__(self, names, kinds, columns, masks=None, metadata=None):
        """``masks``: per column, None or the bit mask JSON writes a signed hex value with;
        ``metadata``: the Parquet schema's key-value metadata."""
        self.names, self.kinds, self.columns = list(names), list(kinds), list(columns)
        self.masks = list(masks) if masks is not None else [None] * len(self.names)
        self.metadata = metadata
        if not len(self.names) == len(self.kinds) == len(self.columns):
            raise ValueError("a Table needs one kind and one column per name")
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            raise ValueError(f"unknown column kind {bad[0]!r}; kinds: {', '.join(KINDS)}")

    @property
    def rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def _plain(column) -> list:
    return column.tolist() if hasattr(column, "tolist") else list(column)


class _TextWriter:
    """A line per row: ``HEAD``, the cells joined by commas, ``TAIL`` and a line end.  A cell is its column's piece (a
    printf form) filled with the value ``_prepare`` made of it; a Coded column's values are filled once."""

    HEAD, TAIL = "", ""

    def __init__(self, out):
        self.out = out
        self.header = None

    def _check(self, table: Table) -> None:
        if self.header is None:
            self.header = (table.names, table.kinds)
            self._start(table)
        elif self.header != (table.names, table.kinds):
            raise ValueError("every chunk of a table needs the same columns")

    def _start(self, table: Table) -> None:
        pass

    def _piece(self, name: str, kind: str) -> str:
        raise NotImplementedError

    def _prepare(self, kind: str, values: list, mask) -> list:
        raise NotImplementedError

    def write(self, table: Table) -> None:
        self._check(table)
        columns, kinds, masks = table.columns, table.kinds, table.masks
        pieces = [self._piece(name, kind) for name, kind in zip(table.names, kinds)]
        groups = _groups(columns)

        def cells(a: int, b: int) -> list:  # a Coded group's cells, one per value its codes pick
            return self._cells([c.values for c in columns[a:b]], kinds[a:b], masks[a:b], pieces[a:b])

        if all(isinstance(columns[a], Coded) for a, _b in groups):  # a line is its groups' cells, joined
            pieces[0] = self.HEAD + pieces[0]
            pieces[groups[0][1] - 1] += "," if len(groups) > 1 else ""
            pieces[-1] += self.TAIL
            lead = cells(*groups[0])  # per value of the first codes: a run of rows shares it (_runs)
            tails = [_take(cells(a, b), columns[a].codes) for a, b in groups[1:]]
            if not tails:
                lines = _take(lead, columns[0].codes)
            else:
                lines = _runs(lead, columns[0].codes, tails[0] if len(tails) == 1 else list(map(",".join, zip(*tails))))
        else:  # a line is the template filled with the row's values (a Coded group's cells as one)
            slots = [("%s", _take(cells(a, b), columns[a].codes)) if isinstance(columns[a], Coded) else
                     (pieces[a], self._prepare(kinds[a], _plain(columns[a]), masks[a])) for a, b in groups]
            template = self.HEAD + ",".join(piece for piece, _cells in slots) + self.TAIL
            rows = zip(*(cells for _piece, cells in slots))
            while True:  # a batch of lines at a time: a chunk of wide records is hundreds of MB of text
                lines = [template % row for row in islice(rows, LINES_AT_ONCE)]
                if not lines:
                    return
                write_lines(self.out, lines)
        if lines:
            write_lines(self.out, lines)

    def _cells(self, values: list, kinds: list, masks: list, pieces: list) -> list:
        """The cells of columns given by their ``values`` (lists, or Coded on one codes array per run), one
        string per row of the values, each column's value filled into its piece, joined by commas."""
        parts = []
        for a, b in _groups(values, plain_runs=True):
            if isinstance(values[a], Coded):  # values that repeat in turn: their cells made once, then taken
                inner = self._cells([v.values for v in values[a:b]], kinds[a:b], masks[a:b], pieces[a:b])
                parts.append(_take(inner, values[a].codes))
                continue
            prepared = [self._prepare(kinds[j], _plain(values[j]), masks[j]) for j in range(a, b)]
            if all(pieces[j] == "%s" and kinds[j] == "text" for j in range(a, b)):  # CSV text: strings already
                parts.append(prepared[0] if b - a == 1 else list(map(",".join, zip(*prepared))))
            else:
                parts.append(list(map(",".join(pieces[a:b]).__mod__, zip(*prepared))))
        return parts[0] if len(parts) == 1 else list(map(",".join, zip(*parts)))

    def close(self) -> None:
        pass

    def park(self) -> None:
        """While no chunk comes: the output's descriptor closed, if it is a ``outfile.Parkable``."""
        _park(self.out)


def _park(out) -> None:
    park = getattr(out, "park", None)
    if park is not None:
        park()


class CsvWriter(_TextWriter):
    """``arrow``: rows of integers only, from ARROW_ROWS rows a chunk, go through pyarrow's CSV writer
    where pyarrow is installed (the same bytes, a third of the time); None: whenever it is."""

    _PIECE = {"int": "%d", "hex": "0x%x", "text": "%s", "opt": "%s", "ohex": "%s", "handle": "%s", "shex": "%s",
              "time": "%s", "float": "%s", "bool": "%s"}

    def __init__(self, out, *, header: bool = True, arrow: bool | None = None):
        super().__init__(out)
        self.with_header = header
        self.arrow = pyarrow_installed() if arrow is None else arrow

    def _arrow(self, table: Table) -> None:
        pa = _need("pyarrow", "arrow", "the CSV writer")
        pa_csv = _need("pyarrow.csv", "arrow", "the CSV writer")

        data = pa.Table.from_arrays([_hex_strings(pa, c, m) if k == "hex" else pa.array(c)
                                     for c, k, m in zip(table.columns, table.kinds, table.masks)],
                                    names=[str(i) for i in range(len(table.columns))])
        buffer = io.BytesIO()
        pa_csv.write_csv(data, buffer, pa_csv.WriteOptions(include_header=False, quoting_style="none",
                                                           batch_size=65536))
        self.out.write(buffer.getvalue().decode("ascii"))

    def _start(self, table: Table) -> None:
        if self.with_header:
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerow(table.names)
            self.out.write(buffer.getvalue())

    def _piece(self, name: str, kind: str) -> str:
        return self._PIECE[kind]

    def _prepare(self, kind: str, values: list, mask) -> list:
        if kind == "text":
            return [csv_cell(v) for v in values]
        if kind == "opt":
            return ["" if v is None else int(v) for v in values]
        if kind in _TEXT_FORMS:
            return [csv_bool(v) for v in values] if kind == "bool" else \
                ["" if t is None else t for t in _TEXT_FORMS[kind](values)]
        return _bit_patterns(values, mask) if kind == "hex" else values

    def write(self, table: Table) -> None:
        if self.arrow and table.rows >= ARROW_ROWS and _numbers_only(table):
            self._check(table)
            self._arrow(table)
            return
        super().write(table)


ARROW_ROWS = 4096  # below this a chunk is written by the template (pyarrow's start-up would dominate)


def _numbers_only(table: Table) -> bool:
    """Every column a NumPy array of integers, in decimal or hex: pyarrow writes each as the template would."""
    return all(k in ("int", "hex") for k in table.kinds) and \
        all(getattr(c, "dtype", None) is not None and c.dtype.kind in "iu" for c in table.columns)


_HEX_DIGITS = b"0123456789abcdef"


def _hex_strings(pa, column, mask):
    """A ``hex`` NumPy column as pyarrow strings ``0x...`` (lowercase, no leading zeros; a signed leaf's bit pattern
    within ``mask``), made with a few array operations: the template's ``0x%x``, a value at a time, costs more than
    the rest of the CSV."""
    np = numpy_module()
    words = column.astype(np.int64).view(np.uint64) if column.dtype.kind == "i" else column.astype(np.uint64)
    if mask is not None:
        words = words & np.uint64(mask)
    nibbles = (words[:, None] >> np.arange(60, -4, -4, dtype=np.uint64)).astype(np.uint8) & 15
    first = np.minimum((nibbles == 0).argmin(axis=1), 15)  # the first digit shown (0 shows one digit)
    first[words == 0] = 15
    text = np.empty((len(words), 18), dtype=np.uint8)
    text[:, 0], text[:, 1] = ord("0"), ord("x")
    text[:, 2:] = np.frombuffer(_HEX_DIGITS, dtype=np.uint8)[nibbles]
    shown = np.ones(text.shape, dtype=bool)
    shown[:, 2:] = np.arange(16) >= first[:, None]
    offsets = np.zeros(len(words) + 1, dtype=np.int32)
    np.cumsum(18 - first, out=offsets[1:])
    return pa.StringArray.from_buffers(len(words), pa.py_buffer(offsets), pa.py_buffer(text[shown]))


def time_texts(values) -> list:
    """The ``time`` kind's text of each value (nanoseconds since 1970 UTC): ``2024-03-01T12:34:56.123456789Z``,
    None for None."""
    np = _need("numpy", "bulk", "a table of times")
    if hasattr(values, "dtype"):
        return [t + "Z" for t in np.datetime_as_string(values.astype(np.int64).view("datetime64[ns]"), unit="ns").tolist()]
    values = list(values)
    stamps = np.array([_NAT if v is None else v for v in values], dtype=np.int64).view("datetime64[ns]")
    return [None if v is None else t + "Z" for v, t in zip(values, np.datetime_as_string(stamps, unit="ns").tolist())]


_NAT = -(1 << 63)  # NumPy's "not a time": a cell without one


def _handle_texts(values) -> list:
    return [None if v is None else f"0x{int(v):x}" for v in _plain(values)]


_WORD = (1 << 64) - 1


def _signed_texts(values) -> list:
    """``shex``: a signed 64-bit value's bit pattern, as JSON writes one (``wide_text``)."""
    return [None if v is None else wide_text(int(v)) for v in _plain(values)]


def _float_texts(values) -> list:
    """A float's shortest round trip; none for NaN and infinities (JSON has no number for them: ``null``, empty)."""
    return [None if v is None or v - v != 0 else repr(float(v)) for v in _plain(values)]


_TEXT_FORMS = {"time": time_texts, "handle": _handle_texts, "ohex": _handle_texts, "shex": _signed_texts,
               "float": _float_texts, "bool": None}


class JsonlWriter(_TextWriter):
    HEAD, TAIL = "{", "}"
    _CELL = {"int": "%d", "hex": '"0x%x"', "text": "%s", "opt": "%s", "ohex": "%s", "handle": "%s", "shex": "%s",
             "time": "%s", "float": "%s", "bool": "%s"}
    _BOOL = {None: "null", False: "false", True: "true"}

    def _piece(self, name: str, kind: str) -> str:
        return json.dumps(name).replace("%", "%%") + ":" + self._CELL[kind]

    def _prepare(self, kind: str, values: list, mask) -> list:
        if kind == "text":
            return [json.dumps(v) for v in values]
        if kind == "opt":
            return ["null" if v is None else int(v) for v in values]
        if kind in ("ohex", "handle", "shex"):
            return ["null" if t is None else f'"{t}"' for t in _TEXT_FORMS[kind](values)]
        if kind == "bool":
            return [self._BOOL[None if v is None else bool(v)] for v in values]
        if kind in _TEXT_FORMS:
            return ["null" if t is None else f'"{t}"' if kind == "time" else t for t in _TEXT_FORMS[kind](values)]
        return _bit_patterns(values, mask) if kind == "hex" else values


def _bit_patterns(values: list, mask) -> list:
    """A hex column's values as their bit patterns: in ``mask`` (a signed leaf's width), else in 64 bits where one
    is negative (as pyarrow's path reads a signed column), else as they are."""
    if mask is None:
        if not values or min(values) >= 0:
            return values
        mask = _WORD
    return [v & mask for v in values]


class _Bytes:
    """What pyarrow writes Parquet through: each piece goes by the stream's own ``write``, as CSV and JSON
    lines do, so a closed or failing stream fails alike for every format (given the stream, pyarrow
    first checks it in its own way: 'I/O operation on closed file' for a closed standard output)."""

    closed = False

    def __init__(self, out):
        self.out = out

    def write(self, data):
        return self.out.write(data)

    def flush(self):
        self.out.flush()


class _Nowhere:
    """Where a discarded Parquet file's last bytes go."""

    def write(self, data):
        return len(data)

    def flush(self):
        pass


class ParquetWriter:
    """Chunks as row groups of ``ROW_GROUP_ROWS`` rows (the last one of a file may have fewer): small chunks
    are held until they fill one, a chunk of that many rows or more is written as it comes.  ``park()``: the chunks
    held in memory are appended to a temporary file in ``spill`` (None: the system's temporary folder) and the
    output's descriptor is closed, so a writer of many tables holds neither their rows nor their files; they come
    back, as they were, when a row group is written or the file ends (each row is spilled at most once), so the file
    is the same bytes."""

    def __init__(self, out, *, group_rows: int = ROW_GROUP_ROWS, spill=None):
        self.pa = _need("pyarrow", "arrow", "--format parquet")
        self.pq = _need("pyarrow.parquet", "arrow", "--format parquet")
        self.out = _Bytes(binary_stream(out))
        self.group_rows = group_rows
        self.spill = spill
        self.writer = None
        self.schema = None
        self.held: list = []  # chunks in memory not yet written
        self.held_rows = 0  # rows not yet written, fewer than a group: those held and those spilled
        self.spilled = None  # the temporary file of chunks spilled while parked, one IPC stream a park
        self.streams: list = []  # the bytes of each stream in it

    def park(self) -> None:
        if self.held:
            sink = self.pa.BufferOutputStream()
            with self.pa.ipc.new_stream(sink, self.schema) as stream:
                for chunk in self.held:  # a batch per chunk: they come back chunked as they went
                    stream.write_table(chunk)
            data = sink.getvalue()
            if self.spilled is None:
                import tempfile

                fd, self.spilled = tempfile.mkstemp(prefix=".", suffix=".spill", dir=self.spill)
                os.close(fd)
            with open(self.spilled, "ab") as f:
                f.write(data)
            self.streams.append(len(data))
            self.held = []
        _park(self.out.out)

    def _unspill(self) -> None:
        """The spilled chunks back in memory, before those held, and their file gone."""
        path, self.spilled = self.spilled, None
        if path is None:
            return
        try:
            with open(path, "rb") as f:
                data = self.pa.py_buffer(f.read())
        finally:
            os.unlink(path)
        back, start = [], 0
        for size in self.streams:
            back.append(self.pa.ipc.open_stream(data.slice(start, size)).read_all())
            start += size
        self.held, self.streams = back + self.held, []

    def discard(self) -> None:
        """The file is being thrown away: the spilled chunks' file goes, and nothing more is written (the footer
        pyarrow writes when its writer closes goes nowhere); ``close`` then does nothing."""
        path, self.spilled, self.held, self.held_rows, self.schema = self.spilled, None, [], 0, None
        self.out.out = _Nowhere()
        writer, self.writer = self.writer, None
        try:
            if writer is not None:
                writer.close()
        finally:
            if path is not None:
                os.unlink(path)

    def write(self, table: Table) -> None:
        pa = self.pa
        types = _arrow_types(pa)
        held = (self.held_rows + table.rows) % self.group_rows != 0  # some rows wait: the caller may reuse its arrays
        arrays = [_arrow(pa, column, kind, types[kind], copy=held) for column, kind in zip(table.columns, table.kinds)]
        chunk = pa.Table.from_arrays(arrays, names=table.names)
        if table.metadata:
            chunk = chunk.replace_schema_metadata(table.metadata)
        if self.schema is None:
            self.schema = chunk.schema
        elif chunk.schema != self.schema:
            chunk = chunk.cast(self.schema)
        self.held.append(chunk)
        self.held_rows += chunk.num_rows
        if self.held_rows >= self.group_rows:
            self._write(final=False)

    def _write(self, *, final: bool) -> None:
        """The held chunks as whole groups (``final``: the rest too, as the last group)."""
        self._unspill()
        if self.writer is None:
            self.writer = self.pq.ParquetWriter(self.out, self.schema)
        held = self.held[0] if len(self.held) == 1 else self.pa.concat_tables(self.held)
        whole = held.num_rows if final else held.num_rows - held.num_rows % self.group_rows
        if whole or held.num_rows == 0:
            self.writer.write_table(held.slice(0, whole), row_group_size=self.group_rows)
        rest = held.slice(whole)
        self.held, self.held_rows = ([rest] if rest.num_rows else []), rest.num_rows

    def close(self) -> None:
        self._unspill()
        if self.schema is not None and (self.held or self.writer is None):
            self._write(final=True)
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _arrow_types(pa) -> dict:
    return {"int": pa.int64(), "hex": pa.uint64(), "text": pa.string(), "opt": pa.int64(), "ohex": pa.uint64(),
            "handle": pa.uint64(), "shex": pa.int64(), "time": pa.timestamp("ns", tz="UTC"), "float": pa.float64(),
            "bool": pa.bool_()}


def _arrow(pa, column, kind: str, kind_type, *, copy: bool = False):
    """A column as a pyarrow array (``copy``: of its own memory, not a view of a NumPy column); a Coded one
    taken from its values' array."""
    if isinstance(column, Coded):
        return _arrow(pa, column.values, kind, kind_type).take(pa.array(column.codes, type=pa.int64()))
    if hasattr(column, "dtype"):  # decoded leaves keep their own width and sign, as decode writes them
        column = column.copy() if copy else column
        if kind == "time":
            return pa.array(column.astype("int64"), type=kind_type)
        return pa.array(column.astype(bool) if kind == "bool" else column, type=None if kind in ("int", "hex")
                        else kind_type)
    if kind == "bool":
        column = [None if v is None else bool(v) for v in column]
    return pa.array(list(column), type=kind_type)


def writer(fmt: str, out, *, spill=None):
    """The writer of ``fmt`` over an open file (text for csv and jsonl, binary for parquet; ``spill``: where a
    parked Parquet writer keeps its held chunks)."""
    if fmt == "csv":
        return CsvWriter(out)
    if fmt == "jsonl":
        return JsonlWriter(out)
    if fmt == "parquet":
        return ParquetWriter(out, spill=spill)
    raise ValueError(f"unknown table format {fmt!r}; formats: {', '.join(FORMATS)}")


def columns_table(columns, prefix: str = "", paths=None, *, record: bool = False) -> Table:
    """A Table of decoded ``Columns`` (one column per leaf, named ``prefix + path``), kinds as
    ``decode --format`` writes them: pointers, handles, pointer-sized and 64-bit leaves hex in JSON.
    ``record``: a first column of record numbers, and the type and target as Parquet metadata (the
    table ``decode --format`` writes)."""
    from ..jsonvalue import json_hex

    leaves = columns.layout.by_path
    names, kinds, arrays, masks = [], [], [], []
    if record:
        np = _need("numpy", "bulk", "a table of records")
        names.append("record")
        kinds.append("int")
        arrays.append(np.arange(columns.start, columns.start + columns.count, dtype=np.uint64))
        masks.append(None)
    for path in columns if paths is None else paths:
        leaf = leaves[path]
        hexed = json_hex(leaf)
        names.append(prefix + path)
        kinds.append("hex" if hexed else "int")
        arrays.append(columns[path])
        masks.append((1 << leaf.bit_width) - 1 if hexed and leaf.signed else None)
    metadata = {"d3dkmddi.type": columns.type_name, "d3dkmddi.target": columns.target_label} if record else None
    return Table(names, kinds, arrays, masks, metadata)


def write_chunk(columns, out, fmt: str) -> None:
    """``decode --format``'s rows of decoded ``Columns`` (``record`` then every leaf), with the header
    of a CSV: for a single chunk."""
    w = writer(fmt, out)
    w.write(columns_table(columns, record=True))
    w.close()
