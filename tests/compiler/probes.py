"""C probes of the classes' layouts for the compiler tests: assertions of every size and non-bitfield
offset of one target's classes, the versions at which a target's layouts change, and the two compilers
(gcc or g++ as a program, clang through libclang) run on a probe."""
from __future__ import annotations

import ctypes
import shutil
import subprocess

import d3dkmddi_py as kmd
from d3dkmddi_py._spec import ENUMS, TYPEDEFS
from d3dkmddi_py.layout import type_layout
from tests.conftest import require

# How a probe states a fact: C11, C++11, and the negative array for C89/C99 and C++98.
ASSERTS = {
    "c11": '_Static_assert({test}, "{what}");',
    "c++11": 'static_assert({test}, "{what}");',
    "old": "typedef char probe_{n}[({test}) ? 1 : -1];",
}


def layout_asserts(abi: str, version, style: str = "c11") -> str:
    """A C file that includes d3dkmddi.h at ``version`` and asserts the size of every typedef and enum
    and the offset of every non-bitfield leaf that ``target(abi, version)`` has (gcc's and clang's
    ``__builtin_offsetof``)."""
    ns = kmd.target(abi, version)
    tests = []
    for name in TYPEDEFS:
        cls = ns.types.get(name)
        if cls is None:
            continue  # which types exist at a version is compared with clang in test_libclang.py
        tests.append((f"sizeof({name}) == {ctypes.sizeof(cls)}", f"{name} size"))
        tests += [(f"__builtin_offsetof({name}, {leaf.path}) == {leaf.offset}", f"{name}.{leaf.path}")
                  for leaf in kmd.leaves(cls) if not leaf.is_bitfield]
    tests += [(f"sizeof({name}) == {type_layout(name, abi, int(version)).size}", f"{name} size")
              for name in ENUMS if name in ns.types]
    lines = [f"#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}", '#include "d3dkmddi.h"']  # no <stddef.h>: libclang has none
    lines += [ASSERTS[style].format(test=test, what=what, n=n) for n, (test, what) in enumerate(tests)]
    return "\n".join(lines) + "\n"


def layout_versions(abi: str) -> list:
    """The interface versions at which some type's layout at ``abi`` differs from the version before
    (the oldest first): a layout check runs once per distinct layout, not once per version."""
    out, last = [], None
    for version in kmd.InterfaceVersion:
        ns = kmd.target(abi, version)
        key = tuple((name, ctypes.sizeof(ns.types[name]), tuple(kmd.leaves(ns.types[name])))
                    for name in TYPEDEFS if name in ns.types)
        if key != last:
            out.append(version)
            last = key
    return out


def compile_c(tmp_path, text: str, flags: list, compiler: str = "gcc", action: str = "-fsyntax-only",
              include=None) -> subprocess.CompletedProcess:
    """``compiler -fsyntax-only`` (or ``action``) on ``text`` with ``include`` (headers/) on the include
    path (C, or C++ for g++)."""
    program = shutil.which(compiler)
    require(program is not None, f"{compiler} is not on PATH")
    source = tmp_path / ("probe.cpp" if compiler.endswith("++") else "probe.c")
    source.write_text(text)
    return subprocess.run([program, action, f"-I{include or kmd.get_include()}", *flags, str(source)],
                          capture_output=True, text=True, timeout=120)


def clang_diagnostics(ci, text: str, args: list) -> list:
    """Every diagnostic of libclang parsing ``text`` (no system headers; ``args`` give the target)."""
    args = [f"-I{kmd.get_include()}", "-nostdinc", "-ffreestanding", *args]
    tu = ci.Index.create().parse("probe.c", args=args, unsaved_files=[("probe.c", text)])
    return [str(d) for d in tu.diagnostics]


def leaf_images(abi: str, version, before: str = "") -> tuple:
    """(C text, [(symbol, what, expected bytes)]): for every leaf of every typedef ``target(abi, version)``
    has, a global of that type initialised with that one leaf set (a bit-field to all ones, a scalar to the
    bytes 01 02 03 ..., so its position and its byte order both show), and the bytes MSVC's layout gives
    it.  ``before`` goes ahead of the ``#include`` (a pragma a user put there)."""
    ns = kmd.target(abi, version)
    lines = [before, f"#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}", '#include "d3dkmddi.h"']
    expected = []
    for name in TYPEDEFS:
        cls = ns.types.get(name)
        if cls is None:
            continue
        for j, leaf in enumerate(kmd.leaves(cls)):
            image = bytearray(ctypes.sizeof(cls))
            if leaf.is_bitfield:
                value = (1 << leaf.bit_width) - 1
                word = int.from_bytes(image[leaf.offset:leaf.offset + leaf.size], "little") | value << leaf.bit_offset
                image[leaf.offset:leaf.offset + leaf.size] = word.to_bytes(leaf.size, "little")
                c_value = f"{value:#x}u"
            else:
                pattern = bytes(range(1, leaf.size + 1))
                image[leaf.offset:leaf.offset + leaf.size] = pattern
                number = int.from_bytes(pattern, "little")
                pointer = leaf.c_type.endswith("*") or leaf.c_type in ("HANDLE", "PMDL")
                c_value = f"(void *)(ULONG_PTR){number:#x}ull" if pointer else f"{number:#x}ull"
            symbol = f"probe_{name}_{j}"
            lines.append(f"{name} {symbol} = {{ .{leaf.path} = {c_value} }};")
            expected.append((symbol, f"{name}.{leaf.path}", bytes(image)))
    return "\n".join(lines) + "\n", expected


def object_images(tmp_path, text: str, flags: list) -> tuple:
    """(the compiler's result, {symbol: bytes}) of ``text`` compiled to an object file (``gcc -c``), each
    global's bytes read from the object's .data section (binutils' nm and objcopy)."""
    for tool in ("nm", "objcopy"):
        require(shutil.which(tool) is not None, f"{tool} (binutils) is not on PATH")
    result = compile_c(tmp_path, text, ["-c", "-o", str(tmp_path / "probe.o"), *flags], action="-std=c11")
    if result.returncode != 0:
        return result, {}
    data = tmp_path / "data.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.data", str(tmp_path / "probe.o"), str(data)],
                   check=True, timeout=60)
    raw = data.read_bytes() if data.exists() else b""
    symbols = subprocess.run(["nm", "-S", "--defined-only", str(tmp_path / "probe.o")], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    images = {}
    for line in symbols.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "dD":
            at, size = int(parts[0], 16), int(parts[1], 16)
            images[parts[3]] = raw[at:at + size]
    return result, images
