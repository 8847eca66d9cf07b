"""The JSON lines format: ``decode --json`` and ``validate --json``, one object per record, each per
record and per column."""
from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _json_str

from ..coltext import by_value
from ..outfile import write_lines
from ..jsonformat import (column_lines, finding_parts, finding_text, line_head, record_json, record_tail,
                          where_text)
from ..render import finding_value
from ..semantics._rules import RULES
from .decode import Decoded
from .texts import BODY_CACHE, _distinct, _enum_value, _hit_messages, _meanings, _message


class JsonDecode:
    """``decode --json``: one object per record per line, with the same keys every time."""

    chunk_records = 4096  # records whose output is built at once (~20 MB of text)

    def __init__(self, out, *, adapter=None):
        self.out, self.adapter, self.head, self.tails = out, adapter, None, {}
        self.findings = _JsonFindings()

    def write(self, decoded: Decoded) -> None:
        from ..target import class_of

        chunk, layout = decoded.chunk, decoded.chunk.layout
        paths = [leaf.path for leaf in layout.leaves]
        lines = self._column_lines(decoded) if layout.kind != "enum" else None
        if lines is not None:
            if lines:
                write_lines(self.out, lines)
            return
        lines, groups = [], {}
        if self.head is None:
            self.head = line_head(layout)
        for row in range(chunk.count):
            raw = chunk.record(row)
            offset = chunk.offset + row * layout.size
            address = None if chunk.address is None else chunk.address + row * layout.size
            if layout.kind == "enum":
                obj = record_json(_enum_value(class_of(layout), raw), c_name=layout.c_name, tgt=layout,
                                  index=chunk.start + row, offset=offset, address=address)
                lines.append(json.dumps(obj))
                continue
            tail = self.tails.get(raw)
            if tail is None:  # everything after "address" depends on the bytes alone
                tail = record_tail(layout, raw, dict(zip(paths, decoded.rows[row])),
                                   _meanings(layout, raw, self.adapter), self.findings.all(layout, decoded, row, groups))
                if len(self.tails) >= BODY_CACHE:
                    self.tails.clear()
                self.tails[raw] = tail
            lines.append(self.head + where_text(chunk.start + row, offset, address) + tail)
        if lines:
            write_lines(self.out, lines)

    def _column_lines(self, decoded: Decoded) -> list | None:
        """Every record's line, built a key at a time from the chunk's columns (None when the chunk
        was decoded record by record, its records repeat, or its type's meanings are not column-wise):
        the same bytes as ``json.dumps(record_json_of(...))``."""
        from ..semantics.explain import column_meanings
        np, columns, chunk = decoded.np, decoded.columns, decoded.chunk
        layout = chunk.layout
        if columns is None or not decoded.values or decoded.found is None or _distinct(decoded) is not None:
            return None
        meanings = column_meanings(layout, columns, np, self.adapter)
        if meanings is None:
            return None
        return column_lines(np, layout, columns, meanings, chunk.count, start=chunk.start, offset=chunk.offset,
                            address=chunk.address, data=chunk.data, findings=self.findings.rows(layout, decoded))

    def close(self, totals) -> None:
        pass


class _JsonFindings:
    """Each check's finding as a JSON object, its fixed parts encoded once."""

    def __init__(self):
        self.parts, self.values, self.values_of = {}, {}, None

    def _parts(self, check):
        got = self.parts.get(check)
        if got is None:
            rule = RULES[check.rule_id]
            head, ref = finding_parts(rule.rule_id, rule.severity.value, check.path, rule.page, rule.sentence)
            got = self.parts[check] = (head, ref, json.dumps(check.message) if check.static else None)
        return got

    def _value_text(self, layout, path: str, value: int) -> str:
        """A finding's value as JSON, worked out once per field and value (chunks repeat them)."""
        got = self.values.get((path, value)) if self.values_of is layout else None
        if got is None:
            if len(self.values) >= BODY_CACHE or self.values_of is not layout:
                self.values.clear()
                self.values_of = layout
            got = self.values[(path, value)] = json.dumps(finding_value(layout, path, value))
        return got

    def one(self, layout, check, decoded: Decoded, key, row: int, views) -> str:
        fhead, ref, message = self._parts(check)
        if message is None:
            message = _json_str(_message(check, decoded, row, views if views is not None else {}))
        shown = json.dumps(finding_value(layout, check.path, decoded.value(key, row)))
        return finding_text(fhead, shown, message, ref)

    def rows(self, layout, decoded: Decoded) -> list:
        """The findings array's items of every record of a column-decoded chunk, built check by
        check: a finding whose value and message are the same in every hit is encoded once."""
        np = decoded.np
        items = [[] for _ in range(decoded.chunk.count)]
        for k, (check, where, _vals) in enumerate(decoded.found):
            fhead, ref, message = self._parts(check)
            rows = where.tolist()
            if message is not None and decoded.constant[k] is not None:
                piece = self.one(layout, check, decoded, k, rows[0], None)
                for row in rows:
                    items[row].append(piece)
                continue
            shown = by_value(np, decoded.full[k][where], lambda v, path=check.path: self._value_text(layout, path, v))
            messages = [message] * len(rows) if message is not None else \
                [_json_str(text) for text in _hit_messages(decoded, k, rows)]
            for row, value, text in zip(rows, shown, messages):
                items[row].append(finding_text(fhead, value, text, ref))
        return [", ".join(parts) for parts in items]

    def all(self, layout, decoded: Decoded, row: int, groups: dict) -> str:
        """The findings array's items for one record; what a group of records shares is built once."""
        hits = decoded.hits[row]
        pieces = groups.get(id(hits))
        if pieces is None:
            pieces = groups[id(hits)] = ([self.one(layout, check, decoded, key, row, None)
                                          if check.static and decoded.constant_value(key) is not None else None
                                          for check, key in hits], hits)
        views = {}
        return ", ".join(piece if piece is not None else self.one(layout, check, decoded, key, row, views)
                         for piece, (check, key) in zip(pieces[0], hits))


class JsonValidate:
    """``validate --json``: one object per record per line: where it is and its findings (``decode --json``
    gives the fields too)."""

    chunk_records = 4096  # records whose output is built at once

    def __init__(self, out):
        self.out, self.findings = out, _JsonFindings()

    def write(self, decoded: Decoded) -> None:
        chunk, layout = decoded.chunk, decoded.chunk.layout
        head, size, groups = line_head(layout), layout.size, {}
        found = (self.findings.rows(layout, decoded) if decoded.found is not None  # column-wise: check by check
                 else [self.findings.all(layout, decoded, row, groups) for row in range(chunk.count)])
        lines = [head + where_text(chunk.start + row, chunk.offset + row * size,
                                   None if chunk.address is None else chunk.address + row * size)
                 + f'"findings": [{items}]}}' for row, items in enumerate(found)]
        if lines:
            write_lines(self.out, lines)

    def close(self, totals) -> None:
        pass
