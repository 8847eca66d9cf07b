"""DXGK_ALLOCATIONINFO and its flag words, alone and against an Adapter.

Which flag view applies follows the interface version: FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)
from WDDM2_0, Flags (DXGK_ALLOCATIONINFOFLAGS) before.  Flags2 exists from WDDM3_0 on 64-bit
targets only.  From WDDM2_0 the video memory manager ignores SupportedReadSegmentSet and uses
SupportedWriteSegmentSet alone; before, a preference may name a segment of either set.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedTarget
from ..target import InterfaceVersion
from ._rules import finding
from ._view import View, coerce, ever_named_bits, named_bits
from .preferences import (BANK_TYPE, SEGPREF_TYPES, check_bank_preference, check_segment_preference,
                          decode_bank_preference, decode_segment_preference)
from .segments import (DXGK_SEGMENT_ID_SYSTEMMEMORY, DXGK_SEGMENT_SET_SYSTEMMEMORY, PAGE_SIZE, SegmentFlag,
                       SegmentSet, reserved_findings)

ALLOCINFO_TYPE = "DXGK_ALLOCATIONINFO"
FLAGS_TYPE = "DXGK_ALLOCATIONINFOFLAGS"
FLAGS_WDDM2_TYPE = "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"
FLAGS2_TYPE = "DXGK_ALLOCATIONINFOFLAGS2"
ALIGN_64KB = 0x10000


def flags_member(version: int) -> tuple[str, str]:
    """(member, type) of the flag view in force: FlagsWddm2 from WDDM2_0, Flags before."""
    if int(version) >= InterfaceVersion.WDDM2_0:
        return "FlagsWddm2", FLAGS_WDDM2_TYPE
    return "Flags", FLAGS_TYPE


@dataclass(frozen=True)
class EffectiveSegmentSet:
    """The segments the video memory manager may place an allocation in, and where that comes from."""

    segments: SegmentSet
    source: str  # the member(s) it was read from
    note: str

    @property
    def mask(self) -> int:
        return self.segments.mask


def _effective(view: View) -> EffectiveSegmentSet:
    write = view["SupportedWriteSegmentSet"]
    read = view["SupportedReadSegmentSet"]
    wddm2 = view.version >= InterfaceVersion.WDDM2_0
    if wddm2:
        note = "from WDDM2_0 the video memory manager ignores SupportedReadSegmentSet"
        if view.version >= InterfaceVersion.WDDM3_2:
            note += " (that word may be MmuSet)"
        return EffectiveSegmentSet(_set(write, wddm2), "SupportedWriteSegmentSet", note)
    return EffectiveSegmentSet(_set(read | write, wddm2), "SupportedReadSegmentSet | SupportedWriteSegmentSet",
                               "before WDDM2_0 preferences may name segments of either set")


def _set(mask: int, wddm2: bool) -> SegmentSet:
    top = 31 if wddm2 else 32
    ids = tuple(n + 1 for n in range(top) if mask >> n & 1)
    return SegmentSet(mask, ids, wddm2 and bool(mask & DXGK_SEGMENT_SET_SYSTEMMEMORY))


def effective_segment_set(alloc_info, *, target=None) -> EffectiveSegmentSet:
    """The supported set the video memory manager uses for a DXGK_ALLOCATIONINFO at its version."""
    cls, data, t = coerce(alloc_info, ALLOCINFO_TYPE, target)
    return _effective(View.of(cls, data, t))


def in_set(s: SegmentSet, segment_id: int) -> bool:
    """Whether a preferred segment id is in a set; id 31 also matches DXGK_SEGMENT_SET_SYSTEMMEMORY."""
    return segment_id in s.ids or (segment_id == DXGK_SEGMENT_ID_SYSTEMMEMORY and s.system_memory)


# ---- flag words

def check_alloc_flags(view: View, type_name: str) -> list:
    """ALLOCFLAGS.* on a DXGK_ALLOCATIONINFOFLAGS or DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 word."""
    b = view.bit
    out = []

    def add(rule_id, name, message):
        out.append(finding(rule_id, view.where(name), view.get(name, 0), message))

    if b("PermanentSysMem") and not b("CpuVisible"):
        add("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", "PermanentSysMem",
            "PermanentSysMem is set without CpuVisible")
    if b("Cached") and not b("CpuVisible"):
        add("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", "Cached", "Cached is set without CpuVisible")
    backing = [n for n in ("PermanentSysMem", "Protected", "ExistingSysMem", "ExistingKernelSysMem") if b(n)]
    for name, rule_id in (("Protected", "ALLOCFLAGS.PROTECTED_EXCLUSIVE"),
                          ("ExistingSysMem", "ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE"),
                          ("ExistingKernelSysMem", "ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE")):
        others = [n for n in backing if n != name]
        if name in backing and others:
            add(rule_id, name, f"{name} is set together with {', '.join(others)}")
    if b("HistoryBuffer") and not b("CpuVisible"):
        add("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", "HistoryBuffer", "HistoryBuffer is set without CpuVisible")
    if b("ExplicitResidencyNotification") and not b("AccessedPhysically"):
        add("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", "ExplicitResidencyNotification",
            "ExplicitResidencyNotification is set without AccessedPhysically")
    named, reserved = named_bits(type_name, view.abi, view.version)
    out.extend(reserved_findings(view, type_name, "ALLOCFLAGS", view.word(), reserved,
                                 ever_named_bits(type_name, view.abi)))
    return out


def check_alloc_flags2(view: View) -> list:
    named, reserved = named_bits(FLAGS2_TYPE, view.abi, view.version)
    return reserved_findings(view, FLAGS2_TYPE, "ALLOCFLAGS2", view.word(), reserved,
                             ever_named_bits(FLAGS2_TYPE, view.abi))


# ---- the allocation info

def check_allocation_info(view: View, adapter=None) -> list:
    out = []
    member, ftype = flags_member(view.version)
    out.extend(check_alloc_flags(view.sub(member, ftype), ftype))
    if view.has("Flags2.Value"):
        out.extend(check_alloc_flags2(view.sub("Flags2", FLAGS2_TYPE)))
    out.extend(check_bank_preference(view.sub("HintedBank", BANK_TYPE)))
    out.extend(check_segment_preference(view.sub("PreferredSegment", SEGPREF_TYPES[0])))

    priority = view["AllocationPriority"]
    if priority == 0:
        out.append(finding("ALLOCINFO.PRIORITY_ZERO", view.where("AllocationPriority"), 0,
                           "AllocationPriority = 0; use D3DDDI_ALLOCATIONPRIORITY_NORMAL when priority does not "
                           "matter to the driver"))
    size, pitch = view["Size"], view["PitchAlignedSize"]
    if pitch and pitch < size:
        out.append(finding("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", view.where("PitchAlignedSize"), pitch,
                           f"PitchAlignedSize = {pitch:#x} is smaller than Size = {size:#x}"))
    if size % PAGE_SIZE:
        out.append(finding("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", view.where("Size"), size,
                           f"Size = {size:#x} is not a multiple of 4 KB; the effective size is "
                           f"{effective_size(size):#x}"))
    eff = _effective(view)
    prefs = decode_segment_preference(view["PreferredSegment.Value"])
    for i, entry in enumerate(prefs.entries):
        if not in_set(eff.segments, entry.segment_id):
            out.append(finding("ALLOCINFO.PREFERRED_NOT_SUPPORTED", view.where(f"PreferredSegment.SegmentId{i}"),
                               entry.segment_id,
                               f"preferred segment {entry.segment_id} is not in {eff.source} = {eff.mask:#x} "
                               f"({eff.segments}); {eff.note}"))
    read, write = view["SupportedReadSegmentSet"], view["SupportedWriteSegmentSet"]
    if InterfaceVersion.WDDM2_0 <= view.version < InterfaceVersion.WDDM3_2 and read and read != write:
        out.append(finding("ALLOCINFO.READ_SET_IGNORED", view.where("SupportedReadSegmentSet"), read,
                           f"SupportedReadSegmentSet = {read:#x} differs from SupportedWriteSegmentSet = "
                           f"{write:#x}; from WDDM2_0 only the write set is used"))
    if adapter is not None:
        out.extend(_against_adapter(view, adapter, eff))
    return out


def effective_size(size: int) -> int:
    """Size rounded up to the native host page size (4 KB), as the video memory manager uses it."""
    return -(-size // PAGE_SIZE) * PAGE_SIZE


def _against_adapter(view: View, adapter, eff: EffectiveSegmentSet) -> list:
    if adapter.abi != view.abi or int(adapter.interface_version) != view.version:
        raise UnsupportedTarget(f"the adapter is {adapter.abi} {adapter.interface_version.name} but the "
                                f"DXGK_ALLOCATIONINFO is {view.abi} {InterfaceVersion(view.version).name}; "
                                f"check them at the same target")
    out = []
    count = adapter.segment_count
    wddm2 = view.version >= InterfaceVersion.WDDM2_0
    set_fields = (["SupportedWriteSegmentSet"] if wddm2 else ["SupportedReadSegmentSet", "SupportedWriteSegmentSet"])
    for name in set_fields + ["EvictionSegmentSet"]:
        s = _set(view[name], wddm2)
        unknown = [i for i in s.ids if i > count]
        if unknown:
            out.append(finding("ALLOCINFO.SET_UNKNOWN_SEGMENT", view.where(name), s.mask,
                               f"{name} = {s.mask:#x} names segment(s) {', '.join(map(str, unknown))} but the "
                               f"adapter has {count} segment(s)"))
    eviction = _set(view["EvictionSegmentSet"], wddm2)
    not_aperture = [i for i in eviction.ids if i <= count and not adapter.is_aperture(i)]
    if not_aperture or eviction.system_memory:
        what = ", ".join([f"segment {i}" for i in not_aperture] + (["system memory"] if eviction.system_memory else []))
        out.append(finding("ALLOCINFO.EVICTION_APERTURE_ONLY", view.where("EvictionSegmentSet"), eviction.mask,
                           f"EvictionSegmentSet = {eviction.mask:#x} names {what}, which is not an aperture segment"))
    pitched = [i for i in eviction.ids if adapter.has_flag(i, SegmentFlag.PitchAlignment)]
    if pitched:
        out.append(finding("ALLOCINFO.EVICTION_PITCHALIGNED", view.where("EvictionSegmentSet"), eviction.mask,
                           f"EvictionSegmentSet names pitch-aligned segment(s) {', '.join(map(str, pitched))}"))
    usable = [i for i in eff.segments.ids if i <= count]
    if wddm2:
        big = [i for i in usable if adapter.has_flag(i, SegmentFlag.Use64KBPages)]
        alignment = view["Alignment"]
        if big and alignment % ALIGN_64KB:
            out.append(finding("ALLOCINFO.ALIGNMENT_64KB", view.where("Alignment"), alignment,
                               f"Alignment = {alignment:#x} is not a multiple of 64 KB, but the allocation can use "
                               f"segment(s) {', '.join(map(str, big))} with Use64KBPages"))
    pitch_segments = [i for i in usable if adapter.has_flag(i, SegmentFlag.PitchAlignment)]
    pitch = view["PitchAlignedSize"]
    if pitch and not pitch_segments:
        out.append(finding("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", view.where("PitchAlignedSize"), pitch,
                           f"PitchAlignedSize = {pitch:#x} but no segment of {eff.source} is pitch aligned"))
    if not pitch and pitch_segments:
        out.append(finding("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", view.where("PitchAlignedSize"), 0,
                           f"PitchAlignedSize = 0 but the allocation can use pitch-aligned segment(s) "
                           f"{', '.join(map(str, pitch_segments))}"))
    hinted = view["HintedBank.Value"]
    first = view["PreferredSegment.SegmentId0"]
    if hinted:
        if first == 0 or first > count or not adapter.has_flag(first, SegmentFlag.UseBanking):
            why = ("PreferredSegment.SegmentId0 = 0" if first == 0 else
                   f"segment {first} does not exist" if first > count else
                   f"segment {first} (PreferredSegment.SegmentId0) does not use banking")
            out.append(finding("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", view.where("HintedBank.Value"), hinted,
                               f"HintedBank = {hinted:#x} means nothing: {why}"))
        else:
            banks = adapter.nb_of_banks(first)
            if banks:
                for i, entry in enumerate(decode_bank_preference(hinted).entries):
                    if entry.bank > banks:
                        out.append(finding("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", view.where(f"HintedBank.Bank{i}"),
                                           entry.bank, f"bank {entry.bank} does not exist: segment {first} has "
                                                       f"{banks} bank(s), numbered from 1"))
    if view.get("Flags2.ShareBackingStoreWithKmd"):
        bad = [f"segment {i}" for i in usable if not adapter.is_aperture(i)]
        if eff.segments.system_memory:
            bad.append("system memory")
        if bad:
            out.append(finding("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", view.where("Flags2.ShareBackingStoreWithKmd"),
                               1, f"ShareBackingStoreWithKmd is set but {eff.source} names {', '.join(bad)}, "
                                  f"which is not an aperture segment"))
    return out
