"""Issue 14: 16 threads reaching NumPy first in a fresh process saw "partially initialized module 'numpy'"
7 to 15 times in 16.  NumPy is imported once, under one lock (``d3dkmddi_py._numpy``)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .commandline import env

RACE = """
import sys, threading
errors = []

def work():
    try:
        if sys.argv[1] == "decode_array":
            from d3dkmddi_py.bulk import decode_array
            decode_array("DXGK_SEGMENTFLAGS", bytes(4096))
        else:
            from d3dkmddi_py import etw
            from d3dkmddi_py.samples import DIRECTORY
            list(etw.adapters(etw.read(DIRECTORY / "etw_trace.xml"), target=("x64", "WDDM2_7")))
    except BaseException as exc:  # every failure counts
        errors.append(repr(exc)[:300])

threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(errors), errors[:1])
"""


@pytest.mark.parametrize("call", ["decode_array", "etw.adapters"])
def test_sixteen_threads_in_a_fresh_process_import_numpy_once(call):
    pytest.importorskip("numpy")
    for run in range(12):
        p = subprocess.run([sys.executable, "-c", RACE, call], capture_output=True, text=True, env=env(), timeout=120)
        assert p.returncode == 0 and p.stdout.startswith("0 "), (run, p.stdout, p.stderr[-2000:])


def test_a_module_still_being_imported_is_not_taken_for_numpy(monkeypatch):
    """loaded_numpy() never returns a module another thread is executing (its spec says _initializing)."""
    import types

    from d3dkmddi_py import _numpy

    half = types.ModuleType("numpy")
    half.__spec__ = types.SimpleNamespace(_initializing=True)
    monkeypatch.setattr(_numpy, "_module", None)
    monkeypatch.setitem(sys.modules, "numpy", half)
    assert _numpy.loaded_numpy() is None
    half.__spec__._initializing = False
    assert _numpy.loaded_numpy() is half
