"""The text format: ``decode`` as WinDbg ``dt -r`` prints a record (meanings and findings inline) and
``validate``'s lines, each per record and per column."""
from __future__ import annotations

from ..coltext import by_value
from ..dttext import column_bodies, render_record, render_row, row_plan
from ..outfile import write_lines
from ..render import tally_counts as _tally
from ..wording import plural
from .decode import Decoded, findings_of
from .texts import (BODY_CACHE, _distinct, _hit_messages, _meanings, _message, _render_enum_record, _Texts,
                    _titles)


class TextDecode:
    """``decode`` as text: every record as ``dt -r`` prints it, meanings and findings inline."""

    chunk_records = 4096  # records whose output is built at once (~20 MB of text)

    def __init__(self, out, *, adapter=None, nonzero: bool = False):
        self.out, self.adapter, self.nonzero, self.first = out, adapter, nonzero, True
        self.texts, self.bodies = _Texts(), {}

    def write(self, decoded: Decoded) -> None:
        chunk, layout = decoded.chunk, decoded.chunk.layout
        plan = row_plan(layout) if layout.kind != "enum" else None
        bodies = self._column_bodies(decoded, plan) if plan is not None and not self.nonzero else None
        if bodies is not None:
            blocks = [f"{title}\n{body}" for title, body in zip(_titles(chunk), bodies)]
            if blocks:
                write_lines(self.out, blocks, "\n\n", "" if self.first else "\n")
                self.first = False
            return
        blocks = []
        for row, title in enumerate(_titles(chunk)):
            raw = chunk.record(row)
            if plan is None:
                blocks.append(_render_enum_record(layout, raw, title))
                continue
            body = self.bodies.get(raw)
            if body is not None:  # the same bytes print the same lines (meanings and findings included)
                blocks.append(title + "\n" + body)
                continue
            meanings = _meanings(layout, raw, self.adapter)
            if self.nonzero or not all(k in plan.leaf_paths for k in meanings):
                values = dict(zip((leaf.path for leaf in layout.leaves), decoded.rows[row]))
                blocks.append(render_record(layout, values, findings=findings_of(decoded, row), meanings=meanings,
                                            title=title, nonzero=self.nonzero))
                continue
            placed, views = {}, {}
            for check, _key in decoded.hits[row]:
                path = check.path
                placed.setdefault(path, []).extend(self.texts.under(check, plan.pads[path], decoded, row, views))
            body = render_row(plan, decoded.rows[row], placed, [], meanings, None)
            if len(self.bodies) >= BODY_CACHE:
                self.bodies.clear()
            self.bodies[raw] = body
            blocks.append(title + "\n" + body)
        if blocks:
            write_lines(self.out, blocks, "\n\n", "" if self.first else "\n")
            self.first = False

    def _column_bodies(self, decoded: Decoded, plan) -> list | None:
        """Every record's lines, built a line at a time from the chunk's columns (None when the chunk
        was decoded record by record, its records repeat, or its type's meanings are not
        column-wise): ``dttext.column_bodies``, the same text as ``render_row``."""
        from ..semantics.explain import column_meanings

        np, columns, layout = decoded.np, decoded.columns, decoded.chunk.layout
        if columns is None or not decoded.values or decoded.found is None or _distinct(decoded) is not None:
            return None
        meanings = column_meanings(layout, columns, np, self.adapter)
        if meanings is None or not all(path in plan.leaf_paths for path in meanings):
            return None
        found = []  # (line path, rows, the text under it in each) in rule order
        for k, (check, rows, _vals) in enumerate(decoded.found):
            rows, pad = rows.tolist(), plan.pads[check.path]
            if check.static:
                found.append((check.path, rows, ["\n".join(self.texts.under(check, pad, decoded, rows[0], {}))] * len(rows)))
                continue
            lead, tail = self.texts.frame(check, pad)
            found.append((check.path, rows, [lead + message + tail for message in _hit_messages(decoded, k, rows)]))
        return column_bodies(np, plan, columns, meanings, decoded.chunk.count, found)

    def close(self, totals) -> None:
        pass


class TextValidate:
    """``validate`` as text: a line per record with its tally, then each finding and its sentence."""

    chunk_records = 4096  # records whose output is built at once

    def __init__(self, out):
        self.out, self.texts = out, _Texts()

    def write(self, decoded: Decoded) -> None:
        chunk, lines, texts = decoded.chunk, [], self.texts
        found = self._column_lines(decoded) if decoded.found is not None else None
        if found is not None:
            if found:
                write_lines(self.out, found)
            return
        groups = {}  # a hit tuple (shared by records that break the same rules) -> its tally and lines
        made = {check: (index.tolist(), messages) for check, (index, messages) in (decoded.messages or {}).items()}
        for row, (where, hits) in enumerate(zip(_titles(chunk, size=False), decoded.hits)):
            if not hits:
                lines.append(where + ": no findings")
                continue
            group = groups.get(id(hits))
            if group is None:
                errors = sum(texts.rule(check)[0] == "error" for check, _key in hits)
                parts = [texts.validate_lines(check, decoded, row, {}) if check.static else
                         (*texts.validate_frame(check), check, made.get(check)) for check, _key in hits]
                static = all(type(part) is str for part in parts)
                group = groups[id(hits)] = (f": {_tally(errors, len(hits) - errors)}\n", parts,
                                            "\n".join(parts) if static else None, hits)
            tally, parts, body, _keep = group
            if body is None:  # some message reads the record's values: from the columns where it can
                views = {}
                body = "\n".join(part if type(part) is str else
                                  part[0] + (part[3][1][part[3][0][row]] if part[3] is not None else
                                             _message(part[2], decoded, row, views)) + part[1]
                                  for part in parts)
            lines.append(where + tally + body)
        if lines:
            write_lines(self.out, lines)

    def _column_lines(self, decoded: Decoded) -> list | None:
        """Every record's lines, built check by check from a column-decoded chunk (None when its
        records repeat: then records that break the same rules share their text)."""
        if _distinct(decoded) is not None:
            return None
        np, chunk, texts = decoded.np, decoded.chunk, self.texts
        n = chunk.count
        errors, total, items = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), [[] for _ in range(n)]
        for k, (check, rows, _vals) in enumerate(decoded.found):
            severity = texts.rule(check)[0]
            if severity == "error":
                errors[rows] += 1
            total[rows] += 1
            rows = rows.tolist()
            if check.static:
                text = texts.validate_lines(check, decoded, rows[0], {})
                for row in rows:
                    items[row].append(text)
                continue
            lead, tail = texts.validate_frame(check)
            for row, message in zip(rows, _hit_messages(decoded, k, rows)):
                items[row].append(lead + message + tail)
        tallies = by_value(np, errors << 32 | total, lambda v: f": {_tally(v >> 32, (v & 0xFFFFFFFF) - (v >> 32))}\n"
                           if v & 0xFFFFFFFF else ": no findings")
        return [place + tally + body for place, tally, body in zip(_titles(chunk, size=False), tallies,
                                                                   map("\n".join, items))]

    def close(self, totals) -> None:
        records, errors, warnings = totals
        self.out.write(f"{plural(records, 'record')}: {plural(errors, 'error')}, {plural(warnings, 'warning')}\n")
