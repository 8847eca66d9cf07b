"""The package's modules: no import cycles, each imports on its own, and ``import d3dkmddi_py``
loads nothing until a name is used (issue 8: "no import cycles", "import is instant").

No cycle at all: not through imports at module level, and not through imports inside functions
(a late import that closes a cycle only hides it)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from tests.packaging.import_graph import PACKAGE, ROOT, cycles, edges, modules


def _describe(cycle, graph_edges) -> str:
    inside = [e for e in graph_edges if e.source in cycle and e.target in cycle]
    return "; ".join(f"{e.source}:{e.line} -> {e.target}{' (in a function)' if e.lazy else ''}" for e in inside)


def test_no_cycle_through_top_level_imports():
    graph_edges = [e for e in edges() if not e.lazy]
    found = cycles(graph_edges)
    assert not found, "\n".join(_describe(c, graph_edges) for c in found)


def test_no_cycle_even_through_imports_inside_functions():
    """(_classes once imported target inside __reduce__, render and semantics each other, etw.model
    its bulkpath, _spec.model the d3dukmdt table inside Since.holds.)"""
    graph_edges = edges()
    found = cycles(graph_edges)
    assert not found, "\n".join(_describe(c, graph_edges) for c in found)


def test_the_cycle_finder_sees_a_cycle():
    from tests.packaging.import_graph import Edge

    made_up = [Edge("a", "b", 1, False), Edge("b", "c", 1, True), Edge("c", "a", 1, False), Edge("c", "d", 1, False)]
    assert cycles(made_up) == [("a", "b", "c")]


_IMPORT_EACH = """
import importlib, json, sys
failed = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "d3dkmddi_py" or m.startswith("d3dkmddi_py.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def test_every_module_imports_first():
    """Each module imported first, in a fresh package: an import order that only works after
    another module loaded is a hidden cycle."""
    names = [m for m in modules() if not m.endswith("__main__")]
    out = subprocess.run([sys.executable, "-c", _IMPORT_EACH, json.dumps(names)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout) == {}


def test_import_loads_no_submodule_until_a_name_is_used():
    probe = ("import sys, json, d3dkmddi_py as kmd\n"
             "before = sorted(m for m in sys.modules if m.startswith('d3dkmddi_py.') or m == 'ctypes')\n"
             "kmd.DXGKDDI_INTERFACE_VERSION_WDDM2_0\n"
             "constants = sorted(m for m in sys.modules if m.startswith('d3dkmddi_py.'))\n"
             "kmd.DXGK_SEGMENTFLAGS\n"
             "print(json.dumps([before, constants, 'd3dkmddi_py.semantics' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    before, constants, semantics = json.loads(out.stdout)
    assert before == []
    assert all(m.startswith(f"{PACKAGE}._spec") for m in constants), constants  # a constant needs the table only
    assert not semantics  # a class needs no subsystem


@pytest.mark.parametrize("name", ["decode", "check", "render_text", "decode_array", "target", "semantics", "bulk",
                                  "DXGK_SEGMENTFLAGS", "DXGK_PAGESIZE", "DXGKDDI_INTERFACE_VERSION"])
def test_lazy_names_resolve_in_a_fresh_interpreter(name):
    out = subprocess.run([sys.executable, "-c", f"import d3dkmddi_py as kmd; print(repr(kmd.{name}))"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]


def test_the_package_root_writes_no_layout_fact():
    """Versions, priorities and segment ids come from _spec; the root only routes names."""
    tree = ast.parse((ROOT / "__init__.py").read_text())
    numbers = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is int]
    assert not [v for v in numbers if v > 1], numbers


def test_every_public_name_resolves_and_is_listed():
    """Names move between the subsystems; the root's routing table must follow (and __dir__ show them)."""
    probe = ("import json, d3dkmddi_py as kmd\n"
             "bad = [n for n in kmd.__all__ if not hasattr(kmd, n)]\n"
             "ns = {}\n"
             "exec('from d3dkmddi_py import *', ns)\n"
             "print(json.dumps([bad, sorted(set(kmd.__all__) - set(ns)), sorted(set(kmd.__all__) - set(dir(kmd)))]))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout) == [[], [], []]


@pytest.mark.parametrize("first", ["import d3dkmddi_py.target", "import d3dkmddi_py.decoding",
                                   "import d3dkmddi_py as kmd; kmd.target"])
def test_target_stays_the_function_whatever_loads_first(first):
    """The submodule d3dkmddi_py.target shares its name with the function target()."""
    probe = f"{first}\nimport d3dkmddi_py as kmd\nfrom d3dkmddi_py import target\nprint(callable(kmd.target) and " \
            "kmd.target is target and kmd.target('x86', 'WIN7').label)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "x86 WIN7 (0x2005)"
