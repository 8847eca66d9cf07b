"""``d3dkmddi etw FILE``: decode and validate the DxgKrnl events of a trace (those ``etw.catalog`` has).

Text (``etw.text``): per adapter each event's section (its segments, its live allocations in dt style
with meanings and findings, resident bytes, process memory), then a summary.  ``--json``: one object
per decoded event, written as it is read.  ``--format csv|jsonl|parquet``: a table per event entry and
the findings (``etw.tables``), batched events decoded and checked column-wise a chunk at a time.  Exit
status 1 when an error-level finding is reported; bad input raises EtwInputError (the caller prints
its one line and exits 2).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ... import jsonformat, render
from ..._numpy import install_hint, parquet_unavailable
from ...errors import EtwInputError
from ...outfile import shadowed
from ...jsonvalue import wide_text
from ...wording import plural
from ...names import ABIS, NEWEST, parse_abi, parse_version
from ...target import target as make_target
from ...bulk.table import FORMATS
from ...bulk.write import Progress
from ..model.registry import ENTRY_OF
from ..readers.etlfile import WIDE_FACTS
from ..model.events import json_value
from ..model.registry import layout_of
from ..model.templates import manifest_event, map_names
from .plot import EXTRA as PLOT_EXTRA, run as plot_run
from ..model.mapping import SEGMENT
from ..model.times import time_ns, time_text, utc_text
from ..model.tracker import Tracker
from ..model.schema import PROVIDER, flag_names
from .tables import TraceTables, table_names
from .text import meanings, say_pointers, write_text
from ..readers.xmlreader import read, summary

# The bundled trace, a data file beside the other samples: samples.etw_build writes it from etw's schema,
# so samples import etw and etw only names the file.
SAMPLE_FILE = "etw_trace.xml"
SAMPLE_PATH = Path(__file__).resolve().parents[2] / "samples" / SAMPLE_FILE
SAMPLE_WORD = "sample"
# Its .etl twin (samples.etw_build writes both from the same events): ``sample.etl``, and what ``sample --summary``
# reads (a summary reads .etl files only).
SAMPLE_ETL_FILE = "etw_trace.etl"
SAMPLE_ETL_PATH = SAMPLE_PATH.with_name(SAMPLE_ETL_FILE)
SAMPLE_ETL_WORD = "sample.etl"
CHUNK_EVENTS = 4096  # allocation events per column-wise check in --json


def description(width: int = 100) -> str:
    """``etw --help``'s description, naming the events a catalog entry reads (from the registry)."""
    import textwrap

    from ..model.registry import ENTRIES

    text = (f"Read a GPU trace's {PROVIDER} events, decode them into the mirror structures and check each "
            f"allocation against its adapter's segments.  The trace is an .etl file (read directly, on any system) or "
            f"tracerpt's or Event Viewer's XML of one.  The events a catalog entry reads ({len(ENTRIES)}): "
            f"{', '.join(ENTRIES)}; every other {PROVIDER} event is read by its manifest template and tabled.")
    return textwrap.fill(text, width, break_on_hyphens=False)


def add_arguments(parser) -> None:
    parser.add_argument("file", metavar="FILE",
                        help="an .etl file, or its XML (tracerpt -of XML, Event Viewer), told apart by content; '-' "
                             "for standard input; the word 'sample' for the bundled trace (its XML; --summary reads "
                             "its .etl twin), 'sample.etl' for that twin (a file named so: ./sample, ./sample.etl)")
    parser.add_argument("--abi", default="x64", help=f"the traced machine's ABI: {', '.join(ABIS)} (default x64)")
    parser.add_argument("--ddi", default=NEWEST.name, metavar="VERSION",
                        help=f"the driver's DXGKDDI_INTERFACE_VERSION (the trace does not say it): a name (WDDM2_0) "
                             f"or a number; default {NEWEST.name}")
    parser.add_argument("--json", action="store_true", help="one JSON object per decoded event")
    parser.add_argument("--summary", action="store_true",
                        help="what an .etl file holds, whatever its providers: the log-file header's facts and the "
                             "events per provider and id (one JSON object with --json)")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="tables: one per event (segments, allocations, residency, ...) and findings, one row "
                             "per event (or finding), written into the directory --output names")
    parser.add_argument("--output", "-o", metavar="DIR", help="the directory --format writes its tables into "
                                                             "(created if missing)")
    parser.add_argument("--plot", metavar="OUT.png|OUT.svg",
                        help="a picture: per adapter, resident bytes per segment, process usage against budget, live "
                             f"allocated bytes per process, error findings at their time (needs matplotlib: "
                             f"{install_hint(PLOT_EXTRA)})")


def _source(args):
    """(source for read(), display name, the input as outfile compares it: a path, or "-" for standard input)."""
    if args.file == SAMPLE_ETL_WORD or args.file == SAMPLE_WORD and args.summary:
        return SAMPLE_ETL_PATH, f"<samples>/{SAMPLE_ETL_FILE}", SAMPLE_ETL_PATH
    if args.file == SAMPLE_WORD:
        return SAMPLE_PATH, f"<samples>/{SAMPLE_FILE}", SAMPLE_PATH
    if args.file == "-":
        return sys.stdin.buffer, "standard input", "-"
    return args.file, args.file, args.file


def run(args, stdout, stderr=None) -> int:
    tgt = make_target(parse_abi(args.abi), parse_version(args.ddi))
    if args.json and args.format:
        raise EtwInputError(f"give --json or --format {args.format}, not both")
    if args.output is not None and not args.format:
        raise EtwInputError("--output is for --format csv, jsonl or parquet; text and --json go to standard output")
    missing = parquet_unavailable(args.format)
    if missing:
        raise EtwInputError(missing)
    if args.format and args.output in (None, "-"):
        raise EtwInputError(f"--format {args.format} writes {len(table_names())} tables "
                            f"({', '.join(table_names())}): give --output DIR, a directory (created if missing)")
    if args.plot is not None and (args.json or args.format or args.summary or args.output is not None):
        raise EtwInputError("--plot writes a picture alone; give --json, --format or --summary in another run")
    source, name, path = _source(args)
    note = shadowed(args.file, "") if args.file in (SAMPLE_WORD, SAMPLE_ETL_WORD) else None
    if note and stderr is not None:
        stderr.write(f"d3dkmddi: {note}\n")
    if args.summary:
        if args.format or args.output is not None:
            raise EtwInputError("--summary writes text, or JSON with --json; not --format or --output")
        return _summary(summary(source, name=name), args.json, stdout)  # it decodes no payload: nothing is found
    reader = read(source, name=name)
    tracker = Tracker(tgt)
    if args.plot is not None:
        found = plot_run(args, reader, tracker, stderr, path)
    elif args.format:
        found = _tables(args, reader, tracker, stderr, path)
    elif args.json:
        found = _json(reader, tracker, stdout)
        say_pointers(tracker, stderr, reader)
    else:
        found = write_text(reader, tracker, stdout, name)
    return exit_status(*found)


def exit_status(errors: int, odd) -> int:
    """The exit status of every output that reads the events (text, --json, --format, --plot), once written: 1 when
    an error-level finding or an event not as its template says (``odd``: the reading's OddReports) was reported."""
    return 1 if errors or odd.events else 0


# ------------------------------------------------------------------ --summary
_SUMMARY_FACTS = (("logger_name", "logger"), ("log_file_name", "log file"), ("windows_build", "Windows build"),
                  ("pointer_size", "pointer size"), ("processors", "processors"), ("buffer_size", "buffer size"),
                  ("start_time", "start"), ("end_time", "end"), ("clock", "clock"), ("perf_freq", "clock frequency"),
                  ("timer_resolution", "timer resolution"), ("events_lost", "events lost"),
                  ("buffers_lost", "buffers lost"), ("buffers_written", "buffers written"), ("buffers", "buffers read"),
                  ("events", "events"))


SUMMARY_IDS = 8  # the ids the text shows of each provider (the lowest first); --json has every one
NO_NAME = "(no name)"  # a provider the trace does not name (--json: null)


SUMMARY_TIMES = ("start_time", "end_time", "boot_time")  # written as every output writes a time (times.utc_text)


def _summary(facts: dict, as_json: bool, stdout) -> int:
    facts = dict(facts, **{k: time_text(facts[k]) for k in SUMMARY_TIMES if k in facts})
    if as_json:
        stdout.write(json.dumps({k: wide_text(v) if k in WIDE_FACTS and type(v) is int else v
                                 for k, v in facts.items()}) + "\n")
        return 0
    w = stdout.write
    w(f"d3dkmddi etw --summary: {facts['file']}\n")
    for key, label in _SUMMARY_FACTS:
        value = facts[key]
        shown = "-" if value is None else f"{wide_text(value)} ({value:,})" if key in WIDE_FACTS and type(value) is int \
            else value  # a 64-bit fact as --json spells it, its decimal beside
        w(f"  {label + ':':<18} {shown}\n")
    w(f"  {'event headers:':<18} " + ", ".join(f"{n} {k}" for k, n in facts["header_kinds"].items()) + "\n")
    count = len(facts["providers"])
    w(f"\n{plural(count, 'provider')}{', most events first' if count > 1 else ''}:\n")
    for p in facts["providers"]:
        names = p["id_names"]
        ids = ", ".join(f"{k} {names[k]}: {n}" if k in names else f"{k}: {n}"
                        for k, n in list(p["ids"].items())[:SUMMARY_IDS])
        rest = len(p["ids"]) - SUMMARY_IDS
        more = f", and {rest:,} more (--summary --json lists every one)" if rest > 0 else ""
        w(f"  {p['events']:>9}  {p['guid'] or '(no GUID: classic instance events)'}  {p['name'] or NO_NAME}\n")
        w(f"             ids {ids}{more}\n")
    return 0


# ------------------------------------------------------------------ JSON lines, as the events come
def _finding(f) -> dict:
    j = render.finding_json(f)
    return {key: j[key] for key in render.FINDING_CELLS}


_NAMES: dict = {}  # (event id, version) -> (field -> in-type, field -> map's names as a function of the value)


def _field_facts(event) -> tuple:
    """(field -> in-type, field -> (value -> its name)) of an event's template: its entry's flag types, else the
    maps the manifest gives this event id's own template (Stop's Format is named, Start's not)."""
    key = (event.kind.event_id, event.version)
    found = _NAMES.get(key)
    if found is None:
        fields = layout_of(*key) or ()
        entry = ENTRY_OF.get(event.kind.event_id)
        maps = {f.name: f.map for f in manifest_event(key[0]).fields} if event.kind.symbol else {}  # this id's own
        namers = {}
        for f in fields:
            flag_type = entry.bit_maps.get(f.name) if entry is not None else None
            if flag_type is not None:
                namers[f.name] = lambda v, t=flag_type: flag_names(t, v)
            elif maps.get(f.name) is not None:
                map_kind, named = map_names(maps[f.name])
                namers[f.name] = (lambda v, m=named: m.get(v)) if map_kind == "valueMap" else \
                    (lambda v, m=named: _bits(m, v))
        found = _NAMES[key] = ({f.name: f.in_type for f in fields}, namers)
        if len(_NAMES) > 4096:
            _NAMES.clear()
    return found


def _bits(named: dict, value) -> str:
    """A bit map's names of a value: ``A|B``, unnamed bits as ``bit n``, ``0`` when none is set."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    parts = [n for v, n in named.items() if v and value & v == v]
    rest = value & ~sum(named)
    parts += [f"bit {b}" for b in range(rest.bit_length()) if rest >> b & 1]
    return "|".join(parts) or "0"


def event_json(event, type_name: str | None, findings, checked: bool, record: dict | None = None,
               adapter=None, resolved: dict | None = None) -> dict:
    """One event as --json writes it; ``record``: its mirror record as ``decode --json`` writes it;
    ``adapter``: the adapter its state change found, for an event that names none; ``resolved``: what its entry
    found through its handles (the allocation, its process)."""
    types, namers = _field_facts(event)
    fields = {n: json_value(n, types.get(n, ""), v) for n, v in event.fields.items()}
    names = {n: namer(event.fields[n]) for n, namer in namers.items() if n in event.fields}
    entry = ENTRY_OF.get(event.kind.event_id)
    for name, leaf in (entry.json_names.items() if entry is not None else ()):  # named as the record names it
        if name in event.fields:
            names[name] = record["names"].get(leaf, "0") if record is not None else ""
    pointer = event.adapter if event.adapter is not None else adapter
    out = {"event": event.event, "symbol": event.symbol or None, "opcode": event.opcode, "number": event.number,
           "id": event.event_id, "version": event.version, "adapter": None if pointer is None else f"0x{pointer:x}",
           "type": type_name, "time": utc_text(time_ns(event.time)), "fields": fields, "names": names,
           "extra": dict(event.extra)}
    if out["time"] is None and event.time is not None:  # no instant (the tables' cell is empty): kept as given
        out["time_as_given"] = event.time
    odd = event.odd
    if odd is not None:
        if odd.extra_bytes:
            out["extra_bytes"] = odd.extra_bytes.hex()
        if odd.missing:
            out["missing"] = list(odd.missing)
        if odd.payload is not None:
            out["payload"] = odd.payload.hex()
        if odd.unread:
            out["unread"] = dict(odd.unread)
    if resolved is not None:
        out["resolved"] = resolved
    out.update({"checked": checked, "findings": [_finding(f) for f in findings], "record": record})
    return out


class _Records:
    """The mirror record of an event as ``decode --json`` writes it: leaves, names, the meanings of the
    members the event carried, and its findings; and that JSON text.  A record is a function of its
    bytes, the adapter's segments and whether it is checked, so each is made once per those."""

    def __init__(self, tracker: Tracker):
        self.tracker = tracker
        self.made: dict = {}  # (kind, bytes, id(adapter), checked) -> (adapter, record, its JSON text)

    def of(self, kind: str, data: bytes, adapter, findings, checked: bool = True) -> tuple:
        """(record dict, its JSON text); ``checked`` False: a Stop, whose record has no findings."""
        key = (kind, data, id(adapter), checked)
        made = self.made.get(key)
        if made is None or made[0] is not adapter:  # the entry holds its adapter, so the id is its own
            pk, tgt = self.tracker.packer, self.tracker.target
            type_name = type_of(pk, kind)
            record = jsonformat.record_json(pk.classes[kind].from_buffer_copy(data), findings=findings,
                                            meanings=meanings(data, type_name, tgt, adapter, kind))
            if len(self.made) >= 4096:
                self.made.clear()
            made = self.made[key] = (adapter, record, json.dumps(record))
        return made[1], made[2]


def type_of(pk, kind: str) -> str:
    """The C type of a mirror kind at the packer's target."""
    return pk.segment_type if kind == SEGMENT else pk.classes[kind]._c_name_


def _json(reader, tracker: Tracker, stdout) -> int:
    """Lines in trace order, written a chunk of events at a time: events whose entry is batched
    (allocations) are checked column-wise when their chunk is written (like the --format path), and a
    chunk is written before any event that changes what they are checked against (a ReportSegment).
    Returns (error-level findings, the OddReports)."""
    errors = 0
    pending = []  # (event, what apply returned, its findings: None for a batched event, its entry)
    records = _Records(tracker)
    pk = tracker.packer
    tracker.entries = False  # the lines hold each event: no live allocation is kept whole

    def write(event, findings, record, adapter=None, checked=True, resolved=None):
        nonlocal errors
        errors += render.count_severity(findings, "error")
        if record is None:
            stdout.write(json.dumps(event_json(event, None, findings, checked, None, adapter, resolved)) + "\n")
            return
        kind, data, view, checked = record
        made = records.of(kind, data, view, findings, checked)
        obj = event_json(event, type_of(pk, kind), findings, checked, made[0], adapter)
        del obj["record"]
        stdout.write(json.dumps(obj)[:-1] + ', "record": ' + made[1] + "}\n")

    def flush():
        batched: dict = {}  # each batched entry's record type -> its events, checked column-wise at once
        for e, a, _f, entry, _r in pending:
            if entry is not None and entry.batched and entry.table.mirror:
                batched.setdefault(type_of(pk, entry.table.mirror[0]), []).append((e, a))
        checked = {name: iter(tracker._batch_findings(name, items)) for name, items in batched.items()}
        for event, applied, findings, entry, reports in pending:
            if entry is None:  # an event no entry reads, or one its entry cannot apply (fields missing)
                write(event, reports, None, checked=False)
            elif entry.batched and entry.table.mirror:
                found = next(checked[type_of(pk, entry.table.mirror[0])])
                write(event, reports + list(found), entry.record(tracker, event, applied))
            else:
                record = entry.record(tracker, event, applied) if entry.record is not None else None
                write(event, reports + findings, record, getattr(applied, "adapter", None),
                      entry.findings is not None and getattr(applied, "checked", True),  # whether anything was checked
                      entry.resolved(applied) if entry.resolved is not None else None)
        pending.clear()

    for event in reader:
        entry = ENTRY_OF.get(event.kind.event_id) if tracker._applied(event) else None
        if entry is not None and entry.barrier:
            flush()
        applied = tracker._apply(event)
        reports = tracker.odd.take(event)
        records_later = entry is None or entry.batched and entry.table.mirror  # checked column-wise when written
        pending.append((event, applied, None if records_later else tracker._findings(event, applied), entry, reports))
        if len(pending) >= CHUNK_EVENTS:
            flush()
    flush()
    reader.check_found()
    return errors, tracker.odd


# ------------------------------------------------------------------ tables
def _tables(args, reader, tracker: Tracker, stderr, input_path) -> int:
    """Each event entry's table and the findings, in the directory --output names; returns (error-level findings,
    the OddReports)."""
    progress = None
    if stderr is not None and hasattr(stderr, "isatty") and stderr.isatty():
        progress = Progress(f"etw {args.format}", None, stderr, unit="events")
    tables = TraceTables(args.format, args.output, tracker, inputs=[input_path], progress=progress)
    try:
        with tables:
            tables.read(reader)
            reader.check_found()
    except BaseException:
        if progress is not None:
            progress.abandon()
        raise
    if progress is not None:
        progress.close(tables.events)
    odd = tables.tracker.odd  # the Tracker that read the trace to its end (the tables start again with a new one)
    if stderr is not None:
        stderr.write(f"d3dkmddi: {tables.message()}" + (f"; {odd.tally()}, each kind reported once in findings"
                                                         if odd.events else "") + "\n")
    say_pointers(tables.tracker, stderr, reader)
    return tables.errors, odd
