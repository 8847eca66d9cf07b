"""Facts the prose states that the package also holds: typed twice, so held equal here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("page", ["README.md", "docs/index.md", "d3dkmddi_py/__init__.py"])
def test_the_opening_names_the_newest_interface_version(page):
    """A new version changes the default target; the first paragraph's "from Vista (0x1052) to WDDM 3.2 (0x11007)"
    (the package docstring's first, which help() shows) must follow it (the recipe "Add an interface version")."""
    if page.endswith(".py"):
        import d3dkmddi_py

        opening = " ".join(d3dkmddi_py.__doc__.split("\n\n")[0].split())
    else:
        opening = " ".join(ROOT.joinpath(page).read_text(encoding="utf-8").split("\n\n")[1].split())
    major, minor = re.fullmatch(r"WDDM(\d+)_(\d+)", NEWEST_VERSION).groups()
    assert f"to WDDM {major}.{minor} (0x{INTERFACE_VERSIONS[NEWEST_VERSION]:X})" in opening, opening
