"""headers/ is generated from the table, is fresh, and compiles standalone with gcc: native x86-64,
and i386 with and without -mms-bitfields, with static asserts of every size and non-bitfield offset of
that target's classes; and the headers' own layout checks are active at every target."""
from __future__ import annotations

import ast
import re

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py._cgen import render_headers, render_stub
from d3dkmddi_py._spec import ENUMS, TYPEDEFS
from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from d3dkmddi_py.layout import type_layout
from tests.conftest import ALL_TARGETS, count, target_id

from tests.compiler.freshness import stale_files
from tests.compiler.probes import compile_c, layout_asserts

VERSIONS = list(kmd.InterfaceVersion)
MODES = {"x64": ["-m64"], "x86": ["-m32"], "x86-ms-bitfields": ["-m32", "-mms-bitfields"]}
STRICT = ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror"]


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


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_headers_compile_with_gcc(tmp_path, mode, version):
    abi = "x64" if mode == "x64" else "x86"
    text = layout_asserts(abi, version)
    result = compile_c(tmp_path, text, [*MODES[mode], *STRICT])
    assert result.returncode == 0, result.stderr[-3000:]
    count(f"gcc static asserts ({mode})", abi, version, text.count("_Static_assert"))


def test_default_interface_version_is_the_newest(tmp_path):
    newest = INTERFACE_VERSIONS[NEWEST_VERSION]  # read from the table: a new version needs no edit here
    result = compile_c(tmp_path, '#include "d3dkmddi.h"\n'
                       f'_Static_assert(DXGKDDI_INTERFACE_VERSION == {newest:#x}, "default");\n'
                       '_Static_assert(IS_OFFICIAL_DDI_INTERFACE_VERSION(0x5023), "official");\n'
                       '_Static_assert(!IS_OFFICIAL_DDI_INTERFACE_VERSION(0x5022), "10240 value");\n'
                       '_Static_assert(sizeof(DXGK_SEGMENTDESCRIPTOR5) == 88, "newest types");\n',
                       ["-std=c11", "-Wall", "-Werror"])
    assert result.returncode == 0, result.stderr


# One of the headers' own checks as gcc -std=c11 expands it; arm64 is preprocessed by the x86-64 gcc.
_CHECK = re.compile(r"_Static_assert\(sizeof\((\w+)\) == (\d+) && _Alignof\(\1\) == (\d+),")
_PREPROCESS = {"x86": ["-m32"], "x64": ["-m64"], "arm64": ["-m64", "-D_ARM64_"]}


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=[target_id(t) for t in ALL_TARGETS])
def test_every_type_asserts_its_msvc_layout_at_every_abi_and_version(tmp_path, abi, version):
    """The assertions the headers carry are active at every (abi, version) as the preprocessor sees
    it: exactly one per typedef and enum the target has, with its MSVC size and alignment."""
    text = f'#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}\n#include "d3dkmddi.h"\n'
    result = compile_c(tmp_path, text, [*_PREPROCESS[abi], "-std=c11", "-P"], action="-E")
    assert result.returncode == 0, result.stderr[-3000:]
    found = [(name, int(size), int(align)) for name, size, align in _CHECK.findall(result.stdout)]
    types = kmd.target(abi, version).types
    expected = [(n, type_layout(n, abi, int(version)).size, type_layout(n, abi, int(version)).align)
                for n in [*TYPEDEFS, *ENUMS] if n in types]
    assert sorted(found) == sorted(expected)
    count("headers' own layout checks", abi, version, len(found))


def test_createallocation_is_in_every_compiler_check():
    """Issue 24: DXGKARG_CREATEALLOCATION and its flags are laid out by the cffi shim, gcc's static asserts and
    libclang at every version (each iterates the table's typedefs; this holds them to it)."""
    from tests.compiler._shim.build import shim_types
    from tests.compiler.probes import layout_asserts

    new = ("DXGK_CREATEALLOCATIONFLAGS", "DXGKARG_CREATEALLOCATION")
    for version in kmd.InterfaceVersion:
        assert set(new) <= {name for _, name, _ in shim_types(version)}
        for abi, size in (("x86", 24), ("x64", 40), ("arm64", 40)):
            text = layout_asserts(abi, version)
            assert f"sizeof(DXGKARG_CREATEALLOCATION) == {size}" in text
            assert "sizeof(DXGK_CREATEALLOCATIONFLAGS) == 4" in text
            flags = 20 if abi == "x86" else 32
            assert f"__builtin_offsetof(DXGKARG_CREATEALLOCATION, Flags.Value) == {flags}" in text
