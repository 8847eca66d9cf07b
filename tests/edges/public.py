"""The public functions and methods of d3dkmddi_py, found rather than listed: every function in a public
module's ``__all__`` and every public method the exported classes define, so a new one is tested without
editing the tests that use these lists."""
from __future__ import annotations

import importlib
import inspect

MODULES = ("d3dkmddi_py", "d3dkmddi_py.semantics", "d3dkmddi_py.bulk", "d3dkmddi_py.etw",
           "d3dkmddi_py.recipes.dask_decode", "d3dkmddi_py.recipes.dask_etw")


def _names(module) -> list:
    return getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")
                                                and getattr(vars(module)[n], "__module__", "") == module.__name__]


def public_callables(modules=MODULES) -> list:
    """(module name, attribute name) of every function in a public module's __all__ (one wrapped in a cache too)."""
    found = []
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in _names(module):
            value = getattr(module, name)
            if callable(value) and not inspect.isclass(value):  # a cached function too; classes are values
                found.append((module_name, name))
    return found


def public_methods(modules=MODULES) -> list:
    """(module name, class name, method name) of every public method an exported class of the package defines
    (ctypes record classes, enums and exceptions excluded: their methods are Python's)."""
    import ctypes
    import enum

    found, seen = [], set()
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in _names(module):
            cls = getattr(module, name)
            if not inspect.isclass(cls) or not cls.__module__.startswith("d3dkmddi_py") or cls in seen \
                    or issubclass(cls, (ctypes.Structure, ctypes.Union, enum.Enum, BaseException)):
                continue
            seen.add(cls)
            for attr, value in vars(cls).items():
                function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                if not attr.startswith("_") and inspect.isfunction(function):
                    found.append((module_name, name, attr))
    return found
