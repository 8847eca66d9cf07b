"""Rewrite tests/etw/golden from the current code: ``PYTHONPATH=. python tests/etw/regenerate_golden.py``; read the
diff before committing it."""
from __future__ import annotations

import sys

from tests.etw.helpers import GOLDEN, GOLDEN_CASES, run

for name, (argv, expected) in GOLDEN_CASES.items():
    out, status = run(argv)
    if status != expected:
        sys.exit(f"d3dkmddi etw {' '.join(argv)} exited {status}, expected {expected}; not written")
    (GOLDEN / name).write_text(out)
    print(f"{name}: {len(out.splitlines())} lines")
