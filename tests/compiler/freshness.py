"""Whether the checked-in generated files (headers/, __init__.pyi) equal freshly generated ones."""
from __future__ import annotations

import pathlib

import d3dkmddi_py as kmd
from d3dkmddi_py._cgen import STUB_PATH

HEADERS = pathlib.Path(kmd.get_include())
REPO = pathlib.Path(__file__).resolve().parents[2]


def stale_files(headers: dict, stub: str, include=HEADERS, repo=REPO) -> list:
    """The generated files whose checked-in copy differs from ``headers``/``stub`` (or is missing
    or left over)."""
    on_disk = {p.name: p.read_text() for p in include.glob("*.h")}
    stale = [f"{include.name}/{n}" for n in sorted(set(on_disk) | set(headers)) if on_disk.get(n) != headers.get(n)]
    stub_path = repo / STUB_PATH
    if not stub_path.is_file() or stub_path.read_text() != stub:
        stale.append(STUB_PATH)
    return stale
