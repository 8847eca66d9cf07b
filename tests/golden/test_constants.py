"""The 21 interface versions, allocation priorities, segment id constants and the two enums,
against values typed in from definitions.md §10.2, §10.6, §14, §15."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, target_id
from tests.golden.tables import PAGESIZE, PRIORITIES, SEGMENT_CONSTANTS, SEGMENTTYPE, VERSIONS


def test_the_official_interface_versions_are_the_golden_ones():
    assert [(v.name, v.value) for v in kmd.InterfaceVersion] == list(VERSIONS.items())


def test_interface_versions_ascend_with_2_1_5_and_2_1_6_between_2_1_and_2_2():
    values = list(VERSIONS.values())
    assert values == sorted(values)
    assert VERSIONS["WDDM2_1"] < VERSIONS["WDDM2_1_5"] < VERSIONS["WDDM2_1_6"] < VERSIONS["WDDM2_2"]


@pytest.mark.parametrize("name", list(VERSIONS))
def test_interface_version_constant(name):
    macro = f"DXGKDDI_INTERFACE_VERSION_{name}"
    assert getattr(kmd, macro) == VERSIONS[name]
    assert kmd.InterfaceVersion[name] == VERSIONS[name]
    for abi in kmd.ABIS:
        for version in (kmd.InterfaceVersion.VISTA, kmd.NEWEST):
            assert kmd.target(abi, version).constants[macro] == VERSIONS[name]


def test_default_interface_version_is_the_newest():
    # §15: the kit defaults DXGKDDI_INTERFACE_VERSION to its newest value (26100: WDDM3_2).
    newest = max(VERSIONS, key=VERSIONS.__getitem__)
    assert kmd.DXGKDDI_INTERFACE_VERSION == VERSIONS[newest]
    assert kmd.NEWEST == VERSIONS[newest] and kmd.NEWEST.name == newest


@pytest.mark.parametrize("name", list(PRIORITIES))
def test_allocation_priority(name):
    assert getattr(kmd, name) == PRIORITIES[name]
    for abi, version in ALL_TARGETS:
        assert kmd.target(abi, version).constants[name] == PRIORITIES[name]


def test_allocation_priorities_fit_the_uint_allocationpriority_field():
    info = kmd.DXGK_ALLOCATIONINFO()
    for value in PRIORITIES.values():
        info.AllocationPriority = value
        assert info.AllocationPriority == value


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=[target_id(a, v) for a, v in ALL_TARGETS])
def test_segment_id_constants_from_win7(abi, version):
    constants = kmd.target(abi, version).constants
    for name, value in SEGMENT_CONSTANTS.items():
        assert getattr(kmd, name) == value
        if version >= 0x2005:
            assert constants[name] == value
        else:
            assert name not in constants


def test_segment_id_systemmemory_fits_a_5_bit_segment_id():
    pref = kmd.D3DDDI_SEGMENTPREFERENCE()
    pref.SegmentId0 = kmd.DXGK_SEGMENT_ID_SYSTEMMEMORY
    assert pref.Value == 0x1F
    assert kmd.DXGK_SEGMENT_SET_SYSTEMMEMORY == 1 << 31


@pytest.mark.parametrize("enum_name,members", [("DXGK_SEGMENTTYPE", SEGMENTTYPE), ("DXGK_PAGESIZE", PAGESIZE)])
def test_enum_values_and_guard(enum_name, members):
    cls = getattr(kmd, enum_name)
    assert {m.name: m.value for m in cls} == members
    for abi, version in ALL_TARGETS:
        got = getattr(kmd.target(abi, version), enum_name, None)
        assert got is (cls if version >= 0x11007 else None)
