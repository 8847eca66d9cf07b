"""The XML reader: both writers' forms, every accepted spelling of a value, skipping and counting."""
from __future__ import annotations

import io

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import D3dkmddiError, EtwInputError, ReadOnce
from d3dkmddi_py.samples import DIRECTORY

from . import etl_files
from .helpers import ADAPTER, alloc_fields, seg_fields, trace, tracerpt_event, viewer_event

OTHER = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")


def test_tracerpt_form_with_crlf_padding_and_hex_pointers():
    f = alloc_fields(Flags="       1", ulAlignment="   65536", hDxgGlobalAlloc="0xFFFFB80C4E600000",
                     BackingStoreWasPinned="false")
    events = list(etw.read(trace(tracerpt_event(33, f, opcode=1))))
    assert len(events) == 1
    e = events[0]
    assert (e.event, e.opcode, e.number, e.version) == ("AdapterAllocation", "Start", 1, 2)
    assert e.fields["Flags"] == etw.AllocationFlag.CpuVisible and isinstance(e.fields["Flags"], etw.AllocationFlag)
    assert e.fields["ulAlignment"] == 65536 and e.fields["hDxgGlobalAlloc"] == 0xFFFFB80C4E600000
    assert e.fields["BackingStoreWasPinned"] is False and e.adapter == ADAPTER
    assert e.time == "2026-11-23T10:00:00.000000001+0100" and e.process_id == 4


def test_event_viewer_form_single_quotes_one_line_lowercase_hex():
    f = alloc_fields(hDxgGlobalAlloc="0xffffb80c4e600000", BackingStoreWasPinned="true")
    data = ("<Events>" + viewer_event(35, f) + viewer_event(78, seg_fields(1, 0x11)) + "</Events>").encode()
    events = list(etw.read(data))
    assert [(e.event, e.opcode) for e in events] == [("AdapterAllocation", "DCStart"), ("ReportSegment", "Info")]
    assert events[0].fields["hDxgGlobalAlloc"] == 0xFFFFB80C4E600000
    assert events[0].fields["BackingStoreWasPinned"] is True and events[1].fields["Flags"] == 0x11


@pytest.mark.parametrize("text, value", [
    ("CpuVisible|Cached", 0x5), ("CpuVisible, Cached", 0x5), ("CpuVisible Cached ", 0x5),
    ("Shareable | Primary", 0x60000000), ("0x60000001", 0x60000001), ("  1610612737", 0x60000001),
])
def test_bit_map_names_or_numbers(text, value):
    e = next(iter(etw.read(trace(tracerpt_event(33, alloc_fields(Flags=text))))))
    assert e.fields["Flags"] == value


@pytest.mark.parametrize("text, value", [("true", True), ("false", False), ("1", True), ("0", False),
                                         ("TRUE", True)])
def test_booleans(text, value):
    e = next(iter(etw.read(trace(tracerpt_event(33, alloc_fields(BackingStoreWasPinned=text))))))
    assert e.fields["BackingStoreWasPinned"] is value


def test_usage_flags_by_name():
    e = next(iter(etw.read(trace(tracerpt_event(33, alloc_fields(UsageFlags="MipMap|Cube"))))))
    assert e.fields["UsageFlags"] == etw.UsageFlag.MipMap | etw.UsageFlag.Cube


def test_other_providers_are_skipped_and_counted_and_every_dxgkrnl_event_is_read():
    """Event 26 (AdapterDCStart), which no entry reads, was skipped; it is read from its template now (this one gives
    one field of it: the others are named missing)."""
    data = trace(tracerpt_event(1, {"ProcessID": 4}, provider=OTHER),
                 tracerpt_event(26, {"pDxgAdapter": "0x1"}),
                 tracerpt_event(0, {"BufferSize": 1}, provider=(None, "{68fdd900-4a3e-11d1-84f4-0000f80464e3}")),
                 tracerpt_event(78, seg_fields(1, 0x11), version=1))
    r = etw.read(data)
    events = list(r)
    assert [e.number for e in events] == [2, 4]
    assert events[0].symbol == "AdapterDCStart" and events[0].fields == {"pDxgAdapter": 1}
    assert "pDeviceObject" in events[0].odd.missing
    assert (r.total, r.decoded, r.other_providers, r.other_dxgkrnl) == (4, 2, 2, 1)


def test_provider_by_guid_only_and_version_3_extra_field():
    f = alloc_fields(PageTableOrDirectory="true")
    e = next(iter(etw.read(trace(tracerpt_event(33, f, provider=(None, DXG_GUID), version=3)))))
    assert e.version == 3 and e.fields["PageTableOrDirectory"] is True


DXG_GUID = "{802EC45A-1E99-4B83-9920-87C98277BA9D}"


def test_stop_format_by_name_is_read_through_the_manifests_value_map():
    """The Stop template names Format by the manifest's D3DFormat value map: the name was kept as text, it is now
    the number the map gives it (and --json names it beside the number)."""
    e = next(iter(etw.read(trace(tracerpt_event(34, alloc_fields(Format="D3DDDIFMT_A8R8G8B8 "))))))
    assert e.fields["Format"] == 0x15


def test_sources_path_binary_and_text_files(tmp_path):
    data = trace(tracerpt_event(33, alloc_fields()))
    p = tmp_path / "t.xml"
    p.write_bytes(data)
    for src in (p, str(p), io.BytesIO(data), io.StringIO(data.decode()), data):
        assert [e.number for e in etw.read(src)] == [1]


def test_small_chunks_give_the_same_events():
    data = trace(*[tracerpt_event(33, alloc_fields(hDxgGlobalAlloc=i + 1)) for i in range(20)])
    got = [e.fields["hDxgGlobalAlloc"] for e in etw.TraceReader(data, chunk_size=7)]
    assert got == list(range(1, 21))


def test_single_event_document():
    data = tracerpt_event(78, seg_fields(2, 0x24), version=1).encode()
    assert [e.fields["ulSegmentId"] for e in etw.read(data)] == [2]


def _read_one(number: int = 1):
    return list(etw.read(trace(tracerpt_event(33, alloc_fields(), opcode=1))))[number - 1]


def test_an_event_built_by_hand_is_checked_as_a_record_is_and_equals_the_readers():
    """etw.Event(...) took anything: a hand-built Event with a text Size or no fields reached the per-event code
    (Tracker.apply, the tables) and failed there.  Its constructor now reads its fields as from_records does."""
    e = _read_one()
    values = {name: getattr(e, name) for name in etw.Event.__slots__}
    assert etw.Event(**values) == e
    text = {**e.fields, "allocSize": "0x10000", "Flags": "CpuVisible"}  # the forms from_records takes
    assert etw.Event(**{**values, "fields": text}).fields == {**e.fields, "allocSize": 0x10000,
                                                              "Flags": etw.AllocationFlag.CpuVisible}
    refused = {
        "number": (0, r"^Event: number must be an integer 1\.\.0x7fffffffffffffff, not 0$"),
        "kind": ("AdapterAllocation", r"^Event: kind must be an EventKind of an event registered now \(a value of "
                                      r"etw\.KINDS\), not 'AdapterAllocation'$"),
        "version": (256, r"^Event #1 \(AdapterAllocation Start, EventID 33\): field version = 256 is out of range "
                         r"for UInt8 \(valid 0\.\.0xff\)$"),
        "fields": ({"allocSize": 1}, r"^Event #1 \(AdapterAllocation Start, EventID 33\): \d+ of the \d+ fields of "
                                     r"AdapterAllocationStartArgs_V2 missing or None: "),
        "time": (1.5, r"^Event: time must be the event's time as text \(ISO 8601\), or None, not 1\.5$"),
        "process_id": (1 << 32, r"^Event: process_id must be an integer 0\.\.0xffffffff, not 4294967296$"),
        "thread_id": ("7", r"^Event: thread_id must be an integer 0\.\.0xffffffff, not '7'$"),
        "extra": ([1], r"^Event: extra must be a dict of the fields this package does not know by their names "
                       r"\(strs\), or None, not \[1\]$"),
        "source": (b"t", r"^Event: source must be the trace's name \(a str\), or None, not b't'$"),
    }
    for name, (value, message) in refused.items():
        with pytest.raises(D3dkmddiError, match=message):
            etw.Event(**{**values, name: value})
    with pytest.raises(D3dkmddiError, match=r"^Event: extra must be a dict .*; it holds 1$"):
        etw.Event(**{**values, "extra": {1: "x"}})
    with pytest.raises(EtwInputError, match=r"^Event #1 \(AdapterAllocation Start, EventID 33\): field allocSize = "
                                            r"'ten' is not a number \(UInt64: decimal or 0x-hex, valid 0\.\.0xffffffffffffffff\)$"):
        etw.Event(**{**values, "fields": {**e.fields, "allocSize": "ten"}})
    with pytest.raises(D3dkmddiError, match=r"^Event #1 \(AdapterAllocation Start, EventID 33\): field 'Bogus' is "
                                            r"not one of AdapterAllocationStartArgs_V2 \(.*\); give a field this "
                                            r"package does not know in extra$"):
        etw.Event(**{**values, "fields": {**e.fields, "Bogus": 1}})


def test_a_hand_built_event_of_an_unregistered_kind_is_refused_where_it_is_built():
    kind = etw.EventKind(61001, "MadeUp", "Info", 61001, 0, "MadeUpArgs")
    with pytest.raises(EtwInputError, match=r"^Event: kind is MadeUp Info, EventID 61001, not an event registered "
                                            r"now \(ReportSegment, .*\): etw\.register its entry first$"):
        etw.Event(1, kind, 0, {})


def test_an_event_kind_is_checked_when_built():
    with pytest.raises(D3dkmddiError, match=r"^EventKind: opcode must be one of 'Info', 'Start', 'Stop', 'DCStart', "
                                            r"not 'start'$"):  # (or "opcode N", an id the manifest does not have)
        etw.EventKind(33, "AdapterAllocation", "start", 21, 2, "AdapterAllocationStartArgs_V2")
    with pytest.raises(D3dkmddiError, match=r"^EventKind: event_id must be an integer 0\.\.0xffff, not 65536$"):
        etw.EventKind(1 << 16, "AdapterAllocation", "Start", 21, 2, "AdapterAllocationStartArgs_V2")


def test_from_records_checks_a_records_time_and_ids():
    """A record's time, process_id and thread_id went into its Event unchecked (a process id "x" reached the
    tables' integer column)."""
    record = {"event": 33, "fields": alloc_fields(), "time": "2026-11-23T10:00:00Z", "process_id": 4, "thread_id": 8}
    (event,) = etw.from_records([record])
    assert (event.time, event.process_id, event.thread_id) == ("2026-11-23T10:00:00Z", 4, 8)
    for name, value in (("time", 5), ("process_id", "x"), ("thread_id", -1)):
        with pytest.raises(D3dkmddiError, match=rf"^record #1 \(AdapterAllocation Start, EventID 33\): {name} must "):
            list(etw.from_records([{**record, name: value}]))


def test_a_field_value_of_another_kind_is_named_in_one_line():
    """A record's field holding an array printed the array's repr over lines (found building an Event by hand)."""
    import numpy as np

    with pytest.raises(EtwInputError, match=r"^record #1 \(AdapterAllocation Start, EventID 33\): field allocSize = "
                                            r"array\(\[ 0, 1, 2, .*\.\.\. is a ndarray, not a number \(UInt64, valid "
                                            r"0\.\.0xffffffffffffffff\)$"):
        list(etw.from_records([{"event": 33, "fields": alloc_fields(allocSize=np.arange(100))}]))


def test_a_trace_reader_chunk_size_is_a_positive_int_up_to_what_one_read_takes():
    """TraceReader(chunk_size=1.5) reached stream.read() and raised Python's TypeError there."""
    assert len(list(etw.TraceReader(trace(tracerpt_event(33, alloc_fields(), opcode=1)), chunk_size=7))) == 1
    for size in (1.5, 0, 1 << 31):
        with pytest.raises(D3dkmddiError, match=r"^TraceReader: chunk_size must be an integer 1\.\.0x7fffffff, not "):
            etw.TraceReader(b"", chunk_size=size)


def test_an_event_pickles_and_copies_without_its_checks():
    """An Event travels (a process pool, copy) through the readers' unchecked constructor: an event whose entry
    was unregistered since still arrives."""
    import copy
    import pickle

    e = _read_one()
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(e, protocol)) == e
    assert copy.copy(e) == e and copy.deepcopy(e) == e
    assert etw.Event.__reduce__(e)[0] == etw.Event._new


def test_from_records_takes_ids_symbols_and_names():
    recs = [{"event": 78, "version": 1, "fields": seg_fields(1, 0x11)},
            {"event": "AdapterAllocationStart_V2", "fields": alloc_fields()},
            {"event": "AdapterAllocation", "opcode": "Stop", "version": 2, "fields": alloc_fields(Flags="0x1")}]
    events = list(etw.from_records(recs))
    assert [(e.event, e.opcode, e.number) for e in events] == [("ReportSegment", "Info", 1),
                                                                ("AdapterAllocation", "Start", 2),
                                                                ("AdapterAllocation", "Stop", 3)]
    with pytest.raises(EtwInputError, match=r"record #1 .*field allocSize"):
        list(etw.from_records([{"event": 33, "fields": alloc_fields(allocSize=-1)}]))
    with pytest.raises(EtwInputError, match=r"record #1: event 'Nope'"):
        list(etw.from_records([{"event": "Nope", "fields": {}}]))


@pytest.mark.parametrize("source", [DIRECTORY / "etw_trace.xml", etl_files.read("SelfDescribingSingleEvent")],
                         ids=["xml", "etl"])
def test_a_trace_reader_iterated_twice_is_the_packages_error_saying_to_read_again(source):
    """It keeps no events; the second pass was Python's RuntimeError (still one: ReadOnce is both)."""
    reader = etw.read(source)
    first = list(reader)
    with pytest.raises(ReadOnce, match=r"a TraceReader is iterated once \(it keeps no events\); call etw\.read\(\) "
                                       r"again for another pass, or keep the events") as error:
        list(reader)
    assert isinstance(error.value, D3dkmddiError) and isinstance(error.value, RuntimeError)
    assert len(list(etw.read(source))) == len(first)


def test_every_pointer_field_of_every_template_above_4_gb_is_said_at_a_4_byte_target():
    """The guard for the siblings of --abi x86 on a 64-bit trace: each Pointer field of each entry's templates (and
    of the manifest's other events) alone above 4 GB is counted, and one that fits 4 bytes is not."""
    from d3dkmddi_py.etw.catalog import KINDS
    from d3dkmddi_py.etw.model.events import Event
    from d3dkmddi_py.etw.model.registry import layout_of
    from d3dkmddi_py.etw.model.templates import IN_TYPES
    from d3dkmddi_py.etw.model.tracker import WidePointers

    checked = 0
    for event_id, kind in KINDS.items():
        template = layout_of(event_id, kind.version) or ()
        for f in template:
            if IN_TYPES[f.in_type].kind != "pointer":
                continue
            for value, said in ((1 << 32, True), (0xFFFFFFFF, False)):
                wide = WidePointers()
                fields = {f.name: [value] if f.count is not None else value}
                wide.take(Event._new(7, kind, kind.version, fields, None, 4, 8, {}, None))
                assert (wide.count, wide.first) == ((1, (7, f.name, value)) if said else (0, None)), f.name
            checked += 1
    assert checked > 50
