"""The one hand-written layout table.  Everything else (ctypes classes, headers/,
the C shim) is derived from it."""
from __future__ import annotations

from . import base, d3dkmddi, d3dukmdt
from .d3dkmddi import OPAQUE, POINTS_TO
from .model import Alias, Const, EnumDef, PointsTo, TypeDef, Verbatim

# Headers in include order: the base stand-in for winnt.h, then d3dukmdt.h, then d3dkmddi.h.
HEADERS = (base.HEADER, d3dukmdt.HEADER, d3dkmddi.HEADER)

TYPEDEFS = {i.name: i for h in HEADERS for i in h.items if isinstance(i, TypeDef)}
ENUMS = {i.name: i for h in HEADERS for i in h.items if isinstance(i, EnumDef)}
CONSTS = {i.name: i for h in HEADERS for i in h.items if isinstance(i, Const)}
ALIASES = {i.name: i.target for h in HEADERS for i in h.items if isinstance(i, Alias)}
for _t in TYPEDEFS.values():
    ALIASES.update({a: _t.name for a in _t.aliases})

__all__ = ["HEADERS", "TYPEDEFS", "ENUMS", "CONSTS", "ALIASES", "Verbatim", "POINTS_TO", "OPAQUE", "PointsTo"]
