"""One documented sentence, one rule: for every rule in RULES a value that breaks it and one that
keeps it.  The test id carries the rule id (``SEGFLAGS.AGP_EXCLUSIVE-breaks``)."""
from __future__ import annotations

from collections import Counter

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from tests.semantics.cases import KB64, NEWEST, adapter, alloc, alloc_flags, descriptor, seg

W2 = "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"
SF = "DXGK_SEGMENTFLAGS"


def t(version=NEWEST.interface_version.name, abi="x64"):
    return kmd.target(abi, version)


def flags(value, version=NEWEST.interface_version.name, abi="x64"):
    return dict(value=value, type_name=SF, target=t(version, abi))


def word(type_name, *names, version=NEWEST.interface_version.name):
    return dict(value=alloc_flags(type_name, *names, target=t(version)), type_name=type_name, target=t(version))


def with_adapter(a, version=NEWEST.interface_version.name):
    return dict(value=a, adapter=adapter(version))


# (rule id, "breaks" | "keeps", a function returning check()'s arguments)
CASES = [
    # ---- DXGK_SEGMENTFLAGS
    ("SEGFLAGS.AGP_EXCLUSIVE", "breaks", lambda: flags(seg("Agp", "CpuVisible"))),
    ("SEGFLAGS.AGP_EXCLUSIVE", "breaks", lambda: flags(seg("Agp", "DirectFlip"), "WIN8")),
    ("SEGFLAGS.AGP_EXCLUSIVE", "keeps", lambda: flags(seg("Agp"))),
    ("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", "breaks", lambda: flags(seg("CacheCoherent"))),
    ("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", "keeps", lambda: flags(seg("Aperture", "CacheCoherent"))),
    ("SEGFLAGS.CPUVISIBLE_ON_APERTURE", "breaks", lambda: flags(seg("Aperture", "CpuVisible"))),
    ("SEGFLAGS.CPUVISIBLE_ON_APERTURE", "keeps", lambda: flags(seg("CpuVisible"))),
    ("SEGFLAGS.POPULATED_ON_APERTURE", "breaks", lambda: flags(seg("Aperture", "PopulatedFromSystemMemory"))),
    ("SEGFLAGS.POPULATED_ON_APERTURE", "keeps", lambda: flags(seg("PopulatedFromSystemMemory"))),
    ("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", "breaks", lambda: flags(seg("PreservedDuringHibernate"))),
    ("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", "keeps",
     lambda: flags(seg("PreservedDuringStandby", "PreservedDuringHibernate"))),
    ("SEGFLAGS.PARTIAL_NEEDS_STANDBY", "breaks", lambda: flags(seg("PartiallyPreservedDuringHibernate"))),
    ("SEGFLAGS.PARTIAL_NEEDS_STANDBY", "keeps",
     lambda: flags(seg("PreservedDuringStandby", "PartiallyPreservedDuringHibernate"))),
    ("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", "breaks",
     lambda: flags(seg("PreservedDuringStandby", "PreservedDuringHibernate", "PartiallyPreservedDuringHibernate"))),
    ("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", "keeps",
     lambda: flags(seg("PreservedDuringStandby", "PreservedDuringHibernate"))),
    ("SEGFLAGS.PARTIAL_ON_APERTURE", "breaks",
     lambda: flags(seg("Aperture", "PreservedDuringStandby", "PartiallyPreservedDuringHibernate"))),
    ("SEGFLAGS.PARTIAL_ON_APERTURE", "keeps",
     lambda: flags(seg("PreservedDuringStandby", "PartiallyPreservedDuringHibernate"))),
    ("SEGFLAGS.HIBERNATE_ON_APERTURE", "breaks",
     lambda: flags(seg("Aperture", "PreservedDuringStandby", "PreservedDuringHibernate"))),
    ("SEGFLAGS.HIBERNATE_ON_APERTURE", "keeps", lambda: flags(seg("Aperture", "PreservedDuringStandby"))),
    ("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8", "breaks", lambda: flags(seg("PreservedDuringStandby"), "WIN7")),
    ("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8", "keeps", lambda: flags(seg("PreservedDuringStandby"), "WIN8")),
    ("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", "breaks", lambda: flags(seg("SupportsCpuHostAperture", "CpuVisible"))),
    ("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", "keeps", lambda: flags(seg("SupportsCpuHostAperture"))),
    ("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", "breaks", lambda: flags(seg("SupportsCachedCpuHostAperture"))),
    ("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", "keeps",
     lambda: flags(seg("SupportsCachedCpuHostAperture", "SupportsCpuHostAperture"))),
    ("SEGFLAGS.RESERVEDSYSMEM_SET", "breaks", lambda: flags(seg("ReservedSysMem"))),
    ("SEGFLAGS.RESERVEDSYSMEM_SET", "keeps", lambda: flags(seg("Use64KBPages"))),
    ("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", "breaks", lambda: flags(seg("ApplicationTarget"))),
    ("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", "keeps", lambda: flags(seg("LocalBudgetGroup"))),
    ("SEGFLAGS.UNDEFINED_AT_VERSION", "breaks", lambda: flags(seg("Use64KBPages"), "WIN8")),
    ("SEGFLAGS.UNDEFINED_AT_VERSION", "breaks", lambda: flags(seg("PopulatedByReservedDDRByFirmware"), "WDDM2_8")),
    ("SEGFLAGS.UNDEFINED_AT_VERSION", "breaks", lambda: flags(seg("DirectFlip"), "WIN7", "x86")),
    ("SEGFLAGS.UNDEFINED_AT_VERSION", "keeps", lambda: flags(seg("PopulatedByReservedDDRByFirmware"), "WDDM2_9")),
    ("SEGFLAGS.RESERVED_NONZERO", "breaks", lambda: flags(1 << 31)),
    ("SEGFLAGS.RESERVED_NONZERO", "breaks", lambda: flags(1 << 22, "WIN7")),
    ("SEGFLAGS.RESERVED_NONZERO", "keeps", lambda: flags(seg("PopulatedByReservedDDRByFirmware"), "WDDM2_9")),
    # ---- segment descriptors and adapters
    ("DESC.USEBANKING_NEEDS_BANKS", "breaks", lambda: dict(value=descriptor(flags=seg("UseBanking")))),
    ("DESC.USEBANKING_NEEDS_BANKS", "breaks",
     lambda: dict(value=descriptor(flags=seg("UseBanking"), NbOfBanks=4))),
    ("DESC.USEBANKING_NEEDS_BANKS", "breaks",
     lambda: dict(value=descriptor("DXGK_SEGMENTDESCRIPTOR", flags=seg("UseBanking"), NbOfBanks=4))),
    ("DESC.USEBANKING_NEEDS_BANKS", "keeps",  # no bank members, and no page asks anything of UseBanking here
     lambda: dict(value=descriptor("DXGK_SEGMENTDESCRIPTOR4", flags=seg("UseBanking")))),
    ("DESC.USEBANKING_NEEDS_BANKS", "keeps",
     lambda: dict(value=descriptor(flags=seg("UseBanking"), NbOfBanks=4, pBankRangeTable=0x1000))),
    ("DESC.BANKTABLE_WITHOUT_USEBANKING", "breaks", lambda: dict(value=descriptor(pBankRangeTable=0x1000))),
    ("DESC.BANKTABLE_WITHOUT_USEBANKING", "keeps", lambda: dict(value=descriptor())),
    ("DESC.SIZE_PAGE_MULTIPLE", "breaks", lambda: dict(value=descriptor(Size=0x1001))),
    ("DESC.SIZE_PAGE_MULTIPLE", "breaks", lambda: dict(value=descriptor("DXGK_SEGMENTDESCRIPTOR", Size=0x800))),
    ("DESC.SIZE_PAGE_MULTIPLE", "keeps", lambda: dict(value=descriptor(Size=0x2000))),
    ("DESC.SIZE_PAGE_MULTIPLE", "keeps", lambda: dict(value=descriptor(flags=seg("Agp"), Size=0x1001))),
    ("DESC.COMMITLIMIT_MEMORY", "breaks", lambda: dict(value=descriptor(Size=0x2000, CommitLimit=0x1000))),
    ("DESC.COMMITLIMIT_MEMORY", "keeps",
     lambda: dict(value=descriptor(flags=seg("Aperture"), Size=0x2000, CommitLimit=0x1000))),
    ("DESC.SYSMEMEND_MATCHES_PARTIAL", "breaks",
     lambda: dict(value=descriptor(flags=seg("PreservedDuringStandby", "PartiallyPreservedDuringHibernate")))),
    ("DESC.SYSMEMEND_MATCHES_PARTIAL", "keeps",
     lambda: dict(value=descriptor(flags=seg("PreservedDuringStandby", "PartiallyPreservedDuringHibernate"),
                                   SystemMemoryEndAddress=0x1000))),
    ("DESC.RESERVED_NONZERO", "breaks", lambda: dict(value=descriptor(Reserved=1))),
    ("DESC.RESERVED_NONZERO", "keeps", lambda: dict(value=descriptor())),
    ("ADAPTER.ONE_AGP", "breaks", lambda: dict(value=sem.Adapter.build(seg("Agp"), seg("Agp")))),
    ("ADAPTER.ONE_AGP", "keeps", lambda: dict(value=sem.Adapter.build(seg("Agp"), seg("Aperture")))),
    # ---- preferences
    ("BANKPREF.ID_AFTER_ZERO", "breaks", lambda: dict(value=1 | 3 << 16, type_name="DXGK_SEGMENTBANKPREFERENCE")),
    ("BANKPREF.ID_AFTER_ZERO", "keeps",
     lambda: dict(value=sem.build_bank_preference([1, 3]), type_name="DXGK_SEGMENTBANKPREFERENCE")),
    ("BANKPREF.DIRECTION_WITHOUT_ID", "breaks", lambda: dict(value=0x80000000, type_name="DXGK_SEGMENTBANKPREFERENCE")),
    ("BANKPREF.DIRECTION_WITHOUT_ID", "keeps",
     lambda: dict(value=sem.build_bank_preference([(1, 1)]), type_name="DXGK_SEGMENTBANKPREFERENCE")),
    ("SEGPREF.ID_AFTER_ZERO", "breaks", lambda: dict(value=2 << 6, type_name="D3DDDI_SEGMENTPREFERENCE")),
    ("SEGPREF.ID_AFTER_ZERO", "keeps",
     lambda: dict(value=sem.build_segment_preference([1, 2]), type_name="DXGK_SEGMENTPREFERENCE")),
    ("SEGPREF.DIRECTION_WITHOUT_ID", "breaks", lambda: dict(value=1 << 5, type_name="D3DDDI_SEGMENTPREFERENCE")),
    ("SEGPREF.DIRECTION_WITHOUT_ID", "keeps",
     lambda: dict(value=sem.build_segment_preference([(1, 1)]), type_name="D3DDDI_SEGMENTPREFERENCE")),
    ("SEGPREF.RESERVED_NONZERO", "breaks", lambda: dict(value=1 | 1 << 30, type_name="D3DDDI_SEGMENTPREFERENCE")),
    ("SEGPREF.RESERVED_NONZERO", "keeps", lambda: dict(value=1, type_name="D3DDDI_SEGMENTPREFERENCE")),
    # ---- DXGK_QUERYSEGMENTMEMORYSTATE
    ("MEMSTATE.SEGMENTID_ZERO", "breaks",
     lambda: dict(value=t().DXGK_QUERYSEGMENTMEMORYSTATE(NumInvalidMemoryRanges=1))),
    ("MEMSTATE.SEGMENTID_ZERO", "keeps",
     lambda: dict(value=t().DXGK_QUERYSEGMENTMEMORYSTATE(DriverSegmentId=1, NumInvalidMemoryRanges=1))),
    # ---- allocation info flags
    ("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", "breaks", lambda: word(W2, "PermanentSysMem")),
    ("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", "keeps", lambda: word(W2, "PermanentSysMem", "CpuVisible")),
    ("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", "breaks", lambda: word("DXGK_ALLOCATIONINFOFLAGS", "Cached")),
    ("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", "keeps", lambda: word("DXGK_ALLOCATIONINFOFLAGS", "Cached", "CpuVisible")),
    ("ALLOCFLAGS.PROTECTED_EXCLUSIVE", "breaks", lambda: word(W2, "Protected", "PermanentSysMem", "CpuVisible")),
    ("ALLOCFLAGS.PROTECTED_EXCLUSIVE", "keeps", lambda: word(W2, "Protected")),
    ("ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE", "breaks", lambda: word(W2, "ExistingSysMem", "ExistingKernelSysMem")),
    ("ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE", "keeps", lambda: word(W2, "ExistingSysMem", "Cached", "CpuVisible")),
    ("ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE", "breaks",
     lambda: word(W2, "ExistingKernelSysMem", "PermanentSysMem", "CpuVisible")),
    ("ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE", "keeps", lambda: word(W2, "ExistingKernelSysMem")),
    ("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", "breaks", lambda: word(W2, "HistoryBuffer")),
    ("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", "keeps", lambda: word(W2, "HistoryBuffer", "CpuVisible")),
    ("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", "breaks",
     lambda: word(W2, "ExplicitResidencyNotification")),
    ("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", "keeps",
     lambda: word(W2, "ExplicitResidencyNotification", "AccessedPhysically")),
    ("ALLOCFLAGS.UNDEFINED_AT_VERSION", "breaks", lambda: dict(value=1 << 13, type_name=W2, target=t("WDDM2_0"))),
    ("ALLOCFLAGS.UNDEFINED_AT_VERSION", "breaks",  # in ALLOCINFO, FlagsWddm2 is in force from WDDM2_0
     lambda: dict(value=alloc(t("WDDM2_8"), FlagsWddm2=t("WDDM2_8").DXGK_ALLOCATIONINFOFLAGS_WDDM2_0(Value=1 << 13)))),
    ("ALLOCFLAGS.UNDEFINED_AT_VERSION", "keeps", lambda: dict(value=1 << 13, type_name=W2, target=t("WDDM2_9"))),
    ("ALLOCFLAGS.UNDEFINED_AT_VERSION", "keeps",  # Reserved00 has a sentence of its own
     lambda: dict(value=1 << 10, type_name=W2, target=t("WDDM2_0"))),
    ("ALLOCFLAGS.SYSTEM_RESERVED_SET", "breaks",
     lambda: dict(value=1 << 15, type_name="DXGK_ALLOCATIONINFOFLAGS", target=t("WDDM1_3"))),
    ("ALLOCFLAGS.SYSTEM_RESERVED_SET", "keeps",  # AccessedPhysically from WDDM2_0
     lambda: dict(value=1 << 15, type_name="DXGK_ALLOCATIONINFOFLAGS", target=t("WDDM2_0"))),
    ("ALLOCFLAGS.RESERVED00_SET", "breaks", lambda: dict(value=1 << 10, type_name=W2, target=t("WDDM2_0"))),
    ("ALLOCFLAGS.RESERVED00_SET", "keeps", lambda: dict(value=1 << 10, type_name=W2, target=t("WDDM2_1"))),
    ("ALLOCFLAGS.HISTORYBUFFER_BEFORE_WDDM1_3", "breaks",
     lambda: dict(value=1 << 14, type_name="DXGK_ALLOCATIONINFOFLAGS", target=t("WIN8"))),
    ("ALLOCFLAGS.HISTORYBUFFER_BEFORE_WDDM1_3", "keeps",
     lambda: dict(value=1 << 14 | 1, type_name="DXGK_ALLOCATIONINFOFLAGS", target=t("WDDM1_3"))),
    ("ALLOCFLAGS.RESERVED_NONZERO", "breaks", lambda: dict(value=1 << 31, type_name=W2)),
    ("ALLOCFLAGS.RESERVED_NONZERO", "breaks", lambda: dict(value=1 << 12, type_name=W2)),
    ("ALLOCFLAGS.RESERVED_NONZERO", "keeps", lambda: word(W2, "CpuVisibleOnDemand")),
    ("ALLOCFLAGS2.UNDEFINED_AT_VERSION", "breaks",
     lambda: dict(value=1 << 1, type_name="DXGK_ALLOCATIONINFOFLAGS2", target=t("WDDM3_0"))),
    ("ALLOCFLAGS2.UNDEFINED_AT_VERSION", "keeps",
     lambda: dict(value=1 << 1, type_name="DXGK_ALLOCATIONINFOFLAGS2", target=t("WDDM3_2"))),
    ("ALLOCFLAGS2.RESERVED_NONZERO", "breaks", lambda: dict(value=1 << 6, type_name="DXGK_ALLOCATIONINFOFLAGS2")),
    ("ALLOCFLAGS2.RESERVED_NONZERO", "keeps", lambda: dict(value=1, type_name="DXGK_ALLOCATIONINFOFLAGS2")),
    # ---- DXGK_ALLOCATIONINFO alone
    ("ALLOCINFO.PRIORITY_ZERO", "breaks", lambda: dict(value=alloc(AllocationPriority=0))),
    ("ALLOCINFO.PRIORITY_ZERO", "keeps", lambda: dict(value=alloc(AllocationPriority=1))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", "breaks", lambda: dict(value=alloc(Size=0x20000, PitchAlignedSize=KB64))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", "keeps",
     lambda: dict(value=alloc(Size=0x20000, PitchAlignedSize=0x20000))),
    ("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", "breaks", lambda: dict(value=alloc(Size=0x1001))),
    ("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", "keeps", lambda: dict(value=alloc(Size=0x2000))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "breaks", lambda: dict(value=alloc(preferred=(2,)))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "breaks",  # from WDDM2_0 the read set does not count
     lambda: dict(value=alloc(preferred=(2,), SupportedReadSegmentSet=0b111))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "keeps", lambda: dict(value=alloc(preferred=(3, 1)))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "breaks",  # an id after a zero is a preference too
     lambda: dict(value=alloc(PreferredSegment=1 | 2 << 12))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "breaks",  # before WDDM2_0 the read set must have it too
     lambda: dict(value=alloc(t("WDDM1_3"), preferred=(2,), SupportedReadSegmentSet=0b101,
                              SupportedWriteSegmentSet=0b111))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "keeps",  # before WDDM2_0: in both sets
     lambda: dict(value=alloc(t("WDDM1_3"), preferred=(2,), SupportedReadSegmentSet=0b010,
                              SupportedWriteSegmentSet=0b111))),
    ("ALLOCINFO.PREFERRED_NOT_SUPPORTED", "keeps",  # id 31 is system memory in WDDM v2
     lambda: dict(value=alloc(preferred=(31,), SupportedWriteSegmentSet=0x80000000, SupportedReadSegmentSet=0))),
    ("ALLOCINFO.READ_SET_IGNORED", "breaks", lambda: dict(value=alloc(t("WDDM3_0"), SupportedReadSegmentSet=0b001))),
    ("ALLOCINFO.READ_SET_IGNORED", "breaks", lambda: dict(value=alloc(t("WDDM2_0"), SupportedReadSegmentSet=0b111))),
    ("ALLOCINFO.READ_SET_IGNORED", "keeps", lambda: dict(value=alloc(t("WDDM3_0"), SupportedReadSegmentSet=0b101))),
    ("ALLOCINFO.READ_SET_IGNORED", "breaks",  # the MmuSet arm has no version guard: no bound at WDDM3_2
     lambda: dict(value=alloc(t("WDDM3_2"), SupportedReadSegmentSet=0b001))),
    ("ALLOCINFO.READ_SET_IGNORED", "keeps",
     lambda: dict(value=alloc(t("WDDM1_3"), SupportedReadSegmentSet=0b001))),
    # ---- DXGK_ALLOCATIONINFO against adapter(): 1 banks + 64 KB pages, 2 CPU visible + pitch, 3 aperture
    ("ALLOCINFO.SET_UNKNOWN_SEGMENT", "breaks", lambda: with_adapter(alloc(SupportedWriteSegmentSet=0b1101))),
    ("ALLOCINFO.SET_UNKNOWN_SEGMENT", "breaks", lambda: with_adapter(alloc(EvictionSegmentSet=0b1100))),
    ("ALLOCINFO.SET_UNKNOWN_SEGMENT", "keeps", lambda: with_adapter(alloc(SupportedWriteSegmentSet=0x80000005))),
    ("ALLOCINFO.EVICTION_APERTURE_ONLY", "breaks", lambda: with_adapter(alloc(EvictionSegmentSet=0b001))),
    ("ALLOCINFO.EVICTION_APERTURE_ONLY", "keeps", lambda: with_adapter(alloc(EvictionSegmentSet=0b100))),
    ("ALLOCINFO.EVICTION_APERTURE_ONLY", "keeps", lambda: with_adapter(alloc(EvictionSegmentSet=0))),
    ("ALLOCINFO.EVICTION_PITCHALIGNED", "breaks", lambda: with_adapter(alloc(EvictionSegmentSet=0b010))),
    ("ALLOCINFO.EVICTION_PITCHALIGNED", "keeps", lambda: with_adapter(alloc(EvictionSegmentSet=0b100))),
    ("ALLOCINFO.ALIGNMENT_64KB", "breaks", lambda: with_adapter(alloc(Alignment=0x1000))),
    ("ALLOCINFO.ALIGNMENT_64KB", "keeps",
     lambda: with_adapter(alloc(Alignment=0x1000, preferred=(3,), SupportedWriteSegmentSet=0b100,
                                SupportedReadSegmentSet=0b100))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", "breaks", lambda: with_adapter(alloc(PitchAlignedSize=0x20000))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", "keeps",
     lambda: with_adapter(alloc(PitchAlignedSize=0x20000, SupportedWriteSegmentSet=0b111, SupportedReadSegmentSet=0b111))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", "breaks",
     lambda: with_adapter(alloc(SupportedWriteSegmentSet=0b111, SupportedReadSegmentSet=0b111))),
    ("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", "keeps", lambda: with_adapter(alloc())),
    ("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", "breaks", lambda: with_adapter(alloc(preferred=(3, 1), banks=(1,)))),
    ("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", "keeps", lambda: with_adapter(alloc(preferred=(1, 3), banks=(1,)))),
    ("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", "breaks", lambda: with_adapter(alloc(banks=(2, 5)))),
    ("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", "breaks",  # an id after a zero is a bank id too
     lambda: with_adapter(alloc(HintedBank=1 | 6 << 16))),
    ("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", "keeps", lambda: with_adapter(alloc(banks=(4, (1, 1))))),
    ("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", "breaks",
     lambda: with_adapter(alloc(flags2=("ShareBackingStoreWithKmd",)))),
    ("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", "keeps",
     lambda: with_adapter(alloc(flags2=("ShareBackingStoreWithKmd",), preferred=(3,), SupportedWriteSegmentSet=0b100,
                                SupportedReadSegmentSet=0b100))),
    # ---- an allocation where the kernel placed it: alloc()'s sets are 0b101 (segments 1 and 3)
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "breaks", lambda: dict(value=sem.Placement(alloc(), 2, 0x10000))),
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "breaks",  # before WDDM2_0 either set holds it: here neither
     lambda: dict(value=sem.Placement(alloc(t("WDDM1_3"), SupportedReadSegmentSet=0b001,
                                            SupportedWriteSegmentSet=0b010), 3))),
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "keeps", lambda: dict(value=sem.Placement(alloc(), 3, 0x10000))),
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "keeps",  # the read set of WDDM1_3 counts
     lambda: dict(value=sem.Placement(alloc(t("WDDM1_3"), SupportedReadSegmentSet=0b100,
                                            SupportedWriteSegmentSet=0b001), 3))),
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "keeps",  # segment 31 is system memory from WDDM2_0
     lambda: dict(value=sem.Placement(alloc(SupportedWriteSegmentSet=0x80000001), 31))),
    ("ALLOCINFO.COMMITTED_OUTSIDE_SETS", "keeps", lambda: dict(value=sem.Placement(alloc(), 0))),  # no segment
]


def _params():
    seen = Counter()
    for rule_id, outcome, make in CASES:
        seen[(rule_id, outcome)] += 1
        n = seen[(rule_id, outcome)]
        yield pytest.param(rule_id, outcome, make, id=f"{rule_id}-{outcome}" + (f"-{n}" if n > 1 else ""))


@pytest.mark.parametrize("rule_id, outcome, make", list(_params()))
def test_rule(rule_id, outcome, make):
    args = make()
    value = args.pop("value")
    type_name = args.pop("type_name", None)
    found = sem.check(value, type_name, **args)
    ids = [f.rule_id for f in found]
    if outcome == "breaks":
        assert rule_id in ids, f"{rule_id} not reported; got {ids}"
        f = next(f for f in found if f.rule_id == rule_id)
        rule = sem.RULES[rule_id]
        assert f.severity is rule.severity and f.reference == sem.Reference(rule.page, rule.sentence)
        assert f.field and f.message
    else:
        assert rule_id not in ids, [str(f) for f in found if f.rule_id == rule_id]


def test_every_rule_has_a_breaking_and_a_keeping_case():
    """A trace's own rules (ETW.*: an event not as its template says) are the readers', not a record's: their
    cases are traces, in tests/etw/test_odd_rules.py, which holds every one of them to both."""
    covered = {(r, o) for r, o, _ in CASES}
    missing = [f"{r}-{o}" for r in sem.RULES for o in ("breaks", "keeps") if (r, o) not in covered
               and not r.startswith("ETW.")]
    assert not missing, missing
    assert {r for r, _, _ in CASES} <= set(sem.RULES)


def test_the_reference_values_are_clean():
    """The baseline values the table edits break nothing at all (so each 'breaks' is the edit's doing)."""
    for version in ("WDDM1_3", "WDDM2_0", "WDDM3_0", "WDDM3_2"):
        tgt = t(version)
        assert sem.check(adapter(version)) == []
        assert sem.check(alloc(tgt), adapter=adapter(version)) == []
    assert sem.check(alloc(t("WDDM3_2", "x86")), adapter=adapter("WDDM3_2", "x86")) == []


def test_findings_name_the_field_with_its_nesting():
    f = sem.check(descriptor(flags=seg("Agp", "CpuVisible")))
    assert [x.field for x in f if x.rule_id == "SEGFLAGS.AGP_EXCLUSIVE"] == ["Flags.Agp"]
    f = sem.check(sem.Adapter.build(seg("Aperture"), seg("Agp", "CpuVisible")))
    assert "segments[1].Flags.Agp" in [x.field for x in f]
    f = sem.check(alloc(banks=()) if False else alloc(HintedBank=1 | 3 << 16))
    assert [(x.field, x.value) for x in f if x.rule_id == "BANKPREF.ID_AFTER_ZERO"] == [("HintedBank.Bank2", 3)]
    f = sem.check(alloc(flags=("HistoryBuffer",)))
    assert [x.field for x in f if x.rule_id.startswith("ALLOCFLAGS")] == ["FlagsWddm2.HistoryBuffer"]
    f = sem.check(alloc(t("WDDM1_3"), flags=("Cached",)))
    assert [x.field for x in f if x.rule_id.startswith("ALLOCFLAGS")] == ["Flags.Cached"]


def test_undefined_at_version_names_the_flag_and_its_first_version():
    (f,) = sem.check(seg("Use64KBPages"), SF, target=t("WIN8"))
    assert f.rule_id == "SEGFLAGS.UNDEFINED_AT_VERSION" and f.field == "Reserved" and f.value == 1 << 11
    assert "Use64KBPages from WDDM2_0" in f.message and "WIN8" in f.message


def test_priority_zero_message_suggests_normal():
    (f,) = [x for x in sem.check(alloc(AllocationPriority=0)) if x.rule_id == "ALLOCINFO.PRIORITY_ZERO"]
    assert "D3DDDI_ALLOCATIONPRIORITY_NORMAL" in f.message and f.field == "AllocationPriority"


def test_flags2_rules_do_not_run_where_flags2_does_not_exist():
    a = alloc(t("WDDM3_2", "x86"))
    assert not any(leaf.path.startswith("Flags2") for leaf in kmd.leaves(a))
    assert sem.check(a, adapter=adapter("WDDM3_2", "x86")) == []


def test_the_flag_view_follows_the_interface_version():
    bit10 = 1 << 10  # UseAlternateVA in Flags, CreateInVpr (or Reserved00) in FlagsWddm2
    old = alloc(t("WDDM1_3"), Flags=t("WDDM1_3").DXGK_ALLOCATIONINFOFLAGS())
    old.Flags.Value = bit10
    assert sem.check(old) == []  # UseAlternateVA is a plain flag before WDDM2_0
    new = alloc(t("WDDM2_0"))
    new.FlagsWddm2.Value = bit10
    assert [f.rule_id for f in sem.check(new)] == ["ALLOCFLAGS.RESERVED00_SET"]  # Reserved00 at WDDM2_0
