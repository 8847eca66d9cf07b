"""A trace as three tables in a directory: ``segments``, ``allocations`` and ``findings`` (CSV, JSON
lines or Parquet; the same columns in every format).

One row per ReportSegment and per AdapterAllocation event, in trace order: the event's number, time,
opcode, process and adapter, then (allocations) its handles and the event fields no mirror member
holds, then the mirror structure's leaves as ``decode --format`` names them (PreferredSegment
decoded, Flags by bit; members no event field fills are left out, they would only read 0), then
the event's error and warning counts.  ``findings``: one row per finding, keyed by event number.
Allocations are decoded and checked column-wise a chunk at a time, each against the segments
reported before it; each file appears complete or not at all (``outfile.open_output``).
"""
from __future__ import annotations

import contextlib
import os
import sys

from .. import bulk, render
from .._numpy import numpy_module
from ..bulk.table import Table, columns_table, writer
from ..errors import EtwInputError
from ..outfile import check_output, make_output_folder, open_output, safe_name
from . import etlcolumns
from .mapping import ALLOCATION_TYPE, MAPPING, SEGMENT, USAGE_TYPE
from .model import Tracker
from .schema import ADAPTER_ALLOCATION, ALLOCATION_FIELDS, EXTRA_FIELDS, KINDS, POINTER, REPORT_SEGMENT, \
    TEMPLATES, UINT64

CHUNK_EVENTS = 65536
TABLES = ("segments", "allocations", "findings")
HANDLES = ("hDxgGlobalAlloc", "hVidMmGlobalAlloc", "hDxgSharedResource")
# AdapterAllocation fields no mirror member holds (besides the adapter and the handles), kept as columns;
# AllocationFlags is the event's whole Flags word (its kernel bits 20-31 have no mirror bit).
_ALLOCATION_TYPES = {**dict(ALLOCATION_FIELDS), **EXTRA_FIELDS}
EVENT_ONLY = tuple(m.field for m in MAPPING if m.event == ADAPTER_ALLOCATION and m.mirror_type is None
                   and m.field not in HANDLES + ("pDxgAdapter",))
FINDING_COLUMNS = (("number", "int"), ("rule", "text"), ("severity", "text"), ("field", "text"), ("message", "text"))


def _kind(field: str) -> str:
    """How an allocation event's field is written: a version's extra field may be missing (opt), pointers
    and 64-bit words are hex, the rest (a Boolean too) numbers."""
    in_type = _ALLOCATION_TYPES[field]
    return "opt" if field in EXTRA_FIELDS else "hex" if in_type in (POINTER, UINT64) else "int"


# (column, event field, kind) after the head: the handles, the event's whole Flags word, then the fields no
# mirror member holds
_EVENT_COLUMNS = tuple((name, name, _kind(name)) for name in HANDLES) + (("AllocationFlags", "Flags", "hex"),) + \
    tuple((name, name, _kind(name)) for name in EVENT_ONLY)


class TraceTables:
    """Rows of a trace's events, written into ``directory`` as ``fmt``; use as a context manager."""

    def __init__(self, fmt: str, directory, tracker: Tracker, *, inputs=(), progress=None,
                 chunk: int = CHUNK_EVENTS, sinks: dict | None = None):
        """``sinks``: table name -> an object with ``write(Table)`` and ``close()``, in place of the
        files (``directory`` and ``fmt`` are then not used)."""
        self.fmt, self.tracker, self.inputs, self.progress, self.chunk = fmt, tracker, inputs, progress, chunk
        self.sinks = sinks
        self.directory = os.fspath(directory) if directory is not None else None
        self.counts = dict.fromkeys(TABLES, 0)
        self.errors = 0
        self.events = 0
        self._pending: list = []  # (event, allocation bytes, usage bytes)
        self._segments: list = []  # (event, descriptor bytes, findings)
        self._stack = contextlib.ExitStack()
        self._writers: dict = {}
        self._started: set = set()  # tables that have had a chunk
        pk = tracker.packer
        unknown = {ALLOCATION_TYPE: set(pk.unknown_members(ALLOCATION_TYPE)),
                   USAGE_TYPE: set(pk.unknown_members(USAGE_TYPE)), SEGMENT: set(pk.unknown_members(SEGMENT))}
        self._types = {ALLOCATION_TYPE: ALLOCATION_TYPE, USAGE_TYPE: USAGE_TYPE, SEGMENT: pk.segment_type}
        self._paths = {kind: [leaf.path for leaf in pk.classes[kind]._leaves_
                              if leaf.path.split(".")[0].split("[")[0] not in unknown[kind]]
                       for kind in self._types}

    # ---- files
    def __enter__(self):
        if self.sinks is not None:
            self._writers = dict(self.sinks)
            return self
        make_output_folder(self.directory)
        binary = self.fmt == "parquet"
        paths = [os.path.join(self.directory, f"{name}.{self.fmt}") for name in TABLES]
        for path in paths:  # every table is checked before the first is begun
            check_output(path, inputs=self.inputs, binary=binary)
        try:
            for name, path in zip(TABLES, paths):
                out = self._stack.enter_context(open_output(path, binary=binary, inputs=self.inputs))
                self._writers[name] = writer(self.fmt, out)
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.flush()
                self._empty_tables()
            self._close_writers(quiet=exc_type is not None)
        except BaseException:
            if not self._stack.__exit__(*sys.exc_info()):  # every file is discarded
                raise
            return False
        return self._stack.__exit__(exc_type, exc, tb)

    def _close_writers(self, *, quiet: bool) -> None:
        """Close every writer (a Parquet file's footer); ``quiet``: the files are being discarded, so
        a failure to close one is not the error to report."""
        for w in self._writers.values():
            try:
                w.close()
            except Exception:  # noqa: BLE001 - only when quiet: the first failure is the one reported
                if not quiet:
                    raise

    def _empty_tables(self) -> None:
        """A table without rows still gets its columns (a CSV header, a Parquet schema)."""
        if "segments" not in self._started:
            self._write_segments([])
        if "allocations" not in self._started:
            self._allocation_rows(_rows_of_events([]))
        if "findings" not in self._started:
            self._write_findings([], [])

    # ---- events
    def add(self, event) -> None:
        self.events += 1
        if event.event == ADAPTER_ALLOCATION:
            pk = self.tracker.packer
            self._pending.append((event, pk.allocation(event.fields, event.where), pk.usage(event.fields, event.where)))
            if len(self._pending) >= self.chunk:
                self.flush()
            return
        self.flush()  # later allocations are checked against the new segments
        data = self.tracker.apply(event)
        self._segments.append((event, data, self.tracker.findings_of_segment(event)))
        if len(self._segments) >= self.chunk:
            self.flush()

    def read(self, reader, *, columns: bool = True) -> None:
        """Every event of a TraceReader; an .etl file column-wise, and where the batches cannot go on
        exactly, the reader starts again with Events (after RESTART) and so do the tables.
        ``columns=False``: Events only (the column-wise path's oracle in the tests)."""
        reader.columns = columns and numpy_module() is not None  # NumPy that cannot be imported: event by event
        items = iter(reader)
        item = next(items, None)
        while item is not None:
            try:
                if item is etlcolumns.RESTART:
                    self.restart()
                elif isinstance(item, etlcolumns.DxgBatch):
                    self.add_batch(item, reader.etl_header, reader.name)
                else:
                    self.add(item)
            except etlcolumns.NeedExact as exc:
                item = items.throw(exc)  # the reader answers RESTART, then gives Events
                continue
            except EtwInputError as exc:
                if not isinstance(item, etlcolumns.DxgBatch):
                    raise
                item = items.throw(etlcolumns.NeedExact(str(exc)))  # the event-by-event reader names it
                continue
            item = next(items, None)

    def add_batch(self, batch, header, source: str) -> None:
        """An ``etlcolumns.DxgBatch``: its allocations column-wise, its (few) segments as Events.
        Raises etlcolumns.NeedExact where only the Event path says it exactly (a value that does not fit
        its mirror member): the caller starts again from the Events."""
        np = numpy_module()
        segments = np.flatnonzero(batch.ids == REPORT_SEGMENT_ID).tolist()
        start = 0
        for row in segments + [len(batch)]:
            if row > start:
                self.flush()
            for part in range(start, row, self.chunk):  # a chunk at a time: a batch can hold a buffer's events
                stop = min(part + self.chunk, row)
                self._allocation_rows(_rows_of_batch(np, self.tracker.packer, batch, part, stop, header))
                self.events += stop - part
            if row < len(batch):
                self.add(batch.event(row, header.utc(int(batch.times[row])), source))
            start = row + 1
        if self.progress is not None:
            self.progress.update(self.events)

    def restart(self) -> None:
        """Discard everything written so far (the files too), to start again from the first event."""
        self._close_writers(quiet=True)
        self._stack.__exit__(etlcolumns.NeedExact, etlcolumns.NeedExact("restart"), None)  # temporary files go
        if self.sinks is not None:
            for sink in self.sinks.values():
                sink.restart()
        self.__init__(self.fmt, self.directory, Tracker(self.tracker.target), inputs=self.inputs,
                      progress=self.progress, chunk=self.chunk, sinks=self.sinks)
        self.__enter__()

    def flush(self) -> None:
        if self._segments:
            segments, self._segments = self._segments, []
            self._write_segments(segments)
        if self._pending:
            pending, self._pending = self._pending, []
            self._allocation_rows(_rows_of_events(pending))
        if self.progress is not None:
            self.progress.update(self.events)

    def _write_segments(self, items) -> None:
        events = [e for e, _d, _f in items]
        names, kinds, columns = list(_HEAD_NAMES), list(_HEAD_KINDS), [
            [e.number for e in events], [e.time for e in events], [e.opcode for e in events],
            [e.process_id for e in events], [e.adapter for e in events]]
        names += ["ulSegmentId", "MemorySegmentGroup"]
        kinds += ["int", "int"]
        columns += [[e.segment_id for e in events], [int(e.fields["MemorySegmentGroup"]) for e in events]]
        data = b"".join(d for _e, d, _f in items)  # the bytes tracker.apply packed
        decoded = bulk.decode_array(self._types[SEGMENT], data, target=self.tracker.target)
        self._write("segments", names, kinds, columns, decoded, SEGMENT, [f for _e, _d, f in items],
                    [e.number for e in events])

    def _allocation_rows(self, rows) -> None:
        found = self.tracker.findings_of_rows(rows.adapters, rows.checked, rows.data)
        names = list(_HEAD_NAMES) + [name for name, _field, _kind in _EVENT_COLUMNS]
        kinds = list(_HEAD_KINDS) + [kind for _name, _field, kind in _EVENT_COLUMNS]
        columns = [_list(rows.numbers), rows.times, rows.opcodes, _list(rows.pids), rows.adapters]
        columns += [_list(rows.fields[field]) for _name, field, _kind in _EVENT_COLUMNS]  # typed by kind
        target = self.tracker.target
        decoded = bulk.decode_array(ALLOCATION_TYPE, rows.data, target=target)
        usage = bulk.decode_array(USAGE_TYPE, rows.usage, target=target)
        extra = columns_table(usage, "UsageHint.", self._paths[USAGE_TYPE])
        self._write("allocations", names, kinds, columns, decoded, ALLOCATION_TYPE, found, rows.numbers, extra)

    def _write(self, table, names, kinds, columns, decoded, kind, found, numbers, extra=None) -> None:
        leaves = columns_table(decoded, "", self._paths[kind])
        masks = [None] * len(names) + leaves.masks
        names, kinds, columns = names + leaves.names, kinds + leaves.kinds, columns + leaves.columns
        if extra is not None:
            names, kinds, columns = names + extra.names, kinds + extra.kinds, columns + extra.columns
            masks += extra.masks
        errors, warnings = [0] * len(found), [0] * len(found)
        for i, fs in enumerate(found):
            if fs:
                errors[i], warnings[i] = render.count_severity(fs, "error"), render.count_severity(fs, "warning")
        self._writers[table].write(Table(names + ["errors", "warnings"], kinds + ["int", "int"],
                                         columns + [errors, warnings], masks + [None, None]))
        self.counts[table] += len(found)
        self.errors += sum(errors)
        self._started.add(table)
        if any(found):
            numbers = numbers.tolist() if hasattr(numbers, "tolist") else numbers
            self._write_findings([n for n, fs in zip(numbers, found) for _f in fs], [f for fs in found for f in fs])

    def _write_findings(self, numbers: list, findings: list) -> None:
        cells = [render.finding_json(f) for f in findings]
        self._writers["findings"].write(Table(
            [n for n, _k in FINDING_COLUMNS], [k for _n, k in FINDING_COLUMNS],
            [numbers, [c["rule_id"] for c in cells], [c["severity"] for c in cells], [c["field"] for c in cells],
             [c["message"] for c in cells]]))
        self._started.add("findings")
        self.counts["findings"] += len(numbers)

    def message(self) -> str:
        s, a, f = (self.counts[t] for t in TABLES)
        return (f"wrote {s:,} segment{'s' if s != 1 else ''}, {a:,} allocation{'s' if a != 1 else ''}, "
                f"{f:,} finding{'s' if f != 1 else ''} to {safe_name(self.directory)}")


_HEAD_NAMES = ("number", "time", "opcode", "process", "adapter")
_HEAD_KINDS = ("int", "text", "text", "opt", "hex")
_ROW_FIELDS = tuple(field for _name, field, _kind in _EVENT_COLUMNS)
REPORT_SEGMENT_ID = next(k for k, kind in KINDS.items() if kind.event == REPORT_SEGMENT)
_OPCODES = {k: kind.opcode for k, kind in KINDS.items()}


def _list(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else values


class _Rows:
    """AdapterAllocation events as columns: what the allocations table is written from."""

    __slots__ = ("numbers", "times", "opcodes", "pids", "adapters", "checked", "fields", "data", "usage")


def _rows_of_events(items) -> _Rows:
    """(Event, allocation bytes, usage bytes) items as rows."""
    rows = _Rows()
    events = [e for e, _d, _u in items]
    rows.numbers, rows.times, rows.opcodes = [e.number for e in events], [e.time for e in events], \
        [e.opcode for e in events]
    rows.pids, rows.adapters = [e.process_id for e in events], [e.adapter for e in events]
    rows.checked = [e.opcode != "Stop" for e in events]
    rows.fields = {name: [int(e.fields[name]) if name in e.fields else None for e in events]  # None: not in
                   for name in _ROW_FIELDS}  # this version of the event
    rows.data, rows.usage = b"".join(d for _e, d, _u in items), b"".join(u for _e, _d, u in items)
    return rows


def _rows_of_batch(np, pk, batch, start: int, stop: int, header) -> _Rows:
    """Rows ``start:stop`` of an etlcolumns.DxgBatch (AdapterAllocation events only)."""
    rows = _Rows()
    ids = batch.ids[start:stop]
    rows.numbers, rows.times = batch.numbers[start:stop], header.utc_texts(np, batch.times[start:stop])
    rows.opcodes = [_OPCODES[i] for i in ids.tolist()]
    rows.pids, rows.adapters = batch.pids[start:stop], batch.column("pDxgAdapter")[start:stop].tolist()
    rows.checked = [o != "Stop" for o in rows.opcodes]
    columns = {name: batch.column(name)[start:stop] for name in etlcolumns.FIELD_NAMES}
    rows.fields = {name: columns[name] for name in _ROW_FIELDS}
    versions = batch.versions[start:stop]
    for name in EXTRA_FIELDS:  # only in the versions whose template has it
        has = np.isin(versions, [v for v, fields in TEMPLATES[ADAPTER_ALLOCATION].items() if name in dict(fields)])
        values = columns[name].tolist()
        rows.fields[name] = values if has.all() else [None] * len(values) if not has.any() else \
            [v if h else None for v, h in zip(values, has.tolist())]
    count = stop - start
    rows.data = pk.pack_columns(np, ALLOCATION_TYPE, columns, count)
    rows.usage = pk.pack_columns(np, USAGE_TYPE, columns, count)
    if rows.data is None or rows.usage is None:
        raise etlcolumns.NeedExact("a value that does not fit its mirror member")
    return rows


def allocation_columns(events, *, target=None):
    """(Columns of DXGK_ALLOCATIONINFO, the events in row order) for the Start/DCStart events given."""
    tracker = Tracker(target)
    rows = [e for e in events if e.event == ADAPTER_ALLOCATION and e.opcode != "Stop"]
    data = b"".join(tracker.packer.allocation(e.fields, e.where) for e in rows)
    return bulk.decode_array(ALLOCATION_TYPE, data, target=tracker.target), rows
