"""The public functions, methods and classes of d3dkmddi_py, found rather than listed: every function in a
public module's ``__all__``, every class the public modules export and every public method those classes
define, so a new one is tested without editing the tests that use these lists."""
from __future__ import annotations

import importlib
import inspect
from typing import NamedTuple

MODULES = ("d3dkmddi_py", "d3dkmddi_py.semantics", "d3dkmddi_py.bulk", "d3dkmddi_py.etw",
           "d3dkmddi_py.recipes.dask_decode", "d3dkmddi_py.recipes.dask_etw")


class Kind(NamedTuple):
    """Exported classes whose constructor and methods are not the package's to hold to the wrong-kind test."""

    test: object  # class -> bool
    reason: str


def _kinds() -> tuple:
    import ctypes
    import enum

    return (
        Kind(lambda c: issubclass(c, (ctypes.Structure, ctypes.Union)),
             "the C records: a member given to the constructor is the checked assignment, which "
             "tests/test_classes_assignment.py holds for every leaf of every class (test_constructor_keywords_are_"
             "checked, test_positional_constructor_arguments_are_refused_with_the_keyword_form); the methods are "
             "ctypes'"),
        Kind(lambda c: issubclass(c, enum.Enum),
             "an enum's call is Python's look-up of a member by value, not a constructor the package wrote; "
             "its methods are Python's"),
        Kind(lambda c: issubclass(c, BaseException),
             "the package raises its errors and a caller catches them: none is ever handed back to the package, "
             "and each takes the message the package writes"),
        Kind(lambda c: getattr(c, "_is_protocol", False),
             "a typing.Protocol (AddressSpace) says what memory= takes: Python refuses to build one and its "
             "methods have no body"),
    )


def _names(module) -> list:
    return getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")
                                                and getattr(vars(module)[n], "__module__", "") == module.__name__]


def _exported(module) -> list:
    """The names a module exports.  The package itself keeps its classes out of ``__all__`` (a star import
    brings functions and constants; each class has its own help) and ``dir()`` lists them all."""
    if module.__name__ == "d3dkmddi_py":
        return [n for n in dir(module) if not n.startswith("_")]
    return _names(module)


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


def public_classes(modules=MODULES) -> list:
    """(module name, class name) of every class of the package a public module exports, once (where it is
    first found), but those of the kinds in ``_kinds()``."""
    found, seen = [], set()
    kinds = _kinds()
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in _exported(module):
            cls = getattr(module, name)
            if not inspect.isclass(cls) or not cls.__module__.startswith("d3dkmddi_py") or cls in seen \
                    or any(kind.test(cls) for kind in kinds):
                continue
            seen.add(cls)
            found.append((module_name, name))
    return found


def public_methods(modules=MODULES) -> list:
    """(module name, class name, method name) of every public method a class of ``public_classes`` defines."""
    found = []
    for module_name, name in public_classes(modules):
        cls = getattr(importlib.import_module(module_name), name)
        for attr, value in vars(cls).items():
            function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
            if not attr.startswith("_") and inspect.isfunction(function):
                found.append((module_name, name, attr))
    return found
