"""Golden: the flag types and the mapping against the values the issue (and the manifest) print."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import etw
from d3dkmddi_py.etw import catalog
from d3dkmddi_py.etw.model import mapping
from d3dkmddi_py.etw.catalog import adapter_allocation, report_segment

# Typed by hand from the issue / the manifest's AllocationFlags and UsageFlags bit maps.
ALLOCATION_FLAGS = {
    "CpuVisible": 0x1, "PermanentSysMem": 0x2, "Cached": 0x4, "Protected": 0x8, "ExistingSysMem": 0x10,
    "ExistingKernelSysMem": 0x20, "FromEndOfSegment": 0x40, "Swizzled": 0x80, "Overlay": 0x100, "Capture": 0x200,
    "UseAlternateVA": 0x400, "SynchronousPaging": 0x800, "LinkMirrored": 0x1000, "LinkInstanced": 0x2000,
    "CrossAdapter": 0x100000, "SwapChainBackBuffer": 0x200000, "SectionSupplied": 0x400000, "CddCached": 0x800000,
    "CddWriteCombined": 0x1000000, "DoDPrimary": 0x2000000, "CddBitmap": 0x4000000, "PinnedBackingStore": 0x8000000,
    "PagingBuffer": 0x10000000, "Shareable": 0x20000000, "Primary": 0x40000000, "ManagedPrimary": 0x80000000,
}
USAGE_FLAGS = {"PrivateFormat": 0x1, "Swizzled": 0x2, "MipMap": 0x4, "Cube": 0x8, "Volume": 0x10, "Vertex": 0x20,
               "Index": 0x40}


def test_allocation_flag_matches_the_bit_map():
    assert {m.name: m.value for m in etw.AllocationFlag} == ALLOCATION_FLAGS


def test_usage_flag_matches_the_bit_map():
    assert {m.name: m.value for m in etw.UsageFlag} == USAGE_FLAGS


def test_shared_bits_are_the_mirror_names_at_the_same_positions():
    t = kmd.target("x64", "WDDM1_3")
    flags = t.DXGK_ALLOCATIONINFOFLAGS()
    for m in etw.AllocationFlag:
        if m & etw.SHARED_FLAGS:
            setattr(flags, m.name, 1)
            assert flags.Value == m.value, m.name
            flags.Value = 0
    assert etw.SHARED_FLAGS == 0x3FFF and etw.KERNEL_FLAGS == 0xFFF00000


def test_mapping_names_every_template_field_once():
    for event, versions in catalog.TEMPLATES.items():
        mapped = [m.field for m in mapping.MAPPING if m.event == event]
        expected = {n for fields in versions.values() for n, _t in fields}
        assert sorted(mapped) == sorted(expected)
        assert all(m.reason for m in mapping.MAPPING)


def test_mapping_targets_the_members_the_issue_names():
    pairs = {(m.field, m.mirror) for m in mapping.MAPPING if m.event == "AdapterAllocation"}
    for pair in [("allocSize", "Size"), ("ulAlignment", "Alignment"), ("dwReadSegment", "SupportedReadSegmentSet"),
                 ("dwWriteSegment", "SupportedWriteSegmentSet"), ("dwEvictionSegment", "EvictionSegmentSet"),
                 ("PreferredSegment", "PreferredSegment.Value"), ("HintedBank", "HintedBank.Value"),
                 ("Priority", "AllocationPriority"), ("UsageFlags", "v1.Flags.Value"), ("Format", "v1.Format")]:
        assert pair in pairs


def test_every_rule_has_an_applicability_and_a_reason():
    assert set(etw.RULES_APPLY) == set(kmd.RULES)
    assert all(reason in etw.REASONS for _ok, reason in etw.RULES_APPLY.values())
    assert not etw.applies("ALLOCFLAGS.RESERVED_NONZERO") and etw.applies("ALLOCINFO.SET_UNKNOWN_SEGMENT")
    with pytest.raises(ValueError, match="is not a rule id"):  # a typo is not "does not apply"
        etw.applies("NO.SUCH_RULE")


def test_packing_writes_each_value_where_the_mapping_says():
    pk = etw.packer("x64", int(kmd.InterfaceVersion.WDDM2_0))
    fields = {n: 0 for n, _t in adapter_allocation.FIELDS}
    fields.update(allocSize=0x123000, ulAlignment=0x10000, dwReadSegment=3, dwWriteSegment=5, PreferredSegment=0x41,
                  HintedBank=0x201, dwEvictionSegment=4, Priority=0xA0000000,
                  Flags=etw.AllocationFlag.CpuVisible | etw.AllocationFlag.Swizzled | etw.AllocationFlag.Primary)
    info = kmd.target("x64", "WDDM2_0").DXGK_ALLOCATIONINFO.from_buffer_copy(pk.record("DXGK_ALLOCATIONINFO", fields))
    assert (info.Size, info.Alignment, info.SupportedReadSegmentSet, info.SupportedWriteSegmentSet) == \
        (0x123000, 0x10000, 3, 5)
    assert (info.PreferredSegment.Value, info.HintedBank.Value, info.EvictionSegmentSet, info.AllocationPriority) == \
        (0x41, 0x201, 4, 0xA0000000)
    # Swizzled has no FlagsWddm2 member and Primary is kernel state: only CpuVisible reaches the mirror
    assert info.FlagsWddm2.Value == 0x1
    before = etw.packer("x64", int(kmd.InterfaceVersion.WDDM1_3))
    info13 = kmd.target("x64", "WDDM1_3").DXGK_ALLOCATIONINFO.from_buffer_copy(before.record("DXGK_ALLOCATIONINFO", fields))
    assert info13.Flags.Value == 0x81  # CpuVisible and Swizzled by name in the old view


def test_segment_packing_and_the_descriptor_type():
    pk = etw.packer("x64", int(kmd.InterfaceVersion.WIN8))
    fields = {n: 0 for n, _t in report_segment.FIELDS}
    fields.update(BaseAddress=0x100000000, CpuTranslatedAddress=0xE0000000, Size=1 << 28, NbOfBanks=4, Flags=0x808,
                  CommitLimit=1 << 27, SystemMemoryEndAddress=0x5000)
    d = kmd.target("x64", "WIN8").DXGK_SEGMENTDESCRIPTOR3.from_buffer_copy(pk.record("segment descriptor", fields))
    assert (d.BaseAddress.QuadPart, d.CpuTranslatedAddress.QuadPart, d.Size, d.NbOfBanks, d.Flags.Value,
            d.CommitLimit, d.SystemMemoryEndAddress) == (0x100000000, 0xE0000000, 1 << 28, 4, 0x808, 1 << 27, 0x5000)
    assert etw.descriptor_type(kmd.InterfaceVersion.WIN7) == "DXGK_SEGMENTDESCRIPTOR"
