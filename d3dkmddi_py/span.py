"""The one span check: which records ``offset`` and ``count`` select from a number of bytes.

decode(), the command line (through pipeline) and bulk all ask here, so ``count=0`` or a
partial last record gets the same answer everywhere.
"""
from __future__ import annotations

from ._spec.base import POINTER_SIZE
from .errors import BulkInputError, DecodeError, InvalidArgument, shown
from .layout import TypeLayout, type_layout
from .names import known_names
from .wording import noun


def check_range(layout: TypeLayout, total: int, origin: str, offset: int = 0, count="all", *,
                empty_ok: bool = False, address_bytes: int | None = None) -> tuple:
    """(offset, records) that ``offset``/``count`` select from ``total`` bytes, or a one-line error.

    The one span check of the package (decode, the command line and bulk): ``count`` is a
    positive int, or "all"/None for every whole record from ``offset`` (bytes left over are then
    an error naming the whole count).  Only bulk passes ``empty_ok``: an empty input is then zero
    records (an empty blob in a folder), not an error.  ``address_bytes``: the width of a WinDbg
    dump's addresses (``Memory.address_bytes``); 4 with a 64-bit layout means a 32-bit target,
    and a size mismatch then suggests ``--abi x86`` first, as does a size that x86 fits exactly.
    """
    offset, wanted = check_offset_count(offset, count)
    size, name = layout.size, layout.c_name

    def fail(message: str, hint: str = ""):
        raise BulkInputError(message, type_name=name, record_size=size, offset=offset, count=wanted,
                             available=total, hint=hint) from None

    def x86_hint() -> str:
        """Why the data looks like a 32-bit target's, and the fix, or "": a wrong abi is the likelier
        mistake than a wrong count when x86 reads the bytes exactly."""
        pointer = POINTER_SIZE.get(layout.abi)
        if layout.kind == "enum" or address_bytes == pointer:
            return ""
        if address_bytes == 8:
            return ("the dump has 16-digit addresses, so it is from a 64-bit target: pass --abi x64 or arm64 "
                    "(abi='x64' in Python)")
        fix = "pass --abi x86 (abi='x86' in Python)"
        if address_bytes == 4:
            return f"the dump has 8-digit addresses, so it is from a 32-bit target: {fix}"
        if pointer != 8:
            return ""
        if name not in known_names("x86", layout.version):
            return ""
        small = type_layout(name, "x86", layout.version).size
        records, left = divmod(available, small)
        fits = records >= 1 and not left if wanted is None else wanted * small == available
        if small == size or not fits:
            return ""
        shown = records if wanted is None else wanted
        return (f"at x86 {name} is {small} bytes, and {shown} {noun(shown, 'record')} {noun(shown, 'fills', 'fill')} the "
                f"{available} {noun(available, 'byte')} exactly: if the data is from a 32-bit target, {fix}")

    where = f"{origin} ({total} {noun(total, 'byte')})"
    available = total - offset
    if total == 0 and not empty_ok:
        fail(f"{origin} is empty; {name} needs {size} bytes at {layout.label}")
    if offset > total or (offset == total and not empty_ok):
        shown = f"0x{offset:X} ({offset})" if offset.bit_length() <= 128 else _decimal(offset)
        fail(f"offset {shown} is past the end of {where}",
             f"the last valid offset is 0x{max(total - 1, 0):X}")
    whole, spare = divmod(available, size)
    if wanted is None:
        if whole == 0 and not empty_ok:
            fail(f"{name} needs {size} bytes at offset 0x{offset:X} ({layout.label}); {where} has {available} there",
                 x86_hint())
        if spare:
            records = noun(whole, "record")
            abi = x86_hint()
            fail(f"count all: {available} {noun(available, 'byte')} from offset 0x{offset:X} are {whole} whole {name} {records} "
                 f"({size} bytes each at {layout.label}) and {spare} {noun(spare, 'byte')} left over",
                 (f"{abi}; else " if abi else "") +
                 f"pass --count {whole} (count={whole} in Python) to read the whole records, or fix the offset "
                 f"or the target (abi and interface version change the size)")
        return offset, whole
    need = wanted * size
    if need > available:
        records = f"{_decimal(wanted)} records of {name} need" if wanted > 1 else f"{name} needs"
        fit = f" ({whole} whole {noun(whole, 'record')} {noun(whole, 'fits', 'fit')})" if wanted > 1 else ""
        fail(f"{records} {_decimal(need)} bytes at offset 0x{offset:X} ({size} each at {layout.label}); "
             f"{where} has {available} there{fit}", x86_hint())
    return offset, wanted


def check_offset_count(offset, count) -> tuple:
    """(offset, count or None for "all") after checking their kinds and signs."""
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise InvalidArgument(f"offset must be an integer, not {_short(offset)}")
    if offset < 0:
        raise InvalidArgument(f"offset {_decimal(offset)} is negative; offsets count from the first byte of the "
                              f"data (0)")
    if count is None or (isinstance(count, str) and count.strip().lower() == "all"):
        return offset, None
    if isinstance(count, bool) or not isinstance(count, int):
        raise InvalidArgument(f"count must be a positive integer or 'all', not {_short(count)}")
    if count <= 0:
        raise InvalidArgument(f"count {_decimal(count)} is not positive; give 1 or more records (or 'all')")
    return offset, count


def _decimal(n: int) -> str:
    """A number in decimal, or its size when decimal would be absurd (and refused past 4300 digits)."""
    return str(n) if n.bit_length() <= 128 else f"a {n.bit_length()}-bit number"


def _short(value) -> str:
    return _decimal(value) if isinstance(value, int) else shown(value, 40)


def word_bytes(value: int, layout: TypeLayout) -> bytes:
    """A word from a register or an ETW event as the type's bytes (little-endian)."""
    size, name = layout.size, layout.c_name
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{name}: value must be an integer, not {type(value).__name__}")
    if layout.kind != "enum" and size > 8:  # no register or ETW word is that wide: zero-filling would invent bytes
        raise DecodeError(f"value {_hex(value)} is a number, but {name} is {size} bytes; a number is accepted only "
                          f"for types of at most 8 bytes: give the record's bytes (--hex, --file, --windbg; from "
                          f"Python: bytes, hex text, WinDbg text or a pathlib.Path)")
    if layout.kind == "enum":
        if not -(1 << 31) <= value < (1 << 32):
            raise DecodeError(f"value {_hex(value)} is too wide for {name} (an enum is a 4-byte int; "
                              f"valid {-(1 << 31)}..0xFFFFFFFF)")
        return (value & 0xFFFFFFFF).to_bytes(4, "little")
    if value < 0:
        raise DecodeError(f"value {_decimal(value)} is negative; {name} is decoded from its unsigned {size}-byte word "
                          f"(valid 0..{_hex((1 << (8 * size)) - 1)})")
    if value >> (8 * size):
        raise DecodeError(f"value {_hex(value)} is too wide for {name}: it needs {(value.bit_length() + 7) // 8} "
                          f"bytes, {name} has {size} (valid 0..{_hex((1 << (8 * size)) - 1)}); "
                          f"check the type, --abi and --ddi")
    return value.to_bytes(size, "little")


def _hex(value: int) -> str:
    if value.bit_length() > 256:  # a mistake whatever it is; its 5000 digits would drown the message
        return f"{'-' if value < 0 else ''}<a {value.bit_length()}-bit number>"
    return f"-0x{-value:X}" if value < 0 else f"0x{value:X}"
