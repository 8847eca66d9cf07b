"""The table formats: ``validate --format`` (a row per finding) and ``decode --format`` (a row per
record, every leaf a column), written by the one writer per format (``bulk.table``)."""
from __future__ import annotations

from ..render import FINDING_CELLS
from .decode import Decoded
from .texts import _hit_messages, _message, _Texts

_KINDS = ("int", "int", "text", "text", "text", "text")


class FindingRows:
    """``validate --format csv|jsonl|parquet``: one row per finding: record, offset, rule_id, severity,
    field, message."""

    chunk_records = 4096  # records whose output is built at once

    FIELDS = ("record", "offset", *FINDING_CELLS)

    def __init__(self, out, fmt: str):
        from ..bulk.table import writer

        # made here, so an output that cannot take the format is refused before any record is read
        self.writer, self.texts, self.written = writer(fmt, out), _Texts(), False

    def _table(self, decoded: Decoded):
        """The chunk's findings, by record and within one in rule order.  Coded columns: a record's number
        and offset are written once for all its findings, a fixed finding (rule, severity, field, message)
        once per chunk, a templated one once per hit, and a check's rule, severity and field once."""
        from ..bulk.table import Coded, Table

        chunk, checks, messages = decoded.chunk, [], []  # per note (a finding's cells after its place): its text
        owners, rows, notes = [], [], []  # per note its check; per finding its record's row in the chunk, its note
        if decoded.found is not None:  # column-wise: check by check, then ordered by record
            np = decoded.np
            for k, (check, where, _vals) in enumerate(decoded.found):
                checks.append(check)
                made = [check.message] if check.static else _hit_messages(decoded, k, where.tolist())
                notes.append(np.full(where.size, len(messages), dtype=np.int64) if check.static else
                             np.arange(len(messages), len(messages) + where.size, dtype=np.int64))
                owners.append(np.full(len(made), k, dtype=np.int64))
                messages.extend(made)
                rows.append(where)
            if rows:
                rows = np.concatenate(rows)
                order = np.argsort(rows, kind="stable")  # a record's findings stay in rule order
                rows = rows[order]
                first = np.empty(rows.size, dtype=bool)  # a record's first finding
                first[0], first[1:] = True, rows[1:] != rows[:-1]
                hit, rows = rows[first], np.cumsum(first) - 1
                notes, owners = np.concatenate(notes)[order], np.concatenate(owners)
            else:
                hit = []
        else:
            hit, fixed, indices = [], {}, {}
            for row, hits in enumerate(decoded.hits):
                if hits:
                    views = {}
                    hit.append(row)
                    for check, _key in hits:
                        at = fixed.get(check)
                        if at is None:
                            at = len(messages)
                            messages.append(_message(check, decoded, row, views))
                            k = indices.setdefault(check, len(checks))
                            if k == len(checks):
                                checks.append(check)
                            owners.append(k)
                            if check.static:
                                fixed[check] = at
                        rows.append(len(hit) - 1)
                        notes.append(at)
        size, texts = chunk.layout.size, self.texts
        if hasattr(hit, "dtype"):
            records, offsets = (hit + chunk.start).tolist(), (hit * size + chunk.offset).tolist()
        else:
            records, offsets = [chunk.start + row for row in hit], [chunk.offset + row * size for row in hit]
        return Table(self.FIELDS, _KINDS, [
            Coded(rows, records), Coded(rows, offsets),
            Coded(notes, Coded(owners, [c.rule_id for c in checks])),
            Coded(notes, Coded(owners, [texts.rule(c)[0] for c in checks])),
            Coded(notes, Coded(owners, [c.path for c in checks])), Coded(notes, messages)])

    def write(self, decoded: Decoded) -> None:
        self.writer.write(self._table(decoded))
        self.written = True

    def close(self, totals) -> None:
        if not self.written:  # no chunk (nothing to read): the table still has its columns
            from ..bulk.table import Table

            self.writer.write(Table(self.FIELDS, _KINDS, [[]] * len(self.FIELDS)))
        self.writer.close()


class ColumnRows:
    """``decode --format csv|jsonl|parquet``: every leaf as a column (the bulk writers)."""

    chunk_records = 65536  # rows whose columns and text are built at once

    def __init__(self, out, fmt: str):
        from ..bulk.table import writer

        self.writer = writer(fmt, out)

    def write(self, decoded: Decoded) -> None:
        from ..bulk import columns_of_bytes
        from ..bulk.table import columns_table

        chunk = decoded.chunk
        cols = columns_of_bytes(chunk.layout, chunk.data, start=chunk.start, offset=chunk.offset)
        self.writer.write(columns_table(cols, record=True))

    def close(self, totals) -> None:
        self.writer.close()
