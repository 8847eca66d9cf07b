"""A trace as a picture (``d3dkmddi etw TRACE --plot OUT.png|OUT.svg``, ``etw.plot``): per adapter, a row of
each panel the catalog's entries draw (``entry.panel``: resident bytes per segment against each segment's Size,
each process's usage against its budget, the live allocated bytes per process, ...), with the events that have
error findings marked at their time.

The series are the tables' rows: the trace is read by ``TraceTables`` with sinks in place of files (the
rows ``--format`` writes), and a row's time becomes a point's x in ``seconds`` alone.  Memory: 24 bytes a
sample (x, event number, value, as arrays), no Python object per event; at most 4 points a pixel column are
drawn per series (first, lowest, highest, last).  Keys are bounded: MAX_ADAPTERS adapters and MAX_SERIES series
per adapter and group are collected, the rest counted and said in the figure.  matplotlib is imported only
when drawing (Agg and SVG, no pyplot), with a fixed SVG hash salt and no dates in the file.
"""
from __future__ import annotations

import os
import threading
from hashlib import sha256

from ..._numpy import numpy_module, optional_module
from ..._records import dataclass
from ...errors import bad_argument
from ...outfile import check_output, open_output, safe_name
from ...render import RULE_KEY
from ..model.registry import ENTRIES
from ..model.tracker import Tracker
from ..model.registry import HEAD
from ..model.schema import PROVIDER
from .panels import MAX_SERIES, AdapterPicture, Samples, plain, record_hint
from .text import say_pointers
from ..model.section import plural
from .tables import table_names

EXTRA = "plot"  # what --plot needs (_numpy.install_hint)
FORMATS = ("png", "svg")
MAX_ADAPTERS = 64  # adapters collected; events of others are counted
DRAWN_ADAPTERS = 4  # adapters drawn, the most samples first
WIDTH, PANEL_HEIGHT, NOTES_HEIGHT, DPI = 12.0, 3.0, 0.6, 100  # inches, dots an inch: 1,200 pixel columns
SALT = "d3dkmddi_py"  # svg.hashsalt: the SVG's ids are the same every run
_SAVING = threading.Lock()  # matplotlib's rc settings are the process's: one figure is saved at a time


def drawn_panels() -> list:
    """(entry, Panel) of every panel the figure draws, in their order."""
    return sorted(((e, e.panel) for e in ENTRIES.values() if e.panel is not None and e.panel.draw is not None),
                  key=lambda pair: pair[1].order)


@dataclass
class Picture:
    """What the figure draws: per adapter its series, the error findings by rule, and what was not drawn."""

    name: str
    adapters: dict  # pointer -> AdapterPicture
    rules: dict  # rule id -> error findings
    events: int
    dropped_events: int  # events of adapters past MAX_ADAPTERS
    loose: Samples  # events with error findings that name no adapter (drawn on every adapter's panels)
    said: dict  # what the panels say under the figure (a value drawn otherwise than it is) -> how many times
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
    return (ms if getattr(ms, "dtype", None) == np.float64 else np.array(plain(ms), dtype=np.float64)) / 1000


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
    """The series of the tables' rows, as they are written: each entry's panel takes its table's rows."""

    def __init__(self):
        self.np = numpy_module()
        self.panels: dict = {}  # table name -> [Panel] that take its rows (entries sharing a table and a take: once)
        for entry in ENTRIES.values():
            if entry.panel is not None:
                takes = self.panels.setdefault(entry.table.name, [])
                if all(p.take is not entry.panel.take for p in takes):
                    takes.append(entry.panel)
        self.reset()

    def reset(self) -> None:
        self.adapters: dict = {}
        self.rules: dict = {}
        self.state: dict = {}  # what a panel keeps between chunks, by its own key
        self.said: dict = {}  # what a panel says under the figure -> how many times it happened
        self.dropped_events = 0
        self.loose = Samples()

    def reads(self) -> dict:
        """The columns the picture reads of each table (every entry's table: the head and errors, for the marks,
        and its panel's; the tables of the state at the end, none): the tables make no other cells, nor any
        table of an event no entry reads."""
        head = frozenset(n for n, _k in HEAD) | {"errors"}
        reads = {name: head | frozenset(c for p in self.panels.get(name, ()) for c in p.reads)
                 for name in dict.fromkeys(e.table.name for e in ENTRIES.values())}
        reads.update({t.name: frozenset() for e in ENTRIES.values() for t in e.state_tables})
        reads["findings"] = None  # a few rows: the table's writer makes every cell
        return reads

    def sinks(self) -> dict:
        reads = self.reads()
        return {name: _Sink(self, name, reads[name]) for name in table_names() if name in reads}

    def adapter(self, pointer: int):
        a = self.adapters.get(pointer)
        if a is None and len(self.adapters) < MAX_ADAPTERS:
            a = self.adapters[pointer] = AdapterPicture(pointer)
        return a

    def series(self, a: AdapterPicture, group: str, key, count: int = 1):
        """The Samples of ``key`` in the adapter's ``group``, or None past MAX_SERIES (counted)."""
        found = a.series.setdefault(group, {})
        s = found.get(key)
        if s is None:
            if len(found) >= MAX_SERIES:
                a.dropped[group] = a.dropped.get(group, 0) + count
                return None
            s = found[key] = Samples()
        return s

    def take(self, name: str, table) -> None:
        if not table.rows:
            return
        cells = dict(zip(table.names, table.columns))
        if name == "findings":
            for rule, severity in zip(plain(cells[RULE_KEY]), plain(cells["severity"])):
                if severity == "error":
                    self.rules[rule] = self.rules.get(rule, 0) + 1
            return
        if "errors" not in cells:  # a table of the state at the trace's end (live, processes), not of events
            return
        np = self.np
        x = seconds(np, table)
        numbers = np.asarray(cells["number"], dtype=np.int64)
        adapters = plain(cells["adapter"])
        for panel in self.panels.get(name, ()):
            panel.take(self, np, cells, x, numbers, adapters)
        errors = np.asarray(cells["errors"], dtype=np.int64)
        for i in np.flatnonzero(errors > 0).tolist():
            if adapters[i] is None:
                self.loose.append(x[i], numbers[i], errors[i])
                continue
            a = self.adapter(adapters[i])
            if a is not None:
                a.marks.append(x[i], numbers[i], errors[i])


# ------------------------------------------------------------------ reading
def series(source, *, target=None, name: str | None = None, reader=None) -> tuple:
    """(Picture, error-level findings) of a trace: ``source`` as ``etw.read`` takes it (or ``reader``, a
    TraceReader), read into the tables' rows; ``target`` as ``etw.adapters`` takes it."""
    picture, tables = _series(source, target, name, reader)
    return picture, tables.errors


def _series(source, target, name, reader) -> tuple:
    """(Picture, the TraceTables that read it) of ``series``."""
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
    picture = Picture(reader.name, c.adapters, dict(sorted(c.rules.items())), tables.events, c.dropped_events, c.loose,
                      dict(c.said))
    _place(picture)
    return picture, tables


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
        for group in a.series.values():
            yield from group.values()


# ------------------------------------------------------------------ drawing
def figure(picture: Picture):
    """The matplotlib Figure of a Picture (no pyplot; draw it with savefig)."""
    optional_module("matplotlib", EXTRA, "the picture of a trace")
    from matplotlib.figure import Figure

    np = numpy_module()
    panels = drawn_panels()
    drawn = sorted(picture.adapters.values(), key=lambda a: (-a.samples() - len(a.marks), a.pointer))
    shown = drawn[:DRAWN_ADAPTERS]
    rows = max(1, len(shown) * len(panels))
    fig = Figure(figsize=(WIDTH, PANEL_HEIGHT * rows + NOTES_HEIGHT), dpi=DPI, layout="constrained")
    fig.suptitle(f"{picture.name}: {PROVIDER} video memory over time ({plural(picture.events, 'event')} read)",
                 fontsize=12)
    grid = fig.add_gridspec(rows + 1, 1, height_ratios=[PANEL_HEIGHT] * rows + [NOTES_HEIGHT])
    axes = [fig.add_subplot(grid[0])]
    axes += [fig.add_subplot(grid[i], sharex=axes[0]) for i in range(1, rows)]  # one time axis, labelled on each
    notes = fig.add_subplot(grid[rows])
    columns = int(WIDTH * DPI)
    for i, a in enumerate(shown):
        for j, (_entry, panel) in enumerate(panels):
            panel.draw(np, picture, a, axes[i * len(panels) + j], columns)
    if not shown:
        ids = [i for e in ENTRIES.values() if e.panel is not None for i in e.ids]
        axes[0].set_axis_off()
        axes[0].text(0.5, 0.5, "no adapter's memory events in this trace\n" + record_hint(ids),
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
        notes.append(f"{plural(len(hidden), 'more adapter')} not drawn (the {DRAWN_ADAPTERS} with the most samples "
                     f"are)")
    if picture.dropped_events:
        notes.append(f"{plural(picture.dropped_events, 'event')} of adapters past the first {MAX_ADAPTERS} not "
                     f"collected")
    if picture.axis == "number":
        notes.append("x is the event's number: some event has no time the picture can read")
    notes += [f"{what} ({plural(n, 'time')})" for what, n in picture.said.items()]
    return notes or [" "]


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
    with _SAVING, matplotlib.rc_context({"svg.hashsalt": SALT, "svg.fonttype": "path"}):
        fig.savefig(out, format=fmt, metadata=metadata)


def plot(source, output, *, target=None, name: str | None = None) -> Picture:
    """Write the picture of a trace to ``output`` (.png or .svg; never the input, written whole or not at
    all); ``source``, ``target``: as ``series`` takes them.  Returns the Picture drawn."""
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    return _draw(output, inputs, lambda: series(source, target=target, name=name))[0]


def run(args, reader, tracker, stderr, input_path) -> tuple:
    """``d3dkmddi etw TRACE --plot OUT``: the picture and a line saying what it holds; returns (error-level findings,
    the OddReports) for ``command.exit_status``."""
    output_format(args.plot)
    optional_module("matplotlib", EXTRA, "--plot")  # MissingModule: the command's one line, exit 2
    picture, tables = _draw(args.plot, [input_path], lambda: _series(None, tracker.target, None, reader))
    odd = tables.tracker.odd  # the Tracker that read the trace to its end
    if stderr is not None:
        count = sum(len(d) for a in picture.adapters.values() for d in a.series.values())
        stderr.write(f"d3dkmddi: wrote the picture of {plural(len(picture.adapters), 'adapter')} "
                     f"({count:,} series, {plural(sum(picture.rules.values()), 'error finding')}) "
                     f"to {safe_name(args.plot)}" + (f"; {odd.tally()}" if odd.events else "") + "\n")
    say_pointers(tables.tracker, stderr, reader)
    return tables.errors, odd


def _draw(output, inputs: list, read) -> tuple:
    """(Picture, what else ``read()`` gives) of ``read()``, drawn into ``output``: its name, matplotlib and the path are
    checked before the trace is read."""
    fmt = output_format(output)
    optional_module("matplotlib", EXTRA, "the picture of a trace")
    check_output(output, inputs=inputs, binary=True)
    picture, found = read()
    fig = figure(picture)
    with open_output(output, binary=True, inputs=inputs) as out:
        save(fig, out, fmt, f"{picture.name}: {PROVIDER} video memory over time")
    return picture, found
