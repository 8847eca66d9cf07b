"""Reading and writing a leaf by its dotted path (``HintedBank.Bank0``, ``Reserved[2]``),
and the target matrix the tests walk."""
from __future__ import annotations

import re

import d3dkmddi_py as kmd

_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")

ALL_TARGETS = [(abi, v) for abi in kmd.ABIS for v in kmd.InterfaceVersion]


def target_id(abi: str, version) -> str:
    return f"{abi}-{version.name}"


def _split(path: str):
    parts = []
    for part in path.split("."):
        match = _PART.match(part)
        assert match, f"bad leaf path {path!r}"
        parts.append((match.group(1), None if match.group(2) is None else int(match.group(2))))
    return parts


def read_path(obj, path: str):
    for name, index in _split(path):
        obj = getattr(obj, name)
        if index is not None:
            obj = obj[index]
    return obj


def write_path(obj, path: str, value) -> None:
    parts = _split(path)
    for name, index in parts[:-1]:
        obj = getattr(obj, name)
        if index is not None:
            obj = obj[index]
    name, index = parts[-1]
    if index is None:
        setattr(obj, name, value)
    else:
        getattr(obj, name)[index] = value


def all_ones(leaf) -> int:
    """The value whose bits are all set: -1 for a signed leaf, the maximum otherwise."""
    return -1 if leaf.signed else (1 << leaf.bit_width) - 1


def unit_bytes(mask: int, offset: int, size: int) -> bytes:
    """A zeroed object of ``size`` bytes with ``mask`` written little-endian at ``offset``."""
    return (mask << (8 * offset)).to_bytes(size, "little")


_LEAF_FACTS = ("path", "offset", "bit_offset", "bit_width", "c_type", "size", "is_bitfield", "signed")


def leaf_facts(leaves) -> tuple:
    return tuple(tuple(getattr(leaf, k) for k in _LEAF_FACTS) for leaf in leaves)


def spec_layout(name: str, abi: str, version) -> tuple:
    """(size, alignment, leaves) of a type at a target as the table gives it (no ctypes)."""
    from d3dkmddi_py.layout import type_layout

    lay = type_layout(name, abi, int(version))
    return (lay.size, lay.align, leaf_facts(lay.leaves))


def class_layout(cls) -> tuple:
    """(size, alignment, leaves) of a ctypes class as ctypes lays it out."""
    import ctypes

    return (ctypes.sizeof(cls), ctypes.alignment(cls), leaf_facts(kmd.leaves(cls)))


def by_layout(cases) -> dict:
    """(name, spec layout) -> the (abi, version, name) cases that share it, in order: a check whose
    outcome depends only on the layout runs once per group (CPython's test_generated_structs does
    the same); ``test_layout_groups`` holds every member's class to its group's layout."""
    groups: dict = {}
    for abi, version, name in cases:
        groups.setdefault((name, spec_layout(name, abi, version)), []).append((abi, version, name))
    return groups


def distinct_layouts(type_name: str, abis=("x64", "x86")):
    """The TypeLayout of each distinct layout of a type over ``abis`` and every interface version (a check
    that reads a layout runs once per layout)."""
    from d3dkmddi_py.layout import type_layout

    seen = set()
    for abi in abis:
        for version in kmd.InterfaceVersion:
            if type_name in kmd.target(abi, version).types:
                layout = type_layout(type_name, abi, int(version))
                if (abi, layout.leaves) not in seen:
                    seen.add((abi, layout.leaves))
                    yield layout
