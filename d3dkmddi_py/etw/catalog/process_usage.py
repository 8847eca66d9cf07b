"""VidMmProcessUsageChange (event 367, task 219, template VidMmProcessUsageChangeArgs): a process's video
memory usage on an adapter and memory segment group changed; a series per (process, physical adapter,
segment group)."""
from __future__ import annotations

from operator import itemgetter

from ..model.registry import Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..outputs import panels as draw
from ..model.section import SeriesSection, bytes_text, process_text
from ._pressure import GROUP_NAMES, budget_sample

EVENT = "VidMmProcessUsageChange"
FIELDS = manifest_fields(367)  # the manifest's template

MAPPING = (
    Mapping(EVENT, "NewUsage", None, None, "the process's usage now, in bytes: the kernel's count, no mirror member"),
    Mapping(EVENT, "OldUsage", None, None, "the usage before this change (the series keeps the new values)"),
    Mapping(EVENT, "pDxgAdapter", None, None, "the kernel's adapter object: it groups the series by adapter"),
    Mapping(EVENT, "ProcessId", None, None, "the process's id: its allocations' hProcessId holds the same number "
                                            "([reading]: a HANDLE-sized field holding the process id, as the kernel's "
                                            "process ids are HANDLEs), so paging and evictions meet it there"),
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
    return f"{process_text(process)}, physical adapter {index}, group {GROUP_NAMES.get(group, group)}"


def memory(tracker, event) -> tuple:
    """(usage, budget) of the event's process, physical adapter and segment group after it (None: not seen yet)."""
    a, k = tracker.adapter(event.adapter), key(event)
    return tuple(None if s is None else s.last for s in (a.usage.get(k), a.budget.get(k)))


def apply(tracker, event) -> tuple:
    """One more sample of the process's usage (a stretch over budget may begin or end); returns ``memory``."""
    tracker.sample(event, "usage", key(event), event.fields["NewUsage"])
    found = memory(tracker, event)
    budget_sample(tracker, event, *found)
    return found


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


def over_budget(np, picture, usage, budget) -> list:
    """(x from, x to) of each stretch the usage stood above the budget, in event order as the tables' over_budget
    rows (``_pressure.budget_sample``) find them: after each sample, the last usage against the last budget."""
    numbers = np.concatenate([np.frombuffer(s.numbers, dtype=np.int64) for s in (usage, budget)])
    xs = np.concatenate([picture.x(usage), picture.x(budget)])
    values = np.concatenate([np.frombuffer(s.values, dtype=np.uint64) for s in (usage, budget)])
    is_usage = np.r_[np.ones(len(usage), dtype=bool), np.zeros(len(budget), dtype=bool)]
    order = np.argsort(numbers, kind="stable")
    xs, values, is_usage = xs[order], values[order], is_usage[order]
    at = np.arange(len(order))
    last_usage = np.maximum.accumulate(np.where(is_usage, at, -1))  # the index of the last usage sample so far
    last_budget = np.maximum.accumulate(np.where(is_usage, -1, at))
    seen = (last_usage >= 0) & (last_budget >= 0)
    over = seen & (values[np.maximum(last_usage, 0)] > values[np.maximum(last_budget, 0)])
    edges = np.flatnonzero(np.diff(np.r_[False, over, False].astype(np.int8)))
    out = []
    for begin, stop in zip(edges[0::2].tolist(), edges[1::2].tolist()):
        out.append((float(xs[begin]), float(xs[stop]) if stop < len(xs) else picture.end))
    return out


def panel(np, picture, a, ax, columns: int) -> None:
    """Each process's usage per segment group, and dashed, its budget."""
    usage, budget = a.group("usage"), a.group("budget")
    title = f"adapter 0x{a.pointer:x}: usage per process and group ({EVENT}), dashed: budget " \
            f"(VidMmProcessBudgetChange), shaded: over it"
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
    for k in keys:
        if k in usage and k in budget:
            for start, end in over_budget(np, picture, usage[k], budget[k]):
                if end > start:
                    ax.axvspan(start, end, color=colors[k], alpha=0.15, linewidth=0)
                else:  # begun by the last point drawn: no width to shade, a line where it begins
                    ax.axvline(start, color=colors[k], alpha=0.4, linewidth=1)
    draw.marks(np, picture, a, ax, columns)
    draw.legend(ax, len(merged) - len(keys), "process group")


register(EventEntry(
    event=EVENT, ids=(367,), mapping=MAPPING, adapter="pDxgAdapter",
    table=MEMORY_TABLE, apply=apply, text=TEXT, order=40, groups=("usage",),
    panel=draw.Panel("memory", KEY + ("NewUsage", "NewBudget"), take, panel, order=20)))
