"""Plain LZ77 streams made from items, what they make, the decoders' answers to compare, and streams
aimed at the places where libfwnt reads the format otherwise: shared by test_xpress.py and
test_xpress_native.py."""
from __future__ import annotations

import random
import struct
from unittest import mock

from d3dkmddi_py.etw.readers import xpress
from d3dkmddi_py.etw.readers.xpress import XpressError

python_only = xpress._python_decompress  # the fast path and the exact one, without libfwnt


def encode(items) -> bytes:
    """A plain LZ77 stream of ``items``: ints (literal bytes) and (distance, length) matches."""
    out, flags, count, flag_at, half = bytearray(), 0, 0, None, None
    for item in items:
        if count == 0:
            flag_at, flags = len(out), 0
            out += bytes(4)
        count += 1
        if isinstance(item, int):
            out.append(item)
        else:
            distance, length = item
            flags |= 1 << (32 - count)
            out += struct.pack("<H", (distance - 1) << 3 | min(length - 3, 7))
            if length - 3 >= 7:
                nibble = min(length - 10, 15)
                if half is None:
                    half = len(out)
                    out.append(nibble)
                else:
                    out[half] |= nibble << 4
                    half = None
                if nibble == 15:
                    out.append(min(length - 25, 255))
                    if length - 25 >= 255:  # then 16 bits, or 0 and 32 bits
                        wide = length - 3 >= 1 << 16
                        out += struct.pack("<HI", 0, length - 3) if wide else struct.pack("<H", length - 3)
        struct.pack_into("<I", out, flag_at, flags)
        if count == 32:
            count = 0
    return bytes(out)


def reference(items) -> bytes:
    """What ``items`` make, one byte at a time."""
    out = bytearray()
    for item in items:
        if isinstance(item, int):
            out.append(item)
        else:
            distance, length = item
            for _ in range(length):
                out.append(out[-distance])
    return bytes(out)


def random_items(rng: random.Random) -> list:
    items, made = [], 0
    for _ in range(rng.randint(1, 120)):
        if made == 0 or rng.random() < 0.4:
            items.append(rng.randrange(256))
            made += 1
            continue
        distance = rng.randint(1, min(made, 8191))
        length = rng.choice([rng.randint(3, 9), rng.randint(10, 24), rng.randint(25, 279), rng.randint(280, 3000),
                             rng.randint(1, 4) * distance + rng.randint(0, distance)])  # overlapping ones too
        items.append((distance, max(3, length)))
        made += max(3, length)
    return items


def exact_only(src: bytes, size: int, out: bytearray | None = None) -> bytearray:
    """The stream decoded by the exact path alone (item by item, every check): no group is fast, no libfwnt."""
    with mock.patch.object(xpress, "_GROUP_IN", 1 << 62):
        return python_only(src, size, out)


def answer(decode, src: bytes, size: int, prefix: bytes = b"") -> tuple:
    """("bytes", what it made) or ("error", the message)."""
    try:
        return "bytes", bytes(decode(src, size, bytearray(prefix)))
    except XpressError as exc:
        return "error", str(exc)


def escapes(items) -> list:
    """Where ``encode(items)`` puts each byte 255 that escapes a length to 16 bits (the item's last bytes:
    255 and 16 bits, or 255, 16 zero bits and 32)."""
    stream, found = encode(items), []
    for k, item in enumerate(items):
        if isinstance(item, tuple) and item[1] >= 280:
            found.append(len(encode(items[:k + 1])) - (7 if item[1] - 3 >= 1 << 16 else 3))
    assert all(stream[at] == 255 for at in found)
    return found


def made_by(items) -> int:
    """The bytes ``items`` make, whether or not their matches reach into the output."""
    return sum(1 if isinstance(item, int) else item[1] for item in items)


def escaped_stream(rng: random.Random, value: int, *, wide: int | None = None, second: bool = False) -> tuple:
    """(stream, the sizes to ask for) of random items around one match whose length is escaped to 16 bits
    set to ``value``, and with ``wide`` the 32 bits after a 16-bit 0 set to it.  With ``second`` the match
    is the second of a pair (its nibble in the high half of the byte an earlier long match took), else
    the first (it takes a nibble byte).  The sizes: what the items make, what the escape makes as MS-XCA
    reads it (value + 3, or wide + 3 after a 0), and any size within 30 bytes of those."""
    before = [rng.randrange(256) for _ in range(rng.randint(40, 300))]
    if second:
        before.append((rng.randint(1, 40), rng.randint(10, 24)))  # a long match taking the nibble byte
        before += [rng.randrange(256) for _ in range(rng.randint(0, 40))]
    length = 70_000 if wide is not None else rng.randint(280, 3000)
    items = before + [(rng.randint(1, 40), length)] + [rng.randrange(256) for _ in range(rng.randint(0, 200))]
    stream = bytearray(encode(items))
    (at,) = escapes(items)
    struct.pack_into("<H", stream, at + 1, value)
    if wide is not None:
        struct.pack_into("<I", stream, at + 3, wide)
    made = made_by(items)
    read = (wide if wide is not None and value == 0 else value) + 3
    sizes = {made, made - length + read}
    sizes |= {s + rng.randint(-30, 30) for s in tuple(sizes)}
    return bytes(stream), sorted(s for s in sizes if s > 0)
