"""headers/ is generated from the table, is fresh, and compiles standalone with gcc:
native x86-64, and i386 with and without -mms-bitfields, with static asserts of every
size and non-bitfield offset of that target's classes."""
from __future__ import annotations

import ast
import ctypes
import shutil
import subprocess

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py._cgen import render_headers, render_stub
from d3dkmddi_py._spec import TYPEDEFS
from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from tests.conftest import count, require

from tests.compiler.freshness import HEADERS, stale_files

VERSIONS = list(kmd.InterfaceVersion)
MODES = {"x64": ["-m64"], "x86": ["-m32"], "x86-ms-bitfields": ["-m32", "-mms-bitfields"]}


def test_checked_in_headers_and_stub_are_fresh():
    stale = stale_files(render_headers(), render_stub())
    assert not stale, f"stale: {', '.join(stale)}: run python tools/gen_headers.py"


def test_stub_binds_every_public_name_with_the_fields_of_its_class():
    tree = ast.parse(render_stub())
    bound, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            bound |= {a.asname for a in node.names}
        elif isinstance(node, ast.ClassDef):
            bound.add(node.name)
            classes[node.name] = [n.target.id for n in node.body if isinstance(n, ast.AnnAssign)]
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            bound |= {t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])}
        elif isinstance(node, ast.FunctionDef):
            bound.add(node.name)
    assert set(kmd.__all__) <= bound, sorted(set(kmd.__all__) - bound)
    # a C field (flattened through anonymous members) is an attribute of the class; DXGK_SEGMENTFLAGS'
    # bitfields and Value sit in an anonymous union, so they are the case to get right
    assert classes["DXGK_SEGMENTFLAGS"][:3] == ["Aperture", "Agp", "CpuVisible"]
    assert classes["DXGK_SEGMENTFLAGS"][-1] == "Value"
    for name, fields in classes.items():
        if name in TYPEDEFS:
            want = [n for n in getattr(kmd, name)._rules_ if not n.startswith("_")]
            assert fields == want, name


def _asserts(abi, version) -> str:
    ns = kmd.target(abi, version)
    lines = [f"#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}", "#include <stddef.h>", '#include "d3dkmddi.h"']
    for name in TYPEDEFS:
        cls = ns.types.get(name)
        if cls is None:
            continue  # which types exist at a version is compared with clang in test_libclang.py
        lines.append(f'_Static_assert(sizeof({name}) == {ctypes.sizeof(cls)}, "{name} size");')
        for leaf in kmd.leaves(cls):
            if not leaf.is_bitfield:
                lines.append(f'_Static_assert(offsetof({name}, {leaf.path}) == {leaf.offset}, "{name}.{leaf.path}");')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_headers_compile_with_gcc(tmp_path, mode, version):
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc is not on PATH")
    abi = "x64" if mode == "x64" else "x86"
    source = tmp_path / "probe.c"
    text = _asserts(abi, version)
    source.write_text(text)
    cmd = [gcc, *MODES[mode], "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
           f"-I{HEADERS}", str(source)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    count(f"gcc static asserts ({mode})", abi, version, text.count("_Static_assert"))


def test_default_interface_version_is_the_newest(tmp_path):
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc is not on PATH")
    source = tmp_path / "default.c"
    newest = INTERFACE_VERSIONS[NEWEST_VERSION]  # read from the table: a new version needs no edit here
    source.write_text('#include "d3dkmddi.h"\n'
                      f'_Static_assert(DXGKDDI_INTERFACE_VERSION == {newest:#x}, "default");\n'
                      '_Static_assert(IS_OFFICIAL_DDI_INTERFACE_VERSION(0x5023), "official");\n'
                      '_Static_assert(!IS_OFFICIAL_DDI_INTERFACE_VERSION(0x5022), "10240 value");\n'
                      '_Static_assert(sizeof(DXGK_SEGMENTDESCRIPTOR5) == 88, "newest types");\n')
    result = subprocess.run([gcc, "-std=c11", "-Wall", "-Werror", "-fsyntax-only", f"-I{HEADERS}", str(source)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
