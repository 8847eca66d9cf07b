"""Exceptions: a small hierarchy whose instances carry what went wrong as attributes."""
from __future__ import annotations


class D3dkmddiError(Exception):
    """Base of every error this package raises on purpose."""


class UnsupportedTarget(D3dkmddiError, ValueError):
    """An unknown ABI or interface version."""


class InvalidFieldValue(D3dkmddiError, ValueError):
    """A value that does not fit the field it is assigned to."""

    def __init__(self, type_name: str, field: str, value, valid: str, hint: str, fix: str = ""):
        self.type_name, self.field, self.value, self.valid, self.hint, self.fix = type_name, field, value, valid, hint, fix
        super().__init__(f"{type_name}.{field} = {value!r} {hint} (valid {valid})" + (f"; {fix}" if fix else ""))


class InvalidFieldType(InvalidFieldValue, TypeError):
    """A value of the wrong kind (a float, a string, a struct of another type)."""


class MissingMember(D3dkmddiError, AttributeError):
    """A type or member that the chosen target does not have."""
