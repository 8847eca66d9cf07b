"""What the video memory manager uses of an allocation, written once: the page-rounded size and the
effective segment set.  Each works on ints and on NumPy columns alike (the rules run on both)."""
from __future__ import annotations

from .._spec.base import PAGE_SIZE
from ..names import InterfaceVersion


def page_rounded(size, abi: str = "x64"):
    """``size`` rounded up to the target's page size, as the video memory manager uses it."""
    page = PAGE_SIZE[abi]
    return -(-size // page) * page


def effective_mask(read, write, version: int):
    """The segment set word in force: from WDDM2_0 the write set alone, before either set."""
    return write if int(version) >= InterfaceVersion.WDDM2_0 else read | write


def effective_source(version: int) -> tuple:
    """(the member(s) the effective set is read from, why) at an interface version."""
    if int(version) >= InterfaceVersion.WDDM2_0:
        note = "from WDDM2_0 the video memory manager ignores SupportedReadSegmentSet"
        if int(version) >= InterfaceVersion.WDDM3_2:
            note += " (that word may be MmuSet)"
        return "SupportedWriteSegmentSet", note
    return ("SupportedReadSegmentSet | SupportedWriteSegmentSet",
            "before WDDM2_0 preferences may name segments of either set")
