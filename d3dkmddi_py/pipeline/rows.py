"""The table formats: ``validate --format`` (a row per finding) and ``decode --format`` (a row per
record, every leaf a column), written by the one writer per format (``bulk.table``)."""
from __future__ import annotations

import json

from ..csvtext import csv_cell as _csv_cell
from .decode import Decoded
from ..outfile import write_lines
from ..render import FINDING_CELLS
from .texts import _distinct, _hit_messages, _message, _Texts


class FindingRows:
    """``validate --format csv|jsonl|parquet``: one row per finding: record, offset, rule_id, severity,
    field, message."""

    chunk_records = 4096  # records whose output is built at once

    FIELDS = ("record", "offset", *FINDING_CELLS)

    def __init__(self, out, fmt: str):
        self.out, self.fmt, self.texts = out, fmt, _Texts()
        self.writer, self.tails = None, {}
        if fmt == "csv":
            import csv

            self.csv = csv.writer(out, lineterminator="\n")
            self.csv.writerow(self.FIELDS)
        elif fmt == "parquet":  # here, so an output that cannot take it is refused before any record is read
            from ..bulk.table import ParquetWriter

            self.writer = ParquetWriter(out)

    def _csv(self, decoded: Decoded) -> None:
        """One row per finding, as csv.writer writes it: the part after the record and offset of a
        finding whose message is fixed is escaped once."""
        chunk, layout, texts = decoded.chunk, decoded.chunk.layout, self.texts
        tails, lines = self.tails, []
        if decoded.found is not None and _distinct(decoded) is None:  # column-wise: check by check
            items = [[] for _ in range(chunk.count)]
            for k, (check, rows, _vals) in enumerate(decoded.found):
                rows = rows.tolist()
                tail = tails.get(check)
                if tail is None and check.static:
                    tail = tails[check] = (f"{_csv_cell(check.rule_id)},{texts.rule(check)[0]},{_csv_cell(check.path)},"
                                           f"{_csv_cell(check.message)}")
                if tail is not None:
                    for row in rows:
                        items[row].append(tail)
                    continue
                head = f"{_csv_cell(check.rule_id)},{texts.rule(check)[0]},{_csv_cell(check.path)},"
                for row, message in zip(rows, _hit_messages(decoded, k, rows)):
                    items[row].append(head + _csv_cell(message))
            size, start, offset = layout.size, chunk.start, chunk.offset
            for row, found in enumerate(items):
                if found:
                    lead = f"{start + row},{offset + row * size},"
                    lines.append(lead + ("\n" + lead).join(found))
            if lines:
                write_lines(self.out, lines)
            return
        for row, hits in enumerate(decoded.hits):
            if not hits:
                continue
            views, lead = {}, f"{chunk.start + row},{chunk.offset + row * layout.size},"
            for check, _key in hits:
                tail = tails.get(check)
                if tail is None:
                    tail = (f"{_csv_cell(check.rule_id)},{texts.rule(check)[0]},{_csv_cell(check.path)},"
                            f"{_csv_cell(_message(check, decoded, row, views))}")
                    if check.static:
                        tails[check] = tail
                lines.append(lead + tail)
        if lines:
            write_lines(self.out, lines)

    def _rows(self, decoded: Decoded):
        chunk, layout = decoded.chunk, decoded.chunk.layout
        texts = self.texts
        for row, hits in enumerate(decoded.hits):
            if not hits:
                continue
            views, record, offset = {}, chunk.start + row, chunk.offset + row * layout.size
            for check, _key in hits:
                yield (record, offset, check.rule_id, texts.rule(check)[0], check.path,
                       _message(check, decoded, row, views))

    def write(self, decoded: Decoded) -> None:
        if self.fmt == "csv":
            self._csv(decoded)
        elif self.fmt == "jsonl":
            keys = [json.dumps(k) for k in self.FIELDS]
            self.out.writelines("{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in zip(keys, r)) + "}\n"
                                for r in self._rows(decoded))
        else:
            self._parquet(list(zip(*self._rows(decoded))) or [()] * len(self.FIELDS))

    def _parquet(self, columns) -> None:
        from ..bulk.table import Table

        self.writer.write(Table(self.FIELDS, ("int", "int", "text", "text", "text", "text"),
                                [list(c) for c in columns]))

    def close(self, totals) -> None:
        if self.fmt == "parquet":
            if self.writer.writer is None:  # no findings: the table has its columns and no rows
                self._parquet([()] * len(self.FIELDS))
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
