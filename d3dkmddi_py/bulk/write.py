"""Streaming a whole file of records to CSV, JSON lines or Parquet, chunk by chunk.

This is what ``d3dkmddi decode TYPE --file F --count all --format ...`` runs: memory
stays at one chunk whatever the file size, a progress bar appears on standard error
once the run has taken a second, and a file written to a path appears only when it
is complete (written beside it, then renamed, by ``outfile.open_output``), so a failed
run never leaves a truncated file that looks finished and never harms an existing one.
"""
from __future__ import annotations

import os
import sys
import time

from ..errors import InvalidArgument, bad_argument, choice_argument, integer_argument, name_argument
from ..outfile import check_output, open_output
from .._numpy import optional_module as _need
from .columns import Columns
from .table import FORMATS, INT64_MAX, columns_table, writer


class Progress:
    """A one-line bar on a stream, drawn only once ``delay`` seconds have passed."""

    def __init__(self, label: str, total: int | None, stream=None, *, delay: float = 1.0, clock=time.monotonic,
                 width: int = 30, unit: str = "records"):
        """``total`` None: the count so far, without a bar (a stream whose length is not known).  Each argument is
        checked here: the bar draws itself while a table is written, where a bad one would end the run."""
        name_argument(label, "Progress: label", "the bar's label (a str)")
        if total is not None:
            integer_argument(total, "Progress: total", 0, INT64_MAX)
        if stream is not None and not callable(getattr(stream, "write", None)):
            raise bad_argument("Progress: stream", stream, "a stream to draw the bar on (with write), or None")
        _seconds(delay, "Progress: delay")
        if not callable(clock) or isinstance(clock, type):
            raise bad_argument("Progress: clock", clock, "a function of no arguments giving seconds")
        integer_argument(width, "Progress: width", 1, 1000)
        name_argument(unit, "Progress: unit", "what is counted (a str)")
        self.label, self.total, self.stream = label, total, stream if stream is not None else sys.stderr
        self.unit = unit
        self.delay, self.clock, self.width = delay, clock, width
        self.started = _seconds(clock(), "Progress: clock()")
        self.shown = False

    def update(self, done: int) -> None:
        """``done`` of ``total`` counted (once a chunk)."""
        integer_argument(done, "Progress.update: done", 0, INT64_MAX)
        elapsed = self.clock() - self.started
        if elapsed < self.delay:
            return
        self.shown = True
        if self.total is None:
            self.stream.write(f"\r{self.label}: {done:,} {self.unit} {elapsed:.1f} s")
            self.stream.flush()
            return
        fraction = done / self.total if self.total else 1.0
        filled = int(fraction * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {fraction:4.0%} {done:,}/{self.total:,} {self.unit} {elapsed:.1f} s")
        self.stream.flush()

    def close(self, done: int) -> None:
        """The last count: a drawn bar shows it and ends its line."""
        integer_argument(done, "Progress.close: done", 0, INT64_MAX)
        if self.shown:
            self.update(done)
            self.stream.write("\n")
            self.stream.flush()

    def abandon(self) -> None:
        """End a drawn bar's line after a failure, so the error (or "interrupted") gets a line of its own."""
        if self.shown:
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (OSError, ValueError):  # the bar's own stream may be what failed
                pass


def _seconds(value, name: str) -> float:
    """A number of seconds: an int or float, not negative, not NaN or infinite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise bad_argument(name, value, "a number of seconds (an int or float, at least 0)")
    return value


def write_columns(chunks, out, *, fmt: str, progress=None, inputs=()) -> int:
    """Write an iterable of Columns (one type) to ``out`` as ``fmt``; returns the record count.

    ``out``: a path (``"-"`` for standard output), or an open file (text for csv/jsonl;
    binary, or a text stream with ``.buffer`` such as ``sys.stdout``, for parquet).
    ``progress``: a Progress or None.  ``inputs``: paths being read, which ``out`` must
    not be (see ``outfile.check_output``); nor may it be the file a chunk was read from (its
    ``inputs``), which is checked before that chunk's rows are written.
    """
    fmt = _check_format(fmt)
    _check_out(out)
    if progress is not None and not isinstance(progress, Progress):
        raise bad_argument("progress", progress, "a bulk.Progress or None")
    if isinstance(chunks, (Columns, str, bytes)) or not callable(getattr(chunks, "__iter__", None)):
        raise bad_argument("chunks", chunks, "an iterable of Columns (a list, or iter_chunks(...))")
    try:
        if isinstance(out, (str, bytes, os.PathLike)):
            with open_output(out, binary=fmt == "parquet", inputs=inputs) as f:
                return _write(chunks, f, fmt, progress, out)
        return _write(chunks, out, fmt, progress)
    except BaseException:
        if progress is not None:
            progress.abandon()
        raise


def _check_out(out) -> None:
    if not isinstance(out, (str, bytes, os.PathLike)) and not callable(getattr(out, "write", None)):
        raise bad_argument("out", out, "a path ('-' for standard output) or an open file")


def _check_format(fmt: str) -> str:
    choice_argument(fmt, "fmt", FORMATS)
    if fmt == "parquet":
        _need("pyarrow.parquet", "arrow", "--format parquet")
    return fmt


def _write(chunks, out, fmt: str, progress, path=None) -> int:
    """``path``: the name ``out`` was opened for; a chunk read from that file stops the run before its rows
    are written (a file is written beside its name, so the input is still whole)."""
    written = 0
    table_writer = writer(fmt, out)
    checked = {()}
    try:
        for chunk in chunks:
            if not isinstance(chunk, Columns):
                raise InvalidArgument(f"write_columns writes Columns (from decode_array or iter_chunks), not "
                                      f"{type(chunk).__name__}")
            if path is not None and chunk.inputs not in checked:
                check_output(path, inputs=chunk.inputs, binary=fmt == "parquet")
                checked.add(chunk.inputs)
            table_writer.write(columns_table(chunk, record=True))
            written += chunk.count
            if progress is not None:
                progress.update(written)
    finally:
        table_writer.close()
    if progress is not None:
        progress.close(written)
    return written
