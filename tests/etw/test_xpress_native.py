"""libfwnt's C decoder (the ``fast`` extra) behind ``decompress``: used for every real compressed buffer,
and never where it reads the format otherwise than MS-XCA 2.4 and this package do.  Its source
(libfwnt_lzxpress.c) takes a length escaped to 16 bits as the length itself, with no check that it is at
least 22 and no 32 bits after a 0, and refuses a match of more than 32,771 bytes; each case here
holds ``decompress`` to the Python reading's answer, and shows libfwnt's own so the test would notice
the day it changes."""
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
from .xpress_streams import answer, encode, exact_only, python_only, random_items, reference


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


def escapes(items) -> list:
    """Where ``encode(items)`` puts each byte 255 that escapes a length to 16 bits (the item's last bytes:
    255 and 16 bits, or 255, 16 zero bits and 32)."""
    stream, found = encode(items), []
    for k, item in enumerate(items):
        if isinstance(item, tuple) and item[1] >= 280:
            found.append(len(encode(items[:k + 1])) - (7 if item[1] - 3 >= 1 << 16 else 3))
    assert all(stream[at] == 255 for at in found)
    return found


def test_every_real_compressed_buffer_is_decoded_by_libfwnt_to_the_python_readings_bytes(native_calls):
    """net.4.5.2.x64 (359 buffers) and SelfDescribingSingleEvent (2): each goes to libfwnt once, and its
    bytes are the Python reading's; about half hold a byte 255 and 16 bits below 22 somewhere, in none
    is it a length escape, so none is read again here."""
    streams = [s for name in etl_files.NAMES for s in etl_files.compressed_streams(etl_files.read(name))]
    python = mock.Mock(side_effect=python_only)
    with mock.patch.object(xpress, "_python_decompress", python):
        for stream, size in streams:
            assert bytes(decompress(stream, size, bytearray(b"head"))) == b"head" + bytes(python_only(stream, size))
    assert native_calls.call_count == len(streams) == 361
    assert python.call_count == 0
    assert 100 < sum(xpress._WIDE_BELOW_22.search(s) is not None for s, _ in streams) < 300


@pytest.mark.parametrize("value", [0, 1, 5, 21])
def test_a_16_bit_length_below_22_is_the_python_readings_answer_where_libfwnt_reads_it_as_the_length(
        pyfwnt, native_calls, value):
    """MS-XCA: a 16-bit length below 15 + 7 is an error (0 announces 32 bits).  libfwnt copies value + 3
    bytes and reads on; ``decompress`` gives the Python reading's error, and libfwnt is not asked."""
    items = [k & 255 for k in range(300)] + [(100, 1000)] + [k & 255 for k in range(300)]
    stream = bytearray(encode(items))
    (at,) = escapes(items)
    struct.pack_into("<H", stream, at + 1, value)
    size = len(reference(items))
    if value:  # libfwnt's own reading, a match of value + 3 and the rest as items, asked for by its size
        theirs = pyfwnt.lzxpress_decompress(bytes(stream), 10 ** 4)
        assert len(theirs) == 600 + value + 3 and pyfwnt.lzxpress_decompress(bytes(stream), len(theirs)) == theirs
        want = answer(exact_only, bytes(stream), len(theirs))
        assert want[0] == "error" and answer(decompress, bytes(stream), len(theirs)) == want
    want = answer(exact_only, bytes(stream), size)
    assert want[0] == "error"
    assert answer(decompress, bytes(stream), size) == want
    assert native_calls.call_count == 0


def test_a_32_bit_length_is_read_on_where_libfwnt_reads_a_length_of_3(pyfwnt, native_calls):
    items = [k & 255 for k in range(300)] + [(100, 70_000)] + [k & 255 for k in range(300)]
    stream, want = encode(items), reference(items)
    assert bytes(decompress(stream, len(want))) == want
    assert native_calls.call_count == 0
    try:
        theirs = pyfwnt.lzxpress_decompress(stream, len(want))
    except OSError:
        theirs = None
    assert theirs != want


def test_a_match_longer_than_libfwnt_takes_is_read_here(native_calls):
    """libfwnt refuses a match of more than 32,771 bytes (its own limit, not the format's)."""
    items = [k & 255 for k in range(300)] + [(100, 40_000)] + [k & 255 for k in range(300)]
    stream, want = encode(items), reference(items)
    assert bytes(decompress(stream, len(want))) == want
    assert native_calls.call_count == 1


def test_bytes_255_and_16_bits_below_22_that_are_no_escape_still_go_to_libfwnt(native_calls):
    """Such bytes as literals, and as a match's token and nibble byte (distance 32, length 10: FF 00 00):
    the items stepped through find no escape."""
    items = [0xFF, 5, 0, 1, 2, 0xFF, 0, 0] + [k & 255 for k in range(200)] + [(32, 10)] + [7] * 100
    stream, want = encode(items), reference(items)
    assert stream.count(b"\xff\x00\x00") == 2
    assert xpress._WIDE_BELOW_22.search(stream) is not None
    assert not xpress._escapes_below_22(stream)
    assert bytes(decompress(stream, len(want))) == want
    assert native_calls.call_count == 1


def test_every_16_bit_length_below_22_in_random_streams_is_the_python_readings_answer(native_calls):
    rng = random.Random(20261126)
    checked = 0
    while checked < 60:
        items = random_items(rng)
        places = escapes(items)
        if not places:
            continue
        stream = bytearray(encode(items))
        size = len(reference(items))
        at = rng.choice(places)
        struct.pack_into("<H", stream, at + 1, rng.randrange(22))
        assert answer(decompress, bytes(stream), size) == answer(exact_only, bytes(stream), size)
        checked += 1


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
    assert native_calls.call_count == 16 * len(streams)


def test_without_libfwnt_decompress_is_the_python_reading():
    items = [k & 255 for k in range(3000)] + [(100, 1000)]
    stream, want = encode(items), reference(items)
    with mock.patch.object(xpress, "_native", False), mock.patch.object(xpress, "_python_decompress",
                                                                        mock.Mock(side_effect=python_only)) as python:
        assert bytes(decompress(stream, len(want))) == want
    assert python.call_count == 1
    with pytest.raises(XpressError):
        decompress(stream[:-5], len(want))
