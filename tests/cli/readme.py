"""The README read as its reader reads it: fenced blocks, inline code spans, and shell quoting."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def fenced_blocks(text: str) -> list:
    """(info string, lines) of every fenced code block."""
    blocks, info, body = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, body = line[3:].strip(), []
            else:
                blocks.append((info, body))
                info = None
        elif info is not None:
            body.append(line)
    assert info is None, "a fenced block is not closed"
    return blocks


def prose(text: str) -> str:
    """The README without its fenced blocks."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)


def code_spans(text: str) -> list:
    """Every inline code span, as CommonMark reads them: a run of N backticks opens one and the next run
    of exactly N closes it (so ``a`b`` holds a backtick); the content's one leading and trailing
    space is stripped when both are there."""
    spans, pos = [], 0
    for opening in re.finditer(r"`+", text):
        if opening.start() < pos:
            continue
        closing = next((m for m in re.finditer(r"`+", text[opening.end():])
                        if len(m.group()) == len(opening.group())), None)
        if closing is None:
            continue
        content = text[opening.end():opening.end() + closing.start()].replace("\n", " ")
        if len(content) > 2 and content[0] == content[-1] == " ":
            content = content[1:-1]
        spans.append(content)
        pos = opening.end() + closing.end()
    return spans


def bare_backticks(line: str) -> bool:
    """Whether a backtick stands outside single quotes (bash runs what follows as a command)."""
    quote = None
    for c in line:
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "'" and quote is None:
            quote = c
        elif c == '"':
            quote = None if quote == '"' else '"'
        elif c == "#" and quote is None:
            return False  # a comment
        elif c == "`":
            return True
    return False
