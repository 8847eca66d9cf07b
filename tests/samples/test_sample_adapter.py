"""Issue 22, "``--adapter sample`` works at the sample's target only": the sample adapter's segments are
written at the target asked for, wherever its descriptors hold them, and refused naming those that do."""
from __future__ import annotations

import subprocess
import sys

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import samples
from d3dkmddi_py.errors import UnsupportedTarget
from d3dkmddi_py.samples import build


def test_at_its_own_target_the_adapter_is_segments_bin():
    adapter = samples.sample_adapter()
    assert (adapter.abi, adapter.interface_version) == ("x64", kmd.InterfaceVersion[build.INTERFACE_VERSION])
    assert b"".join(bytes(d) for d in adapter.segments) == samples.SEGMENTS_PATH.read_bytes()


@pytest.mark.parametrize("abi,version", [("x64", "WDDM3_2"), ("arm64", "WDDM2_0"), ("x64", "WDDM2_7")])
def test_at_another_target_the_same_segments_are_written_there(abi, version):
    adapter = samples.sample_adapter((abi, version))
    assert (adapter.abi, adapter.interface_version) == (abi, kmd.InterfaceVersion[version])
    own = samples.sample_adapter()
    for mine, theirs in zip(adapter.segments, own.segments):
        assert type(mine)._target_ == (abi, int(kmd.InterfaceVersion[version]))
        here, there = kmd.semantics.to_dict(mine)["fields"], kmd.semantics.to_dict(theirs)["fields"]
        assert {k for k, v in there.items() if v not in (0, "0x0")} <= set(here)  # every set member is there
        assert {k: v for k, v in there.items() if k in here} == here  # with the same value


def test_the_targets_it_fits_are_found_by_writing_it():
    """Use64KBPages needs WDDM2_0 (definitions.md §4) and pBankRangeTable holds a 64-bit address."""
    targets = samples.sample_targets()
    assert ("x86", kmd.NEWEST) not in targets and ("x64", kmd.InterfaceVersion.WIN8) not in targets
    assert ("x64", kmd.InterfaceVersion.WDDM2_0) in targets and ("arm64", kmd.NEWEST) in targets


@pytest.mark.parametrize("abi,version,why", [("x64", "WIN7", "Use64KBPages"), ("x86", "WDDM3_2", "32 bits")])
def test_a_target_that_cannot_hold_it_is_refused_naming_those_that_can(abi, version, why):
    with pytest.raises(UnsupportedTarget) as err:
        samples.sample_adapter((abi, version))
    message = str(err.value)
    assert why in message and "x64 and arm64 from WDDM2_0" in message and "x64 WDDM3_0 (0xF003)" in message
    assert "--segments FILE" in message and "mask it yourself" not in message


def test_the_command_checks_the_sample_allocations_at_the_newest_version():
    """The record the demo shows breaking HINTEDBANK_OUT_OF_RANGE at WDDM3_0 breaks it at WDDM3_2 too."""
    args = ["validate", "DXGK_ALLOCATIONINFO", "--file", str(samples.ALLOCATIONS_PATH), "--offset", "0x840",
            "--adapter", "sample"]
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *args, "--ddi", "WDDM3_2"], capture_output=True,
                       text=True, timeout=120)
    # exit 0: HINTEDBANK_OUT_OF_RANGE is a warning (its page describes one-based ids, it forbids nothing)
    assert p.returncode == 0 and "ALLOCINFO.HINTEDBANK_OUT_OF_RANGE" in p.stdout, p.stderr
    assert "x64 WDDM3_2 (0x11007)" in p.stdout
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *args, "--ddi", "WIN7"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1
    assert "they can at x64 and arm64 from WDDM2_0" in p.stderr
