"""The XML reader: both writers' forms, every accepted spelling of a value, skipping and counting."""
from __future__ import annotations

import io

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError

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


def test_other_providers_and_ids_are_skipped_and_counted():
    data = trace(tracerpt_event(1, {"ProcessID": 4}, provider=OTHER),
                 tracerpt_event(26, {"pDxgAdapter": "0x1"}),
                 tracerpt_event(0, {"BufferSize": 1}, provider=(None, "{68fdd900-4a3e-11d1-84f4-0000f80464e3}")),
                 tracerpt_event(78, seg_fields(1, 0x11), version=1))
    r = etw.read(data)
    events = list(r)
    assert [e.number for e in events] == [4]
    assert (r.total, r.decoded, r.other_providers, r.other_dxgkrnl) == (4, 1, 2, 1)


def test_provider_by_guid_only_and_version_3_extra_field():
    f = alloc_fields(PageTableOrDirectory="true")
    e = next(iter(etw.read(trace(tracerpt_event(33, f, provider=(None, DXG_GUID), version=3)))))
    assert e.version == 3 and e.fields["PageTableOrDirectory"] is True


DXG_GUID = "{802EC45A-1E99-4B83-9920-87C98277BA9D}"


def test_stop_format_by_name_is_kept():
    e = next(iter(etw.read(trace(tracerpt_event(34, alloc_fields(Format="D3DDDIFMT_A8R8G8B8 "))))))
    assert e.fields["Format"] == "D3DDDIFMT_A8R8G8B8"


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
