"""One writer per table format (CSV, JSON lines, Parquet) for tables given a chunk of rows at a time.

A chunk is a ``Table``: column names, a kind per column and one sequence per column.  The kinds say
how a value is written, the same in every chunk and the same rule as ``decode --format``:

- ``int``: CSV and JSON numbers; Parquet int64 (a NumPy column keeps its own type).
- ``hex``: a pointer, handle or 64-bit word: a CSV number, a ``"0x..."`` JSON string, Parquet uint64.
  A signed leaf (LARGE_INTEGER) keeps its value in CSV and Parquet (int64); its ``mask`` gives JSON
  its bit pattern, as ``decode --format jsonl`` writes it.
- ``text``: a string or None: CSV quoted where needed (empty for None), JSON string or null, Parquet string.
- ``opt``: an integer or None (a field some versions of an event lack): empty, null, Parquet int64.
- ``ohex``: a pointer or handle, or None (an adapter only a later lookup names): empty, ``"0x..."`` or null,
  Parquet uint64.
"""
from __future__ import annotations

import csv
import io
import json

from ..csvtext import csv_cell
from ..outfile import binary_stream
from .._numpy import optional_module as _need, pyarrow_installed

KINDS = ("int", "hex", "text", "opt", "ohex")
FORMATS = ("csv", "jsonl", "parquet")


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


def _lists(table: Table) -> list:
    return [c.tolist() if hasattr(c, "tolist") else list(c) for c in table.columns]


class _TextWriter:
    def __init__(self, out):
        self.out = out
        self.header = None
        self.template = None

    def _check(self, table: Table) -> None:
        if self.header is None:
            self.header = (table.names, table.kinds)
            self._start(table)
        elif self.header != (table.names, table.kinds):
            raise ValueError("every chunk of a table needs the same columns")

    def _start(self, table: Table) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class CsvWriter(_TextWriter):
    """``arrow``: rows of integers only, from ARROW_ROWS rows a chunk, go through pyarrow's CSV writer
    where pyarrow is installed (the same bytes, a third of the time); None: whenever it is."""

    def __init__(self, out, *, header: bool = True, arrow: bool | None = None):
        super().__init__(out)
        self.with_header = header
        self.arrow = pyarrow_installed() if arrow is None else arrow

    def _arrow(self, table: Table) -> None:
        pa = _need("pyarrow", "arrow", "the CSV writer")
        pa_csv = _need("pyarrow.csv", "arrow", "the CSV writer")

        data = pa.Table.from_arrays([pa.array(c) for c in table.columns], names=[str(i) for i in
                                                                                   range(len(table.columns))])
        buffer = io.BytesIO()
        pa_csv.write_csv(data, buffer, pa_csv.WriteOptions(include_header=False, quoting_style="none",
                                                           batch_size=65536))
        self.out.write(buffer.getvalue().decode("ascii"))

    def _start(self, table: Table) -> None:
        if self.with_header:
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerow(table.names)
            self.out.write(buffer.getvalue())
        self.template = ",".join("%s" if k in ("text", "opt", "ohex") else "%d" for k in table.kinds) + "\n"

    def write(self, table: Table) -> None:
        self._check(table)
        if self.arrow and table.rows >= ARROW_ROWS and _numbers_only(table):
            self._arrow(table)
            return
        lists = _lists(table)
        for i, kind in enumerate(table.kinds):
            if kind == "text":
                lists[i] = [csv_cell(v) for v in lists[i]]
            elif kind in ("opt", "ohex"):
                lists[i] = ["" if v is None else int(v) for v in lists[i]]
        template = self.template
        self.out.writelines(template % row for row in zip(*lists))


ARROW_ROWS = 4096  # below this a chunk is written by the template (pyarrow's start-up would dominate)


def _numbers_only(table: Table) -> bool:
    """Every column a NumPy array of integers: pyarrow writes each as the template would (plain decimal)."""
    return all(k in ("int", "hex") for k in table.kinds) and \
        all(getattr(c, "dtype", None) is not None and c.dtype.kind in "iu" for c in table.columns)


class JsonlWriter(_TextWriter):
    _CELL = {"int": "%d", "hex": '"0x%x"', "text": "%s", "opt": "%s", "ohex": "%s"}

    def _start(self, table: Table) -> None:
        self.template = "{" + ",".join(json.dumps(n).replace("%", "%%") + ":" + self._CELL[k]
                                       for n, k in zip(table.names, table.kinds)) + "}\n"

    def write(self, table: Table) -> None:
        self._check(table)
        lists = _lists(table)
        for i, kind in enumerate(table.kinds):
            if kind == "text":
                lists[i] = [json.dumps(v) for v in lists[i]]
            elif kind == "opt":
                lists[i] = ["null" if v is None else int(v) for v in lists[i]]
            elif kind == "ohex":
                lists[i] = ["null" if v is None else f'"0x{int(v):x}"' for v in lists[i]]
            elif table.masks[i] is not None:
                mask = table.masks[i]
                lists[i] = [v & mask for v in lists[i]]
        template = self.template
        self.out.writelines(template % row for row in zip(*lists))


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


class ParquetWriter:
    def __init__(self, out):
        self.pa = _need("pyarrow", "arrow", "--format parquet")
        self.pq = _need("pyarrow.parquet", "arrow", "--format parquet")
        self.out = _Bytes(binary_stream(out))
        self.writer = None
        self.schema = None

    def write(self, table: Table) -> None:
        pa = self.pa
        types = {"int": pa.int64(), "hex": pa.uint64(), "text": pa.string(), "opt": pa.int64(), "ohex": pa.uint64()}
        arrays = []
        for column, kind in zip(table.columns, table.kinds):
            if hasattr(column, "dtype"):  # decoded leaves: their own width and sign, as decode writes them
                arrays.append(pa.array(column))
            else:
                arrays.append(pa.array(list(column), type=types[kind]))
        chunk = pa.Table.from_arrays(arrays, names=table.names)
        if table.metadata:
            chunk = chunk.replace_schema_metadata(table.metadata)
        if self.writer is None:
            self.schema = chunk.schema
            self.writer = self.pq.ParquetWriter(self.out, self.schema)
        elif chunk.schema != self.schema:
            chunk = chunk.cast(self.schema)
        self.writer.write_table(chunk)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def writer(fmt: str, out):
    """The writer of ``fmt`` over an open file (text for csv and jsonl, binary for parquet)."""
    if fmt == "csv":
        return CsvWriter(out)
    if fmt == "jsonl":
        return JsonlWriter(out)
    if fmt == "parquet":
        return ParquetWriter(out)
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
