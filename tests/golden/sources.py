"""The sources the package quotes, read from ../shared (beside the repository): the current reference
pages (docs/), their earlier copies (seeds/) and the kit's header comments as definitions.md transcribes
them; and the one check every quote passes, ``missing``: its words are in the copy it cites, verbatim
but for markup and whitespace.  The installed package never reads these files."""
from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

from d3dkmddi_py.semantics._rules import Quote, SourceKind

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DEFINITIONS = SHARED / "spec" / "definitions.md"

_BLOCK_TAG = re.compile(r"</?(?:p|div|dd|dt|dl|br|li|ul|ol|tr|td|th|table|h\d)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)")  # [text](url), the url may hold "(v=vs.85)"
_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def normalise(text: str) -> str:
    """Text without its markup: HTML tags (a block tag is a space, an inline one nothing), Markdown links
    (their text kept), emphasis and code marks, table pipes, entities, typographic quotes, and every run of
    whitespace as one space."""
    text = _TAG.sub("", _BLOCK_TAG.sub(" ", text))
    text = html.unescape(_LINK.sub(r"\1", text))
    text = text.replace("*", "").replace("`", "").replace("|", " ").translate(_TYPOGRAPHY)
    return re.sub(r"\s+", " ", text).strip()


@lru_cache(maxsize=None)
def copy_text(copy: str) -> str:
    """A page copy (``docs/<page>.md`` or ``seeds/<file>``) with its markup taken out."""
    return normalise((SHARED / copy).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def kit_comments(member: str) -> tuple:
    """The header comments definitions.md gives for ``TYPE.member``: in the section of TYPE, the table rows
    whose field cell is the member, each ``header comment: "..."`` in them."""
    type_name, _, field = member.partition(".")
    text = DEFINITIONS.read_text(encoding="utf-8")
    found = []
    for section in text.split("\n## ")[1:]:
        heading = section.split("\n", 1)[0]
        if type_name not in heading.split():
            continue
        for row in section.splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if row.startswith("|") and field in cells:
                found += re.findall(r'header comment: "([^"]*)"', row)
    return tuple(normalise(c) for c in found)


def current_copy(quote: Quote) -> str:
    """The current page's copy of the page a quote is on (for an earlier copy: the same page today)."""
    return f"docs/{quote.source.where.rsplit('/', 1)[1]}.md"


def missing(quote: Quote) -> str | None:
    """Why a quote is not where it says it is, or None when its words are there."""
    words = normalise(quote.text)
    if not words:
        return "the quote is empty"
    source = quote.source
    if source.kind is SourceKind.KIT:
        comments = kit_comments(source.copy)
        if not comments:
            return f"definitions.md gives no header comment for {source.copy}"
        return None if any(words in c for c in comments) else f"not in the kit comment of {source.copy}: {comments}"
    if not (SHARED / source.copy).is_file():
        return f"no copy {source.copy} under {SHARED}"
    return None if words in copy_text(source.copy) else f"not verbatim in {source.copy}"


_FIELD = re.compile(r"^### -field (\S+)(?: \[([a-z/]+)\])?\s*$", re.MULTILINE)
_DIRECTION = re.compile(r"^\s*\[([a-z/]+)\]")


@lru_cache(maxsize=None)
def page_fields(copy: str) -> dict:
    """Member name -> (its direction on the page: "in", "out", "in/out" or None, its text without markup),
    for every ``### -field`` section of a page copy (the direction is in the heading or opens the text)."""
    raw = (SHARED / copy).read_text(encoding="utf-8")
    marks = list(_FIELD.finditer(raw))
    out = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(raw)
        body = raw[m.end():end].split("\n## ", 1)[0]
        opening = _DIRECTION.match(body)
        direction = m.group(2) or (opening.group(1) if opening else None)
        out[m.group(1)] = (direction, normalise(body[opening.end():] if opening else body))
    return out


def type_copy(type_name: str) -> str | None:
    """The docs copy of a type's reference page (the table's ``doc`` address), None where ../shared has none."""
    from d3dkmddi_py._spec import ALIASES, TYPEDEFS

    doc = getattr(TYPEDEFS.get(ALIASES.get(type_name, type_name)), "doc", None)
    copy = None if doc is None else f"docs/{doc.rsplit('/', 1)[1]}.md"
    return copy if copy is not None and (SHARED / copy).is_file() else None
