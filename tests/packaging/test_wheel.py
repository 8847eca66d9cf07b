"""The wheel as a user gets it: built from the source tree, installed with pip into a fresh venv
(no system site-packages, no access to this checkout), it carries the C headers, and
``get_include()`` is a folder a C compiler can use; test-only code is not in it."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import require

REPO = pathlib.Path(__file__).resolve().parents[2]
HEADERS = {"d3dkmddi.h", "d3dukmdt.h", "d3dkmddi_base.h"}


def _run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    """A wheel built from a copy of the tracked sources (a build never writes into the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for folder in ("d3dkmddi_py", "headers"):  # headers/ at the top is the C mirror's one copy
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", tmp / "dist", source])
    (found,) = (tmp / "dist").glob("d3dkmddi_py-*.whl")
    return found


def test_the_wheel_holds_the_headers_and_no_test_code(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.rsplit("/", 1)[-1] for n in names if n.startswith("d3dkmddi_py/include/")} == HEADERS
    assert "d3dkmddi_py/__init__.pyi" in names and "d3dkmddi_py/py.typed" in names
    assert not [n for n in names if "_shim" in n or n.startswith("tests/")]


def test_get_include_compiles_c_code_in_a_fresh_venv(wheel, tmp_path):
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc is not on PATH")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv])
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel])
    # from an empty folder: neither the checkout nor its editable install can be found
    work = tmp_path / "work"
    work.mkdir()
    probe = "import sys, d3dkmddi_py as k; print(k.get_include()); print(k.__file__); print(sys.prefix)"
    include, module, prefix = _run([python, "-I", "-c", probe], cwd=work).splitlines()
    assert pathlib.Path(module).is_relative_to(venv) and pathlib.Path(prefix) == venv
    assert pathlib.Path(include).is_relative_to(venv) and {p.name for p in pathlib.Path(include).iterdir()} == HEADERS

    source = work / "user.c"
    source.write_text('#include "d3dkmddi.h"\n'
                      '_Static_assert(sizeof(DXGK_SEGMENTFLAGS) == 4, "DXGK_SEGMENTFLAGS is one UINT");\n'
                      'int main(void) { DXGK_SEGMENTFLAGS f = {0}; f.Value = 0x485; return f.Aperture ? 0 : 1; }\n')
    _run([gcc, "-std=c11", "-Wall", "-Werror", f"-I{include}", "-o", work / "user", source], cwd=work)
    _run([work / "user"], cwd=work)
