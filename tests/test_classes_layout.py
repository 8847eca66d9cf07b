"""The ctypes classes against the layout computed from the table (layout.py): ctypes has its
own bitfield and alignment rules, and the classes must not let them leak through.  Every
target, with natural classes and with the forced-padding fallback."""
from __future__ import annotations

import ctypes
import sys

import pytest

import d3dkmddi_py as kmd
from tests.golden.access import ALL_TARGETS, all_ones, target_id, write_path

CASES = [(abi, v, padded) for abi, v in ALL_TARGETS for padded in (False, True)]
IDS = [f"{target_id(abi, v)}-{'padded' if padded else 'natural'}" for abi, v, padded in CASES]


def _target(abi, version, padded):
    return kmd.Target(abi, version, force_padding=True) if padded else kmd.target(abi, version)


def _classes(t):
    seen = {}
    for cls in t.types.values():
        if hasattr(cls, "_fields_"):
            seen[id(cls)] = cls
    return list(seen.values())


@pytest.mark.parametrize("abi,version,padded", CASES, ids=IDS)
def test_every_leaf_set_to_all_ones_writes_exactly_its_mask(abi, version, padded):
    checked = 0
    for cls in _classes(_target(abi, version, padded)):
        size = ctypes.sizeof(cls)
        for leaf in kmd.leaves(cls):
            obj = cls()
            write_path(obj, leaf.path, all_ones(leaf))
            expected = (leaf.mask << (8 * leaf.offset)).to_bytes(size, "little")
            assert bytes(obj) == expected, (cls._c_name_, leaf.path)
            assert leaf.offset + leaf.size <= size
            checked += 1
    assert checked >= 300  # x86 VISTA, the smallest target, has 300 leaves


@pytest.mark.parametrize("abi,version,padded", CASES, ids=IDS)
def test_sizeof_and_alignment_are_the_layouts(abi, version, padded):
    natural = 0
    for cls in _classes(_target(abi, version, padded)):
        layout = cls._layout_
        assert ctypes.sizeof(cls) == layout.size, cls._c_name_
        if getattr(cls, "_pack_", None) is None:
            assert ctypes.alignment(cls) == layout.align, cls._c_name_
            natural += 1
        else:
            assert padded or _host_disagrees(), cls._c_name_
    if padded:
        assert natural == 0
    elif not _host_disagrees():
        # A little-endian host whose ctypes aligns 8-byte integers to 8 (x86_64, arm64, 64-bit
        # Windows) needs no fallback: every class is natural, so the alignment check ran for all.
        assert natural == len(_classes(kmd.target(abi, version)))


def _host_disagrees() -> bool:
    """True on hosts where some natural ctypes layout cannot match MSVC (e.g. 32-bit Linux)."""
    return ctypes.alignment(ctypes.c_uint64) != 8 or sys.byteorder != "little"


@pytest.mark.parametrize("abi,version", ALL_TARGETS, ids=[target_id(a, v) for a, v in ALL_TARGETS])
def test_natural_and_padded_classes_agree_on_every_leaf(abi, version):
    natural, padded = kmd.target(abi, version), kmd.Target(abi, version, force_padding=True)
    for name, cls in natural.types.items():
        if hasattr(cls, "_fields_"):
            other = padded.types[name]
            assert kmd.leaves(other) == kmd.leaves(cls)
            assert other._layout_ == cls._layout_
