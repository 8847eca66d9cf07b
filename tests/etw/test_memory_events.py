"""The events that say where memory is (residency, process usage and budget, placements, priority
changes, and the device allocations that resolve their handles): read from .etl files and XML alike,
decoded exactly (pointers per event, Booleans 4 bytes, value maps, counted arrays, unknown versions kept
undecoded and reported), their state, their findings, and their twins."""
from __future__ import annotations

import json
import uuid

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw.catalog import ENTRIES, TEMPLATES
from d3dkmddi_py.etw.model.schema import PROVIDER_GUID
from d3dkmddi_py.samples import etl_build
from d3dkmddi_py.semantics.allocation import priority_checks
from d3dkmddi_py.semantics.checks import CHECKS
from d3dkmddi_py.semantics.engine import leaves_read
from d3dkmddi_py.etw.model.registry import layout_of
from tests.etw.etl_twin import Dxg, outputs, twin
from tests.etw.helpers import ADAPTER, run, trace, tracerpt_event
from tests.etw.memory_story import (BUDGET, COMMITTED, DEVICE, DEVICE_START, DEVICE_STOP, GLOBAL, NEW_KINDS,
                                    PRIORITY, RESIDENT, RUNDOWN, SEGMENT, START, STOP, USAGE, budget, committed,
                                    device, resident, rundown, story, usage)


# ---- twins: the same events as an .etl file and as tracerpt XML
@pytest.mark.parametrize("variant", [dict(), dict(pointer_size=4), dict(compress=True, processors=3)],
                         ids=["x64", "32-bit", "compressed"])
def test_the_memory_events_as_etl_and_as_xml_give_identical_text_json_and_tables(variant, monkeypatch, tmp_path):
    items = story()
    if variant.get("pointer_size") == 4:
        for item in items:
            for f in layout_of(item.kind.event_id, item.version):
                if f.in_type == "Pointer":
                    item.fields[f.name] &= 0xFFFFFFFF
    etl, xml = twin(items, **variant)
    from_etl = outputs(etl, monkeypatch, tmp_path / "etl")
    from_xml = outputs(xml.encode("ascii"), monkeypatch, tmp_path / "xml")
    assert from_etl == from_xml
    text, status = from_xml["text"]
    assert status == 1 and "-- resident bytes per segment (TotalBytesResidentInSegment)" in text
    tables = from_xml["csv"][0]
    assert tables["placements.csv"].count(b"\n") == 4
    assert tables["residency.csv"].count(b"\n") == 4 and tables["process_memory.csv"].count(b"\n") == 5


# ---- state
def test_residency_usage_and_budget_are_series_per_key():
    _etl, xml = twin(story())
    (a,) = etw.adapters(etw.read(xml.encode())).values()
    assert list(a.resident) == [1, 3] and list(a.resident[1].values) == [0x100000, 0x300000]
    s = a.resident[1]
    assert (s.count, s.first, s.last, s.low, s.high) == (2, 0x100000, 0x300000, 0x100000, 0x300000)
    assert list(s.numbers) == [11, 12]  # the events' numbers: after the header event and 9 others
    assert sorted(a.usage) == [(8000, 0, 0), (8000, 0, 1)]
    assert list(a.usage[(8000, 0, 0)].values) == [0x200000, 0x600000]
    assert list(a.budget) == [(8000, 0, 0)] and a.budget[(8000, 0, 0)].last == 0x8000000


def test_without_series_only_the_summaries_are_kept():
    _etl, xml = twin(story())
    (a,) = etw.adapters(etw.read(xml.encode()), series=False).values()
    assert a.resident[1].numbers is None and a.resident[1].high == 0x300000 and a.resident[1].count == 2


def test_a_placement_outside_the_allocations_sets_is_a_warning_labelled_as_the_reading(monkeypatch):
    _etl, xml = twin(story())
    out, status = run(["-", "--json"], stdin=xml.encode(), monkeypatch=monkeypatch)
    lines = {o["number"]: o for o in map(json.loads, out.splitlines())}
    inside, outside, outside_too = lines[7], lines[8], lines[9]  # segment 1 (rundown), 2, 3
    assert inside["findings"] == [] and inside["adapter"] == f"0x{ADAPTER:x}" and inside["checked"]
    (f,) = outside["findings"]
    assert f["rule_id"] == "ALLOCINFO.COMMITTED_OUTSIDE_SETS" and f["severity"] == "warning"
    assert f["message"].startswith("committed to segment 2 at offset 0x2000, which is not in SupportedWriteSegmentSet "
                                   "= 0x5 (segments 1, 3) ([reading] ")
    assert outside_too["findings"] == []  # segment 3 is in the set
    rule = sem.RULES[f["rule_id"]]
    assert rule.reading and rule.source.kind is sem._rules.SourceKind.PAGE and "write operations" in rule.sentence


def test_a_placement_by_a_device_handle_needs_its_device_allocation(monkeypatch):
    items = story()
    del items[4]  # no DeviceAllocation: hAllocationHandle names nothing the trace showed
    _etl, xml = twin(items)
    out, _status = run(["-", "--json"], stdin=xml.encode(), monkeypatch=monkeypatch)
    committed_lines = [o for o in map(json.loads, out.splitlines()) if o["event"] == "ReportCommittedAllocation"]
    assert all(not o["checked"] and o["adapter"] is None and o["findings"] == [] for o in committed_lines)
    text, _status = run(["-"], stdin=xml.encode(), monkeypatch=monkeypatch)
    assert "   2 events named a device allocation (hVidMmAlloc) the trace did not show starting" in text


def test_a_device_allocation_that_stops_no_longer_resolves():
    items = story()[:6] + [Dxg(DEVICE_STOP, device())] + story()[6:]
    _etl, xml = twin(items)
    tracker = etw.Tracker()
    for e in etw.read(xml.encode()):
        tracker.apply(e)
    assert DEVICE not in tracker.part("DeviceAllocation")
    assert tracker.notes["ReportCommittedAllocation"] == {
        "named a device allocation (hVidMmAlloc) the trace did not show starting: DeviceAllocation events place it": 2}


def test_set_allocation_priority_is_held_to_the_priority_rules(monkeypatch):
    _etl, xml = twin(story())
    text, status = run(["-"], stdin=xml.encode(), monkeypatch=monkeypatch)
    assert status == 1
    assert "   priority set to 0x0, 0 is an invalid initial allocation priority (event #10, SetAllocationPriority " \
           "Info, EventID 46)\n   error ALLOCINFO.PRIORITY_ZERO AllocationPriority: AllocationPriority = 0; " \
           "use " in text
    assert "([reading] a priority set after the allocation was created, held to the rules of " \
           "AllocationPriority)" in text


def test_a_priority_change_of_an_allocation_the_trace_did_not_show_is_still_checked(monkeypatch):
    items = [Dxg(DEVICE_START, device()), Dxg(PRIORITY, dict(hAllocationHandle=DEVICE, Priority=0))]
    _etl, xml = twin(items)
    text, status = run(["-"], stdin=xml.encode(), monkeypatch=monkeypatch)
    assert status == 1 and "== Findings of events about no live record\n-- SetAllocationPriority Info, EventID 46 " \
                           "event #3: 1 error\n   error ALLOCINFO.PRIORITY_ZERO" in text


def test_the_tables_make_no_text_line_of_a_placement_or_priority_change(monkeypatch, tmp_path):
    """The line the text shows of an allocation's last placement and priority is made only for an allocation kept
    whole (the text, ``adapters()``), not for each event the tables read."""
    etl, _xml = twin(story())
    path = tmp_path / "story.etl"
    path.write_bytes(etl)
    from d3dkmddi_py.etw.catalog import set_allocation_priority

    def no_line(_priority):
        raise AssertionError("a text line made for the tables")
    monkeypatch.setattr(set_allocation_priority, "decode_priority", no_line)
    _out, status = run([str(path), "--format", "csv", "-o", str(tmp_path / "out")], monkeypatch=monkeypatch)
    assert status == 1 and (tmp_path / "out" / "priorities.csv").read_text().count("\n") == 2  # header, the change


def test_a_priority_and_the_sets_a_placement_reads_are_checked_once_per_value():
    """The per-event checks ask the rules once per distinct value; each caller gets its own list."""
    from d3dkmddi_py.semantics import allocation

    allocation._priority_findings.cache_clear()
    first, again = sem.check_priority(0), sem.check_priority(0)
    assert first == again and first is not again and [f.rule_id for f in first] == ["ALLOCINFO.PRIORITY_ZERO"]
    assert allocation._priority_findings.cache_info().hits == 1
    tracker = etw.Tracker()
    info = tracker.packer.record("DXGK_ALLOCATIONINFO", {**{n: 0 for n, _t in TEMPLATES["AdapterAllocation"][2]},
                                                         "dwReadSegment": 0x5, "dwWriteSegment": 0x5})
    allocation._placed_against.cache_clear()
    outside = [sem.check(sem.Placement(info, 2, offset, target=tracker.target)) for offset in (0x1000, 0x2000)]
    assert [f.message.split(", which")[0] for (f,) in outside] == ["committed to segment 2 at offset 0x1000",
                                                                   "committed to segment 2 at offset 0x2000"]
    assert allocation._placed_against.cache_info().hits == 1


def test_the_priority_rules_are_the_checks_that_read_AllocationPriority_alone():
    from d3dkmddi_py.layout import record_leaves, typedef_layout

    for abi, version in (("x64", 0x11007), ("x86", 0x1052)):
        present = {leaf.path for leaf in record_leaves(typedef_layout("DXGK_ALLOCATIONINFO", abi, version))}
        alone = [c for c in CHECKS["DXGK_ALLOCATIONINFO"](abi, version, None)
                 if leaves_read(c, present) == {"AllocationPriority"}]
        assert priority_checks(abi, version) == tuple(alone) and [c.rule_id for c in alone] == \
            ["ALLOCINFO.PRIORITY_ZERO"]
    assert sem.check_priority(0x78000000) == [] and [f.rule_id for f in sem.check_priority(0)] == \
        ["ALLOCINFO.PRIORITY_ZERO"]


# ---- decoding: XML forms
def _xml(*events) -> bytes:
    return trace(*events)


STAMPS = 185  # RecordQueuePacketTimestamps: the template whose four fields ReportCommittedAllocation once took


def stamps_fields(stamps=(0x10, 0x20), count=None) -> dict:
    return dict(hContext=0x77, FenceId=7, ProcessorFrequencyInMHz=3000,
                NumberOfTimestamps=len(stamps) if count is None else count, Timestamps=tuple(stamps))


def test_the_counted_array_reads_from_repeated_data_or_one_element():
    fields = stamps_fields((0x10, 0x20, 0x30))
    repeated = tracerpt_event(STAMPS, {k: v for k, v in fields.items() if k != "Timestamps"})
    repeated = repeated.replace("\t</EventData>", "".join(f'\t\t<Data Name="Timestamps">{v}</Data>\r\n'
                                                          for v in ("0x10", "32", "0x30")) + "\t</EventData>")
    one = tracerpt_event(STAMPS, dict(fields, Timestamps="0x10, 0x20 0x30"))
    got = [e.fields["Timestamps"] for e in etw.read(_xml(repeated, one))]
    assert got == [(0x10, 0x20, 0x30)] * 2
    assert [e.fields["Timestamps"] for e in etw.read(_xml(repeated, one), fast=False)] == got


@pytest.mark.parametrize("stamps, count", [("0x10 0x20", 3), ("0x10", 0)])
def test_a_counted_array_of_another_length_than_its_count_is_kept_unread(stamps, count):
    event = tracerpt_event(STAMPS, dict(stamps_fields(), NumberOfTimestamps=count, Timestamps=stamps))
    for fast in (True, False):
        (e,) = etw.read(_xml(event), fast=fast)
        assert e.odd.unread == (("Timestamps", stamps),) and e.fields["NumberOfTimestamps"] == count
        assert "Timestamps" not in e.fields
    n = len(stamps.split())
    with pytest.raises(EtwInputError, match=rf"record #1 \(RecordQueuePacketTimestamps Info, EventID 185\): field "
                                            rf"Timestamps holds {n} values? but NumberOfTimestamps = {count}"):
        list(etw.from_records([{"event": STAMPS, "fields": dict(stamps_fields(), NumberOfTimestamps=count,
                                                                   Timestamps=stamps)}]))


def test_a_counted_array_given_no_value_is_missing():
    (e,) = etw.read(_xml(tracerpt_event(STAMPS, dict(stamps_fields(), Timestamps=""))))
    assert e.odd.missing == ("Timestamps",) and e.fields["NumberOfTimestamps"] == 2


def test_a_field_that_is_not_an_array_given_twice_is_kept_unread():
    event = tracerpt_event(274, resident(1, 5), version=0).replace(
        "\t</EventData>", '\t\t<Data Name="SegmentId">2</Data>\r\n\t</EventData>')
    (e,) = etw.read(_xml(event))
    assert e.odd.unread == (("SegmentId", "1 | 2"),) and "SegmentId" not in e.fields
    with pytest.raises(EtwInputError, match="field SegmentId = '1 | 2' is given 2 times; a field that is not a counted "
                                            "array has one value"):
        list(etw.from_records([{"event": 274, "version": 0, "fields": dict(resident(1, 5), SegmentId=["1", "2"])}]))


def test_a_value_map_field_takes_its_names():
    by_name = tracerpt_event(366, dict(budget(5), MemorySegmentGroup="NonLocal ", NewVisibilityState="Occluded"),
                             version=0)
    (e,) = etw.read(_xml(by_name))
    assert (e.fields["MemorySegmentGroup"], e.fields["NewVisibilityState"]) == (1, 1)
    bad = dict(budget(5), MemorySegmentGroup="Remote")
    (e,) = etw.read(_xml(tracerpt_event(366, bad, version=0)))
    assert e.odd.unread == (("MemorySegmentGroup", "Remote"),)
    with pytest.raises(EtwInputError, match="MemorySegmentGroup = 'Remote' is not a number .* or a name of its value "
                                            r"map \(Local, NonLocal, NonBudget\)"):
        list(etw.from_records([{"event": 366, "version": 0, "fields": bad}]))


# ---- decoding: .etl
def _one(kind, fields, *, version=None, payload=None, pointer_size=8) -> bytes:
    e = etl_build.dxgkrnl_event(kind, fields, version=version, pointer_size=pointer_size, ticks=10)
    if payload is not None:
        e.payload = payload
    return etl_build.etl_bytes([e])


FIELDS_OF = {DEVICE_START.event: device(), COMMITTED.event: committed(1), RUNDOWN.event: rundown(1),
             PRIORITY.event: dict(hAllocationHandle=DEVICE, Priority=1), RESIDENT.event: resident(1, 5),
             USAGE.event: usage(5), BUDGET.event: budget(5)}


@pytest.mark.parametrize("kind", NEW_KINDS, ids=lambda k: f"{k.event}-{k.event_id}")
def test_an_unknown_version_of_each_new_event_is_kept_undecoded_and_reported(kind):
    data = bytearray(_one(kind, FIELDS_OF[kind.event]))
    data[data.index(uuid.UUID(PROVIDER_GUID.strip("{}")).bytes_le) + 18] = 9  # the EVENT_DESCRIPTOR's Version
    (e,) = etw.read(bytes(data))
    assert (e.number, e.version, e.fields, e.odd.why) == (2, 9, {}, "version")
    (f,) = etw.Tracker().odd.take(e)
    assert f.rule_id == "ETW.NO_TEMPLATE" and f"version 9 of event {kind.event_id}" in f.message


@pytest.mark.parametrize("pointer_size", [4, 8])
def test_each_new_event_reads_with_the_pointers_of_its_header(pointer_size):
    for kind in NEW_KINDS:
        types = {f.name: f.in_type for f in layout_of(kind.event_id, kind.version)}
        fields = {n: v & (1 << 8 * pointer_size) - 1 if types[n] == "Pointer" else v
                  for n, v in FIELDS_OF[kind.event].items()}
        (e,) = etw.read(_one(kind, fields, pointer_size=pointer_size))
        assert e.fields == {n: (bool(v) if isinstance(v, bool) else v) for n, v in fields.items()}, kind


def test_a_boolean_of_a_new_event_other_than_0_or_1_is_kept_and_reported():
    payload = bytearray(etl_build.dxgkrnl_payload(80, 0, committed(1)))
    payload[24] = 2  # Pinned: after three 8-byte pointers
    (e,) = etw.read(_one(COMMITTED, committed(1), payload=bytes(payload)))
    assert e.fields["Pinned"] == 2 and e.odd.booleans == ("Pinned",) and e.odd.whole
    (f,) = etw.Tracker().odd.take(e)
    assert (f.rule_id, f.field, f.value) == ("ETW.BOOLEAN_NOT_0_OR_1", "Pinned", 2)


def test_a_payload_shorter_than_its_counted_array_keeps_the_fields_before_it():
    payload = etl_build.dxgkrnl_payload(STAMPS, 0, stamps_fields())  # two timestamps
    (e,) = etw.read(_one(etw.KINDS[STAMPS], stamps_fields(), payload=payload[:-8]))
    assert e.odd.missing == ("Timestamps",) and e.fields["NumberOfTimestamps"] == 2 and e.odd.cut_at == len(payload) - 8
    (e,) = etw.read(_one(COMMITTED, committed(1), payload=etl_build.dxgkrnl_payload(80, 0, committed(1))[:40]))
    assert e.odd.missing == ("ulSegmentId", "SegmentOffset") and e.fields["Size"] == 0x10000


def test_every_new_event_is_in_the_catalog_once_with_its_manifest_template():
    """Read from the manifest (tests/etw/test_manifest.py holds them to its XML): id -> (task, template, version,
    field count)."""
    expected = {46: (29, "SetAllocationPriorityArgs", 0, 2), 80: (55, "ReportCommittedAllocationArgs", 0, 8),
                227: (131, "ReportCommittedGlobalAllocationDCStartArgs", 0, 3),
                274: (160, "TotalBytesResidentInSegmentArgs", 0, 3), 366: (218, "VidMmProcessBudgetChangeArgs", 0, 10),
                367: (219, "VidMmProcessUsageChangeArgs", 0, 6), 36: (22, "DeviceAllocationStartArgs_V1", 1, 12),
                37: (22, "DeviceAllocationStartArgs_V1", 1, 12), 38: (22, "DeviceAllocationStartArgs_V1", 1, 12)}
    for event_id, (task, template, version, count) in expected.items():
        kind = etw.KINDS[event_id]
        assert (kind.task, kind.template, kind.version, len(TEMPLATES[kind.event][version])) == \
            (task, template, version, count), event_id
    assert ENTRIES["ReportCommittedAllocation"].arrays == {}


def test_other_readers_records_of_the_new_events():
    records = [{"event": "ReportCommittedGlobalAllocationDCStart", "fields": rundown(1)},
               {"event": 274, "version": 0, "fields": resident(2, 7)},
               {"event": "DeviceAllocation", "opcode": "Stop", "version": 1, "fields": device()},
               {"event": "ReportCommittedAllocation", "fields": committed(1)},
               {"event": STAMPS, "fields": dict(stamps_fields(), Timestamps=[1, 2])}]
    got = list(etw.from_records(records))
    assert [e.kind.label for e in got] == ["ReportCommittedGlobalAllocation DCStart, EventID 227",
                                           "TotalBytesResidentInSegment Info, EventID 274",
                                           "DeviceAllocation Stop, EventID 37",
                                           "ReportCommittedAllocation Info, EventID 80",
                                           "RecordQueuePacketTimestamps Info, EventID 185"]
    assert got[4].fields["Timestamps"] == (1, 2) and got[1].adapter == ADAPTER and got[0].adapter is None
    with pytest.raises(EtwInputError, match="Timestamps holds 1 value but NumberOfTimestamps = 2"):
        list(etw.from_records([{"event": STAMPS, "fields": dict(stamps_fields(), Timestamps=[1])}]))
