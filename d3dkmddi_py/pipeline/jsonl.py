"""The JSON lines format: ``decode --json`` and ``validate --json``, one object per record, each per
record and per column."""
from __future__ import annotations

import json
from functools import lru_cache
from json.encoder import encode_basestring_ascii as _json_str

from ..coltext import by_value, joined_column, object_array
from ..jsonvalue import hex_text, json_hex
from ..render import enum_name, finding_value, record_json, record_json_of, summary_column, target_json
from ..semantics._rules import RULES
from .decode import Decoded
from .texts import BODY_CACHE, _distinct, _emit, _enum_value, _hit_messages, _meanings, _message


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
                _emit(self.out, lines)
            return
        lines, groups = [], {}
        for row in range(chunk.count):
            raw = chunk.record(row)
            offset = chunk.offset + row * layout.size
            address = None if chunk.address is None else chunk.address + row * layout.size
            if layout.kind == "enum":
                obj = record_json(_enum_value(class_of(layout), raw), c_name=layout.c_name, tgt=layout,
                                  index=chunk.start + row, offset=offset, address=address)
                lines.append(json.dumps(obj))
                continue
            where = (f'{chunk.start + row}, "offset": {offset}, "address": '
                     f'{"null" if address is None else _json_str(hex_text(address))}, ')
            tail = self.tails.get(raw)
            if tail is None:  # everything after "address" depends on the bytes alone
                obj = record_json_of(layout, raw, dict(zip(paths, decoded.rows[row])), index=0, offset=0,
                                     address=None, meanings=_meanings(layout, raw, self.adapter))
                text = json.dumps(obj)
                assert text.endswith('"findings": []}')
                text = text[:-2] + self.findings.all(layout, decoded, row, groups) + "]}"
                head, tail = text.split('"index": 0, "offset": 0, "address": null, ', 1)
                if self.head is None:
                    self.head = head + '"index": '
                if len(self.tails) >= BODY_CACHE:
                    self.tails.clear()
                self.tails[raw] = tail
            lines.append(self.head + where + tail)
        if lines:
            _emit(self.out, lines)

    def _column_lines(self, decoded: Decoded) -> list | None:
        """Every record's line, built a key at a time from the chunk's columns (None when the chunk
        was decoded record by record, its records repeat, or its type's meanings are not column-wise):
        the same bytes as ``json.dumps(record_json_of(...))``."""
        from ..semantics.explain import column_meanings
        from ..target import ENUM_CLASSES

        np, columns, chunk = decoded.np, decoded.columns, decoded.chunk
        layout = chunk.layout
        if columns is None or not decoded.values or decoded.found is None or _distinct(decoded) is not None:
            return None
        meanings = column_meanings(layout, columns, np, self.adapter)
        if meanings is None:
            return None
        if self.head is None:
            self.head = f'{{"type": {_json_str(layout.c_name)}, "target": {json.dumps(target_json(layout))}, "index": '
        n, size = chunk.count, layout.size
        fields, run = [], []  # the fields object's items: a table per eight one-bit leaves, the rest per row

        def flush():
            for start in range(0, len(run), 8):
                group = run[start:start + 8]
                index = np.zeros(n, dtype=np.intp)
                for i, leaf in enumerate(group):
                    index |= (columns[leaf.path] != 0).astype(np.intp) << i
                fields.append(_field_table(np, tuple(leaf.path for leaf in group))[index].tolist())
            run.clear()

        for leaf in layout.leaves:
            hexed = json_hex(leaf)
            if leaf.bit_width == 1 and not leaf.signed and not hexed:
                run.append(leaf)
                continue
            flush()
            key, values = _json_str(leaf.path), columns[leaf.path].tolist()
            if hexed:
                mask = (1 << leaf.bit_width) - 1
                fields.append([f'{key}: "0x{v & mask:x}"' for v in values])
            else:
                fields.append([f"{key}: {v}" for v in values])
        flush()
        names = []  # (key, per row text): as names_of writes them
        for line in layout.lines:
            if line.leaf is None:
                continue
            col = columns[line.path]
            if line.leaf.c_type in ENUM_CLASSES:
                names.append((line.path, by_value(np, col, lambda v, t=line.leaf.c_type: enum_name(t, v))))
            elif line.flags_of:
                names.append((line.path, summary_column(np, columns, line.flags_of)))
        if len(names) == 1:  # a flag word: its Value's set flags
            key = _json_str(names[0][0])
            name_texts = [f"{{{key}: {text}}}" for text in map(_json_str, names[0][1])]
        else:
            template = "{" + ", ".join(_json_str(path).replace("%", "%%") + ": %s" for path, _ in names) + "}"
            name_texts = [template % tuple(map(_json_str, texts)) for texts in zip(*(col for _p, col in names))] \
                if names else ["{}"] * n
        entries = []  # the meanings object's items: a table per eight flags, the rest per row
        for path, col in meanings.items():
            key = _json_str(str(path)) + ": "
            if type(col) is tuple:
                entries.append((col[0], key + _json_str(str(col[1]))))
                continue
            distinct = set(col)
            if len(distinct) * 2 > n and None not in distinct:
                entries.append((None, [key + _json_str(str(text)) for text in col]))
                continue
            memo = {text: None if text is None else key + _json_str(str(text)) for text in distinct}
            entries.append((None, list(map(memo.__getitem__, col))))
        meaning_texts = joined_column(np, entries, ", ") if entries else [""] * n
        hexed = chunk.data.hex(" ", size).split(" ")
        addresses = (["null"] * n if chunk.address is None else
                     [_json_str(hex_text(chunk.address + row * size)) for row in range(n)])
        head, base, first = self.head, chunk.offset, chunk.start
        return [f'{head}{first + row}, "offset": {base + row * size}, "address": {address}, "size": {size}, '
                f'"bytes": "{data}", "fields": {{{", ".join(values)}}}, "names": {named}, "meanings": {{{meant}}}, '
                f'"findings": [{found}]}}'
                for row, (address, data, values, named, meant, found) in
                enumerate(zip(addresses, hexed, zip(*fields), name_texts, meaning_texts,
                              self.findings.rows(layout, decoded)))]

    def close(self, totals) -> None:
        pass


@lru_cache(maxsize=256)
def _field_table(np, paths: tuple):
    """Entry v: the JSON items of one-bit leaves ``paths`` whose values are the bits of v."""
    return object_array(np, [", ".join(f"{_json_str(path)}: {v >> i & 1}" for i, path in enumerate(paths))
                              for v in range(1 << len(paths))])


class _JsonFindings:
    """Each check's finding as a JSON object, its fixed parts encoded once."""

    def __init__(self):
        self.parts, self.values, self.values_of = {}, {}, None

    def _parts(self, check):
        got = self.parts.get(check)
        if got is None:
            rule = RULES[check.rule_id]
            head = json.dumps({"rule_id": rule.rule_id, "severity": rule.severity.value, "field": check.path})[:-1]
            ref = json.dumps({"page": rule.page, "sentence": rule.sentence})
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
        return f'{fhead}, "value": {shown}, "message": {message}, "reference": {ref}}}'

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
                items[row].append(f'{fhead}, "value": {value}, "message": {text}, "reference": {ref}}}')
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
        target = json.dumps({"abi": layout.abi, "interface_version": layout.label.split()[1],
                             "interface_version_value": layout.version, "label": layout.label})
        head = f'{{"type": "{layout.c_name}", "target": {target}, "index": '
        if decoded.found is not None:  # column-wise: every record's findings built check by check
            size, base = layout.size, chunk.offset
            addresses = (["null"] * chunk.count if chunk.address is None else
                         [f'"{hex_text(chunk.address + row * size)}"' for row in range(chunk.count)])
            lines = [f'{head}{index}, "offset": {base + row * size}, "address": {address}, "findings": [{found}]}}'
                     for row, (index, address, found) in enumerate(zip(range(chunk.start, chunk.start + chunk.count),
                                                                     addresses, self.findings.rows(layout, decoded)))]
            if lines:
                _emit(self.out, lines)
            return
        lines, groups = [], {}
        for row in range(chunk.count):
            offset = chunk.offset + row * layout.size
            address = "null" if chunk.address is None else f'"{hex_text(chunk.address + row * layout.size)}"'
            found = self.findings.all(layout, decoded, row, groups)
            lines.append(f'{head}{chunk.start + row}, "offset": {offset}, "address": {address}, '
                         f'"findings": [{found}]}}')
        if lines:
            _emit(self.out, lines)

    def close(self, totals) -> None:
        pass
