"""layout_diff (``d3dkmddi layout TYPE --compare A,B``) against the hand-typed tables: for every type, every
pair of ABIs at every version and every pair of versions at every ABI, the leaves that differ in offset,
bit, width or presence are the ones the tables of definitions.md give, computed from the tables alone."""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import pytest

import d3dkmddi_py as kmd
from tests.golden.tables import ALL_TYPES, VERSIONS, golden_leaves, golden_size, type_exists

TYPES = ALL_TYPES + ("LARGE_INTEGER",)


@lru_cache(maxsize=None)
def golden_places(name: str, abi: str, version: int):
    """path -> (offset, bit, width) at a target from the tables, or None when the type is not there."""
    if not type_exists(name, abi, version):
        return None
    return {g.path: (g.offset, g.bit, g.width) for g in golden_leaves(name, abi, version)}


def golden_diff(name: str, a: tuple, b: tuple):
    """(rows, same): path -> (a place or None, b place or None, aspects), and the count placed alike."""
    left, right = golden_places(name, *a) or {}, golden_places(name, *b) or {}
    rows, same = {}, 0
    for path in {**left, **right}:
        pa, pb = left.get(path), right.get(path)
        if pa is None or pb is None:
            rows[path] = (pa, pb, ("presence",))
            continue
        aspects = tuple(k for k, x, y in zip(("offset", "bit_offset", "bit_width"), pa, pb) if x != y)
        if aspects:
            rows[path] = (pa, pb, aspects)
        else:
            same += 1
    return rows, same


def _place(leaf):
    return None if leaf is None else (leaf.offset, leaf.bit_offset, leaf.bit_width)


def check(name: str, a: tuple, b: tuple) -> int:
    """Compare layout_diff with the tables for one pair; returns 1 when compared (the type exists at one)."""
    if golden_places(name, *a) is None and golden_places(name, *b) is None:
        return 0
    diff = kmd.layout_diff(name, a, b)
    want, same = golden_diff(name, a, b)
    got = {row.path: (_place(row.a), _place(row.b), row.differs) for row in diff.leaves}
    assert got == want, (name, a, b)
    assert diff.same == same, (name, a, b)
    for side, tgt in ((diff.a, a), (diff.b, b)):
        assert (side.layout is None) == (golden_places(name, *tgt) is None)
        if side.layout is not None:
            assert (side.layout.size, side.layout.align) == golden_size(name, *tgt)
    return 1


ABI_PAIRS = list(combinations(kmd.ABIS, 2))
VERSION_PAIRS = list(combinations(VERSIONS.values(), 2))


@pytest.mark.parametrize("name", TYPES)
def test_every_pair_of_abis_at_every_version(name):
    compared = sum(check(name, (x, v), (y, v)) for v in VERSIONS.values() for x, y in ABI_PAIRS)
    assert compared > 0


@pytest.mark.parametrize("name", TYPES)
def test_every_pair_of_versions_at_every_abi(name):
    compared = sum(check(name, (abi, v), (abi, w)) for abi in kmd.ABIS for v, w in VERSION_PAIRS)
    assert compared > 0


def test_x86_against_x64_of_the_allocation_info_as_typed():
    """definitions.md §5 by hand: Size is 4 bytes at +0x0c on x86, 8 at +0x10 on x64; Flags2 is x64-only."""
    diff = kmd.layout_diff("DXGK_ALLOCATIONINFO", ("x86", "WDDM3_0"), ("x64", "WDDM3_0"))
    rows = {row.path: row for row in diff.leaves}
    assert (rows["Size"].a.offset, rows["Size"].a.bit_width, rows["Size"].b.offset, rows["Size"].b.bit_width) == \
        (12, 32, 16, 64)
    assert rows["Size"].differs == ("offset", "bit_width")
    assert rows["Flags2.Value"].a is None and rows["Flags2.Value"].differs == ("presence",)
    assert "pPrivateDriverData" in rows and rows["pPrivateDriverData"].differs == ("bit_width",)


def test_versions_of_the_segment_flags_as_typed():
    """§4: PopulatedByReservedDDRByFirmware (bit 21) arrives at WDDM2_9 and Reserved shrinks to bits 22-31."""
    diff = kmd.layout_diff("DXGK_SEGMENTFLAGS", ("x64", "WDDM2_8"), ("x64", "WDDM2_9"))
    assert [(row.path, row.differs) for row in diff.leaves] == \
        [("PopulatedByReservedDDRByFirmware", ("presence",)), ("Reserved", ("bit_offset", "bit_width"))]
    assert not kmd.layout_diff("DXGK_SEGMENTFLAGS", "x86", "arm64").differs


def test_a_type_at_one_target_only_and_at_neither():
    diff = kmd.layout_diff("DXGK_SEGMENTDESCRIPTOR5", ("x64", "WDDM3_1"), ("x64", "WDDM3_2"))
    assert diff.a.layout is None and "WDDM3_2" in diff.a.absent and diff.same == 0
    assert all(row.a is None and row.differs == ("presence",) for row in diff.leaves)
    with pytest.raises(kmd.errors.UnknownType, match="WDDM3_2"):
        kmd.layout_diff("DXGK_SEGMENTDESCRIPTOR5", ("x64", "WIN7"), ("x86", "WDDM2_0"))
