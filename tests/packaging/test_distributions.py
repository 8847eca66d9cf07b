"""The package as users install it. ``python -m build`` makes the sdist and, from it, a wheel; a second
wheel is built from the project tree. Each wheel is installed into a fresh virtual environment (no
system site-packages, no path to this checkout) and used from another folder: every module imports,
the command runs the golden cases and the trace sample with the kept outputs, and ``get_include()``
is a folder a C compiler uses. The sdist holds the whole project, the licence included."""
from __future__ import annotations

import fcntl
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from tests.conftest import require
from tests.golden_output.cases import CASES, HERE as GOLDEN_OUTPUT, command, expected_status

REPO = pathlib.Path(__file__).resolve().parents[2]
HEADERS = {"d3dkmddi.h", "d3dukmdt.h", "d3dkmddi_base.h"}
# What the sdist carries: these folders whole and these files.
SDIST_FOLDERS = ("d3dkmddi_py", "docs", "headers", "tests", "tools")
SDIST_FILES = ("LICENSE", "MANIFEST.in", "README.md", "mkdocs.yml", "pyproject.toml", "setup.py")
# Tracked files that belong to the repository only (CI's script, git's own settings).
REPOSITORY_ONLY = (".ci/", ".gitignore")
_BUILT_HERE = ("__pycache__", ".pyc", ".so", ".pyd", ".egg-info", ".hypothesis", ".pytest_cache", "/build/")


# The build backend runs in a subprocess: PYTHONWARNINGS makes its warnings (SetuptoolsDeprecationWarning) errors too.
BUILD_ENV = dict(os.environ, PYTHONWARNINGS="error")


def _run(cmd, **kw) -> str:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    assert "eprecat" not in out.stdout + out.stderr, f"{' '.join(map(str, cmd))}: {out.stderr[-3000:]}"
    return out.stdout


def project_files() -> list[str]:
    """The project's files: in a checkout, git's tracked and not ignored ones, else (an unpacked sdist) those on disk."""
    if (REPO / ".git").exists() and shutil.which("git"):
        tracked = _run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).split("\0")
        # a file deleted in the work tree but not yet in git's index is not part of the project
        return sorted(n for n in tracked if n and (REPO / n).is_file())
    found = [str(p.relative_to(REPO)) for folder in SDIST_FOLDERS for p in (REPO / folder).rglob("*") if p.is_file()]
    return sorted([*SDIST_FILES, *(n for n in found if not any(b in f"/{n}" for b in _BUILT_HERE))])


def test_every_project_file_is_shipped_or_named_repository_only():
    """A new top-level file or folder is decided on here, not forgotten by the sdist."""
    loose = [n for n in project_files()
             if not n.startswith(REPOSITORY_ONLY) and n not in SDIST_FILES and n.split("/")[0] not in SDIST_FOLDERS]
    assert not loose, f"neither in the sdist's folders {SDIST_FOLDERS} nor its files {SDIST_FILES}: {loose}"


def _shared_folder(tmp_path_factory, name: str) -> pathlib.Path:
    """A folder shared by this run's pytest-xdist workers (each worker has its own basetemp below it)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict:
    """The sdist, the wheel built from it and the wheel built from the tree, made once per run."""
    root = _shared_folder(tmp_path_factory, "dists")
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # workers wait for the one that builds
        if not (root / "done").exists():
            source = root / "source"
            for name in project_files():
                if not name.startswith(REPOSITORY_ONLY):
                    (source / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(REPO / name, source / name)
            # without isolation: the test extra holds setuptools and build, so no download; every warning an error
            # (issue 31: `project.license` as a table warned of builds failing after 2027-02-18, and nobody saw it)
            _run([sys.executable, "-W", "error", "-m", "build", "--no-isolation", "--outdir", root / "from-sdist",
                  source], env=BUILD_ENV)
            _run([sys.executable, "-W", "error", "-m", "build", "--wheel", "--no-isolation", "--outdir",
                  root / "from-tree", source], env=BUILD_ENV)
            (root / "done").touch()
    (sdist,) = (root / "from-sdist").glob("d3dkmddi_py-*.tar.gz")
    (from_sdist,) = (root / "from-sdist").glob("d3dkmddi_py-*.whl")
    (from_tree,) = (root / "from-tree").glob("d3dkmddi_py-*.whl")
    return {"sdist": sdist, "wheel from the sdist": from_sdist, "wheel from the tree": from_tree}


def test_the_sdist_holds_the_whole_project(dists):
    with tarfile.open(dists["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    expected = {n for n in project_files() if not n.startswith(REPOSITORY_ONLY)}
    assert not expected - names, f"missing from the sdist: {sorted(expected - names)[:20]}"
    built = [n for n in names if any(b in f"/{n}" for b in ("__pycache__", ".pyc", ".so", "/build/"))]
    assert not built, f"build products in the sdist: {built[:10]}"


@pytest.mark.parametrize("which", ["wheel from the sdist", "wheel from the tree"])
def test_the_wheel_holds_the_package_and_no_test_code(dists, which):
    names = set(zipfile.ZipFile(dists[which]).namelist())
    package = {n for n in project_files() if n.startswith("d3dkmddi_py/")}
    assert not package - names, f"package files missing from the {which}: {sorted(package - names)}"
    assert {n.rsplit("/", 1)[-1] for n in names if n.startswith("d3dkmddi_py/include/")} == HEADERS
    assert not [n for n in names if not n.startswith(("d3dkmddi_py/", "d3dkmddi_py-"))], "files outside the package"
    dist_info = {n.split("/", 1)[1]: n for n in names if n.startswith("d3dkmddi_py-") and ".dist-info/" in n}
    licence = [n for short, n in dist_info.items() if short.rsplit("/", 1)[-1] == "LICENSE"]
    assert licence, f"no LICENSE in the {which}'s metadata: {sorted(dist_info)}"
    with zipfile.ZipFile(dists[which]) as wheel:
        assert wheel.read(licence[0]) == (REPO / "LICENSE").read_bytes()
        metadata = wheel.read(dist_info["METADATA"]).decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata


@pytest.mark.parametrize("which", ["wheel from the sdist", "wheel from the tree"])
def test_the_installed_wheel_runs_from_another_folder(dists, which, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv])
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    python, program = bin_dir / "python", bin_dir / "d3dkmddi"
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", dists[which]])  # NumPy from the index
    work = tmp_path / "work"  # neither the checkout nor its editable install can be found from here
    work.mkdir()

    probe = ("import importlib, pkgutil, sys, d3dkmddi_py as k\n"
             "names = [m.name for m in pkgutil.walk_packages(k.__path__, 'd3dkmddi_py.')]\n"
             "for name in names:\n"
             "    if not name.endswith('.__main__'):\n"  # entry points: run below, and samples' writes files
             "        importlib.import_module(name)\n"
             "print(k.__file__); print(k.get_include()); print(sys.prefix); print(' '.join(names))\n")
    module, include, prefix, names = _run([python, "-I", "-c", probe], cwd=work).splitlines()
    assert pathlib.Path(prefix) == venv and pathlib.Path(module).is_relative_to(venv)
    site_package = pathlib.Path(module).parent
    shipped = {".".join(pathlib.Path(n).with_suffix("").parts).removesuffix(".__init__")
               for n in project_files() if n.startswith("d3dkmddi_py/") and n.endswith(".py")} - {"d3dkmddi_py"}
    assert set(names.split()) == shipped, f"modules: {sorted(set(names.split()) ^ shipped)}"

    assert _run([program, "--version"], cwd=work).startswith("d3dkmddi ")
    assert "DirectFlip" in _run([program, "decode", "DXGK_SEGMENTFLAGS", "0x485"], cwd=work)
    for name, argv in sorted(CASES.items()):  # demo, decode, bulk decode, validate, layout, types
        out, status = command(argv, program=[program], samples=site_package / "samples", cwd=work)
        assert (out, status) == ((GOLDEN_OUTPUT / name).read_text(), expected_status(name)), f"d3dkmddi {argv}"
    for argv, golden in ((["etw", "sample"], "sample.txt"), (["etw", "sample", "--json"], "sample.jsonl")):
        out, status = command(argv, program=[program], samples=site_package / "samples", cwd=work)
        assert (out, status) == ((REPO / "tests/etw/golden" / golden).read_text(), 1), argv  # 1: the sample's errors
    csv = work / "segments.csv"
    _run([program, "decode", "DXGK_SEGMENTDESCRIPTOR", "--file", site_package / "samples/segments.bin", "--ddi",
          "WDDM3_0", "--count", "all", "--format", "csv", "-o", csv], cwd=work)
    assert len(csv.read_text().splitlines()) > 2

    include = pathlib.Path(include)
    assert include.is_relative_to(site_package) and {p.name for p in include.iterdir()} == HEADERS
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc is not on PATH")
    source = work / "user.c"
    source.write_text('#include "d3dkmddi.h"\n'
                      '_Static_assert(sizeof(DXGK_SEGMENTFLAGS) == 4, "DXGK_SEGMENTFLAGS is one UINT");\n'
                      'int main(void) { DXGK_SEGMENTFLAGS f = {0}; f.Value = 0x485; return f.Aperture ? 0 : 1; }\n')
    _run([gcc, "-std=c11", "-Wall", "-Werror", f"-I{include}", "-o", work / "user", source], cwd=work)
    _run([work / "user"], cwd=work)
