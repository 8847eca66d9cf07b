"""The node types of the layout table: plain data, mirrored from the C headers.

A type's members are a tree of Field / Bits / Record / If nodes.  ``If`` carries the
header's own ``#if`` condition, so the C mirror can print the guards as the kit has
them and a target (abi, interface version) can evaluate them.
"""
from __future__ import annotations

from .versions import INTERFACE_VERSIONS


class _Node:
    """A frozen record with value equality: ``_fields`` in order, ``_defaults`` for the trailing ones.

    Plain slotted classes, not dataclasses: every command loads this table, and dataclasses costs
    its import (with ``inspect``) plus ~0.5 ms a class to compile its methods, a tenth of a one-word
    decode's start-up."""

    __slots__ = ()
    _fields: tuple = ()
    _defaults: tuple = ()

    def __init__(self, *args, **kwargs):
        fields, setter = self._fields, object.__setattr__
        if len(args) == len(fields) and not kwargs:  # the table's usual spelling
            for name, value in zip(fields, args):
                setter(self, name, value)
            return
        values = dict(zip(fields[len(fields) - len(self._defaults):], self._defaults))
        values.update(zip(fields, args))
        wrong = [n for n in kwargs if n not in fields or fields.index(n) < len(args)]
        values.update(kwargs)
        missing = [n for n in fields if n not in values]
        if len(args) > len(fields) or wrong or missing:
            raise TypeError(f"{type(self).__name__}{fields}: {len(args)} positional {'argument' if len(args) == 1 else 'arguments'}; "
                            f"unexpected or repeated: {wrong}; missing: {missing}")
        for name in fields:
            setter(self, name, values[name])

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash((self.__class__.__name__, self._values()))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")

    __delattr__ = __setattr__

    def __reduce__(self):
        return type(self), self._values()


# ---------------------------------------------------------------- conditions
class Since(_Node):
    """``DXGKDDI_INTERFACE_VERSION >= DXGKDDI_INTERFACE_VERSION_<version>``."""

    __slots__ = _fields = ("version",)

    def holds(self, abi: str, version: int) -> bool:
        return version >= INTERFACE_VERSIONS[self.version]

    def c_text(self) -> str:
        return f"(DXGKDDI_INTERFACE_VERSION >= DXGKDDI_INTERFACE_VERSION_{self.version})"

    def describe(self) -> str:
        return f"interface version >= {self.version}"


class Arch64(_Node):
    """``defined(_AMD64_) || defined(_ARM64_)``: 64-bit targets only."""

    __slots__ = ()

    def holds(self, abi: str, version: int) -> bool:
        return abi in ("x64", "arm64")

    def c_text(self) -> str:
        return "(defined(_AMD64_) || defined(_ARM64_))"

    def describe(self) -> str:
        return "a 64-bit target (x64 or arm64)"


class AllOf(_Node):
    __slots__ = _fields = ("terms",)

    def holds(self, abi: str, version: int) -> bool:
        return all(t.holds(abi, version) for t in self.terms)

    def c_text(self) -> str:
        return " && ".join(t.c_text() for t in self.terms)

    def describe(self) -> str:
        return " and ".join(t.describe() for t in self.terms)


class Not(_Node):
    __slots__ = _fields = ("term",)

    def holds(self, abi: str, version: int) -> bool:
        return not self.term.holds(abi, version)

    def c_text(self) -> str:
        return f"!{self.term.c_text()}"

    def describe(self) -> str:
        if isinstance(self.term, Since):
            return f"interface version < {self.term.version}"
        return f"not {self.term.describe()}"


Condition = (Since, Arch64, AllOf, Not)  # the kinds of condition (isinstance accepts the tuple)


# ---------------------------------------------------------------- members
class Field(_Node):
    """A plain member: ``ctype name[count];``.  ``ctype`` is a C type spelling
    (``UINT``, ``SIZE_T``, ``VOID*``, ``DXGK_SEGMENTFLAGS``); ``c_spelling`` is the token in the
    header when a macro renames it."""

    __slots__ = _fields = ("name", "ctype", "count", "c_spelling")
    _defaults = (None, None)


class Bits(_Node):
    """A bitfield ``ctype name : width;``."""

    __slots__ = _fields = ("name", "ctype", "width", "c_spelling")
    _defaults = (None,)


class Record(_Node):
    """An inline struct or union (``kind`` "struct" or "union"); ``name`` is None when anonymous."""

    __slots__ = _fields = ("kind", "members", "name")
    _defaults = (None,)


class If(_Node):
    """Members under the header's ``#if cond`` (``then``) and its ``#else`` (``otherwise``)."""

    __slots__ = _fields = ("cond", "then", "otherwise")
    _defaults = ((),)


Member = (Field, Bits, Record, If)  # the kinds of member


# ---------------------------------------------------------------- top level
class TypeDef(_Node):
    """``typedef struct|union tag { members } name, *pointer_names;``; ``aliases`` are further
    typedef names for the same type (DXGK_SEGMENTPREFERENCE)."""

    __slots__ = _fields = ("name", "kind", "members", "header", "tag", "guard", "pointers", "doc", "aliases")
    _defaults = (None, None, (), None, ())


class EnumDef(_Node):
    """An enum: ``values`` are ((enumerator, value), ...)."""

    __slots__ = _fields = ("name", "values", "header", "tag", "guard", "doc")
    _defaults = (None, None, None)


class Const(_Node):
    """A ``#define`` constant; ``c_text`` is the literal as the header spells it."""

    __slots__ = _fields = ("name", "value", "header", "guard", "c_text")
    _defaults = (None, None)


class Alias(_Node):
    """``typedef existing name;`` at file level (DXGK_SEGMENTPREFERENCE)."""

    __slots__ = _fields = ("name", "target", "header", "pointers")
    _defaults = ((),)


class Verbatim(_Node):
    """Lines the C mirror prints as they are (the DXGK_ALLOC_RESERVEDn macro block)."""

    __slots__ = _fields = ("text", "header")


class PointsTo(_Node):
    """What a pointer member points to, as a page (or the kit) states it: ``count`` elements of ``type``.

    ``type`` is a typedef, a scalar C type (``SIZE_T``) or ``BYTE`` for raw bytes; ``count`` is 1, the
    name of a member of the same struct that holds it, or None where no source states it (``note`` says
    what is known).  ``stride`` names the member that gives each element's size when it is not the
    type's; ``when`` names a flag that must be set for the pointer to point anywhere.  ``quotes`` are the
    sentences of ``page`` that say so, verbatim (markup left out)."""

    __slots__ = _fields = ("type", "count", "quotes", "page", "stride", "when", "note")
    _defaults = (None, None, None)


class Header:
    """One header's items in declaration order."""

    def __init__(self, name: str, items: list | None = None):
        self.name, self.items = name, [] if items is None else items

    def __repr__(self):
        return f"Header(name={self.name!r}, items=<{len(self.items)}>)"

    def add(self, item):
        self.items.append(item)
        return item
