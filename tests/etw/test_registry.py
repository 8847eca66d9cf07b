"""An event is one entry: a made-up event registered at test time is read, tabled and shown by every
reader and output (XML by both paths, .etl event by event and column-wise, text, --json, tables) with
no other change, and is gone again once unregistered; a bad entry is refused before it changes anything."""
from __future__ import annotations

import json

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.model import registry
from d3dkmddi_py.etw.catalog import KIND_BY_NAME, KINDS, TEMPLATES
from d3dkmddi_py.etw.model.state import SERIES_GROUPS
from d3dkmddi_py.etw.model.registry import Column, EventEntry, Mapping, TableSpec, field_columns
from d3dkmddi_py.etw.outputs.tables import table_names
from tests.etw.etl_readings import tables
from tests.etw.etl_twin import Dxg, outputs, twin
from tests.etw.helpers import ADAPTER, alloc_fields, seg_fields

NAME = "VSyncDPCMultiPlane"  # event 273: no catalog entry reads it; the test gives it one
ID = 273
FIELDS = registry.manifest_fields(ID)  # pointer, numbers, and two counted arrays, one in the middle
ARRAYS = ("ScannedPhysicalAddress", "FlipSubmitSequence")


def made_up(**over) -> EventEntry:
    """An entry for an event of the manifest no entry reads (its counted arrays, no state change): whole."""
    fields = dict(event=NAME, ids=(ID,), mapping=tuple(Mapping(NAME, n, None, None, "made up for the test")
                                                       for n, _t in FIELDS),
                  adapter="pDxgAdapter",
                  table=TableSpec("vsync_planes", field_columns(FIELDS, skip=("pDxgAdapter",), arrays=ARRAYS)))
    fields.update(over)
    return EventEntry(**fields)


VALUES = dict(pDxgAdapter=ADAPTER, PlaneCount=2, ScannedPhysicalAddress=(3, 1 << 40), VidPnSourceId=1, FrameNumber=7,
              FlipEntryCount=1, FlipSubmitSequence=(9,))


def items() -> list:
    return [Dxg(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x0), version=1), Dxg(KINDS[ID], VALUES),
            Dxg(KIND_BY_NAME[("AdapterAllocation", "Start")], alloc_fields())]


def test_an_event_given_an_entry_is_in_every_output_and_read_as_before_without_it(monkeypatch, tmp_path):
    with registry.registered(made_up()):
        etl, xml = twin(items())
        xml = xml.encode("ascii")
        events = {source: list(etw.read(data, fast=fast)) for source, data, fast in
                  (("xml", xml, True), ("expat", xml, False), ("etl", etl, True))}
        assert events["xml"] == events["expat"]
        assert [(e.number, e.fields) for e in events["xml"]] == [(e.number, e.fields) for e in events["etl"]]
        made = next(e for e in events["etl"] if e.event == NAME)
        assert made.fields == VALUES and made.adapter == ADAPTER
        got = outputs(etl, monkeypatch, tmp_path / "etl")
        assert got == outputs(xml, monkeypatch, tmp_path / "xml")
        text = got["text"][0]
        assert f"{NAME} ({ID}): 1 event, read and tabled; this package keeps no state of them" in text
        (line,) = [o for o in map(json.loads, got["json"][0].splitlines()) if o["event"] == NAME]
        assert line["fields"] == {"pDxgAdapter": f"0x{ADAPTER:x}", "PlaneCount": 2,
                                  "ScannedPhysicalAddress": ["0x3", "0x10000000000"], "VidPnSourceId": 1,
                                  "FrameNumber": 7, "FlipEntryCount": 1, "FlipSubmitSequence": ["0x9"]}
        assert line["record"] is None and line["symbol"] == NAME
        # typed as its fields' in-types say: the time to the nanosecond (a FILETIME's 100 ns), ms from the header
        # event (2 x 1,234 ticks of 100 ns), the pointer 0x..., a counted array its values
        assert got["csv"][0]["vsync_planes.csv"] == (
            b"number,time,ms,opcode,process,adapter,PlaneCount,ScannedPhysicalAddress,VidPnSourceId,FrameNumber,"
            b"FlipEntryCount,FlipSubmitSequence,errors,warnings\n3," + made.time[:-1].encode() + b"00Z,0.2468,Info,8000,"
            + f"0x{ADAPTER:x}".encode() + b",2,0x3 0x10000000000,1,7,1,0x9,0,0\n")
        assert tables(etl, tmp_path, True) == tables(etl, tmp_path, False)  # column-wise as event by event
        assert "vsync_planes" in table_names()
    assert NAME not in etw.ENTRIES and KINDS[ID].event == NAME and "vsync_planes" not in table_names()
    reader = etw.read(xml)  # without its entry: read from the manifest's template, tabled by its symbol
    assert [e.event for e in reader] == ["ReportSegment", NAME, "AdapterAllocation"] and reader.other_dxgkrnl == 1
    assert [e.fields for e in etw.read(xml) if e.event == NAME] == [VALUES]


@pytest.mark.parametrize("change, says", [
    (dict(ids=(78,)), "event id 78 is ReportSegment Info"),
    (dict(ids=(60000,)), "event id 60000 is not an event of the Microsoft-Windows-DxgKrnl manifest"),
    (dict(ids=(273, 272)), "has another template or version than 273"),
    (dict(event="NodeMetadata"), "the name is the symbol of event 250, which is not among its ids"),
    (dict(mapping=()), "MAPPING must name every field of every version once"),
    (dict(adapter="Nothing"), "the adapter field Nothing is not a field"),
    (dict(newer=(registry.Newer(1, (("Huge", "UInt128"),), (("../shared/x", "y"),)),)),
     "field Huge has in-type 'UInt128'"),
    (dict(newer=(registry.Newer(1, (("More", "UInt32"),), ()),)), "newer version 1 names no evidence"),
    (dict(newer=(registry.Newer(0, (("More", "UInt32"),), (("../shared/x", "y"),)),)),
     "newer version 0 is the manifest's"),
    (dict(table=TableSpec("segments")), "table segments is ReportSegment's, with other columns"),
    (dict(table=TableSpec("vsync_planes", field_columns(FIELDS))),
     "table column ScannedPhysicalAddress reads field ScannedPhysicalAddress, a counted array of UInt64: its kind must "
     "be text, not hex"),
    (dict(table=TableSpec("../made_up")), r"table name '\.\./made_up' must be letters, digits and _ \(it names a file"),
    (dict(table=TableSpec("findings")), "table name 'findings' must be letters, digits and _ .*not findings or "
                                        "undecoded"),
    (dict(table=TableSpec("NodeMetadata")), "table name 'NodeMetadata' .*not an event's symbol"),
    (dict(table=TableSpec("made_up", (), ("segment descriptor",))),
     r"table mirror 'segment descriptor' is not a mirror type .* or is packed from another entry's events "
     r"\(ReportSegment\)"),
    (dict(batched=True), "a batched event without a mirror record is applied column-wise by its track"),
    (dict(unchecked=("Stop",)), r"unchecked names an opcode its ids do not have \(Info\)"),
    (dict(json_names={"Nothing": "Flags.Value"}), "json_names names a field the templates lack"),
    (dict(rules=("NO.SUCH_RULE",)), "rule NO.SUCH_RULE is not a rule id"),
    (dict(bit_maps={"FrameNumber": etw.AllocationFlag}), "bit_maps names FrameNumber, which the manifest names by no "
                                                         "bit map"),
    (dict(mapping=tuple(Mapping(NAME, n, None, "Size" if n == "PlaneCount" else None, "made up") for n, _t in FIELDS)),
     "a mirror member with its mirror type, or neither"),
    (dict(table=TableSpec("made_up", (Column("x", "int", field="Nothing"),))),
     "table column Nothing reads a field the templates lack"),
    (dict(apply=lambda tracker: None), r"apply must be a function of \(tracker, event\) or None"),
    (dict(mapping=tuple(Mapping(NAME, n, *(("DXGK_ALLOCATIONINFO", "Sise") if n == "PlaneCount" else (None, None)),
                                "made up") for n, _t in FIELDS)),
     "MAPPING's PlaneCount fills DXGK_ALLOCATIONINFO.Sise, which is a leaf of it at no target"),
], ids=["id taken", "id not in the manifest", "ids of two templates", "name of another event", "mapping", "adapter",
        "in-type", "newer without evidence", "newer is the manifest's", "table taken", "array column",
        "table name a path", "table name findings", "table name a symbol", "mirror of another event",
        "batched without records", "unchecked opcode", "json_names field", "unknown rule", "bit map the manifest lacks",
        "mirror without its type", "column field", "apply's arguments", "mirror leaf at no target"])
def test_a_bad_entry_is_refused_and_changes_nothing(change, says):
    before = (dict(KINDS), {k: dict(v) for k, v in TEMPLATES.items()}, table_names())
    with pytest.raises(ValueError, match=says):
        registry.register(made_up(**change))
    assert (dict(KINDS), {k: dict(v) for k, v in TEMPLATES.items()}, table_names()) == before


def test_the_trackers_interface_refuses_the_right_kind_of_value_with_the_wrong_meaning():
    """sample() takes only a series group an entry declares (not "segments", an adapter's own dict or attribute);
    keep_loose only findings; Packer.pack only an event whose fields fill the record: each in one clear line."""
    from d3dkmddi_py.errors import InvalidArgument
    from d3dkmddi_py.etw.model.tracker import Tracker
    from tests.etw.helpers import alloc_fields, seg_fields

    tracker = Tracker()
    segment = etw.Event(1, etw.KINDS[78], 1, seg_fields(1, 0x11))
    allocation = etw.Event(2, etw.KINDS[33], 2, alloc_fields())
    for group in ("segments", "allocations", "parts", "__dict__", ["resident"]):
        with pytest.raises(InvalidArgument, match="Tracker.sample: group"):
            tracker.sample(allocation, group, 1, 5)
    adapter = tracker.adapter(allocation.adapter)
    assert set(adapter.series) <= SERIES_GROUPS and "__dict__" not in vars(adapter)["series"]
    group = sorted(SERIES_GROUPS)[0]
    tracker.sample(allocation, group, 1, 5)  # a declared group is taken
    assert [(s.count, s.last) for s in adapter.series[group].values()] == [(1, 5)]
    with pytest.raises(InvalidArgument, match="Tracker.keep_loose: findings"):
        tracker.keep_loose(allocation, [1, 2, 3])
    with pytest.raises(InvalidArgument, match="Packer.pack: event.*lacks"):
        tracker.packer.pack("DXGK_ALLOCATIONINFO", segment)


def test_an_odd_given_to_an_event_is_checked_and_reported_without_an_exception():
    """Odd() refuses a why, cut_at or names of the wrong kind in one line; one naming a Boolean the event lacks is
    reported as given, never a KeyError inside the reports."""
    from d3dkmddi_py.errors import InvalidArgument
    from d3dkmddi_py.etw.model.events import Odd
    from d3dkmddi_py.etw.model.tracker import Tracker
    from tests.etw.helpers import alloc_fields

    for bad in (dict(why="bogus"), dict(cut_at="q"), dict(booleans="Write"), dict(extra_bytes="00"),
                dict(unread=(("Name", 5),))):
        with pytest.raises(InvalidArgument, match="Odd: "):
            Odd(**bad)
    event = etw.Event(2, etw.KINDS[33], 2, alloc_fields(), odd=Odd(booleans=("NoSuchField",)))
    (f,) = Tracker().odd.take(event)
    assert f.rule_id == "ETW.BOOLEAN_NOT_0_OR_1" and "NoSuchField = None" in f.message
