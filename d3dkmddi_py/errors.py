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


def shown(value, limit: int = 100) -> str:
    """repr(value) for a one-line message: on one line (a NumPy array's or a DataFrame's repr has many),
    clipped to ``limit``, and a huge int by its size (Python refuses to print an int of more than 4300
    digits, and such a value is a mistake whatever it is)."""
    if isinstance(value, int) and value.bit_length() > 256:
        return f"<a {value.bit_length()}-bit int>"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a huge int inside, a value nested too deep, a repr that fails
        text = f"<a {type(value).__name__}>"
    if "\n" in text or "\r" in text:  # a str's repr escapes them: this is a multi-line repr of an object
        text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def listed(names, limit: int = 8) -> str:
    """Names for a one-line message: the first ``limit``, then how many more (a registry grows with every entry)."""
    names = list(names)
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


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
    """An argument of the wrong kind or value: an offset or count (a float, a string, a negative number), a
    format, an adapter, a progress stream..."""


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


class MissingModule(D3dkmddiError, ImportError):
    """An optional library the work needs is not installed (still an ImportError): the command line's one line."""


class ReadOnce(D3dkmddiError, RuntimeError):
    """A one-pass reader (an ``etw.TraceReader``) iterated a second time: it holds no events to give again."""


# ---- arguments: one refusal for a value of the wrong kind, naming the argument, the value and what is accepted
def bad_argument(name: str, value, accepted: str) -> InvalidArgument:
    """The error for argument ``name`` given ``value``: "name must be <accepted>, not <value, short>"."""
    return InvalidArgument(f"{name} must be {accepted}, not {shown(value, 40)}")


def flag_argument(value, name: str) -> bool:
    """A yes/no argument: True or False (1 or 0, a NumPy bool); the truth of an array or a string is never
    guessed."""
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)) or \
            (getattr(getattr(value, "dtype", None), "kind", None) == "b" and getattr(value, "shape", None) == ()):
        return bool(value)
    raise bad_argument(name, value, "True or False")


def choice_argument(value, name: str, choices) -> str:
    """One of ``choices`` (strs), compared only when ``value`` is a str (an array would compare elementwise)."""
    if isinstance(value, str) and value in choices:
        return value
    raise bad_argument(name, value, "one of " + ", ".join(map(repr, choices)))


def integer_argument(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (a NumPy one too; not a bool, a float or a str of digits), at least ``minimum`` and at most
    ``maximum`` when given (the range a word or an array of that width holds)."""
    if maximum is None:
        accepted = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer of at least {minimum}")
    else:
        accepted = f"an integer of at most {_bound(maximum)}" if minimum is None else \
            f"an integer {_bound(minimum)}..{_bound(maximum)}"
    if type(value) is not int:
        import numbers  # here: a plain int, the common case, needs no module loaded at start-up

        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise bad_argument(name, value, accepted)
        value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise bad_argument(name, value, accepted)
    return value


def _bound(n: int) -> str:
    return str(n) if -10 < n < 10 else f"{n:#x}"


def items_argument(value, name: str, kind: type, accepted: str) -> tuple:
    """A list or tuple (any iterable but a str, bytes or mapping) whose items are all ``kind``."""
    from collections.abc import Iterable, Mapping

    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable) \
            or type(value).__module__ == "numpy":
        raise bad_argument(name, value, accepted)
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind):
            raise InvalidArgument(f"{name} must be {accepted}; it holds {shown(item, 40)}")
    return items


def mapping_argument(value, name: str, accepted: str) -> dict:
    """None (as empty) or a mapping."""
    from collections.abc import Mapping

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise bad_argument(name, value, accepted)
    return dict(value)


def text_argument(value, name: str, accepted: str = "a str or None"):
    """None or a str."""
    if value is not None and not isinstance(value, str):
        raise bad_argument(name, value, accepted)
    return value


def name_argument(value, name: str, accepted: str) -> str:
    """A str that is not empty: a name, a label, an origin."""
    if not isinstance(value, str) or not value:
        raise bad_argument(name, value, accepted)
    return value


def path_argument(value, name: str):
    """A file's name to read: a str, bytes or an os.PathLike, not empty and without NUL (which os.stat and open
    refuse with a ValueError of their own)."""
    import os

    if isinstance(value, (str, bytes, os.PathLike)):
        text = os.fspath(value)
        if text and ("\0" if isinstance(text, str) else b"\0") not in text:
            return value
    raise bad_argument(name, value, "a file's path (a str or an os.PathLike such as pathlib.Path, not empty)")
