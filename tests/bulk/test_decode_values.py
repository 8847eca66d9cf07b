"""decode_array against the per-record ctypes classes, bit for bit, for every type and target."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import column_dtypes, decode_array
from d3dkmddi_py.bulk._plan import narrowest
from d3dkmddi_py.errors import BulkInputError
from d3dkmddi_py.resolve import resolve_layout

from .helpers import ALL_CLASSES, DISTINCT_CLASSES, as_lists, class_id, per_record

EXAMPLES_PER_LAYOUT = 30  # x len(DISTINCT_CLASSES) layouts = the example count of the property test


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
@settings(max_examples=EXAMPLES_PER_LAYOUT, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_columns_equal_ctypes_on_random_blobs(cls, data):
    size = cls._layout_.size
    count = data.draw(st.integers(1, 12), label="count")  # count 0 is an error, as in decode()
    offset = data.draw(st.integers(0, 9), label="offset")
    blob = data.draw(st.binary(min_size=offset + count * size, max_size=offset + count * size + 3), label="blob")
    columns = decode_array(cls, blob, offset=offset, count=count)
    assert list(columns) == [leaf.path for leaf in kmd.leaves(cls)]
    assert as_lists(columns) == per_record(cls, blob, offset, count)


@pytest.mark.parametrize("abi", kmd.ABIS)
def test_every_class_of_every_target_on_one_blob(abi):
    """Every (type, interface version) of an ABI, 9 random records each, all-ones and all-zeros too."""
    rng = np.random.default_rng(5)
    classes = [c for c in ALL_CLASSES if c._target_[0] == abi]
    for cls in classes:
        size = cls._layout_.size
        blob = rng.integers(0, 256, 7 * size, dtype=np.uint8).tobytes() + b"\xff" * size + b"\0" * size
        got = as_lists(decode_array(cls, blob))
        assert got == per_record(cls, blob, 0, 9), class_id(cls)


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_dtypes_are_the_narrowest_that_hold_each_leaf(cls):
    columns = decode_array(cls, bytes(cls._layout_.size * 3))
    dtypes = column_dtypes(cls)
    for leaf in kmd.leaves(cls):
        dtype = columns[leaf.path].dtype
        assert dtype.str[1:] == dtypes[leaf.path]
        if leaf.is_bitfield:
            assert dtype.kind == "u" and dtype.itemsize == narrowest(leaf.bit_width), leaf.path
        else:
            assert dtype.kind == ("i" if leaf.signed else "u") and dtype.itemsize == leaf.size, leaf.path


def test_hand_checked_segment_flags():
    """0x485 = Aperture | PreservedDuringStandby | DirectFlip | bit 2 (CpuVisible), read by hand."""
    words = np.array([0x485, 0xFFC00000, 0], dtype="<u4")
    c = decode_array("DXGK_SEGMENTFLAGS", words.tobytes())
    assert c["Aperture"].tolist() == [1, 0, 0]
    assert c["CpuVisible"].tolist() == [1, 0, 0]
    assert c["PreservedDuringStandby"].tolist() == [1, 0, 0]
    assert c["DirectFlip"].tolist() == [1, 0, 0]
    assert c["Agp"].tolist() == [0, 0, 0]
    assert c["Reserved"].tolist() == [0, 0x3FF, 0]
    assert c["Reserved"].dtype == np.uint16 and c["Aperture"].dtype == np.uint8
    assert c["Value"].tolist() == [0x485, 0xFFC00000, 0]


def test_signed_members_stay_signed():
    big = (-2).to_bytes(8, "little", signed=True)
    c = decode_array("LARGE_INTEGER", big * 2)
    assert c["QuadPart"].tolist() == [-2, -2]
    assert c["HighPart"].tolist() == [-1, -1] and c["HighPart"].dtype == np.int32
    assert c["LowPart"].tolist() == [0xFFFFFFFE] * 2 and c["LowPart"].dtype == np.uint32


def test_inputs_bytes_memoryview_bytearray_numpy_and_path(tmp_path):
    cls = kmd.target("x86", "WDDM2_0").DXGK_ALLOCATIONINFO
    blob = np.random.default_rng(1).integers(0, 256, cls._layout_.size * 17, dtype=np.uint8).tobytes()
    expected = as_lists(decode_array(cls, blob))
    path = tmp_path / "blob.bin"
    path.write_bytes(blob)
    inputs = [bytearray(blob), memoryview(blob), np.frombuffer(blob, np.uint8),
              np.frombuffer(blob, "<u4"), path, str(path)]
    for data in inputs:
        assert as_lists(decode_array(cls, data)) == expected, type(data).__name__


def test_a_path_is_memory_mapped_not_read(tmp_path):
    """A 1 GiB sparse file: decoding 10 records at its end must not bring the file into memory."""
    import tracemalloc

    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.truncate(1 << 30)
        f.seek((1 << 30) - 40)
        f.write(np.arange(10, dtype="<u4").tobytes())
    tracemalloc.start()
    try:
        columns = decode_array(kmd.DXGK_SEGMENTFLAGS, path, offset=(1 << 30) - 40, count=10)
        values = columns["Value"].tolist()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values == list(range(10))
    assert peak < 1 << 20, peak


def test_name_with_target_and_class_agree():
    blob = bytes(range(256)) * 3
    for target in (("x86", "WDDM1_3"), kmd.target("x86", "WDDM1_3")):
        by_name = decode_array("DXGK_SEGMENTDESCRIPTOR", blob, target=target, count=2)
        by_class = decode_array(kmd.target("x86", "WDDM1_3").DXGK_SEGMENTDESCRIPTOR, blob, count=2)
        assert as_lists(by_name) == as_lists(by_class)
        assert by_name.target_label == "x86 WDDM1_3 (0x4002)"


def test_out_reuses_memory_and_gives_the_same_values():
    cls = kmd.DXGK_ALLOCATIONINFO
    rng = np.random.default_rng(2)
    first_blob = rng.integers(0, 256, cls._layout_.size * 50, dtype=np.uint8).tobytes()
    second_blob = rng.integers(0, 256, cls._layout_.size * 30, dtype=np.uint8).tobytes()
    first = decode_array(cls, first_blob)
    second = decode_array(cls, second_blob, out=first)
    assert second._buffers is first._buffers  # the same memory, laid out again for 30 records
    assert as_lists(second) == per_record(cls, second_blob, 0, 30)


def test_empty_range_gives_empty_columns_of_the_right_dtypes():
    c = decode_array("DXGK_ALLOCATIONINFO", b"")
    assert c.count == len(c) == 0 and len(c.keys()) == len(kmd.leaves(kmd.DXGK_ALLOCATIONINFO))
    assert c["Flags.CpuVisible"].dtype == np.uint8 and c["Size"].dtype == np.uint64


@pytest.mark.parametrize("name", ["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO"])
def test_the_span_of_every_whole_record_is_check_ranges_answer(name):
    """check_span answers offset 0 and count None over whole records itself (a few microseconds a call):
    the same span as check_range's, and where the bytes are not whole records check_range's error."""
    from d3dkmddi_py.bulk._source import check_span
    from d3dkmddi_py.span import check_range

    layout = resolve_layout(name)
    for available in (0, layout.size, 7 * layout.size, 7 * layout.size + 1, layout.size - 1):
        try:
            want = check_range(layout, available, "the data", 0, None, empty_ok=True)
        except BulkInputError as exc:
            with pytest.raises(BulkInputError) as got:
                check_span(layout, available, 0, None)
            assert str(got.value) == str(exc)
        else:
            span = check_span(layout, available, 0, None)
            assert (span.offset, span.count, span.record_size) == (*want, layout.size)


def test_len_of_decode_array_is_the_number_of_records():
    """Issue 31: len() gave the columns (106) of the sample's 35 records; now the records, as a DataFrame's len,
    while iterating and keys() still give the leaves."""
    from d3dkmddi_py.samples import ALLOCATIONS_PATH, build, sample_target

    layout = resolve_layout(build.ALLOCATION_TYPE, sample_target())
    columns = decode_array(build.ALLOCATION_TYPE, ALLOCATIONS_PATH, target=sample_target())
    records = ALLOCATIONS_PATH.stat().st_size // layout.size
    assert len(columns) == columns.count == records == len(build.ALLOCATIONS)
    leaves = len(column_dtypes(build.ALLOCATION_TYPE, target=sample_target()))
    assert leaves != records and len(list(columns)) == len(columns.keys()) == leaves
    assert len(columns.items()) == len(columns.values()) == len(dict(columns)) == leaves
    assert len(columns.to_pandas()) == len(columns)


@pytest.mark.parametrize("how", ["decode_array", "iter_chunks", "column_findings", "columns_of_bytes"])
def test_every_bulk_result_has_the_len_of_its_rows(how):
    """The siblings: every table-like result of bulk (Columns however made, a FindingsTable) counts its rows."""
    from d3dkmddi_py import bulk
    from d3dkmddi_py.samples import ALLOCATIONS_PATH, build, sample_target

    t = sample_target()
    data = ALLOCATIONS_PATH.read_bytes()
    whole = decode_array(build.ALLOCATION_TYPE, data, target=t)
    if how == "decode_array":
        results = [(whole, len(build.ALLOCATIONS))]
    elif how == "iter_chunks":
        results = [(c, len(c.index)) for c in bulk.iter_chunks(build.ALLOCATION_TYPE, data, target=t, chunk_records=8)]
        assert sum(len(c) for c, _n in results) == len(build.ALLOCATIONS)
    elif how == "column_findings":
        found = bulk.column_findings(whole)
        results = [(found, len(found.rows()))]
    else:
        results = [(bulk.columns_of_bytes(whole.layout, data[:whole.layout.size * 3]), 3)]
    assert all(len(result) == rows for result, rows in results)
