"""Without NumPy the same values come out (slower, one warning); bad input fails before any work."""
from __future__ import annotations

import array
import re
import sys
import warnings

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk
from d3dkmddi_py.bulk import BulkInputError, NumpyMissingWarning, decode_array, iter_chunks

from .helpers import DISTINCT_CLASSES, as_lists, class_id, per_record, without_numpy


@pytest.fixture
def no_numpy(monkeypatch):
    without_numpy(monkeypatch)


@pytest.mark.parametrize("cls", DISTINCT_CLASSES, ids=class_id)
def test_pure_python_fallback_gives_the_same_values(cls, no_numpy):
    size = cls._layout_.size
    blob = bytes((i * 37 + 11) & 0xFF for i in range(size * 6 + 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumpyMissingWarning)
        columns = decode_array(cls, blob, offset=1, count=6)
    assert all(isinstance(v, array.array) for v in columns.values())
    assert as_lists(columns) == per_record(cls, blob, 1, 6)
    for leaf in kmd.leaves(cls):  # the same widths and signedness as the NumPy columns
        typecode = columns[leaf.path].typecode
        assert typecode.islower() == (leaf.signed and not leaf.is_bitfield), leaf.path


def test_fallback_matches_numpy_on_random_data_and_warns_once(monkeypatch):
    cls = kmd.target("arm64", "WDDM3_0").DXGK_ALLOCATIONINFO
    blob = np.random.default_rng(9).integers(0, 256, cls._layout_.size * 40, dtype=np.uint8).tobytes()
    fast = as_lists(decode_array(cls, blob))
    without_numpy(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        slow = as_lists(decode_array(cls, blob))
        again = as_lists(decode_array(cls, blob[: cls._layout_.size * 3]))
    assert slow == fast
    assert again == {k: v[:3] for k, v in fast.items()}
    messages = [w for w in caught if issubclass(w.category, NumpyMissingWarning)]
    assert len(messages) == 1 and "pure Python" in str(messages[0].message)


def test_fallback_reads_a_path_and_chunks(tmp_path, no_numpy):
    path = tmp_path / "flags.bin"
    path.write_bytes(array.array("I", range(100)).tobytes() if sys.byteorder == "little"
                     else b"".join(i.to_bytes(4, "little") for i in range(100)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumpyMissingWarning)
        whole = decode_array("DXGK_SEGMENTFLAGS", path)
        chunks = list(iter_chunks("DXGK_SEGMENTFLAGS", path, chunk_records=30))
    assert whole["Value"].tolist() == list(range(100))
    assert [c.start for c in chunks] == [0, 30, 60, 90]
    assert sum((c["Value"].tolist() for c in chunks), []) == list(range(100))


# ---- bad input: a clear error, before any work

ALLOC = kmd.DXGK_ALLOCATIONINFO  # 88 bytes at x64


@pytest.fixture
def no_decoding(monkeypatch):
    """Fail the test if any decoding starts."""
    def refuse(*args, **kwargs):
        raise AssertionError("decoding started before the input was checked")

    monkeypatch.setattr(bulk, "_decode", refuse)


def test_length_not_whole_records(no_decoding):
    with pytest.raises(BulkInputError) as err:
        decode_array(ALLOC, bytes(88 * 3 + 5))
    message = str(err.value)
    assert "269 bytes" in message and "3 whole DXGK_ALLOCATIONINFO records" in message
    assert "5 bytes left over" in message and "count=3" in message
    assert err.value.record_size == 88 and err.value.available == 269


def test_offset_past_end(no_decoding):
    with pytest.raises(BulkInputError, match=r"offset 0x64 \(100\) is past the end of the data \(88 bytes"):
        decode_array(ALLOC, bytes(88), offset=100)


def test_negative_offset_and_count(no_decoding):
    # the one span check of decode(), the command line and bulk: the same error, count 0 included
    with pytest.raises(kmd.DecodeError, match="offset -1 is negative"):
        decode_array(ALLOC, bytes(88), offset=-1)
    for count in (-2, 0):
        with pytest.raises(kmd.DecodeError, match=f"count {count} is not positive") as bulk_error:
            decode_array(ALLOC, bytes(88), count=count)
        with pytest.raises(kmd.DecodeError) as decode_error:
            kmd.decode(ALLOC, bytes(88), count=count)
        assert str(bulk_error.value) == str(decode_error.value)


def test_count_larger_than_data(no_decoding):
    with pytest.raises(BulkInputError) as err:
        decode_array(ALLOC, bytes(88 * 2 + 10), offset=10, count=3)
    assert "3 records of DXGK_ALLOCATIONINFO need 264 bytes" in str(err.value)
    assert "has 176 there (2 whole records fit)" in str(err.value)


def test_missing_path(tmp_path, no_decoding):
    with pytest.raises(kmd.DecodeError, match="no such file"):
        decode_array(ALLOC, tmp_path / "absent.bin")
    with pytest.raises(kmd.DecodeError, match="is a directory"):
        decode_array(ALLOC, tmp_path)


def test_wrong_kinds(no_decoding):
    with pytest.raises(TypeError, match="offset must be an integer"):
        decode_array(ALLOC, bytes(88), offset=1.5)
    with pytest.raises(TypeError, match="data must be bytes"):
        decode_array(ALLOC, 12345)
    with pytest.raises(TypeError, match="is an enum"):
        decode_array("DXGK_SEGMENTTYPE", bytes(8))
    with pytest.raises(kmd.MissingMember, match="did you mean DXGK_SEGMENTFLAGS"):
        decode_array("DXGK_SEGMENTFLAG", bytes(8))
    with pytest.raises(ValueError, match="is the class of x64"):
        decode_array(ALLOC, bytes(88), target="x86")


def test_chunked_checks_the_whole_range_first(no_decoding):
    with pytest.raises(BulkInputError, match="left over"):
        iter_chunks(ALLOC, bytes(88 * 10 + 1), chunk_records=2)
    with pytest.raises(ValueError, match="chunk_records must be a positive integer"):
        iter_chunks(ALLOC, bytes(88), chunk_records=0)


# ---- Columns built by hand (bulk.Columns(...) raised an AttributeError on a wrong kind, and took arrays of any
# dtype, length or width that column_findings and the writers then read as the type's leaves)

def _parts(cls=None):
    from d3dkmddi_py.bulk._plan import plan_for

    columns = decode_array(cls or kmd.DXGK_ALLOCATIONINFO, bytes(range(256)) * 4, count=3)
    return columns, plan_for(columns.layout), [columns[n] for n in columns]


def test_columns_built_by_hand_from_a_decodes_parts_are_the_same_columns():
    columns, plan, arrays = _parts()
    again = bulk.Columns(columns.layout, plan, arrays, start=7, offset=16, inputs=("a.bin",))
    assert list(again.rows()) == [(7 + i, *row[1:]) for i, row in enumerate(columns.rows())]
    assert (again.start, again.offset, again.inputs, again.count) == (7, 16, ("a.bin",), 3)
    assert len(bulk.column_findings(again)) == len(bulk.column_findings(columns))
    pure = [array.array(a.dtype.char.upper() if a.dtype.kind == "u" else a.dtype.char.lower(), a.tolist())
            for a in arrays]  # the standard library's arrays, as without NumPy
    assert all(p.itemsize == a.itemsize for p, a in zip(pure, arrays))
    assert list(bulk.Columns(columns.layout, plan, pure, start=0, offset=0).rows()) == list(columns.rows())


def test_columns_built_by_hand_refuse_each_wrong_part_naming_it():
    columns, plan, arrays = _parts()
    one_bit = next(i for i, leaf in enumerate(columns.layout.leaves) if leaf.bit_width == 1)
    path = columns.layout.leaves[one_bit].path.replace(".", r"\.")
    wide, short, u8 = list(arrays), list(arrays), list(arrays)
    wide[one_bit] = wide[one_bit].copy()
    wide[one_bit][0] = 2
    short[1] = short[1][:2]
    u8[0] = u8[0].astype("i8")
    for kwargs, message in (
            ({"layout": None}, r"^Columns: layout must be the TypeLayout of a struct or union, not None$"),
            ({"plan": None}, "^Columns: plan must be the bulk plan of DXGK_ALLOCATIONINFO at "
             + re.escape(kmd.target("x64").label) + " "),
            ({"arrays": arrays[:-1]}, r"^Columns: arrays must be a list of \d+ arrays, one per leaf of DXGK_ALLOC"),
            ({"arrays": u8}, r"^Columns: arrays\[0\] \(pPrivateDriverData\) must be a 1-D array of u8 "),
            ({"arrays": short}, r"^Columns: arrays\[1\] \(PrivateDriverDataSize\) holds 2 values, arrays\[0\] 3"),
            ({"arrays": wide}, rf"^Columns: arrays\[{one_bit}\] \({path}\) holds 2, more than its 1 bits hold "
                               r"\(valid 0\.\.1\)$"),
            ({"start": -1}, r"^Columns: start must be an integer 0\.\.0x7ffffffffffffffc, not -1$"),
            ({"start": 1 << 63}, r"^Columns: start must be an integer 0\.\.0x7ffffffffffffffc, not "),  # int64 rows
            ({"offset": 1 << 63}, r"^Columns: offset must be an integer 0\.\.0x7fffffffffffffff, not "),
            ({"buffers": object()}, r"^Columns: buffers must be None \(the decoders' own reusable memory\)"),
            ({"inputs": (None,)}, r"^Columns: inputs must be a tuple of the files the records were read from")):
        values = {"layout": columns.layout, "plan": plan, "arrays": arrays, "start": 0, "offset": 0, **kwargs}
        with pytest.raises(kmd.D3dkmddiError, match=message):
            bulk.Columns(values.pop("layout"), values.pop("plan"), values.pop("arrays"), **values)
