"""Bytes in, structs out: raw bytes, files, hex text, integer words and WinDbg memory dumps.

Everything is checked before a byte is read: the type exists at the target, the offset
and count are sane, and the data holds every requested record.  Errors are
``DecodeError`` (a ValueError) with a one-line message that says what, where and how
to fix it, so the command line can print it as it is.
"""
from __future__ import annotations

import ctypes
import enum
import os
import pathlib
import stat
import warnings

from ._records import dataclass
from .errors import (DecodeError, TruncatedData, UnknownType, WinDbgTextError, choice_argument,  # noqa: F401
                     flag_argument)
from .layout import TypeLayout
from .outfile import safe_name
from .resolve import resolve_layout
from .span import _decimal, check_offset_count, check_range, word_bytes
from .target import Target, as_target, class_of
from .wording import noun, plural


# ------------------------------------------------------------------ data and records
@dataclass(frozen=True)
class Record:
    """One decoded record: the struct, its index, and where it was read from."""

    value: object
    index: int
    offset: int
    address: int | None = None


# ------------------------------------------------------------------ targets and types
def resolve_target(target=None) -> Target:
    """A Target from None (x64, newest), a Target, an abi name or an (abi, interface version) pair."""
    return as_target(target)


def type_names(tgt: Target) -> list[str]:
    """Every C name the target knows (typedefs, tags, aliases, enums), sorted."""
    return sorted(tgt.types)


def resolve_class(type_, target=None):
    """(class, Target) for a class or a C name at a target: ``resolve.resolve_layout`` (the one
    resolver), then the user-facing class of that layout."""
    layout = resolve_layout(type_, target)
    return class_of(layout), as_target(layout.target)


def type_size(cls) -> int:
    """The size of a class, an enum or a TypeLayout."""
    if isinstance(cls, TypeLayout):
        return cls.size
    return 4 if _is_enum(cls) else ctypes.sizeof(cls)


def c_name(cls) -> str:
    if isinstance(cls, TypeLayout):
        return cls.c_name
    return cls.__name__ if _is_enum(cls) else cls._c_name_


def _is_enum(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, enum.IntEnum)


# ------------------------------------------------------------------ numbers and hex
def int_to_bytes(value: int, cls) -> bytes:
    """A word from a register or an ETW event as the type's bytes (little-endian); ``cls`` is a class,
    an enum or a TypeLayout (``span.word_bytes``)."""
    return word_bytes(value, cls if isinstance(cls, TypeLayout) else resolve_layout(cls))


# ------------------------------------------------------------------ WinDbg memory dumps
# Parsed in windbg.py; these names stay importable from here.
from .windbg import (ADDRESS_END, _HEX_SEPARATORS, Memory, _clip, _windbg_address, is_word_text,  # noqa: E402,F401
                     looks_like_windbg, parse_address, parse_hex, parse_int, parse_windbg, text_of_bytes)


# ------------------------------------------------------------------ input forms
def read_file(path, origin: str | None = None) -> bytes:
    """A file's bytes, or DecodeError naming the file and the reason."""
    with _opened(path, origin) as f:
        try:
            return f.read()
        except OSError as exc:
            raise DecodeError(f"cannot read {origin or safe_name(path)}: {exc.strerror or exc}") from None


def windbg_memory(text: str, origin: str, address=None, size: int = 1) -> Memory:
    """The bytes of a WinDbg text (every dump of a log, ``memory.WinDbgLog``) around ``address``: the range
    holding it (default: the text's one range), once the ``size`` bytes from it are known to be there."""
    from .memory import WinDbgLog

    return WinDbgLog(text, origin).memory_at(address, "address=", size)


def read_input(data, *, kind: str = "auto", origin: str | None = None, address=None, size: int = 1) -> Memory:
    """The bytes behind any accepted input form.

    ``kind`` is "auto" (the Python API), or one of "bytes", "hex", "windbg", "file"
    (what the command line's options say the user gave).  WinDbg text is read as a log of dumps: the
    range holding ``address`` (``size`` bytes there), or its one range.
    """
    if kind == "hex":
        return Memory(parse_hex(data), None, origin or "hex")
    if kind == "windbg":
        return windbg_memory(data, origin or "WinDbg text", address, size)
    if kind == "file":
        raw = read_file(data, origin)
        shown = origin or safe_name(data)
        text = text_of_bytes(raw)
        if text is not None and looks_like_windbg(text):
            raise DecodeError(f"{shown} is WinDbg text, not raw bytes; read it with --windbg {shown}")
        return Memory(raw, None, shown)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return Memory(bytes(data), None, origin or "bytes")
    if isinstance(data, os.PathLike):
        raw = read_file(data, origin)
        shown = origin or safe_name(data)
        text = text_of_bytes(raw)
        if text is not None and looks_like_windbg(text):
            return windbg_memory(text, shown, address, size)
        return Memory(raw, None, shown)
    if isinstance(data, str):  # always data: a string never names a file (that is a Path or path=)
        data = data.lstrip("\ufeff")  # a byte-order mark copied with the text
        stripped = data.strip()
        if looks_like_windbg(data):
            return windbg_memory(data, origin or "WinDbg text", address, size)
        if _hexish(stripped):
            return Memory(_hex_bytes_only(data, stripped), None, origin or "hex")
        if not stripped:
            raise DecodeError("empty text: give hex bytes ('85 04 00 00'), a 0x integer or WinDbg memory output; "
                              "to read a file pass pathlib.Path(name) or path=")
        raise DecodeError(f"cannot read {_clip(stripped)}: it is not hex bytes, a 0x integer or WinDbg memory "
                          f"output; to read a file pass pathlib.Path({_clip(stripped)}) or path=")
    raise DecodeError(f"data must be bytes, bytearray, memoryview, a path, hex text, WinDbg text or an int, "
                      f"not {type(data).__name__}")


def _hex_bytes_only(text: str, stripped: str) -> bytes:
    """Hex text read as bytes only when that is its one reading: every group two digits.  A text that is
    also a WinDbg dump (an address column, then words) or that has longer groups (words? one number?)
    is refused with both readings and the keyword that chooses, never split into bytes silently."""
    try:
        dump = parse_windbg(text, "the text")
    except DecodeError:
        dump = None
    if dump is not None:
        raise DecodeError(f"{_clip(stripped)} has two readings: WinDbg memory text (address "
                          f"{_windbg_address(dump.address)}, then {plural(len(dump.data), 'byte')}) or hex bytes in memory "
                          f"order; choose with kind='windbg' or kind='hex' (on the command line --windbg or --hex)")
    long = next((g for g in _HEX_SEPARATORS.split(stripped) if len(g) > 2), None)
    if long is not None:
        raise DecodeError(f"{_clip(stripped)}: the group {_clip(long)} has {len(long)} hex digits, which may be "
                          f"bytes in memory order or a word; choose with kind='hex' for bytes (on the command "
                          f"line --hex), or give a word as one number (0x{long if len(long) <= 40 else long[:37] + '...'})")
    return parse_hex(stripped)


def _hexish(text: str) -> bool:
    """Mostly hex digits: treat as (possibly bad) hex rather than a file name."""
    body = _HEX_SEPARATORS.sub("", text)
    if not body:
        return False
    digits = sum(c in "0123456789abcdefABCDEF" for c in body)
    return digits * 2 >= len(body) and "." not in body and "/" not in body


# ------------------------------------------------------------------ decoding
def plan(layout: TypeLayout, memory: Memory, offset: int = 0, count=1) -> list[int]:
    """The byte offset of every record to read; raises before anything is read."""
    first, n = check_range(layout, len(memory.data), memory.origin, offset, count)
    return [first + i * layout.size for i in range(n)]


def file_size(path, origin: str | None = None) -> int:
    """The size of a readable regular file, or DecodeError with the reason (nothing is read)."""
    with _opened(path, origin) as f:
        return os.fstat(f.fileno()).st_size


def open_input(path, origin):
    """An input file opened for reading, or DecodeError naming it and the reason."""
    return _opened(path, origin)


def _opened(path, origin):
    shown = origin or safe_name(path)
    try:
        if os.path.isdir(path):
            raise IsADirectoryError
        return open(path, "rb")
    except FileNotFoundError:
        raise DecodeError(f"cannot read {shown}: no such file") from None
    except IsADirectoryError:
        raise DecodeError(f"cannot read {shown}: it is a directory") from None
    except PermissionError:
        raise DecodeError(f"cannot read {shown}: permission denied") from None
    except OSError as exc:
        raise DecodeError(f"cannot read {shown}: {exc.strerror or exc}") from None
    except ValueError:  # open() refuses a NUL in a name
        raise DecodeError(f"cannot read {shown}: the path contains a NUL character") from None


def _from_bytes(cls, data: bytes, at: int):
    if _is_enum(cls):
        raw = int.from_bytes(data[at:at + 4], "little", signed=True)
        try:
            return cls(raw)
        except ValueError:
            return raw
    return cls.from_buffer_copy(data, at)


def decode_records(type_, data, *, target=None, offset=0, count=1, kind: str = "auto",
                   origin: str | None = None, address=None) -> tuple[list[Record], object, Target, Memory]:
    """Records with their offsets (and debuggee addresses); the command line's entry point."""
    layout = resolve_layout(type_, target)
    cls, tgt = class_of(layout), as_target(layout.target)
    path = _file_path(data, kind)
    if path is not None and address is None:
        decoded = _decode_file(layout, cls, tgt, path, offset, count, kind, origin or safe_name(path))
        if decoded is not None:
            return decoded
    memory = memory_of(data, layout, kind=kind, origin=origin, address=address, count=count)
    offset = start_offset(memory, offset, address)
    offsets = plan(layout, memory, offset, count)
    records = [Record(_from_bytes(cls, memory.data, at), i, at,
                      None if memory.address is None else memory.address + at)
               for i, at in enumerate(offsets)]
    return records, cls, tgt, memory


TEXT_KINDS = ("auto", "hex", "windbg")  # what decode(kind=) and report(kind=) accept


def start_offset(memory: Memory, offset=0, address=None) -> int:
    """The byte offset of the first record: ``offset`` bytes into the input, or the dump's memory ``address``
    (only WinDbg text has addresses).  One meaning each, in Python and on the command line."""
    if address is None:
        return offset
    if not isinstance(offset, int) or isinstance(offset, bool) or offset:
        raise DecodeError("give offset= (a byte offset into the input) or address= (a memory address of a "
                          "WinDbg dump), not both")
    return memory.offset_of(address, "address=")


def memory_of(data, type_, *, kind: str = "auto", origin: str | None = None, address=None, count=1) -> Memory:
    """The bytes behind in-memory data for a type (a class or TypeLayout): an int word or a "0x485" is
    the type's little-endian bytes; bytes, hex and WinDbg text are read as ``read_input`` reads them (a
    log's range holding ``address``, where ``count`` records must be)."""
    if isinstance(data, int) and not isinstance(data, bool):
        return Memory(int_to_bytes(data, type_), None, origin or "value")
    if isinstance(data, str) and kind == "auto" and is_word_text(data):
        return Memory(int_to_bytes(parse_int(data), type_), None, origin or "value")
    size = type_size(type_) * (count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1)
    return read_input(data, kind=kind, origin=origin, address=address, size=size)


def _file_path(data, kind: str):
    """The path to read when ``data`` is one: an ``os.PathLike``, or anything under kind "file" (the
    command line's --file).  A str under kind "auto" is data, never a file name."""
    if kind != "file" and not (kind == "auto" and isinstance(data, os.PathLike)):
        return None
    try:
        name = os.fsdecode(data)
    except TypeError:
        raise DecodeError(f"a path must be a str or an os.PathLike such as pathlib.Path, "
                          f"not {type(data).__name__}") from None
    if not name or "\0" in name:
        raise DecodeError(f"cannot read {_clip(name)}: " + ("the path is empty" if not name else
                                                            "the path contains a NUL character"))
    return data


def _decode_file(layout: TypeLayout, cls, tgt: Target, path, offset, count, kind: str, shown: str):
    """Records read straight from a regular file: the range is checked against the file's size,
    then only the requested bytes are read.  None when the file must be read whole instead
    (WinDbg text under kind "auto", or a pipe or device whose size is not known)."""
    with _opened(path, shown) as f:
        try:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            head = f.read(4096)
            text = text_of_bytes(head)
            if text is not None and looks_like_windbg(text):
                if kind == "file":
                    raise DecodeError(f"{shown} is WinDbg text, not raw bytes; read it with --windbg {shown}")
                return None
            first, n = check_range(layout, info.st_size, shown, offset, count)
            size = layout.size
            f.seek(first)
            data = f.read(n * size)
        except OSError as exc:
            raise DecodeError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if len(data) != n * size:
        raise DecodeError(f"cannot read {shown}: it ended after {plural(first + len(data), 'byte')} while being read "
                          f"(its size said {info.st_size})")
    records = [Record(_from_bytes(cls, data, i * size), i, first + i * size) for i in range(n)]
    return records, cls, tgt, Memory(data, None, shown)


def data_or_path(data, path):
    """What ``decode()`` and ``report()`` read: ``data``, or the file ``path=`` names, as a Path."""
    if path is None:
        if data is None:
            raise DecodeError("no data: give bytes, hex or WinDbg text, or a file as pathlib.Path(...) or path=")
        return data
    if data is not None:
        raise DecodeError("give data or path=, not both")
    if not isinstance(path, (str, os.PathLike)):
        raise DecodeError(f"path= must be a str or an os.PathLike such as pathlib.Path, not {type(path).__name__}")
    return path if isinstance(path, os.PathLike) else pathlib.Path(path)


_ONE = object()  # decode()'s count when none is given: the single-record call being retired


def decode(type, data=None, *, path=None, target=None, offset=0, count=_ONE, address=None,  # noqa: A002
           kind: str = "auto", memory=None, follow=False):
    """Decode ``count`` records of ``type`` and return them as a list, always (``count=1``: a list of one;
    ``decode_one`` returns one record).  From ``data`` starting at byte ``offset``, or at the memory
    ``address`` of a WinDbg dump (``"fffff801`2a3b4058"``, hex as WinDbg reads it; other data has no
    addresses), or from ``memory`` at ``address``.

    ``type`` is a class (it keeps its own target) or a C name looked up at ``target``
    (a Target or an (abi, interface version) pair; default x64 at the newest version).
    ``data`` is bytes, bytearray, memoryview, an ``os.PathLike`` (``pathlib.Path``), hex text
    (``"85 04 00 00"``, bytes in memory order), an integer, ``"0x485"`` or ``"00000000`00000485"``
    (a word from a register or an ETW event, little-endian), or text copied from WinDbg (windbg.WINDBG_COMMANDS:
    ``db``/``dw``/``dW``/``dd``/``dc``/``dq``/``dp``/``dds``/``dqs``/``dps``/``dda``/``dqa``/``dpa``/``ddu``/``dqu``/``dpu``/``ddp``/``dqp``/``dpp``/``dyb``/``dyd``).
    A str is always data, never a file name: give a file as ``pathlib.Path(name)`` or ``path=name``.  WinDbg text may be a whole session log: its dumps are
    memory at addresses (``memory.WinDbgLog``), so a log of several needs ``address``.

    A text with two readings (a one-space WinDbg line, hex groups longer than a byte) is refused unless
    ``kind`` says which: "hex" (bytes in memory order) or "windbg"; "auto" (the default) reads the rest.

    ``memory``: anything ``memory.as_memory`` takes (a WinDbgLog or Ranges, an ImageFile, a KernelDump, an
    object with ``read(address, size)``), read at ``address``.  ``follow=True`` returns, for each record,
    what ``follow.follow`` returns: the record with what its pointers point to (from ``memory`` or from
    WinDbg text).  ``count="all"`` reads every whole record from ``offset`` (or to the end of the dump
    holding ``address``); memory has no end, so there it needs a number.

    Called without ``count`` it returns one record, not a list, with a DeprecationWarning: that call is
    ``decode_one`` now.
    """
    if count is _ONE:
        records = _decode(type, data, path, target, offset, 1, address, kind, memory, follow)
        warnings.warn("decode() without count= returns one record, and will return a list as every other call "
                      "does; call decode_one() for one record, or pass count=", DeprecationWarning, stacklevel=2)
        return records[0]
    return _decode(type, data, path, target, offset, count, address, kind, memory, follow)


def decode_one(type, data=None, *, path=None, target=None, offset=0, address=None,  # noqa: A002
               kind: str = "auto", memory=None, follow=False):
    """The one record of ``type`` at ``offset`` or ``address`` (``decode``'s arguments, without ``count``):
    a ctypes instance (an enum member, or the int when it is none), or with ``follow=True`` a ``follow.Node``."""
    return _decode(type, data, path, target, offset, 1, address, kind, memory, follow)[0]


def _decode(type_, data, path, target, offset, count, address, kind, memory, follow) -> list:
    kind = choice_argument(kind, "kind", TEXT_KINDS)
    follow = flag_argument(follow, "follow")
    if memory is not None:
        if data is not None or path is not None:
            raise DecodeError("give data (or path=) or memory=, not both")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset:
            raise DecodeError("memory= is read at an address: give address=, not offset=")
        if address is None:
            raise DecodeError("memory= is read at an address: give address= (e.g. \"fffff801`2a3b4058\")")
        from .memory import as_memory

        return read_at(type_, as_memory(memory), address, count, target=target, follow=follow)
    data = data_or_path(data, path)
    if not follow:
        records, *_ = decode_records(type_, data, target=target, offset=offset, count=count, address=address,
                                     kind=kind)
        return [r.value for r in records]
    log = _log_of(data, kind)
    if address is None:
        first = log.memory_at(None)
        address = first.address + check_offset_count(offset, 1)[0]
    elif not isinstance(offset, int) or isinstance(offset, bool) or offset:
        raise DecodeError("give offset= (a byte offset into the input) or address= (a memory address of a "
                          "WinDbg dump), not both")
    return read_at(type_, log, address, count, target=target, follow=True)


def _log_of(data, kind: str):
    """The WinDbgLog of data that is WinDbg text (a str or a file of it): what follow=True reads."""
    from .memory import WinDbgLog

    if isinstance(data, os.PathLike):
        raw = read_file(data)
        text, shown = text_of_bytes(raw), safe_name(data)
    else:
        text, shown = (data if isinstance(data, str) else None), "WinDbg text"
    if text is None or kind == "hex" or (kind == "auto" and not looks_like_windbg(text)):
        raise DecodeError("follow=True reads pointers in memory at addresses: give memory= (a WinDbgLog, an "
                          "ImageFile, a KernelDump, an object with read(address, size)) and address=, or WinDbg text")
    return WinDbgLog(text, shown)


def read_at(type_, memory, address, count=1, *, target=None, follow: bool = False) -> list:
    """``count`` records of ``type_`` one after another from ``address`` of ``memory`` (an AddressSpace):
    ctypes instances, or with ``follow`` each record followed (``follow.Node``)."""
    layout = resolve_layout(type_, target)
    address, count = _span_at(layout, address, count)
    if follow:
        from .follow import follow_all

        return list(follow_all(layout, memory, address, count))  # one follow's limits for all of them
    cls = class_of(layout)
    data = memory.read(address, count * layout.size)
    return [_from_bytes(cls, data, i * layout.size) for i in range(count)]


def bytes_at(layout: TypeLayout, memory, address, count) -> tuple:
    """(address, count, bytes) of ``count`` records of ``layout`` at ``address`` of ``memory``, checked first."""
    address, count = _span_at(layout, address, count)
    return address, count, memory.read(address, count * layout.size)


def _span_at(layout: TypeLayout, address, count) -> tuple:
    """(address, count) of records read from memory: a number of them, inside the 64-bit address space."""
    address = parse_address(address, "address")
    if count is None or (isinstance(count, str) and count.strip().lower() == "all"):
        raise DecodeError(f"count all reads to the end of an input, and memory has no end at "
                          f"{_windbg_address(address)}: give a number of records (count=, --count N)")
    _, count = check_offset_count(0, count)
    if address + count * layout.size > ADDRESS_END:
        raise DecodeError(f"{_decimal(count)} {layout.c_name} {noun(count, 'record')} of {layout.size} bytes at "
                          f"{_windbg_address(address)} {noun(count, 'runs', 'run')} past the end of the 64-bit address "
                          f"space: the address or the count is wrong")
    return address, count


__all__ = [
    "DecodeError", "UnknownType", "TruncatedData", "WinDbgTextError", "Memory", "Record",
    "decode", "decode_one", "read_at", "bytes_at", "decode_records", "resolve_class", "resolve_target", "read_input", "parse_hex",
    "parse_int", "parse_windbg", "int_to_bytes", "plan", "file_size", "read_file", "type_names", "type_size", "c_name",
    "looks_like_windbg",
]
