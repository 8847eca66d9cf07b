"""Properties (hypothesis): bytes in are bytes out for every class of every target, reserved
bits and padding included; a leaf reads exactly the bits the hand-typed golden tables give
it; writing a leaf touches no other bit."""
from __future__ import annotations

import ctypes
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS
from tests.golden.access import ALL_TARGETS, read_path, write_path
from tests.golden.tables import ALL_TYPES, BIT_TABLES, FLAG_TYPE_EXISTS, golden_leaves, type_exists

NAMES = ALL_TYPES + ("LARGE_INTEGER",)
WHERE = {name: [(abi, v) for abi, v in ALL_TARGETS if type_exists(name, abi, v)] for name in NAMES}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@lru_cache(maxsize=None)
def _golden(name, abi, version):
    return {g.path: g for g in golden_leaves(name, abi, version)}


def _golden_read(blob_int: int, g) -> int:
    value = ((blob_int >> (8 * g.offset)) & g.mask) >> g.bit
    if g.signed and value >> (g.width - 1):
        value -= 1 << g.width
    return value


@st.composite
def _class_and_blob(draw, name):
    abi, version = draw(st.sampled_from(WHERE[name]))
    cls = getattr(kmd.target(abi, version), name)
    blob = draw(st.binary(min_size=ctypes.sizeof(cls), max_size=ctypes.sizeof(cls)))
    return abi, version, cls, blob


def test_every_type_has_targets():
    assert all(WHERE[name] for name in NAMES)
    since = [v for v in INTERFACE_VERSIONS.values() if v >= INTERFACE_VERSIONS["WDDM3_2"]]
    assert len(WHERE["DXGK_SEGMENTDESCRIPTOR5"]) == 3 * len(since)  # from WDDM3_2, three ABIs


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_random_blobs_round_trip_and_read_the_golden_bits(name, data):
    abi, version, cls, blob = data.draw(_class_and_blob(name))
    obj = cls.from_buffer_copy(blob)
    assert bytes(obj) == blob
    copy = cls()
    ctypes.memmove(ctypes.addressof(copy), blob, len(blob))
    assert bytes(copy) == blob
    golden = _golden(name, abi, version)
    blob_int = int.from_bytes(blob, "little")
    covered = 0
    rebuilt = cls()
    for leaf in kmd.leaves(cls):
        g = golden[leaf.path]
        value = read_path(obj, leaf.path)
        assert value == _golden_read(blob_int, g), leaf.path
        covered |= g.mask << (8 * g.offset)
        write_path(rebuilt, leaf.path, value)
    # Writing back what was read restores every bit a leaf covers; only padding stays zero.
    assert int.from_bytes(bytes(rebuilt), "little") == blob_int & covered


@pytest.mark.parametrize("name", sorted(FLAG_TYPE_EXISTS))
@settings(max_examples=100, deadline=None)
@given(word=st.integers(0, 0xFFFFFFFF), data=st.data())
def test_random_words_round_trip_through_value(name, word, data):
    abi, version = data.draw(st.sampled_from(WHERE[name]))
    cls = getattr(kmd.target(abi, version), name)
    raw = word.to_bytes(4, "little")
    assert cls.from_buffer_copy(raw).Value == word
    obj = cls(Value=word)
    assert bytes(obj) == raw
    for field, bit, width, mask, cond in BIT_TABLES[name]:
        if cond.holds(abi, version):
            assert getattr(obj, field) == (word & mask) >> bit, field


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_setting_a_leaf_changes_only_its_bits(name, data):
    abi, version, cls, blob = data.draw(_class_and_blob(name))
    leaf = data.draw(st.sampled_from(kmd.leaves(cls)))
    value = data.draw(st.integers(leaf.min_value, leaf.max_value))
    g = _golden(name, abi, version)[leaf.path]
    obj = cls.from_buffer_copy(blob)
    write_path(obj, leaf.path, value)
    old, new = int.from_bytes(blob, "little"), int.from_bytes(bytes(obj), "little")
    region = g.mask << (8 * g.offset)
    assert new & ~region == old & ~region
    assert _golden_read(new, g) == value
    assert read_path(obj, leaf.path) == value
