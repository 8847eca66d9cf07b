"""Decompression is bounded by what the file declares: a buffer never decompresses past the log-file
header's BufferSize, its processor is one of the header's NumberOfProcessors, time order holds at most
HELD_BYTES of buffers at once, and the hostile files of the issue (kilobytes that expand to
gigabytes) give one line and exit 2, or a correct reading, under a memory limit."""
from __future__ import annotations

import io
import re

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw.readers import etlcolumns, etlfile
from d3dkmddi_py.etw.model.tracker import Tracker
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.etw.outputs.tables import TraceTables
from d3dkmddi_py.samples import etl_build
from d3dkmddi_py.samples.etl_build import SMALLEST_EVENT, expanding_bytes

from .etl_hard import hard_trace
from .etl_readings import answer, tables
from .helpers import alloc_fields

MB = 1 << 20


def allocation_event() -> bytes:
    return etl_build.event_bytes(etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", "Start")], alloc_fields()))


def every_reading(data: bytes) -> list:
    """What the summary and the events say: each a result or the error's text."""
    return [answer(lambda: etw.summary(data)), answer(lambda: len(list(etw.read(data))))]


def test_a_buffer_never_decompresses_past_the_buffer_size_the_header_states(tmp_path):
    """A 64 KB header and 40 buffers that say they decompress to 16 MB: refused from the buffer's
    header, before any decompression (40 such buffers on 40 processors took 2 GB through --format csv;
    on one processor, it read 40 million 16-byte events)."""
    data = expanding_bytes(SMALLEST_EVENT, 40, processors=1, declared_size=64 << 10)
    assert len(data) < 12_000
    message = (r"buffer 1 \(file offset 4096\): it decompresses to 16,777,208 bytes \(SavedOffset\), more than "
               r"the 65,536 bytes the log-file header gives every buffer: damaged")
    for said in every_reading(data) + [tables(data, tmp_path, True)["error"], tables(data, tmp_path, False)["error"]]:
        assert re.search(message, said), said


def test_a_raw_buffer_past_the_buffer_size_the_header_states_is_refused():
    data = bytearray(etl_build.etl_bytes([etl_build.dxgkrnl_event(KIND_BY_NAME[("AdapterAllocation", "Start")],
                                                                  alloc_fields())], processors=1))
    data[4096:4100] = (8192).to_bytes(4, "little")
    data += b"\xff" * 4096
    assert all("BufferSize is 8,192, more than the 4,096 bytes the log-file header gives every buffer" in said
               for said in every_reading(bytes(data)))


def test_processors_are_bounded_by_the_headers_count():
    data = expanding_bytes(SMALLEST_EVENT, 3, processors=3, held=4096, declared_processors=2)
    for said in every_reading(data):
        assert "buffer 3 (file offset" in said and "processor 2 filled it, but the log-file header says the trace " \
                                                   "has 2 processors (0 to 1): damaged" in said, said


@pytest.mark.parametrize("size, processors, message", [
    (0, 2, "the log-file header's BufferSize is 0, not a buffer size (72 bytes to 16 MB): damaged"),
    (32 << 20, 2, "the log-file header's BufferSize is 33554432, not a buffer size (72 bytes to 16 MB): damaged"),
    (4096, 0, "the log-file header's NumberOfProcessors is 0: damaged")])
def test_a_header_declaring_no_buffer_size_or_no_processors_is_refused(size, processors, message):
    data = expanding_bytes(SMALLEST_EVENT, 1, processors=1, held=4096, declared_size=max(size, 4096),
                           declared_processors=processors or None)
    header = bytearray(data)
    at = etlfile.BUFFER_HEADER + etlfile.SYSTEM_HEADER.length
    header[at:at + 4] = size.to_bytes(4, "little")
    header[at + 12:at + 16] = processors.to_bytes(4, "little")
    for said in every_reading(bytes(header)):
        assert said.endswith(message), said


def test_time_order_holds_at_most_256_mib_of_buffers_and_the_summary_reads_on():
    """65,536 processors with a tiny buffer each: their places in the merge alone (4 KB each) pass
    HELD_BYTES, so the events (and the tables) are refused; --summary reads the file in file order."""
    data = expanding_bytes(SMALLEST_EVENT, 1 << 16, processors=1 << 16, held=72 + 16 * 8)
    summary, events = every_reading(data)
    assert summary["events"] == (1 << 16) * 8 + 1
    assert "its 65536 processors' largest buffers add up to 281,546,552 bytes (decompressed, with 4 KB a " \
           "processor), more than the 256 MiB held at once" in events and events.endswith("reads it in file order")


def test_buffers_too_large_for_columns_are_read_event_by_event_with_the_same_tables(tmp_path, monkeypatch):
    """Over COLUMN_HELD_BYTES (columns cost up to 3 times their buffers) the tables come from the
    event-by-event reader: the same bytes, and no restart after writing (nothing was written)."""
    data = hard_trace(21, n=200, processors=3)
    exact = tables(data, tmp_path, False)
    monkeypatch.setattr(etlcolumns, "COLUMN_HELD_BYTES", 3 * 2048)
    restarts = []
    real = TraceTables.restart
    monkeypatch.setattr(TraceTables, "restart", lambda self: (restarts.append(1), real(self)))
    assert tables(data, tmp_path, True) == exact and "error" not in exact and restarts == [1]


# The files, as a user would hand them to the command, under a 1 GiB address space: one
# line and exit 2, or a correct reading; never a MemoryError.
HOSTILE = {
    "11 KB that expand to 16 MB on each of 64 processors": (
        lambda: expanding_bytes(SMALLEST_EVENT, 64, processors=64), [],
        "more than the 256 MiB held at once to put its events in time order"),
    "12 KB of 40 compressed buffers, through --format csv": (
        lambda: expanding_bytes(SMALLEST_EVENT, 40, processors=1, declared_size=64 << 10), ["--format", "csv"],
        "it decompresses to 16,777,208 bytes (SavedOffset), more than the 65,536 bytes"),
    "4 MB buffers of DxgKrnl events on 2 processors, through --format csv": (
        lambda: expanding_bytes(allocation_event(), 2, processors=2, held=4 * MB), ["--format", "csv"],
        None),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_files_under_a_memory_limit_give_one_line_or_a_reading(case, tmp_path):
    from tests.edges.commandline import GB, cli, good, one_line

    make, args, message = HOSTILE[case]
    data = make()
    path = tmp_path / "hostile.etl"
    path.write_bytes(data)
    if args:
        args = [*args, "-o", tmp_path / "tables"]
    p = cli("etw", path, *args, address_space=GB, timeout=300)
    if message is None:
        good(p)
        per_buffer = (4 * MB - etlfile.BUFFER_HEADER) // len(allocation_event())
        assert (tmp_path / "tables" / "allocations.csv").read_bytes().count(b"\n") == 2 * per_buffer + 1
    else:
        assert message in one_line(p)


class Pipe:
    """A stream without a size or a seek: ``data``, then ``tail`` over and over if given (endless)."""

    def __init__(self, data: bytes, tail: bytes = b""):
        self.data, self.tail, self.at, self.given = data, tail, 0, 0

    def read(self, n: int = -1) -> bytes:
        if self.at == len(self.data) and self.tail:
            self.data, self.at = self.tail * (1 + (1 << 20) // len(self.tail)), 0
        part = self.data[self.at:] if n < 0 else self.data[self.at:self.at + n]
        self.at += len(part)
        self.given += len(part)
        return part


def test_an_endless_pipe_stops_at_256_mib_and_its_spool_is_closed(monkeypatch):
    import tempfile

    made, real = [], tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda: made.append(real()) or made[-1])
    data = hard_trace(3, n=40, processors=1)
    assert [e.number for e in etw.read(Pipe(data))] == [e.number for e in etw.read(data)]
    assert len(made) == 1 and made[0].closed
    endless = Pipe(data, data[4096:])
    with pytest.raises(EtwInputError, match="has no size and gave more than 256 MiB, the limit for pipes, devices "
                                            "and standard input; save it to a file"):
        list(etw.read(endless))
    assert len(made) == 2 and made[1].closed and endless.given <= (256 << 20) + (1 << 20)
    with pytest.raises(EtwInputError, match="gave more than 256 MiB"):  # read in file order: no spool
        etw.summary(Pipe(data, data[4096:]))
    assert len(made) == 2


def test_json_lines_hold_no_live_allocations():
    """A sibling: --json kept every live allocation (about 2 KB each: 400 MB for 200,000) though only
    the text form lists them; it now keeps the segments alone."""
    from d3dkmddi_py.etw.outputs import command

    tracker = Tracker(("x64", "WDDM3_2"))
    out = io.StringIO()
    command._json(etw.read(hard_trace(5, n=300)), tracker, out)
    assert out.getvalue().count("\n") > 250 and tracker.adapters
    assert all(a.segments and not a.allocations for a in tracker.adapters.values())


def test_a_summary_counts_at_most_65536_provider_and_id_pairs():
    """A sibling: --summary kept a count per distinct (provider, event id), so a file of distinct
    GUIDs or ids held about twice its size; past MOST_KEYS it is refused, the same by both counters."""
    from d3dkmddi_py.etw.readers import etlcount, etlreader

    providers = ("22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e717")
    events = [etl_build.EtlEvent(providers[i >> 16], i & 0xFFFF, 0, b"", ticks=i, processor=0)
              for i in range(etlcount.MOST_KEYS - 1)]  # with the log-file header, exactly the most
    fits = etl_build.etl_bytes(events, processors=1, buffer_size=1 << 16)
    assert etw.summary(fits)["events"] == etlcount.MOST_KEYS
    more = etl_build.etl_bytes(events + [etl_build.EtlEvent(providers[1], 0, 0, b"")], processors=1,
                               buffer_size=1 << 16)
    for columns in (True, False):
        with pytest.raises(EtwInputError, match="more than 65,536 distinct \\(provider, event id\\) pairs"):
            etlreader.summary(io.BytesIO(more), "trace.etl", columns=columns)


def test_out_of_memory_below_the_stated_bound_is_one_line(tmp_path, monkeypatch):
    """Under a limit below what the run needs (150 MB of address space for 8 MB of DxgKrnl buffers as CSV), the
    command says so in one line and exits 2, and no table is left behind: it was a MemoryError traceback.
    OpenBLAS's threads each reserve memory at NumPy's import; one thread keeps that out of the way."""
    from tests.edges.commandline import cli, one_line

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    make, args, _message = HOSTILE["4 MB buffers of DxgKrnl events on 2 processors, through --format csv"]
    path = tmp_path / "big.etl"
    path.write_bytes(make())
    p = cli("etw", path, *args, "-o", tmp_path / "tables", address_space=150 * MB, timeout=300)
    assert "error: out of memory" in one_line(p)
    assert not (tmp_path / "tables").exists()  # no file, and not the folder it made


def test_tables_read_event_by_event_when_numpy_cannot_be_imported(tmp_path, monkeypatch):
    """NumPy that fails to import (as under a memory limit) sends the tables to the event-by-event reader; they
    were given None for NumPy and failed with an AttributeError."""
    from d3dkmddi_py.etw.outputs import tables as trace_tables

    data = expanding_bytes(allocation_event(), 1, processors=1, held=64 << 10)
    with_numpy = tables(data, tmp_path / "numpy", columns=True)
    monkeypatch.setattr(trace_tables, "numpy_module", lambda: None)
    without = tables(data, tmp_path / "none", columns=True)
    assert "error" not in without and without == with_numpy
