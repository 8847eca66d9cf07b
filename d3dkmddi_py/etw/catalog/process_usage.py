"""VidMmProcessUsageChange (event 367, task 219, template VidMmProcessUsageChangeArgs): a process's video
memory usage on an adapter and memory segment group changed; a series per (process, physical adapter,
segment group)."""
from __future__ import annotations

from operator import itemgetter

from ..model.registry import Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..model.templates import map_names
from ..outputs import panels as draw
from ..model.section import SeriesSection, bytes_text

EVENT = "VidMmProcessUsageChange"
FIELDS = manifest_fields(367)  # the manifest's template
# the manifest's D3DKMT_MEMORY_SEGMENT_GROUP value map (VidMmProcessBudgetChange's MemorySegmentGroup has it)
GROUP_NAMES = map_names("D3DKMT_MEMORY_SEGMENT_GROUP")[1]

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
    a, k = tracker.adapter(event.adapter), key(event)
    return tuple(None if s is None else s.last for s in (a.usage.get(k), a.budget.get(k)))


def apply(tracker, event) -> tuple:
    """One more sample of the process's usage; returns ``memory``."""
    tracker.sample(event, "usage", key(event), event.fields["NewUsage"])
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


def take(collector, np, cells, x, numbers, adapters) -> None:
    """The process_memory table's rows: a usage event's carry NewUsage, a budget event's NewBudget."""
    keys = [draw.plain(cells[k]) for k in KEY]
    for group, field in (("usage", "NewUsage"), ("budget", "NewBudget")):
        values = draw.plain(cells[field])
        rows = [i for i, v in enumerate(values) if v is not None]
        if rows:
            draw.grouped(collector, np, group, [adapters[i] for i in rows], [[k[i] for i in rows] for k in keys],
                         [values[i] for i in rows], x[rows], numbers[rows])


def panel(np, picture, a, ax, columns: int) -> None:
    """Each process's usage per segment group, and dashed, its budget."""
    usage, budget = a.group("usage"), a.group("budget")
    title = f"adapter 0x{a.pointer:x}: usage per process and segment group ({EVENT}), dashed: its budget " \
            f"(VidMmProcessBudgetChange)"
    if not usage and not budget:
        return draw.empty(ax, title, f"no {EVENT} or VidMmProcessBudgetChange events for this adapter: "
                                     f"{draw.record_hint((367, 366))}")
    merged = {k: s for k, s in list(budget.items()) + list(usage.items())}  # the highest of either reaches
    keys = draw.top(merged, list(merged))
    colors = draw.colors(keys)
    draw.axes(np, picture, ax, title, max(s[k].highest() for s in (usage, budget) for k in keys if k in s))
    draw.lines(np, picture, ax, [(f"{key_text(k)}: usage", usage[k], colors[k]) for k in keys if k in usage],
               columns)
    draw.lines(np, picture, ax, [(f"{key_text(k)}: budget", budget[k], colors[k]) for k in keys if k in budget],
               columns, linestyle="--")
    draw.marks(np, picture, a, ax, columns)
    draw.legend(ax, len(merged) - len(keys), "process groups")


register(EventEntry(
    event=EVENT, ids=(367,), mapping=MAPPING, adapter="pDxgAdapter",
    table=MEMORY_TABLE, apply=apply, text=TEXT, order=40, groups=("usage",),
    panel=draw.Panel("memory", KEY + ("NewUsage", "NewBudget"), take, panel, order=20)))
