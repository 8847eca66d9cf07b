"""Column-wise validation: the documented rules of ``d3dkmddi_py.semantics`` over whole columns.

``findings(columns)`` gives the same findings as ``semantics.check`` record by record (rule
id, severity, field, value; messages are formatted where records are printed), as one table.
The rules are the ones ``semantics.checks`` defines once; here they run on NumPy columns, a
few array operations per rule.  Without NumPy they run record by record.
"""
from __future__ import annotations

from .._numpy import loaded_numpy
from .._records import dataclass
from ..layout import write_leaf
from ..render import RULE_KEY
from ..semantics._rules import RULES
from ..semantics.adapter import as_adapter
from ..semantics.checks import CHECKS, check_record, checks_for, column_hits
from .._numpy import optional_module as _need
from .columns import Columns

VECTORIZED = tuple(CHECKS)  # every type with rules: one definition, run on columns
FIELDS = ("record", RULE_KEY, "severity", "field", "value")


@dataclass(frozen=True)
class FindingsTable:
    """Findings as columns, sorted by record: ``record``, ``rule_id``, ``severity``, ``field``, ``value``.

    ``record`` is the record number within the decoded range (as ``Columns.index``).
    Arrays are NumPy arrays (strings as object arrays), or lists without NumPy.
    """

    type_name: str
    target_label: str
    record: object
    rule_id: object
    severity: object
    field: object
    value: object

    def __len__(self) -> int:
        return len(self.record)

    def rows(self):
        """(record, rule_id, severity, field, value) tuples as plain Python values."""
        return list(zip(*(_plain(getattr(self, name)) for name in FIELDS)))

    def by_record(self) -> dict:
        """record -> sorted [(rule_id, field, value)]: the shape to compare with ``semantics.check``."""
        out = {}
        for record, rule_id, _severity, field, value in self.rows():
            out.setdefault(record, []).append((rule_id, field, value))
        return {k: sorted(v) for k, v in out.items()}

    def counts(self) -> dict:
        """rule id -> number of findings."""
        out = {}
        for rule_id in _plain(self.rule_id):
            out[rule_id] = out.get(rule_id, 0) + 1
        return dict(sorted(out.items()))

    def to_pandas(self):
        pd = _need("pandas", "dataframe", "FindingsTable.to_pandas")
        return pd.DataFrame({name: getattr(self, name) for name in FIELDS})


def _plain(values):
    return values.tolist() if hasattr(values, "tolist") else list(values)


def findings(columns: Columns, *, adapter=None) -> FindingsTable:
    """The findings of every record of ``columns`` (the rules ``semantics.check`` runs, same ids)."""
    layout = columns_layout(columns)
    checks_for(layout, as_adapter(adapter))  # an adapter of another target fails here, before any work
    np = _numpy_if_columns_use_it(columns)
    if np is None:
        return _per_record(columns, layout, adapter)
    parts = [(c.rule_id, c.path, rows, values) for c, rows, values in column_hits(layout, columns, np, adapter)]
    return _table(np, parts, columns.start, layout)


def columns_layout(columns: Columns):
    return columns.layout


def _numpy_if_columns_use_it(columns: Columns):
    np = loaded_numpy()
    first = next(iter(columns.values()), None)
    return np if np is not None and isinstance(first, np.ndarray) else None


def _table(np, parts, start: int, layout) -> FindingsTable:
    """One table from (rule id, field, rows, values) parts, sorted by record, rule order kept."""
    if not parts:
        empty = np.empty(0, dtype=object)
        return FindingsTable(layout.c_name, layout.label, np.empty(0, dtype=np.int64), empty, empty.copy(),
                             empty.copy(), np.empty(0, dtype=np.uint64))
    lengths = [p[2].size for p in parts]
    record = np.concatenate([p[2] for p in parts]).astype(np.int64) + start
    order = np.argsort(record, kind="stable")

    def repeat(values):
        return np.repeat(np.array(values, dtype=object), lengths)[order]

    values = np.concatenate([np.asarray(p[3]).astype(np.uint64) for p in parts])[order]
    return FindingsTable(layout.c_name, layout.label, record[order], repeat([p[0] for p in parts]),
                         repeat([RULES[p[0]].severity.value for p in parts]), repeat([p[1] for p in parts]), values)


def _per_record(columns: Columns, layout, adapter) -> FindingsTable:
    """Without NumPy: the same rules on each record, its bytes rebuilt from the columns."""
    lists = [columns[leaf.path].tolist() for leaf in layout.leaves]
    out = {name: [] for name in FIELDS}
    for row, record in enumerate(columns.index):
        data = bytearray(layout.size)
        for leaf, values in zip(layout.leaves, lists):  # every bit a rule can read is in some leaf
            write_leaf(data, leaf, values[row])
        for f in check_record(layout, bytes(data), adapter):
            for name, value in zip(FIELDS, (record, f.rule_id, f.severity.value, f.field, f.value)):
                out[name].append(value)
    return FindingsTable(layout.c_name, layout.label, *(out[name] for name in FIELDS))
