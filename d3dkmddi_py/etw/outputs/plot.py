"""A trace as a picture (``d3dkmddi etw TRACE --plot OUT.png|OUT.svg``, ``etw.plot``): per adapter, the
bytes resident per segment against each segment's Size (ReportSegment), each process's usage against its
budget per segment group, and the live allocated bytes per process (AdapterAllocation Start / DCStart add
an allocation's Size, a Stop of one seen starting takes it away), with the events that have error
findings marked at their time.

The series are the tables' rows: the trace is read by ``TraceTables`` with sinks in place of files (the
rows ``--format`` writes), and a row's time becomes a point's x in ``seconds`` alone.  Memory: 24 bytes a
sample (x, event number, value, as arrays), no Python object per event, and 33 bytes a live
allocation (its adapter, handle, process and size as arrays, for its Stop); at most 4 points a pixel column are drawn per series
(first, lowest, highest, last).  Keys are bounded: MAX_ADAPTERS adapters and MAX_SERIES series per
adapter and panel are collected, the rest counted and said in the figure.  matplotlib is imported only
when drawing (Agg and SVG, no pyplot), with a fixed SVG hash salt and no dates in the file.
"""
from __future__ import annotations

import os
from array import array
from hashlib import sha256

from ..._numpy import numpy_module, optional_module
from ..._records import dataclass, field
from ...errors import EtwInputError, bad_argument
from ...outfile import check_output, open_output, safe_name
from ...render import RULE_KEY
from ...semantics.explain import _size_text
from ..catalog import ENTRIES
from ..catalog.process_usage import KEY as USAGE_KEY, key_text
from ..model.tracker import Tracker
from ..model.registry import HEAD
from .section import plural
from ..model.schema import ADAPTER_ALLOCATION, PROVIDER, PROVIDER_GUID, REPORT_SEGMENT
from .tables import table_names

EXTRA = "plot"  # pip install 'd3dkmddi_py[plot]'
FORMATS = ("png", "svg")
RESIDENT, USAGE, BUDGET = "TotalBytesResidentInSegment", "VidMmProcessUsageChange", "VidMmProcessBudgetChange"
# the keywords= of these events in the provider's manifest (Microsoft-Windows-DxgKrnl.manifest.xml: events 274,
# 367, 366 and 33/34/35; the keyword masks from its <keywords>): what to record for a panel the trace cannot fill
KEYWORDS = {RESIDENT: ("Base", 0x1), USAGE: ("References", 0x4), BUDGET: ("References", 0x4),
            ADAPTER_ALLOCATION: ("Resource", 0x40)}
MAX_ADAPTERS = 64  # adapters collected; events of others are counted
MAX_SERIES = 256  # series collected per adapter and panel; samples of others are counted
DRAWN_ADAPTERS = 4  # adapters drawn, the most samples first
DRAWN_SERIES = 8  # series drawn per panel, the highest first
WIDTH, PANEL_HEIGHT, NOTES_HEIGHT, DPI = 12.0, 3.0, 0.6, 100  # inches, dots an inch: 1,200 pixel columns
POINTS_PER_COLUMN = 4
SALT = "d3dkmddi_py"  # svg.hashsalt: the SVG's ids are the same every run
PANELS = ("resident", "memory", "live")


class Samples:
    """A value over time as columns: seconds (NaN: the row had no time), the event's number, the value."""

    __slots__ = ("x", "numbers", "values")

    def __init__(self):
        self.x, self.numbers, self.values = array("d"), array("q"), array("Q")

    def __len__(self) -> int:
        return len(self.values)

    def extend(self, np, x, numbers, values) -> None:
        self.x.frombytes(np.ascontiguousarray(x, dtype=np.float64).tobytes())
        self.numbers.frombytes(np.ascontiguousarray(numbers, dtype=np.int64).tobytes())
        self.values.frombytes(np.ascontiguousarray(values, dtype=np.uint64).tobytes())

    def highest(self) -> int:
        """The highest value (NumPy's pass, not Python's over each sample)."""
        np = numpy_module()
        return int(np.frombuffer(self.values, dtype=np.uint64).max())

    def append(self, x: float, number: int, value: int) -> None:
        self.x.append(x)
        self.numbers.append(number)
        self.values.append(value)


@dataclass
class AdapterPicture:
    """One adapter's series: resident bytes by segment id (with the segment's last reported Size), usage and
    budget by (process id, physical adapter index, segment group), live bytes by hProcessId, and the events
    with error findings (values: how many)."""

    pointer: int
    resident: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    live: dict = field(default_factory=dict)
    marks: Samples = field(default_factory=Samples)
    dropped: dict = field(default_factory=dict)  # panel -> samples of series past MAX_SERIES
    unmatched: int = 0  # Stops of allocations the trace did not show starting (nothing taken away)

    def samples(self) -> int:
        return sum(len(s) for d in (self.resident, self.usage, self.budget, self.live) for s in d.values())


@dataclass
class Picture:
    """What the figure draws: per adapter its series, the error findings by rule, and what was not drawn."""

    name: str
    adapters: dict  # pointer -> AdapterPicture
    rules: dict  # rule id -> error findings
    events: int
    dropped_events: int  # events of adapters past MAX_ADAPTERS
    loose: Samples  # events with error findings that name no adapter (drawn on every adapter's panels)
    axis: str = "seconds"  # or "number": some row had no time, so x is the event's number
    origin: float = 0.0  # the seconds of the first point drawn
    end: float = 0.0  # the x of the last point drawn: each value holds until it

    def x(self, samples: Samples):
        """The x of each sample as drawn: seconds from the first point drawn, or the event's number."""
        np = numpy_module()
        if self.axis == "number":
            return np.frombuffer(samples.numbers, dtype=np.int64).astype(np.float64)
        return np.frombuffer(samples.x, dtype=np.float64) - self.origin


def seconds(np, table):
    """Each row's time in seconds from the trace's start (the one place a row's time becomes x): the table's
    ``ms`` column, which every event table has (registry.HEAD); NaN where a row has no time."""
    ms = dict(zip(table.names, table.columns))["ms"]  # a float64 array, or a list where None is NaN as float64
    return (ms if getattr(ms, "dtype", None) == np.float64 else np.array(_plain(ms), dtype=np.float64)) / 1000


def _plain(column) -> list:
    return column.tolist() if hasattr(column, "tolist") else list(column)


class _Sink:
    """A table's sink for TraceTables: its rows go to the collector."""

    def __init__(self, collector, name: str, columns):
        self.collector, self.name, self.columns = collector, name, columns  # the columns the picture reads

    def write(self, table) -> None:
        self.collector.take(self.name, table)

    def close(self) -> None:
        pass

    def restart(self) -> None:  # the tables start again from the first event
        self.collector.reset()


class _Collector:
    """The series of the tables' rows, as they are written."""

    def __init__(self):
        self.np = numpy_module()
        self.handlers = {ENTRIES[REPORT_SEGMENT].table.name: self._segments,
                         ENTRIES[RESIDENT].table.name: self._resident, ENTRIES[USAGE].table.name: self._memory,
                         ENTRIES[ADAPTER_ALLOCATION].table.name: self._allocations}
        self.reset()

    def reset(self) -> None:
        self.adapters: dict = {}
        self.rules: dict = {}
        np = self.np  # the live allocations (adapter, identity's kind and handle, hProcessId, Size), 33 bytes each
        self.live = {k: np.zeros(0, dtype=bool if k == "kind" else np.uint64)
                     for k in ("ptr", "kind", "handle", "process", "size")}
        self.totals: dict = {}  # (adapter, hProcessId) -> live bytes, for the processes drawn
        self.dropped_events = 0
        self.loose = Samples()

    def reads(self) -> dict:
        """The columns the picture reads of each table (every event table's head and errors, for the marks; the
        tables of the state at the end, none): the tables make no other cells."""
        head = frozenset(n for n, _k in HEAD) | {"errors"}
        own = {ENTRIES[REPORT_SEGMENT].table.name: ("ulSegmentId", "Size"),
               ENTRIES[RESIDENT].table.name: ("SegmentId", "TotalBytesResident"),
               ENTRIES[USAGE].table.name: USAGE_KEY + ("NewUsage", "NewBudget"),
               ENTRIES[ADAPTER_ALLOCATION].table.name: ("hDxgGlobalAlloc", "hVidMmGlobalAlloc", "hProcessId", "Size")}
        reads = {name: head | frozenset(own.get(name, ())) for name in dict.fromkeys(e.table.name
                                                                                     for e in ENTRIES.values())}
        reads.update({t.name: frozenset() for e in ENTRIES.values() for t in e.state_tables})
        reads["findings"] = None  # a few rows: the table's writer makes every cell
        return reads

    def sinks(self) -> dict:
        reads = self.reads()
        return {name: _Sink(self, name, reads[name]) for name in table_names()}

    def adapter(self, pointer: int):
        a = self.adapters.get(pointer)
        if a is None and len(self.adapters) < MAX_ADAPTERS:
            a = self.adapters[pointer] = AdapterPicture(pointer)
        return a

    def series(self, a: AdapterPicture, panel: str, key, count: int = 1):
        """The Samples of ``key`` in the adapter's dict ``panel``, or None past MAX_SERIES (counted)."""
        found = getattr(a, panel)
        s = found.get(key)
        if s is None:
            if len(found) >= MAX_SERIES:
                a.dropped[panel] = a.dropped.get(panel, 0) + count
                return None
            s = found[key] = Samples()
        return s

    def take(self, name: str, table) -> None:
        if not table.rows:
            return
        cells = dict(zip(table.names, table.columns))
        if name == "findings":
            for rule, severity in zip(_plain(cells[RULE_KEY]), _plain(cells["severity"])):
                if severity == "error":
                    self.rules[rule] = self.rules.get(rule, 0) + 1
            return
        if "errors" not in cells:  # a table of the state at the trace's end (live, processes), not of events
            return
        np = self.np
        x = seconds(np, table)
        numbers = np.asarray(cells["number"], dtype=np.int64)
        adapters = _plain(cells["adapter"])
        handler = self.handlers.get(name)
        if handler is not None:
            handler(np, cells, x, numbers, adapters)
        errors = np.asarray(cells["errors"], dtype=np.int64)
        for i in np.flatnonzero(errors > 0).tolist():
            if adapters[i] is None:
                self.loose.append(x[i], numbers[i], errors[i])
                continue
            a = self.adapter(adapters[i])
            if a is not None:
                a.marks.append(x[i], numbers[i], errors[i])

    def _segments(self, np, cells, x, numbers, adapters) -> None:
        for pointer, sid, size in zip(adapters, _plain(cells["ulSegmentId"]), _plain(cells["Size"])):
            a = self.adapter(pointer)
            if a is not None:
                a.sizes[sid] = size  # a later report replaces

    def _grouped(self, np, panel: str, adapters, keys: list, values, x, numbers) -> None:
        """Rows into the series of (adapter, key) they belong to, a chunk at a time."""
        columns = np.array([adapters] + [_plain(k) for k in keys], dtype=np.uint64).T
        values = np.asarray(_plain(values), dtype=np.uint64)
        unique, inverse = np.unique(columns, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for j, row in enumerate(unique.tolist()):
            rows = np.flatnonzero(inverse == j)
            a = self.adapter(row[0])
            if a is None:
                self.dropped_events += len(rows)
                continue
            key = row[1] if len(row) == 2 else tuple(row[1:])
            s = self.series(a, panel, key, len(rows))
            if s is not None:
                s.extend(np, x[rows], numbers[rows], values[rows])

    def _resident(self, np, cells, x, numbers, adapters) -> None:
        self._grouped(np, "resident", adapters, [cells["SegmentId"]], cells["TotalBytesResident"], x, numbers)

    def _memory(self, np, cells, x, numbers, adapters) -> None:
        """The process_memory table: a usage event's rows carry NewUsage, a budget event's NewBudget."""
        keys = [_plain(cells[k]) for k in USAGE_KEY]
        for panel, field in (("usage", "NewUsage"), ("budget", "NewBudget")):
            values = _plain(cells[field])
            rows = [i for i, v in enumerate(values) if v is not None]
            if rows:
                self._grouped(np, panel, [adapters[i] for i in rows], [[k[i] for i in rows] for k in keys],
                              [values[i] for i in rows], x[rows], numbers[rows])

    def _allocations(self, np, cells, x, numbers, adapters) -> None:
        """Live bytes per process after each row: as Tracker.apply keeps live allocations (per adapter, by
        ``identity``; a Start of a live one replaces it, a Stop removes the one it names), column-wise: a row's
        live allocation of the same key is the last row before it with that key when that row is no Stop
        (every row with the key takes it away, only a Start or DCStart puts it back)."""
        ptr = np.asarray(adapters, dtype=np.uint64)
        pointers, first = np.unique(ptr, return_index=True)
        kept = [p for p in pointers[np.argsort(first, kind="stable")].tolist() if self.adapter(p) is not None]
        ok = np.isin(ptr, np.asarray(kept, dtype=np.uint64))  # rows of adapters past MAX_ADAPTERS are counted
        self.dropped_events += int(len(ok) - ok.sum())
        stop = np.fromiter((o == "Stop" for o in _plain(cells["opcode"])), dtype=bool, count=len(ptr))[ok]
        dxg = np.asarray(cells["hDxgGlobalAlloc"], dtype=np.uint64)[ok]
        kind = dxg != 0  # identity_of: hDxgGlobalAlloc when it is not 0, else hVidMmGlobalAlloc
        handle = np.where(kind, dxg, np.asarray(cells["hVidMmGlobalAlloc"], dtype=np.uint64)[ok])
        process = np.asarray(cells["hProcessId"], dtype=np.uint64)[ok]
        size = np.asarray(cells["Size"], dtype=np.uint64)[ok]
        x, numbers, ptr = x[ok], numbers[ok], ptr[ok]
        held = self.live  # the live allocations the rows before left, as rows with no Stop before this chunk's
        h = len(held["ptr"])
        a_ptr, a_kind, a_handle = (np.concatenate([held[k], v]) for k, v in
                                   (("ptr", ptr), ("kind", kind), ("handle", handle)))
        a_process, a_size = np.concatenate([held["process"], process]), np.concatenate([held["size"], size])
        a_stop = np.concatenate([np.zeros(h, dtype=bool), stop])
        order = np.lexsort((np.arange(len(a_ptr)), a_handle, a_kind, a_ptr))  # by key, then in order
        same = (a_ptr[order][1:] == a_ptr[order][:-1]) & (a_kind[order][1:] == a_kind[order][:-1]) & \
            (a_handle[order][1:] == a_handle[order][:-1])
        before = np.full(len(a_ptr), -1, dtype=np.int64)
        before[order[1:][same]] = order[:-1][same]
        before = before[h:]  # each row's previous row of its key (-1: none)
        gone = before >= 0
        gone[gone] = ~a_stop[before[gone]]
        gone_process = np.where(gone, a_process[np.maximum(before, 0)], 0)
        gone_size = np.where(gone, a_size[np.maximum(before, 0)], 0)
        last = np.ones(len(a_ptr), dtype=bool)  # each key's last row: live after the chunk unless a Stop
        last[order[:-1][same]] = False
        live = last & ~a_stop
        self.live = {"ptr": a_ptr[live], "kind": a_kind[live], "handle": a_handle[live],
                     "process": a_process[live], "size": a_size[live]}
        unmatched = stop & ~gone
        for p, n in zip(*(u.tolist() for u in np.unique(ptr[unmatched], return_counts=True))):
            self.adapters[p].unmatched += n
        # the changes, in row order (a row's removal before its addition): a Start of a live allocation of the
        # same process is one change, one sample
        same_process = gone & (gone_process == process)
        out = gone & (stop | ~same_process)
        add = ~stop
        rows = np.concatenate([np.flatnonzero(out), np.flatnonzero(add)])
        seq = np.argsort(np.concatenate([rows[:out.sum()] * 2, rows[out.sum():] * 2 + 1]), kind="stable")
        rows = rows[seq]
        owner = np.concatenate([gone_process[out], process[add]])[seq]
        taken = np.where(same_process, gone_size, 0)[add]
        positive = size[add]
        # the totals are exact in uint64 (wrapping as the deltas do) while they stay under 2**64; else as Python
        # ints, which Samples refuses past 2**64 as it always did
        exact = float(positive.sum(dtype=np.float64)) + float(sum(self.totals.values(), 0)) < 2.0 ** 63
        dtype = np.uint64 if exact else object
        delta = np.concatenate([(np.uint64(0) - gone_size[out]).astype(dtype) if exact else
                                -gone_size[out].astype(object), positive.astype(dtype) - taken.astype(dtype)])[seq]
        c_ptr = ptr[rows]
        firsts = {}
        for i, key in enumerate(zip(c_ptr.tolist(), owner.tolist())):
            firsts.setdefault(key, i)  # Python keys, in the order their first change comes
        group = np.lexsort((np.arange(len(rows)), owner, c_ptr))
        g_ptr, g_owner = c_ptr[group], owner[group]
        cuts = np.flatnonzero((g_ptr[1:] != g_ptr[:-1]) | (g_owner[1:] != g_owner[:-1])) + 1
        spans = {}
        for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(group)].tolist()):
            spans[(int(g_ptr[lo]), int(g_owner[lo]))] = group[lo:hi]
        for key in sorted(firsts, key=firsts.get):
            span = spans[key]
            a = self.adapters[key[0]]
            if key not in self.totals and self.series(a, "live", key[1], len(span)) is None:
                continue
            start = self.totals.get(key, 0)
            totals = np.cumsum(delta[span], dtype=dtype) + (np.uint64(start) if exact else start)
            self.totals[key] = int(totals[-1])
            a.live[key[1]].extend(np, x[rows[span]], numbers[rows[span]], totals)


# ------------------------------------------------------------------ reading
def series(source, *, target=None, name: str | None = None, reader=None) -> tuple:
    """(Picture, error-level findings) of a trace: ``source`` as ``etw.read`` takes it (or ``reader``, a
    TraceReader), read into the tables' rows; ``target`` as ``etw.adapters`` takes it."""
    from .tables import TraceTables
    from ..readers.xmlreader import read

    if reader is None:
        reader = read(source, name=name)
    collector = _Collector()
    tables = TraceTables(None, None, Tracker(target), sinks=collector.sinks())
    with tables:
        tables.read(reader)
        reader.check_found()
    c = collector
    picture = Picture(reader.name, c.adapters, dict(sorted(c.rules.items())), tables.events, c.dropped_events, c.loose)
    _place(picture)
    return picture, tables.errors


def _place(picture: Picture) -> None:
    """The x axis: seconds from the first point when every point has a time, else event numbers."""
    np = numpy_module()
    xs = [np.frombuffer(s.x, dtype=np.float64) for s in _all_samples(picture) if len(s)]
    if not xs:
        return
    x = np.concatenate(xs)
    if np.isnan(x).any():
        picture.axis = "number"
    else:
        picture.origin = float(x.min())
    picture.end = float(max(picture.x(s).max() for s in _all_samples(picture) if len(s)))


def _all_samples(picture: Picture):
    yield picture.loose
    for a in picture.adapters.values():
        yield a.marks
        for panel in (a.resident, a.usage, a.budget, a.live):
            yield from panel.values()


# ------------------------------------------------------------------ drawing
def reduce(np, x, y, columns: int):
    """(x, y) with at most POINTS_PER_COLUMN points in each of ``columns`` equal columns of x's range: each
    column's first, lowest, highest and last point, in x order (a line drawn through them covers the same
    pixels)."""
    if len(x) <= POINTS_PER_COLUMN * columns:
        return x, y
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    low, high = x[0], x[-1]
    span = high - low if high > low else 1.0
    bins = np.minimum(((x - low) / span * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    ends = np.r_[starts[1:], len(x)] - 1
    by_value = np.lexsort((y, bins))  # within each column, lowest first
    keep = np.unique(np.concatenate([starts, ends, by_value[starts], by_value[ends]]))
    return x[keep], y[keep]


def _step(top: float) -> int:
    """Bytes between two ticks: the least 1, 2, 4, 5 or 8 times 10**j times 2**(10k) of at least a sixth of
    ``top`` (so each tick is a whole number of KB, MB or GB, or of bytes)."""
    top = top / 6 if top > 0 else 1.0
    steps = sorted(m * 10 ** j << (10 * k) for k in range(7) for j in range(4) for m in (1, 2, 4, 5, 8))
    return next((s for s in steps if s >= top), steps[-1])


def figure(picture: Picture):
    """The matplotlib Figure of a Picture (no pyplot; draw it with savefig)."""
    optional_module("matplotlib", EXTRA, "the picture of a trace")
    from matplotlib.figure import Figure

    np = numpy_module()
    drawn = sorted(picture.adapters.values(), key=lambda a: (-a.samples() - len(a.marks), a.pointer))
    shown = drawn[:DRAWN_ADAPTERS]
    rows = max(1, len(shown) * len(PANELS))
    fig = Figure(figsize=(WIDTH, PANEL_HEIGHT * rows + NOTES_HEIGHT), dpi=DPI, layout="constrained")
    fig.suptitle(f"{picture.name}: {PROVIDER} video memory over time ({plural(picture.events, 'event')} read)",
                 fontsize=12)
    grid = fig.add_gridspec(rows + 1, 1, height_ratios=[PANEL_HEIGHT] * rows + [NOTES_HEIGHT])
    axes = [fig.add_subplot(grid[0])]
    axes += [fig.add_subplot(grid[i], sharex=axes[0]) for i in range(1, rows)]  # one time axis, labelled on each
    notes = fig.add_subplot(grid[rows])
    columns = int(WIDTH * DPI)
    for i, a in enumerate(shown):
        for j, panel in enumerate(PANELS):
            _PANELS[panel](np, picture, a, axes[i * len(PANELS) + j], columns)
    if not shown:
        axes[0].set_axis_off()
        axes[0].text(0.5, 0.5, "no adapter's memory events in this trace\n" + _record(RESIDENT, USAGE, BUDGET,
                                                                                    ADAPTER_ALLOCATION),
                     ha="center", va="center", transform=axes[0].transAxes, wrap=True)
    notes.set_axis_off()
    notes.text(0, 1, "\n".join(_notes(picture, drawn[DRAWN_ADAPTERS:])), fontsize=8, va="top", wrap=True,
               transform=notes.transAxes)
    return fig


def _notes(picture: Picture, hidden: list) -> list:
    notes = []
    errors = sum(picture.rules.values())
    if errors:
        rules = sorted(picture.rules.items(), key=lambda kv: (-kv[1], kv[0]))
        notes.append(f"{plural(errors, 'error finding')} (red marks: their events): "
                     + ", ".join(f"{r} ({n:,})" for r, n in rules[:6]) + (", ..." if len(rules) > 6 else ""))
    if hidden:
        notes.append(f"{len(hidden):,} more adapters not drawn (the {DRAWN_ADAPTERS} with the most samples are)")
    if picture.dropped_events:
        notes.append(f"{picture.dropped_events:,} events of adapters past the first {MAX_ADAPTERS} not collected")
    if picture.axis == "number":
        notes.append("x is the event's number: some event has no time the picture can read")
    return notes or [" "]


def _record(*events) -> str:
    """What to record for a panel the trace cannot fill: the events' keywords in the provider's manifest."""
    words = dict.fromkeys(KEYWORDS[e] for e in events)
    keywords = " and ".join(f"{w} (0x{m:x})" for w, m in words)
    return f"record the {PROVIDER} provider ({PROVIDER_GUID}) with the keyword{'s' * (len(words) > 1)} {keywords}"


def _axes(np, picture: Picture, ax, title: str, top: float) -> None:
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    ax.set_title(title, fontsize=10, loc="left")
    ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    ax.yaxis.set_major_locator(MultipleLocator(_step(top)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _size_text(int(round(v))) if v else "0"))
    ax.set_ylabel("bytes")
    ax.grid(True, alpha=0.3)
    if picture.axis == "number":
        ax.set_xlabel("event number")
    else:
        ax.set_xlabel("time from the first point drawn")
        ax.xaxis.set_major_formatter(FuncFormatter(_time_text))


def _time_text(v: float, _pos) -> str:
    return f"{v * 1000:g} ms" if abs(v) < 1 else f"{v:g} s"


def _empty(ax, title: str, text: str) -> None:
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True, fontsize=9)


def _marks(np, picture: Picture, a: AdapterPicture, ax, columns: int) -> None:
    """The events with error findings, a red mark at each (one a pixel column)."""
    x = np.concatenate([picture.x(a.marks), picture.x(picture.loose)])
    if not len(x):
        return
    x, _ = reduce(np, x, np.zeros(len(x)), columns // POINTS_PER_COLUMN)
    ax.vlines(x, 0, 0.05, transform=ax.get_xaxis_transform(), colors="red", linewidth=1,
              label=f"{plural(len(a.marks) + len(picture.loose), 'event')} with error findings")


def _lines(np, picture: Picture, ax, items: list, columns: int, **style) -> None:
    """Step lines (a value holds until its next sample), one per (label, Samples, color)."""
    for label, s, color in items:
        x, y = reduce(np, picture.x(s), np.frombuffer(s.values, dtype=np.uint64).astype(np.float64), columns)
        if x[-1] < picture.end:  # the last value holds to the end
            x, y = np.r_[x, picture.end], np.r_[y, y[-1]]
        ax.plot(x, y, drawstyle="steps-post", color=color, label=label, linewidth=1.4, **style)


def _top(series: dict, keys: list) -> list:
    """Keys of the DRAWN_SERIES series that reach highest."""
    high = {k: series[k].highest() if len(series.get(k, ())) else 0 for k in keys}
    return sorted(sorted(keys, key=lambda k: (-high[k], k))[:DRAWN_SERIES])


def _legend(ax, more: int, noun: str) -> None:
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=7, borderaxespad=0,
              title=f"{more:,} more {noun} not drawn" if more else None, title_fontsize=7)


def _resident(np, picture: Picture, a: AdapterPicture, ax, columns: int) -> None:
    title = f"adapter 0x{a.pointer:x}: bytes resident per segment ({RESIDENT}), dashed: its Size (ReportSegment)"
    if not a.resident:
        return _empty(ax, title, f"no {RESIDENT} events for this adapter: {_record(RESIDENT)}")
    keys = _top(a.resident, list(a.resident))
    colors = _colors(keys)
    top = max([a.resident[k].highest() for k in keys] + [a.sizes.get(k, 0) for k in keys])
    _axes(np, picture, ax, title, top)
    _lines(np, picture, ax, [(f"segment {k}", a.resident[k], colors[k]) for k in keys], columns)
    for k in keys:
        if k in a.sizes:
            ax.axhline(a.sizes[k], color=colors[k], linestyle="--", linewidth=1,
                       label=f"segment {k} Size {_size_text(a.sizes[k])}")
    _marks(np, picture, a, ax, columns)
    _legend(ax, len(a.resident) - len(keys) + (1 if a.dropped.get("resident") else 0), "segments")


def _memory(np, picture: Picture, a: AdapterPicture, ax, columns: int) -> None:
    title = f"adapter 0x{a.pointer:x}: usage per process and segment group ({USAGE}), dashed: its budget ({BUDGET})"
    if not a.usage and not a.budget:
        return _empty(ax, title, f"no {USAGE} or {BUDGET} events for this adapter: {_record(USAGE, BUDGET)}")
    merged = {k: s for k, s in list(a.budget.items()) + list(a.usage.items())}  # the highest of either reaches
    keys = _top(merged, list(merged))
    colors = _colors(keys)
    tops = [s[k].highest() for s in (a.usage, a.budget) for k in keys if k in s]
    _axes(np, picture, ax, title, max(tops))
    _lines(np, picture, ax, [(f"{key_text(k)}: usage", a.usage[k], colors[k]) for k in keys if k in a.usage],
           columns)
    _lines(np, picture, ax, [(f"{key_text(k)}: budget", a.budget[k], colors[k]) for k in keys if k in a.budget],
           columns, linestyle="--")
    _marks(np, picture, a, ax, columns)
    _legend(ax, len(merged) - len(keys), "process groups")


def _live(np, picture: Picture, a: AdapterPicture, ax, columns: int) -> None:
    title = (f"adapter 0x{a.pointer:x}: live allocated bytes per process ({ADAPTER_ALLOCATION} Start and DCStart "
             f"add its Size, Stop takes it away)")
    if not a.live:
        return _empty(ax, title, f"no {ADAPTER_ALLOCATION} events for this adapter: {_record(ADAPTER_ALLOCATION)}")
    keys = _top(a.live, list(a.live))
    colors = _colors(keys)
    _axes(np, picture, ax, title, max(a.live[k].highest() for k in keys))
    _lines(np, picture, ax, [(f"hProcessId 0x{k:x}", a.live[k], colors[k]) for k in keys], columns)
    _marks(np, picture, a, ax, columns)
    if a.unmatched:
        ax.text(0.99, 0.97, f"{plural(a.unmatched, 'Stop')} of allocations not seen starting: nothing taken away",
                ha="right", va="top", transform=ax.transAxes, fontsize=7)
    _legend(ax, len(a.live) - len(keys), "processes")


_PANELS = {"resident": _resident, "memory": _memory, "live": _live}


def _colors(keys: list) -> dict:
    return {k: f"C{i % 10}" for i, k in enumerate(keys)}


# ------------------------------------------------------------------ writing
def output_format(output) -> str:
    """png or svg, from the output's name; anything else is refused before any work."""
    name = os.fsdecode(os.fspath(output)) if isinstance(output, (str, bytes, os.PathLike)) else None
    suffix = os.path.splitext(name)[1][1:].lower() if name else ""
    if name in (None, "-") or suffix not in FORMATS:
        raise bad_argument("the picture's output", output if name is None else name,  # repr escapes control chars
                           "a file name ending in .png or .svg")
    return suffix


def digest(fig) -> str:
    """sha256 of what a figure draws: each line's label and points, and every text (not how they look)."""
    h = sha256()
    for ax in fig.axes:
        for line in ax.get_lines():
            h.update(str(line.get_label()).encode())
            for data in (line.get_xdata(), line.get_ydata()):
                h.update(numpy_module().asarray(data, dtype=float).tobytes())
        for collection in ax.collections:
            h.update(str(collection.get_label()).encode())
            for segment in collection.get_segments():
                h.update(numpy_module().asarray(segment, dtype=float).tobytes())
    for text in fig.findobj(lambda o: hasattr(o, "get_text") and hasattr(o, "get_position")):
        h.update(text.get_text().encode())
    return h.hexdigest()


def save(fig, out, fmt: str, title: str) -> None:
    """Write a figure: no dates, a fixed SVG hash salt; the digest of what it draws as its Description."""
    import matplotlib

    metadata = {"Title": title, "Description": f"sha256 of what is drawn: {digest(fig)}"}
    metadata.update({"Software": None} if fmt == "png" else {"Date": None, "Creator": None})
    with matplotlib.rc_context({"svg.hashsalt": SALT, "svg.fonttype": "path"}):
        fig.savefig(out, format=fmt, metadata=metadata)


def plot(source, output, *, target=None, name: str | None = None) -> Picture:
    """Write the picture of a trace to ``output`` (.png or .svg; never the input, written whole or not at
    all); ``source``, ``target``: as ``series`` takes them.  Returns the Picture drawn."""
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    return _draw(output, inputs, lambda: series(source, target=target, name=name))[0]


def run(args, reader, tracker, stderr, input_path) -> int:
    """``d3dkmddi etw TRACE --plot OUT``: the picture and a line saying what it holds; 1 when an event had an
    error finding (as the tables)."""
    output_format(args.plot)
    try:
        optional_module("matplotlib", EXTRA, "--plot")
    except ImportError as exc:  # the command's one line, exit 2
        raise EtwInputError(str(exc)) from None
    picture, errors = _draw(args.plot, [input_path], lambda: series(None, target=tracker.target, reader=reader))
    if stderr is not None:
        count = sum(len(d) for a in picture.adapters.values() for d in (a.resident, a.usage, a.budget, a.live))
        stderr.write(f"d3dkmddi: wrote the picture of {plural(len(picture.adapters), 'adapter')} "
                     f"({count:,} series, {plural(sum(picture.rules.values()), 'error finding')}) "
                     f"to {safe_name(args.plot)}\n")
    return 1 if errors else 0


def _draw(output, inputs: list, read) -> tuple:
    """(Picture, error findings) of ``read()``, drawn into ``output``: its name, matplotlib and the path are
    checked before the trace is read."""
    fmt = output_format(output)
    optional_module("matplotlib", EXTRA, "the picture of a trace")
    check_output(output, inputs=inputs, binary=True)
    picture, errors = read()
    fig = figure(picture)
    with open_output(output, binary=True, inputs=inputs) as out:
        save(fig, out, fmt, f"{picture.name}: {PROVIDER} video memory over time")
    return picture, errors
