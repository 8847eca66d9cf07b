"""The package's layers: no module imports one above it (issue 16, "Names: one module"), at module
level or inside a function; and the modules that read names and layouts stay free of ctypes."""
from __future__ import annotations

from tests.packaging.import_graph import PACKAGE, Edge, edges, fresh_interpreter, modules

# Lowest first.  A module belongs to the layer of the longest prefix that names it; a module that
# no prefix names fails the test, so a new module is placed on purpose.
LAYERS = (
    ("facts", ("_numpy", "_records", "_spec", "errors", "_enums", "coltext", "jsonvalue", "csvtext", "wording",
               "windbg", "outfile", "memory")),
    ("names", ("names",)),
    ("layouts", ("layout", "introspect", "resolve", "span")),
    ("classes", ("_classes", "target")),
    ("meanings", ("semantics",)),
    ("records", ("render", "dttext", "jsonformat", "decoding", "follow")),
    ("columns", ("bulk", "pipeline")),
    # etw's parts, lowest first: what a trace is made of, its readers, what it is written as, the events' entries
    ("etw model", ("etw.model",)),
    ("etw readers", ("etw.readers",)),
    ("etw outputs", ("etw.outputs",)),
    ("etw catalog", ("etw.catalog",)),
    ("etw", ("etw",)),
    ("samples", ("samples", "recipes")),
    # "" is the package root, which routes every public name; _cgen writes the headers and the root's stub
    ("command", ("cli", "guard", "__main__", "", "_cgen")),
)


def layer_of(module: str):
    """(index, layer name) of a dotted module name, or None when no prefix names it."""
    best = None
    inner = module[len(PACKAGE) + 1:] if module.startswith(PACKAGE + ".") else ""
    for index, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if inner == prefix or inner.startswith(prefix + ".") or (prefix == "" and inner == ""):
                if best is None or len(prefix) > best[2]:
                    best = (index, name, len(prefix))
    return None if best is None else best[:2]


def upward(graph_edges) -> list:
    """Every edge from a module to one in a higher layer."""
    return [e for e in graph_edges if layer_of(e.target)[0] > layer_of(e.source)[0]]


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer_of(m) is None] == []


def test_no_module_imports_one_above_it():
    found = upward(edges())
    assert not found, "; ".join(f"{e.source}:{e.line} ({layer_of(e.source)[1]}) -> {e.target} "
                                f"({layer_of(e.target)[1]}){' in a function' if e.lazy else ''}" for e in found)


def test_the_layer_check_sees_an_upward_import():
    made_up = [Edge(f"{PACKAGE}.etw.outputs.command", f"{PACKAGE}.samples.etw_build", 1, True),
               Edge(f"{PACKAGE}.samples.etw_build", f"{PACKAGE}.etw.outputs.command", 1, False)]
    assert upward(made_up) == made_up[:1]


def test_names_layouts_and_the_resolver_load_no_ctypes():
    """resolve.py once reached target.py (ctypes) for class_of; semantics imported target.py for
    InterfaceVersion alone."""
    probe = ("import sys, d3dkmddi_py as kmd\n"
             "import d3dkmddi_py.names, d3dkmddi_py.resolve, d3dkmddi_py.span\n"
             "kmd.InterfaceVersion, kmd.parse_abi('amd64'), kmd.parse_interface_version('WDDM2_0')\n"
             "d3dkmddi_py.resolve.resolve_layout('DXGK_SEGMENTFLAGS', ('amd64', 'WDDM2_0'))\n"
             "print('ctypes' in sys.modules)\n")
    assert fresh_interpreter(probe).strip() == "False"
