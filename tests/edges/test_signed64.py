"""Signed 64-bit fields (issue 9): PHYSICAL_ADDRESS / LARGE_INTEGER.QuadPart and every LONGLONG.

Direct assignment stays exact and says what is wrong with the unsigned spelling C code uses;
Adapter.build takes that spelling and stores its two's complement, as the C compiler does."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.errors import InvalidFieldValue
from d3dkmddi_py.semantics import Adapter, SegmentFlag


def test_the_unsigned_spelling_is_refused_with_its_signed_value():
    address = kmd.target("x86", "WDDM2_0").PHYSICAL_ADDRESS()
    with pytest.raises(InvalidFieldValue) as caught:
        address.QuadPart = 0xFFFFFFFE00000000
    message = str(caught.value)
    assert "LARGE_INTEGER.QuadPart" in message
    assert ("does not fit: LONGLONG is signed 64-bit; 0xFFFFFFFE00000000 is -0x200000000 as LONGLONG" in message)
    assert message.endswith("; assign -0x200000000 (or use .LowPart/.HighPart)")
    assert "in 64 bits" not in message and bytes(address) == bytes(8)  # nothing was written
    address.QuadPart = -0x200000000
    assert (address.LowPart, address.HighPart) == (0, -2)


def test_a_signed_field_without_halves_gets_the_same_explanation():
    address = kmd.PHYSICAL_ADDRESS()
    with pytest.raises(InvalidFieldValue, match=r"HighPart = 4294967295 does not fit: LONG is signed 32-bit; "
                                                r"0xFFFFFFFF is -0x1 as LONG .*; assign -0x1$"):
        address.HighPart = 0xFFFFFFFF
    with pytest.raises(InvalidFieldValue, match=r"QuadPart = 18446744073709551616 does not fit in 64 bits"):
        address.QuadPart = 1 << 64  # not a 64-bit pattern at all


def test_adapter_build_takes_an_address_as_c_writes_it():
    adapter = Adapter.build({"Flags": SegmentFlag.CpuVisible, "BaseAddress": 0xFFFFFFFE00000000,
                             "CpuTranslatedAddress": 0xFFFFFFFF_FFFFFFFF},
                            {"Flags": SegmentFlag.Aperture, "BaseAddress": 0x7FFFFFFF_FFFFFFFF},
                            abi="x64", interface_version="WDDM2_0")
    first, second = adapter.segments
    assert first.BaseAddress.QuadPart == -0x200000000
    assert bytes(first.BaseAddress) == (0xFFFFFFFE00000000).to_bytes(8, "little")
    assert first.CpuTranslatedAddress.QuadPart == -1
    assert second.BaseAddress.QuadPart == 0x7FFFFFFF_FFFFFFFF
    same = Adapter.build({"Flags": SegmentFlag.CpuVisible, "BaseAddress": -0x200000000,
                          "CpuTranslatedAddress": -1}, {"Flags": SegmentFlag.Aperture, "BaseAddress": 0x7FFFFFFF_FFFFFFFF},
                         abi="x64", interface_version="WDDM2_0")
    assert same == adapter
    with pytest.raises(InvalidFieldValue, match="does not fit in 64 bits"):
        Adapter.build({"BaseAddress": 1 << 64})
    with pytest.raises(InvalidFieldValue, match="is negative"):
        Adapter.build({"Size": -1})  # unsigned members are not reinterpreted
