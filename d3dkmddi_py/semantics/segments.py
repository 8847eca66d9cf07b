"""Segment flags (DXGK_SEGMENTFLAGS) at an interface version, their power-transition behaviour,
and segment sets (the UINT masks of DXGK_ALLOCATIONINFO and DXGKARGCB_CREATECONTEXTALLOCATION)."""
from __future__ import annotations

from .._records import dataclass
from .._enums import NamedIntEnum, NamedIntFlag
from .._spec import CONSTS
from .._spec.base import PAGE_SIZE  # noqa: F401 (re-exported)
from .._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from ..errors import (InvalidArgument, InvalidFieldType, InvalidFieldValue, bad_argument, flag_argument, integer_argument,
                      items_argument)
from ..layout import type_layout
from ..names import InterfaceVersion
from ._rules import READING, SEGFLAGS, kit, quoted
from ._view import describe_flags, ever_named_bits, named_bits, resolve_target, word_of
from ..wording import numbered

SEGFLAGS_TYPE = "DXGK_SEGMENTFLAGS"
DXGK_SEGMENT_ID_INVALID = CONSTS["DXGK_SEGMENT_ID_INVALID"].value
DXGK_SEGMENT_ID_SYSTEMMEMORY = CONSTS["DXGK_SEGMENT_ID_SYSTEMMEMORY"].value
DXGK_SEGMENT_SET_SYSTEMMEMORY = CONSTS["DXGK_SEGMENT_SET_SYSTEMMEMORY"].value


def _one_bit_flags(c_name: str) -> dict:
    """{flag name: mask} of every one-bit flag the newest kit names (none was ever removed)."""
    return {leaf.path: leaf.mask for leaf in type_layout(c_name, "x64", INTERFACE_VERSIONS[NEWEST_VERSION]).leaves
            if leaf.is_bitfield and leaf.bit_width == 1}


# Every flag DXGK_SEGMENTFLAGS has had, from the layout table; which exist depends on the interface version.
SegmentFlag = NamedIntFlag("SegmentFlag", _one_bit_flags(SEGFLAGS_TYPE), module=__name__)
SegmentFlag.__doc__ = "The one-bit flags of DXGK_SEGMENTFLAGS by name (an IntFlag): SegmentFlag.Aperture | ..."


def _said(*parts: str) -> str:
    """Words of the DXGK_SEGMENTFLAGS page, recorded as such, joined by "; "."""
    return "; ".join(quoted(SEGFLAGS, text) for text in parts)


# What a set flag is, in the page's own words (held to the page by the tests)
SEGMENT_FLAG_DESCRIPTIONS = {
    "Aperture": _said("an aperture segment instead of a memory segment"),
    "Agp": _said("an AGP-type aperture segment"),
    "CpuVisible": _said("accessible to the CPU at the address that is specified by the CpuTranslatedAddress member"),
    "UseBanking": _said("the segment is divided into banks"),
    "CacheCoherent": _said("can maintain cache coherency with cacheable pages that are mapped into the aperture"),
    "PitchAlignment": _said("an allocation that is mapped into the segment must be pitch aligned",
                            "This type of segment cannot be used for eviction"),
    "PopulatedFromSystemMemory": _said("populated from system memory that the driver allocated during initialization"),
    "PreservedDuringStandby": _said("preserved in a transition to a standby system power state"),
    "PreservedDuringHibernate": _said("preserved in a transition to a hibernate system power state"),
    "PartiallyPreservedDuringHibernate": _said("partially preserved in a transition to a hibernate system power "
                                               "state"),
    "DirectFlip": _said("supports Direct Flip allocations"),
    "Use64KBPages": _said("the GPU memory segment supports 64 KB pages"),
    "ReservedSysMem": _said("Reserved for system use"),
    "SupportsCpuHostAperture": _said("the segment can be mapped through the CPU host aperture"),
    "SupportsCachedCpuHostAperture": _said("the hardware supports CPU cache coherent CPU host aperture"),
    "ApplicationTarget": _said("this segment should be targeted by application budgets")
    + " (kit header comment: " + quoted(kit("DXGK_SEGMENTFLAGS.ApplicationTarget"),
                                        "Deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup") + ")",
    "VprSupported": _said("Video Protected Region (VPR) is supported"),
    "VprPreservedDuringStandby": _said("content of VPRs is preserved during standby"),
    "EncryptedPagingSupported": _said("hardware-protected allocations are encrypted during paging"),
    "LocalBudgetGroup": _said("this segment counts against the local memory segment budget group"),
    "NonLocalBudgetGroup": _said("this segment counts against the non-local memory segment budget group"),
    "PopulatedByReservedDDRByFirmware": _said("this segment is populated from reserved system DDR memory by firmware"),
}
# What explain() prints beside a set flag of a segment the driver describes: what the flag is, and what the
# page asks of the driver about it
SEGMENT_FLAG_MEANINGS = {
    **SEGMENT_FLAG_DESCRIPTIONS,
    "Agp": SEGMENT_FLAG_DESCRIPTIONS["Agp"] + "; " + _said("the driver must exclusively set the Agp member"),
    "ReservedSysMem": _said("Reserved for system use and should not be set by the kernel mode driver"),
}


class PowerBehaviour(NamedIntEnum):
    """What a power transition does to a segment's content: a row of the page's "Optimized standby
    settings" table, in its words."""

    NEVER_PURGED = 0  # Standby 1, Hibernate 1, Partial 0
    PURGED_IN_HIBERNATE = 1  # 1, 0, 0
    PARTIALLY_PURGED_IN_HIBERNATE = 2  # 1, 0, 1
    ALWAYS_PURGED = 3  # 0, 0, 0
    INVALID = 4  # every other combination: the operating system does not recognize it

    @property
    def standby(self) -> str:
        return _POWER_TEXT[self][0]

    @property
    def hibernate(self) -> str:
        return _POWER_TEXT[self][1]

    @property
    def hybrid_sleep(self) -> str:
        """With hybrid sleep "the system acts as if it is hibernating"."""
        return "invalid" if self is PowerBehaviour.INVALID else f"as in hibernate ({self.hibernate})"

    @property
    def description(self) -> str:
        if self is PowerBehaviour.INVALID:
            return "a combination the table marks invalid: " + _UNRECOGNIZED
        return f"standby: {self.standby}, hibernate: {self.hibernate}"


_UNRECOGNIZED = "the operating system does not recognize it"
_POWER_TEXT = {  # (Standby State, Hibernate State): the table's cells
    PowerBehaviour.NEVER_PURGED: ("not purged", "not purged"),
    PowerBehaviour.PURGED_IN_HIBERNATE: ("not purged", "purged"),
    PowerBehaviour.PARTIALLY_PURGED_IN_HIBERNATE: ("not purged", "partially purged"),
    PowerBehaviour.ALWAYS_PURGED: ("purged", "purged"),
    PowerBehaviour.INVALID: ("invalid", "invalid"),
}

_POWER_TABLE = {  # (Standby, Hibernate, Partial) -> behaviour
    (1, 1, 0): PowerBehaviour.NEVER_PURGED,
    (1, 0, 0): PowerBehaviour.PURGED_IN_HIBERNATE,
    (1, 0, 1): PowerBehaviour.PARTIALLY_PURGED_IN_HIBERNATE,
    (0, 0, 0): PowerBehaviour.ALWAYS_PURGED,
}


def power_behaviour(value) -> PowerBehaviour:
    """The power-transition behaviour that the three Preserved* bits of a segment flag word select."""
    word = _segflags_word(value)
    standby, hibernate, partial = _POWER_FLAGS
    key = (int(bool(word & standby)), int(bool(word & hibernate)), int(bool(word & partial)))
    return _POWER_TABLE.get(key, PowerBehaviour.INVALID)


# the three bits the table reads, by name (their positions come from the layout)
_POWER_FLAGS = (int(SegmentFlag.PreservedDuringStandby), int(SegmentFlag.PreservedDuringHibernate),
                int(SegmentFlag.PartiallyPreservedDuringHibernate))


def _segflags_word(value) -> int:
    if hasattr(type(value), "_c_name_") and type(value)._c_name_.startswith("DXGK_SEGMENTDESCRIPTOR"):
        value = value.Flags
    return word_of(value, (SEGFLAGS_TYPE,))


def is_aperture(value) -> bool:
    """Aperture or Agp: an AGP segment is an aperture segment too."""
    return bool(_segflags_word(value) & (SegmentFlag.Aperture | SegmentFlag.Agp))


@dataclass(frozen=True)
class SegmentFlagsInfo:
    """A flag word read at one interface version."""

    value: int
    interface_version: InterfaceVersion
    flags: SegmentFlag  # the set flags this version names
    undefined: SegmentFlag  # set bits that are Reserved here but name a flag at a newer version
    reserved: int  # set bits that are Reserved at every version
    power: PowerBehaviour

    @property
    def names(self) -> tuple:
        return tuple(f.name for f in SegmentFlag if f & self.flags)


def decode_segment_flags(value, *, target=None) -> SegmentFlagsInfo:
    """Split a DXGK_SEGMENTFLAGS word into named flags, newer-version bits and reserved bits."""
    word = _segflags_word(value)
    t = resolve_target(target, value if hasattr(type(value), "_target_") else None)
    named, reserved = named_bits(SEGFLAGS_TYPE, t.abi, int(t.interface_version))
    ever = ever_named_bits(SEGFLAGS_TYPE, t.abi)
    return SegmentFlagsInfo(word, t.interface_version, SegmentFlag(word & named),
                            SegmentFlag(word & reserved & ever), word & reserved & ~ever, power_behaviour(word))


def describe_segment_flags(word: int, abi: str, version: int) -> str:
    return describe_flags(SEGFLAGS_TYPE, word, abi, version, "no flags (a memory segment)")


# ---- segment sets: bit n is segment id n + 1; bit 31 is DXGK_SEGMENT_SET_SYSTEMMEMORY from WDDM v2

@dataclass(frozen=True)
class SegmentSet:
    """A segment set mask: the segment ids it names and whether it names system memory."""

    mask: int
    ids: tuple
    system_memory: bool

    def __post_init__(self):
        """A user's SegmentSet must be what ``segment_set`` gives for its mask, at WDDM2_0 or later or before (the
        package builds its own with ``set_of``)."""
        mask = integer_argument(self.mask, "SegmentSet: mask", 0, 0xFFFFFFFF)
        if not isinstance(self.ids, tuple):
            raise bad_argument("SegmentSet: ids", self.ids, "a tuple of the segment ids the mask names")
        items_argument(self.ids, "SegmentSet: ids", int, "a tuple of the segment ids the mask names")
        flag_argument(self.system_memory, "SegmentSet: system_memory")
        now, before = set_of(mask, True), set_of(mask, False)
        if self not in (now, before):
            raise InvalidArgument(f"SegmentSet: mask {mask:#x} names {_named(now)}" + (
                f" (before WDDM2_0: {_named(before)})" if now != before else "") +
                f", not ids {self.ids} with system_memory={self.system_memory}: segment_set(mask) gives it")

    def __contains__(self, segment_id: int) -> bool:
        return segment_id in self.ids

    def __str__(self) -> str:
        return describe_segment_set(self)


def segment_set(mask, *, target=None) -> SegmentSet:
    """The ids of a set.  From WDDM2_0 bit 31 is DXGK_SEGMENT_SET_SYSTEMMEMORY; before, it is segment 32
    (the package's reading: the kit defines the constant from WIN7, no page says from when it applies)."""
    word = word_of(mask, ("UINT",))
    return set_of(word, target is None or int(resolve_target(target).interface_version) >= InterfaceVersion.WDDM2_0)


SYSTEM_MEMORY_READING = (f"{READING} the kit defines DXGK_SEGMENT_ID_SYSTEMMEMORY (31) and DXGK_SEGMENT_SET_SYSTEMMEMORY "
                         f"(bit 31) from WIN7; the package reads them as system memory from WDDM2_0 only")


def system_memory_reading(version: int) -> str:
    """The label an id 31 or a set's bit 31 carries where the kit already defines the system-memory constants but
    the package reads them as segments (from WIN7 to below WDDM2_0), else ""."""
    version = int(version)
    defined = CONSTS["DXGK_SEGMENT_SET_SYSTEMMEMORY"].guard.holds("x64", version)
    return SYSTEM_MEMORY_READING if defined and version < InterfaceVersion.WDDM2_0 else ""


def set_of(mask: int, wddm2: bool) -> SegmentSet:
    """The SegmentSet of a 32-bit mask, from WDDM2_0 (``wddm2``) or before, unchecked (the package's own)."""
    ids = tuple(n + 1 for n in range(31 if wddm2 else 32) if mask >> n & 1)
    return SegmentSet._new(mask, ids, wddm2 and bool(mask & DXGK_SEGMENT_SET_SYSTEMMEMORY))


def _named(s: SegmentSet) -> str:
    return f"ids {s.ids} with system_memory={s.system_memory}"


def segment_set_mask(ids=(), *, system_memory: bool = False) -> int:
    """The mask of segment ids 1..31 (bit id-1), plus DXGK_SEGMENT_SET_SYSTEMMEMORY when asked."""
    mask = DXGK_SEGMENT_SET_SYSTEMMEMORY if flag_argument(system_memory, "system_memory") else 0
    if isinstance(ids, (str, bytes, dict)) or not hasattr(ids, "__iter__"):
        raise InvalidFieldType("segment set", "ids", ids, "a list of segment ids 1..31",
                               f"is a {type(ids).__name__}")
    for ident in ids:
        if isinstance(ident, bool) or not isinstance(ident, int):
            raise InvalidFieldType("segment set", "id", ident, "1..31", f"is a {type(ident).__name__}")
        if not 1 <= ident <= 31:
            raise InvalidFieldValue("segment set", "id", ident, "1..31",
                                    "is not a segment id (bit n is segment n+1; use system_memory=True for "
                                    "DXGK_SEGMENT_SET_SYSTEMMEMORY)")
        mask |= 1 << (ident - 1)
    return mask


def describe_segment_set(s: SegmentSet) -> str:
    """A SegmentSet in words: "segments 1, 2 (+ system memory)"."""
    if not isinstance(s, SegmentSet):
        raise InvalidFieldType("describe_segment_set", "s", s, "a SegmentSet (from segment_set())",
                               f"is a {type(s).__name__}")
    parts = []
    if s.ids:
        parts.append(numbered("segment", s.ids))
    if s.system_memory:
        parts.append("(+ system memory)" if parts else "system memory only (DXGK_SEGMENT_SET_SYSTEMMEMORY)")
    return " ".join(parts) if parts else "no segments"
