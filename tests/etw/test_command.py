"""``d3dkmddi etw`` as a user runs it: ``python -m d3dkmddi_py etw ...`` in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from d3dkmddi_py.etw.catalog import ENTRIES
from d3dkmddi_py.etw.outputs.tables import table_names

from .helpers import alloc_fields, sample_other_kinds, seg_fields, trace, tracerpt_event

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
OTHER = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")
GOOD = trace(tracerpt_event(78, seg_fields(1, 0x11), version=1), tracerpt_event(33, alloc_fields()))


def etw(*argv, stdin: bytes | None = None, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", *map(str, argv)], input=stdin,
                         capture_output=True, cwd=cwd or ROOT, env=env, timeout=300)
    return out.stdout.decode("utf-8"), out.stderr.decode("utf-8"), out.returncode


def test_sample_text_is_the_golden_output():
    out, err, status = etw("sample")
    assert (status, err) == (1, "")  # the sample has error-level findings
    assert out == (GOLDEN / "sample.txt").read_text()


def test_sample_json_lines():
    out, err, status = etw("sample", "--json")
    assert (status, err) == (1, "")
    assert out == (GOLDEN / "sample.jsonl").read_text()
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 82
    others = [line["symbol"] for line in lines if line["event"] not in ENTRIES]
    assert others and sorted(set(others)) == list(sample_other_kinds())
    for line in lines:
        if line["event"] not in ENTRIES:  # an event no entry reads: its fields by name, no record, nothing checked
            assert line["type"] is None and line["record"] is None and line["findings"] == [] and line["fields"]
            continue
        entry = ENTRIES[line["event"]]
        assert line["opcode"] in entry.opcodes.values() and line["id"] in entry.ids
        if line["adapter"] is not None or entry.adapter is not None:  # an event naming none may find none
            assert int(line["adapter"], 16) > 0 and line["adapter"].startswith("0x")
        assert (line["type"] is not None) == bool(entry.table.mirror)
        assert isinstance(line["fields"], dict) and isinstance(line["findings"], list)
        for f in line["findings"]:
            assert set(f) == {"rule_id", "severity", "field", "message"}
    assert any(f["severity"] == "error" for line in lines for f in line["findings"])


def test_tables_go_to_the_directory_and_nothing_to_stdout(tmp_path):
    target = tmp_path / "new" / "tables"  # created, parents too
    out, err, status = etw("sample", "--format", "csv", "--output", target)
    assert status == 1 and out == ""
    assert err.startswith("d3dkmddi: wrote 4 rows of segments, 41 rows of allocations, ")
    assert err.endswith(f", 21 rows of findings, 1 row of AdapterDCStart, 2 rows of NodeMetadata to {target}\n")
    for rows in ("3 rows of device_allocations", "5 rows of residency", "7 rows of placements", "3 rows of priorities"):
        assert f", {rows}, " in err
    assert sorted(p.name for p in target.iterdir()) == sorted(f"{name}.csv" for name in table_names() +
                                                              sample_other_kinds())  # a table per kind no entry reads
    rows = (target / "allocations.csv").read_text().splitlines()
    assert len(rows) == 42 and "," in rows[0]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_failed_run_leaves_no_folder_it_created(tmp_path, fmt):
    """A trace without the events (found after the folders were made): the folders the run created go, an
    existing one stays, and so does one where something else was put meanwhile."""
    other = tmp_path / "other.xml"
    other.write_bytes(trace(tracerpt_event(1, {"Value0": "1"}, provider=OTHER)))
    (tmp_path / "kept").mkdir()
    for target in (tmp_path / "new" / "deeper" / "tables", tmp_path / "kept" / "tables"):
        out, err, status = etw(other, "--format", fmt, "--output", target)
        assert status == 2 and out == "" and err.count("\n") == 1, err
        assert not target.exists()
    assert not (tmp_path / "new").exists() and (tmp_path / "kept").is_dir()


def test_an_interrupted_run_leaves_no_folder_it_created(tmp_path, monkeypatch, capsys):
    from d3dkmddi_py import cli
    from d3dkmddi_py.etw.outputs.tables import TraceTables

    def interrupted(self, event):  # Ctrl-C while the first event is read
        raise KeyboardInterrupt

    monkeypatch.setattr(TraceTables, "add", interrupted)
    target = tmp_path / "new" / "tables"
    assert cli.main(["etw", "sample", "--format", "csv", "--output", str(target)]) == 130
    assert capsys.readouterr().err == "d3dkmddi: interrupted\n"
    assert not (tmp_path / "new").exists()


def test_output_equal_to_the_input_is_refused(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(GOOD)
    out, err, status = etw(p, "--format", "csv", "--output", p)
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert p.read_bytes() == GOOD


def test_standard_input(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(GOOD)
    from_file = etw(p, "--json")
    out, err, status = etw("-", "--json", stdin=GOOD)
    assert (out, err, status) == from_file and status in (0, 1)
    assert [json.loads(line)["event"] for line in out.splitlines()] == ["ReportSegment", "AdapterAllocation"]
    out, err, status = etw("-", stdin=GOOD)
    text, _err, _status = etw(p)
    assert (err, status) == ("", from_file[2]) and out == text.replace(str(p), "standard input")


def missing_field() -> bytes:
    f = alloc_fields()
    del f["hDxgGlobalAlloc"]
    return trace(tracerpt_event(33, f))


BAD = {
    "not xml": (b"\x00\x01ETL binary\xff", "is neither an .etl file nor XML"),
    "truncated": (GOOD[:len(GOOD) // 2], "truncated"),
    "another schema": (b"<rss><channel/></rss>", "root element is <rss>"),
    "event id out of range": (trace(tracerpt_event(33, alloc_fields()).replace("<EventID>33<", "<EventID>70000<")),
                              "event #1: System/EventID = '70000' is out of range (valid 0..65535"),
    "unknown encoding": (b'<?xml version="1.0" encoding="u"?>\n' + GOOD, "names an encoding Python does not know"),
    "no DxgKrnl events": (trace(tracerpt_event(1, {"ProcessID": 4}, provider=OTHER)),
                          "1 event, 1 of other providers (1 Microsoft-Windows-Kernel-Process)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("mode", [[], ["--json"], ["--format", "jsonl", "-o", "OUT"]])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case, mode):
    data, says = BAD[case]
    p = tmp_path / "t.xml"
    p.write_bytes(data)
    out, err, status = etw(p, *[tmp_path / "out" if m == "OUT" else m for m in mode])
    assert status == 2, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # no table half-written
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err
    assert err.startswith("d3dkmddi: error: ") and says in err


@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_closed_pipe_gives_no_traceback(mode):
    cmd = " ".join([sys.executable, "-m", "d3dkmddi_py", "etw", "sample", *mode]) + " | head -c 100"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, cwd=ROOT, env=env, timeout=300)
    assert len(out.stdout) == 100
    assert b"Traceback" not in out.stderr and b"Error" not in out.stderr, out.stderr
