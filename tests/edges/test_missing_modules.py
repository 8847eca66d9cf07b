"""A library the work needs and the machine lacks is the command's one line, exit 2, naming the library really missing
and the extra that brings it: without NumPy the tables raised a traceback (exit 1, which means findings), and
--plot said matplotlib was missing when matplotlib was there and NumPy was not."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from d3dkmddi_py import cli
from d3dkmddi_py.bulk import NumpyMissingWarning
from tests.bulk.helpers import without_numpy

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ["etw", "sample", "--format", "csv", "-o", "{out}/tables"],
    ["etw", "sample.etl", "--format", "jsonl", "-o", "{out}/tables"],
    ["decode", "DXGK_ALLOCATIONINFO", "--file", "sample", "--count", "2", "--format", "csv", "-o", "{out}/r.csv"],
], ids=["etw xml csv", "etw etl jsonl", "decode csv"])
def test_a_table_without_numpy_is_one_line_naming_the_bulk_extra(argv, tmp_path, monkeypatch):
    without_numpy(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumpyMissingWarning)  # the pure-Python decoder's warning, said before
        out, err, status = cli.run([a.format(out=tmp_path) for a in argv])
    assert status == 2 and err.count("\n") == 1, err
    assert "needs numpy, which is not installed; pip install 'd3dkmddi_py[bulk]'" in err


def test_plot_without_numpy_names_numpy_not_matplotlib(tmp_path):
    """matplotlib imports NumPy: the library missing is NumPy (a package of that name that cannot be imported)."""
    pytest.importorskip("matplotlib", reason="matplotlib (the test extra)")
    blocked = tmp_path / "blocked" / "numpy"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "blocked"), str(ROOT)]))
    run = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", "sample", "--plot", str(tmp_path / "p.png")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "needs matplotlib, which needs numpy, which is not installed; pip install 'd3dkmddi_py[bulk]'" in run.stderr
