"""Issue 22, "help and README agree": the WinDbg formats --windbg takes, each command's exit statuses and
what TYPE is are said by each command's --help and by the documentation (the README and docs/, since issue 31
moved the details to docs/command-line.md), from the same constants of cli.py; the help's examples paste into
bash as the README's do."""
from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess

import pytest

from d3dkmddi_py import cli, decode
from d3dkmddi_py.windbg import WINDBG_COMMANDS
from tests.cli.readme import bare_backticks, documentation, prose
from tests.conftest import require

COMMANDS = tuple(cli.COMMANDS)
# a list of WinDbg memory commands as the texts write one: db/dd/dq, `db`/`dd`, ``db``/``dd``
_COMMAND_LIST = re.compile(r"(?:`{0,2}d[a-zA-Z]{1,2}`{0,2}/){2,}`{0,2}d[a-zA-Z]{1,2}`{0,2}")


def flat(text: str) -> str:
    """Text without Markdown code marks and line breaks, so a wrapped sentence compares with one line."""
    return " ".join(text.replace("`", "").split())


def help_of(name: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.execute([name, "--help"], out, io.StringIO()) == 0
    return out.getvalue()


def windbg_lists(text: str) -> list:
    """Every list of WinDbg memory commands in a text, as a tuple of names."""
    return [tuple(part.strip("`") for part in m.group().split("/")) for m in _COMMAND_LIST.finditer(text)]


def readme_exit_rows() -> dict:
    rows = re.findall(r"^\| `(\w+)` \| (\d.+?) \|$", documentation(), flags=re.M)  # an exit status starts with one
    return {name: text for name, text in rows if name in COMMANDS}


@pytest.mark.parametrize("name", COMMANDS)
def test_each_commands_exit_statuses_are_the_same_in_its_help_and_the_readme(name):
    said = cli.exit_text(name)
    assert f"exit status: {said}" in flat(help_of(name))
    assert readme_exit_rows()[name] == said


def test_etw_says_it_exits_1_after_writing_its_output():
    assert "1 an error-level finding or an event not as its template says, after the text, JSON, tables or picture " \
           "are written" in cli.exit_text("etw")
    assert cli.EXIT_STATUS["validate"][cli.EXIT_FINDINGS] and cli.EXIT_FINDINGS not in cli.EXIT_STATUS["decode"]


def test_etw_does_exit_1_after_writing_its_tables(tmp_path):
    """What the help and the README say, as the command does it: the sample trace has error-level findings."""
    out, err, status = cli.run(["etw", "sample", "--format", "csv", "-o", str(tmp_path)])
    assert status == cli.EXIT_FINDINGS, err
    from d3dkmddi_py.etw.outputs.tables import table_names

    from tests.etw.helpers import sample_other_kinds

    kinds = sample_other_kinds()  # the sample's events no entry reads: a table each, by symbol
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{name}.csv" for name in table_names() + kinds)
    assert "error" in (tmp_path / "findings.csv").read_text()


def test_the_readme_lists_every_commands_exit_statuses_once():
    assert sorted(readme_exit_rows()) == sorted(COMMANDS)


@pytest.mark.parametrize("name", ["decode", "validate", "layout"])
def test_type_is_described_alike_in_the_help_and_the_readme(name):
    assert flat(cli.TYPE_HELP) in flat(help_of(name))
    assert flat(cli.TYPE_HELP) in flat(prose(documentation()))


def test_every_list_of_windbg_formats_is_the_one_the_reader_reads():
    readme = prose(documentation())
    texts = {"README": readme, "decode --help": help_of("decode"), "validate --help": help_of("validate"),
             "decode()": decode.__doc__}
    for where, text in texts.items():
        lists = windbg_lists(text)
        assert lists, f"{where} names no WinDbg formats"
        assert all(found == WINDBG_COMMANDS for found in lists), (where, lists)
    assert len(windbg_lists(readme)) >= 2  # the --windbg option and the Python paragraph


def test_the_list_finder_sees_a_short_list():
    """The lists issue 22 found: the old --windbg help and the README's Python paragraph."""
    assert windbg_lists("text of db/dd/dq/dp/dps output, or `db`/`dw`/`dd` and ``dq``/``dp``/``dps``") == \
        [("db", "dd", "dq", "dp", "dps"), ("db", "dw", "dd"), ("dq", "dp", "dps")]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_help_example_pastes_into_bash(name):
    require(shutil.which("bash") is not None, "bash is not installed")
    examples = [line.strip() for line in help_of(name).split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()]
    assert len(examples) >= 2
    for line in examples:
        assert not bare_backticks(line), line
        p = subprocess.run(["bash", "-n"], input=line + "\n", capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, (line, p.stderr)


# ------------------------------------------------------------------ help(d3dkmddi_py)
HELP_LINES = 400  # help(d3dkmddi_py) was 7,237 lines, every C type documented in full (issue 22)


def test_the_package_guide_names_every_function_and_subpackage_of_all():
    import inspect
    import types

    import d3dkmddi_py as kmd

    guide = kmd.__doc__
    entry = [n for n in kmd.__all__ if inspect.isfunction(getattr(kmd, n)) or
             isinstance(getattr(kmd, n), types.ModuleType)]
    assert {"decode", "target", "get_include", "semantics", "bulk", "etw"} <= set(entry)
    unnamed = [n for n in entry if not re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", guide)]
    assert unnamed == []
    for command in COMMANDS:
        assert re.search(rf"\b{command}\b", guide.split("command line is", 1)[1]), command


def test_help_of_the_package_is_a_guide_not_every_class():
    import pydoc

    import d3dkmddi_py as kmd

    text = pydoc.render_doc(kmd, renderer=pydoc.plaintext)
    assert len(text.splitlines()) < HELP_LINES
    assert "class DXGK_ALLOCATIONINFO" not in text and "DXGK_ALLOCATIONINFO" in dir(kmd)
    assert "class DXGK_ALLOCATIONINFO" in pydoc.render_doc(kmd.DXGK_ALLOCATIONINFO, renderer=pydoc.plaintext)
