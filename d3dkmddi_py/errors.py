"""Exceptions: a small hierarchy whose instances carry what went wrong as attributes."""
from __future__ import annotations


class D3dkmddiError(Exception):
    """Base of every error this package raises on purpose."""

    def __reduce__(self):
        # Subclasses take structured arguments, not the message: rebuild from the message and attributes,
        # so an error raised in a worker process reaches the parent intact.
        return _rebuild_error, (type(self), self.args, self.__dict__)


def _rebuild_error(cls, args, attributes):
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(attributes)
    return error


class UnsupportedTarget(D3dkmddiError, ValueError):
    """An unknown ABI or interface version."""


def shown(value) -> str:
    """repr(value) for a one-line message: clipped, and a huge int by its size (Python refuses to
    print an int of more than 4300 digits, and such a value is a mistake whatever it is)."""
    if isinstance(value, int) and value.bit_length() > 256:
        return f"<a {value.bit_length()}-bit int>"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a value nested too deep, or holding a huge int
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= 100 else text[:97] + "..."


class InvalidFieldValue(D3dkmddiError, ValueError):
    """A value that does not fit the field it is assigned to."""

    def __init__(self, type_name: str, field: str, value, valid: str, hint: str, fix: str = ""):
        self.type_name, self.field, self.value, self.valid, self.hint, self.fix = type_name, field, value, valid, hint, fix
        super().__init__(f"{type_name}.{field} = {shown(value)} {hint} (valid {valid})" + (f"; {fix}" if fix else ""))


class InvalidFieldType(InvalidFieldValue, TypeError):
    """A value of the wrong kind (a float, a string, a struct of another type)."""


class NotAType(D3dkmddiError, TypeError):
    """A value where a d3dkmddi_py class or instance is needed (introspection, rendering)."""


class MissingMember(D3dkmddiError, AttributeError, ValueError):
    """A type or member that the chosen target does not have: an AttributeError, so getattr() and
    hasattr() work on instances, and a ValueError like every other error of the package."""


class DecodeError(D3dkmddiError, ValueError):
    """Input that cannot be decoded as asked; the message is one line."""


class InvalidArgument(DecodeError, TypeError):
    """An offset or count of the wrong kind or sign (a float, a string, a negative number)."""


class UnknownType(DecodeError, MissingMember):
    """A type name the target does not have (the message suggests close names)."""


class TruncatedData(DecodeError):
    """Fewer bytes than the requested records need."""


class WinDbgTextError(DecodeError):
    """WinDbg text that is not a memory dump this package reads; ``line_number`` is 1-based."""

    def __init__(self, message: str, line_number: int | None = None, line: str | None = None):
        self.line_number, self.line = line_number, line
        super().__init__(message)


class BulkInputError(TruncatedData):
    """A byte range that does not hold the records asked for.

    Attributes: ``type_name``, ``record_size``, ``offset``, ``count`` (None for
    "all"), ``available`` (bytes in the data) and ``hint`` (the fix).
    """

    def __init__(self, message: str, *, type_name: str, record_size: int, offset, count, available: int,
                 hint: str):
        self.type_name, self.record_size, self.offset = type_name, record_size, offset
        self.count, self.available, self.hint = count, available, hint
        super().__init__(f"{message}; {hint}" if hint else message)


class OutputError(D3dkmddiError, ValueError):
    """An output path that cannot be written safely, or a write that failed; ``path`` is the name given."""

    def __init__(self, path, message: str):
        self.path = path
        super().__init__(message)


class EtwInputError(D3dkmddiError, ValueError):
    """An ETW trace that cannot be read: not XML, another schema, or an event with a missing or bad field.

    ``event`` is the 1-based number of the event in the trace (None before the first), ``field`` the
    event field at fault (None when the trace as a whole is at fault).
    """

    def __init__(self, message: str, *, event: int | None = None, field: str | None = None):
        self.event, self.field = event, field
        super().__init__(message)
