"""NumPy and the optional libraries, imported once for the whole package under one lock.

Sixteen threads that reach a first ``import numpy`` at once saw "partially initialized module 'numpy'"
7 to 15 times in 16 (the import system lets a thread see a module another thread is still executing).
Every NumPy path of the package asks here instead of importing it itself.
"""
from __future__ import annotations

import sys
import threading

_lock = threading.Lock()
_module = None  # NumPy once imported; False when it cannot be


def numpy_module():
    """The numpy module, or None when it is not installed; imported at most once, under the lock."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                try:
                    import numpy
                except ImportError:
                    _module = False
                else:
                    _module = numpy
    return _module or None


def loaded_numpy():
    """NumPy when it is already imported (by the package or by the caller), without importing it; never a
    module that another thread is still executing (``sys.modules`` holds it from the start of its import)."""
    if _module:
        return _module
    module = sys.modules.get("numpy")
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def install_hint(extra: str) -> str:
    """The one spelling of every install hint: the package with the extra that brings what is missing."""
    return f"pip install 'd3dkmddi_py[{extra}]'"


def optional_module(module: str, extra: str, what: str):
    """An optional library (``pyarrow.parquet``, ``pandas``, ``dask``...) for ``what``, imported under the
    same lock (first imports from many threads at once race as NumPy's do); ImportError naming the
    extra to install when it is missing."""
    found = sys.modules.get(module)
    if found is not None and not getattr(getattr(found, "__spec__", None), "_initializing", False):
        return found
    with _lock:
        try:
            return __import__(module, fromlist=["_"])
        except ImportError as exc:
            from .errors import MissingModule

            top = module.split(".")[0]
            missing = (exc.name or top).split(".")[0]
            if missing not in (top, module):  # the library is there, one it imports is not (matplotlib's NumPy)
                raise MissingModule(f"{what} needs {top}, which needs {missing}, which is not installed; "
                                    f"{install_hint('bulk' if missing == 'numpy' else extra)}") from None
            raise MissingModule(f"{what} needs {top}, which is not installed; {install_hint(extra)}") from None


def pyarrow_installed() -> bool:
    """Whether pyarrow can be imported, without importing it."""
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def parquet_unavailable(fmt: str) -> str | None:
    """For a command's ``--format``: why it cannot write Parquet (pyarrow is not installed), else None.
    Checked before any work, so the run ends in one line and leaves no file."""
    if fmt == "parquet" and not pyarrow_installed():
        return (f"--format parquet needs pyarrow, which is not installed; {install_hint('arrow')} (or use --format "
                f"csv or jsonl)")
    return None
