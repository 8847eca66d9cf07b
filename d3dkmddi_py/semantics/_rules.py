"""Findings and the rule registry: every rule quotes the one sentence of the reference it enforces.

Each rule's ``summary`` states its predicate exactly, so a column-wise re-implementation
(the bulk decoder) can reproduce it record for record.
"""
from __future__ import annotations

import enum

from .._records import dataclass
from ..errors import D3dkmddiError

LEARN = "https://learn.microsoft.com/windows-hardware/drivers/ddi/"
SEGFLAGS_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentflags"
SEGDESC_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor"
SEGDESC3_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor3"
BANKPREF_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentbankpreference"
SEGPREF_PAGE = LEARN + "d3dukmdt/ns-d3dukmdt-_d3dddi_segmentpreference"
ALLOCINFO_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_allocationinfo"
ALLOCFLAGS_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_allocationinfoflags"
ALLOCFLAGS2_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-dxgk_allocationinfoflags2"
SETPRIORITY_PAGE = LEARN + "d3dumddi/nc-d3dumddi-pfnd3dddi_setprioritycb"
HEADER_26100 = "d3dkmddi.h (WDK 10.0.26100), comment on DXGK_SEGMENTFLAGS.ApplicationTarget"


class Severity(enum.Enum):
    """How bad a finding is: ERROR (the documented rule is broken; validate exits 1) or WARNING."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Reference:
    """Where a rule comes from: the page and the sentence, verbatim."""

    page: str
    sentence: str


@dataclass(frozen=True)
class Rule:
    rule_id: str
    severity: Severity
    page: str
    sentence: str
    summary: str  # the exact predicate, in words

    @property
    def reference(self) -> Reference:
        return Reference(self.page, self.sentence)


@dataclass(frozen=True)
class Finding:
    """One broken rule: which, how bad, where (dotted leaf path), the value, and why."""

    rule_id: str
    severity: Severity
    field: str
    value: int
    message: str
    reference: Reference

    def __str__(self) -> str:
        return f"{self.severity.value.upper()} {self.rule_id} {self.field}={self.value:#x}: {self.message}"


class ValidationError(D3dkmddiError, ValueError):
    """Raised by ``validate``: every finding of one value, collected."""

    def __init__(self, type_name: str, target_label: str, findings):
        self.type_name, self.target_label, self.findings = type_name, target_label, tuple(findings)
        lines = "\n".join(f"  {f}" for f in self.findings)
        super().__init__(f"{type_name} at {target_label} breaks {len(self.findings)} documented rule(s):\n{lines}")


RULES: dict[str, Rule] = {}


def _rule(rule_id: str, severity: Severity, page: str, sentence: str, summary: str) -> Rule:
    if rule_id in RULES:
        raise RuntimeError(f"duplicate rule id {rule_id}")
    RULES[rule_id] = r = Rule(rule_id, severity, page, sentence, summary)
    return r


def finding(rule_id: str, field: str, value: int, message: str) -> Finding:
    r = RULES[rule_id]
    return Finding(rule_id, r.severity, field, int(value), message, r.reference)


E, W = Severity.ERROR, Severity.WARNING
RESERVED_SENTENCE = "This member is reserved and should be set to zero."

# ---- DXGK_SEGMENTFLAGS: checked on a flag word alone, at the target's interface version.
# "aperture" below means Aperture or Agp (an AGP segment is an aperture segment).
_rule("SEGFLAGS.AGP_EXCLUSIVE", E, SEGFLAGS_PAGE,
      "Note that for an AGP-type aperture segment, the driver must exclusively set the Agp member of the "
      "structure in the union that DXGK_SEGMENTFLAGS contains.",
      "Agp is set and any other flag named at this version is set too (reserved bits are a separate rule).")
_rule("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", E, SEGFLAGS_PAGE,
      "This member can be set only with setting the Aperture member (that is, CacheCoherent has no meaning "
      "for a memory segment).",
      "CacheCoherent is set and Aperture is not.")
_rule("SEGFLAGS.CPUVISIBLE_ON_APERTURE", W, SEGFLAGS_PAGE,
      "This member has no meaning for an aperture segment, including the AGP-type aperture segment.",
      "CpuVisible is set together with Aperture or Agp.")
_rule("SEGFLAGS.POPULATED_ON_APERTURE", W, SEGFLAGS_PAGE,
      "This flag is invalid and ignored on aperture segments.",
      "PopulatedFromSystemMemory is set together with Aperture or Agp.")
_rule("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", E, SEGFLAGS_PAGE,
      "Do not set this flag unless the PreservedDuringStandby member is also set.",
      "PreservedDuringHibernate is set and PreservedDuringStandby is not (an 'invalid' row of the table).")
_rule("SEGFLAGS.PARTIAL_NEEDS_STANDBY", E, SEGFLAGS_PAGE,
      "Do not set this flag unless the PreservedDuringStandby member is also set.",
      "PartiallyPreservedDuringHibernate is set and PreservedDuringStandby is not (an 'invalid' row).")
_rule("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", E, SEGFLAGS_PAGE,
      "PartiallyPreservedDuringHibernate and PreservedDuringHibernate cannot both be set on the same segment, "
      "and they cannot be set on aperture segments.",
      "PreservedDuringHibernate and PartiallyPreservedDuringHibernate are both set.")
_rule("SEGFLAGS.PARTIAL_ON_APERTURE", E, SEGFLAGS_PAGE,
      "PartiallyPreservedDuringHibernate and PreservedDuringHibernate cannot both be set on the same segment, "
      "and they cannot be set on aperture segments.",
      "PartiallyPreservedDuringHibernate is set together with Aperture or Agp.")
_rule("SEGFLAGS.HIBERNATE_ON_APERTURE", W, SEGFLAGS_PAGE,
      "PartiallyPreservedDuringHibernate and PreservedDuringHibernate cannot both be set on the same segment, "
      "and they cannot be set on aperture segments.",
      "PreservedDuringHibernate is set together with Aperture or Agp. A warning, not an error: the same page "
      "also says PreservedDuringStandby and PreservedDuringHibernate 'should also both be set for aperture "
      "segments in which page table content should be preserved during power transitions'.")
_rule("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8", W, SEGFLAGS_PAGE,
      "Supported starting with Windows 8.",
      "The interface version is below WIN8 and PreservedDuringStandby, PreservedDuringHibernate or "
      "PartiallyPreservedDuringHibernate is set (the kit declares these bits at every version).")
_rule("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", E, SEGFLAGS_PAGE,
      "This flag cannot be used in combination with the CpuVisible flag.",
      "SupportsCpuHostAperture (named from WDDM2_0) and CpuVisible are both set.")
_rule("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", E, SEGFLAGS_PAGE,
      "Additionally, the SupportsCpuHostAperture flag must be set.",
      "SupportsCachedCpuHostAperture is set and SupportsCpuHostAperture is not.")
_rule("SEGFLAGS.RESERVEDSYSMEM_SET", E, SEGFLAGS_PAGE,
      "Reserved for system use and should not be set by the kernel mode driver.",
      "ReservedSysMem (named from WDDM2_0) is set.")
_rule("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", W, HEADER_26100,
      "Deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup flags.",
      "ApplicationTarget (named from WDDM2_0) is set.")
_rule("SEGFLAGS.UNDEFINED_AT_VERSION", E, SEGFLAGS_PAGE, RESERVED_SENTENCE,
      "A bit that is Reserved at this interface version but names a flag at a newer version is set "
      "(for example Use64KBPages, bit 11, below WDDM2_0).")
_rule("SEGFLAGS.RESERVED_NONZERO", E, SEGFLAGS_PAGE, RESERVED_SENTENCE,
      "A bit that is Reserved at every interface version is set (bits 22-31).")

# ---- Segment descriptors (DXGK_SEGMENTDESCRIPTOR, 3, 4, 5): the members around the flags.
_rule("DESC.USEBANKING_NEEDS_BANKS", E, SEGFLAGS_PAGE,
      "The driver should also specify valid bank information in the NbOfBanks and pBankRangeTable members "
      "of the DXGK_SEGMENTDESCRIPTOR structure that describes the segment.",
      "Flags.UseBanking is set and the descriptor has no NbOfBanks member (DESCRIPTOR4, DESCRIPTOR5), "
      "or NbOfBanks is 0, or pBankRangeTable is 0.")
_rule("DESC.BANKTABLE_WITHOUT_USEBANKING", W, SEGDESC_PAGE,
      "The driver specifies this array only if it also sets the UseBanking bit-field flag in the Flags member.",
      "pBankRangeTable is not 0 and Flags.UseBanking is not set.")
_rule("DESC.SIZE_PAGE_MULTIPLE", E, SEGDESC_PAGE,
      "This size must be a multiple of the native host page size (for example, 4 KB on the x86 architecture).",
      "Size is not a multiple of 4096 and Flags.Agp is not set (the size of an AGP segment is ignored).")
_rule("DESC.COMMITLIMIT_MEMORY", W, SEGDESC_PAGE,
      "For a memory segment, the commit limit is always the same as the size of the segment, which is "
      "specified in the Size member.",
      "The descriptor has CommitLimit, neither Flags.Aperture nor Flags.Agp is set, and CommitLimit != Size.")
_rule("DESC.SYSMEMEND_MATCHES_PARTIAL", W, SEGDESC3_PAGE,
      "The display miniport driver should set this member to a non-NULL value if the segment is partially "
      "preserved in a transition to a hibernate state, in which case  the PartiallyPreservedDuringHibernate "
      "member in the DXGK_SEGMENTFLAGS structure should be set.",
      "The descriptor has SystemMemoryEndAddress and (SystemMemoryEndAddress != 0) differs from "
      "Flags.PartiallyPreservedDuringHibernate.")
_rule("DESC.RESERVED_NONZERO", E, SEGDESC3_PAGE, RESERVED_SENTENCE,
      "DXGK_SEGMENTDESCRIPTOR3.Reserved is not 0.")
_rule("ADAPTER.ONE_AGP", E, SEGFLAGS_PAGE,
      "Because only one AGP segment can exist, the driver should not specify the Agp bit-field flag with any "
      "other DXGK_SEGMENTFLAGS bit-field flags.",
      "More than one segment descriptor of the adapter has Flags.Agp set.")

# ---- DXGK_SEGMENTBANKPREFERENCE
_rule("BANKPREF.ID_AFTER_ZERO", W, BANKPREF_PAGE,
      "The driver can specify less than four preferences by setting the lower priority preferences of bank "
      "identifiers to zero.",
      "BankN is not 0 while some BankM with M < N is 0 (the list ends at the first zero, so BankN is unused).")
_rule("BANKPREF.DIRECTION_WITHOUT_ID", W, BANKPREF_PAGE,
      "An identifier of zero indicates that the driver has no preference.",
      "DirectionN is 1 while BankN is 0 (a direction for no bank).")

# ---- D3DDDI_SEGMENTPREFERENCE / DXGK_SEGMENTPREFERENCE
_rule("SEGPREF.ID_AFTER_ZERO", W, SEGPREF_PAGE,
      "The identifier of the next highest priority preferred segment, or zero if no preferred segment is "
      "required.",
      "SegmentIdN is not 0 while some SegmentIdM with M < N is 0 (the list ends at the first zero).")
_rule("SEGPREF.DIRECTION_WITHOUT_ID", W, SEGPREF_PAGE,
      "The identifier of the highest priority preferred segment, or zero if no preferred segment is required.",
      "DirectionN is 1 while SegmentIdN is 0 (a direction for no segment).")
_rule("SEGPREF.RESERVED_NONZERO", E, SEGPREF_PAGE, "Reserved (bits 31-32).",
      "Reserved (the top 2 bits, 0xC0000000) is not 0.")

# ---- DXGK_ALLOCATIONINFOFLAGS and DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 (same sentences on both pages)
_rule("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", E, ALLOCFLAGS_PAGE,
      "When the driver sets PermanentSysMem, the driver must also set the CpuVisible member.",
      "PermanentSysMem is set and CpuVisible is not.")
_rule("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", E, ALLOCFLAGS_PAGE,
      "When the driver sets this member, the driver must also set the CpuVisible member.",
      "Cached is set and CpuVisible is not.")
_rule("ALLOCFLAGS.PROTECTED_EXCLUSIVE", E, ALLOCFLAGS_PAGE,
      "The driver cannot set this member in combination with the PermanentSysMem, ExistingSysMem, or "
      "ExistingKernelSysMem member.",
      "Protected is set together with PermanentSysMem, ExistingSysMem or ExistingKernelSysMem.")
_rule("ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE", E, ALLOCFLAGS_PAGE,
      "The driver cannot set ExistingSysMem in combination with the PermanentSysMem, Protected, or "
      "ExistingKernelSysMem member.",
      "ExistingSysMem is set together with PermanentSysMem, Protected or ExistingKernelSysMem.")
_rule("ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE", E, ALLOCFLAGS_PAGE,
      "The driver cannot set ExistingKernelSysMem in combination with the PermanentSysMem, Protected, or "
      "ExistingSysMem member.",
      "ExistingKernelSysMem is set together with PermanentSysMem, Protected or ExistingSysMem.")
_rule("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", E, ALLOCFLAGS_PAGE,
      "When the display miniport driver sets HistoryBuffer, it must also set the CpuVisible flag.",
      "HistoryBuffer is set and CpuVisible is not.")
_rule("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", E, ALLOCFLAGS_PAGE,
      "The flag can only be set when the AccessedPhysically flag is set.",
      "ExplicitResidencyNotification (named from WDDM2_0) is set and AccessedPhysically is not.")
_rule("ALLOCFLAGS.UNDEFINED_AT_VERSION", E, ALLOCFLAGS_PAGE, RESERVED_SENTENCE,
      "A bit that is reserved at this interface version but names a flag at a newer one is set "
      "(for example FlagsWddm2 bit 10, CreateInVpr from WDDM2_1).")
_rule("ALLOCFLAGS.RESERVED_NONZERO", E, ALLOCFLAGS_PAGE, RESERVED_SENTENCE,
      "A bit that is reserved at every interface version (Reserved*, DXGK_ALLOC_RESERVED*) is set.")

# ---- DXGK_ALLOCATIONINFOFLAGS2 (WDDM3_0+)
_rule("ALLOCFLAGS2.UNDEFINED_AT_VERSION", E, ALLOCFLAGS2_PAGE, "Reserved; do not use.",
      "A bit of Reserved at this version that names a flag at a newer one is set (bits 1-5 below WDDM3_2).")
_rule("ALLOCFLAGS2.RESERVED_NONZERO", E, ALLOCFLAGS2_PAGE, "Reserved; do not use.",
      "A bit that is Reserved at every version is set (bits 6-31).")

# ---- DXGK_ALLOCATIONINFO, on its own
_rule("ALLOCINFO.PRIORITY_ZERO", E, ALLOCINFO_PAGE,
      "Note that 0 is an invalid initial allocation priority.",
      "AllocationPriority is 0.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", E, ALLOCINFO_PAGE,
      "If the driver specifies a nonzero value in PitchAlignedSize, the value must be greater than or equal to "
      "the value in the Size member.",
      "PitchAlignedSize is not 0 and PitchAlignedSize < Size.")
_rule("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", W, ALLOCINFO_PAGE,
      "The size value is expanded to a multiple of the native host page size (for example, 4 KB on the x86 "
      "architecture).",
      "Size is not a multiple of 4096 (the video memory manager uses Size rounded up to 4 KB).")
_rule("ALLOCINFO.PREFERRED_NOT_SUPPORTED", E, ALLOCINFO_PAGE,
      "The video memory manager asserts if the driver attempts to set preferences for unsupported segments in "
      "the PreferredSegment member.",
      "A PreferredSegment id (before the first 0) is not in the effective supported set: "
      "SupportedWriteSegmentSet from WDDM2_0, SupportedReadSegmentSet | SupportedWriteSegmentSet before. "
      "Id n is bit n-1; from WDDM2_0 id 31 (DXGK_SEGMENT_ID_SYSTEMMEMORY) also matches bit 31 "
      "(DXGK_SEGMENT_SET_SYSTEMMEMORY).")
_rule("ALLOCINFO.READ_SET_IGNORED", W, ALLOCINFO_PAGE,
      "During surface creation the video memory manager will ignore the SupportedReadSegmentSet value and use "
      "only the segment set provide by SupportedWriteSegmentSet.",
      "WDDM2_0 <= version < WDDM3_2, SupportedReadSegmentSet is not 0 and differs from "
      "SupportedWriteSegmentSet (from WDDM3_2 the same word may be MmuSet).")

# ---- DXGK_ALLOCATIONINFO against an Adapter (skipped when no adapter is given)
_rule("ALLOCINFO.SET_UNKNOWN_SEGMENT", E, ALLOCINFO_PAGE,
      "Setting bit 0 indicates that the first segment is supported, setting bit 1 indicates that the second "
      "segment is supported, and so on.",
      "The effective supported set or EvictionSegmentSet has bit n (n = 0..30, or 31 below WDDM2_0) set and "
      "the adapter has fewer than n+1 segments.")
_rule("ALLOCINFO.EVICTION_APERTURE_ONLY", E, ALLOCINFO_PAGE,
      "Only aperture segments can be specified by this member.",
      "EvictionSegmentSet names a segment of the adapter whose flags have neither Aperture nor Agp, or "
      "(from WDDM2_0) DXGK_SEGMENT_SET_SYSTEMMEMORY.")
_rule("ALLOCINFO.EVICTION_PITCHALIGNED", E, SEGFLAGS_PAGE,
      "This type of segment cannot be used for eviction.",
      "EvictionSegmentSet names a segment of the adapter whose flags have PitchAlignment.")
_rule("ALLOCINFO.ALIGNMENT_64KB", E, SEGFLAGS_PAGE,
      "When the driver sets the cap and an allocation can be paged-in to the segment, the allocation "
      "alignment, returned by the kernel mode driver from DXGK_ALLOCATIONINFO, must be multiple a of 64 KB.",
      "The effective supported set names a segment with Use64KBPages and Alignment % 0x10000 != 0.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", W, ALLOCINFO_PAGE,
      "The size, in bytes, of the allocation when it is located in a pitch-aligned segment, which is "
      "specified by the PitchAlignment bit-field flag in the Flags member of the DXGK_SEGMENTDESCRIPTOR "
      "structure for the segment.",
      "PitchAlignedSize is not 0 and no segment of the effective supported set has PitchAlignment.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", W, ALLOCINFO_PAGE,
      "If the allocation is not supported in a pitch-aligned segment (graphics processing units [GPUs] "
      "commonly do not support this type of segment), the driver should set the value in PitchAlignedSize "
      "to zero.",
      "PitchAlignedSize is 0 and a segment of the effective supported set has PitchAlignment.")
_rule("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", W, ALLOCINFO_PAGE,
      "If this member is specified, the video memory manager uses banking information about the most "
      "preferred segment, which is specified by the SegmentId0 member of the DXGK_SEGMENTPREFERENCE "
      "structure that the PreferredSegment member specifies.",
      "HintedBank.Value is not 0 and PreferredSegment.SegmentId0 is 0, is not a segment of the adapter, or "
      "names a segment without Flags.UseBanking.")
_rule("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", E, BANKPREF_PAGE,
      "Preferred-bank identifiers are one-based (that is, the first bank has an identifier of one).",
      "A HintedBank id (before the first 0) is greater than NbOfBanks of the segment PreferredSegment.SegmentId0 "
      "(only when that segment uses banking and its descriptor has NbOfBanks != 0).")
_rule("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", E, ALLOCFLAGS2_PAGE,
      "The allocation must be created shared and must reside only in the aperture memory segment.",
      "Flags2.ShareBackingStoreWithKmd is set and the effective supported set names system memory or a "
      "segment of the adapter without Aperture or Agp.")
