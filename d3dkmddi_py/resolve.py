"""The one type/target resolver: a C name or class, at a target, to its TypeLayout; no ctypes built.

Targets come as a Target, an ABI name, an (abi, interface version) pair, or None (x64, newest).
Names may carry WinDbg decoration (``dxgkrnl!_DXGK_ALLOCATIONINFO``) and any case.
"""
from __future__ import annotations

import enum

from . import _spec
from .errors import DecodeError
from .layout import TypeLayout, type_layout
from .names import parse_target, target_label, type_name


def resolve_layout(type_, target=None) -> TypeLayout:
    """The TypeLayout of a class (which keeps its own target) or of a C name at ``target``."""
    if isinstance(type_, type):
        own = getattr(type_, "_target_", None)
        if isinstance(own, tuple):
            if target is not None and parse_target(target) != own:
                there = target_label(*parse_target(target))
                raise DecodeError(f"{type_._c_name_} is the class of {type_._target_label_} but target "
                                  f"{there} was also given; pass the name {type_._c_name_!r} with the target, "
                                  f"or the class alone")
            return type_layout(type_._c_name_, *own)
        if issubclass(type_, enum.IntEnum) and type_.__name__ in _spec.ENUMS:
            return type_layout(type_.__name__, *parse_target(target))
        raise DecodeError(f"{type_.__name__} is not a d3dkmddi_py type; pass a C name such as "
                          f"'DXGK_ALLOCATIONINFO' or a class from d3dkmddi_py.target(...)")
    if isinstance(type_, TypeLayout):
        if target is not None and parse_target(target) != type_.target:
            raise DecodeError(f"{type_.c_name} is laid out for {type_.label} but another target was given")
        return type_
    if not isinstance(type_, str):
        raise DecodeError(f"type must be a C name or a d3dkmddi_py class, not {type(type_).__name__}")
    abi, version = parse_target(target)
    return type_layout(type_name(type_, abi, version), abi, version)
