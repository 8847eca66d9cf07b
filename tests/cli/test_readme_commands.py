"""Issue 22, "the README's example commands run as pasted into bash", on every page since issue 31 moved
most of the README to docs/.

Every shell line of the README and of docs/ (each line of a ``sh`` block, each line of a ``text`` block that
starts with a command: a command on the reader's own files, and each inline code span that starts with a
command) must parse (``bash -n``) and keep a WinDbg backtick number (``00000000`00000485``) away from the
shell: a backtick outside single quotes is command substitution.  The lines that need no input file
besides the bundled samples are then run, as pasted, with the installed ``d3dkmddi`` in a temporary folder
(tests/docs/test_code_blocks.py holds that every ``sh`` line is such a line or a set-up line).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from d3dkmddi_py.cli import EXIT_STATUS
from tests.cli.readme import (COMMAND_WORDS, PAGES, README, bare_backticks, code_spans, documentation, fenced_blocks,
                               prose, runnable)
from tests.conftest import require

SHELL_BLOCKS = ("sh", "bash", "shell")


def block_lines() -> list:
    """Every command line of the shell blocks of every page."""
    return [line for page in PAGES for info, body in fenced_blocks(page.read_text(encoding="utf-8"))
            if info in SHELL_BLOCKS for line in body if line.strip() and not line.lstrip().startswith("#")]


def text_command_lines() -> list:
    """Every line of a ``text`` block that is a command (on the reader's own files: shown, not run)."""
    return [line for page in PAGES for info, body in fenced_blocks(page.read_text(encoding="utf-8"))
            if info == "text" for line in body if line.split() and line.split()[0] in COMMAND_WORDS]


def span_lines() -> list:
    """Every inline code span that starts with a command (``python tools/bench.py``, ``d3dkmddi etw``)."""
    spans = [span for page in PAGES for span in code_spans(prose(page.read_text(encoding="utf-8")))]
    return [span for span in spans if span.split() and
            (span.split()[0] in COMMAND_WORDS or span.startswith("PYTHONPATH="))]


LINES = block_lines() + text_command_lines() + span_lines()
RUNNABLE = [line for line in block_lines() if runnable(line)]  # a span may name a command without its input


def test_the_readme_shows_its_commands_where_the_test_finds_them():
    """Every fenced block is sh, python or text (a block without a language would escape this test), and the
    lines found include the ones issue 22 names and the inline ones."""
    text = documentation()
    assert {info for info, _body in fenced_blocks(text)} <= {*SHELL_BLOCKS, "python", "text"}
    assert any("00000000`00000485" in line for line in RUNNABLE)
    assert any("--address 'fffff801`2a3b4058'" in line for line in LINES)
    assert {"d3dkmddi demo", "d3dkmddi etw sample"} <= {line.split("#")[0].strip() for line in RUNNABLE}
    # issue 24: the session log's commands run on the bundled log, followed and validated
    assert {"decode", "validate"} <= {line.split()[1] for line in RUNNABLE if "--windbg sample" in line and
                                      "--follow" in line}
    assert "PYTHONPATH=. python tests/golden_output/regenerate.py" in LINES
    assert "d3dkmddi_py.get_include()" not in LINES  # a Python name, not a command
    assert len(LINES) >= 40 and len(RUNNABLE) >= 7, (len(LINES), len(RUNNABLE))


def test_the_check_finds_a_bare_backtick():
    assert bare_backticks("d3dkmddi decode DXGK_SEGMENTFLAGS 00000000`00000485")
    assert bare_backticks('d3dkmddi decode DXGK_SEGMENTFLAGS "00000000`00000485"')  # substituted in "..."
    assert not bare_backticks("d3dkmddi decode DXGK_SEGMENTFLAGS '00000000`00000485'  # a `word`")
    assert code_spans("a `x` b ``y`z`` c ` d") == ["x", "y`z"]


@pytest.mark.parametrize("line", LINES)
def test_every_readme_shell_line_parses_in_bash(line):
    require(shutil.which("bash") is not None, "bash is not installed")
    assert not bare_backticks(line), f"quote the backtick number: {line}"
    p = subprocess.run(["bash", "-n"], input=line + "\n", capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, (line, p.stderr)


def installed_command() -> Path:
    """The ``d3dkmddi`` script pip installed beside this Python."""
    return Path(sys.executable).parent / ("d3dkmddi.exe" if os.name == "nt" else "d3dkmddi")


@pytest.mark.parametrize("line", RUNNABLE)
def test_every_readme_command_on_bundled_input_runs_as_pasted(line, tmp_path):
    require(shutil.which("bash") is not None, "bash is not installed")
    command = installed_command()
    require(command.is_file(), f"{command} is not installed (pip install -e .)")
    env = dict(os.environ, PATH=f"{command.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    p = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    name = shlex.split(line, comments=True)[1]
    assert p.returncode in EXIT_STATUS[name], (line, p.returncode, p.stderr[-2000:])
    assert p.returncode != 2 and "Traceback" not in p.stderr, (line, p.stderr[-2000:])
    assert p.stdout or list(tmp_path.iterdir()), f"{line}: wrote nothing"


def test_the_backtick_number_reaches_the_command_whole(tmp_path):
    """Pasted as the README shows it, WinDbg's 64-bit form decodes as the word 0x485 does."""
    require(shutil.which("bash") is not None, "bash is not installed")
    command = installed_command()
    require(command.is_file(), f"{command} is not installed (pip install -e .)")
    line = next(line for line in RUNNABLE if "00000000`00000485" in line)
    pasted = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env=dict(os.environ, PATH=f"{command.parent}{os.pathsep}{os.environ['PATH']}"))
    plain = subprocess.run([str(command), "decode", "DXGK_SEGMENTFLAGS", "0x485"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)
    assert pasted.returncode == plain.returncode == 0, pasted.stderr
    assert pasted.stdout == plain.stdout and "0x485" in plain.stdout


def test_every_readme_python_block_compiles():
    blocks = [body for info, body in fenced_blocks(documentation()) if info == "python"]
    assert len(blocks) >= 4
    for body in blocks:
        compile("\n".join(body), "README.md", "exec")
