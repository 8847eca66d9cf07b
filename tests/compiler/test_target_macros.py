"""Issue 14, "Never a layout MSVC cannot produce": a target macro that disagrees with the compiler's pointer
width stops the build with #error and the fix; each right pairing compiles with the kit's sizes, typed by
hand in tests/golden/tables.py.  And headers/ at the top of the repository is the one copy."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

import d3dkmddi_py as kmd
from tests.compiler.probes import clang_diagnostics, compile_c
from tests.golden.tables import golden_size

REPO = pathlib.Path(__file__).resolve().parents[2]
HEADERS = REPO / "headers"
NEWEST = max(kmd.InterfaceVersion)
CHECKED = ("DXGK_ALLOCATIONINFO", "DXGK_SEGMENTDESCRIPTOR", "DXGK_ALLOCATIONLIST")


def _asserts(abi: str) -> str:
    lines = [f'_Static_assert(sizeof({name}) == {golden_size(name, abi, NEWEST)[0]}, "{name} at {abi}");'
             for name in CHECKED]
    return '#include "d3dkmddi.h"\n' + "\n".join(lines) + "\n"


def _gcc(tmp_path, flags, abi) -> subprocess.CompletedProcess:
    return compile_c(tmp_path, _asserts(abi), ["-std=c11", *flags])


@pytest.mark.parametrize("flags, says", [
    (["-m64", "-D_X86_"], "_X86_ needs a 32-bit compiler (this one has 64-bit pointers): compile with -m32"),
    (["-m32", "-D_AMD64_"], "_AMD64_ and _ARM64_ need a 64-bit compiler (this one has 32-bit pointers): drop -m32"),
    (["-m32", "-D_ARM64_"], "_AMD64_ and _ARM64_ need a 64-bit compiler"),
    (["-m64", "-D_X86_", "-D_AMD64_"], "define one of _X86_, _AMD64_ and _ARM64_, not several"),
    (["-mx32"], "_AMD64_ and _ARM64_ need a 64-bit compiler (this one has 32-bit pointers): drop -m32 or -mx32"),
], ids=["x86-macro-on-64-bit-gcc", "amd64-macro-on-32-bit-gcc", "arm64-macro-on-32-bit-gcc", "two-macros",
        "x32-abi-x86_64-with-32-bit-pointers"])
def test_a_target_macro_that_disagrees_with_the_compiler_is_an_error(tmp_path, flags, says):
    p = _gcc(tmp_path, flags, "x64")
    assert p.returncode != 0 and "#error" in p.stderr and says in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("flags, abi", [(["-m32", "-D_X86_"], "x86"), (["-m32"], "x86"),
                                        (["-m64", "-D_AMD64_"], "x64"), (["-m64"], "x64")],
                         ids=["m32-x86-macro", "m32-no-macro", "m64-amd64-macro", "m64-no-macro"])
def test_a_target_macro_that_agrees_compiles_with_the_kits_sizes(tmp_path, flags, abi):
    p = _gcc(tmp_path, flags, abi)
    assert p.returncode == 0, p.stderr[-2000:]


def _clang(ci, triple: str, macro: str, abi: str) -> list:
    return clang_diagnostics(ci, _asserts(abi), ["-target", triple, "-std=c11", f"-D{macro}"])


@pytest.mark.parametrize("triple, macro, abi", [("i686-pc-windows-msvc", "_X86_", "x86"),
                                                ("x86_64-pc-windows-msvc", "_AMD64_", "x64"),
                                                ("aarch64-pc-windows-msvc", "_ARM64_", "arm64")])
def test_each_msvc_target_with_its_macro_compiles_with_the_kits_sizes(cindex, triple, macro, abi):
    assert _clang(cindex, triple, macro, abi) == []


@pytest.mark.parametrize("triple, macro", [("i686-pc-windows-msvc", "_ARM64_"), ("i686-pc-windows-msvc", "_AMD64_"),
                                           ("aarch64-pc-windows-msvc", "_X86_")])
def test_each_msvc_target_with_a_wrong_macro_is_an_error(cindex, triple, macro):
    assert any("#error" in d or "error:" in d for d in _clang(cindex, triple, macro, "x64")), triple


def test_headers_live_at_the_top_of_the_repository_once():
    assert sorted(p.name for p in HEADERS.glob("*.h")) == ["d3dkmddi.h", "d3dkmddi_base.h", "d3dukmdt.h"]
    copies = [p for p in REPO.rglob("d3dkmddi.h") if ".venv" not in p.parts and "build" not in p.parts
              and not any(part.endswith(".egg-info") for part in p.parts)]
    assert copies == [HEADERS / "d3dkmddi.h"]


def test_get_include_of_a_source_checkout_is_the_repositorys_headers():
    """CI installs with pip install -e: this process is the editable install."""
    assert pathlib.Path(kmd.get_include()).resolve() == HEADERS.resolve()
