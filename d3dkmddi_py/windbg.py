"""WinDbg text and the numbers users type: memory dumps (db/dw/dd/dq/dp), hex bytes, integers.

Pure text parsing, no files: the result is a ``Memory`` (bytes plus the debuggee address of the
first byte).  Errors are ``DecodeError`` / ``WinDbgTextError`` with a one-line message.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import DecodeError, WinDbgTextError


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class Memory:
    """Bytes to decode, with where they came from.

    ``address`` is the debuggee address of ``data[0]`` when the bytes came from a
    WinDbg dump, else None.  ``origin`` names the source in messages.
    """

    data: bytes
    address: int | None = None
    origin: str = "data"


# ------------------------------------------------------------------ numbers and hex
def parse_int(text: str, what: str = "value") -> int:
    """An integer as a user types it: 0x485, 0x00000000`00000485 (WinDbg), 1157, 0b101, 1_000."""
    cleaned = text.strip().replace("`", "").replace("_", "")
    try:
        if re.fullmatch(r"[+-]?[0-9]+", cleaned):
            return int(cleaned, 10)  # leading zeros are fine here, unlike int(x, 0)
        return int(cleaned, 0)
    except ValueError:
        raise DecodeError(f"{what} {text.strip()!r} is not an integer (write 0x485, 1157 or 0b101)") from None


_HEX_SEPARATORS = re.compile(r"[\s:,\-]+")


def parse_hex(text: str) -> bytes:
    """Bytes in memory order from hex text: ``85 04 00 00``, ``85040000``, ``85:04:00:00``."""
    body = _HEX_SEPARATORS.sub(" ", text.strip())
    if not body:
        raise DecodeError("empty hex: give the bytes in memory order, e.g. '85 04 00 00'")
    out = bytearray()
    for group_start, group in _groups(body):
        if group[:2] in ("0x", "0X") and len(group) > 2:
            raise DecodeError(f"bad hex {group!r} at position {group_start + 1}: bytes are written without 0x "
                              f"(a 0x number is an integer value; give it alone, e.g. 0x485)")
        for i, ch in enumerate(group):
            if ch not in "0123456789abcdefABCDEF":
                raise DecodeError(f"bad hex: {ch!r} at position {group_start + i + 1} is not a hex digit "
                                  f"(in {group!r})")
        if len(group) % 2:
            raise DecodeError(f"odd-length hex: {group!r} has {len(group)} digits; each byte is two digits "
                              f"(pad with a leading 0, e.g. '0{group}')")
        out += bytes.fromhex(group)
    return bytes(out)


def _groups(body: str):
    pos = 0
    for part in body.split(" "):
        yield pos, part
        pos += len(part) + 1


# ------------------------------------------------------------------ WinDbg memory dumps
_ADDRESS = r"(?P<address>[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?)"
_MEMORY_LINE = re.compile(r"^\s*" + _ADDRESS + r"(?P<rest>(?:\s.*)?)$")
_PROMPT = re.compile(r"^\s*(?:\d+:\s*kd>|\d+:\d+(?::[0-9a-fA-Fx]+)?>|kd>)")
_DT_LINE = re.compile(r"^\s*\+0x[0-9a-fA-F]+\s+\S+\s*:")
_DX_LINE = re.compile(r"^\s*\[\+0x[0-9a-fA-F]+")
# unit name -> (bytes per unit, hex digits, most units a line holds)
_UNITS = {"db": (1, 2, 16), "dw": (2, 4, 8), "dd": (4, 8, 4), "dq": (8, 16, 2)}
_TOKEN = {
    "db": re.compile(r"[0-9a-fA-F?]{2}"),
    "dw": re.compile(r"[0-9a-fA-F?]{4}"),
    "dd": re.compile(r"[0-9a-fA-F?]{8}"),
    "dq": re.compile(r"[0-9a-fA-F?]{8}`[0-9a-fA-F?]{8}|[0-9a-fA-F?]{16}"),
}
_DT_HINT = ("decode needs the raw bytes: run `db <address> L<size>` (or dd/dq/dp) in WinDbg and paste that; "
            "`d3dkmddi layout <type>` prints the layout dt shows")


def looks_like_windbg(text: str) -> bool:
    """True when text has the shape of WinDbg output (a memory line, a prompt, or dt/dx fields)."""
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


def parse_windbg(text: str, origin: str = "WinDbg text") -> Memory:
    """Bytes from the output of ``db``, ``dw``, ``dd``/``dc``, ``dq`` or ``dp``, address columns included.

    Prompt lines and blank lines are skipped.  Lines must be one contiguous range
    printed in one unit; ``dt``/``dx`` output is refused with a hint.
    """
    if not isinstance(text, str):
        raise DecodeError(f"WinDbg text must be str, not {type(text).__name__}")
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if _DT_LINE.match(line) or _DX_LINE.match(line):
            raise WinDbgTextError(f"{origin} is `dt`/`dx` output (line {number}: {_clip(line)}), not a memory "
                                  f"dump; " + _DT_HINT, number, line)
    out = bytearray()
    start = expected = None
    unit = unit_line = None
    for number, line in enumerate(lines, 1):
        if not line.strip() or _PROMPT.match(line):
            continue
        m = _MEMORY_LINE.match(line)
        if not m:
            raise WinDbgTextError(f"{origin} line {number}: {_clip(line)} does not start with an address column "
                                  f"(expected e.g. 'fffff801`2a3b4000  85 04 00 00 ...')", number, line)
        address = int(m["address"].replace("`", ""), 16)
        rest = m["rest"]
        if not rest.strip():
            raise WinDbgTextError(f"{origin} line {number}: address {m['address']} has no values after it",
                                  number, line)
        line_unit = _unit_of(rest.strip())
        if line_unit is None:
            raise WinDbgTextError(f"{origin} line {number}: {rest.split()[0]!r} is not a hex byte, word, "
                                  f"dword or qword as db/dw/dd/dq print them", number, line)
        if unit is None:
            unit, unit_line = line_unit, number
        elif line_unit != unit:
            raise WinDbgTextError(f"{origin} line {number}: {line_unit}-style values after {unit}-style values "
                                  f"on line {unit_line}; paste the output of one memory command", number, line)
        data = _line_values(rest, unit, number, line, origin)
        if expected is not None and address != expected:
            raise WinDbgTextError(f"{origin} line {number}: address {_windbg_address(address)} does not follow "
                                  f"the previous line (expected {_windbg_address(expected)}); the dump must be "
                                  f"one contiguous range", number, line)
        if start is None:
            start = address
        out += data
        expected = address + len(data)
    if start is None:
        raise WinDbgTextError(f"{origin} has no memory lines; paste the output of db, dd, dq or dp "
                              f"(address column and values)")
    return Memory(bytes(out), start, origin)


def _line_values(rest: str, unit: str, number: int, line: str, origin: str) -> bytes:
    """The values of one line; stops at a double space (the db/dc character column)."""
    size, digits, most = _UNITS[unit]
    token = _TOKEN[unit]
    pos = len(rest) - len(rest.lstrip())
    values = []
    while len(values) < most:
        m = token.match(rest, pos)
        end = m.end() if m else pos
        if not m or (end < len(rest) and rest[end] not in " -\t"):
            bad = rest[pos:].split()[0] if rest[pos:].split() else ""
            raise WinDbgTextError(f"{origin} line {number}: {bad[:24]!r} at column {pos + len(line) - len(rest) + 1} "
                                  f"is not {_UNIT_WORD[unit]} like the others on the line", number, line)
        text = m.group().replace("`", "")
        if "?" in text:
            raise WinDbgTextError(f"{origin} line {number}: memory shown as {m.group()} was not readable in the "
                                  f"debugger; dump a readable range", number, line)
        values.append(int(text, 16))
        pos = end
        if pos >= len(rest):
            break
        if rest.startswith("  ", pos) or rest[pos] == "\t":
            break  # the character column of db/dc, or trailing spaces
        pos += 1
        if pos >= len(rest) or rest[pos] == " ":
            break
    return b"".join(v.to_bytes(size, "little") for v in values)


_UNIT_WORD = {"db": "a 2-digit byte", "dw": "a 4-digit word", "dd": "an 8-digit dword", "dq": "a 16-digit qword"}


def _clip(line: str) -> str:
    s = line.strip()
    return repr(s if len(s) <= 40 else s[:37] + "...")


def _windbg_address(address: int) -> str:
    if address >> 32:
        return f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}"
    return f"{address:08x}"
