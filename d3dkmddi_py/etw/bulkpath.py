"""Millions of allocation events: packed into DXGK_ALLOCATIONINFO records, decoded with ``decode_array``
and checked with ``column_findings`` (the same path as a blob of records), a chunk at a time."""
from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import sys

from .. import bulk
from ..errors import EtwInputError
from ..outfile import open_output
from .events import json_value
from .mapping import ALLOCATION_TYPE
from .model import Tracker
from .schema import ADAPTER_ALLOCATION, ALLOCATION_FIELDS, BOOLEAN, POINTER, UINT64

CHUNK_EVENTS = 65536


def allocation_columns(events, *, target=None):
    """(Columns of DXGK_ALLOCATIONINFO, the events in row order) for the Start/DCStart events given."""
    tracker = Tracker(target)
    rows = [e for e in events if e.event == ADAPTER_ALLOCATION and e.opcode != "Stop"]
    data = b"".join(tracker.packer.allocation(e.fields, e.where) for e in rows)
    return bulk.decode_array(ALLOCATION_TYPE, data, target=tracker.target, count=len(rows)), rows


class ColumnWriter:
    """Writes one row per AdapterAllocation event; a chunk is checked when it fills or the segments change."""

    def __init__(self, fmt: str, tracker: Tracker, output, stdout, *, inputs=(), chunk: int = CHUNK_EVENTS):
        self.fmt, self.tracker, self.output, self.stdout, self.inputs = fmt, tracker, output, stdout, inputs
        self.chunk = chunk
        self.pending = []  # (event, data)
        self.errors = 0
        self.rows = 0
        self._stack = contextlib.ExitStack()
        self._sink = None
        self._csv = None
        self._parquet = None
        self.names = [n for n, _t in ALLOCATION_FIELDS]
        self.types = dict(ALLOCATION_FIELDS)

    def __enter__(self):
        if self.fmt == "parquet":
            if importlib.util.find_spec("pyarrow") is None:
                raise EtwInputError("--format parquet needs pyarrow, which is not installed; pip install pyarrow "
                                    "(or use --format csv or jsonl)")
        binary = self.fmt == "parquet"
        if self.output in (None, "-"):
            sink = self.stdout
            if binary:
                if hasattr(sink, "isatty") and sink.isatty():
                    raise EtwInputError("--format parquet is binary; give --output PATH or redirect standard output")
                sink.flush()
                sink = getattr(sink, "buffer", sink)
            self._sink = sink
        else:
            self._sink = self._stack.enter_context(open_output(self.output, binary=binary, inputs=self.inputs))
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.flush()
                if self._parquet is not None:
                    self._parquet.close()
            except BaseException:
                if not self._stack.__exit__(*sys.exc_info()):  # open_output discards its temporary file
                    raise
                return False
        elif self._parquet is not None:  # closed now, so its destructor has nothing left to report
            try:
                self._parquet.close()
            except BaseException:  # noqa: BLE001 - the first failure is the one that propagates
                pass
        return self._stack.__exit__(exc_type, exc, tb)

    def add(self, event) -> None:
        if event.event != ADAPTER_ALLOCATION:
            self.flush()  # later allocations are checked against the new segments
            self.tracker.apply(event)
            return
        data = self.tracker.apply(event)
        self.pending.append((event, data))
        if len(self.pending) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self._write([e for e, _d in pending], self.tracker.column_rows(pending))

    def _write(self, events, found) -> None:
        for fs in found:
            self.errors += sum(1 for _r, sev, _f in fs if sev == "error")
        self.rows += len(events)
        if self.fmt == "jsonl":
            for e, fs in zip(events, found):
                obj = {"number": e.number, "opcode": e.opcode, "adapter": f"0x{e.adapter:x}"}
                obj.update({n: json_value(n, self.types[n], e.fields[n]) for n in self.names})
                obj["findings"] = [{"rule": r, "severity": s, "field": f} for r, s, f in fs]
                self._sink.write(json.dumps(obj) + "\n")
        elif self.fmt == "csv":
            if self._csv is None:
                self._csv = csv.writer(self._sink, lineterminator="\n")
                self._csv.writerow(["number", "opcode", "adapter"] + self.names + ["errors", "warnings", "findings"])
            for e, fs in zip(events, found):
                self._csv.writerow([e.number, e.opcode, f"0x{e.adapter:x}"] + [self._csv_value(n, e.fields[n])
                                                                                for n in self.names]
                                   + [sum(s == "error" for _r, s, _f in fs), sum(s == "warning" for _r, s, _f in fs),
                                      ";".join(f"{r}@{f}" for r, _s, f in fs)])
        else:
            self._write_parquet(events, found)

    def _csv_value(self, name, value):
        t = self.types[name]
        if isinstance(value, bool):
            return int(value)
        if t in (POINTER, UINT64) and isinstance(value, int):
            return f"0x{value:x}"
        return value if isinstance(value, str) else int(value)

    def _write_parquet(self, events, found) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        kinds = {BOOLEAN: pa.bool_(), POINTER: pa.uint64(), UINT64: pa.uint64()}
        fields = [pa.field("number", pa.uint64()), pa.field("opcode", pa.string()), pa.field("adapter", pa.uint64())]
        fields += [pa.field(n, kinds.get(self.types[n], pa.uint32())) for n in self.names]
        fields += [pa.field("FormatName", pa.string()), pa.field("findings", pa.string())]
        schema = pa.schema(fields)
        cols = {"number": [e.number for e in events], "opcode": [e.opcode for e in events],
                "adapter": [e.adapter for e in events]}
        for n in self.names:
            cols[n] = [None if isinstance(e.fields[n], str) else
                       (bool(e.fields[n]) if self.types[n] == BOOLEAN else int(e.fields[n])) for e in events]
        cols["FormatName"] = [e.fields["Format"] if isinstance(e.fields["Format"], str) else None for e in events]
        cols["findings"] = [";".join(f"{r}@{f}" for r, _s, f in fs) for fs in found]
        table = pa.table(cols, schema=schema)
        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self._sink, schema)
        self._parquet.write_table(table)
