"""The reports of events that are not what their template says (an ``Odd`` on the Event): one finding of its own
rule for the first event of each kind of oddity (an event id and version with bytes after its template, or with
<Data> names it lacks; a first missing field; a Boolean or an unreadable field by name; an id or version without a
template), every such event counted.  The kinds are bounded by the manifest's templates, never by what an event
holds (a length, a name), so a trace of a newer Windows build whose events each carry a string of another length
is one report and a count, and every event read."""
from __future__ import annotations

from ...errors import listed, shown
from ...semantics._rules import finding
from ...wording import plural

LONGER, SHORTER, NO_TEMPLATE, BOOLEAN, UNREADABLE, UNDECODED = (
    "ETW.PAYLOAD_LONGER", "ETW.PAYLOAD_SHORTER", "ETW.NO_TEMPLATE", "ETW.BOOLEAN_NOT_0_OR_1", "ETW.FIELD_UNREADABLE",
    "ETW.UNDECODED")
RULES = (LONGER, SHORTER, NO_TEMPLATE, BOOLEAN, UNREADABLE, UNDECODED)
KEYS_KEPT = 1024  # kinds of oddity reported; past them, events are counted and the text says how many
_WHY = {"version": "version {version} of event {id}, which neither the manifest nor its entry has a template for",
        "id": "event id {id}, which the manifest does not have",
        "header": "a DxgKrnl event on a classic header, not the EVENT_HEADER a manifest event has",
        "tracerpt": "tracerpt wrote it without its fields (no schema, or a decode error)"}


def _name(event) -> str:
    return event.kind.symbol or event.kind.event


def findings(event) -> list:
    """(key, Finding) of each way the event is not what its template says."""
    odd, kind = event.odd, event.kind
    out = []
    where = f"{_name(event)} version {event.version}"
    if odd.why:
        rule = UNDECODED if odd.why in ("header", "tracerpt") else NO_TEMPLATE
        held = f"its payload ({plural(len(odd.payload), 'byte')}) kept as hex" if odd.payload is not None else \
            f"its {len(odd.names)} <Data> kept as text" if odd.names else "nothing of it decoded"
        what = _WHY[odd.why].format(version=event.version, id=kind.event_id)
        out.append(((rule, kind.event_id, event.version, odd.why),
                    finding(rule, "payload", kind.event_id, f"{what}: {held}")))
        return out + _unread(event, where)  # its <BinaryEventData> when not hex, a System value
    if odd.missing:
        cut = f"the payload ends after {plural(odd.cut_at, 'byte')}, before" if odd.cut_at is not None else "XML has no"
        out.append(((SHORTER, kind.event_id, event.version, odd.missing[0]),
                    finding(SHORTER, odd.missing[0], odd.cut_at or 0,
                            f"{where}: {cut} {_list(odd.missing)}; the fields before are read")))
    if odd.extra_bytes:
        out.append(((LONGER, kind.event_id, event.version, "extra_bytes"),
                    finding(LONGER, "extra_bytes", len(odd.extra_bytes),
                            f"{where}: {plural(len(odd.extra_bytes), 'byte')} after the template's last field, kept as "
                            f"extra_bytes (each event's own in its row)")))
    if odd.names:
        out.append(((LONGER, kind.event_id, event.version, "names"),
                    finding(LONGER, "names", len(odd.names),
                            f"{where}: {_list(odd.names)}, which the template lacks, kept as text")))
    for name in odd.booleans:
        value = _odd_value(event.fields.get(name))
        out.append(((BOOLEAN, kind.event_id, event.version, name),
                    finding(BOOLEAN, name, value if isinstance(value, int) else 0,
                            f"{where}: Boolean field {name} = {shown(value, 40)}, neither 0 nor 1: kept as its "
                            f"number")))
    return out + _unread(event, where)


def _unread(event, where: str) -> list:
    return [((UNREADABLE, event.kind.event_id, event.version, name),
             finding(UNREADABLE, name, len(text), f"{where}: field {name} = {shown(text, 60)}, which its in-type "
                                                  f"cannot read: kept as given, the other fields read"))
            for name, text in event.odd.unread]


def _odd_value(value):
    """The value of a Boolean that is neither 0 nor 1 (of an array of them, the largest such)."""
    if isinstance(value, tuple):
        odd = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
        return max(odd) if odd else value
    return value


def _list(names) -> str:
    return listed((shown(n, 60)[1:-1] if isinstance(n, str) and n else "a <Data> without a Name" if n == "" else
                   shown(n, 60) for n in names), 6)


class OddReports:
    """What a reading reports of its odd events: a finding for the first of each kind, every one counted."""

    def __init__(self):
        self.seen: set = set()
        self.counts: dict = {}  # rule id -> events
        self.events = 0  # odd events, each once
        self.reported: list = []  # (event number, event name, Finding) of each report, for the text (the first ones)
        self.unreported = 0  # kinds past KEYS_KEPT

    def tally(self) -> str:
        """How many events were odd, by rule: the words every output says them in."""
        return f"events not as their template says: {self.events:,} (" + \
            ", ".join(f"{rule} {n:,}" for rule, n in sorted(self.counts.items())) + ")"

    def take(self, event) -> list:
        """The findings to report for one event (none for an event that is what its template says, or whose kind of
        oddity was reported already)."""
        if event.odd is None:
            return []
        self.events += 1
        out = []
        for key, f in findings(event):
            self.counts[f.rule_id] = self.counts.get(f.rule_id, 0) + 1
            if key in self.seen:
                continue
            if len(self.seen) >= KEYS_KEPT:
                self.unreported += 1
                continue
            self.seen.add(key)
            out.append(f)
            if len(self.reported) < 10_000:
                self.reported.append((event.number, _name(event), f))
        return out
