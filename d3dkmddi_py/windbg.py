"""WinDbg text and the numbers users type: memory dumps (WINDBG_COMMANDS), hex bytes, integers, addresses.

Pure text parsing, no files: one dump is a ``Memory`` (bytes plus the debuggee address of the first
byte); a session log is a ``LogScan`` (every dump in it, with its lines, and the lines skipped).  Both
read each line with the one line reader here.  Errors are ``DecodeError`` / ``WinDbgTextError`` with a
one-line message.
"""
from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_right
from functools import lru_cache
from types import GeneratorType

from ._records import dataclass
from .errors import DecodeError, InvalidArgument, WinDbgTextError, bad_argument
from .wording import noun, plural


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
            raise DecodeError(f"odd-length hex: {_clip(group)} has {plural(len(group), 'digit')}; each byte is two digits "
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
_TOKEN_TEXT = {
    "db": "[0-9a-fA-F?]{2}",
    "dw": "[0-9a-fA-F?]{4}",
    "dd": "[0-9a-fA-F?]{8}",
    "dq": "[0-9a-fA-F?]{8}`[0-9a-fA-F?]{8}|[0-9a-fA-F?]{16}",
}
_TOKEN = {unit: re.compile(text) for unit, text in _TOKEN_TEXT.items()}
# A value cut short: what the end of a line holds when the text stopped inside a value of the unit.
_PART_TEXT = {"db": "[0-9a-fA-F?]", "dw": "[0-9a-fA-F?]{1,3}", "dd": "[0-9a-fA-F?]{1,7}",
              "dq": "[0-9a-fA-F?]{1,8}(?:`[0-9a-fA-F?]{0,7})?|[0-9a-fA-F?]{9,15}"}
_CUT = {unit: rf"(?:(?:{_TOKEN_TEXT[unit]})[ -])*(?:{_PART_TEXT[unit]})" for unit in _UNIT_SIZE}  # re caches them
_UNIT_WORD = {"db": "a 2-digit byte", "dw": "a 4-digit word", "dd": "an 8-digit dword", "dq": "a 16-digit qword"}
# What dps/dds/dqs print after the one pointer of a line: module!symbol+0x10, or module+0x1234.
_SYMBOL = re.compile(r"\S*!\S*|[\w.]+\+0x[0-9a-fA-F]+")
# dD and df print numbers in decimal (-1.#QNAN, 1.5e+010, 0), right-aligned in wide columns
_FLOAT = (r"[-+]?1\.#(?:QNAN|SNAN|INF|IND)\d*|[-+]?(?:inf|nan)\w*|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# a line of such numbers, in linear time: each number is taken whole (atomic), never split to retry
_FLOATS = rf"(?i)\s*(?:(?>{_FLOAT})(?:\s+|$))++"  # compiled when a line needs it (re caches it)
_FLOAT_MARK = r"[.#+]|(?:^|\s)-|[a-zA-Z]{3}"
_DT_HINT = ("decode needs the raw bytes: run `db <address> L<size>` (or dd/dq/dp) in WinDbg and paste that; "
            "`d3dkmddi layout <type>` prints the layout dt shows")
# The header lines dyb and dyd print above their lines: bit numbers and dashes, no address
_DY_HEADER = re.compile(r"^ +(?:(?:76543210|10987654 32109876 54321098 76543210)(?: |$))+$|^ +3 +2 +1 +0(?: +3 +2 +1 +0)*$"
                        r"|^ +-{8}(?: -{8})*$")


class _Command:
    """What a WinDbg display command prints after the address column: values of ``unit`` (``dp``: a pointer,
    dd or dq by the address column's width), then ``tail``: "" nothing more, "chars" the same bytes as
    characters, "symbol" the symbol the one pointer points into, "string" the characters it points to,
    "pointee" the value it points to, "binary" the bytes in binary first; ``exact`` False for output that
    is not the bytes exactly (decimal floating point, characters)."""

    __slots__ = ("name", "unit", "tail", "exact", "what")

    def __init__(self, name: str, unit, tail: str = "", what: str = ""):
        self.name, self.unit, self.tail, self.exact, self.what = name, unit, tail, unit is not None, what

    def unit_at(self, address_bytes: int) -> str:
        return ("dq" if address_bytes == 8 else "dd") if self.unit == "dp" else self.unit


# The display commands of WinDbg's pages "d, da, db, dc, dd, dD, df, dp, dq, du, dw, dW, dyb, dyd",
# "dds, dps, dqs" and "dda, ddp, ddu, dpa, dpp, dpu, dqa, dqp, dqu", case as the pages write them.
_COMMANDS = {c.name: c for c in (
    _Command("db", "db", "chars"), _Command("dw", "dw"), _Command("dW", "dw", "chars"),
    _Command("dd", "dd"), _Command("dc", "dd", "chars"), _Command("dq", "dq"), _Command("dp", "dp"),
    _Command("dds", "dd", "symbol"), _Command("dqs", "dq", "symbol"), _Command("dps", "dp", "symbol"),
    _Command("dda", "dd", "string"), _Command("dqa", "dq", "string"), _Command("dpa", "dp", "string"),
    _Command("ddu", "dd", "string"), _Command("dqu", "dq", "string"), _Command("dpu", "dp", "string"),
    _Command("ddp", "dd", "pointee"), _Command("dqp", "dq", "pointee"), _Command("dpp", "dp", "pointee"),
    _Command("dyb", "db", "binary"), _Command("dyd", "dd", "binary"),
    _Command("dD", None, what="double-precision floating-point numbers in decimal"),
    _Command("df", None, what="single-precision floating-point numbers in decimal"),
    _Command("da", None, what="ASCII characters"), _Command("du", None, what="Unicode characters"),
)}
# The memory commands whose output is read as bytes (the command's --windbg help and the README name these).
WINDBG_COMMANDS = tuple(name for name, c in _COMMANDS.items() if c.exact)
_COMMAND_NAME = re.compile(r"\s*(d\w*)(?=[\s/]|$)")


_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _text_of(raw: bytes):
    """(text, encoding, byte-order mark length) of bytes that are text, else None."""
    encoding, skip = "utf-8", 0
    for bom, name in _BOMS:
        if raw.startswith(bom):
            encoding, skip = name, len(bom)
            break
    body = raw[skip:]
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
    return (text, encoding, skip) if all(c.isprintable() or c.isspace() for c in text[:4096]) else None


def text_of_bytes(raw: bytes):
    """The text of a file's bytes when they are text: UTF-8 (a byte-order mark allowed, a cut last character
    allowed), or UTF-16 with its byte-order mark (WinDbg's `.logopen /u`); else None (raw bytes).  Text is
    printable characters and white space (a form feed, NEL or U+2028 included)."""
    found = _text_of(raw)
    return None if found is None else found[0]


def text_encoding(head: bytes):
    """(encoding, byte-order mark length) of a file whose first bytes are ``head``, when they are text as
    ``text_of_bytes`` reads it; else None."""
    found = _text_of(head)
    return None if found is None else found[1:]


# Lines end at \n, \r\n and \r only (a form feed, NEL or U+2028 is a character of its line, as WinDbg's own
# output has them), so every "line N" is the line an editor shows.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_TEXT = re.compile(r"[^\r\n]*")


def text_lines(text: str) -> list:
    """The lines of a text, split at \\n, \\r\\n and \\r only (``str.splitlines`` splits at more)."""
    lines = _LINE_BREAK.split(text)
    if lines and not lines[-1]:
        lines.pop()
    return lines


def looks_like_windbg(text) -> bool:
    """True when text has the shape of WinDbg output (a memory line, a prompt, or dt/dx fields)."""
    if not isinstance(text, str):
        return False
    for line in text_lines(text[:200_000])[:50]:
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


def _check_text(text, origin) -> None:
    if not isinstance(origin, str):  # it is echoed in every message: an int of 20,000 digits cannot be
        raise DecodeError(f"origin must be str (the name messages give the text), not {type(origin).__name__}")
    if not isinstance(text, str) and not hasattr(text, "__next__"):
        raise DecodeError(f"WinDbg text must be str (or an iterator of str pieces, as a file read a piece at a "
                          f"time), not {type(text).__name__}")


class _NotValues(WinDbgTextError):
    """A line with an address column but no values a memory command prints (a log skips it)."""


class _NotBytes(WinDbgTextError):
    """A line of dD, df, da or du output: numbers in decimal or characters, not the bytes exactly (a log skips
    it and says so; a single dump is refused)."""


class _Line:
    """What one memory line holds: ``cut`` when its values stop at memory the debugger could not read, ``plain``
    when it is values (and maybe their characters) only, as the run of lines after it may be read in bulk.
    A plain class with slots: one is made per line, and a record class costs microseconds each."""

    __slots__ = ("address", "address_bytes", "unit", "data", "cut", "plain", "values")

    def __init__(self, address: int, address_bytes: int, unit: str, data: bytes, cut: bool = False,
                 plain: bool = False):
        self.address, self.address_bytes, self.unit, self.data, self.cut = address, address_bytes, unit, data, cut
        self.plain, self.values = plain, len(data) // _UNIT_SIZE[unit]


def _read_line(m, line: str, number: int, origin: str, *, partial: bool = False, command=None, width=None,
               command_line=None) -> _Line:
    """The one reader of a memory line (``m``: its _MEMORY_LINE match): the values after the address column,
    at any width, in the unit of ``command`` (the display command the log shows before the line, read as it
    prints) or, without one, of the line's own values.  ``partial``: values shown as ``??`` end the line
    instead of refusing it (a log keeps the readable ones before them).  ``width``: the values of the dump's
    first line, when this line continues a dump."""
    text = m["address"]
    digits = text.replace("`", "")
    address, address_bytes = int(digits, 16), len(digits) // 2
    rest = m["rest"]
    if not rest.strip():
        raise _NotValues(f"{origin} line {number}: address {text} has no values after it", number, line)
    if command is not None and not command.exact:
        raise _NotBytes(f"{origin} line {number}: {command.name} output ({command.what}) is not the memory's bytes "
                        f"exactly; dump them with db, dd or dq", number, line)
    said = "" if command is None else f" as {command.name} prints it (line {command_line})"
    got = _binary_line(rest, address_bytes, number, line, origin, command, said, partial)
    if got is None:
        unit = _unit_of(rest.strip()) if command is None else command.unit_at(address_bytes)
        if unit is None:
            _refuse_floats(rest, number, line, origin)
            raise _NotValues(f"{origin} line {number}: {_clip(rest.split()[0])} is not a hex byte, word, "
                             f"dword or qword as db/dw/dd/dq print them", number, line)
        try:
            data, cut, plain = _line_values(rest, unit, number, line, origin, partial, command, width, said)
        except _NotBytes:
            raise
        except WinDbgTextError:
            if command is None:
                _refuse_floats(rest, number, line, origin)
            raise
        got = _Line(address, address_bytes, unit, data, cut, plain)
    else:
        got.address = address
    if address + len(got.data) > ADDRESS_END:
        raise WinDbgTextError(f"{origin} line {number}: {plural(len(got.data), 'byte')} at {_windbg_address(address)} run past "
                              f"the end of the {ADDRESS_BITS}-bit address space; the line is not a dump WinDbg "
                              f"printed", number, line)
    return got


def _gap(rest: str) -> int:
    """The spaces between the address column and the first value."""
    return len(rest) - len(rest.lstrip(" "))


def _refuse_floats(rest: str, number: int, line: str, origin: str) -> None:
    """``_NotBytes`` for the line of decimal numbers dD and df print, right-aligned in wide columns."""
    if not re.fullmatch(_FLOATS, rest):
        return
    if _gap(rest) != 2 or re.search(_FLOAT_MARK, rest):  # right-aligned, or a point, a sign or an exponent
        raise _NotBytes(f"{origin} line {number}: {_clip(rest)} is decimal numbers as dD or df print them "
                        f"(floating point), not the memory's bytes exactly; dump them with db, dd or dq",
                        number, line)


# dyb and dyd: the bytes (dwords) in binary, most significant bit first, then the same in hex
_BINARY = re.compile(r"  (?P<bits>[01?]{8}(?: [01?]{8})*)  +(?P<hex>[0-9a-fA-F?]+(?: [0-9a-fA-F?]+)*)(?:  .*)? *")


def _binary_line(rest, address_bytes, number, line, origin, command, said, partial):
    """The _Line of a ``dyb`` or ``dyd`` line, or None for other lines (a dyb/dyd ``command`` refuses them)."""
    binary = command is not None and command.tail == "binary"
    if command is not None and not binary:
        return None
    m = _BINARY.fullmatch(rest)
    bits, hexes = (m["bits"].split(), m["hex"].split()) if m else ((), ())
    digits = {len(h) for h in hexes}
    unit = {frozenset({2}): "db", frozenset({8}): "dd"}.get(frozenset(digits))
    if unit is not None and len(bits) != len(hexes) * _UNIT_SIZE[unit]:
        unit = None
    if command is not None and unit != command.unit:
        raise WinDbgTextError(f"{origin} line {number}: {_clip(rest)} is not {command.name}'s binary groups "
                              f"followed by the same {'bytes' if command.unit == 'db' else 'dwords'} in hex{said}; "
                              f"the line was cut or changed", number, line)
    if unit is None:
        return None
    size = _UNIT_SIZE[unit]
    out, cut = bytearray(), False
    for i, value in enumerate(hexes):
        group = "".join(bits[i * size:(i + 1) * size])
        if "?" in group or "?" in value:
            if not partial:
                raise WinDbgTextError(f"{origin} line {number}: memory shown as ?? was not readable in the "
                                      f"debugger; dump a readable range (or a shorter length)", number, line)
            cut = True
            break
        if int(group, 2) != int(value, 16):
            raise WinDbgTextError(f"{origin} line {number}: the binary groups and the hex "
                                  f"{'bytes' if size == 1 else 'dwords'} after them differ; a "
                                  f"{'dyb' if size == 1 else 'dyd'} line shows the same "
                                  f"{'bytes' if size == 1 else 'dwords'} twice: paste its output unchanged",
                                  number, line)
        out += int(value, 16).to_bytes(size, "little")
    return _Line(0, address_bytes, unit, bytes(out), cut)


def _characters(data: bytes) -> str:
    """The character column of db/dc for ``data``, spaces collapsed as a retyped line would have them."""
    return " ".join("".join(chr(c) if 0x20 <= c < 0x7F else "." for c in data).split())


def _line_values(rest: str, unit: str, number: int, line: str, origin: str, partial: bool = False, command=None,
                 width=None, said: str = "") -> tuple:
    """(bytes, cut, plain) of every value of one line, however wide; stops at a double space or tab (the
    character column of db/dc/dW) or, after the one pointer of a line, at its symbol (dds/dps/dqs), at the
    string it points to (dda/dpu...), or at the value it points to (ddp/dqp/dpp: that value is not the memory
    after the pointer).  ``cut``: stopped at a value shown as ``??`` (only with ``partial``; else that is
    refused)."""
    size = _UNIT_SIZE[unit]
    token = _TOKEN[unit]
    pos = len(rest) - len(rest.lstrip())
    stop = len(rest.rstrip())  # past it only trailing spaces (tested per value, never by slicing the rest)
    tail = "" if command is None else command.tail
    values = []
    while True:
        m = token.match(rest, pos)
        end = m.end() if m else pos
        if not m or (end < len(rest) and rest[end] not in " -\t"):
            words = rest[pos:].split()
            if len(values) == 1 and size >= 4 and words and tail in ("", "symbol", "string") and (
                    _SYMBOL.fullmatch(words[0]) or rest[pos:].lstrip().startswith('"')):
                return values[0].to_bytes(size, "little"), False, False  # the symbol or string the pointer points to
            column = pos + len(line) - len(rest) + 1
            others = "like the others on the line" if values or not said else said.lstrip()
            raise WinDbgTextError(f"{origin} line {number}: {_clip(words[0] if words else '')} at column {column} "
                                  f"is not {_UNIT_WORD[unit]} {others}", number, line)
        text = m.group().replace("`", "")
        if "?" in text:
            if partial:
                return b"".join(v.to_bytes(size, "little") for v in values), True, False
            raise WinDbgTextError(f"{origin} line {number}: memory shown as {m.group()} was not readable in the "
                                  f"debugger; dump a readable range (or a shorter length)", number, line)
        values.append(int(text, 16))
        pos = end
        if tail == "pointee":
            return values[0].to_bytes(size, "little"), False, False  # what the pointer points to follows it
        if pos >= stop or rest.startswith("  ", pos) or rest[pos] == "\t":
            break  # the character column of db/dc/dW, the string of dda/dpu..., or trailing spaces
        pos += 1  # the one space (or db's '-') between values
    data = b"".join(v.to_bytes(size, "little") for v in values)
    chars = rest[pos:].strip()
    if len(values) == 1 and size >= 4 and chars.startswith('"'):
        return data, False, False  # dda/ddu/dqa/dqu/dpa/dpu: the string the pointer points to
    texts = rest[len(rest) - len(rest.lstrip()):pos].replace("-", " ").split()
    # A line as wide as its dump's first is that many values: the first line's column was tested.
    k = None if width == len(values) else _character_column_at(texts, data, size)
    if k is not None:
        raise WinDbgTextError(f"{origin} line {number}: {_clip(' '.join(texts[k:]))} after {plural(k, 'value')} is the "
                              f"character column (those bytes as text), not data; WinDbg puts two spaces before "
                              f"it: paste its output unchanged", number, line)
    if len(chars) > len(values) * size:  # db/dc/dW print one character per byte, never more
        raise WinDbgTextError(f"{origin} line {number}: {_clip(chars)} after {plural(len(values), 'value')} is not the "
                              f"character column ({len(values) * size} characters at most); WinDbg separates "
                              f"values by one space: paste its output unchanged", number, line)
    return data, False, tail in ("", "chars")


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


def _cut_in(rest: str, unit: str) -> bool:
    """Whether a line's values end inside a value of ``unit``: the text was cut there."""
    return re.fullmatch(_CUT[unit], rest.strip()) is not None


# ------------------------------------------------------------------ many full lines at once
# WinDbg prints every full line of a dump alike: the same width, the same separators, one character per byte
# in the character column.  Once a dump's first line is read, the lines of exactly its shape after it are
# read a block at a time: one regular expression checks them, and bytes operations take their digits.
_BLOCK_LINES = 4096  # lines per block: bounds the regular expression's own memory and the block's copies
_WIDEST = 4096  # characters of the widest line read in blocks (db /c 1024); a wider one is a dump of its own
_ARRAY = {2: "H", 4: "I", 8: "Q"}
_SWAP = sys.byteorder == "little"  # values are printed most significant digit first
_HEX_RUN = re.compile(r"[0-9a-fA-F]+")
_NOT_DIGITS = b"` -\r\n"  # what a shaped line holds besides hex digits, once its character column is blanked


class _Shape:
    """The shape of a dump's full lines, from its first: ``pattern`` matches a block of lines of exactly that
    shape (each read by the line reader to the same bytes); ``blank``: the character column's places."""

    __slots__ = ("key", "length", "blank", "address_bytes", "size", "record", "backtick")

    def __init__(self, key: tuple, length: int, blank: range, address_bytes: int, size: int, values: int,
                 backtick: bool):
        self.key, self.length, self.blank, self.address_bytes, self.size = key, length, blank, address_bytes, size
        self.record = address_bytes + values * size  # the bytes of one line's digits: its address, its values
        self.backtick = backtick  # the address column as 8 digits, a backtick and 8 more

    @property
    def pattern(self):
        return _block_pattern(*self.key)  # compiled once per shape, when a block of lines is first tried

    def address(self, address: int) -> str:
        """The address column of a line of this shape at ``address``, as WinDbg prints it (lower case)."""
        if self.address_bytes == 4:
            return f"{address:08x}"
        return f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}" if self.backtick else f"{address:016x}"

    @staticmethod
    def of(line: str, eol: str, got: "_Line"):
        """The shape of ``line`` (read as ``got``, ended by ``eol``), or None when lines like it are read
        one by one: anything but an address at the start, two spaces, values in hex and maybe their
        characters, one a byte (the line reader reads such lines alike at any width)."""
        if not got.plain or not line[:1].isalnum() or eol not in ("\n", "\r\n", "\r") or len(line) > _WIDEST:
            return None
        size, values = _UNIT_SIZE[got.unit], got.values
        at = 2 * got.address_bytes + (line[8:9] == "`") + 2
        row = _row_pattern(got.unit, values).match(line, at)
        if row is None or line[at - 2:at] != "  ":
            return None
        tail = line[row.end():]
        if tail and not (tail.startswith("  ") and len(tail) == 2 + values * size and tail.isascii() and
                         tail[2:].isprintable()):
            return None
        key = line[:row.end()].translate(_ZERO_DIGITS)  # the line's shape: its digits are any digits
        return _Shape((key, len(tail), eol), len(line) + len(eol), range(row.end() + 2, len(line)) if tail else
                      range(0), got.address_bytes, size, values, line[8:9] == "`")


_ZERO_DIGITS = str.maketrans("123456789abcdefABCDEF", "0" * 21)


@lru_cache(maxsize=64)
def _row_pattern(unit: str, values: int):
    token = _TOKEN_TEXT[unit].replace("?", "")
    return re.compile(rf"(?:{token})(?:[ -](?:{token})){{{values - 1}}}")


@lru_cache(maxsize=64)
def _block_pattern(key: str, tail: int, eol: str):
    """The pattern of a block of lines shaped as ``key`` (a line with every digit 0: any hex digit there), then
    ``tail`` characters (two spaces and the printable character column), then ``eol``."""
    line = _HEX_RUN.sub(lambda m: f"[0-9a-fA-F]{{{len(m.group())}}}", re.escape(key).replace("\\`", "`"))
    column = f"  [ -~]{{{tail - 2}}}" if tail else ""
    return re.compile(f"(?:{line}{column}{re.escape(eol)}){{1,{_BLOCK_LINES}}}")


@lru_cache(maxsize=8)
def _progressions(word_bits: int) -> tuple:
    """(S0, S1): the sums of x**i and of i * x**i for i < _BLOCK_LINES, x = 2**word_bits.  Addresses a_i read
    as one big-endian number are sum(a_i * x**(n-1-i)); those of a dump, start + i * step, make
    (start + step * (n-1)) * S0 - step * S1 for the first n (S0, S1 cut to n words)."""
    code = _ARRAY[word_bits // 8]
    ones, counts = array(code, [1]) * _BLOCK_LINES, array(code, range(_BLOCK_LINES - 1, -1, -1))
    if _SWAP:
        ones.byteswap()
        counts.byteswap()
    return int.from_bytes(ones.tobytes(), "big"), int.from_bytes(counts.tobytes(), "big")


def _take_columns(raw: bytes, first: int, count: int, record: int, item: int) -> bytes:
    """Bytes first..first+count-1 of each record of ``record`` bytes, one after another, moved ``item`` bytes
    at a time (``item`` divides the three)."""
    words = array(_ARRAY.get(item, "B"), raw)
    first, count, record = first // item, count // item, record // item
    out = array(words.typecode, bytes(len(raw) // record * count))
    for k in range(count):
        out[k::count] = words[first + k::record]
    return out.tobytes()


# ------------------------------------------------------------------ a session log: every dump in a text
@dataclass(frozen=True)
class Dump:
    """One memory command's output in a log: lines ``first_line``..``last_line`` hold ``data`` at ``address``.
    ``line_bytes``: the bytes of each line but the last; ``marks``: (address, line number) of every line,
    kept only when its lines are not all that wide or not consecutive."""

    first_line: int
    last_line: int
    address: int
    data: bytes
    address_bytes: int
    unit: str
    line_bytes: int = 0
    marks: tuple = ()

    @property
    def end(self) -> int:
        return self.address + len(self.data)


@dataclass(frozen=True)
class LogScan:
    """Every dump of a WinDbg text, in the order printed, and what was not read.

    ``skipped``: lines that are neither a dump nor a prompt nor blank (a breakpoint line, the header of
    ``.logopen``, ``dt`` output, disassembly), with the first as (line number, text); ``unreadable``:
    dump lines the debugger showed as ``??``, with the first; ``not_bytes``: dump lines of dD, df, da or du
    (decimal numbers or characters, not the bytes exactly), with the first.
    """

    origin: str
    dumps: tuple
    skipped: int = 0
    first_skipped: tuple | None = None
    unreadable: int = 0
    first_unreadable: tuple | None = None
    not_bytes: int = 0
    first_not_bytes: tuple | None = None

    def note(self) -> str:
        """One line saying what was skipped, or "" when nothing was."""
        parts = []
        if self.skipped:
            number, line = self.first_skipped
            parts.append(f"skipped {self.skipped} {noun(self.skipped, 'line')} that "
                         f"{'are' if self.skipped != 1 else 'is'} not a memory dump (the first, line {number}: "
                         f"{_clip(line)})")
        if self.not_bytes:
            number, line = self.first_not_bytes
            parts.append(f"skipped {self.not_bytes} dump {noun(self.not_bytes, 'line')} of dD, df, da or "
                         f"du, which {noun(self.not_bytes, 'prints', 'print')} decimal numbers or characters, not "
                         f"the bytes exactly (the first, line {number}: {_clip(line)})")
        if self.unreadable:
            number, line = self.first_unreadable
            parts.append(f"{self.unreadable} dump {noun(self.unreadable, 'line')} the debugger could "
                         f"not read, shown as ?? (the first, line {number})")
        return f"{self.origin}: " + "; ".join(parts) if parts else ""


class _Run:
    """The dump being read: consecutive memory lines, each starting where the last ended, in one unit."""

    def __init__(self, got: _Line, number: int):
        self.first = self.last = number
        self.address, self.address_bytes, self.unit = got.address, got.address_bytes, got.unit
        self.parts, self.expected = [got.data], got.address + len(got.data)
        self.width, self.width_line = got.values, number
        self.line_bytes, self.last_size, self.lines, self.marks = len(got.data), len(got.data), 1, None
        self.bulk = None  # the _Shape of its full lines, from its first (the scanner knows how it ends)
        self.pointee = None  # ddp/dqp/dpp's layout, when its lines showed it without the command

    def follows(self, got: _Line) -> bool:
        return (got.address, got.unit, got.address_bytes) == (self.expected, self.unit, self.address_bytes)

    def add(self, got: _Line, number: int) -> None:
        if self.marks is None and (number != self.last + 1 or self.last_size != self.line_bytes):
            self.marks = [(self.address + i * self.line_bytes, self.first + i) for i in range(self.lines)]
        if self.marks is not None:
            self.marks.append((got.address, number))
        self.parts.append(got.data)
        self.last, self.expected, self.last_size = number, got.address + len(got.data), len(got.data)
        self.lines += 1
        if not (got.plain and got.values == self.width):
            self.bulk = None

    def add_bulk(self, data: bytes, lines: int, number: int) -> None:
        """``lines`` full lines, the first of them line ``number``, holding ``data``."""
        step = self.line_bytes
        if self.marks is None and (number != self.last + 1 or self.last_size != step):
            self.marks = [(self.address + i * step, self.first + i) for i in range(self.lines)]
        if self.marks is not None:
            self.marks.extend((self.expected + i * step, number + i) for i in range(lines))
        self.parts.append(data)
        self.last, self.expected, self.last_size = number + lines - 1, self.expected + len(data), step
        self.lines += lines

    def dump(self) -> Dump:
        return Dump(self.first, self.last, self.address, b"".join(self.parts), self.address_bytes, self.unit,
                    self.line_bytes, tuple(self.marks) if self.marks is not None else ())


class _Scanner:
    """One pass over the lines of a WinDbg text, a piece at a time: every dump of a log (``strict`` False),
    or the one dump of a text that is nothing else (``strict``: parse_windbg).  Each prompt's command says
    how the lines after it are printed; without one, a line is read by its own shape."""

    def __init__(self, origin: str, strict: bool):
        self.origin, self.strict = origin, strict
        self.number = 0
        self.dumps, self.run = [], None
        self.command = self.command_line = self.last_d = None
        self.eol = ""  # how the line being read ends
        self.skipped = self.unreadable = self.not_bytes = self.retyped = 0
        self.first_skipped = self.first_unreadable = self.first_not_bytes = self.dt_line = None
        self.error = None  # strict: the first error, raised at the end unless a dt line comes (its error wins)
        # a log with no two-space dump line is one retyped dump, read as parse_windbg reads it: by this scanner
        self.retyped_reader = None if strict else _Scanner(origin, True)

    # ---------------------------------------------------------------- pieces of text
    def feed(self, text: str, final: bool) -> str:
        """Read the complete lines of ``text`` (all of it when ``final``); return the rest."""
        end = len(text)
        if not final:
            end = max(text.rfind("\n"), text.rfind("\r", 0, len(text) - 1)) + 1  # a last \r may start \r\n
        pos = 0
        while pos < end:
            stop = _LINE_TEXT.match(text, pos).end()
            line = text[pos:stop]
            if stop < len(text):
                self.eol = "\r\n" if text.startswith("\r\n", stop) else text[stop]
                stop += len(self.eol)
            else:
                self.eol = ""
            self.number += 1
            self.line(line)
            pos = stop
            run = self.run
            if run is not None and run.bulk is not None and self.error is None:
                pos = self.bulk(text, pos, end)
        return text[end:]

    def bulk(self, text: str, pos: int, end: int) -> int:
        """Read the lines from ``pos`` that continue the run in the shape of its first, a block at a time; the
        first other line (or one that starts another dump) is left to the line reader."""
        run = self.run
        shape = run.bulk
        size, step, length, record = shape.size, run.line_bytes, shape.length, shape.record
        bits = 8 * shape.address_bytes
        while True:
            if not text.startswith(shape.address(run.expected), pos):
                return pos  # the next line is not this dump's (a prompt, another dump, the end)
            m = shape.pattern.match(text, pos, end)
            if m is None:
                return pos
            lines = min((m.end() - pos) // length, max(0, ((1 << bits) - run.expected) // step))
            if lines == 0:
                return pos
            raw = bytearray(text[pos:pos + lines * length].encode("ascii"))
            if shape.blank:
                spaces = b" " * lines
                for at in shape.blank:  # the character column: not digits
                    raw[at::length] = spaces
            digits = bytes.fromhex(raw.translate(None, _NOT_DIGITS).decode("ascii"))
            item = min(size, shape.address_bytes)
            addresses = _take_columns(digits, 0, shape.address_bytes, record, item)
            s0, s1 = _progressions(bits)
            mask = (1 << bits * lines) - 1
            s0, s1 = s0 & mask, s1 & mask
            if int.from_bytes(addresses, "big") != (run.expected + step * (lines - 1)) * s0 - step * s1:
                words = [int.from_bytes(addresses[i:i + bits // 8], "big") for i in range(0, len(addresses), bits // 8)]
                lines = next(i for i, a in enumerate(words) if a != run.expected + i * step)
                if lines == 0:
                    return pos
                digits = digits[:lines * record]
            values = _take_columns(digits, shape.address_bytes, record - shape.address_bytes, record, item)
            if size > 1:
                words = array(_ARRAY[size], values)
                if _SWAP:
                    words.byteswap()
                values = words.tobytes()
            run.add_bulk(values, lines, self.number + 1)
            self.number += lines
            pos += lines * length
            if pos != m.end():
                return pos  # the next line starts another dump, or past the address column's end

    def finish(self):
        """Every dump read (strict: the one dump, or the first error)."""
        self.end_run()
        if self.strict:
            if self.dt_line is not None:
                self._dt_error()
            if self.error is not None:
                raise self.error
            if not self.dumps:
                raise WinDbgTextError(f"{self.origin} has no memory lines; paste the output of db, dd, dq or dp "
                                      f"(address column and values)")
            return self.dumps[0]
        if not self.dumps and self.retyped and self.retyped_reader is not None:
            dump = self.retyped_reader.finish()
            return LogScan(self.origin, (Dump(dump.first_line, dump.last_line, dump.address, dump.data,
                                              dump.address_bytes, "", dump.line_bytes, dump.marks),))
        if not self.dumps:
            if self.dt_line is not None:
                self._dt_error()
            for first in (self.first_unreadable, self.first_not_bytes):
                if first is not None:
                    number, line = first
                    why = ("memory shown as ?? was not readable in the debugger; dump a readable range (or a shorter "
                           "length)" if first is self.first_unreadable else
                           "dD, df, da and du print decimal numbers or characters, not the bytes exactly; dump them "
                           "with db, dd or dq")
                    raise WinDbgTextError(f"{self.origin} line {number}: {why}", number, line)
            if self.first_skipped is not None:
                number, line = self.first_skipped
                raise WinDbgTextError(f"{self.origin} has no memory dumps: its {self.skipped} "
                                      f"line{'s are' if self.skipped != 1 else ' is'} other output (the first, line "
                                      f"{number}: {_clip(line)}); log or paste the output of db, dd, dq or dp "
                                      f"(address column, two spaces, values)", number, line)
            raise WinDbgTextError(f"{self.origin} has no memory lines; paste the output of db, dd, dq or dp "
                                  f"(address column and values)")
        return LogScan(self.origin, tuple(self.dumps), self.skipped, self.first_skipped, self.unreadable,
                       self.first_unreadable, self.not_bytes, self.first_not_bytes)

    def _dt_error(self):
        number, line = self.dt_line
        raise WinDbgTextError(f"{self.origin} is `dt`/`dx` output (line {number}: {_clip(line)}), not a memory "
                              f"dump; " + _DT_HINT, number, line)

    # ---------------------------------------------------------------- one line
    def line(self, line: str) -> None:
        number = self.number
        if self.dt_line is None and (_DT_LINE.match(line) or _DX_LINE.match(line)):
            self.dt_line = (number, line)
        if self.error is None:  # strict: only a dt line is looked for after an error
            try:
                self._line(line, number)
            except WinDbgTextError as exc:
                if not self.strict:
                    raise
                self.error = exc
        if self.retyped_reader is not None:  # until a dump line shows the text is a log
            self.retyped_reader.number = number
            self.retyped_reader.line(line)

    def _line(self, line: str, number: int) -> None:
        p = _PROMPT.match(line)
        if p is not None:
            if not self.strict:
                self.end_run()
            self._command(line[p.end():], number)
            return
        if not line.strip() or _DY_HEADER.match(line):
            if not self.strict:
                self.end_run()
            if self.command is None and "0" in line:  # the header says which: bit numbers 31..0 are dyd's
                name = "dyd" if "10987654" in line or "76543210" not in line else "dyb"
                self.command, self.command_line = _COMMANDS[name], number
            return
        m = _MEMORY_LINE.match(line)
        rest = "" if m is None else m["rest"]
        if m is not None and rest.strip() and self.command is not None and not self.command.exact:
            if self.strict:  # dD, df, da, du: whatever the spacing of their columns
                _read_line(m, line, number, self.origin, command=self.command)
            self.end_run()
            self._not_bytes(number, line)
            return
        gap = _gap(rest)
        dump_line = m is not None and (gap == 2 if not self.strict else gap in (1, 2)) and rest[gap:gap + 1] not in \
            ("", "\t")
        if self.strict:
            if m is None:
                raise WinDbgTextError(f"{self.origin} line {number}: {_clip(line)} does not start with an address "
                                      f"column (expected e.g. 'fffff801`2a3b4000  85 04 00 00 ...')", number, line)
            if not dump_line and rest.strip():
                _refuse_floats(rest, number, line, self.origin)
                raise WinDbgTextError(f"{self.origin} line {number}: the values start {gap} spaces after the address; "
                                      f"a memory command prints two: paste its output unchanged", number, line)
        elif not dump_line:
            self.end_run()
            if m is not None and rest.strip():
                self.retyped += 1
                try:
                    _refuse_floats(rest, number, line, self.origin)
                except _NotBytes:
                    self._not_bytes(number, line)
                    return
            self.skipped += 1
            self.first_skipped = self.first_skipped or (number, line)
            return
        run = self.run
        command, command_line = self.command, self.command_line
        if command is None and run is not None:
            command, command_line = run.pointee or self._pointee(m, run), run.first
        try:
            got = _read_line(m, line, number, self.origin, partial=not self.strict, command=command,
                             width=None if run is None else run.width, command_line=command_line)
        except WinDbgTextError as exc:
            self._cut(m, rest, run)  # a line of the dump cut inside a value: refused as that, not as other output
            if self.strict or type(exc) not in (_NotBytes, _NotValues):
                raise
            self.end_run()
            if isinstance(exc, _NotBytes):
                self._not_bytes(number, line)
            else:
                self.retyped += 1
                self.skipped += 1
                self.first_skipped = self.first_skipped or (number, line)
            return
        if run is not None and got.unit != run.unit:
            self._cut(m, rest, run)
        if self.strict:
            self._strict(got, number, line)
        else:
            self._log(got, number, line)

    def _command(self, text: str, number: int) -> None:
        """What the command after a prompt prints: its lines are read as it prints them."""
        m = _COMMAND_NAME.match(text)
        command = None
        if m is not None and ";" not in text:  # several commands: their outputs follow one another
            name = m[1]
            command = self.last_d if name == "d" else _COMMANDS.get(name)
            if name != "d":
                self.last_d = command
        self.command, self.command_line = command, number

    @staticmethod
    def _pointee(m, run: _Run):
        """ddp/dqp/dpp without its command: a first line of two values, and the next line one value on, inside
        it (no display command prints lines that overlap): each line is a pointer and the value it points to,
        which is not the memory after the pointer.  The dump keeps the pointers; None for any other line."""
        size = _UNIT_SIZE[run.unit]
        address = m["address"].replace("`", "")
        if run.lines != 1 or run.width != 2 or size < 4 or len(address) // 2 != run.address_bytes or \
                int(address, 16) != run.address + size:
            return None
        run.pointee = _COMMANDS["dqp" if size == 8 else "ddp"]
        run.parts, run.expected, run.width = [run.parts[0][:size]], run.address + size, 1
        run.line_bytes = run.last_size = size
        run.bulk = None
        return run.pointee

    def _cut(self, m, rest: str, run) -> None:
        """Refuse a line that continues the dump but ends inside one of its values: text cut there, which read
        at another width would put other bytes at the address."""
        if run is None:
            return
        address = m["address"].replace("`", "")
        if len(address) // 2 != run.address_bytes or int(address, 16) != run.expected or not _cut_in(rest, run.unit):
            return
        number = self.number
        raise WinDbgTextError(f"{self.origin} line {number}: {_clip(rest)} continues the {run.unit} dump of line "
                              f"{run.first} but ends inside {_UNIT_WORD[run.unit]}: the line was cut (a value read "
                              f"at another width would put other bytes at {_windbg_address(run.expected)}); keep its "
                              f"lines whole", number, m.string)

    def _not_bytes(self, number: int, line: str) -> None:
        self.not_bytes += 1
        self.first_not_bytes = self.first_not_bytes or (number, line)

    def _log(self, got: _Line, number: int, line: str) -> None:
        run = self.run
        if got.data:
            if run is not None and run.follows(got):
                run.width, run.width_line = _check_width(got, run.width, run.width_line, number, line, self.origin)
                run.add(got, number)
            else:
                self.end_run()
                self.run = _Run(got, number)
                self.run.bulk = _Shape.of(line, self.eol, got)
                self.retyped_reader = None  # a dump line: this is a log, not one retyped dump
        if got.cut:
            self.unreadable += 1
            self.first_unreadable = self.first_unreadable or (number, line)
            self.end_run()

    def _strict(self, got: _Line, number: int, line: str) -> None:
        run, origin = self.run, self.origin
        if run is None:
            self.run = _Run(got, number)
            self.run.bulk = _Shape.of(line, self.eol, got)
            return
        if got.unit != run.unit:
            raise WinDbgTextError(f"{origin} line {number}: {got.unit}-style values after {run.unit}-style values "
                                  f"on line {run.first}; paste the output of one memory command", number, line)
        run.width, run.width_line = _check_width(got, run.width, run.width_line, number, line, origin)
        if got.address != run.expected:
            prev_address = run.expected - run.last_size
            raise WinDbgTextError(f"{origin} line {number}: address {_windbg_address(got.address)} does not follow "
                                  f"line {run.last} ({_windbg_address(prev_address)} + {run.last_size} bytes = "
                                  f"{_windbg_address(run.expected)}); the dump must be one contiguous range from "
                                  f"one memory command", number, line)
        if got.address_bytes != run.address_bytes:
            raise WinDbgTextError(f"{origin} line {number}: a {2 * got.address_bytes}-digit address after "
                                  f"{2 * run.address_bytes}-digit ones; paste the output of one memory command",
                                  number, line)
        run.add(got, number)

    def end_run(self) -> None:
        if self.run is not None:
            self.dumps.append(self.run.dump())
            self.run = None


def _check_width(got: _Line, width, width_line, number: int, line: str, origin: str) -> tuple:
    """(width, its line) of a dump after ``got``: WinDbg prints every line as wide as the first (the last
    may be shorter), so a wider one holds something that is not data."""
    values = got.values
    if width is None:
        return values, number
    if values > width:
        raise WinDbgTextError(f"{origin} line {number}: {values} values after {width} on line {width_line}; "
                              f"a dump's lines are all as wide as its first, so the last group is not data "
                              f"(a character column?): paste the output of one memory command unchanged",
                              number, line)
    return width, width_line


def _scan(text, origin: str, strict: bool):
    _check_text(text, origin)
    scanner = _Scanner(origin, strict)
    if isinstance(text, str):
        scanner.feed(text[1:] if text.startswith("\ufeff") else text, True)
        return scanner.finish()
    pending, first = [], True  # pieces of a line not yet ended (one line may span many pieces)
    try:
        for piece in text:
            if not isinstance(piece, str):
                raise DecodeError(f"WinDbg text must be str pieces, not {type(piece).__name__}")
            if first and piece:
                piece, first = (piece[1:] if piece.startswith("\ufeff") else piece), False
            pending.append(piece)
            if "\n" in piece or "\r" in piece[:-1]:
                rest = scanner.feed("".join(pending), False)
                pending = [rest] if rest else []
    finally:
        if isinstance(text, GeneratorType):  # a file's pieces: closed now, even when a line is refused
            text.close()
    scanner.feed("".join(pending), True)
    return scanner.finish()


def parse_windbg(text: str, origin: str = "WinDbg text") -> Memory:
    """Bytes from the output of one memory command (WINDBG_COMMANDS: db, dw, dW, dd, dc, dq, dp, dds, dqs, dps,
    dda, dqa, dpa, ddu, dqu, dpu, ddp, dqp, dpp, dyb, dyd), address columns included, at any width (``/c N``).

    Prompt lines (``kd>``, ``0: kd:x86>``, ``0:000>`` ...) and blank lines are skipped; a prompt's command
    says how the lines after it are printed.  The lines must be one contiguous range printed in one unit:
    each line starts where the previous one's bytes end.  ``dt``/``dx`` output is refused with a hint, and so
    is dD, df, da and du output (decimal numbers or characters are not the bytes exactly).  A session log of
    several dumps and other output is ``scan_log``'s (``memory.WinDbgLog``).
    """
    dump = _scan(text, origin, True)
    return Memory(dump.data, dump.address, origin, dump.address_bytes)


def scan_log(text, origin: str = "WinDbg text") -> LogScan:
    """Every memory dump in a WinDbg text: a session log (``.logopen``), a script's output or one pasted dump.
    ``text``: a str, or an iterator of str pieces (a file read a chunk at a time; lines may span pieces).

    A dump line is what a memory command prints: the address column, two spaces, the values (read by the same
    line reader as ``parse_windbg``, in the layout of the command the prompt before it shows, else by its own
    shape).  Consecutive dump lines, each starting where the last ended, in one unit, are one dump; anything
    else ends it.  Prompts, command lines, blank lines and the bit-number headers of dyb/dyd are passed over;
    any other line (``Breakpoint 0 hit``, ``Opened log file``, ``dt`` output, disassembly, whose address is
    followed by one space) is skipped and counted, and so are the lines of dD, df, da and du (decimal numbers
    or characters).  A dump line whose values are damaged, or that continues a dump but ends inside one of its
    values (a cut line), is refused naming it; values shown as ``??`` end their line (the readable ones before
    them are kept).  A text with no such dump line but lines of one space after the address is one retyped
    dump, read as ``parse_windbg`` reads it.  Lines end at \\n, \\r\\n and \\r only.
    """
    return _scan(text, origin, False)


def line_holding(text, dump: Dump, address: int) -> int:
    """The number of the line of ``dump`` (from ``scan_log``) that shows the byte at ``address`` (``text`` is
    not read again: the dump knows its lines)."""
    if dump.marks:
        k = bisect_right([a for a, _ in dump.marks], address) - 1
        return dump.marks[max(k, 0)][1]
    if dump.line_bytes:
        return min(dump.first_line + (address - dump.address) // dump.line_bytes, dump.last_line)
    return dump.first_line


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
