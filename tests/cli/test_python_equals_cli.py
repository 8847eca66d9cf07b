"""One Python call gives exactly what the command prints: report() for decode/validate, text or JSON,
and render_text() of a list gives the decode text of those records."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.samples import sample_adapter

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "d3dkmddi_py" / "samples"
ALLOCATIONS = str(SAMPLES / "allocations.bin")
WINDBG = str(SAMPLES / "allocations.dq.txt")


def command(*argv) -> str:
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *argv], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert "Traceback" not in p.stderr
    return p.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("validate", [False, True], ids=["decode", "validate"])
def test_report_equals_the_command_on_a_file(fmt, validate):
    argv = ["validate" if validate else "decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--ddi", "WDDM3_0",
            "--count", "all", "--adapter", "sample"] + (["--json"] if fmt == "json" else [])
    ours = kmd.report("DXGK_ALLOCATIONINFO", path=ALLOCATIONS, target=("x64", "WDDM3_0"), count="all",
                      adapter=sample_adapter(), validate=validate, fmt=fmt)
    assert ours == command(*argv) and ours.count("\n") >= 35


def test_report_equals_the_command_on_a_word_and_on_windbg_text():
    assert kmd.report("DXGK_SEGMENTFLAGS", "0x485", target=("x86", "VISTA")) == \
        command("decode", "DXGK_SEGMENTFLAGS", "0x485", "--abi", "x86", "--ddi", "VISTA")
    text = Path(WINDBG).read_text()
    assert kmd.report("DXGK_ALLOCATIONINFO", text, target=("x64", "WDDM3_0"), count=2, nonzero=True) == \
        command("decode", "DXGK_ALLOCATIONINFO", "--windbg", WINDBG, "--ddi", "WDDM3_0", "--count", "2", "--nonzero")


def test_render_text_of_a_list_is_the_decode_text():
    records = kmd.decode("DXGK_ALLOCATIONINFO", Path(ALLOCATIONS), target=("x64", "WDDM3_0"), count=4)
    assert kmd.render_text(records) + "\n" == command("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS,
                                                      "--ddi", "WDDM3_0", "--count", "4")


def test_report_refuses_what_the_command_refuses():
    with pytest.raises(kmd.DecodeError, match="count 0 is not positive"):
        kmd.report("DXGK_SEGMENTFLAGS", b"\0" * 8, count=0)
    with pytest.raises(kmd.DecodeError, match="fmt must be"):
        kmd.report("DXGK_SEGMENTFLAGS", b"\0" * 4, fmt="xml")
