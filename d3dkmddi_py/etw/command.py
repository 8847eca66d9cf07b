"""``d3dkmddi etw FILE``: decode and validate the segment and allocation events of a DxgKrnl trace.

Text: per adapter, its segments, then its live allocations (dt style, meanings and findings), then a
summary.  ``--json``: one object per decoded event, written as it is read.  ``--format csv|jsonl|
parquet``: one row per AdapterAllocation event with its findings, decoded and checked column-wise a
chunk at a time.  Exit status 1 when an error-level finding is reported; bad input raises
EtwInputError (the caller prints its one line and exits 2).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import dttext, jsonformat, render
from .._numpy import parquet_unavailable
from ..errors import EtwInputError
from ..jsonvalue import wide_text
from ..names import ABIS, NEWEST, parse_abi, parse_version
from ..semantics import field_meanings
from ..target import target as make_target
from ..bulk.table import FORMATS
from ..bulk.write import Progress
from .etlfile import WIDE_FACTS
from .events import json_value
from .mapping import ALLOCATION_TYPE, REASONS, RULES_APPLY, SEGMENT, USAGE_TYPE, carried
from .model import Tracker
from .tables import TraceTables
from .schema import ADAPTER_ALLOCATION, EXTRA_FIELDS, FIELDS, KERNEL_FLAGS, AllocationFlag, UsageFlag, flag_names
from .xmlreader import read, summary

# The bundled trace, a data file beside the other samples: samples.etw_build writes it from etw's schema,
# so samples import etw and etw only names the file.
SAMPLE_FILE = "etw_trace.xml"
SAMPLE_PATH = Path(__file__).resolve().parent.parent / "samples" / SAMPLE_FILE
SAMPLE_WORD = "sample"
CHUNK_EVENTS = 4096  # allocation events per column-wise check in --json


def add_arguments(parser) -> None:
    parser.add_argument("file", metavar="FILE",
                        help="an .etl file, or its XML (tracerpt -of XML, Event Viewer), told apart by content; '-' "
                             "for standard input, or the word 'sample' for the bundled trace (a file named sample: "
                             "./sample)")
    parser.add_argument("--abi", default="x64", help=f"the traced machine's ABI: {', '.join(ABIS)} (default x64)")
    parser.add_argument("--ddi", default=NEWEST.name, metavar="VERSION",
                        help=f"the driver's DXGKDDI_INTERFACE_VERSION (the trace does not say it): a name (WDDM2_0) "
                             f"or a number; default {NEWEST.name}")
    parser.add_argument("--json", action="store_true", help="one JSON object per decoded event")
    parser.add_argument("--summary", action="store_true",
                        help="what an .etl file holds, whatever its providers: the log-file header's facts and the "
                             "events per provider and id (one JSON object with --json)")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="tables: segments, allocations and findings, one row per event (or finding), written "
                             "into the directory --output names")
    parser.add_argument("--output", "-o", metavar="DIR", help="the directory --format writes its tables into "
                                                             "(created if missing)")


def _source(args):
    """(source for read(), display name, the input as outfile compares it: a path, or "-" for standard input)."""
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
        raise EtwInputError(f"--format {args.format} writes three tables (segments, allocations, findings): give "
                            f"--output DIR, a directory (created if missing)")
    source, name, path = _source(args)
    if args.summary:
        if args.format or args.output is not None:
            raise EtwInputError("--summary writes text, or JSON with --json; not --format or --output")
        return _summary(summary(source, name=name), args.json, stdout)
    reader = read(source, name=name)
    tracker = Tracker(tgt)
    if args.format:
        return _tables(args, reader, tracker, stderr, path)
    if args.json:
        return _json(reader, tracker, stdout)
    return _text(reader, tracker, stdout, name)


# ------------------------------------------------------------------ --summary
_SUMMARY_FACTS = (("logger_name", "logger"), ("log_file_name", "log file"), ("windows_build", "Windows build"),
                  ("pointer_size", "pointer size"), ("processors", "processors"), ("buffer_size", "buffer size"),
                  ("start_time", "start"), ("end_time", "end"), ("clock", "clock"), ("perf_freq", "clock frequency"),
                  ("timer_resolution", "timer resolution"), ("events_lost", "events lost"),
                  ("buffers_lost", "buffers lost"), ("buffers_written", "buffers written"), ("buffers", "buffers read"),
                  ("events", "events"))


def _summary(facts: dict, as_json: bool, stdout) -> int:
    if as_json:
        stdout.write(json.dumps({k: wide_text(v) if k in WIDE_FACTS and type(v) is int else v
                                 for k, v in facts.items()}) + "\n")
        return 0
    w = stdout.write
    w(f"d3dkmddi etw --summary: {facts['file']}\n")
    for key, label in _SUMMARY_FACTS:
        w(f"  {label + ':':<18} {facts[key] if facts[key] is not None else '-'}\n")
    w(f"  {'event headers:':<18} " + ", ".join(f"{n} {k}" for k, n in facts["header_kinds"].items()) + "\n")
    w(f"\n{len(facts['providers'])} providers, most events first:\n")
    for p in facts["providers"]:
        ids = ", ".join(f"{k}: {n}" for k, n in list(p["ids"].items())[:8])
        more = f", ... ({len(p['ids'])} ids)" if len(p["ids"]) > 8 else ""
        w(f"  {p['events']:>9}  {p['guid'] or '(no GUID: classic instance events)'}  {p['name'] or ''}\n")
        w(f"             ids {ids}{more}\n")
    return 0


# ------------------------------------------------------------------ JSON lines, as the events come
def _finding(f) -> dict:
    j = render.finding_json(f)
    return {"rule": j["rule_id"], "severity": j["severity"], "field": j["field"], "message": j["message"]}


_TYPES = {event: {**dict(fields), **EXTRA_FIELDS} for event, fields in FIELDS.items()}


def event_json(event, type_name: str, findings, checked: bool, record: dict | None = None) -> dict:
    """One event as --json writes it; ``record``: its mirror record as ``decode --json`` writes it."""
    types = _TYPES[event.event]
    fields = {n: json_value(n, types.get(n, ""), v) for n, v in event.fields.items()}
    if event.event == ADAPTER_ALLOCATION:
        names = {"Flags": flag_names(AllocationFlag, event.fields["Flags"]),
                 "UsageFlags": flag_names(UsageFlag, event.fields["UsageFlags"])}
    else:  # the DXGK_SEGMENTFLAGS word, named as the record at this target names it
        names = {"Flags": record["names"].get("Flags.Value", "0") if record is not None else ""}
    return {"event": event.event, "opcode": event.opcode, "number": event.number, "id": event.event_id,
            "version": event.version, "adapter": f"0x{event.adapter:x}", "type": type_name, "time": event.time,
            "fields": fields, "names": names, "extra": dict(event.extra), "checked": checked,
            "findings": [_finding(f) for f in findings], "record": record}


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
            type_name = pk.segment_type if kind == SEGMENT else ALLOCATION_TYPE
            meanings = _meanings(data, type_name, tgt, adapter, kind)
            record = jsonformat.record_json(pk.classes[kind].from_buffer_copy(data), findings=findings, meanings=meanings)
            if len(self.made) >= 4096:
                self.made.clear()
            made = self.made[key] = (adapter, record, json.dumps(record))
        return made[1], made[2]


def _line(event, type_name: str, findings, checked: bool, record: tuple) -> str:
    """``event_json``'s line, the record's JSON text spliced in (made once per distinct record)."""
    obj = event_json(event, type_name, findings, checked, record[0])
    del obj["record"]
    return json.dumps(obj)[:-1] + ', "record": ' + record[1] + "}\n"


def _json(reader, tracker: Tracker, stdout) -> int:
    """Allocation events are checked in batches (column-wise, like the --format path); a batch is
    written before a ReportSegment changes the segments, so each allocation is checked against the
    segments reported before it."""
    errors = 0
    pending = []
    records = _Records(tracker)

    def flush():
        nonlocal errors
        for (event, data), findings in zip(pending, tracker.batch_findings(pending)):
            errors += render.count_severity(findings, "error")
            checked = event.opcode != "Stop"
            adapter = tracker.view(event.adapter)[0] if checked else None
            stdout.write(_line(event, ALLOCATION_TYPE, findings, checked,
                               records.of(ALLOCATION_TYPE, data, adapter, findings, checked)))
        pending.clear()

    for event in reader:
        if event.event == ADAPTER_ALLOCATION:  # its bytes only: the live set is the text form's, not needed here
            pending.append((event, tracker.packer.allocation(event.fields, event.where)))
            if len(pending) >= CHUNK_EVENTS:
                flush()
            continue
        flush()
        data = tracker.apply(event)
        findings = tracker.findings_of_segment(event)
        errors += render.count_severity(findings, "error")
        stdout.write(_line(event, tracker.packer.segment_type, findings, True,
                           records.of(SEGMENT, data, None, findings)))
    flush()
    reader.check_found()
    return 1 if errors else 0


# ------------------------------------------------------------------ text, per adapter
def _text(reader, tracker: Tracker, stdout, name: str) -> int:
    for event in reader:
        tracker.apply(event)
    reader.check_found()
    adapters = tracker.finish()
    pk, tgt = tracker.packer, tracker.target
    seg_cls = pk.classes["segment descriptor"]
    alloc_cls, usage_cls = pk.classes[ALLOCATION_TYPE], pk.classes[USAGE_TYPE]
    w = stdout.write
    w(f"d3dkmddi etw: {name}, read as {tgt.label} (--abi/--ddi: the trace does not name the driver's version)\n")
    w(f"{reader.total} events: {reader.decoded} decoded, {reader.other_providers} of other providers and "
      f"{reader.other_dxgkrnl} other DxgKrnl events skipped\n")
    w(f"not in the events, so unknown (shown as 0 where shown at all): {pk.segment_type} "
      f"{', '.join(pk.unknown_members('segment descriptor'))}; {ALLOCATION_TYPE} "
      f"{', '.join(pk.unknown_members(ALLOCATION_TYPE))}, {pk.flag_member} bits 14-31\n")
    totals = {"segments": 0, "segment_findings": 0, "live": 0, "clean": 0, "errors": 0, "warnings": 0}
    rules = set()
    for pointer, a in adapters.items():
        w(f"\n== Adapter 0x{pointer:x}: {len(a.segments)} segment{'s' if len(a.segments) != 1 else ''}, "
          f"{len(a.allocations)} live allocation{'s' if len(a.allocations) != 1 else ''}\n")
        if a.adapter_note:
            w(f"   ({a.adapter_note})\n")
        for sid in sorted(a.segments):
            s = a.segments[sid]
            value = seg_cls.from_buffer_copy(s.data)
            meanings = _meanings(s.data, pk.segment_type, tgt, None, SEGMENT)
            w(f"\n-- segment {sid}: ReportSegment event #{s.event.number}, MemorySegmentGroup "
              f"{s.event.fields['MemorySegmentGroup']}\n")
            w(dttext.render_text(value, findings=s.findings, meanings=meanings, nonzero=True,
                                 title=f"{pk.segment_type}  {tgt.label}") + "\n")
            totals["segments"] += 1
            totals["segment_findings"] += len(s.findings)
            rules.update(f.rule_id for f in s.findings)
        for f in a.adapter_findings:
            j = render.finding_json(f)
            w(f"   {j['severity']} {j['rule_id']}: {j['message']}\n")
        totals["segment_findings"] += len(a.adapter_findings)
        rules.update(f.rule_id for f in a.adapter_findings)
        bodies: dict = {}  # the allocation's bytes -> its text: against one adapter's segments, the bytes decide
        for handle, e in a.allocations.items():
            ev = e.event
            flags = ev.fields["Flags"]
            w(f"\n-- allocation {handle[0]} 0x{handle[1]:x}: {ev.opcode} event #{ev.number}, process "
              f"0x{ev.fields['hProcessId']:x}, {render.tally(e.findings, none='no findings')}\n")
            kernel = flags & KERNEL_FLAGS
            note = (f"; kernel state {flag_names(AllocationFlag, kernel)}: not driver flags, not checked"
                    if kernel else "")
            dropped = flags & pk.unmapped_flags
            if dropped:
                note += f"; {flag_names(AllocationFlag, dropped)} not in {pk.flag_type}"
            shown = flag_names(AllocationFlag, flags) if flags else "(none)"
            w(f"   event Flags = 0x{int(flags):x} {shown}{note}\n")
            if ev.fields["hDxgSharedResource"]:
                w(f"   shared: hDxgSharedResource 0x{ev.fields['hDxgSharedResource']:x}\n")
            body = bodies.get((e.data, e.usage))
            if body is None:
                meanings = _meanings(e.data, ALLOCATION_TYPE, tgt, a.adapter, ALLOCATION_TYPE)
                body = dttext.render_text(alloc_cls.from_buffer_copy(e.data), findings=e.findings, meanings=meanings,
                                          nonzero=True, title=f"{ALLOCATION_TYPE}  {tgt.label}") + "\n"
                if any(e.usage):
                    body += dttext.render_text(usage_cls.from_buffer_copy(e.usage), nonzero=True,
                                               title=f"{USAGE_TYPE}  {tgt.label}  (UsageVersion, UsageFlags, "
                                                     f"Format...)") + "\n"
                if len(bodies) >= 4096:
                    bodies.clear()
                bodies[(e.data, e.usage)] = body
            w(body)
            totals["live"] += 1
            totals["clean"] += not e.findings
            totals["errors"] += render.count_severity(e.findings, "error")
            totals["warnings"] += render.count_severity(e.findings, "warning")
            rules.update(f.rule_id for f in e.findings)
    started = sum(a.started for a in adapters.values())
    stopped = sum(a.stopped for a in adapters.values())
    unmatched = sum(a.stops_unmatched for a in adapters.values())
    replaced = sum(a.segments_replaced for a in adapters.values())
    skipped_rules = sorted(r for r, (ok, _why) in RULES_APPLY.items() if not ok)
    seg_errors = sum(render.count_severity(s.findings, "error") for a in adapters.values() for s in a.segments.values())
    seg_errors += sum(render.count_severity(a.adapter_findings, "error") for a in adapters.values())
    w("\n== Summary\n")
    w(f"adapters: {len(adapters)}\n")
    w(f"segments: {totals['segments']} ({replaced} report{'s' if replaced != 1 else ''} replaced by a later one), "
      f"{totals['segment_findings']} finding{'s' if totals['segment_findings'] != 1 else ''}\n")
    w(f"allocations: {started} started (Start or DCStart), {stopped} stopped ({unmatched} of them not seen "
      f"starting), {totals['live']} live: {totals['clean']} without findings, {totals['live'] - totals['clean']} "
      f"with {totals['errors']} error{'s' if totals['errors'] != 1 else ''} and {totals['warnings']} "
      f"warning{'s' if totals['warnings'] != 1 else ''} from {len(rules)} distinct rules\n")
    w(f"rules not applied to trace values ({len(skipped_rules)}): " + ", ".join(skipped_rules) + "\n")
    w("   why: see d3dkmddi_py.etw.RULES_APPLY; " + "; ".join(
        f"{key}: {REASONS[key]}" for key in sorted({RULES_APPLY[r][1] for r in skipped_rules})) + "\n")
    return 1 if totals["errors"] or seg_errors else 0


def _meanings(data: bytes, type_name: str, tgt, adapter, kind: str) -> dict:
    """The meanings of the members the event carried (MAPPING), never of a union arm or member it did not."""
    leaves, records = carried(kind, int(tgt.interface_version))
    return {path: text for path, text in field_meanings(data, type_name, target=tgt, adapter=adapter).items()
            if path in leaves or path.split(".", 1)[0] in records}


# ------------------------------------------------------------------ tables
def _tables(args, reader, tracker: Tracker, stderr, input_path) -> int:
    """segments, allocations and findings tables in the directory --output names."""
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
    if stderr is not None:
        stderr.write(f"d3dkmddi: {tables.message()}\n")
    return 1 if tables.errors else 0
