"""A trace's own rules (ETW.*: an event that is not what its template says), each with a trace that breaks it and
one that keeps it, read from XML and from an .etl file: the event is kept, the finding is the rule's (its
severity, its sentence, the message naming the event), and the trace's other events are read."""
from __future__ import annotations

import io
import uuid

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.etw.model.registry import layout_of
from d3dkmddi_py.etw.readers import etlreader
from d3dkmddi_py.samples import etl_build
from tests.etw.helpers import alloc_fields, seg_fields, trace, tracerpt_event

START = etw.KINDS[33]
GOOD = tracerpt_event(78, seg_fields(1, 0x11))


def _etl(payload: bytes | None = None, *, version=None, event_id=None, header=None) -> bytes:
    e = etl_build.dxgkrnl_event(START, alloc_fields(), ticks=10)
    if payload is not None:
        e.payload = payload
    if version is not None:
        e.version = version
    if event_id is not None:
        e.event_id = event_id
    data = etl_build.etl_bytes([e])
    if header is not None:  # the DxgKrnl event's marker as another header kind (its GUID stays)
        out = bytearray(data)
        at = out.index(uuid.UUID(etw.PROVIDER_GUID.strip("{}")).bytes_le) - 24
        out[at + 2] = header
        data = bytes(out)
    return data


def _payload() -> bytes:
    return etl_build.dxgkrnl_payload(33, 2, alloc_fields())


def _boolean() -> bytes:
    p = bytearray(_payload())
    p[-2 - 8 - 4] = 3  # BackingStoreWasPinned
    return bytes(p)


def _binary_event_data() -> bytes:
    ev = tracerpt_event(33, alloc_fields())
    start, end = ev.index("\t<EventData>"), ev.index("</EventData>") + len("</EventData>")
    return trace(GOOD, ev[:start] + "\t<BinaryEventData>00FF</BinaryEventData>" + ev[end:])


def _node(name_utf16: bytes) -> bytes:
    """A NodeMetadata event (250) whose FriendlyName holds these UTF-16 units, ended by a NUL."""
    e = etl_build.dxgkrnl_event(etw.KINDS[250], {"pDxgAdapter": 0xFFFF800012340000, "NodeOrdinal": 1,
                                                 "EngineType": 2, "FriendlyName": "3D"}, ticks=10)
    e.payload = e.payload[:16] + name_utf16 + b"\0\0"
    return etl_build.etl_bytes([e])


CASES = [
    ("ETW.PAYLOAD_LONGER", "breaks", lambda: _etl(_payload() + b"\x01\x02")),
    ("ETW.PAYLOAD_LONGER", "breaks", lambda: trace(GOOD, tracerpt_event(33, dict(alloc_fields(), Later="1")))),
    ("ETW.PAYLOAD_LONGER", "keeps", lambda: _etl(_payload())),
    ("ETW.PAYLOAD_SHORTER", "breaks", lambda: _etl(_payload()[:-1])),
    ("ETW.PAYLOAD_SHORTER", "breaks", lambda: trace(GOOD, tracerpt_event(33, {"hProcessId": "0x4"}))),
    ("ETW.PAYLOAD_SHORTER", "keeps", lambda: trace(GOOD, tracerpt_event(33, alloc_fields()))),
    ("ETW.NO_TEMPLATE", "breaks", lambda: _etl(version=7)),
    ("ETW.NO_TEMPLATE", "breaks", lambda: _etl(event_id=60001)),
    ("ETW.NO_TEMPLATE", "breaks", lambda: trace(GOOD, tracerpt_event(33, alloc_fields(), version=9))),
    ("ETW.NO_TEMPLATE", "keeps", lambda: _etl(version=3, payload=_payload() + bytes(4))),  # version 3's evidence
    ("ETW.BOOLEAN_NOT_0_OR_1", "breaks", lambda: _etl(_boolean())),
    ("ETW.BOOLEAN_NOT_0_OR_1", "breaks", lambda: trace(GOOD, tracerpt_event(33, alloc_fields(BackingStoreWasPinned=2)))),
    ("ETW.BOOLEAN_NOT_0_OR_1", "keeps", lambda: trace(GOOD, tracerpt_event(33, alloc_fields(BackingStoreWasPinned=1)))),
    ("ETW.FIELD_UNREADABLE", "breaks", lambda: _node("\ud800".encode("utf-16-le", "surrogatepass"))),  # unpaired
    ("ETW.FIELD_UNREADABLE", "keeps", lambda: _node("\U0001f600".encode("utf-16-le"))),  # a pair: one character
    ("ETW.UNDECODED", "breaks", _binary_event_data),
    ("ETW.UNDECODED", "breaks", lambda: _etl(header=0x14)),  # a full (classic) header where an EVENT_HEADER goes
    ("ETW.UNDECODED", "keeps", lambda: _etl()),
]
ODD_RULES = sorted(r for r in sem.RULES if r.startswith("ETW."))


def test_every_rule_of_a_trace_has_a_breaking_and_a_keeping_case():
    covered = {(r, o) for r, o, _ in CASES}
    assert [f"{r}-{o}" for r in ODD_RULES for o in ("breaks", "keeps") if (r, o) not in covered] == []


@pytest.mark.parametrize("rule_id, outcome, make", CASES, ids=[f"{r}-{o}-{i}" for i, (r, o, _m) in enumerate(CASES)])
def test_odd_rule(rule_id, outcome, make):
    events = list(etw.read(make()))
    tracker = etw.Tracker()
    found = []
    for e in events:
        tracker._apply(e)
        found += [(e, f) for f in tracker.odd.take(e)]
    ids = [f.rule_id for _e, f in found]
    if outcome == "keeps":
        assert rule_id not in ids, [str(f) for _e, f in found]
        return
    assert rule_id in ids, ids
    event, f = next((e, f) for e, f in found if f.rule_id == rule_id)
    rule = sem.RULES[rule_id]
    assert f.severity is rule.severity is sem.Severity.WARNING and f.reference == sem.Reference(rule.page,
                                                                                                 rule.sentence)
    assert f.message.endswith(f"({sem.RULES[rule_id].source.note})" + (f" ([reading] {rule.reading})"
                                                                      if rule.reading else ""))
    assert event.odd is not None and len(events) >= 1


def test_a_newer_builds_string_of_another_length_in_each_event_is_one_report():
    """Bytes after the template's last field (a string a later build added, its length differing per event), and
    payloads cut at every byte of one field: one report per event, version and first missing field, every
    event counted; an XML <Data> name shown on one line, bounded."""
    base = etl_build.dxgkrnl_payload(33, 2, alloc_fields())
    events = []
    for n in range(1, 41):
        e = etl_build.dxgkrnl_event(START, alloc_fields(), ticks=10 + n)
        e.payload = base + bytes(n)
        events.append(e)
    for cut in range(3, 11):  # inside pSectionObject (8 bytes at 64 bits), before PhysicalAdapterIndex (2)
        e = etl_build.dxgkrnl_event(START, alloc_fields(), ticks=100 + cut)
        e.payload = base[:-cut]
        events.append(e)
    tracker = etw.Tracker()
    reports = [f for e in etw.read(etl_build.etl_bytes(events)) for f in tracker.odd.take(e)]
    assert [(f.rule_id, f.field) for f in reports] == [("ETW.PAYLOAD_LONGER", "extra_bytes"),
                                                       ("ETW.PAYLOAD_SHORTER", layout_of(33, 2)[-2].name)]
    assert tracker.odd.counts == {"ETW.PAYLOAD_LONGER": 40, "ETW.PAYLOAD_SHORTER": 8} and tracker.odd.events == 48
    forged = "Later&#10;FAKE: error ALLOCINFO.X" + "y" * 5000
    xml_reports = [f for e in etw.read(trace(GOOD, tracerpt_event(33, dict(alloc_fields(), **{forged: "1"}))))
                   for f in etw.Tracker().odd.take(e)]
    (f,) = xml_reports
    assert "\n" not in f.message and "FAKE" in f.message and len(f.message) < 600


def test_a_dxgkrnl_guid_on_a_classic_header_names_no_manifest_event():
    """A classic header's Type byte is an opcode, not an event id: Type 33 is not AdapterAllocationStart_V2, in
    the events read, the summary event by event and column-wise."""
    out = bytearray(_etl(header=0x14))
    out[out.index(uuid.UUID(etw.PROVIDER_GUID.strip("{}")).bytes_le) - 24 + 4] = 33  # the full header's Type
    data = bytes(out)
    (event,) = [e for e in etw.read(data) if e.odd is not None]
    assert (event.kind.symbol, event.kind.event, event.odd.why) == ("", "classic Type 33", "header")
    for columns in (True, False):
        found = etlreader.summary(io.BytesIO(data), "t.etl", columns=columns)["providers"]
        (dxg,) = [p for p in found if p["guid"] == etw.PROVIDER_GUID.strip("{}")]
        assert dxg["ids"] == {"classic 33": 1} and dxg["symbols"] == {"classic Type 33": 1}, dxg
