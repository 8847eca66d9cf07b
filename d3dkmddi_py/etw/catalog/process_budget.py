"""VidMmProcessBudgetChange (event 366, task 218, template VidMmProcessBudgetChangeArgs): a process's video
memory budget on an adapter and memory segment group changed; a series per (process, physical adapter,
segment group), beside its usage (VidMmProcessUsageChange)."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, manifest_fields, register
from ..model.section import SeriesSection
from ._pressure import budget_sample
from .process_usage import MAPPING as USAGE_MAPPING, MEMORY_TABLE, key, key_text, memory

EVENT = "VidMmProcessBudgetChange"
FIELDS = manifest_fields(366)  # the manifest's template

SHARED = ("pDxgAdapter", "PhysicalAdapterIndex", "MemorySegmentGroup")  # said as VidMmProcessUsageChange says them
MAPPING = tuple(Mapping(EVENT, m.field, m.mirror_type, m.mirror, m.reason) for m in USAGE_MAPPING
                if m.field in SHARED) + (
    Mapping(EVENT, "NewBudget", None, None, "the process's budget now, in bytes: the kernel's, no mirror member"),
    Mapping(EVENT, "OldBudget", None, None, "the budget before this change (the series keeps the new values)"),
    Mapping(EVENT, "ProcessId", None, None, "the process's id, as VidMmProcessUsageChange gives it"),
    Mapping(EVENT, "NewPriorityBand", None, None, "the kernel's budget priority band now; no mirror member"),
    Mapping(EVENT, "OldPriorityBand", None, None, "the band before this change"),
    Mapping(EVENT, "NewVisibilityState", None, None, "VIDMM_BUDGET_VISIBILITY_STATE (0 Minimized, 1 Occluded, 2 "
                                                     "Visible): the process's windows, as the kernel sees them"),
    Mapping(EVENT, "OldVisibilityState", None, None, "the visibility before this change"),
)


def apply(tracker, event) -> tuple:
    """One more sample of the process's budget (a stretch over budget may begin or end); returns (usage, budget)
    after it."""
    tracker.sample(event, "budget", key(event), event.fields["NewBudget"])
    found = memory(tracker, event)
    budget_sample(tracker, event, *found)
    return found


register(EventEntry(
    event=EVENT, ids=(366,), mapping=MAPPING, adapter="pDxgAdapter",
    table=MEMORY_TABLE, apply=apply, groups=("budget",),
    text=SeriesSection("budget", f"video memory budget per process and segment group ({EVENT})", "process group",
                       key_text),
    order=41))
