"""Called from Python, the package leaves its host process as it found it."""
from __future__ import annotations

import subprocess
import sys

PROBE = """
import d3dkmddi_py as kmd
from d3dkmddi_py import pipeline
text = kmd.report("DXGK_SEGMENTFLAGS", bytes(range(256)) * 200, count="all", validate=True)
assert text.count(" at +0x") == 12800, text[:200]
print(pipeline.keep_heap.cache_info().currsize)
"""


def test_report_on_many_records_does_not_retune_the_allocator():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0"]


def test_the_command_tunes_it_in_its_own_process():
    probe = ("import sys; from d3dkmddi_py import cli, pipeline; sys.argv[1:] = ['decode', 'DXGK_SEGMENTFLAGS', '1'];"
             " status = cli._main(None); sys.stderr.write(str(pipeline.keep_heap.cache_info().currsize))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr.strip() == "1", out.stderr[-2000:]
