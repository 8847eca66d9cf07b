"""The package's import graph, read from the source with ast (nothing is imported).

An edge A -> B means module A names module B in an import statement.  ``lazy`` edges are the
ones inside a function body (they run on first call, not at import); ``if TYPE_CHECKING:``
blocks never run and are left out.
"""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
from dataclasses import dataclass

PACKAGE = "d3dkmddi_py"
ROOT = pathlib.Path(__file__).resolve().parents[2] / PACKAGE


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    lazy: bool


def modules() -> dict:
    """{dotted module name: path} for every .py file of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(body, lazy=False):
    """(node, lazy) for every import statement that can run, walking into blocks."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, lazy
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _imports(node.body, True)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _imports(node.orelse, lazy)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _imports(getattr(node, field, None) or [], lazy)


def edges() -> list:
    known = modules()
    out = []
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node, lazy in _imports(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_package else 0)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                # ``from X import sub`` names the submodule X.sub; any other name comes from X itself
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin for a in node.names]
            for target in dict.fromkeys(targets):
                if target in known and target != name:
                    out.append(Edge(name, target, node.lineno, lazy))
    return out


def cycles(graph_edges) -> list:
    """Every strongly connected component of more than one module, each sorted, the list sorted."""
    graph: dict = {}
    for e in graph_edges:
        graph.setdefault(e.source, set()).add(e.target)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def fresh_interpreter(code: str) -> str:
    """The standard output of ``code`` run in a new interpreter (what it imports starts from nothing)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout
