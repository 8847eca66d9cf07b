"""Issue 31, one spelling for one fact in the etw command's words: the help names the events from the registry,
counts are singular for one, a provider without a name is said to have none, and every install hint names the
package's extra."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from d3dkmddi_py import cli
from d3dkmddi_py.etw.model.registry import ENTRIES

from .helpers import run, seg_fields, trace, tracerpt_event

ROOT = Path(__file__).resolve().parents[2]


def test_etw_help_names_every_event_the_registry_reads(capsys):
    out, _err, status = cli.run(["etw", "--help"])
    text = " ".join((out + capsys.readouterr().out).split())  # argparse prints help to sys.stdout
    assert status == 0 and f"The events a catalog entry reads ({len(ENTRIES)}): {', '.join(ENTRIES)};" in text


def test_one_event_is_said_in_the_singular(tmp_path):
    """'1 other DxgKrnl events skipped' and its kind: one of a thing is singular in the text's count line."""
    path = tmp_path / "one.xml"
    path.write_bytes(trace(tracerpt_event(78, seg_fields(1, 0x11), version=1)))
    out, _status = run([str(path)])
    assert "\n1 event: 1 DxgKrnl event read (1 of them by a catalog entry), 0 of other providers skipped\n" in out
    assert not re.search(r"\b1 (events|DxgKrnl events|segments|allocations)\b", out)


def test_summary_shows_no_name_for_an_unnamed_provider():
    out, status = run(["sample", "--summary"])
    line = next(x for x in out.splitlines() if "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c" in x)
    assert status == 0 and line.rstrip().endswith("(no name)")


def _extras_named_in_the_source() -> set:
    found = set()
    for path in (ROOT / "d3dkmddi_py").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r"(?:optional_module|_need)\(\s*\"[\w.]+\",\s*(?:\"(\w+)\"|EXTRA)", text))
        found.update(re.findall(r"install_hint\('(\w+)'\)", text))
        found.update(re.findall(r"^EXTRA = \"(\w+)\"", text, re.M))
    return found - {""}


def test_every_install_hint_names_an_extra_of_the_package():
    """'pip install pyarrow' and 'pip install numpy' said another spelling than the plot and dump hints: every
    hint is now _numpy.install_hint's ('pip install 'd3dkmddi_py[arrow]''), of an extra pyproject.toml has."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = _extras_named_in_the_source()
    assert named and named <= extras and {"arrow", "bulk", "dump", "plot"} <= named
    spelled = [str(p.relative_to(ROOT)) for p in (ROOT / "d3dkmddi_py").rglob("*.py")
               if "pip install" in p.read_text(encoding="utf-8")]
    assert spelled == ["d3dkmddi_py/_numpy.py"]  # the one place the words are written
