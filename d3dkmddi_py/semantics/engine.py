"""The rule engine: a rule is one ``Check`` over named fields, run by two runners.

A rule's predicate is an expression over an accessor ``r``: ``r["Size"]``, ``r.bit("Agp")``,
``r.pick(cond, a, b)``, ``r.lookup(table, index)``, combined with ``& | == != < >`` and
``NOT(x)``.  The same expression is evaluated on one record (``View``: ints and bools) and on
whole columns (``Cols``: NumPy arrays), so the record and column findings cannot drift apart.
Messages are one template per rule, formatted only for the records that break it.  The rule
families and their registry are in ``checks``.
"""
from __future__ import annotations

from collections.abc import Callable  # not typing's: importing typing costs 3 ms of start-up
from functools import lru_cache

from .._records import dataclass, replace
from ._rules import RULES, Finding, with_note
from ._view import View


def NOT(x):  # noqa: N802 - reads as the logical operator it is
    """Logical not for an int, a bool or a NumPy column alike (``~`` is not: ~True is -2)."""
    return x == 0


@dataclass(frozen=True, eq=False)
class Check:
    """One rule applied at one field: ``when(r)`` selects the records that break it.

    ``value(r)`` is the number the finding reports (default: the field's own value);
    ``message`` is formatted with the record's leaves by name (``{Size:#x}``) plus
    ``params(r)``, a dict computed for the breaking record only.  ``prefix`` places the
    check inside a larger record (``FlagsWddm2.``).
    """

    rule_id: str
    field: str
    when: Callable
    message: str
    value: Callable | None = None
    params: Callable | None = None
    prefix: str = ""
    columnar: bool = False  # params (if any) are column expressions too, so messages format from columns

    def __post_init__(self):
        # a rule resting on an earlier page or a kit comment says so in every message, whatever prints it
        object.__setattr__(self, "message", with_note(self.rule_id, self.message))

    def under(self, prefix: str) -> "Check":
        return replace(self, prefix=prefix + self.prefix)

    @property
    def path(self) -> str:
        return self.prefix + self.field

    def report(self, r) -> int:
        return self.value(r) if self.value is not None else r.get(self.field, 1)

    @property
    def static(self) -> bool:
        """The message reads no value of the record (so it can be written once)."""
        return self.params is None and "{" not in self.message

    def text(self, view: View) -> str:
        """The message for one record already known to break the rule."""
        if self.static:
            return self.message
        sub = view.sub_prefix(self.prefix) if self.prefix else view
        if self.params is None:  # the template reads leaves only: read just those
            return self.message.format_map({name: sub[name] for name in _template_fields(self.message)})
        return self.message.format_map(_Fields(sub, self.params(sub)))

    def finding(self, view: View, where: str = "") -> Finding:
        """The finding on a record already known to break the rule."""
        sub = view.sub_prefix(self.prefix) if self.prefix else view
        rule = RULES[self.rule_id]
        return Finding(self.rule_id, rule.severity, where + self.path, int(self.report(sub)), self.text(view),
                       rule.reference)


def leaves_read(check: Check, present) -> frozenset:
    """The leaves (full paths) a check's predicate, reported value and message read.  Found by running
    them on an accessor that records every name asked for, with a few fill values so a branch on a
    value is taken both ways; ``present``: the record's leaf paths (``get``/``bit`` of others read 0)."""
    present = frozenset(present)
    seen: set = set()
    for fill in (0, 1, 3):
        acc = _Reads(present, fill, check.prefix, seen)
        for run in (check.when, check.value, check.params):
            if run is not None:
                try:
                    run(acc)
                except Exception:  # noqa: BLE001 - a fill the code cannot take; what it read is recorded
                    pass
    seen.update(name for name in (check.prefix + n for n in _template_fields(check.message)) if name in present)
    if check.value is None:
        seen.add(check.path)
    return frozenset(seen)


class _Reads:
    """The accessor protocol of View and Cols, recording the leaves read; every present leaf is ``fill``."""

    __slots__ = ("present", "fill", "prefix", "seen")

    def __init__(self, present, fill: int, prefix: str, seen: set):
        self.present, self.fill, self.prefix, self.seen = present, fill, prefix, seen

    def sub_prefix(self, prefix: str) -> "_Reads":
        return _Reads(self.present, self.fill, self.prefix + prefix, self.seen)

    def __getitem__(self, path: str) -> int:
        self.seen.add(self.prefix + path)
        return self.fill

    def get(self, path: str, default=None):
        self.seen.add(self.prefix + path)
        return self.fill if self.prefix + path in self.present else default

    def bit(self, path: str) -> bool:
        return bool(self.get(path, 0))

    @staticmethod
    def pick(cond, a, b):
        return a if cond else b

    @staticmethod
    def lookup(table, index):
        return table[index % len(table)]


@lru_cache(maxsize=None)
def _template_fields(template: str) -> tuple:
    import string

    return tuple({name for _text, name, _spec, _conv in string.Formatter().parse(template) if name})


class _Fields(dict):
    """Template fields: the derived params, else a leaf of the record by its name."""

    def __init__(self, view: View, params: dict):
        super().__init__(params)
        self.view = view

    def __missing__(self, key):
        return self.view[key]


def run_record(checks, view: View) -> list:
    """(check, reported value) of every check one record breaks: the scalar runner."""
    out = []
    for c in checks:
        sub = view.sub_prefix(c.prefix) if c.prefix else view
        if c.when(sub):
            out.append((c, c.report(sub)))
    return out


class Cols:
    """The column accessor: the same names as View, one NumPy array per leaf."""

    __slots__ = ("np", "columns", "prefix", "count")

    def __init__(self, np, columns, prefix: str = ""):
        self.np, self.columns, self.prefix, self.count = np, columns, prefix, columns.count

    def sub_prefix(self, prefix: str) -> "Cols":
        return Cols(self.np, self.columns, self.prefix + prefix)

    def __getitem__(self, path: str):
        return self.columns[self.prefix + path]

    def get(self, path: str, default=0):
        key = self.prefix + path
        return self.columns[key] if key in self.columns else default

    def bit(self, path: str):
        key = self.prefix + path
        if key not in self.columns:
            return self.np.zeros(self.count, dtype=bool)
        return self.columns[key] != 0

    def pick(self, cond, a, b):
        return self.np.where(cond, a, b)

    def lookup(self, table, index):
        return self.np.asarray(table)[index]


def column_messages(check: Check, columns, np, rows) -> list:
    """The messages of a check for the given rows, formatted from the columns (no view per record);
    only for a check whose template reads leaves or whose params are column expressions."""
    acc = Cols(np, columns).sub_prefix(check.prefix) if check.prefix else Cols(np, columns)
    params = check.params(acc) if check.params is not None else {}
    names = [n for n in _template_fields(check.message) if n not in params]
    keys = list(params) + names
    picked = rows.tolist()
    lists = [[params[k][i] for i in picked] if isinstance(params[k], list) else np.asarray(params[k])[rows].tolist()
             for k in params] + [acc[n][rows].tolist() for n in names]
    positional = _positional(check.message, tuple(keys))
    if positional is not None and lists:
        return list(map(positional.format, *lists))
    return [check.message.format_map(dict(zip(keys, values))) for values in zip(*lists)]


@lru_cache(maxsize=None)
def _positional(template: str, keys: tuple) -> str | None:
    """The template with its named fields numbered by ``keys`` (so a column formats with ``map``, no
    dict per row), or None when a field is more than a plain name."""
    import string

    out = []
    for text, name, spec, conv in string.Formatter().parse(template):
        out.append(text.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if name not in keys or "{" in (spec or ""):
            return None
        out.append("{" + str(keys.index(name)) + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}")
    return "".join(out)


def run_columns(checks, columns, np):
    """(check, record rows, values) for every check that some row breaks: the column runner."""
    cols = Cols(np, columns)
    for c in checks:
        acc = cols.sub_prefix(c.prefix) if c.prefix else cols
        hit = c.when(acc)
        if np.ndim(hit) == 0:  # a predicate that reads no column
            hit = np.full(cols.count, bool(hit))
        rows = np.flatnonzero(hit)
        if rows.size:
            value = c.report(acc)
            values = (np.full(rows.size, int(value), dtype=np.uint64) if np.ndim(value) == 0
                      else np.asarray(value)[rows])
            yield c, rows, values
