"""WinDbg's display commands as the debugger prints them: the oracle of the round-trip tests, written from
WinDbg's pages, not from the package's reader.

The pages ("d, da, db, dc, dd, dD, df, dp, dq, du, dw, dW, dyb, dyd (Display Memory)", "dds, dps, dqs (Display
Words and Symbols)", "dda, ddp, ddu, dpa, dpp, dpu, dqa, dqp, dqu (Display Referenced Memory)") say: each line
is the address of its first byte, then the memory there; db shows up to 16 byte values, the eighth and ninth
separated by a hyphen, "immediately followed by the corresponding ASCII values", nonprintable characters as
periods; dc shows up to eight... word values "and their ASCII equivalent" (as WinDbg prints it: four dwords a
line); dw and dW show "up to eight hexadecimal word values", dW with ASCII; dd four dwords, dq two quad-words;
dp is dd or dq as the target is 32-bit or 64-bit; dD and df print double- and single-precision floating-point
numbers; da and du print characters, "up to 48 characters" a line, until the first null; dyb and dyd print
"binary values and byte values" / "double-word values"; dds/dqs/dps print each value with the symbol it points
into; d*a, d*u and d*p print each pointer and, after it, the memory it points to (as characters, or a value).

What the pages leave unsaid and WinDbg's own output shows, as the package's session sample and tests have
it (a [reading] of ours, not a page's words): two spaces after the address column and before a character
column; a 64-bit address or qword as two 8-digit halves joined by a backtick; the last, shorter line of
db/dc/dW padded so its character column lines up; dyb/dyd's header of bit numbers above their lines, each
byte's (dword's) bits most significant first, then two spaces and the same bytes (dwords) in hex; dD/df's
numbers right-aligned in wide columns; unreadable memory as ``??`` digits.
"""
from __future__ import annotations

import random
import struct

SIZES = {"db": 1, "dw": 2, "dW": 2, "dd": 4, "dc": 4, "dq": 8, "dyb": 1, "dyd": 4}
COLUMNS = {"db": 16, "dw": 8, "dW": 8, "dd": 4, "dc": 4, "dq": 2, "dyb": 4, "dyd": 1, "dD": 3, "df": 4}
WITH_CHARACTERS = {"db", "dW", "dc"}
VALUES = ("db", "dw", "dW", "dd", "dc", "dq", "dp")
SYMBOLS = ("dds", "dqs", "dps")
STRINGS = ("dda", "ddu", "dqa", "dqu", "dpa", "dpu")
POINTEES = ("ddp", "dqp", "dpp")
BINARY = ("dyb", "dyd")
NOT_BYTES = ("dD", "df", "da", "du")  # numbers in decimal or characters: not the memory's bytes exactly
ALL = VALUES + SYMBOLS + STRINGS + POINTEES + BINARY + NOT_BYTES


def address_text(address: int, width: int) -> str:
    """An address column: 8 digits for a 32-bit target, 16 with a backtick for a 64-bit one."""
    return f"{address:08x}" if width == 4 else f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}"


def hex_value(value: int, size: int) -> str:
    return f"{value >> 32:08x}`{value & 0xFFFFFFFF:08x}" if size == 8 else f"{value:0{2 * size}x}"


def characters(data: bytes) -> str:
    return "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in data)


def unit_of(command: str, width: int) -> str:
    """The values command a pointer-sized or symbol command prints like."""
    if command in ("dp", "dps", "dpa", "dpu", "dpp"):
        return "dq" if width == 8 else "dd"
    if command in ("dds", "dda", "ddu", "ddp"):
        return "dd"
    if command in ("dqs", "dqa", "dqu", "dqp"):
        return "dq"
    return command


def lines(command: str, address: int, data: bytes, width: int, rng: random.Random, *, columns: int | None = None,
          unreadable: int | None = None) -> list:
    """``data`` at ``address`` as ``command`` prints it (``width``: the target's pointer size, 4 or 8), without
    its prompt line.  ``columns``: /c; ``unreadable``: the byte from which memory is shown as ?? (the exact
    commands)."""
    a = lambda at: address_text(at, width)  # noqa: E731
    unit = unit_of(command, width)
    if command in NOT_BYTES:
        return _not_bytes(command, address, data, width)
    if command in BINARY:
        return _binary(command, address, data, width, columns or COLUMNS[command])
    size = SIZES[unit]
    if command in SYMBOLS + STRINGS + POINTEES:
        out = []
        for i in range(0, len(data), size):
            value = int.from_bytes(data[i:i + size], "little")
            line = f"{a(address + i)}  {hex_value(value, size)}"
            if command in SYMBOLS and rng.random() < 0.5:
                line += " " + rng.choice(["nt!KiSystemStartup+0x10", "dxgkrnl!DXGADAPTER::Foo", "mydriver+0x5000"])
            elif command in STRINGS:
                line += ' "' + "".join(rng.choice('ab "\\  %!.0123456789abcdef`') for _ in range(rng.randrange(30))) + '"'
            elif command in POINTEES:
                line += " " + hex_value(rng.getrandbits(8 * size), size)
                if rng.random() < 0.3:
                    line += " nt!Foo+0x10"
            out.append(line)
        return out
    per = columns or COLUMNS[unit]
    out = []
    for at in range(0, len(data), per * size):
        row = data[at:at + per * size]
        texts = []
        for i in range(0, len(row), size):
            if unreadable is not None and at + i >= unreadable:
                texts.append("????????`????????" if size == 8 else "?" * (2 * size))
            else:
                texts.append(hex_value(int.from_bytes(row[i:i + size], "little"), size))
        if unit == "db":
            values = " ".join(texts[:8]) + ("-" if len(texts) > 8 else "") + " ".join(texts[8:])
        else:
            values = " ".join(texts)
        line = f"{a(address + at)}  {values}"
        if command in WITH_CHARACTERS:
            full = per * (2 * size + 1) - 1
            shown = characters(row) if unreadable is None else \
                characters(row[:max(0, unreadable - at)]) + "?" * max(0, len(row) - max(0, unreadable - at))
            line = f"{a(address + at)}  {values.ljust(full)}  {shown}"
        out.append(line)
    return out


def _binary(command: str, address: int, data: bytes, width: int, per: int) -> list:
    size = SIZES[command]
    if command == "dyb":
        out = [" " * 10 + " ".join(["76543210"] * per), " " * 10 + " ".join(["--------"] * per)]
    else:
        out = ["           3          2          1          0", "          10987654 32109876 54321098 76543210",
               "          -------- -------- -------- --------"]
    for at in range(0, len(data), per * size):
        row = data[at:at + per * size]
        words = [int.from_bytes(row[i:i + size], "little") for i in range(0, len(row), size)]
        bits = " ".join(" ".join(f"{w:0{8 * size}b}"[k:k + 8] for k in range(0, 8 * size, 8)) for w in words)
        out.append(f"{address_text(address + at, width)}  {bits}  {' '.join(hex_value(w, size) for w in words)}")
    return out


def _not_bytes(command: str, address: int, data: bytes, width: int) -> list:
    out = []
    if command in ("dD", "df"):
        size, code, field = (8, "<d", 22) if command == "dD" else (4, "<f", 15)
        per = COLUMNS[command]
        for at in range(0, len(data) - len(data) % size, per * size):
            row = data[at:at + per * size]
            numbers = [struct.unpack(code, row[i:i + size])[0] for i in range(0, len(row), size)]
            out.append(address_text(address + at, width) + " " +
                       "".join(f"{n:.{15 if size == 8 else 7}g}".rjust(field) for n in numbers))
        return out
    size = 1 if command == "da" else 2
    text = data.decode("latin-1") if size == 1 else data[:len(data) - len(data) % 2].decode("utf-16-le", "replace")
    text = text.split("\0")[0]
    for at in range(0, max(len(text), 1), 48):
        shown = "".join(c if c.isprintable() and ord(c) < 0x7F else "." for c in text[at:at + 48])
        out.append(f'{address_text(address + at * size, width)}  "{shown}"')
    return out


def prompt(command: str, address: int, length: int, width: int) -> str:
    return f"0: kd> {command} {address_text(address, width)} L{length:x}"
