"""Texts of NumPy columns, each distinct value or flag set formatted once: the column forms of
joining a word's flag names and of formatting a value.  NumPy is passed in (it is optional)."""
from __future__ import annotations

from functools import lru_cache


def joined_column(np, entries, sep: str) -> list:
    """Per row, ``sep.join`` of the pieces of the entries that are non-zero in that row ("" when none):
    the column form of joining the names of a word's set flags.

    ``entries`` are (column, piece) in order: a str piece for a one-bit flag (eight of them in a row
    become one 256-entry table, so a row costs a lookup, not eight tests), or a function of the
    column's value (called once per distinct non-zero value), or (None, the pieces of every row,
    None or "" where there is none).
    """
    parts, run = [], []  # per part, its text in every row ("" or None where it has none)

    def flush():
        for start in range(0, len(run), 8):
            group = run[start:start + 8]
            index = np.zeros(len(group[0][0]), dtype=np.intp)
            for i, (col, _piece) in enumerate(group):
                index |= (col != 0).astype(np.intp) << i
            parts.append(_bit_table(np, tuple(piece for _col, piece in group), sep)[index].tolist())
        run.clear()

    for col, piece in entries:
        if isinstance(piece, str):
            run.append((col, piece))
            continue
        flush()
        parts.append(list(piece) if col is None else by_value(np, col, lambda v, piece=piece: piece(v) if v else ""))
    flush()
    if len(parts) == 1:
        return [part or "" for part in parts[0]]
    # each row's text is copied once (adding part by part copied a long text once per part)
    return [sep.join(filter(None, row)) for row in zip(*parts)]


@lru_cache(maxsize=256)
def _bit_table(np, pieces: tuple, sep: str):
    """Entry v: ``sep.join`` of the pieces whose bit is set in v (an object array, for take)."""
    return object_array(np, [sep.join(piece for i, piece in enumerate(pieces) if v >> i & 1)
                              for v in range(1 << len(pieces))])


def by_value(np, col, text) -> list:
    """``[text(v) for v in col]``, calling ``text`` once per distinct value."""
    unique, inverse = np.unique(col, return_inverse=True)
    return object_array(np, [text(v) for v in unique.tolist()])[inverse.reshape(-1)].tolist()


def object_array(np, items: list):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out
