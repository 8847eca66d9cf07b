"""Findings and the rule registry: every rule quotes the sentence of its source it enforces.

A rule names where its sentence is (``Source``): the current reference page, an earlier copy of
the page (a sentence the current page no longer has), or a comment in the kit's header.  Its
severity follows that sentence (``severity_problem``).  Each rule's ``summary`` states its
predicate exactly, so a column-wise re-implementation (the bulk decoder) can reproduce it record
for record.
"""
from __future__ import annotations

import enum
import re

from .._records import dataclass
from ..errors import D3dkmddiError
from ..wording import plural

LEARN = "https://learn.microsoft.com/windows-hardware/drivers/ddi/"
SEGFLAGS_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentflags"
SEGDESC_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor"
SEGDESC3_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor3"
SEGDESC4_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor4"
BANKPREF_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_segmentbankpreference"
SEGPREF_PAGE = LEARN + "d3dukmdt/ns-d3dukmdt-_d3dddi_segmentpreference"
ALLOCINFO_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_allocationinfo"
ALLOCFLAGS_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_allocationinfoflags"
ALLOCFLAGS_WDDM2_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_allocationinfoflags_wddm2_0"
ALLOCFLAGS2_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-dxgk_allocationinfoflags2"
SETPRIORITY_PAGE = LEARN + "d3dumddi/nc-d3dumddi-pfnd3dddi_setprioritycb"
QUERYSEGMENTIN_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentin"
MEMSTATE_PAGE = LEARN + "d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentmemorystate"
KIT = "d3dkmddi.h (WDK 10.0.26100)"


class Severity(enum.Enum):
    """How bad a finding is: ERROR (the documented rule is broken; validate exits 1) or WARNING."""

    ERROR = "error"
    WARNING = "warning"


class SourceKind(enum.Enum):
    """Where a quoted sentence is; the value is the note printed beside a finding that rests on it."""

    PAGE = "reference page"
    EARLIER_PAGE = "earlier version of the page"
    KIT = "kit header comment"
    TRACE_NOTES = "notes on the DxgKrnl manifest and its traces"


@dataclass(frozen=True)
class Source:
    """A quoted sentence's home: ``where`` is the page's address (or the kit header and member);
    ``copy`` is the copy that holds the words, relative to the shared sources: ``docs/<page>.md``
    (the current page), ``seeds/<file>`` (an earlier copy) or the member a kit comment is on;
    ``released`` the date an earlier copy gives for itself."""

    kind: SourceKind
    where: str
    copy: str
    released: str = ""

    @property
    def note(self) -> str:
        """What a finding resting on this source says of it: nothing for the current page."""
        return "" if self.kind is SourceKind.PAGE else self.kind.value

    @property
    def citation(self) -> str:
        """Where the words are, as a finding cites them: the address, and for an earlier copy (whose address is
        today's page, which no longer has them) which copy."""
        if self.kind is SourceKind.EARLIER_PAGE:
            return f"{self.where} ({self.note}: the copy released {self.released}, {self.copy})"
        return self.where


def page(url: str) -> Source:
    """The current reference page at ``url`` (its Markdown copy is named after the address's last part)."""
    return Source(SourceKind.PAGE, url, f"docs/{url.rsplit('/', 1)[1]}.md")


def earlier(url: str, seed: str, released: str) -> Source:
    """An earlier copy of the page at ``url``, kept as ``seeds/<seed>``, released on the date it gives."""
    return Source(SourceKind.EARLIER_PAGE, url, f"seeds/{seed}", released)


def trace_notes(copy: str) -> Source:
    """The notes on the DxgKrnl provider's manifest and its traces beside it (``etw/README.md``,
    ``etw/real/README.md`` of the shared sources)."""
    return Source(SourceKind.TRACE_NOTES, f"shared/{copy}", copy)


def kit(member: str) -> Source:
    """A comment of the kit's d3dkmddi.h on ``member`` (``TYPE.member``)."""
    return Source(SourceKind.KIT, f"{KIT}, {member}", member)


@dataclass(frozen=True)
class Quote:
    """Words of a source, verbatim (tests hold each to its copy)."""

    source: Source
    text: str


@dataclass(frozen=True)
class Reference:
    """Where a rule comes from: the page and the sentence, verbatim."""

    page: str
    sentence: str


@dataclass(frozen=True)
class Rule:
    """One documented rule: ``quote`` is the sentence a finding rests on; ``also`` other sentences
    that say the same (the current page's where the quote is an earlier copy's, say); ``softened_by``
    the sentence that makes a warning of a quote that forbids."""

    rule_id: str
    severity: Severity
    quote: Quote
    summary: str  # the exact predicate, in words
    also: tuple = ()
    softened_by: Quote | None = None
    reading: str = ""  # where the rule goes past its sentence: the package's reading, said with every finding

    @property
    def source(self) -> Source:
        return self.quote.source

    @property
    def page(self) -> str:
        """The citation of the sentence (``Source.citation``): what every output prints as its page."""
        return self.quote.source.citation

    @property
    def sentence(self) -> str:
        return self.quote.text

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
        broken = plural(len(self.findings), "documented rule")
        super().__init__(f"{type_name} at {target_label} breaks {broken}:\n{lines}")


# ---- the severity policy: an error rests on a sentence that forbids or states a failure; "should" is
# a warning; a sentence that describes gives a warning, unless a sentence that forbids goes with it.

class Force(enum.Enum):
    FORBIDS = "forbids"
    SHOULD = "should"
    DESCRIBES = "describes"


# What forbids, read clause by clause once the asides in parentheses are out ("GPUs commonly do not support
# ..." is an aside, not what the sentence asks): a modal that forbids or obliges, "invalid", a failure the
# page states, an imperative "do not" that opens a clause, and "only" where it restricts what can or may be
# done ("can be set only with", "only ... can be specified").  A bare "only" ("specifies this array only
# if", "use only the segment set") describes.
FORBIDDING_WORDS = ("must", "cannot", "can not", "may not", "invalid", "not valid", "asserts", "fails to",
                    "returns an error", "is not created")
_FORBIDS = re.compile(r"\b(?:" + "|".join(w.replace(" ", r"\s+") for w in FORBIDDING_WORDS) + r")\b", re.IGNORECASE)
_IMPERATIVE = re.compile(r"^\s*(?:note\s+)?(?:do\s+not|don't|never)\b", re.IGNORECASE)
_RESTRICTED = re.compile(r"\b(?:can|may)\b.*\bonly\b|\bonly\b.*\b(?:can|may)\b|\bvalid\s+only\b|\bonly\s+valid\b",
                         re.IGNORECASE)
_SHOULD = re.compile(r"\bshould\b", re.IGNORECASE)
_ASIDE = re.compile(r"\([^()]*\)")
_CLAUSES = re.compile(r"[,;:.]\s+|[,;:]")


def sentence_force(sentence: str) -> Force:
    """What a sentence does: forbids (must, cannot, may not, invalid, not valid, asserts, fails to, returns
    an error, is not created; "do not" opening a clause; "only" with "can" or "may" in its clause), says
    "should", or describes.  A parenthesis is an aside, not what the sentence asks."""
    said = _ASIDE.sub("", sentence)
    if _FORBIDS.search(said):
        return Force.FORBIDS
    if any(_IMPERATIVE.search(c) or _RESTRICTED.search(c) for c in _CLAUSES.split(said)):
        return Force.FORBIDS
    return Force.SHOULD if _SHOULD.search(said) else Force.DESCRIBES


def severity_problem(rule: Rule) -> str | None:
    """Why a rule's severity does not follow its sentences, or None when it does: an error needs a sentence
    that forbids (its quote or one beside it) and no sentence that softens it; a warning needs no sentence
    that forbids, or the sentence that softens it.  So each rule's sentences allow exactly one severity."""
    forbids = [q for q in (rule.quote, *rule.also) if sentence_force(q.text) is Force.FORBIDS]
    if rule.severity is Severity.ERROR:
        if rule.softened_by is not None:
            return f"{rule.rule_id} is an error, but a sentence softens it (softened_by); make it a warning"
        if forbids:
            return None
        said = "says \"should\"" if sentence_force(rule.sentence) is Force.SHOULD else "describes"
        return (f"{rule.rule_id} is an error, but its sentence only {said}: an error needs a sentence that forbids "
                f"or states a failure ({', '.join(FORBIDDING_WORDS)}, do not, can or may ... only); make it a "
                f"warning")
    if forbids and rule.softened_by is None:
        return (f"{rule.rule_id} is a warning on a sentence that forbids; make it an error, or give the sentence "
                f"that makes it a warning (softened_by)")
    return None


RULES: dict[str, Rule] = {}
READING = "[reading]"  # the label of what the package reads into a source, where no source says it


def _rule(rule_id: str, severity: Severity, source: Source, sentence: str, summary: str, *, also=(),
          softened_by: Quote | None = None, reading: str = "", on_too=()) -> Rule:
    """Register a rule; ``on_too``: the pages of the other types it runs on that hold the same sentence (each
    becomes a quote of ``also``, so every struct a rule checks has its own page cited)."""
    if rule_id in RULES:
        raise RuntimeError(f"duplicate rule id {rule_id}")
    also = (*also, *(Quote(other, sentence) for other in on_too))
    r = Rule(rule_id, severity, Quote(source, sentence), summary, tuple(also), softened_by, reading)
    problem = severity_problem(r)
    if problem is not None:
        raise RuntimeError(problem)
    RULES[rule_id] = r
    return r


def with_note(rule_id: str, message: str) -> str:
    """A finding's message, ending with where its sentence is when that is not the current page, and
    with the package's reading when the rule goes past its sentence, so every output (text, JSON,
    tables) says so."""
    rule = RULES.get(rule_id)
    note = rule.source.note if rule is not None else ""
    suffix = f" ({note})" if note else ""
    if rule is not None and rule.reading:
        suffix += f" ({READING} {rule.reading})"
    return message if not suffix or message.endswith(suffix) else message + suffix


def finding(rule_id: str, field: str, value: int, message: str) -> Finding:
    r = RULES[rule_id]
    return Finding(rule_id, r.severity, field, int(value), with_note(rule_id, message), r.reference)


# ---- what meanings print beside the rules: a page's words (held to the page by the tests, like the
# rules' sentences) or, labelled, the package's own reading.
QUOTED: list = []  # every Quote a meaning prints


def quoted(source: Source, text: str) -> str:
    """``text``, recorded as words of ``source`` (a test finds them there verbatim)."""
    QUOTED.append(Quote(source, text))
    return text


def reading(text: str) -> str:
    """``text`` labelled as the package's reading: no source says it in these words."""
    return f"{READING} {text}"


SEGFLAGS = page(SEGFLAGS_PAGE)
SEGFLAGS_2017 = earlier(SEGFLAGS_PAGE, "004_514edaf6af042189.txt", "12/8/2017")
SEGDESC, SEGDESC3, SEGDESC4 = page(SEGDESC_PAGE), page(SEGDESC3_PAGE), page(SEGDESC4_PAGE)
BANKPREF, SEGPREF = page(BANKPREF_PAGE), page(SEGPREF_PAGE)
ALLOCINFO, ALLOCFLAGS, ALLOCFLAGS_WDDM2 = page(ALLOCINFO_PAGE), page(ALLOCFLAGS_PAGE), page(ALLOCFLAGS_WDDM2_PAGE)
ALLOCFLAGS2 = page(ALLOCFLAGS2_PAGE)
QUERYSEGMENTIN = page(QUERYSEGMENTIN_PAGE)
MEMSTATE = page(MEMSTATE_PAGE)

E, W = Severity.ERROR, Severity.WARNING
RESERVED_SENTENCE = "This member is reserved and should be set to zero."
INVALID_ROWS = ('The operating system does not recognize combinations in this table that are marked "invalid".')
# The earlier DXGK_SEGMENTFLAGS page's note on the power flags; the current page has only its table.
HIBERNATE_FLAGS_SENTENCE = ("PartiallyPreservedDuringHibernate and PreservedDuringHibernate cannot both be set on "
                            "the same segment, and they cannot be set on aperture segments.")

# ---- DXGK_SEGMENTFLAGS: checked on a flag word alone, at the target's interface version.
# "aperture" below means Aperture or Agp (an AGP segment is an aperture segment).
_rule("SEGFLAGS.AGP_EXCLUSIVE", E, SEGFLAGS,
      "Note that for an AGP-type aperture segment, the driver must exclusively set the Agp member of the "
      "structure in the union that DXGK_SEGMENTFLAGS contains.",
      "Agp is set and any other flag named at this version is set too (reserved bits are a separate rule).")
_rule("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", E, SEGFLAGS,
      "This member can be set only with setting the Aperture member (that is, CacheCoherent has no meaning "
      "for a memory segment).",
      "CacheCoherent is set and Aperture is not.")
_rule("SEGFLAGS.CPUVISIBLE_ON_APERTURE", W, SEGFLAGS,
      "This member has no meaning for an aperture segment, including the AGP-type aperture segment.",
      "CpuVisible is set together with Aperture or Agp.")
_rule("SEGFLAGS.POPULATED_ON_APERTURE", E, SEGFLAGS,
      "This flag is invalid and ignored on aperture segments.",
      "PopulatedFromSystemMemory is set together with Aperture or Agp.")
_rule("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", E, SEGFLAGS,
      "Do not set this flag unless the PreservedDuringStandby member is also set.",
      "PreservedDuringHibernate is set and PreservedDuringStandby is not (an 'invalid' row of the table).")
_rule("SEGFLAGS.PARTIAL_NEEDS_STANDBY", E, SEGFLAGS,
      "Do not set this flag unless the PreservedDuringStandby member is also set.",
      "PartiallyPreservedDuringHibernate is set and PreservedDuringStandby is not (an 'invalid' row).")
_rule("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", E, SEGFLAGS, INVALID_ROWS,
      "PreservedDuringHibernate and PartiallyPreservedDuringHibernate are both set (the table marks every such "
      "row 'invalid'; the earlier page said they cannot both be set).",
      also=(Quote(SEGFLAGS_2017, HIBERNATE_FLAGS_SENTENCE),))
_rule("SEGFLAGS.PARTIAL_ON_APERTURE", E, SEGFLAGS_2017, HIBERNATE_FLAGS_SENTENCE,
      "PartiallyPreservedDuringHibernate is set together with Aperture or Agp (only the earlier version of the "
      "page says so; the current page says nothing of apertures here).")
_rule("SEGFLAGS.HIBERNATE_ON_APERTURE", W, SEGFLAGS_2017, HIBERNATE_FLAGS_SENTENCE,
      "PreservedDuringHibernate is set together with Aperture or Agp. A warning: the same earlier page also says "
      "PreservedDuringStandby and PreservedDuringHibernate should both be set for aperture segments whose page "
      "table content should be preserved; the current page says neither.",
      softened_by=Quote(SEGFLAGS_2017, "These two members should also both be set for aperture segments in which "
                                       "page table content should be preserved during power transitions."))
_rule("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8", W, SEGFLAGS,
      "Supported starting with Windows 8.",
      "The interface version is below WIN8 and PreservedDuringStandby, PreservedDuringHibernate or "
      "PartiallyPreservedDuringHibernate is set (the kit declares these bits at every version; the rules about "
      "them run from WIN8).")
_rule("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", E, SEGFLAGS,
      "This flag cannot be used in combination with the CpuVisible flag.",
      "SupportsCpuHostAperture (named from WDDM2_0) and CpuVisible are both set.")
_rule("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", E, SEGFLAGS,
      "Additionally, the SupportsCpuHostAperture flag must be set.",
      "SupportsCachedCpuHostAperture is set and SupportsCpuHostAperture is not.")
_rule("SEGFLAGS.RESERVEDSYSMEM_SET", W, SEGFLAGS,
      "Reserved for system use and should not be set by the kernel mode driver.",
      "ReservedSysMem (named from WDDM2_0) is set.")
_rule("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", W, kit("DXGK_SEGMENTFLAGS.ApplicationTarget"),
      "Deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup",
      "ApplicationTarget (named from WDDM2_0) is set (the kit's comment; the reference page does not deprecate "
      "it).")
_rule("SEGFLAGS.UNDEFINED_AT_VERSION", W, SEGFLAGS, RESERVED_SENTENCE,
      "A bit that is Reserved at this interface version but names a flag at a newer version is set "
      "(for example Use64KBPages, bit 11, below WDDM2_0).")
_rule("SEGFLAGS.RESERVED_NONZERO", W, SEGFLAGS, RESERVED_SENTENCE,
      "A bit that is Reserved at every interface version is set (bits 22-31).")

# ---- Segment descriptors (DXGK_SEGMENTDESCRIPTOR, 3, 4, 5): the members around the flags.  A rule
# quoting a descriptor page runs on the descriptor types whose page says it (checks.py).
USEBANKING_READING = ("the page asks this of DXGK_SEGMENTDESCRIPTOR's members; {type_name} has members of the same "
                      "names")
_rule("DESC.USEBANKING_NEEDS_BANKS", W, SEGFLAGS,
      "The driver should also specify valid bank information in the NbOfBanks and pBankRangeTable members "
      "of the DXGK_SEGMENTDESCRIPTOR structure that describes the segment.",
      "DXGK_SEGMENTDESCRIPTOR, and DXGK_SEGMENTDESCRIPTOR3 (" + READING + " "
      + USEBANKING_READING.format(type_name="DXGK_SEGMENTDESCRIPTOR3") + "): Flags.UseBanking is set and NbOfBanks "
      "is 0, or pBankRangeTable is 0. DXGK_SEGMENTDESCRIPTOR4 and 5 have no bank members; no page asks anything of "
      "UseBanking there.")
_rule("DESC.BANKTABLE_WITHOUT_USEBANKING", W, SEGDESC,
      "The driver specifies this array only if it also sets the UseBanking bit-field flag in the Flags member.",
      "pBankRangeTable is not 0 and Flags.UseBanking is not set.",
      on_too=(SEGDESC3,))
_rule("DESC.SIZE_PAGE_MULTIPLE", E, SEGDESC,
      "This size must be a multiple of the native host page size (for example, 4 KB on the x86 architecture).",
      "DXGK_SEGMENTDESCRIPTOR or DXGK_SEGMENTDESCRIPTOR3 (the pages that say it): Size is not a multiple of "
      "4096 and Flags.Agp is not set (the size of an AGP segment is ignored).",
      on_too=(SEGDESC3,))
_rule("DESC.COMMITLIMIT_MEMORY", W, SEGDESC,
      "For a memory segment, the commit limit is always the same as the size of the segment, which is "
      "specified in the Size member.",
      "DXGK_SEGMENTDESCRIPTOR or DXGK_SEGMENTDESCRIPTOR3 (the DXGK_SEGMENTDESCRIPTOR4 page says CommitLimit "
      "applies to aperture segments only): neither Flags.Aperture nor Flags.Agp is set, and CommitLimit != Size.",
      on_too=(SEGDESC3,))
_rule("DESC.SYSMEMEND_MATCHES_PARTIAL", W, SEGDESC3,
      "The display miniport driver should set this member to a non-NULL value if the segment is partially "
      "preserved in a transition to a hibernate state, in which case  the PartiallyPreservedDuringHibernate "
      "member in the DXGK_SEGMENTFLAGS structure should be set.",
      "DXGK_SEGMENTDESCRIPTOR3 (the page that says it): Flags.PartiallyPreservedDuringHibernate is set and "
      "SystemMemoryEndAddress is 0 (the page says nothing of an address without the flag).")
_rule("DESC.RESERVED_NONZERO", W, SEGDESC3, RESERVED_SENTENCE,
      "DXGK_SEGMENTDESCRIPTOR3.Reserved is not 0.")
_rule("ADAPTER.ONE_AGP", E, SEGFLAGS,
      "Because only one AGP segment can exist, the driver should not specify the Agp bit-field flag with any "
      "other DXGK_SEGMENTFLAGS bit-field flags.",
      "More than one segment descriptor of the adapter has Flags.Agp set.")

# ---- DXGK_SEGMENTBANKPREFERENCE
_rule("BANKPREF.ID_AFTER_ZERO", W, BANKPREF,
      "The driver can specify less than four preferences by setting the lower priority preferences of bank "
      "identifiers to zero.",
      "BankN is not 0 while some BankM with M < N is 0 (a preference below a slot of no preference; the page "
      "gives fewer preferences as the lower priority ones set to zero, and says nothing of this case).")
_rule("BANKPREF.DIRECTION_WITHOUT_ID", W, BANKPREF,
      "An identifier of zero indicates that the driver has no preference.",
      "DirectionN is 1 while BankN is 0 (a direction for no preference).")

# ---- D3DDDI_SEGMENTPREFERENCE / DXGK_SEGMENTPREFERENCE
_rule("SEGPREF.ID_AFTER_ZERO", W, SEGPREF,
      "The identifier of the next highest priority preferred segment, or zero if no preferred segment is "
      "required.",
      "SegmentIdN is not 0 while some SegmentIdM with M < N is 0 (a preference below a slot of no preference; "
      "the page does not say whether it is used).")
_rule("SEGPREF.DIRECTION_WITHOUT_ID", W, SEGPREF,
      "The identifier of the highest priority preferred segment, or zero if no preferred segment is required.",
      "DirectionN is 1 while SegmentIdN is 0 (a direction for no segment).")
_rule("SEGPREF.RESERVED_NONZERO", W, SEGPREF, "Reserved (bits 31-32).",
      "Reserved (the top 2 bits, 0xC0000000) is not 0.")

# ---- DXGK_QUERYSEGMENTMEMORYSTATE (WDDM2_0+): the page has no "must" or "should"; it describes the id
_rule("MEMSTATE.SEGMENTID_ZERO", W, MEMSTATE,
      "A  1-based segment identifier of a local GPU memory segment.",
      "DriverSegmentId is 0 (a 1-based identifier names no segment as 0).")

# ---- DXGK_ALLOCATIONINFOFLAGS and DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 (the same sentences on both pages)
_rule("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", E, ALLOCFLAGS,
      "When the driver sets PermanentSysMem, the driver must also set the CpuVisible member.",
      "PermanentSysMem is set and CpuVisible is not.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", E, ALLOCFLAGS,
      "When the driver sets this member, the driver must also set the CpuVisible member.",
      "Cached is set and CpuVisible is not.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.PROTECTED_EXCLUSIVE", E, ALLOCFLAGS,
      "The driver cannot set this member in combination with the PermanentSysMem, ExistingSysMem, or "
      "ExistingKernelSysMem member.",
      "Protected is set together with PermanentSysMem, ExistingSysMem or ExistingKernelSysMem.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE", E, ALLOCFLAGS,
      "The driver cannot set ExistingSysMem in combination with the PermanentSysMem, Protected, or "
      "ExistingKernelSysMem member.",
      "ExistingSysMem is set together with PermanentSysMem, Protected or ExistingKernelSysMem.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE", E, ALLOCFLAGS,
      "The driver cannot set ExistingKernelSysMem in combination with the PermanentSysMem, Protected, or "
      "ExistingSysMem member.",
      "ExistingKernelSysMem is set together with PermanentSysMem, Protected or ExistingSysMem.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", E, ALLOCFLAGS,
      "When the display miniport driver sets HistoryBuffer, it must also set the CpuVisible flag.",
      "HistoryBuffer is set and CpuVisible is not.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", E, ALLOCFLAGS,
      "The flag can only be set when the AccessedPhysically flag is set.",
      "ExplicitResidencyNotification (named from WDDM2_0) is set and AccessedPhysically is not.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.HISTORYBUFFER_BEFORE_WDDM1_3", W, ALLOCFLAGS, "Supported starting with Windows 8.1.",
      "DXGK_ALLOCATIONINFOFLAGS below WDDM1_3 and HistoryBuffer is set (the kit declares the bit at every version; "
      "the rules about HistoryBuffer run from WDDM1_3).",
      reading="Windows 8.1 is read as WDDM1_3, the interface version of WDDM 1.3")
_rule("ALLOCFLAGS.UNDEFINED_AT_VERSION", W, ALLOCFLAGS, RESERVED_SENTENCE,
      "A bit of a member whose page says this (DXGK_ALLOC_RESERVED*, Reserved03) that is reserved at this "
      "interface version but names a flag at a newer one is set (for example FlagsWddm2 bit 13, "
      "MapApertureCpuVisible from WDDM2_9).",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.RESERVED_NONZERO", W, ALLOCFLAGS, RESERVED_SENTENCE,
      "A bit that is reserved at every interface version (DXGK_ALLOC_RESERVED*, spelled Reserved0..15 by the kit's "
      "macros, Reserved02) is set.",
      on_too=(ALLOCFLAGS_WDDM2,))
_rule("ALLOCFLAGS.SYSTEM_RESERVED_SET", W, ALLOCFLAGS, "Reserved for system use.",
      "DXGK_ALLOCATIONINFOFLAGS below WDDM2_0: a bit of Reserved (bits 15-18, AccessedPhysically to "
      "CpuVisibleOnDemand from WDDM2_0) is set.")
_rule("ALLOCFLAGS.RESERVED00_SET", W, ALLOCFLAGS_WDDM2,
      "For WDDM versions earlier than WDDM 2.1, this member is reserved and should be set to zero.",
      "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 below WDDM2_1: Reserved00 (bit 10, CreateInVpr from WDDM2_1) is set.")

# ---- DXGK_ALLOCATIONINFOFLAGS2 (WDDM3_0+)
_rule("ALLOCFLAGS2.UNDEFINED_AT_VERSION", E, ALLOCFLAGS2, "Reserved; do not use.",
      "A bit of Reserved at this version that names a flag at a newer one is set (bits 1-5 below WDDM3_2).")
_rule("ALLOCFLAGS2.RESERVED_NONZERO", E, ALLOCFLAGS2, "Reserved; do not use.",
      "A bit that is Reserved at every version is set (bits 6-31).")

# The set the allocation rules read, as their summaries say it: the page's before WDDM2_0 is two sets
IN_FORCE = ("the supported set in force (SupportedWriteSegmentSet from WDDM2_0; before, " + READING + " "
            "SupportedReadSegmentSet | SupportedWriteSegmentSet: a segment of either set supports the allocation)")

# Bit 31 of a set and segment id 31, as the summaries that read them say it
BIT31 = (READING + " bit 31 and segment id 31 are system memory from WDDM2_0 only; the kit defines "
         "DXGK_SEGMENT_ID_SYSTEMMEMORY and "
         "DXGK_SEGMENT_SET_SYSTEMMEMORY from WIN7")

# ---- DXGK_ALLOCATIONINFO, on its own
_rule("ALLOCINFO.PRIORITY_ZERO", E, ALLOCINFO,
      "Note that 0 is an invalid initial allocation priority.",
      "AllocationPriority is 0.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", E, ALLOCINFO,
      "If the driver specifies a nonzero value in PitchAlignedSize, the value must be greater than or equal to "
      "the value in the Size member.",
      "PitchAlignedSize is not 0 and PitchAlignedSize < Size.")
_rule("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", W, ALLOCINFO,
      "The size value is expanded to a multiple of the native host page size (for example, 4 KB on the x86 "
      "architecture).",
      "Size is not a multiple of 4096 (the video memory manager uses Size rounded up to 4 KB).")
_rule("ALLOCINFO.PREFERRED_NOT_SUPPORTED", E, ALLOCINFO,
      "The video memory manager asserts if the driver attempts to set preferences for unsupported segments in "
      "the PreferredSegment member.",
      "A PreferredSegment id that is not 0 is not in SupportedWriteSegmentSet; before WDDM2_0 also one that is "
      "not in SupportedReadSegmentSet (the page states the read and the write condition separately: \"The "
      "display miniport driver can set preferences only for segments that are supported for read operations\", "
      "and the same for write). Id n is bit n-1; from WDDM2_0 id 31 (DXGK_SEGMENT_ID_SYSTEMMEMORY) also matches "
      "bit 31 (DXGK_SEGMENT_SET_SYSTEMMEMORY) (" + BIT31 + ").",
      also=(Quote(ALLOCINFO, "The display miniport driver can set preferences only for segments that are supported "
                             "for read operations."),
            Quote(ALLOCINFO, "The display miniport driver can set preferences only for segments that are supported "
                             "for write operations.")))
_rule("ALLOCINFO.READ_SET_IGNORED", W, ALLOCINFO,
      "Ignoring the supported read segment set does not mean that it is no longer supported, but simply that "
      "there should no longer be a difference between these sets, and the video memory manager will be allowed "
      "to choose an appropriate segment for any allocation from a single segment set.",
      "From WDDM2_0, SupportedReadSegmentSet is not 0 and differs from SupportedWriteSegmentSet (the kit's "
      "union also names that word MmuSet, with no version guard).",
      also=(Quote(ALLOCINFO, "During surface creation the video memory manager will ignore the "
                             "SupportedReadSegmentSet value and use only the segment set provide by "
                             "SupportedWriteSegmentSet."),))

# ---- DXGK_ALLOCATIONINFO against an Adapter (skipped when no adapter is given)
_rule("ALLOCINFO.SET_UNKNOWN_SEGMENT", W, ALLOCINFO,
      "Setting bit 0 indicates that the first segment is supported, setting bit 1 indicates that the second "
      "segment is supported, and so on.",
      "SupportedWriteSegmentSet, SupportedReadSegmentSet (below WDDM2_0) or EvictionSegmentSet has bit n (n = "
      "0..30, or 31 below WDDM2_0) set and the adapter has fewer than n+1 segments (" + BIT31 + ").")
_rule("ALLOCINFO.EVICTION_APERTURE_ONLY", E, ALLOCINFO,
      "Only aperture segments can be specified by this member.",
      "EvictionSegmentSet names a segment of the adapter whose flags have neither Aperture nor Agp, or "
      "(from WDDM2_0) DXGK_SEGMENT_SET_SYSTEMMEMORY (" + BIT31 + ").")
_rule("ALLOCINFO.EVICTION_PITCHALIGNED", E, SEGFLAGS,
      "This type of segment cannot be used for eviction.",
      "EvictionSegmentSet names a segment of the adapter whose flags have PitchAlignment.")
_rule("ALLOCINFO.ALIGNMENT_64KB", E, SEGFLAGS,
      "When the driver sets the cap and an allocation can be paged-in to the segment, the allocation "
      "alignment, returned by the kernel mode driver from DXGK_ALLOCATIONINFO, must be multiple a of 64 KB.",
      "From WDDM2_0, SupportedWriteSegmentSet names a segment with Use64KBPages and Alignment % 0x10000 != 0.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", W, ALLOCINFO,
      "If the allocation is not supported in a pitch-aligned segment (graphics processing units [GPUs] "
      "commonly do not support this type of segment), the driver should set the value in PitchAlignedSize "
      "to zero.",
      "PitchAlignedSize is not 0 and no segment of " + IN_FORCE + " has PitchAlignment.")
_rule("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", W, SEGFLAGS,
      "However, the video memory manager uses the PitchAlignedSize member of DXGK_ALLOCATIONINFO to allocate "
      "resources for the segment.",
      "PitchAlignedSize is 0 and a segment of " + IN_FORCE + " has PitchAlignment.")
_rule("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", W, ALLOCINFO,
      "If this member is specified, the video memory manager uses banking information about the most "
      "preferred segment, which is specified by the SegmentId0 member of the DXGK_SEGMENTPREFERENCE "
      "structure that the PreferredSegment member specifies.",
      "HintedBank.Value is not 0 and PreferredSegment.SegmentId0 is 0, is not a segment of the adapter, or "
      "names a segment without Flags.UseBanking.")
_rule("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", W, BANKPREF,
      "Preferred-bank identifiers are one-based (that is, the first bank has an identifier of one).",
      "A HintedBank id that is not 0 is greater than NbOfBanks of the segment PreferredSegment.SegmentId0 "
      "(only when that segment uses banking and its descriptor has NbOfBanks != 0).")
_rule("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", E, ALLOCFLAGS2,
      "The allocation must be created shared and must reside only in the aperture memory segment.",
      "Flags2.ShareBackingStoreWithKmd is set and SupportedWriteSegmentSet (Flags2 exists from WDDM3_0, where the "
      "write set alone is read) names system memory or a segment of the adapter without Aperture or Agp.")

# ---- an allocation where the kernel placed it (ETW: ReportCommittedAllocation and its DCStart): semantics.Placement
_rule("ALLOCINFO.COMMITTED_OUTSIDE_SETS", W, ALLOCINFO,
      "The segments that these identifiers indicate are segments that the display miniport driver requests that "
      "the video memory manager use to page-in the allocation for write operations, regardless of performance.",
      "A Placement (an allocation committed to segment n at an offset) whose n is a segment a set names (1..31 "
      "from WDDM2_0, where 31 is DXGK_SEGMENT_ID_SYSTEMMEMORY and matches DXGK_SEGMENT_SET_SYSTEMMEMORY; 1..32 "
      "before; " + BIT31 + ") and is not in " + IN_FORCE + ". Segment 0 names no segment and is not checked.",
      also=(Quote(ALLOCINFO, "The segments that these identifiers indicate are segments that the display miniport "
                             "driver requests that the video memory manager use to page-in the allocation for read "
                             "operations, regardless of performance."),),
      reading="the page says which segments the driver requests for page-in; that a placement outside them "
              "contradicts the driver's sets is the package's reading, no page says the kernel never places an "
              "allocation elsewhere")

# Flags the kit names at every version whose page dates them later: (flag word, flag) -> (the first interface
# version, the rule that says so).  Below it a set flag is that rule's finding, the page's date is said with its
# meaning, and the rules that read the flag (whose sentences speak of a supported flag) do not run.
SUPPORTED_FROM = {
    **{("DXGK_SEGMENTFLAGS", name): ("WIN8", "SEGFLAGS.POWER_FLAGS_BEFORE_WIN8")
       for name in ("PreservedDuringStandby", "PreservedDuringHibernate", "PartiallyPreservedDuringHibernate")},
    ("DXGK_ALLOCATIONINFOFLAGS", "HistoryBuffer"): ("WDDM1_3", "ALLOCFLAGS.HISTORYBUFFER_BEFORE_WDDM1_3"),
}


def dated_text(type_name: str, flag: str) -> str:
    """What the page says of when a dated flag starts, and the version the package reads that as."""
    first, rule_id = SUPPORTED_FROM[(type_name, flag)]
    rule = RULES[rule_id]
    return f"\"{rule.sentence}\" ({first} on" + (f"; {READING} {rule.reading})" if rule.reading else ")")


# Reserved members whose page says something else of them than the rest of their flag word: (flag word,
# member) -> the rule quoting that member's own sentence.
RESERVED_MEMBER_RULES = {
    ("DXGK_ALLOCATIONINFOFLAGS", "Reserved"): "ALLOCFLAGS.SYSTEM_RESERVED_SET",
    ("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", "Reserved00"): "ALLOCFLAGS.RESERVED00_SET",
}

# ---- a DxgKrnl event that is not what its template says (etw readers): the event is kept, the trace read on
MANIFEST_NOTES, TRACE_NOTES = trace_notes("etw/README.md"), trace_notes("etw/real/README.md")
_rule("ETW.PAYLOAD_LONGER", W, TRACE_NOTES,
      "version 3 adds fields after the version-2 ones",
      "An event whose payload goes on after the last field of its template (in XML: <Data> names its template "
      "lacks): every field of the template is read and the bytes after them kept as extra_bytes (the names, as text).",
      reading="bytes after a template's last field are fields a later Windows build added, as version 3 added them "
              "after version 2's; they are kept, not named")
_rule("ETW.PAYLOAD_SHORTER", W, MANIFEST_NOTES,
      "It is reference data: the event ids, versions, tasks, opcodes, templates (field names, in-types, order) and "
      "bit maps that a trace of this provider carries.",
      "An event whose payload ends before the last field of its template (in XML: a field of its template missing "
      "or empty): the fields that fit are read, the others named as missing.",
      reading="a payload shorter than its template lacks the fields after the cut; they are named, never guessed")
_rule("ETW.NO_TEMPLATE", W, TRACE_NOTES,
      "ReportSegment (78) is version 1 in the manifest here; refuse, with the event number, a version the reader "
      "does not know.",
      "An event whose id the manifest does not have, or whose version neither the manifest nor an entry's evidence "
      "gives a template for: its payload is kept as hex (in XML, its <Data> as text), undecoded.",
      reading="what is refused is the event's fields (its payload kept as hex, its number in the report), not the "
              "trace: the event is kept and every other one read")
_rule("ETW.BOOLEAN_NOT_0_OR_1", W, TRACE_NOTES,
      "`win:Boolean` is a 32-bit value (0 false, 1 true) in a manifest event, not one byte.",
      "A win:Boolean field whose value is neither 0 nor 1: kept as its number.")
_rule("ETW.FIELD_UNREADABLE", W, MANIFEST_NOTES,
      "It is reference data: the event ids, versions, tasks, opcodes, templates (field names, in-types, order) and "
      "bit maps that a trace of this provider carries.",
      "A field whose value its template's in-type cannot hold or read (in XML: not a number, past the in-type's "
      "width, an array whose values disagree with its count, hex of odd length; in either form a UnicodeString "
      "with an unpaired surrogate): the field is named and kept as its text (bytes as hex), the others read.",
      reading="a value its in-type cannot hold is not that field's value; it is kept as given, never converted")
_rule("ETW.UNDECODED", W, MANIFEST_NOTES,
      "`<BinaryEventData>HEX</BinaryEventData>` directly under `<Event>` instead of EventData; a payload decode "
      "error gives `<ProcessingErrorData>`.",
      "A DxgKrnl event whose payload no template places: tracerpt's <BinaryEventData> or <ProcessingErrorData>, or "
      "a DxgKrnl event on a classic header (not an EVENT_HEADER): its payload is kept as hex, undecoded.")
