"""Records the format tests share: targets, a flag word, a finding."""
from __future__ import annotations

import d3dkmddi_py as kmd
from d3dkmddi_py.semantics import Finding, Reference, Severity

X64 = kmd.target("x64", "WDDM3_2")
TARGETS = [kmd.target(abi, v) for abi in kmd.ABIS for v in ("WIN7", "WDDM2_0", "WDDM3_2")]


def flags(value, tgt=X64):
    return tgt.DXGK_SEGMENTFLAGS.from_buffer_copy(value.to_bytes(4, "little"))


def finding(field, rule="R.TEST", severity=Severity.ERROR):
    return Finding(rule, severity, field, 1, f"{field} is wrong", Reference("page", "The sentence."))
