"""Fixtures of the compiler oracles."""
from __future__ import annotations

import pytest

from tests.conftest import require


@pytest.fixture(scope="session")
def cindex():
    """clang.cindex (libclang): skipped with the reason on a developer machine without it, a failure under CI."""
    try:
        import clang.cindex as ci
    except ImportError:
        require(False, "libclang is not installed: pip install -e '.[test]'")
    return ci
