"""The run: a source's chunks through decode and check to a sink; and ``report``, the commands'
output from Python."""
from __future__ import annotations

import os
from functools import lru_cache

from .._records import dataclass
from ..errors import bad_argument, choice_argument, flag_argument
from ..semantics.adapter import as_adapter
from ..semantics.checks import checks_for
from .decode import decode_chunk
from .jsonl import JsonDecode, JsonValidate
from .rows import ColumnRows, FindingRows
from .source import Records, _text_dump_file
from .text import TextDecode, TextValidate


@dataclass
class Summary:
    records: int = 0
    errors: int = 0
    warnings: int = 0
    more: int = 0  # whole records past the range that were not read


def sink_for(fmt: str, out, *, validate: bool, adapter=None, nonzero: bool = False):
    """The sink that writes ``fmt`` to ``out``: the one choice ``decode``, ``validate`` and ``report`` make.
    "text" and "json" (JSON lines) print records or findings; any other format is a table, a row per
    record (``decode``) or per finding (``validate``), whose writer refuses a format it does not know."""
    if fmt == "text":
        return TextValidate(out) if validate else TextDecode(out, adapter=adapter, nonzero=nonzero)
    if fmt == "json":
        return JsonValidate(out) if validate else JsonDecode(out, adapter=adapter)
    return FindingRows(out, fmt) if validate else ColumnRows(out, fmt)


def run(records: Records, sink, *, adapter=None, values: bool = True, findings: bool = True,
        progress=None) -> Summary:
    """Stream every chunk of ``records`` through decode, check and ``sink``; returns the totals."""
    summary = Summary(more=records.more)
    # a chunk's output is built whole before it is written: bound it by the sink's records per chunk
    step = getattr(sink, "chunk_records", None)
    try:
        checks_for(records.layout, as_adapter(adapter))  # an adapter of another target fails here, before output
        for chunk in records.chunks(step):
            decoded = decode_chunk(chunk, adapter=adapter, values=values, findings=findings)
            summary.errors += decoded.errors
            summary.warnings += decoded.warnings
            summary.records += chunk.count
            sink.write(decoded)
            if progress is not None:
                progress.update(summary.records)
    except BaseException:
        records.close()  # read to its end, it is closed already; stopped before, it is closed here
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

    from ..decoding import TEXT_KINDS, data_or_path, memory_of, start_offset
    from ..resolve import resolve_layout

    layout = resolve_layout(type, target)
    fmt, kind = choice_argument(fmt, "fmt", ("text", "json")), choice_argument(kind, "kind", TEXT_KINDS)
    validate, nonzero = flag_argument(validate, "validate"), flag_argument(nonzero, "nonzero")
    as_adapter(adapter)
    if out is not None and not callable(getattr(out, "write", None)):
        raise bad_argument("out", out, "an open text file (or None to return the text)")
    data = data_or_path(data, path)
    if isinstance(data, os.PathLike) and address is None and not _text_dump_file(data):
        records = Records(layout, path=os.fspath(data), origin=str(os.fspath(data)), offset=offset, count=count)
    else:
        memory = memory_of(data, layout, kind="auto" if isinstance(data, os.PathLike) else kind, address=address,
                           count=count)
        records = Records.from_memory(layout, memory, start_offset(memory, offset, address), count)
    buffer = io.StringIO() if out is None else out
    sink = sink_for(fmt, buffer, validate=validate, adapter=adapter, nonzero=nonzero)
    summary = run(records, sink, adapter=adapter, values=not validate)
    return buffer.getvalue() if out is None else summary
