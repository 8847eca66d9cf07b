"""Rewrite the golden output files from the current code: ``PYTHONPATH=. python tests/golden_output/regenerate.py``."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES, HERE, command, expected_status  # noqa: E402

for name, argv in CASES.items():
    out, status = command(argv)
    if status != expected_status(name):
        sys.exit(f"d3dkmddi {' '.join(argv)} exited {status}, expected {expected_status(name)}; not written")
    (HERE / name).write_text(out)
    print(f"{name}: {len(out.splitlines())} lines")
