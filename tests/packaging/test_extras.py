"""Issue 31, "packaging that keeps building" and "every extra in one table": the licence is an SPDX expression
with its file, `all` is every runtime extra, and the README's table names each extra once."""
from __future__ import annotations

import re
import tomllib

from tests.cli.readme import README, REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = PROJECT["optional-dependencies"]
NOT_IN_ALL = {"all", "docs", "test"}  # the documentation's and the tests' tools are no runtime feature


def test_the_license_is_an_spdx_expression_with_its_file():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").is_file()


def test_the_all_extra_is_every_runtime_extra():
    wanted = {req for name, reqs in EXTRAS.items() if name not in NOT_IN_ALL for req in reqs}
    assert set(EXTRAS["all"]) == wanted


def test_the_readme_table_names_every_extra_once():
    rows = re.findall(r"^\| `(\w+)` \| ", README.read_text(encoding="utf-8"), flags=re.M)
    extras = [r for r in rows if r in EXTRAS]
    assert sorted(extras) == sorted(EXTRAS)
