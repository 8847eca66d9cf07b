"""Write the generated files from the layout table: python tools/gen_headers.py

- headers/*.h: the C mirror of the headers, its one copy (the wheel ships it as d3dkmddi_py/include;
  get_include() finds either);
- d3dkmddi_py/__init__.pyi: every top-level name with its type, for editors.
Tests fail while either is stale (tests/compiler/test_headers.py).
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from d3dkmddi_py._cgen import STUB_PATH, render_headers, render_stub  # noqa: E402


def main() -> int:
    out = ROOT / "headers"
    out.mkdir(exist_ok=True)
    for name, text in render_headers().items():
        (out / name).write_text(text, newline="\n")
        print(f"wrote {(out / name).relative_to(ROOT)}")
    stub = ROOT / STUB_PATH
    stub.write_text(render_stub(), newline="\n")
    print(f"wrote {STUB_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
