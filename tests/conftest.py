"""Shared fixtures.  Compiler-backed checks need cffi, a C compiler and libclang: a
missing one skips with the reason on a developer's machine and fails under CI."""
from __future__ import annotations

import os

import pytest

import d3dkmddi_py as kmd

ALL_TARGETS = [(abi, v) for abi in kmd.ABIS for v in kmd.InterfaceVersion]


def require(condition: bool, reason: str):
    """Skip with ``reason`` unless running under CI, where a missing tool is a failure."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"required under CI: {reason}")
    pytest.skip(reason)


def target_id(param) -> str:
    abi, version = param
    return f"{abi}-{version.name}"


@pytest.fixture(params=ALL_TARGETS, ids=[target_id(p) for p in ALL_TARGETS])
def any_target(request):
    return kmd.target(*request.param)


# ---- comparison counts, printed at the end of the run (the note reports them)
COMPARISONS: dict = {}


def count(check: str, abi: str, version, n: int) -> None:
    key = (check, abi, getattr(version, "name", str(version)))
    COMPARISONS[key] = COMPARISONS.get(key, 0) + n


def pytest_sessionfinish(session):
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # a pytest-xdist worker: its counts go to the controller, which prints them
        output["comparisons"] = [[*key, n] for key, n in COMPARISONS.items()]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):  # pytest-xdist: a worker finished
    for check, abi, version, n in getattr(node, "workeroutput", {}).get("comparisons", ()):
        count(check, abi, version, n)


def pytest_terminal_summary(terminalreporter):
    if not COMPARISONS:
        return
    terminalreporter.section("compiler comparisons (check, abi: per-version counts)")
    by_check: dict = {}
    for (check, abi, version), n in sorted(COMPARISONS.items(), key=lambda kv: kmd.InterfaceVersion[kv[0][2]]):
        by_check.setdefault((check, abi), []).append((version, n))
    for (check, abi), rows in sorted(by_check.items()):
        total = sum(n for _, n in rows)
        detail = ", ".join(f"{v}={n}" for v, n in rows)
        terminalreporter.write_line(f"{check} {abi}: {total} comparisons over {len(rows)} versions ({detail})")
