"""DXGK_ALLOCATIONINFO and its flag words, alone and against an Adapter.

Which flag view applies follows the interface version: FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)
from WDDM2_0, Flags (DXGK_ALLOCATIONINFOFLAGS) before.  Flags2 exists from WDDM3_0 on 64-bit
targets only.  From WDDM2_0 the video memory manager ignores SupportedReadSegmentSet and uses
SupportedWriteSegmentSet alone.  Before, the page gives a read set and a write set, each for its
operations (a preference must be in each); the set in force that the other rules read is then both
sets together, the package's reading (its note says so).
"""
from __future__ import annotations

from .._records import dataclass
from ..errors import InvalidFieldValue
from ..names import InterfaceVersion, parse_abi
from ._effective import effective_mask, effective_source, page_rounded
from ._view import View, coerce_layout
from .checks import flags_member  # noqa: F401 (re-exported)
from .segments import DXGK_SEGMENT_ID_SYSTEMMEMORY, DXGK_SEGMENT_SET_SYSTEMMEMORY, SegmentSet

ALLOCINFO_TYPE = "DXGK_ALLOCATIONINFO"
FLAGS_TYPE = "DXGK_ALLOCATIONINFOFLAGS"
FLAGS_WDDM2_TYPE = "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"
FLAGS2_TYPE = "DXGK_ALLOCATIONINFOFLAGS2"


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
    mask = effective_mask(view["SupportedReadSegmentSet"], view["SupportedWriteSegmentSet"], view.version)
    source, note = effective_source(view.version)
    return EffectiveSegmentSet(_set(mask, view.version >= InterfaceVersion.WDDM2_0), source, note)


def _set(mask: int, wddm2: bool) -> SegmentSet:
    top = 31 if wddm2 else 32
    ids = tuple(n + 1 for n in range(top) if mask >> n & 1)
    return SegmentSet(mask, ids, wddm2 and bool(mask & DXGK_SEGMENT_SET_SYSTEMMEMORY))


def effective_segment_set(alloc_info, *, target=None) -> EffectiveSegmentSet:
    """The supported set the video memory manager uses for a DXGK_ALLOCATIONINFO at its version."""
    layout, data = coerce_layout(alloc_info, ALLOCINFO_TYPE, target)
    return _effective(View.of(layout, data))


def in_set(s: SegmentSet, segment_id: int) -> bool:
    """Whether a preferred segment id is in a set; id 31 also matches DXGK_SEGMENT_SET_SYSTEMMEMORY."""
    return segment_id in s.ids or (segment_id == DXGK_SEGMENT_ID_SYSTEMMEMORY and s.system_memory)


def effective_size(size: int, abi: str = "x64") -> int:
    """Size rounded up to the native host page size (4 KB), as the video memory manager uses it."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise InvalidFieldValue("DXGK_ALLOCATIONINFO", "Size", size, "an unsigned integer", "is not a size")
    return page_rounded(size, parse_abi(abi))
