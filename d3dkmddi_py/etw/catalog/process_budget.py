"""VidMmProcessBudgetChange (event 366, task 218, template VidMmProcessBudgetChangeArgs): a process's video
memory budget on an adapter and memory segment group changed; a series per (process, physical adapter,
segment group), beside its usage (VidMmProcessUsageChange)."""
from __future__ import annotations

from ..registry import EventEntry, Mapping, TableSpec, field_columns, register
from ..schema import POINTER, UINT8, UINT16, UINT32, UINT64
from ..section import Section, bytes_text, plural
from .process_usage import SEGMENT_GROUPS, key, key_text

EVENT = "VidMmProcessBudgetChange"
FIELDS = (("NewBudget", UINT64), ("OldBudget", UINT64), ("pDxgAdapter", POINTER), ("ProcessId", UINT32),
          ("PhysicalAdapterIndex", UINT16), ("NewPriorityBand", UINT8), ("OldPriorityBand", UINT8),
          ("NewVisibilityState", UINT8), ("OldVisibilityState", UINT8), ("MemorySegmentGroup", UINT8))
VISIBILITY = {"Minimized": 0, "Occluded": 1, "Visible": 2}  # the manifest's VIDMM_BUDGET_VISIBILITY_STATE

MAPPING = (
    Mapping(EVENT, "NewBudget", None, None, "the process's budget now, in bytes: the kernel's, no mirror member"),
    Mapping(EVENT, "OldBudget", None, None, "the budget before this change (the series keeps the new values)"),
    Mapping(EVENT, "pDxgAdapter", None, None, "the kernel's adapter object: it groups the series by adapter"),
    Mapping(EVENT, "ProcessId", None, None, "the process's id, as VidMmProcessUsageChange gives it"),
    Mapping(EVENT, "PhysicalAdapterIndex", None, None, "the linked adapter's index: a series per index"),
    Mapping(EVENT, "NewPriorityBand", None, None, "the kernel's budget priority band now; no mirror member"),
    Mapping(EVENT, "OldPriorityBand", None, None, "the band before this change"),
    Mapping(EVENT, "NewVisibilityState", None, None, "VIDMM_BUDGET_VISIBILITY_STATE (0 Minimized, 1 Occluded, 2 "
                                                     "Visible): the process's windows, as the kernel sees them"),
    Mapping(EVENT, "OldVisibilityState", None, None, "the visibility before this change"),
    Mapping(EVENT, "MemorySegmentGroup", None, None, "the D3DKMT_MEMORY_SEGMENT_GROUP (0 Local, 1 NonLocal, 2 "
                                                     "NonBudget): the kernel's grouping, no descriptor member"),
)


def apply(tracker, event):
    """One more sample of the process's budget."""
    a = tracker.state(event.adapter)
    tracker.series_of(a.budget, key(event)).add(event.number, event.fields["NewBudget"])


class _Text(Section):
    def adapter(self, out, tracker, a) -> None:
        if not a.budget:
            return
        out.line(f"\n-- video memory budget per process and segment group ({EVENT})")
        for k in sorted(a.budget):
            s = a.budget[k]
            out.line(f"   {key_text(k)}: {plural(s.count, 'sample')}, now {bytes_text(s.last)}, lowest "
                     f"{bytes_text(s.low)}, highest {bytes_text(s.high)}")

    def counts(self, tracker) -> list:
        return [plural(sum(len(a.budget) for a in tracker.adapters.values()), "process group")]


register(EventEntry(
    event=EVENT, ids={366: "Info"}, task=218, symbols={366: EVENT}, versions={0: FIELDS}, manifest_version=0,
    templates={366: "VidMmProcessBudgetChangeArgs"}, mapping=MAPPING, adapter="pDxgAdapter",
    value_maps={"NewVisibilityState": VISIBILITY, "MemorySegmentGroup": SEGMENT_GROUPS},
    table=TableSpec("process_budget", field_columns(FIELDS, skip=("pDxgAdapter",))), apply=apply, text=_Text(),
    order=41))
