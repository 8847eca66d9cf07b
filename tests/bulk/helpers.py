"""Shared pieces of the bulk tests: every (target, struct) pair, and the per-record oracle."""
from __future__ import annotations

import d3dkmddi_py as kmd
from d3dkmddi_py._classes import _read


def struct_classes(t):
    """The struct and union classes of a target, once each (typedef names, not tags or aliases)."""
    return [cls for name, cls in t.types.items() if hasattr(cls, "_leaves_") and name == cls._c_name_]


ALL_CLASSES = [cls for abi in kmd.ABIS for v in kmd.InterfaceVersion for cls in struct_classes(kmd.target(abi, v))]

# One class per distinct layout (the same leaves at many versions decode the same way).
_distinct = {}
for _cls in ALL_CLASSES:
    _distinct.setdefault((_cls._c_name_, _cls._layout_.size, _cls._leaves_), _cls)
DISTINCT_CLASSES = list(_distinct.values())


def class_id(cls) -> str:
    abi, version = cls._target_
    return f"{cls._c_name_}-{abi}-{kmd.InterfaceVersion(version).name}"


def per_record(cls, data: bytes, offset: int, count: int) -> dict:
    """The oracle: path -> list of values read record by record through the ctypes class."""
    size = cls._layout_.size
    objs = [cls.from_buffer_copy(data, offset + i * size) for i in range(count)]
    return {leaf.path: [_read(o, leaf.path) for o in objs] for leaf in kmd.leaves(cls)}


def as_lists(columns) -> dict:
    return {path: [int(v) for v in values] for path, values in columns.items()}


def without_numpy(monkeypatch):
    """Make ``import numpy`` fail, as on a machine without NumPy (and forget the package's own import of it)."""
    import sys

    from d3dkmddi_py import _numpy, bulk

    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.setattr(_numpy, "_module", False)
    monkeypatch.setattr(bulk, "_warned", False)


def failures_from_16_threads(work) -> list:
    """Run ``work(i)`` in 16 threads let go at once (first calls race on every cache); the failures
    each returns, together."""
    import threading

    failures, start = [], threading.Barrier(16)

    def run(i):
        start.wait()
        failures.extend(work(i))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures
