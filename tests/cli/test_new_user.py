"""Issue 14, "What a new user met": each case as a new user meets it."""
from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli


def _next_commands() -> list:
    out, _err, status = cli.run(["demo"])
    assert status == 0
    lines = out.split("Next, on the same files:\n", 1)[1].splitlines()
    return [line.strip() for line in lines if line.strip().startswith("d3dkmddi ")]


@pytest.mark.parametrize("index", range(5))
def test_the_demos_next_commands_paste_and_run(index):
    commands = _next_commands()
    assert len(commands) == 5 and "<samples>" not in "".join(commands)
    argv = shlex.split(commands[index])
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *argv[1:]], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, (commands[index], p.stderr[-1000:])
    assert p.stdout


def test_adapter_build_takes_target_like_everything_else():
    from d3dkmddi_py import semantics as sem

    by_target = sem.Adapter.build(sem.SegmentFlag.Aperture, target=("x86", "WDDM2_0"))
    by_parts = sem.Adapter.build(sem.SegmentFlag.Aperture, abi="x86", interface_version="WDDM2_0")
    assert (by_target.abi, by_target.interface_version) == (by_parts.abi, by_parts.interface_version) == \
        ("x86", kmd.InterfaceVersion.WDDM2_0)
    assert sem.Adapter.build(sem.SegmentFlag.Aperture, target=kmd.target("arm64", "WDDM3_0")).abi == "arm64"
    with pytest.raises(ValueError, match="not both"):
        sem.Adapter.build(sem.SegmentFlag.Aperture, target=("x86", "WDDM2_0"), abi="x64")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_validate_to_a_table_says_findings_for_records(tmp_path, fmt):
    from d3dkmddi_py.samples import ALLOCATIONS_PATH

    out = tmp_path / f"f.{fmt}"
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "validate", "DXGK_ALLOCATIONINFO", "--file",
                        str(ALLOCATIONS_PATH), "--count", "all", "--ddi", "WDDM3_0", "--format", fmt, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    rows = out.read_text().count("\n") - (1 if fmt == "csv" else 0)
    assert p.stderr == f"d3dkmddi: wrote {rows} findings for 35 records to {out}\n", p.stderr


def test_from_records_names_every_missing_field_without_a_chained_error():
    from d3dkmddi_py import etw
    from d3dkmddi_py.errors import EtwInputError

    with pytest.raises(EtwInputError) as err:
        list(etw.from_records([{"event": 78, "version": 1, "fields": {"SegmentId": 1}}]))
    message = str(err.value)
    assert "missing or None: " in message and "pDxgAdapter" in message and "tracerpt" not in message
    assert err.value.__cause__ is None and err.value.__context__ is None
