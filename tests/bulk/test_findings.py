"""Column-wise validation equals semantics.check record by record, on random data."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk
from d3dkmddi_py.bulk import decode_array
from d3dkmddi_py.bulk import validate_array
from d3dkmddi_py.bulk.findings import VECTORIZED, findings
from d3dkmddi_py.semantics import RULES, Adapter, SegmentFlag, check

from .helpers import without_numpy

EXAMPLES = 150  # per test below: the example count of the property tests
TARGETS = [(abi, v) for abi in kmd.ABIS for v in kmd.InterfaceVersion]


def biased_blob(seed: int, size: int, count: int, zero_share: float) -> bytes:
    """Random records where many bytes are 0 and many words sparse, so rules both fire and hold."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size * count, dtype=np.uint8)
    raw[rng.random(raw.size) < zero_share] = 0
    sparse = rng.random(raw.size) < 0.3  # keep one bit of some bytes: single flags, small ids
    raw[sparse] &= (1 << rng.integers(0, 8, int(sparse.sum()))).astype(np.uint8)
    return raw.tobytes()


def expected(cls, blob: bytes, count: int, adapter=None) -> dict:
    size = cls._layout_.size
    t = kmd.target(*cls._target_)
    out = {}
    for i in range(count):
        found = check(blob[i * size:(i + 1) * size], cls._c_name_, target=t, adapter=adapter)
        if found:
            out[i] = sorted((f.rule_id, f.field, f.value) for f in found)
    return out


def severities_match(table) -> bool:
    return all(RULES[r].severity.value == s for r, s in zip(table.rule_id.tolist(), table.severity.tolist()))


# (type, target) pairs where the type exists: DXGK_ALLOCATIONINFOFLAGS2 only from WDDM3_0 on 64-bit
CASES = [(name, where) for name in VECTORIZED for where in TARGETS if name in kmd.target(*where).types]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32 - 1), count=st.integers(1, 40),
       zero_share=st.sampled_from([0.0, 0.3, 0.6, 0.9]))
def test_vectorized_findings_equal_check_per_record(case, seed, count, zero_share):
    type_name, where = case
    cls = kmd.target(*where).types[type_name]
    blob = biased_blob(seed, cls._layout_.size, count, zero_share)
    table = findings(decode_array(cls, blob))
    assert table.by_record() == expected(cls, blob, count)
    assert severities_match(table)


def random_adapter(rng, abi, version) -> Adapter:
    flags = [SegmentFlag.Aperture, SegmentFlag.UseBanking, SegmentFlag.PitchAlignment, SegmentFlag.CpuVisible,
             SegmentFlag.Agp, 0]
    if version >= kmd.InterfaceVersion.WDDM2_0:
        flags.append(SegmentFlag.Use64KBPages)
    specs = []
    for _ in range(int(rng.integers(0, 7))):
        word = 0
        for flag in flags:
            if rng.random() < 0.35:
                word |= int(flag)
        spec = {"Flags": word}
        if version >= kmd.InterfaceVersion.WIN8 and rng.random() < 0.8:
            spec.update(NbOfBanks=int(rng.integers(0, 5)), pBankRangeTable=int(rng.integers(0, 2)) * 0x1000)
        specs.append(spec)
    descriptor = "DXGK_SEGMENTDESCRIPTOR3" if version >= kmd.InterfaceVersion.WIN8 else "DXGK_SEGMENTDESCRIPTOR"
    return Adapter.build(*specs, abi=abi, interface_version=version, descriptor=descriptor)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(TARGETS), seed=st.integers(0, 2**32 - 1), count=st.integers(1, 40),
       zero_share=st.sampled_from([0.3, 0.6, 0.9]))
def test_vectorized_allocation_info_against_an_adapter_equals_check(where, seed, count, zero_share):
    t = kmd.target(*where)
    cls = t.DXGK_ALLOCATIONINFO
    rng = np.random.default_rng(seed)
    adapter = random_adapter(rng, t.abi, t.interface_version)
    blob = biased_blob(seed, cls._layout_.size, count, zero_share)
    table = findings(decode_array(cls, blob), adapter=adapter)
    assert table.by_record() == expected(cls, blob, count, adapter)


def test_the_sample_allocations_against_the_sample_adapter():
    from d3dkmddi_py import samples

    adapter = samples.sample_adapter()
    blob = samples.build.allocation_bytes()
    cls = samples.sample_target().DXGK_ALLOCATIONINFO
    count = len(blob) // cls._layout_.size
    table = validate_array(cls, blob, adapter=adapter)
    assert table.by_record() == expected(cls, blob, count, adapter)
    assert len(table) > 0  # the sample breaks documented rules on purpose


def test_rules_fire_in_the_random_data_used_above():
    """Guard against a vacuous property: the biased data does trigger most vectorized rules."""
    seen = set()
    for i, (abi, version) in enumerate(TARGETS[::3]):
        t = kmd.target(abi, version)
        for name in VECTORIZED:
            cls = t.types.get(name)
            if cls is not None:
                seen |= set(findings(decode_array(cls, biased_blob(i, cls._layout_.size, 400, 0.6))).counts())
    prefixes = ("SEGFLAGS.", "BANKPREF.", "SEGPREF.", "ALLOCFLAGS.", "ALLOCFLAGS2.", "ALLOCINFO.")
    wanted = {r for r in RULES if r.startswith(prefixes)} - {
        # need an adapter (covered by the adapter property test)
        "ALLOCINFO.SET_UNKNOWN_SEGMENT", "ALLOCINFO.EVICTION_APERTURE_ONLY", "ALLOCINFO.EVICTION_PITCHALIGNED",
        "ALLOCINFO.ALIGNMENT_64KB", "ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", "ALLOCINFO.PITCHALIGNEDSIZE_MISSING",
        "ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", "ALLOCINFO.HINTEDBANK_OUT_OF_RANGE",
        "ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY",
        # checks a semantics.Placement, not a record (its cases: tests/semantics/test_rules.py)
        "ALLOCINFO.COMMITTED_OUTSIDE_SETS"}
    assert wanted - seen == set()


def test_chunks_number_records_from_the_start_of_the_range():
    cls = kmd.DXGK_SEGMENTFLAGS
    blob = biased_blob(7, 4, 100, 0.3)
    whole = findings(decode_array(cls, blob)).rows()
    pieces = [row for chunk in bulk.iter_chunks(cls, blob, chunk_records=17) for row in findings(chunk).rows()]
    assert pieces == whole and whole


def test_types_without_vectorized_rules_and_pure_columns_use_check(monkeypatch):
    t = kmd.target("x64", "WDDM2_9")
    cls = t.DXGK_SEGMENTDESCRIPTOR3
    blob = biased_blob(3, cls._layout_.size, 12, 0.5)
    assert findings(decode_array(cls, blob)).by_record() == expected(cls, blob, 12)
    flags = t.DXGK_ALLOCATIONINFO
    blob = biased_blob(4, flags._layout_.size, 12, 0.5)
    without_numpy(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bulk.NumpyMissingWarning)
        pure = decode_array(flags, blob)
    assert findings(pure).by_record() == expected(flags, blob, 12)


def test_adapter_at_another_target_is_refused():
    adapter = Adapter.build(SegmentFlag.Aperture, abi="x86", interface_version="WDDM2_0")
    with pytest.raises(kmd.UnsupportedTarget, match="same target"):
        validate_array("DXGK_ALLOCATIONINFO", bytes(88), adapter=adapter)


def test_findings_table_to_pandas():
    table = validate_array("DXGK_SEGMENTFLAGS", np.array([0x3, 0x0, 0x10], dtype="<u4").tobytes())
    frame = table.to_pandas()
    assert list(frame.columns) == ["record", "rule_id", "severity", "field", "value"]
    assert ("SEGFLAGS.AGP_EXCLUSIVE", "Agp") in set(zip(frame.rule_id, frame.field))
    assert set(frame.record) == {0, 2}
