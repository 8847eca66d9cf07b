"""Every leaf of every class against clang's MSVC record layout, for the three Windows
targets and every interface version (libclang parses headers/, no system headers,
and any diagnostic is a failure)."""
from __future__ import annotations

import ctypes

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py._spec import TYPEDEFS
from tests.compiler._shim.build import HEADERS
from tests.conftest import count

TRIPLES = {"x86": "i686-pc-windows-msvc", "x64": "x86_64-pc-windows-msvc", "arm64": "aarch64-pc-windows-msvc"}
CASES = [(abi, v) for abi in kmd.ABIS for v in kmd.InterfaceVersion]


def _c_type(spelling: str) -> str:
    return spelling.replace("VOID", "void").replace(" ", "")


def clang_leaves(ci, record_type, prefix="", base_bits=0):
    """(path, bit offset, bit width, C type) of every leaf, as clang lays the record out."""
    for f in record_type.get_fields():
        bits = base_bits + f.get_field_offsetof()
        canonical = f.type.get_canonical()
        if canonical.kind == ci.TypeKind.RECORD:
            anonymous = not f.spelling or "(anonymous" in f.spelling  # a named member of tagless type is not
            sub = prefix if anonymous else f"{prefix}{f.spelling}."
            yield from clang_leaves(ci, canonical, sub, bits)
        elif canonical.kind == ci.TypeKind.CONSTANTARRAY:
            element = f.type.element_type
            step = element.get_size() * 8
            for i in range(f.type.element_count):
                yield f"{prefix}{f.spelling}[{i}]", bits + i * step, step, _c_type(element.spelling)
        elif f.is_bitfield():
            yield f"{prefix}{f.spelling}", bits, f.get_bitfield_width(), _c_type(f.type.spelling)
        else:
            yield f"{prefix}{f.spelling}", bits, canonical.get_size() * 8, _c_type(f.type.spelling)


@pytest.mark.parametrize("abi,version", CASES, ids=[f"{a}-{v.name}" for a, v in CASES])
def test_every_leaf_matches_clang_msvc_layout(cindex, abi, version):
    ci = cindex
    source = f'#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}\n#include "d3dkmddi.h"\n'
    args = ["-target", TRIPLES[abi], f"-I{HEADERS}", "-nostdinc", "-ffreestanding", "-std=c11",
            "-Wall", "-Wextra", "-pedantic"]
    tu = ci.Index.create().parse("probe.c", args=args, unsaved_files=[("probe.c", source)])
    assert not list(tu.diagnostics), [str(d) for d in tu.diagnostics]
    records = {c.spelling: c.underlying_typedef_type.get_canonical()
               for c in tu.cursor.get_children() if c.kind == ci.CursorKind.TYPEDEF_DECL}
    ns = kmd.target(abi, version)
    expected_types = [name for name in TYPEDEFS if name in ns.types]
    assert sorted(n for n in TYPEDEFS if n in records) == sorted(expected_types), "types present differ"
    compared = 0
    for name in expected_types:
        cls, rec = ns.types[name], records[name]
        where = f"{name}[{abi} {version.name}]"
        assert (rec.get_size(), rec.get_align()) == (ctypes.sizeof(cls), cls._layout_.align), f"{where}: size/align"
        ours = [(leaf.path, leaf.offset * 8 + leaf.bit_offset, leaf.bit_width, _c_type(leaf.c_type))
                for leaf in kmd.leaves(cls)]
        theirs = list(clang_leaves(ci, rec))
        assert [t[0] for t in theirs] == [o[0] for o in ours], f"{where}: leaf paths"
        for o, t in zip(ours, theirs):
            assert o == t, f"{where}.{o[0]}: ours (path, bit, width, type) {o} vs clang {t}"
        compared += 2 + 4 * len(ours)
    count("libclang MSVC layout", abi, version, compared)
