"""VidMmProcessUsageChange (event 367, task 219, template VidMmProcessUsageChangeArgs): a process's video
memory usage on an adapter and memory segment group changed; a series per (process, physical adapter,
segment group)."""
from __future__ import annotations

from operator import itemgetter

from ..model.registry import Column, EventEntry, Mapping, TableSpec, register
from ..model.schema import POINTER, UINT8, UINT16, UINT32, UINT64
from ..outputs.section import SeriesSection, bytes_text

EVENT = "VidMmProcessUsageChange"
FIELDS = (("NewUsage", UINT64), ("OldUsage", UINT64), ("pDxgAdapter", POINTER), ("ProcessId", UINT32),
          ("PhysicalAdapterIndex", UINT16), ("MemorySegmentGroup", UINT8))
# the manifest's D3DKMT_MEMORY_SEGMENT_GROUP value map (VidMmProcessBudgetChange's MemorySegmentGroup has it)
SEGMENT_GROUPS = {"Local": 0, "NonLocal": 1, "NonBudget": 2}
GROUP_NAMES = {v: k for k, v in SEGMENT_GROUPS.items()}

MAPPING = (
    Mapping(EVENT, "NewUsage", None, None, "the process's usage now, in bytes: the kernel's count, no mirror member"),
    Mapping(EVENT, "OldUsage", None, None, "the usage before this change (the series keeps the new values)"),
    Mapping(EVENT, "pDxgAdapter", None, None, "the kernel's adapter object: it groups the series by adapter"),
    Mapping(EVENT, "ProcessId", None, None, "the process's id (a number, not the hProcessId pointer of the "
                                            "allocation events)"),
    Mapping(EVENT, "PhysicalAdapterIndex", None, None, "the linked adapter's index: a series per index"),
    Mapping(EVENT, "MemorySegmentGroup", None, None, "the D3DKMT_MEMORY_SEGMENT_GROUP (0 Local, 1 NonLocal, 2 "
                                                     "NonBudget): the kernel's grouping, no descriptor member"),
)


KEY = ("ProcessId", "PhysicalAdapterIndex", "MemorySegmentGroup")  # a series per these fields' values
_KEY = itemgetter(*KEY)


def key(event) -> tuple:
    return _KEY(event.fields)


def key_text(k: tuple) -> str:
    process, index, group = k
    return f"process {process}, physical adapter {index}, group {GROUP_NAMES.get(group, group)}"


def memory(tracker, event) -> tuple:
    """(usage, budget) of the event's process, physical adapter and segment group after it (None: not seen yet)."""
    a, k = tracker._state(event.adapter), key(event)
    return tuple(None if s is None else s.last for s in (a.usage.get(k), a.budget.get(k)))


def apply(tracker, event) -> tuple:
    """One more sample of the process's usage; returns ``memory``."""
    tracker._sample(event, "usage", key(event), event.fields["NewUsage"])
    return memory(tracker, event)


def _field(name: str):
    return lambda e, r: e.fields.get(name)


# the table of both events (VidMmProcessUsageChange, VidMmProcessBudgetChange): a row per event with the process's
# usage and budget after it, then each event's own fields (empty in the other's rows)
MEMORY_TABLE = TableSpec("process_memory", (
    Column("ProcessId", "int", field="ProcessId"), Column("PhysicalAdapterIndex", "int", field="PhysicalAdapterIndex"),
    Column("MemorySegmentGroup", "int", field="MemorySegmentGroup"),
    Column("usage", "ohex", value=lambda e, r: r[0]), Column("budget", "ohex", value=lambda e, r: r[1]),
    *(Column(n, "ohex", value=_field(n)) for n in ("NewUsage", "OldUsage", "NewBudget", "OldBudget")),
    *(Column(n, "opt", value=_field(n)) for n in ("NewPriorityBand", "OldPriorityBand", "NewVisibilityState",
                                                  "OldVisibilityState"))))


def _budget(a, k) -> str:
    budget = a.budget.get(k)
    return f", budget now {bytes_text(budget.last)}" if budget is not None else ""


TEXT = SeriesSection("usage", f"video memory usage per process and segment group ({EVENT})", "process group",
                     key_text, "usage of", _budget)


register(EventEntry(
    event=EVENT, ids={367: "Info"}, task=219, symbols={367: EVENT}, versions={0: FIELDS}, manifest_version=0,
    templates={367: "VidMmProcessUsageChangeArgs"}, mapping=MAPPING, adapter="pDxgAdapter",
    table=MEMORY_TABLE, apply=apply, text=TEXT,
    order=40))
