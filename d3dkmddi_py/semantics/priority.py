"""Allocation priorities: any UINT, written as the D3DDDI_ALLOCATIONPRIORITY_* level at or below it.

The driver may use values between the named levels ("marking an allocation with a priority level of
0x78000001 indicates that the allocation is slightly above normal"); the package groups a value with
the highest named level that does not exceed it (its "band", the package's word) and prints the
value as that level plus the difference, which is arithmetic, not a claim about its meaning.
"""
from __future__ import annotations

from .._records import dataclass
from .._enums import NamedIntEnum
from .._spec import CONSTS
from ._rules import ALLOCINFO, quoted
from ._view import word_of

# the levels are the table's d3dukmdt.h constants
LEVELS = {c.name.rsplit("_", 1)[1]: c.value for c in CONSTS.values() if c.name.startswith("D3DDDI_ALLOCATIONPRIORITY_")}
D3DDDI_ALLOCATIONPRIORITY_MINIMUM = LEVELS["MINIMUM"]
D3DDDI_ALLOCATIONPRIORITY_LOW = LEVELS["LOW"]
D3DDDI_ALLOCATIONPRIORITY_NORMAL = LEVELS["NORMAL"]
D3DDDI_ALLOCATIONPRIORITY_HIGH = LEVELS["HIGH"]
D3DDDI_ALLOCATIONPRIORITY_MAXIMUM = LEVELS["MAXIMUM"]


class PriorityBand(NamedIntEnum):
    """The band of a priority (the package's grouping); a member's value is the level the band starts at."""

    INVALID = 0  # 0 is an invalid initial allocation priority
    BELOW_MINIMUM = 1  # 1 .. MINIMUM-1: allowed, but below every named level
    MINIMUM = D3DDDI_ALLOCATIONPRIORITY_MINIMUM
    LOW = D3DDDI_ALLOCATIONPRIORITY_LOW
    NORMAL = D3DDDI_ALLOCATIONPRIORITY_NORMAL
    HIGH = D3DDDI_ALLOCATIONPRIORITY_HIGH
    MAXIMUM = D3DDDI_ALLOCATIONPRIORITY_MAXIMUM


_INVALID = quoted(ALLOCINFO, "0 is an invalid initial allocation priority")
_NAMED = (PriorityBand.MAXIMUM, PriorityBand.HIGH, PriorityBand.NORMAL, PriorityBand.LOW, PriorityBand.MINIMUM)


@dataclass(frozen=True)
class Priority:
    value: int
    band: PriorityBand

    @property
    def exact(self) -> bool:
        return self.band >= PriorityBand.MINIMUM and self.value == self.band

    @property
    def constant(self) -> str | None:
        """The D3DDDI_ALLOCATIONPRIORITY_* name when the value is exactly one, else None."""
        return f"D3DDDI_ALLOCATIONPRIORITY_{self.band.name}" if self.exact else None

    def __str__(self) -> str:
        if self.band is PriorityBand.INVALID:
            return _INVALID
        if self.band is PriorityBand.BELOW_MINIMUM:
            return f"D3DDDI_ALLOCATIONPRIORITY_MINIMUM - {D3DDDI_ALLOCATIONPRIORITY_MINIMUM - self.value:#x}"
        if self.exact:
            return self.constant
        return f"D3DDDI_ALLOCATIONPRIORITY_{self.band.name} + {self.value - self.band:#x}"


def decode_priority(value) -> Priority:
    """The band of an AllocationPriority value (an int, or a DXGK_ALLOCATIONINFO instance)."""
    if hasattr(type(value), "_c_name_") and type(value)._c_name_ == "DXGK_ALLOCATIONINFO":
        value = value.AllocationPriority
    word = word_of(value, ("UINT",))
    if word == 0:
        return Priority(0, PriorityBand.INVALID)
    for band in _NAMED:
        if word >= band:
            return Priority(word, band)
    return Priority(word, PriorityBand.BELOW_MINIMUM)
