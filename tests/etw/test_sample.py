"""The bundled trace: fresh against its generator, its golden outputs, and what it is built to show."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.samples import DIRECTORY, build, etw_build

from .helpers import run, sample_other_kinds

GOLDEN = Path(__file__).parent / "golden"


def test_sample_file_is_fresh():
    shipped = (DIRECTORY / etw_build.FILE).read_bytes()
    assert shipped == etw_build.files()[etw_build.FILE], "stale: run python -m d3dkmddi_py.samples.etw_build"


def test_sample_is_tracerpt_shaped():
    raw = (DIRECTORY / etw_build.FILE).read_bytes()
    assert raw.startswith(b"<Events>\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert b'<Data Name="Flags">       0</Data>' in raw and b"<BinaryEventData>" in raw


@pytest.mark.parametrize("argv, golden", [(["sample"], "sample.txt"), (["sample", "--json"], "sample.jsonl")])
def test_golden_output(argv, golden):
    out, status = run(argv)
    assert status == 1  # the sample has error-level findings
    assert out == (GOLDEN / golden).read_text(), f"regenerate tests/etw/golden/{golden} if the change is intended"


def test_sample_shows_each_rule_that_applies_where_the_table_breaks_it():
    got = etw.adapters(etw.read(DIRECTORY / etw_build.FILE), target=("x64", "WDDM3_0"))
    (a,) = got.values()
    assert sorted(a.segments) == [1, 2, 3] and a.segments_replaced == 1 and a.stops_unmatched == 1
    notes = {e.event.number: e for e in a.allocations.values()}
    by_note = {}
    for opcode, note, fields in etw_build.allocation_events():
        by_note[note] = fields
    specs = {s.note: s for s in build.ALLOCATIONS}
    for entry in a.allocations.values():
        note = next(n for n, f in by_note.items() if f["hVidMmGlobalAlloc"] == entry.event.fields["hVidMmGlobalAlloc"])
        spec = specs.get(note)
        found = {f.rule_id for f in entry.findings}
        expected = {r for r in spec.breaks if etw.applies(r)} if spec else set()
        assert found == expected, note
    assert notes


def test_json_lines_have_the_documented_keys():
    out, _status = run(["sample", "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["event"] for line in lines} >= {  # what the sample is built to show: each catalog entry, and kinds
        "ReportSegment", "AdapterAllocation", "DeviceAllocation", "ReportCommittedGlobalAllocation",  # no entry reads
        "ReportCommittedAllocation", "SetAllocationPriority", "TotalBytesResidentInSegment",
        "VidMmProcessUsageChange", "VidMmProcessBudgetChange"}
    assert {line["opcode"] for line in lines} == {"Info", "Start", "Stop", "DCStart"}
    others = {line["symbol"] for line in lines if line["event"] not in etw.ENTRIES}
    assert len(others) >= 2 and sorted(others) == list(sample_other_kinds())
    for line in lines:
        assert {"event", "symbol", "opcode", "adapter", "type", "fields", "findings"} <= set(line)
        assert line["adapter"] in ("0xffffb80c4d2e5000", None)
        for f in line["findings"]:
            assert set(f) == {"rule_id", "severity", "field", "message"}
    alloc = next(line for line in lines if line["event"] == "AdapterAllocation")
    assert alloc["type"] == "DXGK_ALLOCATIONINFO" and alloc["fields"]["hDxgGlobalAlloc"].startswith("0x")
    assert isinstance(alloc["fields"]["allocSize"], str) and isinstance(alloc["fields"]["ulAlignment"], int)
