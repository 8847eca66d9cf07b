"""Small calls (issue 16): a few records take their own paths (one record as one int; up to
``small_records`` as one word each where a record is 1, 2, 4 or 8 bytes, else as one 8-byte window per
column), with the plan worked out once per layout.
They must give what the large path and the ctypes classes give, byte for byte and dtype for dtype."""
from __future__ import annotations

import numpy as np

import d3dkmddi_py as kmd
import pytest

from d3dkmddi_py.bulk import _engine, _plan, decode_array
from d3dkmddi_py.resolve import resolve_layout
from tests.bulk.helpers import DISTINCT_CLASSES, as_lists, class_id, failures_from_16_threads, per_record

COUNTS = (1, 2, 3, 7, 10)


def _blob(size: int, count: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, size * count, dtype=np.uint8).tobytes()


def _large_path(layout, data: bytes, count: int) -> list:
    """The columns of the NumPy plan path, whatever the count."""
    raw = np.frombuffer(data, dtype=np.uint8)
    return _engine.decode_numpy(np, _plan.plan_for(layout), raw, count)[0]


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_small_calls_give_the_large_paths_columns(cls):
    layout = resolve_layout(cls)
    for count in COUNTS:
        data = _blob(layout.size, count, count)
        small = decode_array(cls, data)
        large = _large_path(layout, data, count)
        assert list(small) == list(_plan.plan_for(layout).names)
        for (path, got), want in zip(small.items(), large):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (path, count)
            assert got.flags.c_contiguous and got.shape == (count,)
        assert as_lists(small) == per_record(cls, data, 0, count)


def test_the_one_field_no_window_holds_takes_the_exact_path():
    """A 64-bit unit's bitfield wider than 57 bits that does not start on a byte fits no 8-byte
    window; such a plan has no windows and small counts go through the NumPy plan instead."""
    layout = resolve_layout("DXGK_SEGMENTFLAGS")
    assert _engine._small_plan(np, _plan.plan_for(layout))[2] is not None  # today's types all fit


@pytest.mark.parametrize("name", ["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO"])
def test_small_calls_from_16_threads_agree(name):
    layout = resolve_layout(name)
    _engine._small_plan.cache_clear()
    _engine._one_record.cache_clear()
    data = {count: _blob(layout.size, count, 100 + count) for count in COUNTS}
    want = {count: as_lists(decode_array(name, blob)) for count, blob in data.items()}
    _engine._small_plan.cache_clear()
    _engine._one_record.cache_clear()

    def work(i):
        return [(i, count) for _ in range(20) for count, blob in data.items()
                if as_lists(decode_array(name, blob)) != want[count]]

    assert failures_from_16_threads(work) == []


def test_the_plan_is_built_once_per_layout():
    layout = resolve_layout("DXGK_ALLOCATIONINFO", ("x64", "WDDM2_0"))
    data = _blob(layout.size, 3, 1)
    decode_array(layout, data)
    before = (_plan.plan_for.cache_info().misses, _engine._small_plan.cache_info().misses)
    for _ in range(5):
        decode_array(layout, data)
        decode_array(layout, data[:layout.size])
    assert (_plan.plan_for.cache_info().misses, _engine._small_plan.cache_info().misses) == before


def test_out_reuses_a_small_calls_memory_with_the_same_values():
    layout = resolve_layout("DXGK_ALLOCATIONINFO")
    first = decode_array(layout, _blob(layout.size, 10, 1))
    for count in (10, 3, 1):
        blob = _blob(layout.size, count, 50 + count)
        again = decode_array(layout, blob, out=first)
        assert np.shares_memory(first["Size"], again["Size"])
        assert as_lists(again) == as_lists(decode_array(layout, blob)), count
    bigger = decode_array(layout, _blob(layout.size, 11, 2), out=first)  # more than it holds: new memory
    assert not np.shares_memory(first["Size"], bigger["Size"]) and bigger.count == 11


WORD_CLASSES = [cls for cls in DISTINCT_CLASSES if cls._layout_.size in (1, 2, 4, 8)]


@pytest.mark.parametrize("cls", WORD_CLASSES, ids=class_id)
def test_one_word_records_on_either_side_of_the_byte_rows_equal_ctypes(cls):
    """A record of 1, 2, 4 or 8 bytes read as one word: below ``WORD_BITS_FROM`` records every column in
    the word's width, from it the one-bit fields cut from byte rows (where each has its own bit), up to
    the last count of the small path and the first of the plan path."""
    layout = resolve_layout(cls)
    last = _engine.small_records(np, _plan.plan_for(layout))
    for count in sorted({_engine.WORD_BITS_FROM - 1, _engine.WORD_BITS_FROM, _engine.WORD_BITS_FROM + 7,
                         min(last, 70_000), last + 1}):
        data = _blob(layout.size, count, count)
        columns = decode_array(cls, data)
        assert as_lists(columns) == per_record(cls, data, 0, count), count
        assert all(a.flags.c_contiguous and a.shape == (count,) for a in columns.values())


def test_the_byte_rows_serve_the_word_types_whose_one_bit_fields_each_have_their_own_bit():
    """DXGK_SEGMENTFLAGS (22 one-bit fields in bytes 0 to 2) takes them; a word type whose union arms
    share a bit does not (the plain word path then), and neither does a record wider than a word."""
    plans = {cls: _plan.plan_for(resolve_layout(cls)) for cls in WORD_CLASSES}
    assert _engine._word_bits(np, _plan.plan_for(resolve_layout("DXGK_SEGMENTFLAGS")))[:2] == (0, 3)
    assert any(_engine._word_bits(np, plan) is None for plan in plans.values())
    wide = _engine._small_plan(np, _plan.plan_for(resolve_layout("DXGK_ALLOCATIONINFO")))[2]
    assert not isinstance(wide[0], np.dtype)


def test_out_reuses_the_byte_rows_memory_at_fewer_records():
    layout = resolve_layout("DXGK_SEGMENTFLAGS")
    first = decode_array(layout, _blob(layout.size, 5000, 1))
    for count in (5000, 4999, 600, _engine.WORD_BITS_FROM):
        blob = _blob(layout.size, count, 70 + count)
        again = decode_array(layout, blob, out=first)
        assert again._buffers is first._buffers, count
        assert as_lists(again) == per_record(kmd.DXGK_SEGMENTFLAGS, blob, 0, count), count
