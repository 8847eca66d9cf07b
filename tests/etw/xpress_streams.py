"""Plain LZ77 streams made from items, what they make, and the decoders' answers to compare: shared by
test_xpress.py and test_xpress_native.py."""
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
