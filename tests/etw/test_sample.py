"""The bundled trace: fresh against its generator, its golden outputs, and what it is built to show."""
from __future__ import annotations

import csv
import json
import re
import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.samples import DIRECTORY, build, etw_build

from .helpers import GOLDEN, GOLDEN_CASES, run, sample_other_kinds


@pytest.mark.parametrize("name", [etw_build.FILE, etw_build.ETL_FILE])
def test_sample_file_is_fresh(name):
    made = etw_build.files()
    assert set(made) == {etw_build.FILE, etw_build.ETL_FILE}
    assert (DIRECTORY / name).read_bytes() == made[name], "stale: run python -m d3dkmddi_py.samples.etw_build"


def test_etw_sample_summary_reads_the_bundled_etl():
    out, status = run(["sample", "--summary"])
    assert status == 0 and out.startswith(f"d3dkmddi etw --summary: <samples>/{etw_build.ETL_FILE}\n")
    start, end = (line.split()[-1] for line in out.splitlines() if line.lstrip().startswith(("start:", "end:")))
    assert start < end  # the header's end is after its start (both from the sample's clock)


def test_etw_sample_etl_reads_as_the_xml_sample():
    xml, xml_status = run(["sample"])
    etl, etl_status = run(["sample.etl"])
    assert xml_status == etl_status == 1
    assert etl.replace(etw_build.ETL_FILE, etw_build.FILE) == xml  # the same events, the same times


def test_etw_sample_etl_json_is_the_xml_samples():
    """The same lines; each time the XML's to the 100 ns below (what a FILETIME holds), so a duration between two
    (an eviction's resident_ms) within 100 ns of the XML's."""
    etl, etl_status = run(["sample.etl", "--json"])
    xml, xml_status = run(["sample", "--json"])
    etl_lines, xml_lines = [json.loads(x) for x in etl.splitlines()], [json.loads(x) for x in xml.splitlines()]
    assert etl_status == xml_status == 1 and len(etl_lines) == len(xml_lines) == 82
    for e, x in zip(etl_lines, xml_lines):
        assert e["time"] == x["time"][:-3] + "00Z"
        durations = [(line.get("resolved") or {}).pop("resident_ms", None) for line in (e, x)]
        assert dict(e, time=None) == dict(x, time=None)
        assert durations[0] == durations[1] or abs(durations[0] - durations[1]) < 1e-4


def test_a_file_named_sample_etl_stays_reachable_as_dot_slash(tmp_path, monkeypatch):
    (tmp_path / "sample.etl").write_bytes((DIRECTORY / etw_build.FILE).read_bytes())  # the XML, under that name
    monkeypatch.chdir(tmp_path)
    out, status = run(["./sample.etl"])
    assert status == 1 and out.startswith("d3dkmddi etw: ./sample.etl,")


def test_sample_is_tracerpt_shaped():
    raw = (DIRECTORY / etw_build.FILE).read_bytes()
    assert raw.startswith(b"<Events>\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert b'<Data Name="Flags">       0</Data>' in raw and b"<BinaryEventData>" in raw


@pytest.mark.parametrize("golden", sorted(GOLDEN_CASES))
def test_golden_output(golden):
    argv, expected = GOLDEN_CASES[golden]
    out, status = run(argv)
    assert status == expected
    assert out == (GOLDEN / golden).read_text(), f"regenerate: PYTHONPATH=. python tests/etw/regenerate_golden.py"


def test_golden_files_are_the_cases():
    assert {p.name for p in GOLDEN.iterdir()} == set(GOLDEN_CASES)


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


UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z\Z")


@pytest.mark.parametrize("word", ["sample", "sample.etl"])
def test_times_are_one_form_utc_with_z_in_json_csv_and_summary(word, tmp_path):
    """Issue 31: --json wrote tracerpt's ``...T10:15:02.127651093+0100`` (an .etl's 7 digits), the tables
    ``...T09:15:02.127651000Z``: every output now writes the tables' form, the same instant."""
    lines = [json.loads(line) for line in run([word, "--json"])[0].splitlines()]
    json_times = {line["number"]: line["time"] for line in lines}
    assert json_times and all(UTC.match(t) for t in json_times.values())
    _out, status = run([word, "--format", "csv", "--output", str(tmp_path)])
    assert status == 1
    csv_times = {}
    for path in tmp_path.glob("*.csv"):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                if row.get("time") and row.get("number"):
                    csv_times.setdefault(int(row["number"]), set()).add(row["time"])
    assert csv_times and all(UTC.match(t) for ts in csv_times.values() for t in ts)
    assert all(ts == {json_times[n]} for n, ts in csv_times.items() if n in json_times)
    summary = json.loads(run(["sample", "--summary", "--json"])[0])
    assert all(UTC.match(summary[k]) for k in ("start_time", "end_time", "boot_time"))
    text = run(["sample", "--summary"])[0]
    assert [UTC.match(line.split()[-1]) is not None for line in text.splitlines()
            if line.lstrip().startswith(("start:", "end:"))] == [True, True]


WIDE = "--abi x86 reads 4-byte pointers, and 82 events carry pointers above 4 GB, as a 64-bit machine's are"
HEADER = ("--abi x86 reads 4-byte pointers, and the trace's log-file header says the machine that wrote it has 8-byte "
          "ones (PointerSize): the records are laid out for the wrong machine; pass --abi x64 or arm64")


@pytest.mark.parametrize("word, said", [("sample", f"{WIDE} (the first: event #3 pDeviceObject "), ("sample.etl", HEADER)])
def test_etw_abi_x86_on_a_trace_with_64_bit_pointers_is_said_in_text_json_and_tables(word, said, tmp_path):
    """Issue 31: the sample (64-bit pointers) read at --abi x86 was taken silently.  An .etl file's header says its
    pointer size; XML says none, so its pointers above 4 GB show it."""
    from d3dkmddi_py import cli

    out, err, status = cli.run(["etw", word, "--abi", "x86"])
    assert status == 1 and err == "" and f"pointers: {said}" in out
    for argv in (["--json"], ["--format", "csv", "-o", str(tmp_path)]):
        out, err, status = cli.run(["etw", word, "--abi", "x86", *argv])
        assert status == 1 and said not in out and f"d3dkmddi: {said}" in err and "pass --abi x64 or arm64" in err


def test_etw_abi_x86_on_an_etl_of_a_64_bit_machine_whose_pointers_sit_below_4_gb_is_said(tmp_path):
    """Pointers above 4 GB were the only guard: a 64-bit trace whose pointers are all small read at x86 silently."""
    from d3dkmddi_py import cli
    from d3dkmddi_py.etw.catalog import KIND_BY_NAME
    from d3dkmddi_py.samples import etl_build, etw_build

    (fields, *_rest) = etw_build.segment_events()
    small = {k: (v & 0xFFFF if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in fields.items()}
    path = tmp_path / "t.etl"
    path.write_bytes(etl_build.etl_bytes([etl_build.dxgkrnl_event(KIND_BY_NAME[("ReportSegment", "Info")], small)]))
    out, _err, _status = cli.run(["etw", str(path), "--abi", "x86"])
    assert f"pointers: {HEADER}" in out
    out, _err, _status = cli.run(["etw", str(path), "--abi", "x64"])
    assert "pointers:" not in out


@pytest.mark.parametrize("abi", ["x64", "arm64"])
def test_etw_a_64_bit_abi_on_the_sample_says_nothing_of_pointers(abi):
    from d3dkmddi_py import cli

    out, err, _status = cli.run(["etw", "sample", "--abi", abi])
    assert "pointers above 4 GB" not in out + err
