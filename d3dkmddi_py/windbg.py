"""WinDbg text and the numbers users type: memory dumps (WINDBG_COMMANDS), hex bytes, integers, addresses.

Pure text parsing, no files: one dump is a ``Memory`` (bytes plus the debuggee address of the first
byte); a session log is a ``LogScan`` (every dump in it, with its lines, and the lines skipped).  Both
read each line with the one line reader here.  Errors are ``DecodeError`` / ``WinDbgTextError`` with a
one-line message.
"""
from __future__ import annotations

import re

from ._records import dataclass
from .errors import DecodeError, InvalidArgument, WinDbgTextError, bad_argument


# The WinDbg memory commands whose output parse_windbg reads (the command's --windbg help and the README
# name these): bytes, words, dwords with or without characters, qwords, pointers with or without symbols,
# and bytes in binary.
WINDBG_COMMANDS = ("db", "dw", "dd", "dc", "dq", "dp", "dps", "dds", "dyb")


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class Memory:
    """Bytes to decode, with where they came from.

    ``address`` is the debuggee address of ``data[0]`` when the bytes came from a
    WinDbg dump, else None.  ``origin`` names the source in messages.  ``address_bytes`` is 4
    when the dump's address column has 8 digits (a 32-bit target), 8 when it has 16, else None.
    """

    data: bytes
    address: int | None = None
    origin: str = "data"
    address_bytes: int | None = None

    def offset_of(self, address, what: str = "address") -> int:
        """The byte offset of a debuggee ``address`` (an int or text such as ``fffff801`2a3b4010``, read as
        ``parse_address`` reads it: hex, never decimal)."""
        address = parse_address(address, what)
        if self.address is None:
            raise DecodeError(f"{what} {_hex_or_int(address)} is a memory address: {self.origin} has none (only "
                              f"WinDbg dumps do); give a byte offset from its first byte instead (offset=, --offset)")
        end = self.address + len(self.data)
        if not self.address <= address < end:
            raise DecodeError(f"{what} {_windbg_address(address)} is outside {self.origin}, which holds "
                              f"{_windbg_address(self.address)}..{_windbg_address(end - 1)}; give an address "
                              f"in that range or a byte offset 0..0x{max(len(self.data) - 1, 0):X}")
        return address - self.address


# ------------------------------------------------------------------ numbers and hex
# Longer text is refused before int() sees it: Python refuses (or crawls over) huge decimal numbers,
# and no field, count or offset needs more than a few hundred digits.
MAX_NUMBER_CHARS = 4300

_NUMBER_FORMS = (  # (pattern of the text after the sign, base, prefix length)
    (re.compile(r"(?:0[xX])?[0-9a-fA-F]+(?:`[0-9a-fA-F]+)+"), 16, None),  # WinDbg 64-bit: hex always
    (re.compile(r"0[xX]_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*"), 16, 2),
    (re.compile(r"0[bB]_?[01]+(?:_[01]+)*"), 2, 2),
    (re.compile(r"0[oO]_?[0-7]+(?:_[0-7]+)*"), 8, 2),
    (re.compile(r"0[nN][0-9]+"), 10, 2),  # WinDbg's explicit decimal
    (re.compile(r"[0-9]+(?:_[0-9]+)*"), 10, 0),  # leading zeros are fine here, unlike int(x, 0)
)


def parse_int(text, what: str = "value") -> int:
    """An integer as a user types it: 0x485, 1157, 0b101, 1_000, and WinDbg's ``00000000`00000485``
    (a number with a backtick is hex, with or without 0x, as WinDbg prints it) and ``0n1157``."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not isinstance(text, str):
        raise DecodeError(f"{what} must be an integer or its text, not {type(text).__name__}")
    s = text.strip()
    if len(s) > MAX_NUMBER_CHARS:
        raise DecodeError(f"{what} is {len(s)} characters long; a number here has at most {MAX_NUMBER_CHARS} "
                          f"digits (give long data as hex bytes instead)")
    sign, body = (-1, s[1:]) if s[:1] == "-" else (1, s[1:] if s[:1] == "+" else s)
    for pattern, base, prefix in _NUMBER_FORMS:
        if pattern.fullmatch(body):
            if prefix is None:
                digits = body.replace("`", "")
                digits = digits[2:] if digits[:2] in ("0x", "0X") else digits
            else:
                digits = body[prefix:].replace("_", "")
            try:
                return sign * int(digits, base)
            except ValueError:  # sys.set_int_max_str_digits() set below our own limit
                raise DecodeError(f"{what} has {len(digits)} digits, more than this Python converts "
                                  f"(sys.get_int_max_str_digits()); give it in hex") from None
    hint = f"; for hex write 0x{body}" if re.fullmatch(r"[0-9a-fA-F]{1,32}", body) else ""
    raise DecodeError(f"{what} {_clip(s)} is not an integer (write 0x485, 00000000`00000485, 1157 or 0b101)"
                      + hint)


_WORD_TEXT = re.compile(r"\s*[+-]?(?:0[xX][0-9a-fA-F_`]+|[0-9a-fA-F]+(?:`[0-9a-fA-F]+)+)\s*")


def is_word_text(text) -> bool:
    """True for text that data means as one integer word, not bytes: ``0x485`` or ``00000000`00000485``."""
    return isinstance(text, str) and _WORD_TEXT.fullmatch(text) is not None


_HEX_SEPARATORS = re.compile(r"[\s:,\-]+")


def parse_hex(text: str) -> bytes:
    """Bytes in memory order from hex text: ``85 04 00 00``, ``85040000``, ``85:04:00:00``."""
    if not isinstance(text, str):
        raise DecodeError(f"hex must be text such as '85 04 00 00', not {type(text).__name__}")
    body = _HEX_SEPARATORS.sub(" ", text.strip())
    if not body:
        raise DecodeError("empty hex: give the bytes in memory order, e.g. '85 04 00 00'")
    out = bytearray()
    for group_start, group in _groups(body):
        if group[:2] in ("0x", "0X") and len(group) > 2:
            raise DecodeError(f"bad hex {_clip(group)} at position {group_start + 1}: bytes are written without "
                              f"0x (a 0x number is an integer value; give it alone, e.g. 0x485)")
        for i, ch in enumerate(group):
            if ch not in "0123456789abcdefABCDEF":
                raise DecodeError(f"bad hex: {ch!r} at position {group_start + i + 1} is not a hex digit "
                                  f"(in {_clip(group)})")
        if len(group) % 2:
            raise DecodeError(f"odd-length hex: {_clip(group)} has {len(group)} digits; each byte is two digits "
                              f"(pad with a leading 0, e.g. {_clip('0' + group)})")
        out += bytes.fromhex(group)
    return bytes(out)


def _groups(body: str):
    pos = 0
    for part in body.split(" "):
        yield pos, part
        pos += len(part) + 1


# ------------------------------------------------------------------ addresses
ADDRESS_BITS = 64
ADDRESS_END = 1 << ADDRESS_BITS
_ADDRESS_TEXT = re.compile(r"(?:0[xX])?(?:(?P<high>[0-9a-fA-F]{1,8})`(?P<low>[0-9a-fA-F]{8})|(?P<plain>[0-9a-fA-F]+))")
_FORMS = "as WinDbg prints it (fffff801`2a3b4058), with 0x (0xfffff8012a3b4058) or as bare hex (fffff8012a3b4058)"


def parse_address(text, what: str = "address") -> int:
    """An address as WinDbg prints and accepts it: ``fffff801`2a3b4058``, ``0xfffff8012a3b4058`` or bare
    hex ``fffff8012a3b4058``.  WinDbg's default radix is 16, so digits alone are hex, never decimal."""
    if not isinstance(what, str):  # it is echoed in every message
        raise bad_argument("what", what, "a str (the name messages give the address)")
    if isinstance(text, int) and not isinstance(text, bool):
        if not 0 <= text < ADDRESS_END:
            raise DecodeError(f"{what} {_hex_or_int(text)} is not a {ADDRESS_BITS}-bit address "
                              f"(valid 0..0x{ADDRESS_END - 1:x})")
        return text
    if not isinstance(text, str):
        raise InvalidArgument(f"{what} must be an int or text {_FORMS}, not {type(text).__name__}")
    s = text.strip()
    shown = repr(s) if len(s) <= 40 else repr(s[:37] + "...")
    m = _ADDRESS_TEXT.fullmatch(s)
    if m is None:
        if re.fullmatch(r"0[nN][0-9]+", s):
            hint = (f"; {s} is decimal, and WinDbg reads an address in hex: write 0x{int(s[2:]):x}"
                    if len(s) <= MAX_NUMBER_CHARS else "; an address is hex, never decimal")
        elif s[:1] in "+-":
            hint = "; an address has no sign"
        else:
            hint = ""
        raise DecodeError(f"{what} {shown} is not an address: write it {_FORMS}{hint}")
    digits = m["plain"] or m["high"] + m["low"]
    if len(digits.lstrip("0")) > ADDRESS_BITS // 4:
        raise DecodeError(f"{what} {shown} has more than {ADDRESS_BITS // 4} hex digits: an address has at "
                          f"most {ADDRESS_BITS} bits")
    return int(digits, 16)


# ------------------------------------------------------------------ WinDbg memory dumps
_ADDRESS = r"(?P<address>[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?)"
_MEMORY_LINE = re.compile(r"^\s*" + _ADDRESS + r"(?P<rest>(?:\s.*)?)$")
# kd>, lkd>, 0: kd>, 0: kd:x86>, 1: kd:ARM64> (kernel); 0:000>, 0:000:x86> (user mode); a command may follow
_PROMPT = re.compile(r"^\s*(?:(?:\d+:\s*)?l?kd(?::\w+)?>|\d+:\d+(?::\w+)?>)")
_DT_LINE = re.compile(r"^\s*\+0x[0-9a-fA-F]+\s+\S+\s*:")
_DX_LINE = re.compile(r"^\s*\[\+0x[0-9a-fA-F]+")
_UNIT_SIZE = {"db": 1, "dw": 2, "dd": 4, "dq": 8}
_TOKEN = {
    "db": re.compile(r"[0-9a-fA-F?]{2}"),
    "dw": re.compile(r"[0-9a-fA-F?]{4}"),
    "dd": re.compile(r"[0-9a-fA-F?]{8}"),
    "dq": re.compile(r"[0-9a-fA-F?]{8}`[0-9a-fA-F?]{8}|[0-9a-fA-F?]{16}"),
}
_UNIT_WORD = {"db": "a 2-digit byte", "dw": "a 4-digit word", "dd": "an 8-digit dword", "dq": "a 16-digit qword"}
# What dps/dds print after the one pointer of a line: module!symbol+0x10, or module+0x1234.
_SYMBOL = re.compile(r"\S*!\S*|[\w.]+\+0x[0-9a-fA-F]+")
_DT_HINT = ("decode needs the raw bytes: run `db <address> L<size>` (or dd/dq/dp) in WinDbg and paste that; "
            "`d3dkmddi layout <type>` prints the layout dt shows")


_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def text_of_bytes(raw: bytes):
    """The text of a file's bytes when they are text: UTF-8 (a byte-order mark allowed, a cut last character
    allowed), or UTF-16 with its byte-order mark (WinDbg's `.logopen /u`); else None (raw bytes)."""
    encoding, body = "utf-8", raw
    for bom, name in _BOMS:
        if raw.startswith(bom):
            encoding, body = name, raw[len(bom):]
            break
    if not body or (encoding == "utf-8" and b"\x00" in body[:4096]):
        return None
    step = 2 if encoding != "utf-8" else 1
    for cut in range(0, 4 * step, step):
        try:
            text = body[:len(body) - cut].decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        return None
    return text if all(c.isprintable() or c in "\r\n\t" for c in text[:4096]) else None


def looks_like_windbg(text) -> bool:
    """True when text has the shape of WinDbg output (a memory line, a prompt, or dt/dx fields)."""
    if not isinstance(text, str):
        return False
    for line in text.splitlines()[:50]:
        if _PROMPT.match(line) or _DT_LINE.match(line) or _DX_LINE.match(line):
            return True
        m = _MEMORY_LINE.match(line)
        if m and re.match(r"\s\s", m["rest"]) and _unit_of(m["rest"].strip()) is not None:
            return True
    return False


def _unit_of(rest: str):
    first = rest.split()[0] if rest.split() else ""
    first = first.split("-")[0]
    for unit in ("dq", "dd", "dw", "db"):
        if _TOKEN[unit].fullmatch(first):
            return unit
    return None


def _check_text(text, origin) -> list:
    if not isinstance(text, str):
        raise DecodeError(f"WinDbg text must be str, not {type(text).__name__}")
    if not isinstance(origin, str):  # it is echoed in every message: an int of 20,000 digits cannot be
        raise DecodeError(f"origin must be str (the name messages give the text), not {type(origin).__name__}")
    return text.lstrip("\ufeff").splitlines()


class _NotValues(WinDbgTextError):
    """A line with an address column but no values a memory command prints (a log skips it)."""


class _Line:
    """What one memory line holds: ``cut`` when its values stop at memory the debugger could not read.
    A plain class with slots: one is made per line, and a record class costs microseconds each."""

    __slots__ = ("address", "address_bytes", "unit", "data", "cut")

    def __init__(self, address: int, address_bytes: int, unit: str, data: bytes, cut: bool = False):
        self.address, self.address_bytes, self.unit, self.data, self.cut = address, address_bytes, unit, data, cut


def _read_line(m, line: str, number: int, origin: str, *, partial: bool = False) -> _Line:
    """The one reader of a memory line (``m``: its _MEMORY_LINE match): the values after the address column,
    at any width, in the line's unit.  ``partial``: values shown as ``??`` end the line instead of
    refusing it (a log keeps the readable ones before them)."""
    address = int(m["address"].replace("`", ""), 16)
    rest = m["rest"]
    if not rest.strip():
        raise _NotValues(f"{origin} line {number}: address {m['address']} has no values after it", number, line)
    binary = _binary_bytes(rest, origin, number, line)
    unit = "db" if binary is not None else _unit_of(rest.strip())
    if unit is None:
        raise _NotValues(f"{origin} line {number}: {_clip(rest.split()[0])} is not a hex byte, word, "
                         f"dword or qword as db/dw/dd/dq print them", number, line)
    data, cut = (binary, False) if binary is not None else _line_values(rest, unit, number, line, origin, partial)
    if address + len(data) > ADDRESS_END:
        raise WinDbgTextError(f"{origin} line {number}: {len(data)} bytes at {_windbg_address(address)} run past the "
                              f"end of the {ADDRESS_BITS}-bit address space; the line is not a dump WinDbg printed",
                              number, line)
    return _Line(address, len(m["address"].replace("`", "")) // 2, unit, data, cut)


def parse_windbg(text: str, origin: str = "WinDbg text") -> Memory:
    """Bytes from the output of ``db``, ``dw``, ``dd``, ``dc``, ``dq``, ``dp``, ``dps``, ``dds`` or ``dyb``
    (WINDBG_COMMANDS), address columns included, at any width (``/c N``).

    Prompt lines (``kd>``, ``0: kd:x86>``, ``0:000>`` ...) and blank lines are skipped.  The lines
    must be one contiguous range printed in one unit: each line starts where the previous one's
    bytes end.  ``dt``/``dx`` output is refused with a hint.  A session log of several dumps and
    other output is ``scan_log``'s (``memory.WinDbgLog``).
    """
    return _parse_dump(_check_text(text, origin), origin)[0]


def _parse_dump(lines: list, origin: str) -> tuple:
    """(Memory, first line, last line) of lines that are one dump and nothing else but prompts."""
    for number, line in enumerate(lines, 1):
        if _DT_LINE.match(line) or _DX_LINE.match(line):
            raise WinDbgTextError(f"{origin} is `dt`/`dx` output (line {number}: {_clip(line)}), not a memory "
                                  f"dump; " + _DT_HINT, number, line)
    out = bytearray()
    start = expected = address_bytes = first = None
    unit = unit_line = previous = width = width_line = None
    for number, line in enumerate(lines, 1):
        if not line.strip() or _PROMPT.match(line):
            continue
        m = _MEMORY_LINE.match(line)
        if not m:
            raise WinDbgTextError(f"{origin} line {number}: {_clip(line)} does not start with an address column "
                                  f"(expected e.g. 'fffff801`2a3b4000  85 04 00 00 ...')", number, line)
        got = _read_line(m, line, number, origin)
        if unit is None:
            unit, unit_line = got.unit, number
        elif got.unit != unit:
            raise WinDbgTextError(f"{origin} line {number}: {got.unit}-style values after {unit}-style values "
                                  f"on line {unit_line}; paste the output of one memory command", number, line)
        width, width_line = _check_width(got, width, width_line, number, line, origin)
        if expected is not None and got.address != expected:
            prev_number, prev_address, prev_size = previous
            raise WinDbgTextError(f"{origin} line {number}: address {_windbg_address(got.address)} does not follow "
                                  f"line {prev_number} ({_windbg_address(prev_address)} + {prev_size} bytes = "
                                  f"{_windbg_address(expected)}); the dump must be one contiguous range from "
                                  f"one memory command", number, line)
        if start is None:
            start, address_bytes, first = got.address, got.address_bytes, number
        elif got.address_bytes != address_bytes:
            raise WinDbgTextError(f"{origin} line {number}: a {2 * got.address_bytes}-digit address after "
                                  f"{2 * address_bytes}-digit ones; paste the output of one memory command",
                                  number, line)
        out += got.data
        expected = got.address + len(got.data)
        previous = (number, got.address, len(got.data))
    if start is None:
        raise WinDbgTextError(f"{origin} has no memory lines; paste the output of db, dd, dq or dp "
                              f"(address column and values)")
    return Memory(bytes(out), start, origin, address_bytes), first, previous[0]


def _check_width(got: _Line, width, width_line, number: int, line: str, origin: str) -> tuple:
    """(width, its line) of a dump after ``got``: WinDbg prints every line as wide as the first (the last
    may be shorter), so a wider one holds something that is not data."""
    values = len(got.data) // _UNIT_SIZE[got.unit]
    if width is None:
        return values, number
    if values > width:
        raise WinDbgTextError(f"{origin} line {number}: {values} values after {width} on line {width_line}; "
                              f"a dump's lines are all as wide as its first, so the last group is not data "
                              f"(a character column?): paste the output of one memory command unchanged",
                              number, line)
    return width, width_line


# ------------------------------------------------------------------ a session log: every dump in a text
@dataclass(frozen=True)
class Dump:
    """One memory command's output in a log: lines ``first_line``..``last_line`` hold ``data`` at ``address``."""

    first_line: int
    last_line: int
    address: int
    data: bytes
    address_bytes: int
    unit: str

    @property
    def end(self) -> int:
        return self.address + len(self.data)


@dataclass(frozen=True)
class LogScan:
    """Every dump of a WinDbg text, in the order printed, and what was not read.

    ``skipped``: lines that are neither a dump nor a prompt nor blank (a breakpoint line, the header of
    ``.logopen``, ``dt`` output, disassembly), with the first as (line number, text); ``unreadable``:
    dump lines the debugger showed as ``??``, with the first.
    """

    origin: str
    dumps: tuple
    skipped: int = 0
    first_skipped: tuple | None = None
    unreadable: int = 0
    first_unreadable: tuple | None = None

    def note(self) -> str:
        """One line saying what was skipped, or "" when nothing was."""
        parts = []
        if self.skipped:
            number, line = self.first_skipped
            parts.append(f"skipped {self.skipped} line{'s' if self.skipped != 1 else ''} that "
                         f"{'are' if self.skipped != 1 else 'is'} not a memory dump (the first, line {number}: "
                         f"{_clip(line)})")
        if self.unreadable:
            number, line = self.first_unreadable
            parts.append(f"{self.unreadable} dump line{'s' if self.unreadable != 1 else ''} the debugger could "
                         f"not read, shown as ?? (the first, line {number})")
        return f"{self.origin}: " + "; ".join(parts) if parts else ""


class _Run:
    """The dump being read: consecutive memory lines, each starting where the last ended, in one unit."""

    def __init__(self, got: _Line, number: int):
        self.first = self.last = number
        self.address, self.address_bytes, self.unit = got.address, got.address_bytes, got.unit
        self.parts, self.expected = [got.data], got.address + len(got.data)
        self.width, self.width_line = len(got.data) // _UNIT_SIZE[got.unit], number

    def follows(self, got: _Line) -> bool:
        return (got.address, got.unit, got.address_bytes) == (self.expected, self.unit, self.address_bytes)

    def dump(self) -> Dump:
        return Dump(self.first, self.last, self.address, b"".join(self.parts), self.address_bytes, self.unit)


def scan_log(text: str, origin: str = "WinDbg text") -> LogScan:
    """Every memory dump in a WinDbg text: a session log (``.logopen``), a script's output or one pasted dump.

    A dump line is what db/dw/dd/dc/dq/dp/dps/dds/dyb print: the address column, two spaces, the values
    (read by the same line reader as ``parse_windbg``).  Consecutive dump lines, each starting where the last
    ended, in one unit, are one dump; anything else ends it.  Prompts, command lines and blank lines are
    passed over; any other line (``Breakpoint 0 hit``, ``Opened log file``, ``dt`` output, disassembly, whose
    address is followed by one space) is skipped and counted.  A dump line whose values are damaged is
    refused naming it; values shown as ``??`` end their line (the readable ones before them are kept).  A
    text with no such dump line but lines of one space after the address is one retyped dump, read as
    ``parse_windbg`` reads it.
    """
    lines = _check_text(text, origin)
    dumps, run = [], None
    skipped = unreadable = retyped = 0
    first_skipped = first_unreadable = dt_line = None
    for number, line in enumerate(lines, 1):
        m = _MEMORY_LINE.match(line)
        if m is not None and m["rest"][:2].isspace() and len(m["rest"]) >= 2:
            try:
                got = _read_line(m, line, number, origin, partial=True)
            except _NotValues:
                got = None
            if got is not None:
                if got.data:
                    if run is not None and run.follows(got):
                        run.width, run.width_line = _check_width(got, run.width, run.width_line, number, line,
                                                                 origin)
                        run.parts.append(got.data)
                        run.last, run.expected = number, got.address + len(got.data)
                    else:
                        if run is not None:
                            dumps.append(run.dump())
                        run = _Run(got, number)
                if got.cut:
                    unreadable += 1
                    first_unreadable = first_unreadable or (number, line)
                    if run is not None:
                        dumps.append(run.dump())
                        run = None
                continue
        if run is not None:
            dumps.append(run.dump())
            run = None
        if m is not None and m["rest"].strip():
            retyped += 1
        if not line.strip() or _PROMPT.match(line):
            continue
        skipped += 1
        first_skipped = first_skipped or (number, line)
        if dt_line is None and (_DT_LINE.match(line) or _DX_LINE.match(line)):
            dt_line = (number, line)
    if run is not None:
        dumps.append(run.dump())
    if not dumps and retyped:
        memory, first, last = _parse_dump(lines, origin)
        dumps = [Dump(first, last, memory.address, memory.data, memory.address_bytes, "")]
        return LogScan(origin, tuple(dumps))
    if not dumps:
        if dt_line is not None:
            number, line = dt_line
            raise WinDbgTextError(f"{origin} is `dt`/`dx` output (line {number}: {_clip(line)}), not a memory "
                                  f"dump; " + _DT_HINT, number, line)
        if first_unreadable is not None:
            number, line = first_unreadable
            raise WinDbgTextError(f"{origin} line {number}: memory shown as ?? was not readable in the debugger; "
                                  f"dump a readable range (or a shorter length)", number, line)
        if first_skipped is not None:
            number, line = first_skipped
            raise WinDbgTextError(f"{origin} has no memory dumps: its {skipped} line{'s are' if skipped != 1 else ' is'}"
                                  f" other output (the first, line {number}: {_clip(line)}); log or paste the "
                                  f"output of db, dd, dq or dp (address column, two spaces, values)", number, line)
        raise WinDbgTextError(f"{origin} has no memory lines; paste the output of db, dd, dq or dp "
                              f"(address column and values)")
    return LogScan(origin, tuple(dumps), skipped, first_skipped, unreadable, first_unreadable)


def line_holding(text: str, dump: Dump, address: int) -> int:
    """The number of the line of ``dump`` (from ``scan_log(text)``) that shows the byte at ``address``."""
    lines = text.lstrip("\ufeff").splitlines()
    for number in range(dump.first_line, dump.last_line + 1):
        got = _read_line(_MEMORY_LINE.match(lines[number - 1]), lines[number - 1], number, "", partial=True)
        if got.address <= address < got.address + len(got.data):
            return number
    return dump.first_line


# dyb: each byte in binary, then the same bytes in hex, then maybe the characters
_DYB = re.compile(r"\s+(?P<bits>(?:[01]{8} )*[01]{8})\s\s+(?P<hex>(?:[0-9a-fA-F]{2} )*[0-9a-fA-F]{2})(?:\s\s.*)?\s*")


def _binary_bytes(rest: str, origin: str, number: int, line: str):
    """The bytes of a ``dyb`` line (binary groups, then the same bytes in hex), or None for other lines."""
    m = _DYB.fullmatch(rest)
    if m is None:
        return None
    bits = [int(b, 2) for b in m["bits"].split()]
    if len(m["hex"].split()) < len(bits):
        return None
    data = bytes(int(h, 16) for h in m["hex"].split()[:len(bits)])
    if list(data) != bits:
        raise WinDbgTextError(f"{origin} line {number}: the binary groups and the hex bytes after them differ; "
                              f"a dyb line shows the same bytes twice: paste its output unchanged", number, line)
    return data


def _characters(data: bytes) -> str:
    """The character column of db/dc for ``data``, spaces collapsed as a retyped line would have them."""
    return " ".join("".join(chr(c) if 0x20 <= c < 0x7F else "." for c in data).split())


def _line_values(rest: str, unit: str, number: int, line: str, origin: str, partial: bool = False) -> tuple:
    """(bytes, cut) of every value of one line, however wide; stops at a double space or tab (the character
    column of db/dc) or, after the one pointer of a dps/dds line, at its symbol.  ``cut``: stopped at a
    value shown as ``??`` (only with ``partial``; else that is refused)."""
    size = _UNIT_SIZE[unit]
    token = _TOKEN[unit]
    pos = len(rest) - len(rest.lstrip())
    stop = len(rest.rstrip())  # past it only trailing spaces (tested per value, never by slicing the rest)
    values = []
    while True:
        m = token.match(rest, pos)
        end = m.end() if m else pos
        if not m or (end < len(rest) and rest[end] not in " -\t"):
            words = rest[pos:].split()
            if len(values) == 1 and size >= 4 and words and _SYMBOL.fullmatch(words[0]):
                return values[0].to_bytes(size, "little"), False  # dps/dds: the symbol the pointer points into
            raise WinDbgTextError(f"{origin} line {number}: {_clip(words[0] if words else '')} at column "
                                  f"{pos + len(line) - len(rest) + 1} is not {_UNIT_WORD[unit]} like the others "
                                  f"on the line", number, line)
        text = m.group().replace("`", "")
        if "?" in text:
            if partial:
                return b"".join(v.to_bytes(size, "little") for v in values), True
            raise WinDbgTextError(f"{origin} line {number}: memory shown as {m.group()} was not readable in the "
                                  f"debugger; dump a readable range (or a shorter length)", number, line)
        values.append(int(text, 16))
        pos = end
        if pos >= stop or rest.startswith("  ", pos) or rest[pos] == "\t":
            break  # the character column of db/dc, or trailing spaces
        pos += 1  # the one space (or db's '-') between values
    data = b"".join(v.to_bytes(size, "little") for v in values)
    texts = rest[len(rest) - len(rest.lstrip()):pos].replace("-", " ").split()
    k = _character_column_at(texts, data, size)
    if k is not None:
        raise WinDbgTextError(f"{origin} line {number}: {_clip(' '.join(texts[k:]))} after {k} value(s) is the "
                              f"character column (those bytes as text), not data; WinDbg puts two spaces before "
                              f"it: paste its output unchanged", number, line)
    chars = rest[pos:].strip()
    if len(chars) > len(values) * size:  # db/dc/dW print one character per byte, never more
        raise WinDbgTextError(f"{origin} line {number}: {_clip(chars)} after {len(values)} value(s) is not the "
                              f"character column ({len(values) * size} characters at most); WinDbg separates "
                              f"values by one space: paste its output unchanged", number, line)
    return data, False


def _character_column_at(texts: list, data: bytes, size: int):
    """The k (0 < k < len(texts)) at which ``texts[k:]`` are the character column of the first k values
    (a column typed after one space), or None.  In linear time: that column's length never shrinks as k
    grows while the text after k values always does, so only the one k where the lengths meet is compared."""
    after = len(texts) - 1  # the length of " ".join(texts[k:]), kept for k = 0, 1, ...
    after += sum(len(t) for t in texts)
    column = 0  # the length of _characters(data[:k * size]), kept as the bytes are read
    gap = False  # a space after the column's text so far: it counts only when more text follows
    for k in range(1, len(texts)):
        after -= len(texts[k - 1]) + 1
        for c in data[(k - 1) * size:k * size]:
            if c == 0x20:
                gap = gap or column > 0
            else:
                column, gap = column + 1 + gap, False
        if column >= after:
            same = column == after and " ".join(texts[k:]) == _characters(data[:k * size])
            return k if same else None
    return None


def _clip(line: str) -> str:
    s = line.strip()
    return repr(s if len(s) <= 40 else s[:37] + "...")


def _hex_or_int(value: int) -> str:
    if value.bit_length() > 64:
        return f"{'-' if value < 0 else ''}<a {value.bit_length()}-bit number>"
    return f"-0x{-value:X}" if value < 0 else f"0x{value:X}"


def _windbg_address(address: int) -> str:
    """An address as WinDbg prints it: 8 digits, or 16 with a backtick when above 4 GB."""
    if address < 0 or address.bit_length() > 64:
        return _hex_or_int(address)
    if address >> 32:
        return f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}"
    return f"{address:08x}"
