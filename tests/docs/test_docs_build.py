"""Issue 31, "the docs build strict in the tests": mkdocs.yml builds docs/ and the API reference (mkdocstrings)
into a temporary folder with --strict, so a broken link, anchor or API reference fails.  MkDocs and mkdocstrings
come with the test extra: their absence is a failure, not a skip."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import mkdocs  # noqa: F401  (the test extra installs it: missing, this module fails to import, loudly)
import mkdocstrings  # noqa: F401

from tests.cli.readme import DOCS, README, REPO

TIMEOUT = 600


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], capture_output=True, text=True, cwd=root, timeout=TIMEOUT)


def copy_of_the_site(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ beside the package (the API reference reads it), to break one thing in."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(DOCS, root / "docs")
    (root / "d3dkmddi_py").symlink_to(REPO / "d3dkmddi_py")
    return root


def test_the_documentation_builds_strict(tmp_path):
    p = build(REPO, tmp_path / "site")
    assert p.returncode == 0, p.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("d3dkmddi_py.decode", "d3dkmddi_py.bulk.decode_array", "d3dkmddi_py.etw", "d3dkmddi_py.errors"):
        assert f'id="{name}"' in api, name  # the reference was made from the docstrings


def test_every_page_of_docs_is_in_the_navigation():
    nav = re.findall(r":\s*(\S+\.md)\s*$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.M)
    assert sorted(nav) == sorted(p.name for p in DOCS.glob("*.md"))


def test_a_broken_link_fails_the_build(tmp_path):
    root = copy_of_the_site(tmp_path)
    page = root / "docs" / "bulk.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n", encoding="utf-8")
    p = build(root, tmp_path / "site")
    assert p.returncode != 0 and "no-such-page.md" in p.stderr, p.stderr[-2000:]


def test_a_broken_anchor_fails_the_build(tmp_path):
    root = copy_of_the_site(tmp_path)
    page = root / "docs" / "bulk.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](traces.md#no-such-section)\n", encoding="utf-8")
    p = build(root, tmp_path / "site")
    assert p.returncode != 0 and "no-such-section" in p.stderr, p.stderr[-2000:]


def test_a_broken_api_reference_fails_the_build(tmp_path):
    root = copy_of_the_site(tmp_path)
    page = root / "docs" / "api.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n::: d3dkmddi_py.no_such_module\n", encoding="utf-8")
    p = build(root, tmp_path / "site")
    assert p.returncode != 0 and "no_such_module" in p.stderr, p.stderr[-2000:]


def _slug(heading: str) -> str:
    """MkDocs' (Python-Markdown toc's) anchor of a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_every_link_of_the_readme_reaches_a_file_and_its_section():
    """The README is outside the site (GitHub shows it): its links to docs/ are checked here."""
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        path, _, anchor = link.partition("#")
        assert (REPO / path).is_file(), link
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (REPO / path).read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, link
