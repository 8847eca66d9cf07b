"""Segment flags (DXGK_SEGMENTFLAGS) at an interface version, their power-transition behaviour,
and segment sets (the UINT masks of DXGK_ALLOCATIONINFO and DXGKARGCB_CREATECONTEXTALLOCATION)."""
from __future__ import annotations

from .._records import dataclass
from .._enums import NamedIntEnum, NamedIntFlag
from .._spec import CONSTS
from .._spec.base import PAGE_SIZE  # noqa: F401 (re-exported)
from .._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from ..errors import InvalidFieldType, InvalidFieldValue, flag_argument
from ..layout import type_layout
from ..names import InterfaceVersion
from ._view import describe_flags, ever_named_bits, named_bits, resolve_target, word_of

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


# Short meanings for explain(); the full text is on the DXGK_SEGMENTFLAGS page.
SEGMENT_FLAG_MEANINGS = {
    "Aperture": "aperture segment (maps the allocation's system pages; holds no content itself)",
    "Agp": "AGP-type aperture segment (must be the only flag)",
    "CpuVisible": "CPU can access the segment at CpuTranslatedAddress",
    "UseBanking": "divided into banks (NbOfBanks, pBankRangeTable)",
    "CacheCoherent": "aperture keeps cache coherency with cacheable pages",
    "PitchAlignment": "allocations are pitch aligned (PitchAlignedSize is used); cannot be used for eviction",
    "PopulatedFromSystemMemory": "memory segment populated from driver-allocated system memory",
    "PreservedDuringStandby": "preserved in a transition to standby",
    "PreservedDuringHibernate": "preserved in a transition to hibernate",
    "PartiallyPreservedDuringHibernate": "partially preserved in hibernate (up to SystemMemoryEndAddress)",
    "DirectFlip": "supports Direct Flip allocations",
    "Use64KBPages": "64 KB pages: allocations that can use it need 64 KB alignment",
    "ReservedSysMem": "reserved for system use; a driver must not set it",
    "SupportsCpuHostAperture": "can be mapped through the CPU host aperture",
    "SupportsCachedCpuHostAperture": "CPU cache coherent CPU host aperture",
    "ApplicationTarget": "targeted by application budgets (deprecated: LocalBudgetGroup / NonLocalBudgetGroup)",
    "VprSupported": "video protected region supported",
    "VprPreservedDuringStandby": "video protected region content preserved during standby",
    "EncryptedPagingSupported": "hardware protected allocations are encrypted during paging",
    "LocalBudgetGroup": "counts against the local memory segment budget group",
    "NonLocalBudgetGroup": "counts against the non-local memory segment budget group",
    "PopulatedByReservedDDRByFirmware": "populated from system memory reserved by the firmware",
}


class PowerBehaviour(NamedIntEnum):
    """What a power transition does to a segment's content (the 'Optimized standby settings' table)."""

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
        """Hybrid sleep acts as hibernate: segments not preserved during hibernate are purged even on sleep."""
        return _POWER_TEXT[self][2]

    @property
    def description(self) -> str:
        return _POWER_TEXT[self][3]


_POWER_TEXT = {
    PowerBehaviour.NEVER_PURGED: (
        "not purged", "not purged", "not purged",
        "never purged during a power transition"),
    PowerBehaviour.PURGED_IN_HIBERNATE: (
        "not purged", "purged", "purged even when entering sleep (hybrid sleep acts as hibernate)",
        "preserved in standby, purged in hibernate"),
    PowerBehaviour.PARTIALLY_PURGED_IN_HIBERNATE: (
        "not purged", "partially purged: allocations beyond SystemMemoryEndAddress are evicted",
        "partially purged even when entering sleep (hybrid sleep acts as hibernate)",
        "preserved in standby; in hibernate only allocations beyond SystemMemoryEndAddress are evicted"),
    PowerBehaviour.ALWAYS_PURGED: (
        "purged", "purged", "purged",
        "purged during all power transitions"),
    PowerBehaviour.INVALID: (
        "invalid", "invalid", "invalid",
        "invalid combination: the operating system does not recognize it"),
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

    def __contains__(self, segment_id: int) -> bool:
        return segment_id in self.ids

    def __str__(self) -> str:
        return describe_segment_set(self)


def segment_set(mask, *, target=None) -> SegmentSet:
    """The ids of a set.  From WDDM2_0 bit 31 is DXGK_SEGMENT_SET_SYSTEMMEMORY; before, it is segment 32."""
    word = word_of(mask, ("UINT",))
    wddm2 = target is None or int(resolve_target(target).interface_version) >= InterfaceVersion.WDDM2_0
    top = 31 if wddm2 else 32
    ids = tuple(n + 1 for n in range(top) if word >> n & 1)
    return SegmentSet(word, ids, wddm2 and bool(word & DXGK_SEGMENT_SET_SYSTEMMEMORY))


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
        parts.append(("segment " if len(s.ids) == 1 else "segments ") + ", ".join(map(str, s.ids)))
    if s.system_memory:
        parts.append("(+ system memory)" if parts else "system memory only (DXGK_SEGMENT_SET_SYSTEMMEMORY)")
    return " ".join(parts) if parts else "no segments"
