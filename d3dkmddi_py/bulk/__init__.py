"""Bulk decode: many records of one type from a blob, one column per leaf.

``decode_array`` is a pure function of a byte range, so it runs as it is per
partition of Dask or any other engine (see ``d3dkmddi_py.recipes.dask_decode``).
NumPy is a dependency of the package; where it is missing (a debugger's embedded Python) the same columns
come out as ``array.array`` objects, slower, with one warning.
"""
from __future__ import annotations

import os
import sys
import warnings

from ._engine import Buffers, decode_numpy, decode_pure, decode_small, small_records
from ._plan import plan_for
from ._source import BulkInputError, InvalidArgument, Source, check_span, records_in, struct_layout
from .columns import Columns
from .._numpy import install_hint, numpy_module
from ..layout import TypeLayout
from ..errors import bad_argument, flag_argument, integer_argument
from ..outfile import check_output
from .write import FORMATS, Progress, _check_format, _check_out, write_columns

__all__ = ["decode_array", "iter_chunks", "column_dtypes", "Columns", "BulkInputError", "NumpyMissingWarning",
           "write_records", "write_columns", "FORMATS", "DEFAULT_CHUNK_BYTES", "records_per_chunk",
           "column_findings", "validate_array", "columns_of_bytes", "Progress"]

DEFAULT_CHUNK_BYTES = 32 << 20  # input plus output per chunk: a few cache-friendly passes, bounded memory


class NumpyMissingWarning(RuntimeWarning):
    """NumPy is not installed: bulk decoding runs in pure Python, correct but far slower."""


_warned = False


def _numpy():
    """NumPy, or None (warned once per process) when it cannot be imported."""
    global _warned
    numpy = numpy_module()
    if numpy is None:
        if not _warned:
            _warned = True
            warnings.warn("NumPy is not installed: d3dkmddi_py.bulk decodes in pure Python (same values, "
                          f"about 100x slower); {install_hint('bulk')}", NumpyMissingWarning, stacklevel=3)
        return None
    return numpy


def decode_array(type, data, *, target=None, offset=0, count=None, out=None) -> Columns:
    """Every leaf of ``count`` records of ``type`` in ``data``, one array per leaf.

    ``type``: a C name ("DXGK_ALLOCATIONINFO") or a class from ``target(...)``.
    ``data``: bytes, bytearray, memoryview, a NumPy array, or a path (read range by range,
    never memory-mapped).  ``target``: a Target, an ABI name or an (abi, version) pair;
    it picks the class for a C name (default x64 at the newest version).
    ``offset``: byte offset of the first record.  ``count``: records to decode,
    None for all (then the bytes after ``offset`` must be whole records).
    ``out``: a previous result of the same type to reuse the memory of (its arrays
    are overwritten), as a chunked loop does.

    Columns are keyed by dotted leaf path (``Flags.CpuVisible``, ``HintedBank.Bank0``,
    ``Reserved[2]``), every union arm and bitfield included, each in the narrowest
    unsigned dtype that holds the field; plain signed members (LONG, enums) are signed.
    Errors (bad range, missing file) are raised before anything is decoded.
    """
    layout = struct_layout(type, target)
    source = Source(data)
    first, records = records_in(layout, source.size, offset, count)
    np = _numpy()
    if np is None:
        return _decode(layout, source, first, records, 0, out)
    raw = source.numpy_range(first, first + records * layout.size)
    return _columns(np, layout, raw, records, 0, first, out, source.inputs)


def _decode(layout, source: Source, offset: int, count: int, start: int, out=None) -> Columns:
    stop = offset + count * layout.size
    np = _numpy()
    if np is None:
        return _columns(None, layout, source.memoryview_range(offset, stop), count, start, offset, None,
                        source.inputs)
    return _columns(np, layout, source.numpy_range(offset, stop), count, start, offset, out, source.inputs)


def _columns(np, layout, raw, count: int, start: int, offset: int, out=None, inputs: tuple = ()) -> Columns:
    plan = plan_for(layout)
    if np is None:
        return Columns._new(layout, plan, decode_pure(plan, raw, count), start, offset, None, inputs)
    buffers = out._buffers if out.__class__ is Columns else None
    if count <= small_records(np, plan) and not isinstance(buffers, Buffers):
        arrays, buffers = decode_small(np, plan, raw, count, buffers)
    else:
        arrays, buffers = decode_numpy(np, plan, raw, count, buffers if isinstance(buffers, Buffers) else None)
    return Columns._new(layout, plan, arrays, start, offset, buffers, inputs)


def columns_of_bytes(layout, data: bytes, *, start: int = 0, offset: int = 0) -> Columns:
    """The columns of whole records already in memory (a pipeline chunk): no range checks, no copies."""
    if not isinstance(layout, TypeLayout) or not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgument(f"columns_of_bytes takes a TypeLayout and bytes, not {type(layout).__name__} and "
                              f"{type(data).__name__}")
    start, offset = integer_argument(start, "start", 0), integer_argument(offset, "offset", 0)
    np = _numpy()
    count = len(data) // layout.size
    raw = memoryview(data) if np is None else np.frombuffer(data, dtype=np.uint8)
    return _columns(np, layout, raw, count, start, offset)


def records_per_chunk(type, *, target=None, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """Records per chunk so that one chunk's input and columns take about ``chunk_bytes``."""
    plan = plan_for(struct_layout(type, target))
    return max(1, integer_argument(chunk_bytes, "chunk_bytes", 1) // (plan.record_size + plan.column_bytes))


def iter_chunks(type, data, *, target=None, offset=0, count=None, chunk_records=None, reuse=False):
    """Columns of consecutive runs of records, at constant memory, for data larger than memory.

    Yields Columns whose ``start`` is the record number of their first row.  A file is
    read one chunk at a time (never memory-mapped); an empty range yields one empty chunk.  With ``reuse=True`` every chunk overwrites the arrays
    of the previous one (fastest; use each chunk before asking for the next).  The whole
    range is checked before the first chunk is decoded.
    """
    layout = struct_layout(type, target)
    reuse = flag_argument(reuse, "reuse")
    source = Source(data)
    span = check_span(layout, source.size, offset, count)
    return _chunks(layout, source, span, _step(layout, chunk_records), reuse)


def _step(layout, chunk_records) -> int:
    return records_per_chunk(layout) if chunk_records is None else integer_argument(chunk_records, "chunk_records", 1)


def _chunks(layout, source, span, step, reuse):
    previous = None
    for first in range(0, max(span.count, 1), step):  # an empty range still gives its (empty) columns
        n = min(step, span.count - first)
        chunk = _decode(layout, source, span.offset + first * span.record_size, n, first,
                        previous if reuse else None)
        previous = chunk
        yield chunk


def column_findings(columns: Columns, *, adapter=None):
    """The findings of every record of decoded columns, as one table (see ``bulk.findings``)."""
    from .findings import findings

    if not isinstance(columns, Columns):
        raise InvalidArgument(f"columns must be the Columns of decode_array, not {type(columns).__name__}")
    return findings(columns, adapter=adapter)


def validate_array(type, data, *, target=None, offset=0, count=None, adapter=None):
    """Decode a byte range and validate every record: ``column_findings(decode_array(...))``."""
    return column_findings(decode_array(type, data, target=target, offset=offset, count=count), adapter=adapter)


def column_dtypes(type, *, target=None) -> dict:
    """Leaf path -> NumPy dtype string ("u1", "u4", "i4"...) of the columns ``decode_array`` returns."""
    return {c.path: c.dtype for c in plan_for(struct_layout(type, target)).columns}


def write_records(type, data, out, *, fmt: str, target=None, offset=0, count=None, progress=True,
                  chunk_records=None) -> int:
    """Decode every record of ``type`` in ``data`` (a file path, or bytes) and write them to ``out``; returns the count.

    The command line's ``decode TYPE --file F --count all --format csv|jsonl|parquet``.
    ``out``: a path (written atomically through a temporary file; ``"-"`` is standard
    output; the input itself, a directory or a device is refused with OutputError) or an
    open file (``sys.stdout`` works for all three formats).  ``count``: None for every
    record (the bytes after ``offset`` must be whole records).  ``progress``: True for a
    bar on standard error once the run takes more than a second, False for none, or a
    stream to draw it on.  Every check (output path, type, target, file, range, format,
    pyarrow for parquet) happens before the first byte is written.  Rows start with
    ``record``, the record number from ``offset``.
    """
    fmt = _check_format(fmt)
    _check_out(out)
    if progress is not None and not isinstance(progress, bool) and not callable(getattr(progress, "write", None)):
        raise bad_argument("progress", progress, "True, False or a stream to draw the bar on")
    layout = struct_layout(type, target)
    source = Source(data)
    inputs = source.inputs
    if isinstance(out, (str, bytes, os.PathLike)):
        check_output(out, inputs=inputs, binary=fmt == "parquet")
    span = check_span(layout, source.size, offset, count)
    step = _step(layout, chunk_records)
    bar = None
    if progress:
        stream = progress if hasattr(progress, "write") else sys.stderr
        bar = Progress(f"{layout.c_name} [{layout.label}]", span.count, stream)
    return write_columns(_chunks(layout, source, span, step, reuse=True), out, fmt=fmt, progress=bar, inputs=inputs)
