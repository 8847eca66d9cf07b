"""Generate, compile and load the C shim (needs cffi and a C compiler).

The C functions never let cffi interpret a structure: cffi places bitfields with
host rules, so every answer comes from code the C compiler generated.  For each
interface version there is one translation unit with functions
``shim_<v>_sizeof/alignof/offsetof/allones/read`` indexed by type and leaf ids that
follow ``target("x64", v)``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import platform
import shutil
import sys
import tempfile

from d3dkmddi_py import InterfaceVersion, get_include, leaves, target
from d3dkmddi_py._cgen import render_headers

ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADERS = pathlib.Path(get_include())

_FUNCTIONS = (
    "size_t shim_{v}_sizeof(int type_id);",
    "size_t shim_{v}_alignof(int type_id);",
    "long long shim_{v}_offsetof(int type_id, int leaf_id);",
    "int shim_{v}_allones(int type_id, int leaf_id, unsigned char *out, size_t n);",
    "int shim_{v}_read(int type_id, int leaf_id, const unsigned char *in, size_t n, unsigned long long *value);",
)


def shim_types(version):
    """(type id, C name, class) of every typedef the x64 target has at ``version``."""
    ns = target("x64", version)
    from d3dkmddi_py._spec import TYPEDEFS

    return [(i, name, ns.types[name]) for i, name in enumerate(n for n in TYPEDEFS if n in ns.types)]


def _translation_unit(version) -> str:
    v = f"{int(version):x}"
    types = shim_types(version)
    out = [
        f"#define DXGKDDI_INTERFACE_VERSION 0x{int(version):X}",
        "#include <stddef.h>",
        "#include <string.h>",
        '#include "d3dkmddi.h"',
        "",
        f"size_t shim_{v}_sizeof(int type_id) {{ switch (type_id) {{",
        *(f"  case {i}: return sizeof({name});" for i, name, _ in types),
        "  default: return 0; } }",
        f"size_t shim_{v}_alignof(int type_id) {{ switch (type_id) {{",
        *(f"  case {i}: return _Alignof({name});" for i, name, _ in types),
        "  default: return 0; } }",
        f"long long shim_{v}_offsetof(int type_id, int leaf_id) {{ switch (type_id) {{",
    ]
    for i, name, cls in types:
        out.append(f"  case {i}: switch (leaf_id) {{")
        for j, leaf in enumerate(leaves(cls)):
            if not leaf.is_bitfield:
                out.append(f"    case {j}: return (long long)offsetof({name}, {leaf.path});")
        out.append("    default: return -1; }")
    out.append("  default: return -2; } }")
    out.append(f"int shim_{v}_allones(int type_id, int leaf_id, unsigned char *out, size_t n) {{")
    out.append("  volatile unsigned int ones = ~0u;  /* not a constant: the compiler truncates it to the width */")
    out += _per_leaf_switch(types, "memset(&s, 0, sizeof s);", "memcpy(out, &s, sizeof s); return 0;",
                            bitfield="s.{p} = ones; break;", plain="memset(&s.{p}, 0xFF, sizeof s.{p}); break;")
    out.append(f"int shim_{v}_read(int type_id, int leaf_id, const unsigned char *in, size_t n, "
               "unsigned long long *value) {")
    out += _per_leaf_switch(types, "memcpy(&s, in, sizeof s); *value = 0;", "",
                            bitfield="*value = s.{p}; return 0;", plain="memcpy(value, &s.{p}, sizeof s.{p}); return 0;")
    return "\n".join(out) + "\n"


def _per_leaf_switch(types, prologue: str, epilogue: str, *, bitfield: str, plain: str) -> list:
    """``switch (type_id) { case i: { T s; prologue; switch (leaf_id) {...} epilogue } }``: the body of a
    function that works on one leaf of a local object ``s``.  ``{p}`` in a statement is the leaf's path,
    which is a C member designator as it is (``Flags.CpuVisible``, ``Reserved[2]``)."""
    out = ["  switch (type_id) {"]
    for i, name, cls in types:
        out.append(f"  case {i}: {{ {name} s; if (n < sizeof s) return -3; {prologue}")
        out.append("    switch (leaf_id) {")
        for j, leaf in enumerate(leaves(cls)):
            statement = bitfield if leaf.is_bitfield else plain
            out.append(f"    case {j}: " + statement.format(p=leaf.path))
        out.append("    default: return -1; }")
        out.append(f"    {epilogue} }}" if epilogue else "    }")
    out.append("  default: return -2; } }")
    return out


def sources() -> dict:
    """{file name: C text} for every version, plus the cdef."""
    files = {f"shim_{int(v):x}.c": _translation_unit(v) for v in InterfaceVersion}
    files["shim.cdef"] = "\n".join(f.format(v=f"{int(v):x}") for v in InterfaceVersion for f in _FUNCTIONS) + "\n"
    return files


def _compile_args():
    args = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        args.append("-mms-bitfields")  # MSVC record layout; an x86-only gcc option
    return args


def load(build_root: pathlib.Path | None = None):
    """Compile (once per content hash) and import the shim; returns a ``Shim``."""
    import cffi

    headers = render_headers()
    stale = [n for n, text in headers.items() if (HEADERS / n).read_text() != text]
    if stale:
        raise RuntimeError(f"{HEADERS} is stale ({', '.join(stale)}): run python tools/gen_headers.py")
    files = sources()
    digest = hashlib.sha256("".join(sorted(files.values()) + sorted(headers.values())).encode()
                            + " ".join(_compile_args()).encode()).hexdigest()[:16]
    root = (build_root or ROOT / "build") / f"shim-{digest}"
    root.mkdir(parents=True, exist_ok=True)
    module = f"_d3dkmddi_shim_{digest}"
    built = list(root.glob(f"{module}*.so")) + list(root.glob(f"{module}*.pyd"))
    if not built:  # built in a private folder, then moved in whole: parallel test workers may race here
        work = pathlib.Path(tempfile.mkdtemp(dir=root))
        for name, text in files.items():
            (work / name).write_text(text)
        ffi = cffi.FFI()
        ffi.cdef(files["shim.cdef"])
        ffi.set_source(module, "#include <stddef.h>\n" + files["shim.cdef"], sources=[str(work / n) for n in files if n.endswith(".c")],
                       include_dirs=[str(HEADERS)], extra_compile_args=_compile_args())
        ffi.compile(tmpdir=str(work), verbose=False)
        for made in list(work.glob(f"{module}*.so")) + list(work.glob(f"{module}*.pyd")):
            os.replace(made, root / made.name)
        shutil.rmtree(work, ignore_errors=True)
        built = list(root.glob(f"{module}*.so")) + list(root.glob(f"{module}*.pyd"))
    spec = importlib.util.spec_from_file_location(module, built[0])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return Shim(mod.ffi, mod.lib)


class Shim:
    """The compiled side's answers, per interface version, for the x64 layout."""

    def __init__(self, ffi, lib):
        self.ffi, self.lib = ffi, lib

    def _fn(self, version, what):
        return getattr(self.lib, f"shim_{int(version):x}_{what}")

    def sizeof(self, version, type_id: int) -> int:
        return self._fn(version, "sizeof")(type_id)

    def alignof(self, version, type_id: int) -> int:
        return self._fn(version, "alignof")(type_id)

    def offsetof(self, version, type_id: int, leaf_id: int) -> int:
        result = self._fn(version, "offsetof")(type_id, leaf_id)
        if result < 0:
            raise LookupError(f"no offsetof for type {type_id} leaf {leaf_id} (code {result})")
        return result

    def allones(self, version, type_id: int, leaf_id: int, size: int) -> bytes:
        buf = self.ffi.new("unsigned char[]", size)
        code = self._fn(version, "allones")(type_id, leaf_id, buf, size)
        if code:
            raise LookupError(f"allones failed for type {type_id} leaf {leaf_id} (code {code})")
        return bytes(self.ffi.buffer(buf, size))

    def read(self, version, type_id: int, leaf_id: int, data: bytes) -> int:
        value = self.ffi.new("unsigned long long *")
        code = self._fn(version, "read")(type_id, leaf_id, data, len(data), value)
        if code:
            raise LookupError(f"read failed for type {type_id} leaf {leaf_id} (code {code})")
        return value[0]
