"""Decode and check a chunk: leaf values and rule hits, column-wise with NumPy or record by record."""
from __future__ import annotations

from .._numpy import numpy_module
from .._records import dataclass
from ..layout import TypeLayout
from ..semantics._rules import RULES
from ..semantics._view import View
from ..semantics.checks import column_hits, column_messages, record_hits
from .source import Chunk


@dataclass
class Decoded:
    """One chunk decoded and checked: per record its leaf values (tuples in leaf order, or None
    when not asked for) and its hits (check, key) in rule order, and the chunk's tallies."""

    chunk: Chunk
    value_rows: list | None  # per record its leaf values (see ``rows``)
    row_hits: list | None  # per record: [(Check, key), ...] (see ``hits``); None until asked for
    errors: int = 0
    warnings: int = 0
    messages: dict | None = None  # column-wise: check -> (row -> index, messages) for templated messages
    full: list | None = None  # column-wise: per check key, the value it reports for every record
    constant: list | None = None  # column-wise: per check key, the value when the same in every hit
    columns: object = None  # column-wise: the chunk's columns (bulk.Columns)
    found: list | None = None  # column-wise: (check, rows, values) of every check some row breaks
    np: object = None  # column-wise: the NumPy module
    values: bool = False  # the leaf values were asked for

    @property
    def rows(self) -> list | None:
        """Per record its leaf values (a tuple in leaf order), None when not asked for; column-wise they
        are made when first asked for (the column sinks read the columns instead)."""
        if self.value_rows is None and self.values and self.columns is not None:
            self.value_rows = list(zip(*(self.columns[leaf.path].tolist() for leaf in self.chunk.layout.leaves)))
        return self.value_rows

    @property
    def hits(self) -> list:
        """Per record its hits (check, key) in rule order; records that break the same rules share one
        tuple.  Column-wise they are grouped when first asked for (the column sinks never ask)."""
        if self.row_hits is None:
            self.row_hits = _row_hits(self.np, self.found, self.chunk.count)
        return self.row_hits

    def value(self, key, row: int) -> int:
        """The value a finding reports: its key itself (record by record) or read from its column."""
        return key if self.full is None else int(self.full[key][row])

    def constant_value(self, key):
        """The value when every hit of this check in the chunk reports the same one, else None."""
        return key if self.full is None else self.constant[key]

    def view(self, row: int) -> View:
        layout = self.chunk.layout
        return View(layout.by_path, self.chunk.record(row), "", layout.abi, layout.version, layout.c_name)


def _numpy():
    return numpy_module()


NUMPY_FROM = 256  # fewer records are decoded one by one: importing NumPy costs more than it saves


def decode_chunk(chunk: Chunk, *, adapter=None, values: bool = True, findings: bool = True) -> Decoded:
    """Leaf values and rule hits of every record of a chunk: column-wise with NumPy, else per record."""
    layout, n = chunk.layout, chunk.count
    np = _numpy() if layout.kind != "enum" and n >= NUMPY_FROM else None
    hits = [[] for _ in range(n)]
    decoded = Decoded(chunk, None, hits, values=values)
    if np is None:
        if values:
            decoded.value_rows = [tuple(layout.values(chunk.record(i)).values()) for i in range(n)]
        if findings:
            for i in range(n):
                hits[i] = record_hits(layout, decoded.view(i), adapter)
                for c, _value in hits[i]:
                    _tally_hits(decoded, c, 1)
        return decoded
    if not (values or findings):  # the column sinks decode their own columns
        return decoded
    columns = _columns(np, layout, chunk)
    decoded.columns, decoded.np = columns, np
    if findings:
        found = decoded.found = list(column_hits(layout, columns, np, adapter))
        _column_values(np, decoded, found, n)
        decoded.row_hits = None
        decoded.messages = {}
        for check, where, _vals in found:
            if not check.static and (check.params is None or check.columnar):
                index = np.full(n, -1, dtype=np.int64)
                index[where] = np.arange(len(where))
                decoded.messages[check] = (index, column_messages(check, columns, np, where))
    return decoded


def _column_values(np, decoded: Decoded, found: list, n: int) -> None:
    """The tallies, and per check the value it reports in every record (``full``) and the value when
    the same in every hit (``constant``)."""
    if not found:
        return
    full, constant = [], []
    for check, where, vals in found:
        column = np.zeros(n, dtype=np.uint64)
        column[where] = vals
        full.append(column)
        constant.append(int(vals[0]) if bool((vals == vals[0]).all()) else None)
        _tally_hits(decoded, check, len(where))
    decoded.full, decoded.constant = full, constant


def _row_hits(np, found: list, n: int) -> list:
    """Each record's hits from the column hits, without a Python step per hit: records are grouped by
    the set of rules they break (a bit per check), and each group's hit tuple is built once."""
    if not found:
        return [[] for _ in range(n)]
    words = (len(found) + 62) // 63
    signature = np.zeros((n, words), dtype=np.uint64)
    for k, (_check, where, _vals) in enumerate(found):
        signature[where, k // 63] |= np.uint64(1 << (k % 63))
    unique, inverse = np.unique(signature, axis=0, return_inverse=True)
    groups = []
    for sig in unique.tolist():  # checks come in rule order, so each group's hits do too
        groups.append(tuple((found[k][0], k) for k in range(len(found)) if sig[k // 63] >> (k % 63) & 1))
    return [groups[g] for g in inverse.reshape(-1).tolist()]


def _tally_hits(decoded: Decoded, check, count: int) -> None:
    if _severity(check) == "error":
        decoded.errors += count
    else:
        decoded.warnings += count


def _columns(np, layout: TypeLayout, chunk: Chunk):
    from ..bulk import columns_of_bytes

    return columns_of_bytes(layout, chunk.data, start=chunk.start, offset=chunk.offset)


def findings_of(decoded: Decoded, row: int, view: View | None = None) -> list:
    """The Finding objects (messages formatted) of one record of a decoded chunk."""
    if not decoded.hits[row]:
        return []
    if view is None:
        view = decoded.view(row)
    return [check.finding(view) for check, _key in decoded.hits[row]]


def _severity(check) -> str:
    return RULES[check.rule_id].severity.value
