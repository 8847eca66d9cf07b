"""The events this package reads, one module an event: each states its entry whole and registers it
with one ``registry.register`` call (its template versions from the provider's manifest, its MAPPING,
its state change, its table and its text).  Adding an event is adding a module here (and its test):
the modules are found, not listed.

Import the registry's views from here (``from .catalog import KINDS``): importing this package
registers every module's entry first.
"""
from __future__ import annotations

import importlib
import pkgutil

from ..model.registry import (ARRAYS, BIT_MAPS, ENTRIES, ENTRY_OF, FIELDS, KIND_BY_NAME, KINDS, OPTIONAL, SYMBOLS,
                              TEMPLATES, VALUE_MAPS, entry_of)

__all__ = ["ENTRIES", "ENTRY_OF", "KINDS", "KIND_BY_NAME", "TEMPLATES", "FIELDS", "OPTIONAL", "BIT_MAPS", "VALUE_MAPS",
           "ARRAYS", "SYMBOLS", "entry_of"]

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_module}")
