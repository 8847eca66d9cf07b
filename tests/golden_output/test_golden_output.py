"""The command's output on the bundled sample, compared with the files kept here.

A failure means the output changed.  If the change is intended, regenerate with
``PYTHONPATH=. python tests/golden_output/regenerate.py`` and review the diff.
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES, HERE, command, expected_status  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_golden_file(name):
    golden = HERE / name
    assert golden.exists(), f"{name} is missing; run tests/golden_output/regenerate.py"
    out, status = command(CASES[name])
    assert status == expected_status(name)
    expected = golden.read_text()
    if out != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True), name, "now", n=1))
        pytest.fail(f"output of d3dkmddi {' '.join(CASES[name])} changed "
                    f"(regenerate with tests/golden_output/regenerate.py if intended):\n{diff[:4000]}")


def test_every_golden_file_has_a_case():
    kept = {p.name for p in HERE.iterdir() if p.suffix in (".txt", ".json", ".csv")}
    assert kept == set(CASES), "files without a case (or cases without a file) in tests/golden_output"
