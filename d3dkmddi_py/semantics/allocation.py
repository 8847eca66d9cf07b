"""DXGK_ALLOCATIONINFO and its flag words, alone and against an Adapter.

Which flag view applies follows the interface version: FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)
from WDDM2_0, Flags (DXGK_ALLOCATIONINFOFLAGS) before.  Flags2 exists from WDDM3_0 on 64-bit
targets only.  From WDDM2_0 the video memory manager ignores SupportedReadSegmentSet and uses
SupportedWriteSegmentSet alone.  Before, the page gives a read set and a write set, each for its
operations (a preference must be in each); the set in force that the other rules read is then both
sets together, the package's reading (its note says so).
"""
from __future__ import annotations

from functools import lru_cache

from .._records import dataclass, replace
from ..errors import InvalidFieldValue, bad_argument, integer_argument, name_argument
from ..layout import record_leaves, typedef_layout
from ..names import InterfaceVersion, parse_abi
from ..resolve import resolve_layout
from ._effective import effective_mask, effective_source, page_rounded
from ._rules import finding, reading
from ._view import View, coerce_layout
from .checks import CHECKS, flags_member  # noqa: F401 (re-exported)
from .engine import leaves_read, run_record
from .segments import DXGK_SEGMENT_ID_SYSTEMMEMORY, SegmentSet, describe_segment_set, set_of

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
    return EffectiveSegmentSet(set_of(mask, view.version >= InterfaceVersion.WDDM2_0), source, note)


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


# ---- an allocation where the kernel placed it, and its priority changed
@dataclass(frozen=True)
class Placement:
    """An allocation committed to a segment (the kernel's ReportCommittedAllocation): its
    DXGK_ALLOCATIONINFO (an instance, or bytes with ``target``), the segment's id and the offset in it.
    ``check(Placement(...))`` checks it against the allocation's segment sets."""

    alloc_info: object
    segment_id: int
    offset: int | None = 0  # None: the event gives no offset in the segment (a virtual paging operation)
    target: object = None
    how: str = "committed to"  # what put it there, as the finding says it ("moved by PagingOpTransfer to")


def check_placement(p: Placement) -> list:
    """ALLOCINFO.COMMITTED_OUTSIDE_SETS: the segment is one a set names and not in the set in force."""
    if not isinstance(p, Placement):
        raise bad_argument("p", p, "a semantics.Placement")
    layout, data = coerce_layout(p.alloc_info, ALLOCINFO_TYPE, p.target)
    sid = integer_argument(p.segment_id, "segment_id", 0, 0xFFFFFFFF)
    if p.offset is not None:
        integer_argument(p.offset, "offset", 0, (1 << 64) - 1)
    name_argument(p.how, "how", "what put the allocation there (a str)")
    effective, wddm2 = _placed_against(layout.c_name, layout.abi, layout.version, data)
    if not 1 <= sid <= (DXGK_SEGMENT_ID_SYSTEMMEMORY if wddm2 else 32) or in_set(effective.segments, sid):
        return []
    return [finding("ALLOCINFO.COMMITTED_OUTSIDE_SETS", effective.source, effective.mask,
                    f"{p.how} segment {sid}" + ("" if p.offset is None else f" at offset {p.offset:#x}") +
                    f", which is not in {effective.source} = "
                    f"{effective.mask:#x} ({describe_segment_set(effective.segments)})"
                    + ("" if wddm2 else f"; {effective.note}"))]


@lru_cache(maxsize=4096)  # a trace's placements name few distinct records (the tables pack only the sets)
def _placed_against(c_name: str, abi: str, version: int, data: bytes) -> tuple:
    """(EffectiveSegmentSet, from WDDM2_0) of a DXGK_ALLOCATIONINFO's bytes: what a placement is checked against."""
    view = View.of(resolve_layout(c_name, (abi, version)), data)
    return _effective(view), view.version >= InterfaceVersion.WDDM2_0


@lru_cache(maxsize=None)
def priority_checks(abi: str, version: int) -> tuple:
    """The checks of DXGK_ALLOCATIONINFO that read AllocationPriority alone (derived from what each reads)."""
    present = {leaf.path for leaf in record_leaves(typedef_layout(ALLOCINFO_TYPE, abi, version))}
    return tuple(c for c in CHECKS[ALLOCINFO_TYPE](abi, version, None)
                 if leaves_read(c, present) == {"AllocationPriority"})


LATER_PRIORITY = reading("a priority set after the allocation was created, held to the rules of AllocationPriority")


def check_priority(priority: int, *, target=None) -> list:
    """The findings of the rules on AllocationPriority alone for a priority set later (the kernel's
    SetAllocationPriority): the value as the allocation's AllocationPriority, nothing else read; each
    message says it is a later priority, held to those rules as the package's reading."""
    return list(_priority_findings(integer_argument(priority, "priority", 0, 0xFFFFFFFF), *_abi_version(target)))


@lru_cache(maxsize=4096)  # a trace sets few distinct priorities; its events each ask again
def _priority_findings(priority: int, abi: str, version: int) -> tuple:
    layout, data = coerce_layout(bytes(typedef_layout(ALLOCINFO_TYPE, abi, version).size), ALLOCINFO_TYPE,
                                 (abi, version))
    leaf = layout.by_path["AllocationPriority"]
    data = data[:leaf.offset] + priority.to_bytes(leaf.size, "little") + data[leaf.offset + leaf.size:]
    view = View.of(layout, data)
    return tuple(replace(f, message=f"{f.message} ({LATER_PRIORITY})") for f in
                 (c.finding(view) for c, _value in run_record(priority_checks(layout.abi, layout.version), view)))


def _abi_version(target) -> tuple:
    from ..target import as_target

    t = as_target(target)
    return t.abi, int(t.interface_version)
