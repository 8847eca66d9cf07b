"""decode_array at every count (issue 23): the NumPy plan path runs a bank of rows per call, cuts long
rows one by one, lays its arena out per count (sizes rounded to a class) and reuses ``out=`` at any
count.  Each way must give what the ctypes classes give, leaf for leaf."""
from __future__ import annotations

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk
from d3dkmddi_py.bulk import _engine, _plan, decode_array
from d3dkmddi_py.resolve import resolve_layout
from tests.bulk.helpers import DISTINCT_CLASSES, as_lists, class_id, failures_from_16_threads, per_record


def _blob(size: int, count: int, seed: int) -> bytes:
    return np.random.default_rng(seed).bytes(size * count)


def _same(columns, other) -> bool:
    return list(columns) == list(other) and all(
        a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(columns.values(), other.values()))


def _last_small_count(cls) -> int:
    return _engine.small_records(np, _plan.plan_for(resolve_layout(cls)))


def _exact_arena(layout, count: int) -> int:
    program = _engine._program(np, _plan.plan_for(layout))
    return sum(len(rows) * _engine._round(count * w) for w, rows in zip(program.widths, program.rows))


@pytest.fixture
def fresh_geometry():
    """Layouts worked out under a patched constant must not outlive the test."""
    _engine._geometry.cache_clear()
    yield
    _engine._geometry.cache_clear()


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_the_counts_where_the_paths_meet_equal_ctypes(cls):
    """The last count of the few-records path and the first of the plan path (the issue's steps were at
    257 and 148 records), and counts that leave part of a 64-bit word."""
    size = cls._layout_.size
    last = _last_small_count(cls)
    for count in sorted({last, last + 1, 148, 257, 3 * 64 + 5}):
        data = _blob(size, count, count)
        columns = decode_array(cls, data)
        assert as_lists(columns) == per_record(cls, data, 0, count), count
        assert all(a.flags.c_contiguous and a.shape == (count,) for a in columns.values())


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_rows_cut_one_by_one_equal_ctypes(cls, monkeypatch):
    """The row-per-call way of cutting bitfields (long rows), forced at a small count."""
    monkeypatch.setattr(_engine, "_ROW_BY_ROW", 1)
    size = cls._layout_.size
    count = max(_last_small_count(cls) + 1, 300)
    data = _blob(size, count, 7)
    assert as_lists(decode_array(cls, data)) == per_record(cls, data, 0, count)


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_rows_cut_a_run_of_sources_and_of_masks_a_call_equal_ctypes(cls, monkeypatch):
    """The way of cutting bitfields between short rows (all of a bank's rows in two calls) and long ones
    (a row a call): a call per run of sources and per run of masks, forced at a small count."""
    monkeypatch.setattr(_engine, "_SHORT_ROWS", 0)
    size = cls._layout_.size
    count = max(_last_small_count(cls) + 1, 300)
    data = _blob(size, count, 8)
    assert as_lists(decode_array(cls, data)) == per_record(cls, data, 0, count)


def test_short_rows_cut_in_two_calls_a_bank_in_a_real_decode(monkeypatch):
    """Rows of at most ``_SHORT_ROWS`` words: each bank's bitfields from one gather of their sources, a
    column of shifts and a column of masks, against each leaf's ``(word >> bit) & mask`` (the plan path
    forced: a one-word record takes the few-records path up to 60,000 records)."""
    monkeypatch.setattr(bulk, "small_records", lambda np, plan: 0)
    count = 8 * _engine._SHORT_ROWS - 3
    words = np.random.default_rng(4).integers(0, 1 << 32, count, dtype="<u4")
    columns = decode_array("DXGK_SEGMENTFLAGS", words.tobytes())
    assert isinstance(columns._buffers, _engine.Buffers)
    assert columns._buffers.words[0].shape[1] <= _engine._SHORT_ROWS  # the one-byte bank: 22 one-bit fields
    for leaf in kmd.leaves(kmd.DXGK_SEGMENTFLAGS):
        want = (words >> leaf.bit_offset) & ((1 << leaf.bit_width) - 1)
        assert np.array_equal(columns[leaf.path], want), leaf.path


def test_rows_long_enough_to_cut_one_by_one_in_a_real_decode():
    """DXGK_SEGMENTFLAGS words with rows of more than ``_ROW_BY_ROW`` words, against each leaf's
    ``(word >> bit) & mask`` over the words (the layout's own bit positions)."""
    count = 8 * _engine._ROW_BY_ROW + 5  # one-byte rows of _ROW_BY_ROW + 1 words
    words = np.random.default_rng(3).integers(0, 1 << 32, count, dtype="<u4")
    columns = decode_array("DXGK_SEGMENTFLAGS", words.tobytes())
    assert max(block.shape[1] for block in columns._buffers.words) >= _engine._ROW_BY_ROW
    for leaf in kmd.leaves(kmd.DXGK_SEGMENTFLAGS):
        want = (words >> leaf.bit_offset) & ((1 << leaf.bit_width) - 1)
        assert np.array_equal(columns[leaf.path], want), leaf.path


@pytest.mark.parametrize("name", ["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO"])
def test_out_reused_at_other_counts_lays_the_arena_out_again(name):
    """A chunk loop's last chunk is shorter; a reused arena holds any count up to its own."""
    layout = resolve_layout(name)
    first = decode_array(layout, _blob(layout.size, 1000, 1))
    for count in (1000, 999, 513, 512, 401, 1, 0, 1000):
        blob = _blob(layout.size, count, 50 + count)
        again = decode_array(layout, blob, out=first)
        assert again.count == count and again._buffers is first._buffers
        assert _same(again, decode_array(layout, blob)), count


def test_nearby_counts_share_one_layout_and_the_arena_stays_within_a_sixteenth(fresh_geometry):
    layout = resolve_layout("DXGK_ALLOCATIONINFO")
    blob = _blob(layout.size, 1 << 17, 2)
    decode_array(layout, blob, count=1000)
    misses = _engine._geometry.cache_info().misses
    for count in range(993, 1025):  # one size class: 993..1023 round up to 1024 in steps of 32
        decode_array(layout, blob, count=count)
    assert _engine._geometry.cache_info().misses == misses
    decode_array(layout, blob, count=992)  # the class below
    assert _engine._geometry.cache_info().misses == misses + 1
    for count in (401, 1000, 5000, 40_000, (1 << 16) - 1):
        arena = decode_array(layout, blob, count=count)._buffers.arena.nbytes
        assert _exact_arena(layout, count) <= arena <= _exact_arena(layout, count) * 17 // 16 + 64 * 8, count
    for count in (1 << 16, (1 << 17) - 3):  # large counts: exactly what they need, as before the classes
        assert decode_array(layout, blob, count=count)._buffers.arena.nbytes == _exact_arena(layout, count)


def test_copies_split_where_a_dtype_would_span_more_than_a_c_int(monkeypatch, fresh_geometry):
    """NumPy 1.x holds a structured dtype's itemsize in a C int: a copy whose rows span more is split."""
    layout = resolve_layout("DXGK_ALLOCATIONINFO")
    count = 500
    whole = len(_engine.Buffers(np, _plan.plan_for(layout), count).shape(np, count).copies)
    _engine._geometry.cache_clear()
    monkeypatch.setattr(_engine, "_MAX_SPAN", 4 * _engine._round(count * 8))  # a few rows at most
    buffers = _engine.Buffers(np, _plan.plan_for(layout), count).shape(np, count)
    assert len(buffers.copies) > whole
    assert all(c[3].itemsize <= _engine._MAX_SPAN and c[6].itemsize <= _engine._MAX_SPAN for c in buffers.copies)
    data = _blob(layout.size, count, 9)
    assert as_lists(decode_array(layout, data)) == per_record(kmd.DXGK_ALLOCATIONINFO, data, 0, count)


@pytest.mark.parametrize("name", ["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO"])
def test_the_plan_path_from_16_threads_agrees(name):
    layout = resolve_layout(name)
    counts = (_last_small_count(name) + 1, 1000, 1001, 4096)
    data = {count: _blob(layout.size, count, 200 + count) for count in counts}
    want = {count: decode_array(name, blob) for count, blob in data.items()}
    _engine._program.cache_clear()
    _engine._geometry.cache_clear()

    def work(i):
        return [(i, count) for _ in range(5) for count, blob in data.items()
                if not _same(decode_array(name, blob), want[count])]

    assert failures_from_16_threads(work) == []
