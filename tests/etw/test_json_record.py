"""``etw --json``: each event carries its mirror record as ``decode --json`` writes it, and flag names for
segment flags as for allocation flags."""
from __future__ import annotations

import io
import json

from d3dkmddi_py import cli

from .helpers import run

SAME = ("type", "target", "size", "bytes", "fields", "names")


def decode_json(type_name: str, raw: bytes, tmp_path) -> dict:
    path = tmp_path / "record.bin"
    path.write_bytes(raw)
    out = io.StringIO()
    cli.execute(["decode", type_name, "--file", str(path), "--json"], out, io.StringIO())
    return json.loads(out.getvalue())


def test_each_event_carries_its_record_as_decode_writes_it(tmp_path):
    out, _ = run(["sample", "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    seen = set()
    for line in lines:
        record = line["record"]
        if line["type"] is None:  # an event that fills no mirror structure
            assert record is None
            continue
        assert record["type"] == line["type"]
        assert record["findings"] and line["findings"] or not record["findings"] and not line["findings"]
        assert [f["rule_id"] for f in record["findings"]] == [f["rule_id"] for f in line["findings"]]
        if record["bytes"] in seen:
            continue
        seen.add(record["bytes"])
        decoded = decode_json(record["type"], bytes.fromhex(record["bytes"]), tmp_path)
        assert {k: record[k] for k in SAME} == {k: decoded[k] for k in SAME}, line["number"]
        # meanings: only of what the event carried; a segment's as decode words them (an allocation's
        # are read against the adapter's segments, which decode alone does not have)
        if line["event"] == "ReportSegment":
            assert record["meanings"].items() <= decoded["meanings"].items()
        else:
            assert set(record["meanings"]) <= set(decoded["meanings"]) and record["meanings"]
    assert len(seen) > 20


def test_segment_flags_are_named_as_allocation_flags_are(tmp_path):
    out, _ = run(["sample", "--json"])
    for line in map(json.loads, out.splitlines()):
        if line["event"] == "AdapterAllocation":  # the Stop template names Format by the manifest's D3DFormat map
            assert set(line["names"]) == {"Flags", "UsageFlags"} | ({"Format"} if line["opcode"] == "Stop" else set())
            continue
        if line["event"] != "ReportSegment":
            continue
        word = line["fields"]["Flags"]
        decoded = decode_json("DXGK_SEGMENTFLAGS", word.to_bytes(4, "little"), tmp_path)
        assert line["names"] == {"Flags": decoded["names"]["Value"]}


def test_a_stop_with_the_bytes_of_a_start_has_no_findings_in_its_record(monkeypatch):
    """Records are made once per (bytes, segments, checked): a Stop is never given a Start's findings."""
    from .helpers import alloc_fields, trace, tracerpt_event

    fields = alloc_fields(Priority=0)
    data = trace(tracerpt_event(33, fields), tracerpt_event(34, fields), tracerpt_event(33, fields))
    out, status = run(["-", "--json"], stdin=data, monkeypatch=monkeypatch)
    start, stop, again = map(json.loads, out.splitlines())
    assert status == 1 and [f["rule_id"] for f in start["record"]["findings"]] == ["ALLOCINFO.PRIORITY_ZERO"]
    assert stop["record"]["findings"] == [] and stop["findings"] == [] and not stop["checked"]
    assert again["record"] == start["record"] and stop["record"]["bytes"] == start["record"]["bytes"]
