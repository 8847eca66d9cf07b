"""Targets: (abi, DXGKDDI_INTERFACE_VERSION) -> a cached namespace of ctypes classes."""
from __future__ import annotations

import copyreg
import ctypes
import threading

from . import _spec
from ._classes import Builder, CheckedStructure, CheckedUnion
from .errors import MissingMember, UnsupportedTarget, flag_argument, shown
from .introspect import layout_table
from .layout import TypeLayout, typedef_layout
from .names import (ABIS, ENUM_CLASSES, NEWEST, InterfaceVersion, absent_members, absent_type,  # noqa: F401
                    parse_abi, parse_interface_version, parse_target, parse_version)

globals().update(ENUM_CLASSES)  # pickles written when the enums lived here name this module


class Target:
    """All types of one target.  Attributes are the C typedef names (and tag names)."""

    def __init__(self, abi: str, version: InterfaceVersion, force_padding: bool = False):
        """A new set of classes (``target()`` gives the cached one); ``abi`` and ``version`` in any spelling
        ``target()`` takes."""
        try:
            abi, version = parse_abi(abi), parse_version(version)
        except UnsupportedTarget as exc:
            raise UnsupportedTarget(f"Target: {exc}") from None
        self.abi = abi
        self.interface_version = version
        self.force_padding = flag_argument(force_padding, "Target: force_padding")
        self.label = f"{abi} {version.name} (0x{version.value:X})"
        builder = Builder(abi, int(version), self.label, absent_members(abi, int(version)), force_padding,
                          rebuild=instance_at)
        self._types = {}
        for td in _spec.TYPEDEFS.values():
            if td.guard is None or td.guard.holds(abi, int(version)):
                cls = builder.typedef_class(td.name, typedef_layout(td.name, abi, int(version)))
                cls.__doc__ = _class_doc(td, cls, self.label)
                for name in (td.name, td.tag, *td.aliases):
                    if name:
                        self._types[name] = cls
        for alias, original in _spec.ALIASES.items():
            if original in self._types:
                self._types[alias] = self._types[original]
        for e in _spec.ENUMS.values():
            if e.guard is None or e.guard.holds(abi, int(version)):
                self._types[e.name] = ENUM_CLASSES[e.name]
        self.constants = {c.name: c.value for c in _spec.CONSTS.values()
                          if c.guard is None or c.guard.holds(abi, int(version))}

    @property
    def types(self) -> dict:
        """C name -> class (typedef names, tag names and aliases)."""
        return dict(self._types)

    def __getattr__(self, name):
        types = self.__dict__.get("_types", {})
        if name in types:
            return types[name]
        if name in self.__dict__.get("constants", {}):
            return self.constants[name]
        if "label" not in self.__dict__:  # half-built (unpickling, or a failed __init__)
            raise MissingMember(f"no type {shown(name)} in d3dkmddi_py")
        raise MissingMember(_missing_type_message(name, self.label, self.abi, int(self.interface_version)))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._types) | set(self.constants))

    def __repr__(self):
        return f"<d3dkmddi_py target {self.label}: {len(self._types)} types>"

    def __reduce__(self):  # pickle and copy give the cached target back, not a second set of classes
        if self.force_padding:
            return Target, (self.abi, self.interface_version, True)
        return target, (self.abi, self.interface_version)


def _missing_type_message(name: str, label: str, abi: str, version: int) -> str:
    return absent_type(name, abi, version) or f"no type {shown(name)} in d3dkmddi_py (target {label})"


def _class_doc(td, cls, label: str) -> str:
    return f"{td.name} ({td.header}) target={label}\n{td.doc or ''}\n\n{layout_table(cls)}"


_TARGETS: dict = {}
# One lock for all targets: re-entrant, so a build that asks for another target (or itself) cannot deadlock.
_BUILD_LOCK = threading.RLock()


def _cached(abi: str, version: InterfaceVersion) -> Target:
    key = (abi, version)
    found = _TARGETS.get(key)
    if found is None:
        with _BUILD_LOCK:
            found = _TARGETS.get(key)
            if found is None:
                found = _TARGETS[key] = Target(abi, version)
    return found


def target(abi: str = "x64", interface_version=NEWEST) -> Target:
    """The classes for one ABI ("x86", "x64", "arm64") and interface version.

    ``interface_version`` is an official value (0x5023), a name ("WDDM2_0") or a macro
    name ("DXGKDDI_INTERFACE_VERSION_WDDM2_0").  Results are cached.
    """
    return _cached(parse_abi(abi), parse_version(interface_version))


def as_target(value=None, *, instance=None) -> Target:
    """A Target from a Target, an (abi, interface version) pair, an abi name, or None.

    None means the instance's own target when an instance of a project class is given,
    else x64 at the newest version.
    """
    if isinstance(value, Target):
        return value
    if value is None:
        own = getattr(type(instance), "_target_", None) if instance is not None else None
        return target(*own) if isinstance(own, tuple) else target("x64", NEWEST)
    return target(*parse_target(value))


def class_of(layout: TypeLayout):
    """The user-facing ctypes class (or enum) of a layout, built on first use."""
    if layout.kind == "enum":
        return ENUM_CLASSES[layout.c_name]
    return target(layout.abi, layout.version).types[layout.c_name]


# ---- pickle and copy: instances and classes travel as (abi, version, class path), built again on arrival

def class_at(abi: str, interface_version, path: str):
    """The class of the cached target at ``path``: a C name ("DXGK_ALLOCATIONINFO"), then the member
    names leading to an inner record or array ("DXGK_ALLOCATIONINFO._u0")."""
    name, *members = path.split(".")
    cls = getattr(target(abi, interface_version), name)
    for member in members:
        inner = dict(getattr(cls, "_fields_", ())).get(member)
        if inner is None:
            raise MissingMember(f"{cls.__name__} has no member {member!r} (looking for {path} at "
                                f"{cls._target_label_})")
        cls = inner
    return cls


def instance_at(abi: str, interface_version, path: str, data: bytes):
    """An instance of :func:`class_at` holding ``data`` byte for byte (what instances pickle to)."""
    return class_at(abi, interface_version, path).from_buffer_copy(data)


def array_of(element, length: int):
    """``element * length``: what an array type a user made of the package's classes pickles to."""
    return element * length


def _reduce_class(cls):
    own = cls.__dict__.get("_path_")  # only the classes a Builder made, not a user's subclass
    if own is not None:
        return class_at, (*cls._target_, own)
    element = getattr(cls, "_type_", None)
    if issubclass(cls, ctypes.Array) and isinstance(element, type) and "_path_" in element.__dict__:
        return array_of, (element, cls._length_)  # `t.DXGK_SEGMENTFLAGS * 3`: its element class travels
    return cls.__qualname__  # any other ctypes class: pickle's usual lookup by name


for _meta in {type(CheckedStructure), type(CheckedUnion), type(ctypes.Array)}:
    copyreg.pickle(_meta, _reduce_class)
