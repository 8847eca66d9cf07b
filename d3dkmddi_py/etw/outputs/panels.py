"""An entry's part of the picture (``Panel``), and what a panel is drawn with: the series it fills per adapter
(``Samples`` in an ``AdapterPicture``) and the drawing helpers every panel shares.  The picture itself
(``outputs.plot``) reads the trace through the tables and draws each entry's panel; it names no event.

A Panel says which columns of its entry's table it reads (``reads``: the tables make no other cells), how a
chunk of those rows becomes series (``take``), and, for the entry that owns a panel of the figure, its title,
its place among the panels (``order``) and how it is drawn (``draw``).  Another entry may feed the same panel
(``name``) without drawing it: ReportSegment's rows give the resident panel its segments' sizes.
"""
from __future__ import annotations

from array import array

from ..._numpy import numpy_module
from ..._records import dataclass, field
from ...semantics.explain import _size_text as size_text
from ..model.dxgkrnl_manifest import EVENTS, GUID, KEYWORDS, PROVIDER
from ..model.registry import Panel  # noqa: F401 - what an entry declares, beside what it draws with
from ..model.section import plural

MAX_SERIES = 256  # series collected per adapter and panel; samples of others are counted
DRAWN_SERIES = 8  # series drawn per panel, the highest first
POINTS_PER_COLUMN = 4


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
    """One adapter's series, by group (``series``: a panel's take names its groups, such as resident, usage,
    budget, live; each a dict key -> Samples), what the panels keep beside them (``notes``: a segment's size, the
    Stops not matched), and the events with error findings (values: how many)."""

    pointer: int
    series: dict = field(default_factory=dict)  # group -> {key: Samples}
    notes: dict = field(default_factory=dict)  # what a panel keeps beside its series, by its own key
    marks: Samples = field(default_factory=Samples)
    dropped: dict = field(default_factory=dict)  # group -> samples of series past MAX_SERIES

    def group(self, name: str) -> dict:
        return self.series.get(name, {})

    def samples(self) -> int:
        return sum(len(s) for d in self.series.values() for s in d.values())


def plain(column) -> list:
    return column.tolist() if hasattr(column, "tolist") else list(column)


def grouped(collector, np, group: str, adapters, keys: list, values, x, numbers) -> None:
    """Rows into the series of (adapter, key) they belong to in ``group``, a chunk at a time."""
    columns = np.array([adapters] + [plain(k) for k in keys], dtype=np.uint64).T
    values = np.asarray(plain(values), dtype=np.uint64)
    unique, inverse = np.unique(columns, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for j, row in enumerate(unique.tolist()):
        rows = np.flatnonzero(inverse == j)
        a = collector.adapter(row[0])
        if a is None:
            collector.dropped_events += len(rows)
            continue
        key = row[1] if len(row) == 2 else tuple(row[1:])
        s = collector.series(a, group, key, len(rows))
        if s is not None:
            s.extend(np, x[rows], numbers[rows], values[rows])


# ------------------------------------------------------------------ drawing (matplotlib's Axes, given)
def record_hint(ids) -> str:
    """What to record for a panel the trace cannot fill: the keywords the manifest gives these events."""
    words = dict.fromkeys(k for i in ids for k in EVENTS[i][5])
    keywords = " and ".join(f"{w} (0x{KEYWORDS[w]:x})" for w in words)
    return f"record the {PROVIDER} provider ({GUID}) with the keyword{'s' * (len(words) > 1)} {keywords}"


def axes(np, picture, ax, title: str, top: float) -> None:
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    ax.set_title(title, fontsize=10, loc="left")
    ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    ax.yaxis.set_major_locator(MultipleLocator(step(top)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_text(int(round(v))) if v else "0"))
    ax.set_ylabel("bytes")
    ax.grid(True, alpha=0.3)
    if picture.axis == "number":
        ax.set_xlabel("event number")
    else:
        ax.set_xlabel("time from the first point drawn")
        ax.xaxis.set_major_formatter(FuncFormatter(_time_text))


def step(top: float) -> int:
    """Bytes between two ticks: the least 1, 2, 4, 5 or 8 times 10**j times 2**(10k) of at least a sixth of
    ``top`` (so each tick is a whole number of KB, MB or GB, or of bytes)."""
    top = top / 6 if top > 0 else 1.0
    steps = sorted(m * 10 ** j << (10 * k) for k in range(7) for j in range(4) for m in (1, 2, 4, 5, 8))
    return next((s for s in steps if s >= top), steps[-1])


def _time_text(v: float, _pos) -> str:
    return f"{v * 1000:g} ms" if abs(v) < 1 else f"{v:g} s"


def empty(ax, title: str, text: str) -> None:
    """A panel the trace cannot fill: its title and what to record.  Its x ticks are hidden, not removed: the time
    axis is shared, and removing them here took them from every panel."""
    ax.set_title(title, fontsize=10, loc="left")
    ax.tick_params(axis="x", which="both", bottom=False, labelbottom=False)
    ax.set_yticks([])
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True, fontsize=9)


def reduce(np, x, y, columns: int):
    """(x, y) with at most POINTS_PER_COLUMN points for each run of samples in one of ``columns`` equal columns of
    x's range: each run's first, lowest, highest and last point, in the samples' (the events') order, as the text's
    series are (a line drawn through them covers the same pixels; a time that goes back is drawn going back, never
    re-sorted)."""
    if len(x) <= POINTS_PER_COLUMN * columns:
        return x, y
    low, high = x.min(), x.max()
    span = high - low if high > low else 1.0
    bins = np.minimum(((x - low) / span * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])  # runs of one column, in event order
    ends = np.r_[starts[1:], len(x)] - 1
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(x)]))
    by_value = np.lexsort((y, run))  # within each run (its own positions), lowest first
    keep = np.unique(np.concatenate([starts, ends, by_value[starts], by_value[ends]]))
    return x[keep], y[keep]


def marks(np, picture, a: AdapterPicture, ax, columns: int) -> None:
    """The events with error findings, a red mark at each (one a pixel column)."""
    x = np.concatenate([picture.x(a.marks), picture.x(picture.loose)])
    if not len(x):
        return
    x, _ = reduce(np, x, np.zeros(len(x)), columns // POINTS_PER_COLUMN)
    ax.vlines(x, 0, 0.05, transform=ax.get_xaxis_transform(), colors="red", linewidth=1,
              label=f"{plural(len(a.marks) + len(picture.loose), 'event')} with error findings")


def lines(np, picture, ax, items: list, columns: int, **style) -> None:
    """Step lines (a value holds until its next sample), one per (label, Samples, color)."""
    for label, s, color in items:
        x, y = reduce(np, picture.x(s), np.frombuffer(s.values, dtype=np.uint64).astype(np.float64), columns)
        if x[-1] < picture.end:  # the last value holds to the end
            x, y = np.r_[x, picture.end], np.r_[y, y[-1]]
        ax.plot(x, y, drawstyle="steps-post", color=color, label=label, linewidth=1.4, **style)


def top(series: dict, keys: list) -> list:
    """Keys of the DRAWN_SERIES series that reach highest."""
    high = {k: series[k].highest() if len(series.get(k, ())) else 0 for k in keys}
    return sorted(sorted(keys, key=lambda k: (-high[k], k))[:DRAWN_SERIES])


def legend(ax, more: int, noun: str, many: str | None = None) -> None:
    """The panel's legend, titled with how many more ``noun``s (``many``: its plural) it leaves out."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=7, borderaxespad=0,
              title=f"{plural(more, noun, many).replace(' ', ' more ', 1)} not drawn" if more else None,
              title_fontsize=7)


def colors(keys: list) -> dict:
    return {k: f"C{i % 10}" for i, k in enumerate(keys)}
