"""Enums that print their names on every Python.

``str()`` of an IntEnum or IntFlag gives the number on 3.11+ and ``Class.NAME`` before, and a flag
that is no single member has no ``.name`` on 3.9/3.10 (nor on any version when it is zero).  Every
enum and flag type of this package derives from these two, so ``str()``, ``f"{x}"`` and the
command line's output read the same everywhere.
"""
from __future__ import annotations

import enum


def enum_text(value: enum.Enum) -> str:
    """An enum or flag value by name.  Flags: set members in bit order, unnamed bits in hex."""
    if not isinstance(value, enum.Flag):
        return value.name
    number, parts = int(value), []
    for member in type(value).__members__.values():
        bits = int(member)
        if bits and bits & (bits - 1) == 0 and number & bits:
            parts.append((bits, member.name))
            number &= ~bits
    names = [name for _, name in sorted(parts)]
    if number:
        names.append(f"0x{number:x}")
    return "|".join(names) or "(none set)"


class NamedIntEnum(enum.IntEnum):
    """An IntEnum whose ``str()`` and empty-spec format are its name."""

    def __str__(self) -> str:
        return enum_text(self)

    def __format__(self, spec: str) -> str:
        return enum_text(self) if not spec else format(int(self), spec)


class NamedIntFlag(enum.IntFlag):
    """An IntFlag whose ``str()`` and empty-spec format are its set members' names."""

    def __str__(self) -> str:
        return enum_text(self)

    def __format__(self, spec: str) -> str:
        return enum_text(self) if not spec else format(int(self), spec)
