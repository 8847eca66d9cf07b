"""Property tests: build then decode gives back every valid preference list; to_dict / from_dict
gives back the same bytes for random blobs of every struct at several targets; check never
crashes on random words."""
from __future__ import annotations

import ctypes
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.errors import InvalidFieldValue

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

banks = st.lists(st.tuples(st.integers(1, 127), st.sampled_from(list(sem.BankDirection))), max_size=4)
segments = st.lists(st.tuples(st.integers(1, 31), st.sampled_from(list(sem.SegmentDirection))), max_size=5)
words = st.integers(0, 0xFFFFFFFF)


@SETTINGS
@given(banks)
def test_bank_preference_build_then_decode_is_the_input(entries):
    prefs = sem.decode_bank_preference(sem.build_bank_preference(entries))
    assert [(e.bank, e.direction) for e in prefs.entries] == entries
    assert prefs.after_end == ()


@SETTINGS
@given(segments)
def test_segment_preference_build_then_decode_is_the_input(entries):
    value = sem.build_segment_preference(entries)
    prefs = sem.decode_segment_preference(value)
    assert [(e.segment_id, e.direction) for e in prefs.entries] == entries
    assert prefs.after_end == () and prefs.reserved == 0
    assert not [f for f in sem.check(value, "D3DDDI_SEGMENTPREFERENCE")]


@SETTINGS
@given(words)
def test_decode_then_build_gives_the_word_back_when_nothing_follows_the_end(value):
    prefs = sem.decode_bank_preference(value)
    rebuilt = sem.build_bank_preference(prefs.entries)
    if not prefs.after_end:
        assert rebuilt == value
    else:
        assert [f.rule_id for f in sem.check(value, "DXGK_SEGMENTBANKPREFERENCE")]


@SETTINGS
@given(st.lists(st.integers(1, 31), unique=True), st.booleans())
def test_segment_set_mask_then_ids_is_the_input(ids, system_memory):
    s = sem.segment_set(sem.segment_set_mask(ids, system_memory=system_memory))
    assert s.ids == tuple(sorted(ids)) and s.system_memory == system_memory


@SETTINGS
@given(st.lists(st.integers(1, 127), min_size=5, max_size=8))
def test_more_than_four_banks_is_refused(entries):
    with pytest.raises(InvalidFieldValue):
        sem.build_bank_preference(entries)


@SETTINGS
@given(words, st.sampled_from(list(kmd.InterfaceVersion)))
def test_segment_flag_checks_are_consistent_with_the_decoded_flags(value, version):
    """Every word of every version: findings are a pure function of the word, and the reserved rules
    fire exactly when decode_segment_flags finds newer or reserved bits."""
    tgt = kmd.target("x64", version)
    found = {f.rule_id for f in sem.check(value, "DXGK_SEGMENTFLAGS", target=tgt)}
    info = sem.decode_segment_flags(value, target=tgt)
    assert ("SEGFLAGS.UNDEFINED_AT_VERSION" in found) == bool(info.undefined)
    assert ("SEGFLAGS.RESERVED_NONZERO" in found) == bool(info.reserved)
    supported = version >= kmd.InterfaceVersion.WIN8  # "Supported starting with Windows 8"
    assert ("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE" in found) == (value >> 8 & 3 == 3 and supported)
    assert ("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8" in found) == (value >> 7 & 7 != 0 and not supported)
    assert found == {f.rule_id for f in sem.check(value, "DXGK_SEGMENTFLAGS", target=tgt)}


TARGETS = [("x64", "WDDM3_2"), ("x86", "WIN7"), ("arm64", "WDDM2_0"), ("x86", "WDDM2_2"), ("x64", "VISTA")]


def _struct_types(abi, version):
    t = kmd.target(abi, version)
    seen = {}
    for name, cls in t.types.items():
        if hasattr(cls, "_leaves_") and cls._c_name_ not in seen:
            seen[cls._c_name_] = cls
    return [(abi, version, name) for name in sorted(seen)]


STRUCTS = [case for abi, version in TARGETS for case in _struct_types(abi, version)]


@pytest.mark.parametrize("abi, version, type_name", STRUCTS, ids=[f"{a}-{v}-{n}" for a, v, n in STRUCTS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_from_dict_of_to_dict_gives_the_same_bytes(abi, version, type_name, data):
    tgt = kmd.target(abi, version)
    cls = getattr(tgt, type_name)
    blob = data.draw(st.binary(min_size=ctypes.sizeof(cls), max_size=ctypes.sizeof(cls)))
    value = cls.from_buffer_copy(blob)
    d = json.loads(json.dumps(sem.to_dict(value)))
    back = sem.from_dict(d, type_name)
    assert type(back) is cls and bytes(back) == blob
    assert d["type"] == cls._c_name_ and d["abi"] == abi and d["interface_version"] == tgt.interface_version.name
