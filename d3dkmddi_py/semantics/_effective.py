"""What the video memory manager uses of an allocation, written once: the page-rounded size and the
effective segment set.  Each works on ints and on NumPy columns alike (the rules run on both)."""
from __future__ import annotations

from .._spec.base import PAGE_SIZE
from ..names import InterfaceVersion
from ._rules import reading


def page_rounded(size, abi: str = "x64"):
    """``size`` rounded up to the target's page size, as the video memory manager uses it."""
    page = PAGE_SIZE[abi]
    return -(-size // page) * page


def effective_mask(read, write, version: int):
    """The segment set word in force: from WDDM2_0 the write set alone, before either set."""
    return write if int(version) >= InterfaceVersion.WDDM2_0 else read | write


UNION_READING = ("before WDDM v2 a segment of either set supports the allocation (the page gives a read set and a "
                 "write set, each for its operations)")


def effective_source(version: int) -> tuple:
    """(the member(s) the set in force is read from, why) at an interface version."""
    if int(version) >= InterfaceVersion.WDDM2_0:
        return ("SupportedWriteSegmentSet", "from WDDM v2, during surface creation the video memory manager ignores "
                                            "SupportedReadSegmentSet")
    return "SupportedReadSegmentSet | SupportedWriteSegmentSet", reading(UNION_READING)


def in_force_text(version: int) -> str:
    """The set in force as every message names it: the member, or both sets labelled as the package's reading
    (before WDDM v2), so the reading is said wherever the statement is (findings, text, JSON, tables)."""
    source, why = effective_source(version)
    return source if int(version) >= InterfaceVersion.WDDM2_0 else f"{source} ({why})"
