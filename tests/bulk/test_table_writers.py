"""The one writer per table format: pyarrow's CSV writer, where it takes a chunk, writes exactly the
bytes of the template; the kinds of a Table read back the same from CSV, JSON lines and Parquet."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import decode_array, write_columns
from d3dkmddi_py.bulk.table import ARROW_ROWS, Coded, CsvWriter, JsonlWriter, Table, columns_table, writer
from d3dkmddi_py.errors import OutputError

from ..conftest import require

try:
    import pyarrow  # noqa: F401
except ImportError:  # the test extra installs it; under CI its absence fails
    pyarrow = None

TARGETS = (("x86", "WDDM1_3"), ("x64", "WDDM2_0"), ("arm64", "WDDM3_2"))


@pytest.mark.parametrize("abi, version", TARGETS)
def test_pyarrow_writes_the_templates_bytes(abi, version):
    require(pyarrow is not None, "pyarrow (the test extra)")
    rng = np.random.default_rng(7)
    for name in sorted(kmd.target(abi, version).types):
        cls = kmd.target(abi, version).types[name]
        if not hasattr(cls, "_leaves_"):
            continue
        raw = rng.integers(0, 256, cls._layout_.size * (ARROW_ROWS + 3), dtype=np.uint8).tobytes()
        columns = decode_array(cls, raw)
        texts = []
        for arrow in (False, True):
            out = io.StringIO()
            w = CsvWriter(out, arrow=arrow)
            w.write(columns_table(columns, record=True))
            texts.append(out.getvalue())
        assert texts[0] == texts[1], (name, abi, version)
        assert texts[0].count("\n") == ARROW_ROWS + 4


def test_pyarrow_writes_hex_columns_as_the_template_does_at_their_edges():
    """Issue 31: CSV spells a hex column 0x...; pyarrow's path makes those strings in NumPy, and must write the bytes
    the template's 0x%x does: 0, one digit, every length, 2**64-1, a signed column as its bit pattern in its mask."""
    require(pyarrow is not None, "pyarrow (the test extra)")
    edges = [0, 1, 0xF, 0x10, 0xFF, 0x100, 0x1234_5678, 1 << 63, (1 << 64) - 1] + [1 << k for k in range(64)]
    rows = ARROW_ROWS + len(edges)
    unsigned = np.resize(np.array(edges, dtype=np.uint64), rows)
    signed = np.resize(np.array([-1, -(1 << 63), 0, 5, (1 << 63) - 1, -0x1000], dtype=np.int64), rows)
    narrow = np.resize(np.array([0, 7, 0xFFFF_FFFF], dtype=np.uint32), rows)
    table = Table(["n", "u", "s64", "s40", "u32"], ["int", "hex", "hex", "hex", "hex"],
                  [np.arange(rows), unsigned, signed, signed, narrow], [None, None, (1 << 64) - 1, (1 << 40) - 1, None])
    texts = []
    for arrow in (False, True):
        out = io.StringIO()
        CsvWriter(out, arrow=arrow).write(table)
        texts.append(out.getvalue())
    assert texts[0] == texts[1]
    lines = texts[1].splitlines()
    assert lines[1] == "0,0x0,0xffffffffffffffff,0xffffffffff,0x0" and lines[9] == "8,0xffffffffffffffff,0x0,0x0,0xffffffff"


def test_a_small_chunk_and_text_columns_take_the_template():
    table = Table(["n", "s"], ["int", "text"], [np.arange(ARROW_ROWS * 2), ["a,b"] * (ARROW_ROWS * 2)])
    out = io.StringIO()
    CsvWriter(out, arrow=True).write(table)
    assert out.getvalue().splitlines()[:2] == ["n,s", '0,"a,b"']


def test_every_kind_in_every_format(tmp_path):
    require(pyarrow is not None, "pyarrow (the test extra)")
    import pyarrow.parquet as pq

    table = Table(["n", "h", "t", "o", "signed"], ["int", "hex", "text", "opt", "hex"],
                  [[1, 2], [0xFFFF_FFFF_FFFF_FFFF, 16], ['say "hi", twice', None], [None, 3],
                   np.array([-1, 5], dtype=np.int64)], masks=[None, None, None, None, (1 << 64) - 1])
    out = io.StringIO()
    CsvWriter(out).write(table)
    assert out.getvalue() == 'n,h,t,o,signed\n1,0xffffffffffffffff,"say ""hi"", twice",,0xffffffffffffffff\n2,0x10,,3,0x5\n'
    out = io.StringIO()
    JsonlWriter(out).write(table)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[0] == {"n": 1, "h": "0xffffffffffffffff", "t": 'say "hi", twice', "o": None,
                       "signed": "0xffffffffffffffff"}
    assert rows[1] == {"n": 2, "h": "0x10", "t": None, "o": 3, "signed": "0x5"}
    with open(tmp_path / "t.parquet", "wb") as f:
        w = writer("parquet", f)
        w.write(table)
        w.close()
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.to_pydict() == {"n": [1, 2], "h": [0xFFFF_FFFF_FFFF_FFFF, 16], "t": ['say "hi", twice', None],
                                "o": [None, 3], "signed": [-1, 5]}
    assert [str(f.type) for f in back.schema] == ["int64", "uint64", "string", "int64", "int64"]


def test_chunks_must_keep_their_columns():
    w = CsvWriter(io.StringIO())
    w.write(Table(["a"], ["int"], [[1]]))
    with pytest.raises(ValueError, match="same columns"):
        w.write(Table(["b"], ["int"], [[1]]))


class _Failing(io.RawIOBase):
    """A binary stream whose writes fail as a closed descriptor's do."""

    def writable(self):
        return True

    def write(self, data):
        raise OSError(9, "standard output is closed")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_parquet_to_a_failing_stream_fails_as_every_format_does(fmt):
    """pyarrow checked a stream its own way (ValueError 'I/O operation on closed file'); the writer now fails
    by the stream's own write, the error the command reports in one line for each format."""
    if fmt == "parquet":
        require(pyarrow is not None, "pyarrow (the test extra)")
    stream = _Failing() if fmt == "parquet" else io.TextIOWrapper(_Failing(), write_through=True)
    w = writer(fmt, stream)
    with pytest.raises(OSError, match="standard output is closed") as e:
        w.write(columns_table(decode_array("DXGK_SEGMENTFLAGS", bytes(8)), record=True))
        w.close()
    assert e.value.errno == 9


def test_parquet_to_a_text_stream_is_the_packages_error_not_pyarrows():
    require(pyarrow is not None, "pyarrow (the test extra)")
    columns = decode_array("DXGK_SEGMENTFLAGS", bytes(8))
    for write in (lambda: columns.to_parquet(io.StringIO()),
                  lambda: write_columns([columns], io.StringIO(), fmt="parquet")):
        with pytest.raises(OutputError, match=r"Parquet is binary and the output is a text stream "
                                              r"\(StringIO\) without a binary \.buffer"):
            write()
    binary = io.BytesIO()
    columns.to_parquet(binary)
    assert binary.getvalue()[:4] == b"PAR1"


def _plain(column) -> list:
    """A Coded column spelt out (its values Coded in turn too)."""
    if isinstance(column, Coded):
        values = _plain(column.values)
        return values[np.asarray(column.codes)] if hasattr(values, "dtype") else [values[c] for c in column.codes]
    return column if hasattr(column, "dtype") else list(column)


@pytest.mark.parametrize("sorted_codes", [True, False])
@pytest.mark.parametrize("as_array", [True, False])
def test_coded_columns_write_what_their_values_spelt_out_write(sorted_codes, as_array, tmp_path):
    """Issue 23 (one writer per table format): a findings table comes as Coded columns (a record's number
    once for all its findings, a check's texts once); every format writes exactly the bytes of the same
    table spelt out, whether the codes are sorted (one lead per run) or not, NumPy arrays or lists."""
    rng = np.random.default_rng(5)
    n, distinct = 3000, 40
    lead = rng.integers(0, distinct, n)
    note = rng.integers(0, 25, n)
    if sorted_codes:
        lead.sort()
    if not as_array:
        lead, note = lead.tolist(), note.tolist()
    texts = ['say "hi", twice', "plain", None, "line\nend", "100%", "a,b"]
    inner = [i % 6 for i in range(25)] if not as_array else np.arange(25) % 6
    table = Table(["n", "h", "t", "t2", "o", "u", "signed", "w", "x"],
                  ["int", "hex", "text", "text", "opt", "text", "hex", "int", "text"],
                  [Coded(lead, list(range(distinct))), Coded(lead, [(1 << 64) - 1 - i for i in range(distinct)]),
                   Coded(note, Coded(inner, texts)), Coded(note, Coded(inner, texts[::-1])),
                   Coded(note, [None if i % 3 else i for i in range(25)]),
                   Coded(note, [f"m{i}%s" for i in range(25)]), Coded(note, -np.arange(25, dtype=np.int64)),
                   rng.integers(0, 9, n), [texts[i % 6] for i in range(n)]],
                  masks=[None, None, None, None, None, None, (1 << 64) - 1, None, None])
    spelt = Table(table.names, table.kinds, [_plain(c) for c in table.columns], table.masks)
    for make in (CsvWriter, JsonlWriter):
        got, want = io.StringIO(), io.StringIO()
        make(got).write(table)
        make(want).write(spelt)
        assert got.getvalue() == want.getvalue() and got.getvalue().count("\n") >= n
    alone = Table(["n", "h", "signed"], ["int", "hex", "hex"], [table.columns[0], table.columns[1],
                                                                 Coded(note, list(range(25)))])
    with_opt = Table(["t", "o"], ["text", "opt"], [table.columns[2], table.columns[4]])  # CSV %s,%s: a number too
    texts_only = Table(["t", "t2", "u"], ["text"] * 3, [table.columns[2], table.columns[3], table.columns[5]])
    for make in (CsvWriter, JsonlWriter):  # Coded columns only: lines joined from cells, not formatted
        for coded in (alone, with_opt, texts_only):
            got, want = io.StringIO(), io.StringIO()
            make(got).write(coded)
            make(want).write(Table(coded.names, coded.kinds, [_plain(c) for c in coded.columns], coded.masks))
            assert got.getvalue() == want.getvalue()
    require(pyarrow is not None, "pyarrow (the test extra)")
    import pyarrow.parquet as pq

    for name, t in (("coded", table), ("spelt", spelt)):
        with open(tmp_path / f"{name}.parquet", "wb") as f:
            w = writer("parquet", f)
            w.write(t)
            w.close()
    assert pq.read_table(tmp_path / "coded.parquet").equals(pq.read_table(tmp_path / "spelt.parquet"))
