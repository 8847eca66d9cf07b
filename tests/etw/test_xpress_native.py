"""libfwnt's C decoder (the ``fast`` extra) behind ``decompress``: used for every real compressed buffer,
and never where it reads the format otherwise than MS-XCA 2.4 and this package do.  Its source
(libfwnt_lzxpress.c) takes a length escaped to 16 bits as the length itself plus 3, in 16 bits: no check
that it is at least 22, no 32 bits after a 0, and 0xFFFD to 0xFFFF wrap to 0 to 2; it refuses a match of
more than 32,771 bytes.  Each case here holds ``decompress`` to the Python reading's answer, and shows
libfwnt's own so the test would notice the day it changes.

The differential fuzz below (seeded, a fixed number of streams of at most 80 KB each) aims at every
boundary of the escapes and the matches, and requires the package's answer (the same bytes or the same
error) from ``decompress`` with libfwnt and without it; each fuzz also counts the streams libfwnt
alone misreads or refuses, so that it cannot pass without reaching the places it guards."""
from __future__ import annotations

import importlib.util
import random
import struct
import threading
from unittest import mock

import pytest

from d3dkmddi_py.etw.readers import xpress
from d3dkmddi_py.etw.readers.xpress import XpressError, decompress

from ..conftest import require
from . import etl_files
from .xpress_streams import (answer, encode, escaped_stream, escapes, exact_only, made_by, python_only, random_items,
                             reference)


@pytest.fixture
def pyfwnt():
    require(importlib.util.find_spec("pyfwnt") is not None, "libfwnt-python (the fast extra, in the test extra)")
    import pyfwnt
    return pyfwnt


@pytest.fixture
def native_calls(pyfwnt):
    """libfwnt's decoder with its calls counted, in ``decompress``'s hands."""
    spy = mock.Mock(side_effect=pyfwnt.lzxpress_decompress)
    with mock.patch.object(xpress, "_native", spy):
        yield spy


@pytest.fixture
def python_calls():
    """The Python reading with its calls counted."""
    spy = mock.Mock(side_effect=python_only)
    with mock.patch.object(xpress, "_python_decompress", spy):
        yield spy


def test_every_real_compressed_buffer_is_decoded_by_libfwnt_to_the_python_readings_bytes(native_calls, python_calls):
    """net.4.5.2.x64 (359 buffers) and SelfDescribingSingleEvent (2): each one's bytes are libfwnt's and
    the Python reading's; more than half hold a byte 255 and 16 bits libfwnt reads otherwise after a
    long match's token, in none is it an escape (a cut there ends an item), so none is read again here."""
    streams = [s for name in etl_files.NAMES for s in etl_files.compressed_streams(etl_files.read(name))]
    for stream, size in streams:
        assert bytes(decompress(stream, size, bytearray(b"head"))) == b"head" + bytes(python_only(stream, size))
    assert python_calls.call_count == 0 and len(streams) == 361
    held = sum(bool(xpress._odd_escapes(s)) for s, _ in streams)
    assert 100 < held < 300
    assert native_calls.call_count > len(streams) + held  # each stream, and at least one cut for each place


@pytest.mark.parametrize("value", [0, 1, 5, 21, 0xFFFD, 0xFFFE, 0xFFFF])
def test_a_16_bit_length_libfwnt_reads_as_another_is_the_python_readings_answer(pyfwnt, native_calls, python_calls,
                                                                                value):
    """MS-XCA: a 16-bit length below 15 + 7 is an error (0 announces 32 bits), 0xFFFD to 0xFFFF make 65,536
    to 65,538 bytes.  libfwnt copies value + 3 bytes (in 16 bits: 0 to 2 for the last three) and reads on;
    asked for the size it makes, it returns that many bytes.  ``decompress`` gives the Python reading's error."""
    items = [k & 255 for k in range(300)] + [(100, 1000)] + [k & 255 for k in range(300)]
    stream = bytearray(encode(items))
    (at,) = escapes(items)
    struct.pack_into("<H", stream, at + 1, value)
    theirs = pyfwnt.lzxpress_decompress(bytes(stream), 10 ** 5)
    assert len(theirs) == 600 + (value + 3) % (1 << 16)
    assert pyfwnt.lzxpress_decompress(bytes(stream), len(theirs)) == theirs
    for size in (len(theirs), len(reference(items))):
        want = answer(exact_only, bytes(stream), size)
        assert want[0] == "error"
        assert answer(decompress, bytes(stream), size) == want
    assert python_calls.call_count == 2


def test_a_32_bit_length_is_read_on_where_libfwnt_reads_a_length_of_3(pyfwnt, native_calls, python_calls):
    items = [k & 255 for k in range(300)] + [(100, 70_000)] + [k & 255 for k in range(300)]
    stream, want = encode(items), reference(items)
    assert bytes(decompress(stream, len(want))) == want
    assert python_calls.call_count == 1
    try:
        theirs = pyfwnt.lzxpress_decompress(stream, len(want))
    except OSError:
        theirs = None
    assert theirs != want


def test_a_match_longer_than_libfwnt_takes_is_read_here(native_calls, python_calls):
    """libfwnt refuses a match of more than 32,771 bytes (its own limit, not the format's)."""
    items = [k & 255 for k in range(300)] + [(100, 40_000)] + [k & 255 for k in range(300)]
    stream, want = encode(items), reference(items)
    assert bytes(decompress(stream, len(want))) == want
    assert native_calls.call_count == 1 and python_calls.call_count == 1


def test_bytes_255_and_16_bits_libfwnt_reads_otherwise_that_are_no_escape_still_go_to_libfwnt(native_calls,
                                                                                             python_calls):
    """Such bytes as literals after a byte whose 3 bits are 7, and as the nibble byte of a long match
    (distance 32, length 25: token FF 00, nibble byte FF (15 for it and 15 for the next long match),
    length byte 00, then a literal 00), which reads as a token, 255 and 16 bits of 0: a cut ends an item
    at each, so libfwnt's bytes are the answer."""
    items = ([0x07, 5, 0xFF, 0, 0, 1, 0x0F, 9, 0xFF, 0xFF, 0xFF] + [k & 255 for k in range(200)] + [(32, 25), 0]
             + [7] * 20 + [(5, 30)] + [7] * 100)
    stream, want = encode(items), reference(items)
    assert len(xpress._odd_escapes(stream)) == 3
    assert bytes(decompress(stream, len(want))) == want
    assert python_calls.call_count == 0 and native_calls.call_count == 1 + 3  # the stream, and a cut at each


def test_what_libfwnt_refuses_or_reads_to_another_size_is_the_python_readings_answer(native_calls):
    """Cut, with too large a size asked for, with too small a one: the Python reading's error or bytes."""
    items = [k & 255 for k in range(500)] + [(200, 300)] + [k & 255 for k in range(500)]
    stream, size = encode(items), len(reference(items))
    for src, asked in ((stream[:-100], size), (stream, size + 1), (stream, size - 250), (stream[:1], 10),
                       (stream, 0)):
        assert answer(decompress, src, asked) == answer(exact_only, src, asked)


def test_libfwnt_is_given_no_more_than_an_etl_buffer(native_calls):
    """It holds the size asked for at once, and the output is copied: above 16 MB the Python reading
    (whose peak is the output and a slice) decodes alone."""
    items = [k & 255 for k in range(300)] + [(1, xpress._NATIVE_MOST)]
    stream = encode(items)
    out = decompress(stream, 300 + xpress._NATIVE_MOST)
    assert len(out) == 300 + xpress._NATIVE_MOST and native_calls.call_count == 0


def test_sixteen_threads_decoding_at_once_get_the_python_readings_bytes(native_calls):
    """libfwnt lets the interpreter go while it decodes: sixteen threads, the real buffers each."""
    streams = etl_files.compressed_streams(etl_files.read("net.4.5.2.x64"))[:40]
    want = [bytes(python_only(s, n)) for s, n in streams]
    wrong, errors = [], []

    def work():
        try:
            wrong.extend(k for k, (s, n) in enumerate(streams) if bytes(decompress(s, n)) != want[k])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not wrong
    assert native_calls.call_count >= 16 * len(streams)


def test_without_libfwnt_decompress_is_the_python_reading(python_calls):
    items = [k & 255 for k in range(3000)] + [(100, 1000)]
    stream, want = encode(items), reference(items)
    with mock.patch.object(xpress, "_native", False):
        assert bytes(decompress(stream, len(want))) == want
        assert python_calls.call_count == 1
        with pytest.raises(XpressError):
            decompress(stream[:-5], len(want))


# ------------------------------------------------------------------ the differential fuzz
class _Fuzz:
    """Each stream and size through the three readings: the package's own (the exact path), ``decompress``
    with libfwnt and without it; counts what libfwnt alone answers otherwise."""

    def __init__(self, pyfwnt):
        self.native, self.cases, self.misread, self.refused = pyfwnt.lzxpress_decompress, 0, 0, 0

    def check(self, stream: bytes, size: int) -> None:
        want = answer(exact_only, stream, size)
        assert answer(decompress, stream, size) == want, (stream.hex(), size)
        with mock.patch.object(xpress, "_native", False):
            assert answer(decompress, stream, size) == want, (stream.hex(), size)
        try:
            theirs = ("bytes", self.native(stream, size)) if 2 <= len(stream) and size > 0 else None
        except OSError:
            self.refused += 1
        else:
            self.misread += theirs is not None and len(theirs[1]) == size and theirs != want
        self.cases += 1

    def sizes(self, stream: bytes, sizes) -> list:
        """``sizes`` and the size libfwnt's own reading makes (where it is asked, what it returns whole)."""
        try:
            own = len(self.native(stream, 1 << 20))
        except OSError:
            own = None
        return sorted({*sizes, *([own] if own else [])})


@pytest.fixture
def fuzz(pyfwnt):
    return _Fuzz(pyfwnt)


def _escape_fuzz(fuzz, seed: int, values, *, wide=None) -> None:
    rng = random.Random(seed)
    for value in values:
        for second in (False, True):
            for _ in range(3):
                stream, sizes = escaped_stream(rng, value, wide=None if wide is None else rng.choice(wide),
                                               second=second)
                for size in fuzz.sizes(stream, sizes):
                    fuzz.check(stream, size)


def test_fuzz_16_bit_escape_of_0_announcing_32_bits(fuzz):
    """A 16-bit 0 and no 32 bits after it (the next items read as them): libfwnt reads a length of 3."""
    _escape_fuzz(fuzz, 1, [0])
    assert fuzz.misread >= 6, (fuzz.cases, fuzz.misread)


def test_fuzz_16_bit_escapes_1_to_21(fuzz):
    """Below 15 + 7, which MS-XCA refuses: libfwnt copies value + 3 bytes."""
    _escape_fuzz(fuzz, 2, range(1, 22))
    assert fuzz.misread >= 21 * 6, (fuzz.cases, fuzz.misread)


def test_fuzz_16_bit_escape_of_22_the_least_there_is(fuzz):
    """22 makes 25 bytes both ways: libfwnt's bytes are the answer, and no reading differs."""
    _escape_fuzz(fuzz, 3, [22, 23])
    assert fuzz.cases >= 12 and fuzz.misread == 0


def test_fuzz_16_bit_escapes_0xfffd_to_0xffff_that_libfwnt_wraps(fuzz):
    """MS-XCA makes 65,536 to 65,538 bytes; libfwnt adds 3 in 16 bits and makes 0 to 2."""
    _escape_fuzz(fuzz, 4, [0xFFFD, 0xFFFE, 0xFFFF])
    assert fuzz.misread >= 3 * 6, (fuzz.cases, fuzz.misread)


def test_fuzz_16_bit_escapes_past_what_libfwnt_takes(fuzz):
    """0x8000 (32,771 bytes, libfwnt's most) and 0x8001 to 0xFFFC, which it refuses."""
    _escape_fuzz(fuzz, 5, [0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFC])
    assert fuzz.refused >= 3 * 6 and fuzz.misread == 0, (fuzz.cases, fuzz.refused, fuzz.misread)


def test_fuzz_32_bit_escape_of_0x10000(fuzz):
    """A 16-bit 0 and 32 bits of 0x10000 (65,539 bytes): libfwnt reads a length of 3 and the 32 bits as items."""
    _escape_fuzz(fuzz, 6, [0], wide=[0x10000])
    assert fuzz.cases >= 6 and fuzz.misread + fuzz.refused >= 6


def test_fuzz_32_bit_escapes_below_22_at_22_and_past_the_output(fuzz):
    """32 bits of 0, 1, 21 (refused by MS-XCA), 22 and 23 (25 and 26 bytes), 2**31 and 2**32 - 1 (past
    any output: refused before a byte is copied)."""
    _escape_fuzz(fuzz, 7, [0], wide=[0, 1, 21, 22, 23, 1 << 31, (1 << 32) - 1])
    assert fuzz.cases >= 6 and fuzz.misread + fuzz.refused >= 6


def test_fuzz_match_offsets_at_0_and_past_the_output(fuzz):
    """A match as the first item (no output yet) of offset 0 (distance 1) and of the largest (8,192), and
    later ones reaching exactly to the output's start, one byte past it, and 8,192 back: every length form."""
    rng = random.Random(8)
    for length in (3, 9, 10, 24, 25, 279, 280, 300):
        for distance in (1, 2, 8192):
            items = [(distance, length)] + [rng.randrange(256) for _ in range(rng.randint(0, 60))]
            fuzz.check(encode(items), made_by(items))
        for past in (0, 1, 2, 100):
            literals = rng.randint(1, 8191 - past)
            items = ([rng.randrange(256) for _ in range(literals)] + [(literals + past, length)]
                     + [9] * rng.randint(0, 40))
            for size in fuzz.sizes(encode(items), [made_by(items)]):
                fuzz.check(encode(items), size)
    assert fuzz.refused >= 8 * 6  # every match before the output's start, libfwnt refuses too


def test_fuzz_streams_cut_anywhere(fuzz):
    """Streams holding every length form, each cut at every byte, asked for their whole size and for
    what the cut could still make."""
    rng = random.Random(9)
    for _ in range(6):
        items = random_items(rng)
        if rng.random() < 0.5:
            items += [(rng.randint(1, 8), rng.choice([280, 300, 1000, 32_771, 40_000, 65_538, 70_000]))]
            items += [rng.randrange(256) for _ in range(rng.randint(0, 40))]
        stream, size = encode(items), made_by(items)
        for cut in range(len(stream) + 1):
            fuzz.check(stream[:cut], size)
            fuzz.check(stream[:cut], rng.randint(1, size))
    assert fuzz.refused > fuzz.cases // 4


def test_fuzz_escaped_streams_damaged_and_cut(fuzz):
    """Streams with an escape libfwnt reads otherwise, then a byte changed or the stream cut near the
    escape, so that the place is sometimes an escape and sometimes not."""
    rng = random.Random(10)
    for _ in range(60):
        value = rng.choice([0, 1, 21, 22, 0xFFFD, 0xFFFF, 997])
        stream, sizes = escaped_stream(rng, value, second=rng.random() < 0.5)
        stream = bytearray(stream)
        at = stream.index(b"\xff" + struct.pack("<H", value))
        where = max(0, at + rng.randint(-12, 4))
        if rng.random() < 0.5:
            stream[where] = rng.choice([0x00, 0x07, 0x0F, 0xF0, 0xFF, rng.randrange(256)])
        else:
            del stream[where + rng.randint(1, 8):]
        for size in fuzz.sizes(bytes(stream), sizes):
            fuzz.check(bytes(stream), size)
    assert fuzz.misread > 0 and fuzz.cases >= 60


def test_a_stream_of_more_places_than_cuts_are_worth_is_read_here_in_linear_time(native_calls, python_calls):
    """Literals that look like escapes everywhere (a byte whose 3 bits are 7, then 255 and 16 bits of 0):
    a cut for each would read the stream again a place at a time, quadratic in its length.  libfwnt is
    given no more than ``_CUTS_MOST`` lengths of the stream in all, then the Python reading decides."""
    given = []
    real = native_calls.side_effect
    native_calls.side_effect = lambda src, size: given.append(len(src)) or real(src, size)
    for places in (100, 1000, 10_000):
        items = [0x07, 1, 0xFF, 0, 0] * places + [(5, 100)]
        stream, want = encode(items), reference(items)
        assert len(xpress._odd_escapes(stream)) > places * 9 // 10  # but where a flag word falls
        given.clear()
        assert bytes(decompress(stream, len(want))) == want
        assert sum(given) <= 25 * len(stream), (places, sum(given), len(stream))  # the stream and 24 lengths
    assert python_calls.call_count >= 2  # the longer ones: the Python reading
