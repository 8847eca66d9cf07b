"""The XPRESS decoder of compressed .etl buffers against a byte-by-byte reading of MS-XCA 2.4, on
seeded random streams that use every length form (overlapping matches too), and a stream that
expands from 40 bytes to 16 MB holding no more than its output."""
from __future__ import annotations

import random
import struct
import tracemalloc

import pytest

from d3dkmddi_py.etw.xpress import XpressError, decompress
from d3dkmddi_py.samples.etl_build import SMALLEST_EVENT, repeat_stream


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


def test_random_streams_decode_as_the_format_says():
    rng = random.Random(20261201)
    for _ in range(300):
        items = random_items(rng)
        want = reference(items)
        assert bytes(decompress(encode(items), len(want))) == want


def test_decompress_appends_to_the_bytes_it_is_given():
    items = [1, 2, 3, (3, 30), 9]
    out = decompress(encode(items), 34, bytearray(b"head"))
    assert bytes(out) == b"head" + reference(items)


def test_a_match_before_the_output_is_refused_even_after_a_prefix():
    with pytest.raises(XpressError, match="before the start of the output"):
        decompress(encode([7, (2, 5)]), 6, bytearray(b"prefix"))


def test_an_expanding_stream_holds_no_more_than_its_output():
    """40 bytes that make 16 MB (one 16-byte event and one match): the copy doubles up to a megabyte,
    so the peak is the output and one slice (the decoder before held twice the output)."""
    total = 1 << 24
    stream = repeat_stream(SMALLEST_EVENT, total)
    assert len(stream) < 48
    tracemalloc.start()
    try:
        out = decompress(stream, total)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) == total and out[:16] == SMALLEST_EVENT and out[-16:] == SMALLEST_EVENT
    assert peak < 1.2 * total, peak
