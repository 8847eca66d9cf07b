"""Every documented rule, written once over named fields (see ``engine`` for the Check, its
expressions and the two runners), grouped by family: segment flags, reserved bits, allocation
flags, preferences, descriptors, allocation info, and allocation info against an adapter.

The registry (``CHECKS``) is keyed by C type name; ``checks_for`` compiles a type's checks for
one target and adapter (version gates and adapter facts become constants) and caches them.
"""
from __future__ import annotations

from .._records import dataclass
from functools import lru_cache

from .._spec import CONSTS, ENUMS
from .._spec.base import PAGE_SIZE
from ..layout import TypeLayout, record_leaves, typedef_layout
from ..errors import UnsupportedTarget
from ..names import InterfaceVersion, parse_version
from ._effective import effective_mask, in_force_text, page_rounded
from ._view import View, describe_flags, ever_named_bits, flag_names, named_bits
from .segments import SegmentFlag, describe_segment_set, segment_set, system_memory_reading
from ._rules import READING, RESERVED_MEMBER_RULES, RULES, SUPPORTED_FROM, USEBANKING_READING
from .engine import NOT, Check, Cols, column_messages, leaves_read, run_columns, run_record  # noqa: F401 (public here too)
from ..wording import numbered, plural

SYSTEM_MEMORY_BIT = CONSTS["DXGK_SEGMENT_SET_SYSTEMMEMORY"].value.bit_length() - 1  # bit 31
SYSTEM_MEMORY_ID = CONSTS["DXGK_SEGMENT_ID_SYSTEMMEMORY"].value
ALIGN_64KB = PAGE_SIZE["x64"] << dict(ENUMS["DXGK_PAGESIZE"].values)["DXGK_PAGESIZE_64KB"]


# ---------------------------------------------------------------- flag words

# The rule family of each flag word's reserved bits ({family}.UNDEFINED_AT_VERSION, .RESERVED_NONZERO)
RESERVED_FAMILY = {"DXGK_SEGMENTFLAGS": "SEGFLAGS", "DXGK_ALLOCATIONINFOFLAGS": "ALLOCFLAGS",
                   "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0": "ALLOCFLAGS", "DXGK_ALLOCATIONINFOFLAGS2": "ALLOCFLAGS2"}


def reserved_rule(type_name: str, member: str, newer: bool) -> str:
    """The rule of a set reserved bit of a flag word's ``member`` (a leaf path, "" for bits no leaf names):
    the member's own rule where its page says something else of it (``RESERVED_MEMBER_RULES``), else
    {family}.UNDEFINED_AT_VERSION for a bit a newer version names (``newer``), {family}.RESERVED_NONZERO."""
    special = RESERVED_MEMBER_RULES.get((type_name, member))
    if special is not None:
        return special
    return f"{RESERVED_FAMILY[type_name]}.{'UNDEFINED_AT_VERSION' if newer else 'RESERVED_NONZERO'}"


def reserved_sentence(type_name: str, member: str = "") -> str:
    """What the page of a flag word says of its reserved ``member`` (the sentence its reserved rule quotes)."""
    return RULES[reserved_rule(type_name, member, False)].sentence


def _reserved(type_name: str, abi: str, version: int) -> list:
    """The reserved-bit rules of a flag word (``reserved_rule``): each rule's set bits reported once, at the
    leaf holding the lowest of them."""
    _named, reserved = named_bits(type_name, abi, version)
    ever = ever_named_bits(type_name, abi)
    leaves = [leaf for leaf in record_leaves(typedef_layout(type_name, abi, version)) if leaf.bit_width < 32]
    out = []
    for newer, mask, message in (
            (True, reserved & ever, "{names} set at {version}, where the bit is reserved; Value = {Value:#010x}"),
            (False, reserved & ~ever & 0xFFFFFFFF, "reserved bits {bits:#010x} are set (Value = {Value:#010x})")):
        groups: dict = {}  # rule id -> [(path, the leaf's bits of mask)], "Value" for bits no leaf holds
        claimed = 0
        for leaf in leaves:
            leaf_mask = leaf.mask & ~claimed
            claimed |= leaf_mask
            if leaf_mask & mask:
                groups.setdefault(reserved_rule(type_name, leaf.path, newer), []).append((leaf.path, leaf_mask & mask))
        if mask & ~claimed:
            groups.setdefault(reserved_rule(type_name, "", newer), []).append(("Value", mask & ~claimed))
        for rule_id, members in groups.items():
            rule_mask = 0
            for _path, bits in members:
                rule_mask |= bits
            if newer:
                params = (lambda r, m=rule_mask: {"names": _newer_names(type_name, abi, r["Value"] & m),
                                                  "version": InterfaceVersion(version).name})
            else:
                params = (lambda r, m=rule_mask: {"bits": r["Value"] & m})
            for path, leaf_mask in members:
                def when(r, m=rule_mask, lm=leaf_mask):
                    bits = r["Value"] & m
                    return (bits & (~bits + 1) & lm) != 0  # the lowest set bit falls in this leaf

                out.append(Check(rule_id, path, when, message, lambda r, m=rule_mask: r["Value"] & m, params,
                                 columnar=not newer))
    return out


def _newer_names(type_name: str, abi: str, bits: int) -> str:
    newest = flag_names(type_name, abi, int(max(InterfaceVersion)))
    names = []
    for bit in range(32):
        if bits >> bit & 1:
            names.append(f"bit {bit} ({_first_version_naming(type_name, abi, 1 << bit, newest)})")
    return ", ".join(names)


def _first_version_naming(type_name: str, abi: str, mask: int, newest: dict) -> str:
    for v in InterfaceVersion:
        if named_bits(type_name, abi, int(v))[0] & mask:
            return f"{flag_names(type_name, abi, int(v)).get(mask, newest.get(mask, '?'))} from {v.name}"
    return "?"


@lru_cache(maxsize=None)
def _segment_flags(abi: str, version: int) -> tuple:
    t = "DXGK_SEGMENTFLAGS"
    named, _reserved_bits = named_bits(t, abi, version)
    agp = next(m for m, n in flag_names(t, abi, version).items() if n == "Agp")
    others = named & ~agp

    def aperture(r):
        return r.bit("Aperture") | r.bit("Agp")

    def standby(r):
        return r.bit("PreservedDuringStandby")

    def hibernate(r):
        return r.bit("PreservedDuringHibernate")

    def partial(r):
        return r.bit("PartiallyPreservedDuringHibernate")

    out = [
        Check("SEGFLAGS.AGP_EXCLUSIVE", "Agp", lambda r: r.bit("Agp") & ((r["Value"] & others) != 0),
              "Agp is set with {others}; an AGP segment must set Agp alone (the adapter fails to initialize "
              "otherwise)",
              params=lambda r: {"others": describe_flags(t, r["Value"] & others, abi, version, "")}, columnar=True),
        Check("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", "CacheCoherent",
              lambda r: r.bit("CacheCoherent") & NOT(r.bit("Aperture")),
              "CacheCoherent is set but Aperture is not; cache coherency means nothing for a memory segment"),
        Check("SEGFLAGS.CPUVISIBLE_ON_APERTURE", "CpuVisible", lambda r: r.bit("CpuVisible") & aperture(r),
              "CpuVisible is set on an aperture segment, where it has no meaning (except for a primary without "
              "UseAlternateVA)"),
        Check("SEGFLAGS.POPULATED_ON_APERTURE", "PopulatedFromSystemMemory",
              lambda r: r.bit("PopulatedFromSystemMemory") & aperture(r),
              "PopulatedFromSystemMemory is set on an aperture segment, where it is invalid and ignored"),
        Check("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", "PreservedDuringHibernate",
              lambda r: hibernate(r) & NOT(standby(r)),
              "PreservedDuringHibernate is set without PreservedDuringStandby (an invalid combination)"),
        Check("SEGFLAGS.PARTIAL_NEEDS_STANDBY", "PartiallyPreservedDuringHibernate",
              lambda r: partial(r) & NOT(standby(r)),
              "PartiallyPreservedDuringHibernate is set without PreservedDuringStandby (an invalid combination)"),
        Check("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", "PartiallyPreservedDuringHibernate",
              lambda r: hibernate(r) & partial(r),
              "PreservedDuringHibernate and PartiallyPreservedDuringHibernate are both set (an invalid "
              "combination in the page's table; the earlier version of the page: they cannot both be set)"),
        Check("SEGFLAGS.PARTIAL_ON_APERTURE", "PartiallyPreservedDuringHibernate",
              lambda r: partial(r) & aperture(r),
              "PartiallyPreservedDuringHibernate is set on an aperture segment; the current page says nothing "
              "of apertures here"),
        Check("SEGFLAGS.HIBERNATE_ON_APERTURE", "PreservedDuringHibernate", lambda r: hibernate(r) & aperture(r),
              "PreservedDuringHibernate is set on an aperture segment; the same text says it and "
              "PreservedDuringStandby should be set on apertures whose page table content should be preserved, "
              "and the current page says neither"),
    ]
    out += [
        Check("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", "SupportsCpuHostAperture",
              lambda r: r.bit("SupportsCpuHostAperture") & r.bit("CpuVisible"),
              "SupportsCpuHostAperture is set together with CpuVisible"),
        Check("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", "SupportsCachedCpuHostAperture",
              lambda r: r.bit("SupportsCachedCpuHostAperture") & NOT(r.bit("SupportsCpuHostAperture")),
              "SupportsCachedCpuHostAperture is set without SupportsCpuHostAperture"),
        Check("SEGFLAGS.RESERVEDSYSMEM_SET", "ReservedSysMem", lambda r: r.bit("ReservedSysMem"),
              "ReservedSysMem is set; it is reserved for system use and should not be set by the kernel mode "
              "driver"),
        Check("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", "ApplicationTarget", lambda r: r.bit("ApplicationTarget"),
              "ApplicationTarget is set: deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup; the "
              "reference page describes it without deprecating it"),
    ]
    # a flag that does not exist at this version never fires (r.bit gives False), so drop its check
    present = {leaf.path for leaf in record_leaves(typedef_layout(t, abi, version))}
    out = [c for c in out if c.field in present]
    return tuple(_dated(t, version, present, out) + _reserved(t, abi, version))


def _dated(type_name: str, version: int, present, checks: list) -> list:
    """The checks of a flag word at a version below the one its page gives a flag (``SUPPORTED_FROM``): the
    checks that read that flag go (their sentences speak of a supported flag), and its own rule says the date."""
    early = {flag: rule_id for (t, flag), (first, rule_id) in SUPPORTED_FROM.items()
             if t == type_name and flag in present and version < InterfaceVersion[first]}
    if not early:
        return checks
    kept = [c for c in checks if not leaves_read(c, present) & set(early)]
    for flag, rule_id in early.items():
        first = SUPPORTED_FROM[(type_name, flag)][0]
        kept.append(Check(rule_id, flag, lambda r, n=flag: r.bit(n),
                          f"{flag} is set at {InterfaceVersion(version).name}, before {first}: the page says "
                          f"\"{RULES[rule_id].sentence}\""))
    return kept


@lru_cache(maxsize=None)
def _alloc_flags(type_name: str, abi: str, version: int) -> tuple:
    def without(flag, needed, rule):
        return Check(rule, flag, lambda r: r.bit(flag) & NOT(r.bit(needed)), f"{flag} is set without {needed}")

    backing = ("PermanentSysMem", "Protected", "ExistingSysMem", "ExistingKernelSysMem")

    def exclusive(name, rule):
        def others(r):
            hit = False
            for other in backing:
                if other != name:
                    hit = hit | r.bit(other)
            return hit

        return Check(rule, name, lambda r: r.bit(name) & others(r), f"{name} is set together with {{others}}",
                     params=lambda r: {"others": ", ".join(o for o in backing if o != name and r.bit(o))})

    out = [
        without("PermanentSysMem", "CpuVisible", "ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE"),
        without("Cached", "CpuVisible", "ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE"),
        exclusive("Protected", "ALLOCFLAGS.PROTECTED_EXCLUSIVE"),
        exclusive("ExistingSysMem", "ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE"),
        exclusive("ExistingKernelSysMem", "ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE"),
        without("HistoryBuffer", "CpuVisible", "ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE"),
        without("ExplicitResidencyNotification", "AccessedPhysically",
                "ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY"),
    ]
    present = {leaf.path for leaf in record_leaves(typedef_layout(type_name, abi, version))}
    out = [c for c in out if c.field in present]
    return tuple(_dated(type_name, version, present, out) + _reserved(type_name, abi, version))


@lru_cache(maxsize=None)
def _alloc_flags2(abi: str, version: int) -> tuple:
    return tuple(_reserved("DXGK_ALLOCATIONINFOFLAGS2", abi, version))


# ---------------------------------------------------------------- preference lists

def _preference(kind: str, id_name: str, slots: int, no_id: str, gap: str) -> list:
    """An id below a zero id (what the page says of that: ``gap``), and a direction set for a zero id."""
    out = []
    for i in range(slots):
        def zero_before(r, i=i):
            zero = False
            for j in range(i):
                zero = zero | (r[f"{id_name}{j}"] == 0)
            return zero

        ident, direction = f"{id_name}{i}", f"Direction{i}"
        if i:
            out.append(Check(f"{kind}.ID_AFTER_ZERO", ident, lambda r, i=ident, z=zero_before: z(r) & (r[i] != 0),
                             f"{ident} = {{{ident}}} while {{zero}}, of higher priority, is 0 ({no_id}); {gap}",
                             params=lambda r, i=i: {"zero": next(f"{id_name}{j}" for j in range(i)
                                                                 if r[f"{id_name}{j}"] == 0)}))
        out.append(Check(f"{kind}.DIRECTION_WITHOUT_ID", direction, lambda r, i=ident, d=direction: (r[i] == 0) & (r[d] != 0),
                         f"{direction} = 1 but {ident} = 0 ({no_id})", value=lambda r: 1))
    return out


def preference_shape(type_name: str, id_name: str) -> tuple:
    """(slots, id bits) of a preference word, from its layout: Bank0..3 of 7 bits, SegmentId0..4 of 5."""
    ids = [leaf for leaf in record_leaves(typedef_layout(type_name, "x64", int(max(InterfaceVersion))))
           if leaf.path.rsplit(".", 1)[-1].rstrip("0123456789") == id_name]
    return len(ids), ids[0].bit_width


@lru_cache(maxsize=None)
def _bank_preference() -> tuple:
    slots, _bits = preference_shape("DXGK_SEGMENTBANKPREFERENCE", "Bank")
    return tuple(_preference("BANKPREF", "Bank", slots, "no preference",
                             "the page gives fewer preferences as the lower priority ones set to zero"))


@lru_cache(maxsize=None)
def _segment_preference() -> tuple:
    slots, _bits = preference_shape("D3DDDI_SEGMENTPREFERENCE", "SegmentId")
    return tuple(_preference("SEGPREF", "SegmentId", slots, "no preferred segment",
                             "the page does not say whether a preference after a zero is used")) + (
        Check("SEGPREF.RESERVED_NONZERO", "Reserved", lambda r: r["Reserved"] != 0,
              "Reserved = {Reserved} (bits 30-31 counted from 0, the page's 31-32, of Value = {Value:#010x})"),)


# ---------------------------------------------------------------- segment descriptors

# The descriptor types whose reference page states Size's page multiple and the commit limit of a memory
# segment: the DXGK_SEGMENTDESCRIPTOR4 page says CommitLimit "applies to the aperture segment only" and
# nothing of Size; DXGK_SEGMENTDESCRIPTOR5 has no page.
SIZE_AND_COMMIT_PAGES = ("DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3")


@lru_cache(maxsize=None)
def _descriptor(type_name: str, abi: str, version: int) -> tuple:
    present = {leaf.path for leaf in record_leaves(typedef_layout(type_name, abi, version))}
    stated = type_name in SIZE_AND_COMMIT_PAGES
    out = [c.under("Flags.") for c in _segment_flags(abi, version)]

    def use_banking(r):
        return r.bit("Flags.UseBanking")

    # The sentence asks for DXGK_SEGMENTDESCRIPTOR's NbOfBanks and pBankRangeTable: it says nothing of a
    # descriptor without them (DXGK_SEGMENTDESCRIPTOR4, 5), and of DXGK_SEGMENTDESCRIPTOR3 only as a reading.
    if "NbOfBanks" in present:
        banks_message = ("UseBanking is set but NbOfBanks = {NbOfBanks} and pBankRangeTable = "
                         "{pBankRangeTable:#x}; the driver should also specify valid bank information in them"
                         + ("" if type_name == "DXGK_SEGMENTDESCRIPTOR" else
                            f" ({READING} {USEBANKING_READING.format(type_name=type_name)})"))
        out.append(Check("DESC.USEBANKING_NEEDS_BANKS", "NbOfBanks",
                         lambda r: use_banking(r) & (r["NbOfBanks"] == 0), banks_message))
        out.append(Check("DESC.USEBANKING_NEEDS_BANKS", "pBankRangeTable",
                         lambda r: use_banking(r) & (r["NbOfBanks"] != 0) & (r["pBankRangeTable"] == 0),
                         banks_message))
        out.append(Check("DESC.BANKTABLE_WITHOUT_USEBANKING", "pBankRangeTable",
                         lambda r: NOT(use_banking(r)) & (r["pBankRangeTable"] != 0),
                         "pBankRangeTable = {pBankRangeTable:#x} but Flags.UseBanking is not set"))
    page = PAGE_SIZE[abi]
    if stated:
        out.append(Check("DESC.SIZE_PAGE_MULTIPLE", "Size",
                         lambda r: ((r["Size"] & (page - 1)) != 0) & NOT(r.bit("Flags.Agp")),
                         f"Size = {{Size:#x}} is not a multiple of {page // 1024} KB (the next multiple is "
                         f"{{next:#x}})", params=lambda r: {"next": page_rounded(r["Size"], abi)}))
    if stated and "CommitLimit" in present:
        out.append(Check("DESC.COMMITLIMIT_MEMORY", "CommitLimit",
                         lambda r: NOT(r.bit("Flags.Aperture") | r.bit("Flags.Agp")) & (r["CommitLimit"] != r["Size"]),
                         "CommitLimit = {CommitLimit:#x} differs from Size = {Size:#x} on a memory segment"))
    if type_name == "DXGK_SEGMENTDESCRIPTOR3":  # the page that asks for the address and the zero Reserved
        out.append(Check("DESC.SYSMEMEND_MATCHES_PARTIAL", "SystemMemoryEndAddress",
                         lambda r: r.bit("Flags.PartiallyPreservedDuringHibernate") & (r["SystemMemoryEndAddress"] == 0),
                         "Flags.PartiallyPreservedDuringHibernate is set but SystemMemoryEndAddress = 0; the driver "
                         "should set it to a non-NULL value for a segment partially preserved in hibernate"))
        out.append(Check("DESC.RESERVED_NONZERO", "Reserved", lambda r: r["Reserved"] != 0,
                         "Reserved = {Reserved:#x}; it should be set to zero"))
    return tuple(out)


# ---------------------------------------------------------------- the allocation info

def flags_member(version: int) -> tuple:
    """(member, type) of the flag view in force: FlagsWddm2 from WDDM2_0, Flags before."""
    if parse_version(version) >= InterfaceVersion.WDDM2_0:
        return "FlagsWddm2", "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"
    return "Flags", "DXGK_ALLOCATIONINFOFLAGS"


def _set_mask(ids) -> int:
    return sum(1 << (i - 1) for i in ids)


@dataclass(frozen=True)
class AdapterFacts:
    """What the allocation rules need of an adapter, as set masks and per-id tables."""

    count: int
    not_aperture: int  # set mask of existing segments that are not apertures
    pitched: int
    big_pages: int
    banking: tuple  # id 0..31 -> the segment uses banking
    banks: tuple  # id 0..31 -> NbOfBanks (0 when unknown or not banked)


def adapter_facts(adapter) -> AdapterFacts:
    ids = range(1, adapter.segment_count + 1)
    top = min(adapter.segment_count, 32)
    banking = tuple(0 < i <= top and adapter.has_flag(i, SegmentFlag.UseBanking) for i in range(32))
    return AdapterFacts(
        adapter.segment_count,
        _set_mask(i for i in ids if i <= 32 and not adapter.is_aperture(i)),
        _set_mask(i for i in ids if i <= 32 and adapter.has_flag(i, SegmentFlag.PitchAlignment)),
        _set_mask(i for i in ids if i <= 32 and adapter.has_flag(i, SegmentFlag.Use64KBPages)),
        banking,
        tuple((adapter.nb_of_banks(i) or 0) if banking[i] else 0 for i in range(32)),
    )


def _ids_text(mask: int) -> str:
    return ", ".join(str(n + 1) for n in range(32) if mask >> n & 1)


def _segments_text(mask: int) -> str:
    """``segment 3``, ``segments 2, 3``: the ids a set names."""
    return numbered("segment", (n + 1 for n in range(32) if mask >> n & 1))


def _not_aperture_text(mask: int, system_memory) -> str:
    """What a set names that is no aperture segment, with the verb that agrees: ``segment 2, which is not an
    aperture segment``, ``segments 1, 2 and system memory, none of them an aperture segment``."""
    parts = [_segments_text(mask)] if mask else []
    parts += ["system memory"] if system_memory else []
    things = (mask.bit_count() if mask else 0) + (1 if system_memory else 0)
    return " and ".join(parts) + (", which is not an aperture segment" if things == 1 else
                                  ", neither of them an aperture segment" if things == 2 else
                                  ", none of them an aperture segment")


@lru_cache(maxsize=None)
def _allocation_info(abi: str, version: int, facts: AdapterFacts | None) -> tuple:
    wddm2 = version >= InterfaceVersion.WDDM2_0
    member, ftype = flags_member(version)
    present = {leaf.path for leaf in record_leaves(typedef_layout("DXGK_ALLOCATIONINFO", abi, version))}
    out = [c.under(member + ".") for c in _alloc_flags(ftype, abi, version)]
    if "Flags2.Value" in present:
        out += [c.under("Flags2.") for c in _alloc_flags2(abi, version)]
    out += [c.under("HintedBank.") for c in _bank_preference()]
    out += [c.under("PreferredSegment.") for c in _segment_preference()]

    def effective(r):
        return effective_mask(r["SupportedReadSegmentSet"], r["SupportedWriteSegmentSet"], version)

    def system(r):
        return ((effective(r) >> SYSTEM_MEMORY_BIT) != 0) if wddm2 else False

    source = in_force_text(version)
    page = PAGE_SIZE[abi]
    out += [
        Check("ALLOCINFO.PRIORITY_ZERO", "AllocationPriority", lambda r: r["AllocationPriority"] == 0,
              "AllocationPriority = 0; use D3DDDI_ALLOCATIONPRIORITY_NORMAL when priority does not matter to the "
              "driver", value=lambda r: 0),
        Check("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", "PitchAlignedSize",
              lambda r: (r["PitchAlignedSize"] != 0) & (r["PitchAlignedSize"] < r["Size"]),
              "PitchAlignedSize = {PitchAlignedSize:#x} is smaller than Size = {Size:#x}"),
        Check("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", "Size", lambda r: (r["Size"] & (page - 1)) != 0,
              f"Size = {{Size:#x}} is not a multiple of {page // 1024} KB; the video memory manager expands it "
              f"to {{effective:#x}}", params=lambda r: {"effective": page_rounded(r["Size"], abi)}),
    ]
    # Every id that is not 0 is a preference; the page states the read and the write condition apart, and
    # from WDDM v2 the video memory manager ignores the read set.
    sets = ("SupportedWriteSegmentSet",) if wddm2 else ("SupportedReadSegmentSet", "SupportedWriteSegmentSet")
    slots, _bits = preference_shape("D3DDDI_SEGMENTPREFERENCE", "SegmentId")
    for i in range(slots):
        path = f"PreferredSegment.SegmentId{i}"
        for name in sets:
            def unsupported(r, path=path, name=name):
                ident = r[path]
                live = ident != 0
                bit = (r[name] >> r.pick(live, ident - 1, 0)) & 1
                system = ((r[name] >> SYSTEM_MEMORY_BIT) != 0) if wddm2 else False
                return live & (bit == 0) & NOT((ident == SYSTEM_MEMORY_ID) & system)

            out.append(Check("ALLOCINFO.PREFERRED_NOT_SUPPORTED", path, unsupported,
                             f"preferred segment {{id}} is not in {name} = {{set:#x}} ({{segments}})"
                             + ("; from WDDM v2, during surface creation the video memory manager ignores "
                                "SupportedReadSegmentSet" if wddm2 else ""),
                             params=lambda r, path=path, name=name: {"id": r[path], "set": r[name],
                                                                     "segments": _set_text(r[name], version)}))
    if wddm2:
        out.append(Check("ALLOCINFO.READ_SET_IGNORED", "SupportedReadSegmentSet",
                         lambda r: (r["SupportedReadSegmentSet"] != 0)
                         & (r["SupportedReadSegmentSet"] != r["SupportedWriteSegmentSet"]),
                         "SupportedReadSegmentSet = {SupportedReadSegmentSet:#x} differs from "
                         "SupportedWriteSegmentSet = {SupportedWriteSegmentSet:#x}; from WDDM v2, during surface "
                         "creation the video memory manager ignores the read set, and there should no longer be a "
                         "difference between these sets (the kit's union also names this word MmuSet)"))
    if facts is not None:
        out += _against_adapter(facts, version, effective, system, source, "Flags2.ShareBackingStoreWithKmd" in present)
    return tuple(out)


def _set_text(mask: int, version: int) -> str:
    """A set in words; bit 31 before WDDM2_0 where the kit already names it system memory says it is a reading."""
    wddm2 = version >= InterfaceVersion.WDDM2_0
    text = describe_segment_set(segment_set(mask, target=None if wddm2 else ("x64", "VISTA")))
    reading = system_memory_reading(version) if mask >> SYSTEM_MEMORY_BIT & 1 else ""
    return text + (f"; {reading}" if reading else "")


def _against_adapter(facts: AdapterFacts, version: int, effective, system, source: str, share: bool) -> list:
    wddm2 = version >= InterfaceVersion.WDDM2_0
    count = facts.count
    top = 31 if wddm2 else 32  # set bits that name segment ids (bit 31 is system memory from WDDM2_0)
    bit31 = system_memory_reading(version)
    unknown = _set_mask(range(count + 1, top + 1))
    out = []
    for name in (["SupportedWriteSegmentSet"] if wddm2 else ["SupportedReadSegmentSet", "SupportedWriteSegmentSet"]) \
            + ["EvictionSegmentSet"]:
        out.append(Check("ALLOCINFO.SET_UNKNOWN_SEGMENT", name, lambda r, n=name: (r[n] & unknown) != 0,
                         f"{name} = {{{name}:#x}} names {{unknown}} but the adapter has {plural(count, 'segment')}",
                         params=lambda r, n=name: {"unknown": _segments_text(r[n] & unknown) + (
                             f" ({bit31})" if bit31 and r[n] >> SYSTEM_MEMORY_BIT & 1 else "")}))
    not_aperture = facts.not_aperture & _set_mask(range(1, top + 1))

    def eviction_bad(r):
        bad = (r["EvictionSegmentSet"] & not_aperture) != 0
        return (bad | ((r["EvictionSegmentSet"] >> SYSTEM_MEMORY_BIT) != 0)) if wddm2 else bad

    def eviction_what(r):
        return {"what": _not_aperture_text(r["EvictionSegmentSet"] & not_aperture,
                                           wddm2 and r["EvictionSegmentSet"] >> SYSTEM_MEMORY_BIT)}

    out.append(Check("ALLOCINFO.EVICTION_APERTURE_ONLY", "EvictionSegmentSet", eviction_bad,
                     "EvictionSegmentSet = {EvictionSegmentSet:#x} names {what}", params=eviction_what))
    pitched = facts.pitched & _set_mask(range(1, top + 1))
    out.append(Check("ALLOCINFO.EVICTION_PITCHALIGNED", "EvictionSegmentSet",
                     lambda r: (r["EvictionSegmentSet"] & pitched) != 0,
                     "EvictionSegmentSet names pitch-aligned {pitched}",
                     params=lambda r: {"pitched": _segments_text(r["EvictionSegmentSet"] & pitched)}))
    if wddm2:
        big = facts.big_pages & _set_mask(range(1, top + 1))
        out.append(Check("ALLOCINFO.ALIGNMENT_64KB", "Alignment",
                         lambda r: ((effective(r) & big) != 0) & ((r["Alignment"] & (ALIGN_64KB - 1)) != 0),
                         f"Alignment = {{Alignment:#x}} is not a multiple of {ALIGN_64KB // 1024} KB, but the "
                         f"allocation can use {{big}} with Use64KBPages",
                         params=lambda r: {"big": _segments_text(effective(r) & big)}))
    out.append(Check("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", "PitchAlignedSize",
                     lambda r: (r["PitchAlignedSize"] != 0) & ((effective(r) & pitched) == 0),
                     f"PitchAlignedSize = {{PitchAlignedSize:#x}} but no segment of {source} is pitch aligned"))
    out.append(Check("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", "PitchAlignedSize",
                     lambda r: (r["PitchAlignedSize"] == 0) & ((effective(r) & pitched) != 0),
                     f"PitchAlignedSize = 0 but the allocation can use pitch-aligned {{pitched}} of {source}",
                     value=lambda r: 0, params=lambda r: {"pitched": _segments_text(effective(r) & pitched)}))

    def uses_banks(r):
        return r.lookup(facts.banking, r["PreferredSegment.SegmentId0"])

    def why(r):
        first = r["PreferredSegment.SegmentId0"]
        return {"why": "PreferredSegment.SegmentId0 = 0" if first == 0 else
                f"segment {first} does not exist" if first > count else
                f"segment {first} (PreferredSegment.SegmentId0) does not use banking",
                "hinted": r["HintedBank.Value"]}

    out.append(Check("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", "HintedBank.Value",
                     lambda r: (r["HintedBank.Value"] != 0) & NOT(uses_banks(r)),
                     "HintedBank = {hinted:#x} but {why}; the video memory manager uses the banking information of "
                     "the most preferred segment", params=why))
    slots, _bits = preference_shape("DXGK_SEGMENTBANKPREFERENCE", "Bank")
    for i in range(slots):
        def out_of_range(r, i=i):
            limit = r.lookup(facts.banks, r["PreferredSegment.SegmentId0"])
            live = uses_banks(r) & (limit != 0) & (r[f"HintedBank.Bank{i}"] != 0)
            return live & (r[f"HintedBank.Bank{i}"] > limit)

        out.append(Check("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", f"HintedBank.Bank{i}", out_of_range,
                         "bank {bank} does not exist: segment {first} has {banks}, numbered from 1",
                         params=lambda r, i=i: {"bank": r[f"HintedBank.Bank{i}"],
                                                "first": r["PreferredSegment.SegmentId0"],
                                                "banks": plural(facts.banks[r["PreferredSegment.SegmentId0"]],
                                                                "bank")}))
    if share:
        def share_what(r):
            return {"bad": _not_aperture_text(effective(r) & not_aperture, wddm2 and effective(r) >> SYSTEM_MEMORY_BIT)}

        out.append(Check("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", "Flags2.ShareBackingStoreWithKmd",
                         lambda r: r.bit("Flags2.ShareBackingStoreWithKmd")
                         & (((effective(r) & not_aperture) != 0) | system(r)),
                         f"ShareBackingStoreWithKmd is set but {source} names {{bad}}", value=lambda r: 1,
                         params=share_what))
    return out


# ---------------------------------------------------------------- the segment memory state query

@lru_cache(maxsize=None)
def _memory_state() -> tuple:
    return (Check("MEMSTATE.SEGMENTID_ZERO", "DriverSegmentId", lambda r: r["DriverSegmentId"] == 0,
                  "DriverSegmentId = 0, but it is a 1-based segment identifier", value=lambda r: 0),)


# ---------------------------------------------------------------- the registry

DESCRIPTOR_TYPES = ("DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3", "DXGK_SEGMENTDESCRIPTOR4",
                    "DXGK_SEGMENTDESCRIPTOR5")

# C type name -> (abi, version, adapter facts) -> its checks.  Every rule's page speaks of what the driver
# provides, so no check reaches into a member the OS fills: DXGK_QUERYSEGMENTIN.AgpFlags ([in], "properties for
# the available AGP aperture") has none of the segment flag rules.
CHECKS: dict = {
    "DXGK_SEGMENTFLAGS": lambda abi, version, facts: _segment_flags(abi, version),
    "DXGK_SEGMENTBANKPREFERENCE": lambda abi, version, facts: _bank_preference(),
    "D3DDDI_SEGMENTPREFERENCE": lambda abi, version, facts: _segment_preference(),
    "DXGK_ALLOCATIONINFOFLAGS": lambda abi, version, facts: _alloc_flags("DXGK_ALLOCATIONINFOFLAGS", abi, version),
    "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0":
        lambda abi, version, facts: _alloc_flags("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", abi, version),
    "DXGK_ALLOCATIONINFOFLAGS2": lambda abi, version, facts: _alloc_flags2(abi, version),
    "DXGK_ALLOCATIONINFO": lambda abi, version, facts: _allocation_info(abi, version, facts),
    **{name: (lambda abi, version, facts, n=name: _descriptor(n, abi, version)) for name in DESCRIPTOR_TYPES},
    "DXGK_QUERYSEGMENTMEMORYSTATE": lambda abi, version, facts: _memory_state(),
}


def checks_for(layout: TypeLayout, adapter=None) -> tuple:
    """The checks of one type at its target; ``adapter`` adds the allocation rules that need segments."""
    build = CHECKS.get(layout.c_name)
    if build is None:
        return ()
    facts = None
    if adapter is not None and layout.c_name == "DXGK_ALLOCATIONINFO":
        _same_target(adapter, layout)
        facts = adapter_facts(adapter)
    return build(layout.abi, layout.version, facts)


def _same_target(adapter, layout: TypeLayout) -> None:
    if adapter.abi != layout.abi or int(adapter.interface_version) != layout.version:
        raise UnsupportedTarget(f"the adapter is {adapter.abi} {adapter.interface_version.name} but the "
                                f"{layout.c_name} is {layout.label}; check them at the same target")


def record_hits(layout: TypeLayout, view: View, adapter=None) -> list:
    """(check, reported value) of every rule one record breaks."""
    return run_record(checks_for(layout, adapter), view)


def check_record(layout: TypeLayout, data, adapter=None, where: str = "") -> list:
    """Every finding of one record's bytes."""
    view = View(layout.by_path, data, "", layout.abi, layout.version, layout.c_name)
    return [c.finding(view, where) for c, _value in record_hits(layout, view, adapter)]


def column_hits(layout: TypeLayout, columns, np, adapter=None):
    """(check, record rows, values) for every rule that some row breaks."""
    return run_columns(checks_for(layout, adapter), columns, np)
