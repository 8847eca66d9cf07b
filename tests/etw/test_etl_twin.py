"""The same DxgKrnl events as an .etl file and as tracerpt XML give identical output: text, JSON and
every column format; and the .etl twin of the bundled sample reads as the sample does."""
from __future__ import annotations

import uuid

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError, InvalidArgument
from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.etw.model.schema import PROVIDER_GUID
from d3dkmddi_py.samples import etl_build
from tests.etw.etl_twin import DXGKRNL, KERNEL_PROCESS, Dxg, Other, outputs, sample_items, twin
from tests.etw.helpers import alloc_fields, run, seg_fields

START = KIND_BY_NAME[("AdapterAllocation", "Start")]
STOP = KIND_BY_NAME[("AdapterAllocation", "Stop")]
SEGMENT = KIND_BY_NAME[("ReportSegment", "Info")]
START_FIELDS = etw.ENTRIES["AdapterAllocation"].versions[2]


@pytest.mark.parametrize("variant", [
    dict(), dict(pointer_size=4), dict(compress=True), dict(processors=4, buffer_size=1024),
    dict(processors=1, compress=True, pointer_size=4)], ids=["x64", "32-bit", "compressed", "4-cpus", "one-cpu"])
def test_the_sample_as_etl_and_as_xml_gives_identical_output(variant, monkeypatch, tmp_path):
    etl, xml = twin(sample_items(variant.get("pointer_size", 8)), **variant)
    assert etl[:4] != b"<Eve"
    from_etl = outputs(etl, monkeypatch, tmp_path)
    from_xml = outputs(xml.encode("ascii"), monkeypatch, tmp_path)
    assert from_etl == from_xml
    assert from_etl["text"][1] == 1  # the sample's findings


def test_the_etl_twin_reads_as_the_bundled_sample(monkeypatch):
    """Apart from the file's name (line 1), the .etl twin's report is the bundled sample's."""
    etl, _xml = twin(sample_items(), compress=True)
    twin_text, twin_status = run(["-"], stdin=etl, monkeypatch=monkeypatch)
    sample_text, sample_status = run(["sample"])
    assert twin_text.split("\n", 1)[1] == sample_text.split("\n", 1)[1]
    assert twin_status == sample_status == 1
    assert [(e.number, e.fields) for e in etw.read(etl)] == [(e.number, e.fields) for e in etw.read(SAMPLE_PATH)]


def test_events_come_out_in_time_order_across_processors():
    """Processor 1's buffers are written before processor 0's: the reader merges them by time."""
    items = [Dxg(START, alloc_fields(hDxgGlobalAlloc=0x100 + i, hVidMmGlobalAlloc=0x200 + i)) for i in range(40)]
    etl, xml = twin(items, processors=2, buffer_size=512)
    read = list(etw.read(etl))
    assert [e.number for e in read] == list(range(2, 42))
    assert [e.fields["hDxgGlobalAlloc"] for e in read] == [0x100 + i for i in range(40)]
    assert read == list(etw.read(xml.encode()))


def test_version_3_adds_page_table_or_directory():
    fields = dict(alloc_fields(), PageTableOrDirectory=True)
    etl, xml = twin([Dxg(START, fields, version=3)])
    (event,) = etw.read(etl)
    assert event.version == 3 and event.fields["PageTableOrDirectory"] is True
    assert [event] == list(etw.read(xml.encode()))


def one_event(kind, fields, *, version=None, payload: bytes | None = None, pointer_size=8) -> bytes:
    e = etl_build.dxgkrnl_event(kind, fields, version=version, pointer_size=pointer_size, ticks=10)
    if payload is not None:
        e.payload = payload
    return etl_build.etl_bytes([e])


def test_an_unknown_version_is_kept_undecoded_and_reported():
    """A version neither the manifest nor an entry has refused the trace; the event is kept, its payload as it is,
    reported once (ETW.NO_TEMPLATE), and the events after it read."""
    data = _with_version(one_event(START, alloc_fields()), 9)
    (event,) = etw.read(data)
    assert (event.number, event.version, event.fields, event.odd.why) == (2, 9, {}, "version")
    assert event.odd.payload == etl_build.dxgkrnl_payload(33, 2, alloc_fields())
    (event,) = etw.read(_with_version(one_event(SEGMENT, seg_fields(1, 1)), 7))
    assert (event.version, event.odd.why) == (7, "version")
    (f,) = etw.Tracker().odd.take(event)
    assert f.rule_id == "ETW.NO_TEMPLATE" and "version 7 of event 78" in f.message


def _descriptor(data: bytes) -> int:
    """Where the first DxgKrnl event's EVENT_DESCRIPTOR starts (after its provider GUID)."""
    return data.index(uuid.UUID(PROVIDER_GUID.strip("{}")).bytes_le) + 16


def _with_version(data: bytes, version: int) -> bytes:
    out = bytearray(data)
    out[_descriptor(data) + 2] = version
    return bytes(out)


@pytest.mark.parametrize("cut, field", [(2, "PhysicalAdapterIndex"), (4, "pSectionObject"), (100, "dwReadSegment"),
                                        (142, "hProcessId")])
def test_a_short_payload_keeps_the_fields_before_the_cut_and_names_the_rest(cut, field):
    """A payload that ended early refused the trace; the fields before the cut are read, the field it ends in and
    those after are named missing (ETW.PAYLOAD_SHORTER), and its entry does not apply the event."""
    payload = etl_build.dxgkrnl_payload(33, 2, alloc_fields())
    data = one_event(START, alloc_fields(), payload=payload[:-cut])
    (event,) = etw.read(data)
    names = [n for n, _t in START_FIELDS]
    assert event.odd.missing == tuple(names[names.index(field):]) and event.odd.cut_at == len(payload) - cut
    assert list(event.fields) == names[:names.index(field)]
    tracker = etw.Tracker()
    tracker.apply(event)
    (f,) = tracker.odd.take(event)
    assert (f.rule_id, f.field, f.value) == ("ETW.PAYLOAD_SHORTER", field, len(payload) - cut)
    assert not tracker.adapters and tracker.partial == {"AdapterAllocation": 1}


def test_a_long_payload_keeps_every_field_and_the_bytes_after_them():
    """A payload that went on after its last field refused the trace; every field is read, the bytes after them
    kept as extra_bytes, the event applied, and reported (ETW.PAYLOAD_LONGER)."""
    payload = etl_build.dxgkrnl_payload(33, 2, alloc_fields())
    (event,) = etw.read(one_event(START, alloc_fields(), payload=payload + bytes.fromhex("01020304")))
    assert event.fields == etw.read(one_event(START, alloc_fields())).__iter__().__next__().fields
    assert event.odd.extra_bytes == bytes.fromhex("01020304") and event.odd.whole
    tracker = etw.Tracker()
    tracker.apply(event)
    (f,) = tracker.odd.take(event)
    assert (f.rule_id, f.field, f.value) == ("ETW.PAYLOAD_LONGER", "extra_bytes", 4) and tracker.adapters


def test_pointers_follow_the_events_own_header_flags():
    """A 32-bit process's events carry 4-byte pointers whatever the log-file header says."""
    fields = alloc_fields(hProcessId=0x1234, hDevice=0xFFFF0000, pDxgAdapter=0x8000_1000)
    (event,) = etw.read(one_event(START, fields, pointer_size=4))
    assert (event.fields["hProcessId"], event.fields["hDevice"], event.fields["pDxgAdapter"]) == \
        (0x1234, 0xFFFF0000, 0x8000_1000)
    with pytest.raises(InvalidArgument, match="field pDxgAdapter = 1099511627776 is not a Pointer \\(4-byte"):
        one_event(START, alloc_fields(pDxgAdapter=1 << 40), pointer_size=4)


def test_a_boolean_other_than_0_or_1_is_kept_as_its_number_and_reported():
    payload = bytearray(etl_build.dxgkrnl_payload(33, 2, alloc_fields()))
    payload[-2 - 8 - 4] = 2  # BackingStoreWasPinned, before pSectionObject (8) and PhysicalAdapterIndex (2)
    (event,) = etw.read(one_event(START, alloc_fields(), payload=bytes(payload)))
    assert event.fields["BackingStoreWasPinned"] == 2 and event.odd.booleans == ("BackingStoreWasPinned",)
    (f,) = etw.Tracker().odd.take(event)
    assert (f.rule_id, f.field, f.value) == ("ETW.BOOLEAN_NOT_0_OR_1", "BackingStoreWasPinned", 2)


def test_other_dxgkrnl_events_are_read_and_other_providers_counted():
    etl, _xml = twin([Other(DXGKRNL, 26, (1,)), Other(KERNEL_PROCESS, 1), Dxg(SEGMENT, seg_fields(1, 1))])
    reader = etw.read(etl)
    events = list(reader)
    assert [e.symbol for e in events] == ["AdapterDCStart", "ReportSegment_V1"]
    assert events[0].fields == {} and events[0].odd.missing[0] == "pDeviceObject"  # 4 bytes: not a whole pointer
    assert (reader.total, reader.decoded, reader.other_dxgkrnl, reader.other_providers) == (4, 2, 1, 2)
    facts = etw.summary(etl)
    assert facts["dxgkrnl_events"] == 2
    assert {p["guid"]: p["ids"] for p in facts["providers"]}[PROVIDER_GUID.strip("{}")] == {"26": 1, "78": 1}


def test_the_etl_builder_refuses_what_it_cannot_write_as_given_in_one_line():
    """samples.etl_build: a missing field, a value its in-type cannot hold, a count or length that disagrees with
    its values, an event past 64 KB, a pointer size or processor count that is none: InvalidArgument naming the
    event and field, never KeyError/struct.error or a payload that reads back as another."""
    node = {"pDxgAdapter": 1, "NodeOrdinal": 1, "EngineType": 2, "FriendlyName": "3D"}
    cases = [
        (250, {k: v for k, v in node.items() if k != "NodeOrdinal"}, {}, "field NodeOrdinal \\(UInt32\\) missing"),
        (250, dict(node, NodeOrdinal="one"), {}, "NodeOrdinal = 'one' is not a UInt32"),
        (250, dict(node, FriendlyName=5), {}, "FriendlyName = 5 is not a UnicodeString"),
        (250, dict(node, FriendlyName="x" * 40_000), {}, "an event holds at most"),
        (250, node, {"pointer_size": 2}, "pointer_size must be 4 or 8"),
        (250, node, {"version": 9}, "no template for event 250 version 9"),
        (100, {"hContext": 1, "ObjectCount": 1, "ObjectArray": (1, 2, 3), "FenceValue": 5}, {},
         "ObjectCount = 1 is not the count of ObjectArray \\(3\\)"),
        (126, {"DeviceObject": 1, "StackLocationSize": 4, "StackLocation": b"\1", "Status": 7}, {},
         "StackLocationSize = 4 is not the length of StackLocation \\(1\\)"),
    ]
    for event_id, fields, options, message in cases:
        with pytest.raises(InvalidArgument, match=message):
            etl_build.dxgkrnl_event(etw.KINDS[event_id], fields, **options)
    with pytest.raises(InvalidArgument, match="processors must be"):
        etl_build.etl_bytes([], processors=0)
