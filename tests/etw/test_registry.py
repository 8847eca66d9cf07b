"""An event is one entry: a made-up event registered at test time is read, tabled and shown by every
reader and output (XML by both paths, .etl event by event and column-wise, text, --json, tables) with
no other change, and is gone again once unregistered; a bad entry is refused before it changes anything."""
from __future__ import annotations

import json

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.model import registry
from d3dkmddi_py.etw.catalog import KIND_BY_NAME, KINDS, TEMPLATES
from d3dkmddi_py.etw.model.registry import Column, EventEntry, Mapping, TableSpec, field_columns
from d3dkmddi_py.etw.model.schema import BOOLEAN, POINTER, UINT32, UINT64
from d3dkmddi_py.etw.outputs.tables import table_names
from tests.etw.etl_readings import tables
from tests.etw.etl_twin import Dxg, outputs, twin
from tests.etw.helpers import ADAPTER, alloc_fields, seg_fields

NAME = "MadeUpGpuEvent"
FIELDS = (("pDxgAdapter", POINTER), ("Count", UINT32), ("Busy", BOOLEAN), ("Bytes", UINT64), ("Samples", UINT32),
          ("Sample", UINT32))


def made_up(**over) -> EventEntry:
    """A made-up event of four kinds of field and a counted array, with no state change: its whole entry."""
    fields = dict(event=NAME, ids={250: "Info"}, task=250, symbols={250: NAME}, versions={0: FIELDS},
                  manifest_version=0, templates={250: "MadeUpGpuEventArgs"},
                  mapping=tuple(Mapping(NAME, n, None, None, "made up for the test") for n, _t in FIELDS),
                  adapter="pDxgAdapter", arrays={"Sample": "Samples"},
                  table=TableSpec("made_up", field_columns(FIELDS, skip=("pDxgAdapter",), arrays=("Sample",))))
    fields.update(over)
    return EventEntry(**fields)


def items() -> list:
    return [Dxg(KIND_BY_NAME[("ReportSegment", "Info")], seg_fields(1, 0x0), version=1),
            Dxg(KINDS[250], dict(pDxgAdapter=ADAPTER, Count=7, Busy=True, Bytes=1 << 40, Samples=2, Sample=(3, 4))),
            Dxg(KIND_BY_NAME[("AdapterAllocation", "Start")], alloc_fields())]


def test_a_made_up_event_in_one_entry_is_in_every_output(monkeypatch, tmp_path):
    with registry.registered(made_up()):
        etl, xml = twin(items())
        xml = xml.encode("ascii")
        events = {source: list(etw.read(data, fast=fast)) for source, data, fast in
                  (("xml", xml, True), ("expat", xml, False), ("etl", etl, True))}
        assert events["xml"] == events["expat"]
        assert [(e.number, e.fields) for e in events["xml"]] == [(e.number, e.fields) for e in events["etl"]]
        made = next(e for e in events["etl"] if e.event == NAME)
        assert made.fields == {"pDxgAdapter": ADAPTER, "Count": 7, "Busy": True, "Bytes": 1 << 40, "Samples": 2,
                               "Sample": (3, 4)} and made.adapter == ADAPTER
        got = outputs(etl, monkeypatch, tmp_path / "etl")
        assert got == outputs(xml, monkeypatch, tmp_path / "xml")
        text = got["text"][0]
        assert f"{NAME} (250): 1 event, read and tabled; this package keeps no state of them" in text
        (line,) = [o for o in map(json.loads, got["json"][0].splitlines()) if o["event"] == NAME]
        assert line["fields"] == {"pDxgAdapter": f"0x{ADAPTER:x}", "Count": 7, "Busy": True, "Bytes": "0x10000000000",
                                  "Samples": 2, "Sample": [3, 4]} and line["record"] is None
        # typed as its fields' in-types say: the time to the nanosecond (a FILETIME's 100 ns), ms from the header
        # event (2 x 1,234 ticks of 100 ns), the pointer 0x..., the Boolean true
        assert got["csv"][0]["made_up.csv"] == (b"number,time,ms,opcode,process,adapter,Count,Busy,Bytes,Samples,Sample,"
                                                b"errors,warnings\n3," + made.time[:-1].encode() + b"00Z,0.2468,Info,"
                                                b"8000," + f"0x{ADAPTER:x}".encode() + b",7,true,1099511627776,2,"
                                                b"0x3 0x4,0,0\n")
        assert tables(etl, tmp_path, True) == tables(etl, tmp_path, False)  # column-wise as event by event
        assert "made_up" in table_names()
    assert NAME not in etw.ENTRIES and 250 not in KINDS and "made_up" not in table_names()
    reader = etw.read(xml)
    assert [e.event for e in reader] == ["ReportSegment", "AdapterAllocation"] and reader.other_dxgkrnl == 1


@pytest.mark.parametrize("change, says", [
    (dict(ids={78: "Info"}, symbols={78: NAME}, templates={78: "X"}), "event id 78 is ReportSegment Info"),
    (dict(mapping=()), "MAPPING must name every field of every version once"),
    (dict(arrays={"Count": "Samples"}), "the counted array Count must be the last field, after its count Samples"),
    (dict(adapter="Nothing"), "the adapter field Nothing is not a field"),
    (dict(ids={250: "Sometimes"}), "opcode 'Sometimes' is not one of Info, Start, Stop, DCStart"),
    (dict(table=TableSpec("segments")), "table segments is ReportSegment's, with other columns"),
    (dict(versions={0: FIELDS + (("Huge", "UInt128"),)}), "field Huge has in-type 'UInt128'"),
    (dict(table=TableSpec("made_up", field_columns(FIELDS))), "a counted array's column is text"),
    (dict(table=TableSpec("../made_up")), r"table name '\.\./made_up' must be letters, digits and _ \(it names a file"),
    (dict(table=TableSpec("findings")), "table name 'findings' must be letters, digits and _ .*, and not findings"),
    (dict(table=TableSpec("made_up", (), ("segment descriptor",))),
     r"table mirror 'segment descriptor' is not one of its events' records \(segment descriptor: ReportSegment"),
    (dict(batched=True), "a batched event's records are checked column-wise as DXGK_ALLOCATIONINFO"),
    (dict(unchecked=("Stop",)), r"unchecked names an opcode its ids do not have \(Info\)"),
    (dict(json_names={"Nothing": "Flags.Value"}), "json_names names a field the templates lack"),
    (dict(rules=("NO.SUCH_RULE",)), "rule NO.SUCH_RULE is not a rule id"),
    (dict(mapping=tuple(Mapping(NAME, n, None, "Size" if n == "Count" else None, "made up") for n, _t in FIELDS)),
     "a mirror member with its mirror type, or neither"),
    (dict(table=TableSpec("made_up", (Column("x", "int", field="Nothing"),))),
     "table column Nothing reads a field the templates lack"),
    (dict(apply=lambda tracker: None), r"apply must be a function of \(tracker, event\) or None"),
    (dict(mapping=tuple(Mapping(NAME, n, *(("DXGK_ALLOCATIONINFO", "Sise") if n == "Count" else (None, None)), "made up")
                        for n, _t in FIELDS)), "MAPPING's Count fills DXGK_ALLOCATIONINFO.Sise, which is a leaf of it "
                                               "at no target"),
], ids=["id taken", "mapping", "array not last", "adapter", "opcode", "table taken", "in-type", "array column",
        "table name a path", "table name findings", "mirror of another event", "batched without records",
        "unchecked opcode", "json_names field", "unknown rule", "mirror without its type", "column field",
        "apply's arguments", "mirror leaf at no target"])
def test_a_bad_entry_is_refused_and_changes_nothing(change, says):
    before = (dict(KINDS), {k: dict(v) for k, v in TEMPLATES.items()}, table_names())
    with pytest.raises(ValueError, match=says):
        registry.register(made_up(**change))
    assert (dict(KINDS), {k: dict(v) for k, v in TEMPLATES.items()}, table_names()) == before
