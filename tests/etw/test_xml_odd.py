"""XML events odd in one value (the hostile review of the every-event change, findings 2, 3, 7, 13 and 14): each is
kept and reported, the events around it read, exit status 1, by the fast path and by expat alike; what damages an
event's header (an <EventID> or <Version> that is no such number) is refused in one line naming the file, the event
and the element; a record a user gives is refused in one line of the package's own exception."""
from __future__ import annotations

import json
import struct
import sys

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import D3dkmddiError, EtwInputError
from d3dkmddi_py.etw.model import dxgkrnl_manifest
from d3dkmddi_py.etw.model.registry import ENTRIES, layout_of, manifest_event
from d3dkmddi_py.etw.model.templates import IN_TYPES
from d3dkmddi_py.samples import etl_build

from .helpers import alloc_fields, run, trace, tracerpt_event

NODE = {"pDxgAdapter": "0x10", "NodeOrdinal": "1", "EngineType": "2", "FriendlyName": "x"}  # 250 NodeMetadata
QUERY = {"MiniportContext": "0x1", "InterfaceType": "{12345678-1234-1234-1234-123456789abc}", "Status": "0"}  # 160
FAULT = {"hAllocationHandle": "0x1", "Reason": "1", "Write": "true"}  # 71 AllocationFault
WAIT = {"hContext": "0x1", "ObjectCount": "2", "ObjectArray": "0x1 0x2", "FenceValue": "5"}  # 100
PNP = {"DeviceObject": "0x1", "StackLocationSize": "2", "StackLocation": "0x0102", "Status": "0"}  # 126
BLT = {"FrameNumber": "-5", "FrontOfQueue": "false"}  # 1071 BltQueueEntryStart
BIG = "9" * 5000  # past int()'s 4,300 digits


def budget(**over) -> dict:
    fields = {f.name: "1" for f in manifest_event(366).fields}  # VidMmProcessBudgetChange (an entry's event)
    fields.update(over)
    return fields


def twice(event: str, name: str, value: str) -> str:
    """The event with its <Data Name=name> given once more."""
    return event.replace("\t</EventData>", f'\t\t<Data Name="{name}">{value}</Data>\r\n\t</EventData>')


def without_data(event: str) -> str:
    """The event without its <EventData> element (as Event Viewer writes an event with no fields)."""
    start, end = event.index("\t<EventData>"), event.index("</EventData>") + len("</EventData>\r\n")
    return event[:start] + event[end:]


def undecoded(event: str, element: str) -> str:
    """The event with ``element`` where its <EventData> was (tracerpt's forms of an event it could not decode)."""
    start, end = event.index("\t<EventData>"), event.index("</EventData>") + len("</EventData>")
    return event[:start] + "\t" + element + event[end:]


# case -> (the odd event, the fields it keeps unread as (name, the text as given))
UNREAD = {
    "uint32_of_4294967296": (tracerpt_event(250, dict(NODE, NodeOrdinal="4294967296")), ("NodeOrdinal", "4294967296")),
    "uint32_not_a_number": (tracerpt_event(250, dict(NODE, NodeOrdinal="one")), ("NodeOrdinal", "one")),
    "uint32_negative": (tracerpt_event(250, dict(NODE, NodeOrdinal="-1")), ("NodeOrdinal", "-1")),
    "uint32_of_5000_digits": (tracerpt_event(250, dict(NODE, NodeOrdinal=BIG)), ("NodeOrdinal", BIG)),
    "pointer_past_64_bits": (tracerpt_event(250, dict(NODE, pDxgAdapter="0x1FFFFFFFFFFFFFFFF")),
                             ("pDxgAdapter", "0x1FFFFFFFFFFFFFFFF")),
    "pointer_of_5000_digits": (tracerpt_event(250, dict(NODE, pDxgAdapter=BIG)), ("pDxgAdapter", BIG)),
    "pointer_of_5000_hex_digits": (tracerpt_event(250, dict(NODE, pDxgAdapter="0x" + "f" * 5000)),
                                   ("pDxgAdapter", "0x" + "f" * 5000)),
    "scalar_given_twice": (twice(tracerpt_event(250, NODE), "EngineType", "3"), ("EngineType", "2 | 3")),
    "string_given_twice": (twice(tracerpt_event(250, NODE), "FriendlyName", "y"), ("FriendlyName", "x | y")),
    "guid_not_a_guid": (tracerpt_event(160, dict(QUERY, InterfaceType="not-a-guid")), ("InterfaceType", "not-a-guid")),
    "boolean_minus_1": (tracerpt_event(71, dict(FAULT, Write="-1")), ("Write", "-1")),
    "boolean_yes": (tracerpt_event(71, dict(FAULT, Write="yes")), ("Write", "yes")),
    "boolean_0x100000000": (tracerpt_event(71, dict(FAULT, Write="0x100000000")), ("Write", "0x100000000")),
    "boolean_of_5000_digits": (tracerpt_event(71, dict(FAULT, Write=BIG)), ("Write", BIG)),
    "array_fewer_values_than_count": (tracerpt_event(100, dict(WAIT, ObjectCount="3")), ("ObjectArray", "0x1 0x2")),
    "array_more_values_than_count": (tracerpt_event(100, dict(WAIT, ObjectCount="1")), ("ObjectArray", "0x1 0x2")),
    "array_value_not_a_number": (tracerpt_event(100, dict(WAIT, ObjectArray="0x1 zz")), ("ObjectArray", "0x1 zz")),
    "array_value_of_5000_digits": (tracerpt_event(100, dict(WAIT, ObjectCount="1", ObjectArray=BIG)),
                                   ("ObjectArray", BIG)),
    "array_count_unreadable": (tracerpt_event(100, dict(WAIT, ObjectCount="two")), ("ObjectCount", "two"),
                               ("ObjectArray", "0x1 0x2")),
    "binary_odd_hex_digits": (tracerpt_event(126, dict(PNP, StackLocationSize="1", StackLocation="0x010")),
                              ("StackLocation", "0x010")),
    "binary_not_hex": (tracerpt_event(126, dict(PNP, StackLocationSize="1", StackLocation="zz")),
                       ("StackLocation", "zz")),
    "binary_of_another_length_than_its_length_field": (tracerpt_event(126, dict(PNP, StackLocationSize="4")),
                                                       ("StackLocation", "0x0102")),
    "value_map_name_unknown": (tracerpt_event(366, budget(NewVisibilityState="NoSuchName")),
                               ("NewVisibilityState", "NoSuchName")),
    "bit_map_name_unknown": (tracerpt_event(33, alloc_fields(Flags="CpuVisible|Bogus")), ("Flags", "CpuVisible|Bogus")),
    "int32_written_as_0xffffffff": (tracerpt_event(1071, dict(BLT, FrameNumber="0xFFFFFFFF")),
                                    ("FrameNumber", "0xFFFFFFFF")),
    "int32_negative_of_5000_digits": (tracerpt_event(1071, dict(BLT, FrameNumber="-" + BIG)),
                                      ("FrameNumber", "-" + BIG)),
    "process_id_of_2_to_the_70": (tracerpt_event(250, NODE).replace('ProcessID="4"', f'ProcessID="{2 ** 70}"'),
                                  ("System/ProcessID", str(2 ** 70))),
    "process_id_of_5000_digits": (tracerpt_event(250, NODE).replace('ProcessID="4"', f'ProcessID="{BIG}"'),
                                  ("System/ProcessID", BIG)),
    "thread_id_not_a_number": (tracerpt_event(250, NODE).replace('ThreadID="8"', 'ThreadID="t8"'),
                               ("System/ThreadID", "t8")),
    "binary_event_data_odd_digits": (undecoded(tracerpt_event(250, NODE), "<BinaryEventData>0102A</BinaryEventData>"),
                                     ("BinaryEventData", "0102A")),
    "binary_event_data_not_hex": (undecoded(tracerpt_event(250, NODE), "<BinaryEventData>zz</BinaryEventData>"),
                                  ("BinaryEventData", "zz")),
}
GOOD = tracerpt_event(33, alloc_fields(), opcode=1)


def read_both(data: bytes) -> list:
    """The events of a trace, the fast path's and expat's alike, read in chunks of any size."""
    fast = list(etw.read(data))
    assert list(etw.read(data, fast=False)) == fast
    for size in (7, 333):
        assert list(etw.TraceReader(data, chunk_size=size)) == fast
    return fast


def reports(event) -> list:
    return [f.rule_id for f in etw.Tracker().odd.take(event)]


@pytest.mark.parametrize("case", sorted(UNREAD))
def test_an_xml_value_its_in_type_cannot_read_is_kept_unread_and_the_trace_read(case, tmp_path):
    odd_event, *unread = UNREAD[case]
    events = read_both(trace(GOOD, odd_event, GOOD))
    assert [e.number for e in events] == [1, 2, 3] and events[0].odd is None and events[2].odd is None
    e = events[1]
    assert e.odd.unread == tuple(unread)
    assert not any(name in e.fields for name, _text in unread)
    assert "ETW.FIELD_UNREADABLE" in reports(e)
    if all(name.startswith("System/") for name, _t in unread):  # a header's id unknown: every field still read
        assert e.odd.whole and e.fields == {n: e.fields[n] for n in NODE} and (e.process_id is None or
                                                                                e.thread_id is None)
    else:
        assert not e.odd.whole  # its entry does not apply it
    p = tmp_path / "t.xml"
    p.write_bytes(trace(GOOD, odd_event, GOOD))
    out, status = run([str(p), "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and len(lines) == 3 and lines[1]["unread"] == dict(unread)


def test_a_data_element_without_a_name_is_kept_as_a_name_the_template_lacks():
    odd = tracerpt_event(250, NODE).replace('<Data Name="EngineType">', "<Data>")
    (e,) = read_both(trace(odd))
    assert e.extra == {"": "2"} and e.odd.names == ("",) and e.odd.missing == ("EngineType",)
    (longer,) = [f for f in etw.Tracker().odd.take(e) if f.rule_id == "ETW.PAYLOAD_LONGER"]
    assert "a <Data> without a Name, which the template lacks, kept as text" in longer.message
    assert read_both(trace(tracerpt_event(250, NODE).replace('<Data Name="EngineType">', '<Data Name="">')))[0] \
        .extra == {"": "2"}  # the same on the fast path, which reads Name=""


def test_processing_error_data_keeps_its_event_payload_as_the_payload():
    odd = undecoded(tracerpt_event(250, NODE), "<ProcessingErrorData><ErrorCode>15003</ErrorCode><DataItemName>"
                                               "</DataItemName><EventPayload>0102</EventPayload></ProcessingErrorData>")
    (e,) = read_both(trace(odd))
    assert (e.fields, e.odd.payload, e.odd.why) == ({}, b"\x01\x02", "tracerpt")
    assert reports(e) == ["ETW.UNDECODED"] and "its payload (2 bytes) kept as hex" in \
        etw.Tracker().odd.take(e)[0].message


def test_binary_event_data_that_is_not_hex_is_kept_as_given_and_reported():
    for text in ("0102A", "zz", "0x", "01 0"):
        (e,) = read_both(trace(undecoded(tracerpt_event(250, NODE), f"<BinaryEventData>{text}</BinaryEventData>")))
        if text == "0x":
            assert e.odd.payload == b"" and e.odd.unread == ()
            continue
        assert e.odd.payload is None and e.odd.unread == (("BinaryEventData", text),)
        assert reports(e) == ["ETW.UNDECODED", "ETW.FIELD_UNREADABLE"]
    (e,) = read_both(trace(undecoded(tracerpt_event(250, NODE), "<BinaryEventData></BinaryEventData>")))
    assert e.odd.payload == b"" and e.odd.unread == ()


def test_an_event_without_a_template_written_without_event_data_reads_as_its_etl_twin():
    """Every id the manifest gives no template, and an id or a version it lacks: the XML without <EventData> and
    with an empty one read as the .etl event with an empty payload (before: tracerpt's UNDECODED, exit 1)."""
    empty = [eid for eid, row in sorted(dxgkrnl_manifest.EVENTS.items()) if row[6] is None]
    assert empty  # the manifest has such events
    cases = [(etw.KINDS[eid], None) for eid in empty] + [(etw.KINDS[250], 9), (None, None)]
    for kind, version in cases:
        if kind is None:  # an id the manifest does not have
            etl_event = etl_build.EtlEvent(etw.PROVIDER_GUID, 60001, 0, b"", keyword=0x40)
            xml = tracerpt_event(60001, {})
        else:
            etl_event = etl_build.dxgkrnl_event(kind, {}, version=version) if version is None else \
                etl_build.EtlEvent(etw.PROVIDER_GUID, kind.event_id, version, b"", task=kind.task, keyword=0x40)
            xml = tracerpt_event(kind.event_id, {}, version=version)
        (from_etl,) = etw.read(etl_build.etl_bytes([etl_event]))
        for form in (xml, without_data(xml)):
            (from_xml,) = read_both(trace(form))
            assert (from_xml.event_id, from_xml.version, from_xml.fields, from_xml.odd) == \
                (from_etl.event_id, from_etl.version, from_etl.fields, from_etl.odd), (kind, version, form)
        assert (from_etl.odd is None) == (version is None and kind is not None)


def test_an_event_with_a_template_written_without_event_data_reads_as_an_empty_etl_payload():
    (e,) = read_both(trace(without_data(tracerpt_event(250, NODE))))
    assert e.fields == {} and e.odd.missing == tuple(NODE) and e.odd.why == ""
    assert reports(e) == ["ETW.PAYLOAD_SHORTER"]


# ---- an event's header: refused in one line naming the file, the event and the element
HEADER = {
    "event_id_70000": ("<EventID>250</EventID>", "<EventID>70000</EventID>",
                       "System/EventID = '70000' is out of range (valid 0..65535, the event header's USHORT)"),
    "event_id_65536": ("<EventID>250</EventID>", "<EventID>65536</EventID>", "System/EventID = '65536' is out of range"),
    "event_id_of_30_digits": ("<EventID>250</EventID>", f"<EventID>{'9' * 30}</EventID>",
                              f"System/EventID = '{'9' * 30}' is out of range"),
    "event_id_of_5000_digits": ("<EventID>250</EventID>", f"<EventID>{BIG}</EventID>",
                                "System/EventID = '99999999999999999999"),
    "event_id_negative": ("<EventID>250</EventID>", "<EventID>-1</EventID>", "System/EventID = '-1' is out of range"),
    "version_not_a_number": ("<Version>0</Version>", "<Version>x</Version>",
                             "System/Version = 'x' is not a number (valid 0..255, the event header's UCHAR)"),
    "version_256": ("<Version>0</Version>", "<Version>256</Version>", "System/Version = '256' is out of range"),
    "version_2_to_the_64": ("<Version>0</Version>", f"<Version>{2 ** 64}</Version>",
                            f"System/Version = '{2 ** 64}' is out of range"),
    "version_of_5000_digits": ("<Version>0</Version>", f"<Version>{BIG}</Version>", "System/Version = '999"),
}


@pytest.mark.parametrize("case", sorted(HEADER))
def test_an_event_header_value_that_is_not_one_refuses_in_one_line_naming_file_event_and_element(case, tmp_path):
    old, new, says = HEADER[case]
    p = tmp_path / "t.xml"
    p.write_bytes(trace(GOOD, tracerpt_event(250, NODE).replace(old, new), GOOD))
    for fast in (True, False):
        with pytest.raises(EtwInputError) as info:
            list(etw.read(p, fast=fast))
        message = str(info.value)
        assert message.startswith(f"{p}: event #2") and says in message and "\n" not in message, message
        assert "EventKind" not in message and len(message) < 400 and info.value.event == 2
    from d3dkmddi_py.cli import main
    assert main(["etw", str(p)]) == 2


def test_an_id_of_the_event_header_in_range_but_without_a_template_is_kept():
    for old, new in (("<Version>0</Version>", "<Version>255</Version>"), ("<EventID>250</EventID>",
                                                                          "<EventID>0xFFFF</EventID>")):
        (e,) = read_both(trace(tracerpt_event(250, NODE).replace(old, new)))
        assert e.odd.why in ("version", "id") and reports(e) == ["ETW.NO_TEMPLATE"]


# ---- a record a user gives: refused in one line, the package's exception, the value bounded, the range
RECORD_REFUSED = {
    "uint32_of_5000_digits": ({"event": 250, "fields": dict(NODE, NodeOrdinal=BIG)},
                              "field NodeOrdinal = '99999", "is out of range for UInt32 (valid 0..0xffffffff)"),
    "pointer_of_5000_digits": ({"event": 250, "fields": dict(NODE, pDxgAdapter=BIG)},
                               "field pDxgAdapter = '9999", "(valid 0..0xffffffffffffffff)"),
    "boolean_of_5000_digits": ({"event": 71, "fields": dict(FAULT, Write=BIG)}, "field Write = '9999",
                               "is not a Boolean (true, false, 0 or 1)"),
    "array_value_of_5000_digits": ({"event": 100, "fields": dict(WAIT, ObjectCount="1", ObjectArray=BIG)},
                                   "field ObjectArray = '9999", "(valid 0..0xffffffffffffffff)"),
    "int32_negative_of_5000_digits": ({"event": 1071, "fields": dict(BLT, FrameNumber="-" + BIG)},
                                      "field FrameNumber = '-9999", "(valid -2147483648..0x7fffffff)"),
    "version_of_5000_digits": ({"event": 250, "version": BIG, "fields": NODE}, "field version = '9999",
                               "(valid 0..0xff)"),
    "uint32_negative": ({"event": 250, "fields": dict(NODE, NodeOrdinal="-1")}, "field NodeOrdinal = '-1'",
                        "is out of range for UInt32 (valid 0..0xffffffff)"),
    "uint32_not_a_number": ({"event": 250, "fields": dict(NODE, NodeOrdinal="one")}, "field NodeOrdinal = 'one'",
                            "is not a number (UInt32: decimal or 0x-hex, valid 0..0xffffffff)"),
    "binary_of_another_length_than_its_length_field": (
        {"event": 126, "fields": dict(PNP, StackLocationSize="4")}, "field StackLocation holds 2 bytes",
        "but StackLocationSize = 4 (a Binary has exactly as many as its length field says)"),
}


@pytest.mark.parametrize("case", sorted(RECORD_REFUSED))
def test_a_record_a_user_gives_is_refused_in_one_line_of_the_packages_exception(case):
    record, names, says = RECORD_REFUSED[case]
    with pytest.raises(EtwInputError) as info:
        list(etw.from_records([record]))
    message = str(info.value)
    assert message.startswith("record #1 (") and names in message and says in message, message
    assert "\n" not in message and len(message) < 400 and isinstance(info.value, D3dkmddiError)
    kind = etw.KINDS[record["event"]]
    with pytest.raises(EtwInputError):
        etw.Event(1, kind, record.get("version", kind.version), record["fields"])


# ---- the guards: every sibling of the classes above
SPELLINGS = ("zz", BIG, "-" + BIG, "0x" + "f" * 40, "-1", "0x", "1e3", "\u0661", "1_000", "0x100000000000000000",
             "+1", "true false", "nan")


def _layouts() -> list:
    """(event id, version, fields) of every template a reader decodes: the manifest's and its entries' versions."""
    out = [(eid, k.version, layout_of(eid, k.version) or ()) for eid, k in sorted(etw.KINDS.items())]
    for entry in ENTRIES.values():
        out += [(eid, v, fields) for eid in entry.ids for v, fields in sorted(entry.layouts.items())]
    return out


def _refs(fields) -> set:
    return {g.count for g in fields if g.count is not None} | {g.length for g in fields if g.length is not None}


IN_TYPE_CASES = sorted({(f.in_type, f.count is not None) for _e, _v, fields in _layouts() for f in fields
                        if f.name not in _refs(fields)})


def _event_with(in_type: str, counted: bool) -> tuple:
    """(event id, version, fields, field) of the first template with a field of ``in_type`` (a counted array's when
    ``counted``) that is no other field's count or length."""
    return next((eid, v, fields, f) for eid, v, fields in _layouts() for f in fields
                if f.in_type == in_type and (f.count is not None) == counted and f.name not in _refs(fields))


def _texts(fields, values: dict) -> dict:
    """Every field's text: ``values``' or a readable one (a length 0 with an empty Binary, a count 1)."""
    counts, lengths = {g.count for g in fields}, {g.length for g in fields}
    out = {}
    for f in fields:
        kind = IN_TYPES[f.in_type].kind
        text = "0" if f.name in lengths else "1" if f.name in counts else {
            "bool": "true", "guid": QUERY["InterfaceType"], "binary": "", "unicode": "x", "ansi": "x"}.get(kind, "1")
        out[f.name] = values.get(f.name, text)
    return out


@pytest.mark.parametrize("in_type, counted", IN_TYPE_CASES, ids=[f"{t}{'[]' if c else ''}" for t, c in IN_TYPE_CASES])
def test_every_in_type_given_a_text_it_cannot_read_keeps_the_event(in_type, counted):
    """For each in-type a template holds, as a scalar and in a counted array: texts no in-type reads as a value of
    its width (a word, 5,000 digits, 40 hex digits, a sign, an exponent, an Arabic digit, "1_000"...) leave the
    event kept with the field unread, the trace read on and the two paths equal; the XML reader reads a text exactly
    when a record with it is read, and a record it refuses raises EtwInputError, never a builtin exception."""
    event_id, version, fields, f = _event_with(in_type, counted)
    for text in SPELLINGS:
        values = {f.name: text}
        if counted:
            values[f.count] = str(len(text.split()))
        raw = _texts(fields, values)
        if counted:  # the arrays it shares its count with: as many readable values
            raw.update({g.name: " ".join([raw[g.name]] * int(values[f.count])) for g in fields
                        if g.count == f.count and g is not f})
        events = read_both(trace(GOOD, tracerpt_event(event_id, raw, version=version), GOOD))
        assert len(events) == 3 and events[0].odd is events[2].odd is None, text
        e = events[1]
        record = [{"event": event_id, "version": version, "fields": raw}]
        if f.name in e.fields:  # a text its in-type reads (any text for a string, "1e3" for a Float)
            assert list(etw.from_records(record))[0].fields[f.name] == e.fields[f.name]
            continue
        assert dict(e.odd.unread)[f.name] == text and "ETW.FIELD_UNREADABLE" in reports(e), (in_type, text, e.odd)
        with pytest.raises(EtwInputError):
            list(etw.from_records(record))


@pytest.fixture
def int_digits_640():
    """Python's int() from text limited to 640 digits (the least it takes): any conversion of a long decimal text
    that is not bounded first raises ValueError."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    yield
    sys.set_int_max_str_digits(old)


def test_no_decimal_text_of_an_xml_event_reaches_int_unbounded(int_digits_640):
    long = "9" * 1000
    header = [tracerpt_event(250, NODE).replace(old, new.replace(BIG, long)) for old, new, _says in HEADER.values()]
    for event, *_unread in UNREAD.values():
        events = read_both(trace(GOOD, event.replace(BIG, long), GOOD))
        assert len(events) == 3
    for event in header:
        with pytest.raises(EtwInputError):
            list(etw.read(trace(event)))
    for record, *_says in RECORD_REFUSED.values():
        record = json.loads(json.dumps(record).replace(BIG, long))
        with pytest.raises(EtwInputError):
            list(etw.from_records([record]))
    with pytest.raises(EtwInputError):
        list(etw.from_records([{"event": long, "fields": {}}]))


def test_every_length_field_is_a_binarys_and_every_count_a_numbers():
    """The XML reader checks a Binary against its length field and a counted array against its count: the
    manifest's and the entries' templates have no other lengths (a string's would need its own check)."""
    seen = set()
    layouts = [layout_of(eid, k.version) or () for eid, k in etw.KINDS.items()]
    layouts += [fields for entry in ENTRIES.values() for fields in entry.layouts.values()]
    for fields in layouts:
        for f in fields:
            if f.length is not None:
                seen.add(("length", f.in_type))
            if f.count is not None:
                seen.add(("count", IN_TYPES[f.in_type].kind))
    assert {what for what, _t in seen} == {"length", "count"}
    assert {t for what, t in seen if what == "length"} == {"Binary"}
    assert {t for what, t in seen if what == "count"} <= {"int", "pointer", "bool"}


def test_no_template_field_is_named_as_a_system_value_is():
    """Unread System values are named "System/ProcessID": no field of any template holds a "/"."""
    names = {f.name for eid, k in etw.KINDS.items() for f in (layout_of(eid, k.version) or ())}
    names |= {f.name for entry in ENTRIES.values() for fields in entry.layouts.values() for f in fields}
    assert names and not [n for n in names if "/" in n]


def test_an_xml_binary_and_its_etl_twin_agree():
    """DpiDispatchPnpStart's StackLocation: .etl places it by StackLocationSize; XML of the same bytes reads the
    same, and XML whose hex disagrees with its length is unread (.etl cannot hold such an event)."""
    kind = etw.KINDS[126]
    payload = struct.pack("<QH", 1, 2) + b"\x01\x02" + struct.pack("<I", 5)
    e = etl_build.EtlEvent(etw.PROVIDER_GUID, kind.event_id, kind.version, payload, task=kind.task, keyword=0x40)
    (from_etl,) = etw.read(etl_build.etl_bytes([e]))
    (from_xml,) = read_both(trace(tracerpt_event(126, dict(PNP, Status="5"))))
    assert from_xml.fields == from_etl.fields and from_xml.odd is from_etl.odd is None
