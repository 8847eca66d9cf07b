"""A trace as tables in a directory, one per event entry's ``TableSpec`` (``segments``, ``allocations``,
``residency``, ...), one per event kind no entry reads that the trace holds (named by its symbol:
``PagingOpTransfer``: ``number``, ``time``, ``ms``, ``process``, then every field of its template, typed, then
``extra_bytes``), ``undecoded`` for events no template places, and ``findings`` (CSV, JSON lines or Parquet; the
same columns in every format).

One row per event, in trace order: the event's number, time, opcode, process and adapter, then the
columns its entry declares, then (for an event that fills a mirror structure) the structure's leaves as
``decode --format`` names them (PreferredSegment decoded, Flags by bit; members no event field fills
are left out, they would only read 0), then the event's error and warning counts.  ``findings``: one
row per finding, keyed by event number.  Batched events (allocations) are decoded and checked
column-wise a chunk at a time, each against the segments reported before it; each file appears
complete or not at all (``outfile.open_output``), at most ``OPEN_TABLES`` of them open at once (the least recently
written parked, whatever the kinds a trace holds).  Every cell of an event's field is made by ``registry.cells``.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
from itertools import chain

from ... import bulk, render
from ..._numpy import numpy_module
from ...bulk.table import Table, columns_table, writer
from ...errors import EtwInputError, integer_argument
from ...outfile import check_output, make_output_folder, open_output, remove_made_folders, safe_name
from ...wording import plural
from ..readers import etlcolumns
from ..model.registry import ENTRIES, ENTRY_OF, OPTIONAL, TEMPLATES
from ..model.mapping import ALLOCATION_TYPE, SEGMENT
from ..model.tracker import Tracker
from ..model.registry import HEAD, MIRROR_PREFIX, cells, field_kind, layout_of, versioned_symbol
from ..model.times import filetime_ns, milliseconds, time_ns

CHUNK_EVENTS = 65536
OPEN_TABLES = 16  # table files open at once: past them the least recently written is parked (``Parkable``)
SHORT_RUN = 64  # batched rows of a stretch (between barriers, within a chunk) read as Events, not as columns


def table_names() -> tuple:
    """The tables every trace gets: each entry's (in the catalog's order, once when entries share one), the tables of
    the state at the end the entries declare, then findings.  A trace holding events no entry reads also gets a
    table per kind of them (named by its symbol) and, for events no template places, ``undecoded``."""
    return tuple(dict.fromkeys(e.table.name for e in ENTRIES.values())) + \
        tuple(t.name for e in ENTRIES.values() for t in e.state_tables) + ("findings",)


UNDECODED = "undecoded"
# the head of a table of events no entry reads, and what follows their fields
KIND_HEAD = (("number", "int"), ("time", "time"), ("ms", "float"), ("process", "opt"))
COUNTS = (("errors", "int"), ("warnings", "int"))  # an event's findings by severity, last in every table of events
UNDECODED_COLUMNS = KIND_HEAD + (("id", "int"), ("version", "int"), ("symbol", "text"), ("why", "text"),
                                 ("payload", "text"), ("data", "text")) + COUNTS


def _kind_fields(event_id: int, version: int) -> tuple:
    """(name, kind, element) of each template field's column in the table of an event no entry reads, of the version
    the event has: a kind that holds None (a short payload leaves a field empty), a counted array text (``element``:
    the kind of one of its values, else None)."""
    return tuple((f.name, "text", field_kind(f.in_type)) if f.count is not None else
                 (f.name, field_kind(f.in_type, True), None) for f in layout_of(event_id, version))


def _kind_columns(event_id: int, version: int) -> tuple:
    """(name, kind) of each column of the table of an event no entry reads: the head, each template field, then
    extra_bytes, errors and warnings."""
    return KIND_HEAD + tuple((n, k) for n, k, _e in _kind_fields(event_id, version)) + (("extra_bytes", "text"),) + \
        COUNTS


def kind_table(event) -> str:
    """The table of an event no entry reads, or of an entry's event it could not apply: its symbol's, for a version
    the manifest lacks (an entry's ``Newer``) the symbol that version has (``_V3``), each version's columns its own."""
    kind = event.kind
    return kind.symbol if event.version == kind.version else versioned_symbol(kind.symbol, event.version)


def __getattr__(name):  # TABLES follows the registry
    if name == "TABLES":
        return table_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_UNSET = object()


def adapter_of(event, applied):
    """The adapter an event names, or the one its state change found (a placement's allocation's)."""
    pointer = event.adapter
    return pointer if pointer is not None else getattr(applied, "adapter", None)


class TraceTables:
    """Rows of a trace's events, written into ``directory`` as ``fmt``; use as a context manager."""

    def __init__(self, fmt: str, directory, tracker: Tracker, *, inputs=(), progress=None,
                 chunk: int = CHUNK_EVENTS, sinks: dict | None = None, open_tables: int = OPEN_TABLES):
        """``sinks``: table name -> an object with ``write(Table)`` and ``close()``, in place of the
        files (``directory`` and ``fmt`` are then not used); ``open_tables``: files open at once."""
        self.fmt, self.tracker, self.inputs, self.progress, self.chunk = fmt, tracker, inputs, progress, chunk
        self.open_tables = integer_argument(open_tables, "TraceTables: open_tables", 1)
        tracker.entries = False  # the rows hold each event: no live allocation is kept whole
        self.sinks = sinks
        # a sink's ``columns``: the names of the columns it reads (None or none said: all); cells of other columns
        # are not made, and a table whose sink reads none is not made at all
        self.reads = {name: getattr(sink, "columns", None) for name, sink in (sinks or {}).items()}
        self.directory = os.fspath(directory) if directory is not None else None
        self.names = table_names()
        self.counts = dict.fromkeys(self.names, 0)
        self.errors = 0
        self.events = 0
        self._pending: dict = {}  # batched event -> [(event, its record's bytes or what apply returned)] not written
        self._reports: dict = {}  # event number -> the reports of an odd Event of a batched entry, for its row
        self._hold = False  # inside a stretch of a batch: its rows are written after it
        self._runs: dict = {}  # batched event -> [_Rows] of column-wise runs not yet written
        self._rows: dict = {}  # table -> [(entry, event, applied, findings, time in ns)] of the other events
        self._kinds: dict = {}  # table of events no entry reads (or undecoded) -> [(event, time in ns, reports)]
        self._buffered = 0  # events buffered since the last write
        self._stack = contextlib.ExitStack()
        self._writers: dict = {}
        self._open: dict = {}  # tables whose file is open, the least recently written first
        self._started: set = set()  # tables that have had a chunk
        self._source = None  # the TraceReader read, for the trace's start
        self._first = _UNSET  # the first event's time text, the start of events given without a reader
        self.start = _UNSET  # the trace's start, nanoseconds since 1970 UTC or None (``trace_start``)
        pk = tracker.packer
        self._types = {ALLOCATION_TYPE: ALLOCATION_TYPE, SEGMENT: pk.segment_type}
        self._paths = {}
        for kind in pk.classes:
            unknown = set(pk.unknown_members(kind))
            self._types.setdefault(kind, kind)
            self._paths[kind] = [leaf.path for leaf in pk.classes[kind]._leaves_
                                 if leaf.path.split(".")[0].split("[")[0] not in unknown]

    # ---- files
    def __enter__(self):
        if self.sinks is not None:
            self._writers = dict(self.sinks)
            return self
        made: list = []
        make_output_folder(self.directory, made)
        self._stack.push(_folders_gone_on_failure(made))
        binary = self.fmt == "parquet"
        paths = [os.path.join(self.directory, f"{name}.{self.fmt}") for name in self.names]
        for path in paths:  # every table is checked before the first is begun
            check_output(path, inputs=self.inputs, binary=binary)
        try:
            for name, path in zip(self.names, paths):
                self._open_table(name, path)
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.flush()
                self._state_tables()
                self._empty_tables()
            self._close_writers(quiet=exc_type is not None)
        except BaseException:
            if not self._stack.__exit__(*sys.exc_info()):  # every file is discarded
                raise
            return False
        return self._stack.__exit__(exc_type, exc, tb)

    def _close_writers(self, *, quiet: bool) -> None:
        """Close every writer (a Parquet file's footer), each parked after (one file open at a time); ``quiet``: the
        files are being discarded (a Parquet writer's spilled chunks too), so a failure to close one is not the
        error to report."""
        for w in self._writers.values():
            try:
                if quiet and hasattr(w, "discard"):
                    w.discard()
                w.close()
                if self.sinks is None:
                    w.park()
            except Exception:  # noqa: BLE001 - only when quiet: the first failure is the one reported
                if not quiet:
                    raise
        self._open.clear()

    def _open_table(self, name: str, path: str):
        """A table's file (written beside its name, renamed when complete) and its writer."""
        out = self._stack.enter_context(open_output(path, binary=self.fmt == "parquet", inputs=self.inputs,
                                                    parkable=True))
        found = self._writers[name] = writer(self.fmt, out, spill=self.directory)
        self._use(name)
        return found

    def _use(self, name: str):
        """The writer of a table about to be written: its file the most recently used, and the least recently used
        one parked (its descriptor closed; a Parquet writer's held rows in a temporary file) past ``open_tables``."""
        found = self._writers[name]
        if self.sinks is None:
            self._open.pop(name, None)
            self._open[name] = None
            if len(self._open) > self.open_tables:
                oldest = next(iter(self._open))
                del self._open[oldest]
                self._writers[oldest].park()
        return found

    def _state_tables(self) -> None:
        """The tables of the state the trace leaves at its end (live allocations, processes)."""
        start = self.trace_start()

        def when(time) -> tuple:
            ns = time if time is None or isinstance(time, int) else time_ns(time)
            return ns, milliseconds(ns, start)

        for entry in ENTRIES.values():
            for table in entry.state_tables:
                if self.reads.get(table.name) == frozenset():
                    continue
                rows = list(table.rows(self.tracker, when))
                columns = [list(c) for c in zip(*rows)] if rows else [[] for _c in table.columns]
                self._use(table.name).write(Table([n for n, _k in table.columns], [k for _n, k in table.columns],
                                                  columns))
                self.counts[table.name] += len(rows)

    def _empty_tables(self) -> None:
        """A table without rows still gets its columns (a CSV header, a Parquet schema)."""
        for entry in ENTRIES.values():
            if entry.table.name not in self._started:
                if entry.batched:
                    self._batched_rows(entry, _rows_of_events(entry, self.tracker, []))
                else:
                    self._write_rows(entry.table.name, [(entry, None, None, [], None)])
        if "findings" not in self._started:
            self._write_findings([], [])

    # ---- events
    def add(self, event, ns=_UNSET) -> None:
        """One event: applied now (later events read the state it leaves), its row buffered; the buffers are
        written before an event that changes what batched events are checked against (a barrier: a
        ReportSegment), and every ``chunk`` events.  ``ns``: its time as ``time_ns`` reads it, where the
        caller has it (the column-wise path: ``LogHeader.nanoseconds``)."""
        self.events += 1
        if self._first is _UNSET:
            self._first = event.time
        tracker = self.tracker
        entry = ENTRY_OF.get(event.kind.event_id) if tracker._applied(event) else None
        if entry is not None and entry.barrier:
            self.flush()
        if ns is _UNSET:
            ns = time_ns(event.time)
        applied = tracker._apply(event, ns)
        reports = tracker.odd.take(event)
        if entry is None:  # read, kept in the table of its kind (or undecoded), not applied
            odd = event.odd
            name = UNDECODED if odd is not None and odd.why else kind_table(event)
            if self.sinks is None or name in self.sinks:
                self._kinds.setdefault(name, []).append((event, ns, reports))
            elif reports:
                self._kinds.setdefault(None, []).append((event, None, reports))  # their findings only
        elif entry.batched:  # checked column-wise when written
            self._pending.setdefault(entry.event, []).append((event, applied))
            if reports:  # its row counts them, and the findings table has them with the row's own, as any row's
                self._reports[event.number] = reports
        else:
            self._rows.setdefault(entry.table.name, []).append(
                (entry, event, applied, reports + tracker._findings(event, applied), ns))
        self._buffered += 1
        if self._buffered >= self.chunk and not self._hold:
            self.flush()

    def read(self, reader, *, columns: bool = True) -> None:
        """Every event of a TraceReader; an .etl file column-wise, and where the batches cannot go on
        exactly, the reader starts again with Events (after RESTART) and so do the tables.
        ``columns=False``: Events only (the column-wise path's oracle in the tests)."""
        reader.columns = columns and numpy_module() is not None  # NumPy that cannot be imported: event by event
        self._source = reader
        with _old_objects_frozen():
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
        """An ``etlcolumns.DxgBatch``: the batched events (allocations) column-wise, every other row as an Event
        where it falls, written where ``add`` would write them (so both paths write the same chunks).
        Raises etlcolumns.NeedExact where only the Event path says it exactly (a value that does not fit
        its mirror member): the caller starts again from the Events."""
        np = numpy_module()
        barriers = np.flatnonzero(np.isin(batch.ids, [i for i, e in ENTRY_OF.items() if e.barrier]))
        start = 0
        for cut in barriers.tolist() + [len(batch)]:
            while start < cut:  # a stretch, cut where ``add`` would write the buffers
                stop = min(cut, start + self.chunk - self._buffered)
                self._stretch(np, batch, start, stop, header, source)
                if self._buffered >= self.chunk:
                    self.flush()
                start = stop
            if cut < len(batch):
                self.add(batch.event(cut, header.utc(int(batch.times[cut])), source))  # it flushes first
            start = cut + 1
        if self.progress is not None:
            self.progress.update(self.events)

    def _stretch(self, np, batch, start: int, stop: int, header, source: str) -> None:
        """Rows ``start:stop`` of a batch, no barrier among them and within one chunk: the batched rows as
        columns (checked when written, against the segments a barrier last changed), each other row an Event
        applied after the state the batched rows before it leave (a placement finds the allocations started
        before it)."""
        ids = batch.ids[start:stop]
        in_matrix = batch.in_matrix(np)[start:stop]  # a row read from its payload is an Event where it falls
        runs = _by_event(np, ids, in_matrix)
        if sum(len(rows) for _n, rows in runs) < SHORT_RUN:  # a few batched rows: as Events (columns cost more)
            for i in range(start, stop):
                self.add(batch.event(i, header.utc(int(batch.times[i])), source))
            return
        singles = np.flatnonzero(~(np.isin(ids, [i for i, e in ENTRY_OF.items() if e.batched]) & in_matrix))
        owner = np.full(stop - start, -2, dtype=np.int64)  # per row: the track that applies it, -1 an Event
        owner[singles] = -1
        tracks = []
        for event_name, rows in runs:
            entry = ENTRIES[event_name]
            part, advance = _rows_of_batch(np, entry, self.tracker, batch, start, stop, rows, header)
            self._run(entry, part)
            if advance is not None:
                owner[rows] = len(tracks)
                tracks.append((advance, part))
        batched = stop - start - len(singles)
        self.events += batched
        self._buffered += batched  # the stretch fits in the chunk: the tables are written after it, not in it
        raw = batch.times[start:stop][singles]
        times = _list(header.nanoseconds(np, raw))
        events = iter(batch.events((singles + start).tolist(), [header.utc(t) for t in raw.tolist()], source))
        times = iter(times)
        # every row in its order: a run of one track's rows applied at once, each Event where it falls, so each sees
        # the state of every row before it (a paging row finds the allocation started just before it)
        owner = owner[owner != -2]
        if len(owner):
            cuts = np.flatnonzero(owner[1:] != owner[:-1]) + 1
            firsts = np.concatenate(([0], cuts))
            self._hold = True
            try:
                for who, n in zip(owner[firsts].tolist(), np.diff(np.append(firsts, len(owner))).tolist()):
                    if who < 0:
                        for _ in range(n):
                            self.add(next(events), next(times))
                        continue
                    advance, part = tracks[who]
                    got = advance(n)
                    if got is not None:
                        part.results += got
            finally:
                self._hold = False

    def _run(self, entry, rows) -> None:
        """A run of a batched event's rows, after any of its Events buffered before it."""
        runs = self._runs.setdefault(entry.event, [])
        pending = self._pending.pop(entry.event, None)
        if pending:
            runs.append(_rows_of_events(entry, self.tracker, pending))
        runs.append(rows)

    def restart(self) -> None:
        """Discard everything written so far (the files too), to start again from the first event."""
        self._close_writers(quiet=True)
        self._stack.__exit__(etlcolumns.NeedExact, etlcolumns.NeedExact("restart"), None)  # temporary files go
        if self.sinks is not None:
            for sink in self.sinks.values():
                sink.restart()
        old, source = self.tracker, self._source
        self.__init__(self.fmt, self.directory, Tracker(old.target, series=old.series),
                      inputs=self.inputs, progress=self.progress, chunk=self.chunk, sinks=self.sinks)
        self._source = source
        self.__enter__()

    def flush(self) -> None:
        """Write what is buffered: each table's rows as one chunk, then their findings in event order."""
        found = []
        rows, self._rows = self._rows, {}
        for table, items in rows.items():
            found += self._write_rows(table, items)
        kinds, self._kinds = self._kinds, {}
        for table, items in kinds.items():
            found += self._write_kind(table, items)
        pending, self._pending = self._pending, {}
        runs, self._runs = self._runs, {}
        tables: dict = {}  # table -> (an entry of it, the runs of every entry that writes it, whether to sort them)
        for name in dict.fromkeys(list(runs) + list(pending)):
            entry = ENTRIES[name]
            parts = runs.get(name, [])
            sort = bool(parts) and name in pending  # an Event a stretch read among its runs comes after them here
            if name in pending:
                parts = parts + [_rows_of_events(entry, self.tracker, pending[name])]
            shared = tables.get(entry.table.name)  # one entry's runs come in event order; several entries' interleave
            if shared is not None:
                entry, parts, sort = shared[0], shared[1] + parts, True
            tables[entry.table.name] = (entry, parts, sort)
        for entry, parts, sort in tables.values():
            rows = _merged(parts)
            found += self._batched_rows(entry, _in_order(rows) if sort else rows)
        if found:
            found.sort(key=lambda pair: pair[0])  # stable: an event's findings keep their order
            self._write_findings([n for n, _f in found], [f for _n, f in found])
        self._buffered = 0
        if self.progress is not None:
            self.progress.update(self.events)

    def trace_start(self):
        """The trace's start (nanoseconds since 1970 UTC, or None), which ``ms`` counts from: an .etl file's
        StartTime, an XML trace's first event's time (tracerpt's first event is the log-file header), or for
        events given one by one (``add``) the first one's."""
        if self.start is _UNSET:
            header = getattr(self._source, "etl_header", None)
            first = getattr(self._source, "first_time", None) if self._source is not None else self._first
            self.start = filetime_ns(header.start_filetime) if header is not None else \
                time_ns(None if first is _UNSET else first)
        return self.start

    def _ms(self, times):
        """``ms`` of a ``time`` column: a float64 array of an int64 array (where no difference overflows), or
        a list."""
        start = self.trace_start()
        if hasattr(times, "dtype") and start is not None and len(times) and \
                -(1 << 63) <= int(times.min()) - start and int(times.max()) - start < 1 << 63:
            return milliseconds(times, start)
        return [milliseconds(t, start) for t in _list(times)]

    def _write_rows(self, table: str, items) -> list:
        """Rows of events one at a time: ``items`` are (entry, event, applied, findings, time in ns); an event of
        None gives the table's columns with no row.  Returns their (number, finding) pairs."""
        entry = items[0][0]
        items = [item for item in items if item[1] is not None]
        events, applied = [i[1] for i in items], [i[2] for i in items]
        names, kinds = [n for n, _k in HEAD], [k for _n, k in HEAD]
        times = [i[4] for i in items]
        columns = [[e.number for e in events], times, self._ms(times), [e.opcode for e in events],
                   [e.process_id for e in events], [adapter_of(e, a) for e, a in zip(events, applied)]]
        shares = {}  # each event's own entry reads its cells (a shared table): its rows
        for row, item in enumerate(items):
            shares.setdefault(item[0].event, []).append(row)
        for j, column in enumerate(entry.table.columns):
            if not self._reads(table, column.name):
                continue
            if len(shares) <= 1:
                made = column._cells(events, applied, entry.elements)
            else:
                made = [None] * len(items)
                for own, rows in shares.items():
                    mine = ENTRIES[own]
                    for row, cell in zip(rows, mine.table.columns[j]._cells([events[r] for r in rows],
                                                                            [applied[r] for r in rows], mine.elements)):
                        made[row] = cell
            _put(names, kinds, columns, column.name, column.kind, made)
        decoded = {}
        for kind in self._mirror(table, entry.table.mirror):
            data = b"".join(self.tracker.packer._record(kind, e.fields, e.where) if kind != SEGMENT else a
                            for e, a in zip(events, applied))
            decoded[kind] = bulk.decode_array(self._types[kind], data, target=self.tracker.target)
        return self._write(table, names, kinds, columns, decoded, [i[3] for i in items], [e.number for e in events])

    def _batched_rows(self, entry, rows) -> list:
        read = [c for c in entry.table.columns if self._reads(entry.table.name, c.name)]
        if entry.table.mirror:
            first = entry.table.mirror[0]
            found = self.tracker._findings_of_rows(self._types[first], rows.adapters, rows.checked, rows.data[first])
            adapters = rows.adapters
        else:  # rows a track applied (or apply, one by one): what each returned gives its findings and adapter
            results = rows.results
            found = [list(r.findings) for r in results]
            adapters = [r.adapter for r in results]
            nothing = [None] * len(results)
            rows.fields.update({c.name: c._values(nothing, results) for c in read if c.field is None})
        if self._reports:  # an odd Event's reports first, as ``add`` gives a row of an entry not batched
            reports = self._reports
            found = [reports.pop(n, []) + list(f) if n in reports else f for n, f in zip(_list(rows.numbers), found)]
        names, kinds = [n for n, _k in HEAD], [k for _n, k in HEAD]
        columns = [_list(rows.numbers), rows.times, self._ms(rows.times), rows.opcodes, _list(rows.pids), adapters]
        for c in read:  # values of either path, made cells here by the one rule
            _put(names, kinds, columns, c.name, c.kind, cells(_list(rows.fields[c.name]), c.kind,
                                                              entry.elements.get(c.field)))
        target = self.tracker.target
        decoded = {kind: bulk.decode_array(self._types[kind], rows.data[kind], target=target)
                   for kind in self._mirror(entry.table.name, entry.table.mirror)}
        return self._write(entry.table.name, names, kinds, columns, decoded, found, rows.numbers)

    def _reads(self, table: str, name: str) -> bool:
        columns = self.reads.get(table)
        return columns is None or name in columns

    def _leaves(self, table: str, kind) -> list:
        """The paths of a mirror type's leaves the table's sink reads."""
        prefix = MIRROR_PREFIX.get(kind, "")
        return [path for path in self._paths[kind] if self._reads(table, prefix + path)]

    def _mirror(self, table: str, kinds) -> list:
        """The mirror types with a leaf the table's sink reads (only those are decoded)."""
        return [kind for kind in kinds if self._leaves(table, kind)]

    def _write(self, table, names, kinds, columns, decoded: dict, found, numbers) -> list:
        """Write one chunk of a table; returns its rows' (number, finding) pairs for the findings table."""
        masks = [None] * len(names)
        for kind, cols in decoded.items():
            leaves = columns_table(cols, MIRROR_PREFIX.get(kind, ""), self._leaves(table, kind))
            names, kinds, columns = names + leaves.names, kinds + leaves.kinds, columns + leaves.columns
            masks += leaves.masks
        errors, warnings = [0] * len(found), [0] * len(found)
        for i, fs in enumerate(found):
            if fs:
                errors[i], warnings[i] = render.count_severity(fs, "error"), render.count_severity(fs, "warning")
        self._use(table).write(Table(names + ["errors", "warnings"], kinds + ["int", "int"],
                                     columns + [errors, warnings], masks + [None, None]))
        self.counts[table] += len(found)
        self.errors += sum(errors)
        self._started.add(table)
        if not any(found):
            return []
        numbers = numbers.tolist() if hasattr(numbers, "tolist") else numbers
        return [(n, f) for n, fs in zip(numbers, found) for f in fs]

    def _writer(self, name: str):
        """The writer of a table, made when its first row comes for a table of an event kind (or undecoded)."""
        if name in self._writers:
            return self._use(name)
        path = os.path.join(self.directory, f"{name}.{self.fmt}")
        check_output(path, inputs=self.inputs, binary=self.fmt == "parquet")
        self.counts[name] = 0
        return self._open_table(name, path)

    def _write_kind(self, table, items) -> list:
        """Rows of events no entry reads (or undecoded, or, for table None, only their findings): returns their
        (number, finding) pairs."""
        found = [(e.number, f) for e, _ns, reports in items for f in reports]
        if table is None:
            return found
        events = [e for e, _ns, _r in items]
        times = [ns for _e, ns, _r in items]
        head = [[e.number for e in events], times, self._ms(times), [e.process_id for e in events]]
        if table == UNDECODED:
            columns = UNDECODED_COLUMNS
            made = head + [[e.event_id for e in events], [e.version for e in events],
                           [e.kind.symbol or None for e in events], [e.odd.why for e in events],
                           [None if e.odd.payload is None else e.odd.payload.hex() for e in events],
                           [_data_text(e.extra) for e in events]]
        else:
            key = (events[0].kind.event_id, events[0].version)  # one table a version: all of them have it
            columns = _kind_columns(*key)
            made = head + [cells([e.fields.get(name) for e in events], kind, element)
                           for name, kind, element in _kind_fields(*key)]
            made.append([e.odd.extra_bytes.hex() if e.odd is not None and e.odd.extra_bytes else None
                         for e in events])
        made += [[render.count_severity(r, severity) for _e, _ns, r in items] for severity in ("error", "warning")]
        w = self._writer(table) if self.sinks is None else self._writers[table]
        w.write(Table([n for n, _k in columns], [k for _n, k in columns], made))
        self.counts[table] = self.counts.get(table, 0) + len(events)
        self._started.add(table)
        return found

    def _write_findings(self, numbers: list, findings: list) -> None:
        found = [render.finding_json(f) for f in findings]
        self._use("findings").write(Table(
            ("number", *render.FINDING_CELLS), ("int",) + ("text",) * len(render.FINDING_CELLS),
            [numbers] + [[c[key] for c in found] for key in render.FINDING_CELLS]))
        self._started.add("findings")
        self.counts["findings"] += len(numbers)

    def message(self) -> str:
        parts = [f"{plural(n, 'row')} of {name}" for name, n in self.counts.items()]
        return f"wrote {', '.join(parts)} to {safe_name(self.directory)}"


def _put(names: list, kinds: list, columns: list, name: str, kind: str, cells) -> None:
    """One more column of a table, or, named as a head column (``process``), the entry's own in its place."""
    if name in names:
        at = names.index(name)
        kinds[at], columns[at] = kind, cells
        return
    names.append(name)
    kinds.append(kind)
    columns.append(cells)


def _data_text(extra: dict):
    """An undecoded XML event's <Data> as text (name=value; ...), or None."""
    return "; ".join(f"{k}={v}" for k, v in extra.items()) if extra else None


def _folders_gone_on_failure(made: list):
    """An exit callback: on a failure or an interruption, the output folders this run created go too."""
    def exit_(exc_type, exc, tb) -> bool:
        if exc_type is not None:
            remove_made_folders(made)
        return False
    return exit_


@contextlib.contextmanager
def _old_objects_frozen():
    """While a trace is read, the objects from before (modules, the caller's) are left out of the cyclic
    collector's full passes, which each chunk's short-lived rows would otherwise make walk them all again (a
    sixth of the time); unless someone froze objects already (``gc.freeze`` is the process's)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _list(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else values


def _by_event(np, ids, in_matrix) -> list:
    """(event name, rows) of each batched event among ``ids`` whose row the matrix holds, in the catalog's order."""
    out = []
    for name, entry in ENTRIES.items():
        if entry.batched:
            rows = np.flatnonzero(np.isin(ids, list(entry.ids)) & in_matrix)
            if len(rows):
                out.append((name, rows))
    return out


class _Rows:
    """A batched event's rows as columns: what its table is written from."""

    __slots__ = ("numbers", "times", "opcodes", "pids", "adapters", "checked", "fields", "data", "results")

    def __init__(self):
        self.results = []  # what apply returned for each row (a batched entry without a mirror record)


def _merged(parts: list) -> _Rows:
    """Runs of rows as one (a chunk of the table, whichever path made them)."""
    if len(parts) == 1:
        return parts[0]
    out = _Rows()
    for name in ("numbers", "times", "opcodes", "pids", "adapters", "checked"):
        values = [getattr(part, name) for part in parts]  # adapters None: an entry without (its results have them)
        setattr(out, name, None if any(v is None for v in values) else list(chain.from_iterable(map(_list, values))))
    out.fields = {c: list(chain.from_iterable(_list(part.fields[c]) for part in parts)) for c in parts[0].fields}
    out.data = {kind: b"".join(part.data[kind] for part in parts) for kind in parts[0].data}
    out.results = list(chain.from_iterable(part.results for part in parts))
    return out


def _in_order(rows: _Rows) -> _Rows:
    """Rows of several runs (several entries', or an odd Event's made after its run) in event order."""
    numbers = _list(rows.numbers)
    order = sorted(range(len(numbers)), key=numbers.__getitem__)
    if order == list(range(len(numbers))):
        return rows
    out = _Rows()
    for name in ("numbers", "times", "opcodes", "pids", "adapters", "checked", "results"):
        values = getattr(rows, name)  # results: empty for an entry with a mirror record
        setattr(out, name, values if not values and values is not None and name == "results" else
                None if values is None else list(map(_list(values).__getitem__, order)))
    out.fields = {c: list(map(_list(v).__getitem__, order)) for c, v in rows.fields.items()}
    out.data = {}
    for kind, blob in rows.data.items():  # each row's record of a kind has one size
        size = len(blob) // len(order)
        out.data[kind] = b"".join(blob[i * size:(i + 1) * size] for i in order)
    return out


def _rows_of_events(entry, tracker, items) -> _Rows:
    """(Event, record bytes) items of a batched entry as rows."""
    rows = _Rows()
    events = [e for e, _d in items]
    rows.numbers, rows.times, rows.opcodes = [e.number for e in events], [time_ns(e.time) for e in events], \
        [e.opcode for e in events]
    rows.pids, rows.adapters = [e.process_id for e in events], [e.adapter for e in events]
    rows.checked = [e.opcode not in entry.unchecked for e in events]
    if not entry.table.mirror:  # the value columns are made from what apply returned when written
        rows.results = [a for _e, a in items]
        rows.fields = {c.name: c._values(events, rows.results) for c in entry.table.columns if c.field is not None}
        rows.data = {}
        return rows
    rows.fields = {c.name: c._values(events, [None] * len(events)) for c in entry.table.columns}  # None: not in
    pk = tracker.packer  # this version of the event
    first = entry.table.mirror[0]
    rows.data = {kind: b"".join(d for _e, d in items) if kind == first else
                 b"".join(pk._record(kind, e.fields, e.where) for e in events) for kind in entry.table.mirror}
    return rows


def _rows_of_batch(np, entry, tracker, batch, start: int, stop: int, rows, header) -> tuple:
    """(_Rows, advance) of rows ``rows`` (of ``start:stop``) of an etlcolumns.DxgBatch, all events of ``entry``;
    ``advance(n)`` tracks the next n rows' live allocations as ``Tracker.apply`` tracks them (None: the entry
    tracks nothing)."""
    part = batch.rows(slice(start, stop))
    if len(rows) != stop - start:
        part = part.rows(rows)
    out = _Rows()
    event = entry.event
    out.numbers, out.times = part.numbers, header.nanoseconds(np, part.times)
    opcodes = [entry.opcodes[i] for i in part.ids.tolist()]
    out.opcodes, out.pids = opcodes, part.pids
    adapters = part.column(event, entry.adapter) if entry.adapter is not None else None
    out.adapters = adapters.tolist() if adapters is not None else None
    out.checked = [o not in entry.unchecked for o in opcodes]
    columns = {name: part.column(event, name) for name in etlcolumns.positions(event)}
    out.fields = {}
    for c in entry.table.columns:
        if c.field is None:  # a value column of a batched entry without a mirror: made from its rows' results
            continue
        values = columns[c.field]
        if c.field in OPTIONAL[event]:  # only in the versions whose template has it
            has = np.isin(part.versions, [v for v, fields in TEMPLATES[event].items() if c.field in dict(fields)])
            values = values.tolist()
            values = values if has.all() else [None] * len(values) if not has.any() else \
                [v if h else None for v, h in zip(values, has.tolist())]
        out.fields[c.name] = values
    count = len(part)
    pk = tracker.packer
    out.data = {kind: pk._pack_columns(np, kind, columns, count) for kind in entry.table.mirror}
    if any(data is None for data in out.data.values()):
        raise etlcolumns.NeedExact("a value that does not fit its mirror member")
    if entry.track is None:
        return out, None
    return out, entry.track(np, tracker, columns, np.array([o in entry.unchecked for o in opcodes], dtype=bool),
                            adapters, out.numbers, out.times)


def allocation_columns(events, *, target=None):
    """(Columns of DXGK_ALLOCATIONINFO, the events in row order) of the events given that fill one and are checked
    (those of the entry whose table shows the record, but the opcodes it leaves unchecked)."""
    tracker = Tracker(target)
    rows = [e for e in events if tracker._applied(e) and ENTRY_OF[e.event_id].table.mirror[:1] == (ALLOCATION_TYPE,)
            and e.opcode not in ENTRY_OF[e.event_id].unchecked]
    data = b"".join(tracker.packer.pack(ALLOCATION_TYPE, e) for e in rows)
    return bulk.decode_array(ALLOCATION_TYPE, data, target=tracker.target), rows
