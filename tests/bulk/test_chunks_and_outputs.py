"""Chunked decoding equals whole decoding; columns out to pandas, Arrow, CSV, JSON lines, Parquet."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import decode_array, iter_chunks, records_per_chunk, write_records
from d3dkmddi_py.bulk.write import Progress

from ..conftest import require

ALLOC = kmd.target("x64", "WDDM3_1").DXGK_ALLOCATIONINFO


def random_blob(cls, n, seed=3):
    return np.random.default_rng(seed).integers(0, 256, cls._layout_.size * n, dtype=np.uint8).tobytes()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), step=st.integers(1, 25), reuse=st.booleans())
def test_chunks_concatenate_to_the_whole(n, step, reuse):
    blob = random_blob(ALLOC, n)
    whole = decode_array(ALLOC, blob)
    starts, pieces = [], {path: [] for path in whole}
    for chunk in iter_chunks(ALLOC, blob, chunk_records=step, reuse=reuse):
        starts.append(chunk.start)
        for path, values in chunk.items():
            pieces[path].extend(values.tolist())  # copied out before the next chunk overwrites
    assert starts == (list(range(0, n, step)) or [0])
    assert pieces == {path: values.tolist() for path, values in whole.items()}


def test_chunks_of_a_file_with_offset(tmp_path):
    blob = random_blob(ALLOC, 31)
    path = tmp_path / "a.bin"
    path.write_bytes(b"HEAD" + blob)
    whole = decode_array(ALLOC, blob)
    chunks = list(iter_chunks(ALLOC, path, offset=4, chunk_records=8))
    assert [c.count for c in chunks] == [8, 8, 8, 7]
    assert [c.offset for c in chunks] == [4, 4 + 8 * 88, 4 + 16 * 88, 4 + 24 * 88]
    for path_name in ("Size", "FlagsWddm2.CpuVisible", "PreferredSegment.SegmentId1"):
        assert np.concatenate([c[path_name] for c in chunks]).tolist() == whole[path_name].tolist()


def test_default_chunk_is_bounded():
    n = records_per_chunk(ALLOC)
    assert 1000 < n and n * (88 + decode_array(ALLOC, bytes(88)).nbytes) <= 40 << 20


def test_csv_and_jsonl_rows():
    blob = random_blob(ALLOC, 5)
    columns = decode_array(ALLOC, blob)
    text = io.StringIO()
    columns.to_csv(text)
    rows = list(csv.reader(io.StringIO(text.getvalue())))
    assert rows[0] == ["record", *[leaf.path for leaf in kmd.leaves(ALLOC)]]
    assert [int(v, 0) for v in rows[3]] == [2, *[int(columns[p][2]) for p in columns]]
    lines = io.StringIO()
    columns.to_jsonl(lines)
    objs = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert len(objs) == 5 and list(objs[4]) == ["record", *columns]
    assert rows[1:] == [[str(v) for v in obj.values()] for obj in objs]  # one spelling: a CSV cell is its JSON value
    # SIZE_T and pointers are "0x..." strings of their bit pattern (never a JSON number above 2**53)
    assert objs[4]["Size"] == f"0x{int(columns['Size'][4]):x}" and objs[4]["record"] == 4
    assert objs[4]["pPrivateDriverData"] == f"0x{int(columns['pPrivateDriverData'][4]):x}"
    assert all(isinstance(v, str) or abs(v) <= 1 << 53 for obj in objs for v in obj.values())


def test_pandas_and_arrow():
    require(_importable("pandas") and _importable("pyarrow"), "pandas and pyarrow (the dataframe/arrow extras)")
    blob = random_blob(ALLOC, 7)
    columns = decode_array(ALLOC, blob, offset=88, count=6)
    frame = columns.to_pandas()
    assert list(frame.columns) == list(columns) and frame.index.name == "record"
    assert frame["Flags2.Reserved"].dtype == np.uint32 and frame["FlagsWddm2.Cached"].dtype == np.uint8
    assert frame["Size"].tolist() == columns["Size"].tolist()
    table = columns.to_arrow()
    assert table.column_names == ["record", *columns]
    assert table.column("PreferredSegment.SegmentId2").to_pylist() == columns["PreferredSegment.SegmentId2"].tolist()
    assert table.schema.metadata[b"d3dkmddi.type"] == b"DXGK_ALLOCATIONINFO"


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_write_records_chunked_equals_whole(tmp_path, fmt):
    if fmt == "parquet":
        require(_importable("pyarrow"), "pyarrow (the arrow extra)")
    blob = random_blob(ALLOC, 45)
    src = tmp_path / "blob.bin"
    src.write_bytes(blob)
    out = tmp_path / f"out.{fmt}"
    written = write_records(ALLOC, src, out, fmt=fmt, chunk_records=10, progress=False)
    assert written == 45
    whole = decode_array(ALLOC, blob)
    expected = [[i, *[int(whole[p][i]) for p in whole]] for i in range(45)]
    assert _read_back(out, fmt) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([src.name, out.name])  # no temporary left


def test_write_records_to_a_stream_and_empty_file(tmp_path):
    src = tmp_path / "empty.bin"
    src.write_bytes(b"")
    text = io.StringIO()
    assert write_records("DXGK_SEGMENTFLAGS", src, text, fmt="csv", progress=False) == 0
    assert text.getvalue().splitlines() == [",".join(["record", *[l.path for l in kmd.leaves(kmd.DXGK_SEGMENTFLAGS)]])]


def test_write_records_failing_midway_leaves_no_file(tmp_path, monkeypatch):
    src = tmp_path / "blob.bin"
    src.write_bytes(random_blob(ALLOC, 30))
    out = tmp_path / "out.csv"
    from d3dkmddi_py.bulk import table as table_module

    calls = []
    real = table_module.CsvWriter.write

    def failing_write(self, table):
        calls.append(table.rows)
        if len(calls) == 2:  # the second chunk
            raise OSError("disk full")
        return real(self, table)

    monkeypatch.setattr(table_module.CsvWriter, "write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        write_records(ALLOC, src, out, fmt="csv", chunk_records=10, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blob.bin"]


def test_write_records_checks_before_writing(tmp_path):
    src = tmp_path / "bad.bin"
    src.write_bytes(bytes(89))
    out = tmp_path / "out.csv"
    with pytest.raises(ValueError, match="left over"):
        write_records(ALLOC, src, out, fmt="csv")
    with pytest.raises(ValueError, match="fmt must be one of 'csv', 'jsonl', 'parquet', not 'xml'"):
        write_records(ALLOC, src, out, fmt="xml")
    with pytest.raises(kmd.DecodeError, match="no such file"):
        write_records(ALLOC, tmp_path / "nope.bin", out, fmt="csv")
    assert not out.exists()


def test_progress_bar_appears_only_after_a_second():
    ticks = iter([0.0, 0.3, 0.6, 1.2, 1.8, 2.4])
    stream = io.StringIO()
    bar = Progress("DXGK_SEGMENTFLAGS", 400, stream, clock=lambda: next(ticks))
    bar.update(100)  # 0.3 s: nothing yet
    bar.update(200)  # 0.6 s
    assert stream.getvalue() == ""
    bar.update(300)  # 1.2 s: drawn
    bar.close(400)
    lines = stream.getvalue().split("\r")
    assert "75%" in lines[1] and "300/400 records" in lines[1]
    assert "100%" in lines[2] and lines[2].endswith("s\n")


def test_progress_bar_stays_silent_for_a_fast_run():
    ticks = iter([0.0, 0.2, 0.4])
    stream = io.StringIO()
    bar = Progress("x", 10, stream, clock=lambda: next(ticks))
    bar.update(10)
    bar.close(10)
    assert stream.getvalue() == ""


def test_a_progress_bar_is_exported_and_checks_what_it_is_built_with():
    """write_columns takes a bulk.Progress (its error says so), which bulk did not export: Progress("x", "10")
    was taken and ended the written run with Python's TypeError when the bar drew its first line."""
    from d3dkmddi_py import bulk

    assert bulk.Progress is Progress and "Progress" in bulk.__all__
    for kwargs, message in (({"total": "10"}, r"^Progress: total must be an integer 0\.\.0x7fffffffffffffff, not '10'$"),
                            ({"label": ""}, r"^Progress: label must be the bar's label \(a str\), not ''$"),
                            ({"stream": "err"}, r"^Progress: stream must be a stream to draw the bar on"),
                            ({"delay": float("nan")}, r"^Progress: delay must be a number of seconds"),
                            ({"clock": lambda: "now"}, r"^Progress: clock\(\) must be a number of seconds"),
                            ({"width": 0}, r"^Progress: width must be an integer 1\.\.0x3e8, not 0$")):
        with pytest.raises(kmd.D3dkmddiError, match=message):
            Progress(**{"label": "x", "total": 10, "stream": io.StringIO(), **kwargs})
    with pytest.raises(kmd.D3dkmddiError, match=r"^Progress\.update: done must be an integer 0\.\.0x7fffffffffffffff, "
                                                r"not None$"):
        Progress("x", 10, io.StringIO()).update(None)


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def _read_back(path, fmt):
    if fmt == "csv":
        with open(path, newline="") as f:
            return [[int(v, 0) for v in row] for row in list(csv.reader(f))[1:]]
    if fmt == "jsonl":  # "0x..." strings are the bit patterns of 64-bit and pointer leaves
        return [[int(v, 16) if isinstance(v, str) else v for v in json.loads(line).values()]
                for line in path.read_text().splitlines()]
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return [list(row.values()) for row in table.to_pylist()]
