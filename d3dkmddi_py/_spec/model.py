"""The node types of the layout table: plain data, mirrored from the C headers.

A type's members are a tree of Field / Bits / Record / If nodes.  ``If`` carries the
header's own ``#if`` condition, so the C mirror can print the guards as the kit has
them and a target (abi, interface version) can evaluate them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .versions import INTERFACE_VERSIONS


# ---------------------------------------------------------------- conditions
@dataclass(frozen=True)
class Since:
    """``DXGKDDI_INTERFACE_VERSION >= DXGKDDI_INTERFACE_VERSION_<version>``."""

    version: str

    def holds(self, abi: str, version: int) -> bool:
        return version >= INTERFACE_VERSIONS[self.version]

    def c_text(self) -> str:
        return f"(DXGKDDI_INTERFACE_VERSION >= DXGKDDI_INTERFACE_VERSION_{self.version})"

    def describe(self) -> str:
        return f"interface version >= {self.version}"


@dataclass(frozen=True)
class Arch64:
    """``defined(_AMD64_) || defined(_ARM64_)``: 64-bit targets only."""

    def holds(self, abi: str, version: int) -> bool:
        return abi in ("x64", "arm64")

    def c_text(self) -> str:
        return "(defined(_AMD64_) || defined(_ARM64_))"

    def describe(self) -> str:
        return "a 64-bit target (x64 or arm64)"


@dataclass(frozen=True)
class AllOf:
    terms: tuple

    def holds(self, abi: str, version: int) -> bool:
        return all(t.holds(abi, version) for t in self.terms)

    def c_text(self) -> str:
        return " && ".join(t.c_text() for t in self.terms)

    def describe(self) -> str:
        return " and ".join(t.describe() for t in self.terms)


@dataclass(frozen=True)
class Not:
    term: object

    def holds(self, abi: str, version: int) -> bool:
        return not self.term.holds(abi, version)

    def c_text(self) -> str:
        return f"!{self.term.c_text()}"

    def describe(self) -> str:
        if isinstance(self.term, Since):
            return f"interface version < {self.term.version}"
        return f"not {self.term.describe()}"


Condition = Union[Since, Arch64, AllOf, Not]


# ---------------------------------------------------------------- members
@dataclass(frozen=True)
class Field:
    """A plain member: ``ctype name[count];``.  ``ctype`` is a C type spelling
    (``UINT``, ``SIZE_T``, ``VOID*``, ``DXGK_SEGMENTFLAGS``)."""

    name: str
    ctype: str
    count: int | None = None
    c_spelling: str | None = None  # the token in the header when a macro renames it


@dataclass(frozen=True)
class Bits:
    """A bitfield ``ctype name : width;``."""

    name: str
    ctype: str
    width: int
    c_spelling: str | None = None


@dataclass(frozen=True)
class Record:
    """An inline struct or union; ``name`` is None when anonymous."""

    kind: str  # "struct" | "union"
    members: tuple
    name: str | None = None


@dataclass(frozen=True)
class If:
    cond: Condition
    then: tuple
    otherwise: tuple = ()


Member = Union[Field, Bits, Record, If]


# ---------------------------------------------------------------- top level
@dataclass(frozen=True)
class TypeDef:
    """``typedef struct|union tag { members } name, *pointer_names;``"""

    name: str
    kind: str
    members: tuple
    header: str
    tag: str | None = None
    guard: Condition | None = None
    pointers: tuple = ()
    doc: str | None = None
    aliases: tuple = ()  # further typedef names for the same type (DXGK_SEGMENTPREFERENCE)


@dataclass(frozen=True)
class EnumDef:
    name: str
    values: tuple  # ((enumerator, value), ...)
    header: str
    tag: str | None = None
    guard: Condition | None = None
    doc: str | None = None


@dataclass(frozen=True)
class Const:
    name: str
    value: int
    header: str
    guard: Condition | None = None
    c_text: str | None = None  # the literal as the header spells it


@dataclass(frozen=True)
class Alias:
    """``typedef existing name;`` at file level (DXGK_SEGMENTPREFERENCE)."""

    name: str
    target: str
    header: str
    pointers: tuple = ()


@dataclass(frozen=True)
class Verbatim:
    """Lines the C mirror prints as they are (the DXGK_ALLOC_RESERVEDn macro block)."""

    text: str
    header: str


@dataclass
class Header:
    """One header's items in declaration order."""

    name: str
    items: list = field(default_factory=list)

    def add(self, item):
        self.items.append(item)
        return item
