"""The README and docs/ read as their reader reads them: fenced blocks, inline code spans, and shell quoting."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
# The documentation a reader has: the README, then every page of docs/ (issue 31 moved most of the README there).
PAGES = (README, *sorted(DOCS.glob("*.md")))


def documentation() -> str:
    """Every page's text, the README first."""
    return "\n\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def page_name(page: Path) -> str:
    return str(page.relative_to(REPO))


def fenced_blocks(text: str, *, numbered: bool = False) -> list:
    """(info string, lines) of every fenced code block; with ``numbered``, (line number of the fence, info,
    lines)."""
    blocks, info, body, start = [], None, [], 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if info is None:
                info, body, start = line[3:].strip(), [], number
            else:
                blocks.append((start, info, body) if numbered else (info, body))
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


COMMAND_WORDS = ("d3dkmddi", "python", "python3", "pip", "gcc", "wpr", "tracerpt", "wevtutil")
# a word naming a file the reader has and the package does not ship (blob.bin, trace.etl, MEMORY.DMP, ...)
_INPUT_FILE = re.compile(r"\.(bin|txt|etl|xml|c|log|dmp|DMP)$")


def runnable(line: str) -> bool:
    """A ``d3dkmddi`` line whose inputs are bundled (the samples) or typed on the line."""
    words = shlex.split(line, comments=True)
    if not words or words[0] != "d3dkmddi" or any(c in line.split("#")[0] for c in "<>|$"):
        return False
    outputs = {words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--output")}
    return not any(_INPUT_FILE.search(w) for w in words if w not in outputs)
