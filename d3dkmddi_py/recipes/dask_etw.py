"""Recipe: a folder of GPU traces (.etl or their XML) into one Dask table of allocations (the ``dask`` extra).

Every file of the folder is read (``pattern="*"``), each told apart by its content as the command tells
them apart, whatever its name: an .etl file or XML.  A file that is neither is refused, naming it, before
any task exists (give a ``pattern`` that leaves it out); a trace is never skipped without a word.

Each trace is one ``dask.delayed`` task: it is read as ``d3dkmddi etw FILE --format ...`` reads it
(an .etl file column-wise), and its ``allocations`` table, the same columns as the command writes,
becomes a pandas DataFrame with a ``file`` column in front.  A task holds only picklable values (a
path and the target's names), so the threaded, the process and a distributed scheduler all run it.

    from d3dkmddi_py.recipes.dask_etw import trace_allocations
    table = trace_allocations("traces/", target=("x64", "WDDM3_1"))
    busy = table.groupby("file").errors.sum().compute(scheduler="processes")

``trace_findings`` gives the findings tables the same way.
"""
from __future__ import annotations

import os

from .._numpy import optional_module as _need
from ..errors import EtwInputError, choice_argument
from ..etw.readers import etlfile
from ..etw.model.tracker import Tracker
from ..etw.outputs.tables import TraceTables, table_names
from ..etw.readers.xmlreader import read
from ..names import parse_target
from ..outfile import safe_name
from ._files import folder_files


class _Frames:
    """A table sink that keeps its chunks, to make one pandas DataFrame."""

    def __init__(self):
        self.chunks = []

    def write(self, table) -> None:
        self.chunks.append(table)

    def close(self) -> None:
        pass

    def restart(self) -> None:
        self.chunks.clear()

    def frame(self, path: str):
        pd = _need("pandas", "dask", "trace_allocations")
        first = self.chunks[0]
        columns = {"file": pd.Series([os.path.basename(path)] * sum(len(c.columns[0]) for c in self.chunks),
                                     dtype=object)}
        for i, (name, kind) in enumerate(zip(first.names, first.kinds)):
            columns[name] = _series(pd, [c.columns[i] for c in self.chunks], kind)
        return pd.DataFrame(columns)


_NULLABLE = {"opt": ("IntegerArray", "int64"), "ohex": ("IntegerArray", "uint64"),
             "handle": ("IntegerArray", "uint64"), "shex": ("IntegerArray", "int64"),
             "float": ("FloatingArray", "float64"),
             "bool": ("BooleanArray", "bool")}  # pandas' masked array and its values' type (exact: no float on the way)


def _series(pd, parts: list, kind: str):
    """A column of a table's chunks, typed as the kind says (a cell without a value is NA, a time NaT)."""
    np = _need("numpy", "dask", "trace_allocations")
    if kind == "text":
        return pd.Series([v for p in parts for v in p], dtype=object)
    if kind in _NULLABLE:
        values = [v for p in parts for v in (p.tolist() if hasattr(p, "tolist") else p)]
        array, dtype = _NULLABLE[kind]
        mask = np.array([v is None for v in values], dtype=bool)
        data = np.array([0 if v is None else v for v in values], dtype=dtype)
        return pd.Series(getattr(pd.arrays, array)(data, mask))
    if kind == "time":  # nanoseconds since 1970 UTC; None is NaT
        values = [v for p in parts for v in (p.tolist() if hasattr(p, "tolist") else p)]
        stamps = np.array([np.iinfo(np.int64).min if v is None else v for v in values], dtype=np.int64)
        return pd.Series(stamps.view("datetime64[ns]")).dt.tz_localize("UTC")
    arrays = [p if hasattr(p, "dtype") else np.array(p, dtype=np.uint64 if kind == "hex" else np.int64)
              for p in parts]
    return pd.Series(np.concatenate(arrays))


def _tables(path: str, target: tuple) -> dict:
    sinks = {name: _Frames() for name in table_names()}
    reader = read(path) if path is not None else None
    tables = TraceTables(None, None, Tracker(target), sinks=sinks)
    with tables:
        if reader is not None:
            tables.read(reader)
            reader.check_found()
    return sinks


def trace_table(path: str | None, table: str = "allocations", *, target=None):
    """One trace's table (``allocations``, ``segments``, ``findings`` or another of
    ``etw.tables.table_names()``) as a pandas DataFrame; ``path`` None: the table's columns without rows.
    ``target``: (abi, version) as the command's --abi and --ddi; default x64 at the newest version."""
    table = choice_argument(table, "table", table_names())
    return _tables(path, target)[table].frame(path or "")


def trace_files(folder, pattern: str = "*") -> list:
    """The traces of ``folder`` matching ``pattern`` (every file by default), sorted; each must be an .etl file
    or XML, by its content."""
    files = folder_files(folder, pattern, "traces", EtwInputError)
    for path in files:
        with open(path, "rb") as f:
            head = f.read(4096)
        if not etlfile.is_etl(head) and not head.lstrip(b"\xef\xbb\xbf \t\r\n\xff\xfe\x00").startswith(b"<"):
            raise EtwInputError(f"{safe_name(path)} is neither an .etl file nor XML; move it out of the folder or "
                                f"narrow the pattern (pattern={pattern!r} matched it)")
    return files


def _folder(folder, table: str, target, pattern: str):
    dask = _need("dask", "dask", "trace_allocations")
    dd = _need("dask.dataframe", "dask", "trace_allocations")
    files = trace_files(folder, pattern)
    target = parse_target(target)  # names travel to the workers, not classes
    meta = trace_table(None, table, target=target)
    parts = [dask.delayed(trace_table)(path, table, target=target) for path in files]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def trace_allocations(folder, *, target=None, pattern: str = "*"):
    """Every AdapterAllocation event of every matching trace: one lazy ``dask.dataframe.DataFrame``,
    one partition per trace, the columns of ``etw --format``'s allocations table after ``file``."""
    return _folder(folder, "allocations", target, pattern)


def trace_findings(folder, *, target=None, pattern: str = "*"):
    """Every finding of every matching trace, as ``trace_allocations`` (the findings table's columns)."""
    return _folder(folder, "findings", target, pattern)
