"""to_dict / from_dict: the dict's shape, padding and reserved bits kept, and edits that contradict."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.errors import InvalidFieldType, InvalidFieldValue
from tests.semantics.cases import NEWEST, alloc


def test_dict_shape_for_a_flag_word_keeps_reserved_bits():
    d = sem.to_dict(0xFFC00001, "DXGK_SEGMENTFLAGS")
    assert d["type"] == "DXGK_SEGMENTFLAGS" and d["abi"] == "x64" and d["interface_version"] == NEWEST.interface_version.name
    assert d["fields"]["Aperture"] == 1 and d["fields"]["Reserved"] == 0x3FF and d["fields"]["Value"] == 0xFFC00001
    assert d["padding"] == {}
    assert sem.from_dict(d).Value == 0xFFC00001


def test_padding_of_x64_allocation_info_is_kept():
    # x64 DXGK_ALLOCATIONINFO: hAllocation fills 0x38-0x3F, the flag union 0x40-0x43, then 4 bytes of
    # padding (0x44-0x47) before the pointer at 0x48.  Only x64 at < WDDM3_0 also pads the tail (0x54-0x57).
    blob = bytearray(bytes(alloc()))
    blob[0x44:0x48] = b"\x01\x02\x03\x04"
    value = NEWEST.DXGK_ALLOCATIONINFO.from_buffer_copy(bytes(blob))
    d = sem.to_dict(value)
    assert d["padding"] == {"0x44": "01020304"}
    assert sem.to_dict(alloc(kmd.target("x64", "WDDM2_9")))["padding"] == {"0x44": "00000000", "0x54": "00000000"}
    assert bytes(sem.from_dict(d)) == bytes(blob)


def test_x86_allocation_info_has_no_padding_and_no_flags2():
    d = sem.to_dict(alloc(kmd.target("x86", "WDDM3_2")))
    assert d["padding"] == {} and not any(k.startswith("Flags2") for k in d["fields"])


def test_a_partial_dict_means_zero_elsewhere():
    v = sem.from_dict({"fields": {"Flags.Agp": 1}}, "DXGK_SEGMENTDESCRIPTOR3", target=("x86", "WIN8"))
    assert v.Flags.Value == 2 and v.Size == 0 and type(v)._target_ == ("x86", 0x300E)


def test_contradicting_arms_are_refused_with_both_names():
    d = sem.to_dict(0, "DXGK_SEGMENTFLAGS")
    d["fields"]["Agp"] = 1  # Value still says 0
    with pytest.raises(InvalidFieldValue) as err:
        sem.from_dict(d)
    assert err.value.field == "Agp" and "Value" in str(err.value)


def test_bad_dicts_are_refused():
    with pytest.raises(InvalidFieldValue, match=r"fields\[NoSuchLeaf\] = 1 names no leaf"):  # a ValueError
        sem.from_dict({"fields": {"NoSuchLeaf": 1}}, "DXGK_SEGMENTFLAGS")
    with pytest.raises(InvalidFieldValue, match="7 bits"):
        sem.from_dict({"fields": {"Bank0": 128}}, "DXGK_SEGMENTBANKPREFERENCE")
    with pytest.raises(InvalidFieldType):
        sem.from_dict({"fields": {"Bank0": "1"}}, "DXGK_SEGMENTBANKPREFERENCE")
    with pytest.raises(InvalidFieldValue):
        sem.from_dict({"type": "DXGK_SEGMENTFLAGS", "fields": {}}, "DXGK_SEGMENTBANKPREFERENCE")
    with pytest.raises(InvalidFieldValue, match="padding"):
        sem.from_dict({"fields": {}, "padding": {"0x0": "00"}}, "DXGK_SEGMENTFLAGS")
    with pytest.raises(InvalidFieldValue, match="type_name"):
        sem.from_dict({"fields": {}})


def test_signed_leaves_round_trip():
    d = NEWEST.DXGK_SEGMENTDESCRIPTOR()
    d.BaseAddress.QuadPart = -2
    out = sem.to_dict(d)
    # a 64-bit field is JSON hex: its two's-complement bit pattern
    assert out["fields"]["BaseAddress.QuadPart"] == "0xfffffffffffffffe" and out["fields"]["BaseAddress.HighPart"] == -1
    assert bytes(sem.from_dict(out)) == bytes(d)


def test_to_dict_of_an_enum_is_refused_as_from_dict_refuses_it():
    """The public-call fuzz (seed 19) found to_dict(0, "DXGK_PAGESIZE") escaping as AttributeError."""
    from d3dkmddi_py.errors import NotAType

    with pytest.raises(NotAType, match="DXGK_PAGESIZE is an enum"):
        kmd.to_dict(0, "DXGK_PAGESIZE")
