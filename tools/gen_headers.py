"""Write headers/ from the layout table: python tools/gen_headers.py"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from d3dkmddi_py._cgen import render_headers  # noqa: E402


def main() -> int:
    out = ROOT / "headers"
    out.mkdir(exist_ok=True)
    for name, text in render_headers().items():
        (out / name).write_text(text, newline="\n")
        print(f"wrote headers/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
