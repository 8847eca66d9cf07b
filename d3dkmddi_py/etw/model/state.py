"""A trace's state as the events leave it, per adapter: the record each adapter has (what the catalog's entries
keep of it), what an event that names a record by a handle found, and values over time.

A value over time (resident bytes, a process's usage or budget) is a ``Series``: its count, first,
last, lowest and highest value always, and, when the Tracker keeps series, every sample as two typed
columns (the event's number and the value; 16 bytes a sample, no Python object per event).
"""
from __future__ import annotations

from array import array

from ..._records import dataclass, field
from ...bulk.table import INT64_MAX
from ...errors import flag_argument, integer_argument


@dataclass(frozen=True)
class Resolved:
    """What an event that names a record by a handle found: the adapter and the record's handle (None where the
    trace did not show them), and the event's findings."""

    adapter: int | None
    allocation: int | None
    findings: tuple = ()
    checked: bool = True  # False: what the findings would read was not there (the allocation was not found)


class Series:
    """A value over time: its summary always, its samples as columns when ``keep``.  ``Series(keep)`` and
    ``add`` check what they are given; the Tracker's ``_new`` and ``_add`` take its own values unchecked."""

    __slots__ = ("count", "first", "last", "low", "high", "high_at", "numbers", "values")

    def __init__(self, keep: bool):
        self._start(flag_argument(keep, "Series: keep"))

    @classmethod
    def _new(cls, keep: bool) -> "Series":
        s = cls.__new__(cls)
        s._start(keep)
        return s

    def _start(self, keep: bool) -> None:
        self.count = 0
        self.first = self.last = self.low = self.high = self.high_at = None
        self.numbers, self.values = (array("q"), array("Q")) if keep else (None, None)

    def __reduce__(self):  # every pickle protocol, 0 and 1 too (slots alone need protocol 2)
        return _series, tuple(getattr(self, name) for name in Series.__slots__)

    def add(self, number: int, value: int) -> None:
        """One more sample: the event's ``number`` and the ``value`` after it (the ranges the columns hold)."""
        self._add(integer_argument(number, "Series.add: number", 1, INT64_MAX),
                  integer_argument(value, "Series.add: value", 0, (1 << 64) - 1))

    def _add(self, number: int, value: int) -> None:
        if self.count == 0:
            self.first = self.low = self.high = value
            self.high_at = number
        elif value > self.high:
            self.high, self.high_at = value, number
        elif value < self.low:
            self.low = value
        self.count += 1
        self.last = value
        if self.numbers is not None:
            self.numbers.append(number)
            self.values.append(value)


def _series(*values) -> Series:
    s = Series.__new__(Series)
    for name, value in zip(Series.__slots__, values):
        setattr(s, name, value)
    return s


# What entries keep of an adapter, filled at registration (registry): an attribute of an entry's adapter part ->
# (its entry's name, the part's factory), and the names of the series groups the entries sample.
PART_ATTRIBUTES: dict = {}
SERIES_GROUPS: set = set()


@dataclass
class AdapterTrace:
    """One pDxgAdapter: what each entry keeps of it (``parts``: entry name -> its ``adapter_state``'s object), its
    values over time (``series``: group -> key -> Series; a group is also an attribute: ``a.resident[segment]``),
    and the view its segments give the rules.  An attribute of an entry's part reads as the adapter's own
    (``a.segments``, ``a.allocations``, ``a.stops_unmatched``): which entry keeps what is its own business."""

    pointer: int
    adapter: object = None  # the semantics view of the segments, when ids are 1..n
    adapter_note: str = ""  # why records were checked without the segments, if they were
    series: dict = field(default_factory=dict)
    parts: dict = field(default_factory=dict)

    def part(self, name: str):
        """The entry ``name``'s part of this adapter (made on first use)."""
        found = self.parts.get(name) if isinstance(name, str) else None
        if found is None:
            make = next((m for n, m in PART_ATTRIBUTES.values() if n == name), None) if isinstance(name, str) else None
            if make is None:
                from ...errors import bad_argument

                raise bad_argument("AdapterTrace.part: name", name, "the name of a registered entry that keeps a part "
                                   "of an adapter (" + ", ".join(sorted({n for n, _m in PART_ATTRIBUTES.values()})) + ")")
            found = self.parts[name] = make()
        return found

    def __getattr__(self, name: str):  # only for names the record itself lacks
        if name.startswith("_"):
            raise AttributeError(name)
        if name in SERIES_GROUPS:
            return self.series.setdefault(name, {})
        owner = PART_ATTRIBUTES.get(name)
        if owner is None:
            raise AttributeError(f"AdapterTrace has no {name!r}: the entries keep " + ", ".join(
                sorted(set(PART_ATTRIBUTES) | SERIES_GROUPS)))
        return getattr(self.part(owner[0]), name)
