"""The test tree follows the package (README, "How the layouts are checked"): a folder per subpackage,
test_<module>.py per top-level module, six folders that check across the package (docs/ since issue 31); and no test module
imports another test module (shared helpers are plain modules)."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "d3dkmddi_py"
ACROSS = {"compiler", "golden", "golden_output", "edges", "packaging", "docs"}
COMMAND = {"cli"}  # cli.py, the command


def _subpackages() -> set:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and not p.name.startswith("_")}


def _modules() -> set:
    return {p.stem.lstrip("_") for p in PACKAGE.glob("*.py")}


def test_every_test_folder_is_a_subpackage_the_command_or_a_cross_check():
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders - _subpackages() - COMMAND - ACROSS == set()


def test_every_top_level_test_module_names_a_module():
    modules = _modules()
    stray = [p.name for p in TESTS.glob("test_*.py")
             if not any(p.stem[len("test_"):] == m or p.stem[len("test_"):].startswith(m + "_") for m in modules)]
    assert stray == []


def _imported(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.rsplit(".", 1)[-1])
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name.rsplit(".", 1)[-1] for alias in node.names)
    return names


def test_no_test_module_imports_another():
    found = {str(p.relative_to(TESTS)): sorted(n for n in _imported(p) if n.startswith("test_"))
             for p in TESTS.rglob("test_*.py")}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_import_check_sees_a_test_module_import(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("from tests.cli.test_command_line import command\n")
    assert "test_command_line" in _imported(probe)
