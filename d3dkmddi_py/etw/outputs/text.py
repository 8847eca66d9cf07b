"""The etw text: per adapter each event's section (its entry's ``text``), then the summary, written
through ``TextOut``, the sink that owns this output.

``TextOut`` writes lines, mirror records (``dttext``, the one text renderer: the ``dt -r`` lines with
the meanings of what the event carried and the findings under their fields) and finding lines
(``dttext.validate_frame``, as ``validate`` prints them); it counts every finding it prints, so the exit
status is what was shown.
"""
from __future__ import annotations

from ... import dttext, render
from ...layout import type_layout
from ...pipeline.texts import BODY_CACHE
from ...semantics import field_meanings
from ..model.registry import ENTRIES
from ..model.mapping import REASONS, carried
from ..model.section import Section, plural
from ..model.times import time_text
from ...errors import shown


class TextOut:
    """The text of one trace, written as it is made."""

    def __init__(self, out, tracker):
        self.out, self.tracker = out, tracker
        self.errors = self.warnings = 0
        self._bodies: dict = {}  # (kind, bytes, adapter id, note, explain) -> (adapter, body): the bytes decide

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def _count(self, findings) -> None:
        self.errors += render.count_severity(findings, "error")
        self.warnings += render.count_severity(findings, "warning")

    def record(self, kind: str, data: bytes, *, findings=(), adapter=None, note: str = "",
               explain: bool = True) -> None:
        """A mirror record's ``dt -r`` lines (the members it holds), its findings and (``explain``) the
        meanings of what the event carried."""
        pk, tgt = self.tracker.packer, self.tracker.target
        type_name = pk.segment_type if kind == "segment descriptor" else pk.classes[kind]._c_name_
        self._count(findings)
        key = (kind, data, id(adapter), note, explain)
        made = self._bodies.get(key)
        if made is None or made[0] is not adapter:  # the entry holds its adapter, so the id is its own
            layout = type_layout(type_name, tgt.abi, int(tgt.interface_version))
            title = dttext.record_title(type_name, tgt.label) + (f"  ({note})" if note else "")
            body = dttext.render_record(layout, layout.values(data), findings=findings, nonzero=True, title=title,
                                        meanings=meanings(data, type_name, tgt, adapter, kind) if explain else None)
            if len(self._bodies) >= BODY_CACHE:
                self._bodies.clear()
            made = self._bodies[key] = (adapter, body)
        self.out.write(made[1] + "\n")

    def findings(self, findings) -> None:
        """Finding lines as ``validate`` prints them: severity, rule, field, message, then the sentence."""
        self._count(findings)
        for f in findings:
            j = render.finding_json(f)
            ref = j["reference"]
            lead, tail = dttext.validate_frame(j["severity"], j["rule_id"], j["field"],
                                               dttext.reference_text(ref["sentence"], ref["page"]) if ref else "")
            self.out.write(lead + j["message"] + tail + "\n")


def header_pointers(reader):
    """An .etl trace's PointerSize (its log-file header's), or None (XML says none)."""
    return getattr(getattr(reader, "etl_header", None), "pointer_size", None)


def say_pointers(tracker, stderr, reader=None) -> None:
    """--json, the tables and the picture: the trace's pointers that do not fit --abi's, one line on standard error
    (the text says it in its summary)."""
    note = tracker.pointer_note(header_pointers(reader))
    if note and stderr is not None:
        stderr.write(f"d3dkmddi: {note}\n")


def meanings(data: bytes, type_name: str, tgt, adapter, kind: str) -> dict:
    """The meanings of the members the event carried (MAPPING), never of a union arm or member it did not."""
    leaves, records = carried(kind, int(tgt.interface_version))
    return {path: text for path, text in field_meanings(data, type_name, target=tgt, adapter=adapter).items()
            if path in leaves or path.split(".", 1)[0] in records}


_DEFAULT = Section()


def write_text(reader, tracker, stdout, name: str) -> tuple:
    """Read every event, then write the text; returns (error-level findings shown, the OddReports) for
    ``command.exit_status``."""
    from ..model.mapping import RULES_APPLY

    for event in reader:
        tracker._apply(event)
        tracker.odd.take(event)
    reader.check_found()
    adapters = tracker.finish()
    sections = [(entry, entry.text or _DEFAULT) for entry in ENTRIES.values()]
    out = TextOut(stdout, tracker)
    tgt = tracker.target
    out.line(f"d3dkmddi etw: {name}, read as {tgt.label} (--abi/--ddi: the trace does not name the driver's version)")
    out.line(f"{plural(reader.total, 'event')}: {plural(reader.decoded, 'DxgKrnl event')} read "
             f"({reader.decoded - reader.other_dxgkrnl:,} of them by a catalog entry), {reader.other_providers:,} of "
             f"other providers skipped")
    unknown = [part for _entry, section in sections for part in section.unknown(tracker)]
    out.line(f"not in the events, so unknown (shown as 0 where shown at all): {'; '.join(unknown)}")
    for pointer, a in adapters.items():
        heading = [h for _entry, section in sections for h in [section.heading(a)] if h]
        out.line(f"\n== Adapter 0x{pointer:x}: {', '.join(heading)}")
        if a.adapter_note:
            out.line(f"   ({a.adapter_note})")
        for _entry, section in sections:
            section.adapter(out, tracker, a)
    if tracker.loose:
        out.line("\n== Findings of events about no live record")
        for event, found in tracker.loose:
            out.line(f"-- {event.kind.label} event #{event.number}: {render.tally(found)}")
            out.findings(found)
        if tracker.loose_more:
            out.line(f"   ... and {plural(tracker.loose_more, 'event')} more with findings (see --json or the "
                     f"findings table)")
    odd = tracker.odd
    if odd.reported:
        out.line("\n== Events not as their template says (read and kept; the first of each kind)")
        for number, name, f in odd.reported:
            out.line(f"-- {name} event #{number}")
            out.findings([f])
        if odd.unreported:
            out.line(f"   ... and {plural(odd.unreported, 'event')} of kinds past the first {len(odd.seen):,}")
    skipped_rules = sorted(r for r, (ok, _why) in RULES_APPLY.items() if not ok)
    out.line("\n== Summary")
    out.line(f"adapters: {len(adapters)}")
    for entry, section in sections:
        section.summary(out, tracker, entry)
        for what, n in (tracker.notes.get(entry.event) or {}).items():
            out.line(f"   {plural(n, 'event')} {what}")
        if tracker.partial.get(entry.event):
            out.line(f"   {plural(tracker.partial[entry.event], 'event')} lacked fields of the template: read, not "
                     f"applied")
    others = {name: n for name, n in tracker.counts.items() if name not in ENTRIES}
    for name in sorted(others):
        out.line(f"{name}: {plural(others[name], 'event')}, read and tabled (no catalog entry keeps its state)")
    wide = tracker.pointer_note(header_pointers(reader))
    if wide:
        out.line(f"pointers: {wide}")
    back = tracker.back
    if back.count:
        number, time, before = back.first
        out.line(f"times that go back: {plural(back.count, 'event')} whose time is before the time of the event before "
                 f"them, each read in the order given (the first: event #{number} at {time_text(time)}, after "
                 f"{time_text(before)})")
    if back.unread:
        number, time = back.first_unread
        out.line(f"times not read: {plural(back.unread, 'event')} whose time is no instant this reader knows (ISO "
                 f"8601 with a zone), empty in every output (the first: event #{number}, {shown(time, 80)})")
    if odd.events:
        out.line(f"{odd.tally()}, each kind reported once above")
    out.line(f"rules not applied to trace values ({len(skipped_rules)}): " + ", ".join(skipped_rules))
    out.line("   why: see d3dkmddi_py.etw.RULES_APPLY; " + "; ".join(
        f"{key}: {REASONS[key]}" for key in sorted({RULES_APPLY[r][1] for r in skipped_rules})))
    return out.errors, odd
