"""The XPRESS decoder of compressed .etl buffers against a byte-by-byte reading of MS-XCA 2.4, on
seeded random streams that use every length form (overlapping matches too), and a stream that
expands from 40 bytes to 16 MB holding no more than its output.  Its fast path against its exact
path alone: every real compressed buffer, generated streams and damaged ones (the same bytes or the
same error), and the edges the fast path hands over.  ``decompress`` (libfwnt first, where installed)
and the Python reading alone are both held to the exact path; test_xpress_native.py has libfwnt's own."""
from __future__ import annotations

import random
import struct
import tracemalloc
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from d3dkmddi_py.etw.readers import xpress
from d3dkmddi_py.etw.readers.xpress import XpressError, decompress
from d3dkmddi_py.samples.etl_build import SMALLEST_EVENT, repeat_stream

from . import etl_files
from .xpress_streams import answer, encode, exact_only, python_only, random_items, reference


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
    xpress._short_matches()  # the process's table, made once: not what a call holds
    tracemalloc.start()
    try:
        out = decompress(stream, total)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) == total and out[:16] == SMALLEST_EVENT and out[-16:] == SMALLEST_EVENT
    assert peak < 1.2 * total, peak


# ------------------------------------------------------------------ the fast path against the exact one
@pytest.mark.parametrize("name", [n for n in etl_files.NAMES if etl_files.compressed_streams(etl_files.read(n))])
def test_every_real_compressed_buffer_decodes_as_the_exact_path_alone(name):
    """net.4.5.2.x64 (359 buffers), SelfDescribingSingleEvent (2): the same bytes both ways, with and
    without bytes before the output."""
    for stream, size in etl_files.compressed_streams(etl_files.read(name)):
        want = bytes(exact_only(stream, size))
        for decode in (decompress, python_only):
            assert bytes(decode(stream, size)) == want
            assert bytes(decode(stream, size, bytearray(b"header"))) == b"header" + want


def test_the_fast_path_takes_almost_every_group_of_a_real_trace():
    """Of net.4.5.2.x64's 86,185 flag words, the exact path decodes only those near a buffer's end
    (652, about 2 a buffer): were it to take more, the decoder would be right but as slow as before."""
    streams = etl_files.compressed_streams(etl_files.read("net.4.5.2.x64"))
    exact = mock.Mock(side_effect=xpress._exact)
    with mock.patch.object(xpress, "_exact", exact):
        for stream, size in streams:
            python_only(stream, size)
    assert exact.call_count <= 3 * len(streams), exact.call_count


@st.composite
def streams(draw):
    """Items of every length form (nibble, byte, 16 and 32 bits; the nibble shared by two matches),
    overlapping matches and matches reaching as far back as the output allows."""
    items, made = [], 0
    for _ in range(draw(st.integers(1, 200))):
        kind = draw(st.sampled_from(["literal"] * 6 + ["short"] * 2 + ["nibble"] * 2 + ["byte", "wide", "overlap"]))
        if made == 0 or kind == "literal":
            items.append(draw(st.integers(0, 255)))
            made += 1
            continue
        distance = draw(st.one_of(st.integers(1, min(made, 8192)), st.just(min(made, 8192))))
        length = {"short": lambda: draw(st.integers(3, 9)), "nibble": lambda: draw(st.integers(10, 24)),
                  "byte": lambda: draw(st.integers(25, 279)),
                  "wide": lambda: draw(st.sampled_from([280, 281, 1000, 65538, 65539])),  # 16 and 32 bits
                  "overlap": lambda: draw(st.integers(max(3, distance + 1), 3 * distance + 10))}[kind]()
        items.append((distance, length))
        made += length
    return items


@settings(max_examples=300, deadline=None)
@given(streams(), st.sampled_from([b"", b"prefix"]))
def test_generated_streams_decode_as_the_format_says_on_both_paths(items, prefix):
    want = reference(items)
    stream = encode(items)
    assert bytes(decompress(stream, len(want), bytearray(prefix))) == prefix + want
    assert bytes(python_only(stream, len(want), bytearray(prefix))) == prefix + want
    assert bytes(exact_only(stream, len(want), bytearray(prefix))) == prefix + want


@settings(max_examples=400, deadline=None)
@given(streams(), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=4),
       st.sampled_from(["flip", "cut", "size"]), st.integers(-300, 300))
def test_a_damaged_stream_gives_the_exact_paths_answer(items, hits, how, change):
    """Bytes changed, the stream cut, or another size asked for: the same bytes, or the same error
    naming the same position, as the exact path alone."""
    stream, size = bytearray(encode(items)), sum(1 if isinstance(item, int) else item[1] for item in items)
    if how == "flip":
        for at, value in hits:
            stream[at % len(stream)] = value
    elif how == "cut":
        del stream[hits[0][0] % len(stream):]
    else:
        size = max(0, size + change)
    want = answer(exact_only, bytes(stream), size)
    assert answer(decompress, bytes(stream), size) == want
    assert answer(python_only, bytes(stream), size) == want


def test_a_match_reaching_before_the_start_is_refused_in_a_later_group():
    """A match in the fourth flag word's group (one the fast path takes) reaching 1 byte too far back,
    with bytes before the output (which it must not read): refused as the exact path refuses it, not
    taken from those bytes."""
    items = [k & 255 for k in range(100)] + [(101, 20)] + [k & 255 for k in range(1000)]
    stream = encode(items)
    for prefix in (b"", bytes(300)):
        with pytest.raises(XpressError, match="a match at byte 119 reaches 101 bytes back, before the start"):
            decompress(stream, 1120, bytearray(prefix))


def test_a_final_match_bit_without_a_match_ends_the_stream():
    """The flag word's next bit after the last item set, and no bytes for it: the end marker."""
    items = list(range(200))
    stream = bytearray(encode(items))
    last_flags = len(stream) - 200 % 32 - 4
    stream[last_flags:last_flags + 4] = struct.pack("<I", 1 << (31 - 200 % 32))
    assert bytes(decompress(bytes(stream), 200)) == bytes(range(200))


def test_a_wide_match_past_the_expected_size_is_refused_before_it_is_copied():
    """A match of 2 GB in a group the fast path takes: refused from its length, holding nothing."""
    items = list(range(200)) + [(50, 1 << 31)] + list(range(200))
    stream = encode(items)
    xpress._short_matches()  # the process's table, made once: not what a call holds
    tracemalloc.start()
    try:
        with pytest.raises(XpressError, match=r"a match at byte \d+ makes 2147483848 bytes, past the 500 expected"):
            decompress(stream, 500)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_an_expanding_match_in_a_fast_group_holds_no_more_than_its_output():
    """A 16 MB match of distance 1 in the fourth flag word's group, which the fast path takes: copied
    in doubling slices as the exact path copies it, so the peak is the output (as it grows) and one slice."""
    total = 1 << 24
    items = [k & 255 for k in range(100)] + [(1, total)] + [k & 255 for k in range(100)]
    stream = encode(items)
    exact = mock.Mock(side_effect=xpress._exact)
    xpress._short_matches()  # the process's table, made once: not what a call holds
    tracemalloc.start()
    try:
        with mock.patch.object(xpress, "_exact", exact):
            out = python_only(stream, total + 200)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out[99:total + 100] == bytes([99]) * (total + 1) and out[-100:] == bytes(range(100))
    assert 3 * 36 not in [c.args[2] for c in exact.call_args_list]  # that group's flag word: not the exact path's
    assert peak < 1.2 * total, peak  # as the exact path's bound above: the output as it grows, and one slice
