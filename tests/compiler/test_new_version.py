"""Adding an interface version is one line in d3dkmddi_py/_spec/versions.py: the headers' default,
IS_OFFICIAL_DDI_INTERFACE_VERSION, NEWEST and the package's DXGKDDI_INTERFACE_VERSION follow it,
and the freshness test then reports the checked-in files as stale.

Simulated on a copy of the package with a version after the newest added to the table, in a subprocess."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS
from tests.compiler.freshness import REPO, stale_files
from tests.compiler.probes import compile_c

# a version the table does not hold, after its newest (the table's own newest is read, not written here)
NEW_NAME, NEW_VALUE = "WDDM_NEXT", max(INTERFACE_VERSIONS.values()) + 1

_PROBE = """
import json
import d3dkmddi_py as kmd
from d3dkmddi_py._cgen import render_headers, render_stub
print(json.dumps({"file": kmd.__file__, "headers": render_headers(), "stub": render_stub(),
                  "newest": kmd.NEWEST.name, "default": kmd.DXGKDDI_INTERFACE_VERSION,
                  "constant": getattr(kmd, "DXGKDDI_INTERFACE_VERSION_%s" % kmd.NEWEST.name)}))
"""


def _package_with_new_version(tmp_path: pathlib.Path) -> pathlib.Path:
    copy = tmp_path / "src"
    shutil.copytree(REPO / "d3dkmddi_py", copy / "d3dkmddi_py", ignore=shutil.ignore_patterns("__pycache__"))
    versions = copy / "d3dkmddi_py" / "_spec" / "versions.py"
    text = versions.read_text()
    table = re.search(r"INTERFACE_VERSIONS = \{\n(.*?)\n\}", text, re.S)
    assert table and NEW_NAME not in table.group(1), "the table changed shape: update this test"
    edited = text[:table.end(1)] + f'\n    "{NEW_NAME}": 0x{NEW_VALUE:X},' + text[table.end(1):]
    versions.write_text(edited)
    return copy


def test_a_version_added_to_the_table_becomes_the_header_default(tmp_path):
    copy = _package_with_new_version(tmp_path)
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=copy, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(copy)})
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert pathlib.Path(got["file"]).is_relative_to(copy), "the probe imported the repository, not the copy"
    assert (got["newest"], got["default"], got["constant"]) == (NEW_NAME, NEW_VALUE, NEW_VALUE)

    ukmdt = got["headers"]["d3dukmdt.h"]
    assert f"#define DXGKDDI_INTERFACE_VERSION DXGKDDI_INTERFACE_VERSION_{NEW_NAME}\n" in ukmdt
    assert f"((version) == DXGKDDI_INTERFACE_VERSION_{NEW_NAME})" in ukmdt
    # the macro block closes the version list: after the new constant, not after the old newest
    assert ukmdt.index(f"#define DXGKDDI_INTERFACE_VERSION_{NEW_NAME} ") < ukmdt.index("IS_OFFICIAL_DDI_INTERFACE_VERSION")
    assert f"DXGKDDI_INTERFACE_VERSION: Final = 0x{NEW_VALUE:X}" in got["stub"]

    # the freshness check, run on the repository's checked-in files, now fails for both
    stale = stale_files(got["headers"], got["stub"])
    assert "headers/d3dukmdt.h" in stale and "d3dkmddi_py/__init__.pyi" in stale

    include = tmp_path / "include"
    include.mkdir()
    for name, text in got["headers"].items():
        (include / name).write_text(text)
    result = compile_c(tmp_path, '#include "d3dkmddi.h"\n'
                       f'_Static_assert(DXGKDDI_INTERFACE_VERSION == 0x{NEW_VALUE:X}, "default");\n'
                       f'_Static_assert(IS_OFFICIAL_DDI_INTERFACE_VERSION(0x{NEW_VALUE:X}), "official");\n'
                       '_Static_assert(sizeof(DXGK_SEGMENTDESCRIPTOR5) == 88, "types of WDDM3_2 and later");\n',
                       ["-std=c11", "-Wall", "-Werror"], include=include)
    assert result.returncode == 0, result.stderr
