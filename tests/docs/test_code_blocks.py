"""Issue 31, "every code block in the README and in docs/ runs in the tests".

A fenced block is ``python`` (run whole in a fresh interpreter, in a temporary folder, under ``-X dev -W error``,
so a file left open fails), ``sh`` (every line runs on the bundled samples, or is a set-up line that another test
runs: the install and build commands), or ``text`` (output, or a command on the reader's own files or on Windows:
shown, never run, and said so by its fence).  A ``text`` block right after a ``python`` or ``sh`` block is that
block's output: each line it shows is printed, in that order, adjacent unless ``...`` stands between them.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.readme import PAGES, REPO, fenced_blocks, page_name, runnable

# The set-up lines: the README's two contract commands (.ci/run runs the test one; tests/packaging installs the
# wheel and runs the demo), pip and build (tests/packaging builds the sdist and wheels), mkdocs
# (tests/docs/test_docs_build.py builds the site strict).
SETUP = re.compile(r"^(python3 -m venv \.venv && \. \.venv/bin/activate && pip install -e |pip install |"
                   r"python -m build |mkdocs build --strict)")
BLOCK_KINDS = {"python", "sh", "text"}
TIMEOUT = 600


def blocks() -> list:
    """(page, line, info, lines, output lines or None) of every fenced block of every page."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8").splitlines()
        numbered = fenced_blocks("\n".join(text), numbered=True)
        for i, (line, info, body) in enumerate(numbered):
            after = numbered[i + 1] if i + 1 < len(numbered) else None
            between = text[line + len(body) + 1:after[0] - 1] if after else ["end"]  # lines between the fences
            output = after[2] if (after and after[1] == "text" and info in ("python", "sh") and
                                  not any(x.strip() for x in between)) else None
            found.append((page, line, info, body, output))
    return found


BLOCKS = blocks()
PYTHON = [b for b in BLOCKS if b[2] == "python"]
SHELL = [b for b in BLOCKS if b[2] == "sh"]


def block_id(block) -> str:
    return f"{page_name(block[0])}:{block[1]}"


def shell_lines(body) -> list:
    return [line for line in body if line.strip() and not line.lstrip().startswith("#")]


def shown_in(shown: list, printed: str) -> str:
    """'' if every line ``shown`` is in ``printed`` in order, each right after the one before unless a ``...``
    line stands between them; else what is missing."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at, adjacent = 0, False
    for want in shown:
        want = want.rstrip()
        if want == "...":
            adjacent = False
            continue
        if adjacent:
            if at >= len(lines) or lines[at] != want:
                return f"not next after the line before: {want!r}"
            at += 1
        else:
            try:
                at = lines.index(want, at) + 1
            except ValueError:
                return f"not printed (in this order): {want!r}"
        adjacent = True
    return ""


def test_every_block_is_python_sh_or_text_and_each_kind_is_found():
    """And a text block is a block's output only when nothing but blank lines stands between them."""
    kinds = {(block_id(b), b[2]) for b in BLOCKS if b[2] not in BLOCK_KINDS}
    assert kinds == set(), "mark each block python, sh (both run) or text (shown, not run)"
    assert {page_name(b[0]) for b in PYTHON} >= {"README.md", "docs/bulk.md", "docs/structures.md"}
    assert len(PYTHON) >= 10 and len(SHELL) >= 6, (len(PYTHON), len(SHELL))


def test_the_output_check_holds_order_and_adjacency():
    printed = "a\nb\nc\nd\n"
    assert shown_in(["a", "b", "...", "d"], printed) == ""
    assert shown_in(["a", "c"], printed) != ""           # c is not right after a
    assert shown_in(["c", "...", "a"], printed) != ""    # a is not after c
    assert shown_in(["x"], printed) != ""


def installed_bin() -> Path:
    return Path(sys.executable).parent


def run_python(body, folder: Path) -> subprocess.CompletedProcess:
    """A block run whole by a fresh interpreter in ``folder``, as a reader runs a pasted script."""
    script = folder / "snippet.py"
    script.write_text("\n".join(body) + "\n", encoding="utf-8")
    env = dict(os.environ, PATH=f"{installed_bin()}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-X", "dev", "-W", "error", str(script)], capture_output=True, text=True,
                          cwd=folder, env=env, timeout=TIMEOUT)


def ran_clean(p: subprocess.CompletedProcess) -> bool:
    """Exit 0 and nothing on standard error: a warning, even one ignored in __del__, is a failure."""
    return p.returncode == 0 and p.stderr == ""


@pytest.mark.parametrize("block", PYTHON, ids=block_id)
def test_every_python_block_runs_in_a_fresh_interpreter_as_shown(block, tmp_path):
    _page, _line, _info, body, output = block
    p = run_python(body, tmp_path)
    assert ran_clean(p), (block_id(block), p.stderr[-3000:])
    if output is not None:
        assert shown_in(output, p.stdout) == "", (block_id(block), shown_in(output, p.stdout), p.stdout[-3000:])


@pytest.mark.parametrize("block", SHELL, ids=block_id)
def test_every_sh_line_runs_on_the_bundled_samples_or_is_set_up(block):
    """A command on a file the package does not ship (trace.etl, blob.bin) belongs in a text block."""
    odd = [line for line in shell_lines(block[3]) if not runnable(line) and not SETUP.match(line)]
    assert odd == [], f"{block_id(block)}: run these on a bundled sample, or show them in a ```text block"


@pytest.mark.parametrize("block", [b for b in SHELL if b[4] is not None], ids=block_id)
def test_every_sh_block_prints_its_output_as_shown(block, tmp_path):
    env = dict(os.environ, PATH=f"{installed_bin()}{os.pathsep}{os.environ.get('PATH', '')}")
    printed = ""
    for line in shell_lines(block[3]):
        assert runnable(line), line
        p = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, env=env,
                           timeout=TIMEOUT)
        assert p.returncode in (0, 1) and "Traceback" not in p.stderr, (line, p.stderr[-2000:])
        printed += p.stdout + p.stderr
    assert shown_in(block[4], printed) == "", (block_id(block), shown_in(block[4], printed), printed[-3000:])


def test_a_python_block_that_leaves_a_file_open_fails(tmp_path):
    """-X dev -W error: the ResourceWarning of ``out = open(...)`` never closed is an error, as issue 31 asks."""
    p = run_python(['out = open("findings.jsonl", "w")', 'print("x", file=out)'], tmp_path)
    assert not ran_clean(p) and "ResourceWarning" in p.stderr, p
    assert ran_clean(run_python(['with open("findings.jsonl", "w") as out:', '    print("x", file=out)'], tmp_path))


def test_the_repository_is_where_the_pages_are():
    assert (REPO / "mkdocs.yml").is_file() and PAGES[0].name == "README.md"
