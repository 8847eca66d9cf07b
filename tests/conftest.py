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
