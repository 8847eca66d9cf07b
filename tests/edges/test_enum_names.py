"""Enum and flag values print their names on every supported Python.  ``str()`` of an IntEnum is
the number on 3.11+ and ``Class.NAME`` before; a flag value that is not one member has no
``.name`` on 3.9/3.10 (and a zero flag has none anywhere), so the renderer never relies on them."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.render import _plain, enum_text

from ..conftest import require

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value, text", [
    (kmd.SegmentFlag(0x5), "Aperture|CpuVisible"),  # no .name on 3.9/3.10; reversed order in their repr
    (kmd.SegmentFlag(0), "(none set)"),  # .name is None on every version
    (kmd.SegmentFlag(0x1), "Aperture"),
    (kmd.SegmentFlag(0x1 | 1 << 31), "Aperture|0x80000000"),  # a bit no member names stays visible
    (kmd.BankDirection.TOP_DOWN, "TOP_DOWN"),  # str() is '1' on 3.11+
    (kmd.PriorityBand.NORMAL, "NORMAL"),
    (kmd.InterfaceVersion.WDDM2_0, "WDDM2_0"),
    (kmd.ENUM_CLASSES["DXGK_SEGMENTTYPE"](1), "DXGK_SEGMENTTYPE_LOCAL"),
])
def test_enum_text_is_the_name(value, text):
    assert enum_text(value) == text
    assert _plain(value) == text and _plain([value]) == [text] and _plain({"k": value}) == {"k": text}


SNIPPET = """
import json, subprocess, sys
import d3dkmddi_py as kmd
from d3dkmddi_py.render import _plain
values = [kmd.SegmentFlag(5), kmd.SegmentFlag(0), kmd.SegmentFlag(1 | 1 << 31), kmd.BankDirection.TOP_DOWN,
          kmd.power_behaviour(0x485), kmd.ENUM_CLASSES["DXGK_SEGMENTTYPE"](1)]
t = kmd.target("x64")
raw = bytes(t.DXGK_SEGMENTDESCRIPTOR5(SegmentType=1, SlabSize=1))
cmd = [sys.executable, "-m", "d3dkmddi_py", "decode", "DXGK_SEGMENTDESCRIPTOR5", "--hex", raw.hex(), "--json"]
names = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)["names"]
text = subprocess.run(cmd[:-1], capture_output=True, check=True).stdout.decode()
lines = [line for line in text.splitlines() if "SegmentType" in line or "SlabSize" in line]
print(json.dumps([_plain(values), names, lines]))
"""


def _run_snippet(python: str) -> list:
    done = subprocess.run([python, "-W", "ignore", "-c", SNIPPET], capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=REPO)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout)


def _other_pythons() -> list:
    """Interpreters of the other supported versions on this machine (pyenv's, by path)."""
    found = []
    for python in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2] >= (3, 9))"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        if version == "True" and os.path.realpath(python) != os.path.realpath(sys.executable):
            found.append(python)
    return found


def test_names_are_the_same_on_every_python_found():
    others = _other_pythons()
    require(bool(others), "no other Python 3.9+ interpreter under ~/.pyenv/versions")
    here = _run_snippet(sys.executable)
    assert here[0] == ["Aperture|CpuVisible", "(none set)", "Aperture|0x80000000", "TOP_DOWN",
                       "PURGED_IN_HIBERNATE", "DXGK_SEGMENTTYPE_LOCAL"]
    assert here[1]["SegmentType"] == "DXGK_SEGMENTTYPE_LOCAL" and here[1]["SlabSize"] == "DXGK_PAGESIZE_8KB"
    assert all("DXGK_SEGMENTTYPE_LOCAL" in line or "DXGK_PAGESIZE_8KB" in line for line in here[2])
    for python in others:
        assert _run_snippet(python) == here, python
