"""Counts and numbered things in words, one rule for every output: singular for one (``1 segment``,
``segments 2, 3``), never ``segment(s)``."""
from __future__ import annotations


def noun(n: int, word: str, many: str | None = None) -> str:
    """``word`` for one, else ``many`` (by default ``word`` + "s")."""
    return word if n == 1 else many or word + "s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 segment``, ``1,024 segments``."""
    return f"{n:,} {noun(n, word, many)}"


def numbered(word: str, ids, many: str | None = None) -> str:
    """``segment 3``, ``segments 2, 3``: a word and the numbers it names."""
    ids = list(ids)
    return f"{noun(len(ids), word, many)} {', '.join(map(str, ids))}"


__all__ = ["noun", "plural", "numbered"]
