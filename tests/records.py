"""Records the format tests share: targets, a flag word, a finding, and every struct of a target as
columns of records."""
from __future__ import annotations

import random

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import columns_of_bytes
from d3dkmddi_py.layout import type_layout
from d3dkmddi_py.semantics import Finding, Reference, Severity

X64 = kmd.target("x64", "WDDM3_2")
TARGETS = [kmd.target(abi, v) for abi in kmd.ABIS for v in ("WIN7", "WDDM2_0", "WDDM3_2")]


def flags(value, tgt=X64):
    return tgt.DXGK_SEGMENTFLAGS.from_buffer_copy(value.to_bytes(4, "little"))


def finding(field, rule="R.TEST", severity=Severity.ERROR):
    return Finding(rule, severity, field, 1, f"{field} is wrong", Reference("page", "The sentence."))


def struct_columns(tgt, count: int = 40):
    """(layout, bytes, columns) of ``count`` records of every struct of a target: bytes mostly zeros, ones
    and all-ones (the values flags and enums take), some random; seeded by the target."""
    rng = random.Random(tgt.label)
    for name in sorted(tgt.types):
        if name.startswith("_") or not hasattr(tgt.types[name], "_leaves_"):
            continue
        layout = type_layout(name, tgt.abi, int(tgt.interface_version))
        data = bytes(rng.choice((0, 0, 1, 0xFF, rng.randrange(256))) for _ in range(layout.size * count))
        yield layout, data, columns_of_bytes(layout, data)
