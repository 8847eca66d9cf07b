"""Recipe: decode and validate a folder of blobs into one Dask table (the ``dask`` extra).

``decode_array`` and ``findings`` are pure functions of a byte range, so each file is one
``dask.delayed`` task that Dask runs wherever it likes (threads, processes, a cluster); no
process pool of our own.  A task holds only picklable values: the C name, the target pair and
an Adapter (its descriptors pickle as (abi, version, C name, bytes)).  Every file is checked
(exists, whole records) before the graph is built, so a bad file fails the call, not a worker
an hour later.

    import dask
    from d3dkmddi_py.recipes.dask_decode import decode_folder
    table = decode_folder("dumps/", "DXGK_ALLOCATIONINFO", target=("x64", "WDDM2_7"))
    errors = table[table.errors > 0].compute(scheduler="processes")   # threads, processes or a cluster

Rows: ``file``, ``record`` (number within the file), every leaf of the type, then (with
``validate=True``) ``errors`` and ``warnings`` (finding counts) and ``rules`` (the rule ids,
space separated).  ``folder_findings`` gives the findings themselves, one row each.
"""
from __future__ import annotations

import os

from .._numpy import optional_module as _need
from ..bulk import decode_array
from ..bulk._source import Source, check_span, struct_layout
from ..bulk.findings import FIELDS, findings
from ..errors import InvalidArgument, flag_argument
from ..render import RULE_KEY
from ._files import folder_files

FINDING_COLUMNS = ("file", *FIELDS)  # the findings table's columns (bulk.findings), after the file


def blob_files(folder, pattern: str = "*.bin") -> list:
    """The files of ``folder`` matching ``pattern``, sorted (the table's row order)."""
    return folder_files(folder, pattern, "blobs", InvalidArgument)


def _key(cls) -> tuple:
    """What a task needs to find the class again: C name and target.  Classes pickle by reference
    with pickle, but Dask sends tasks with cloudpickle, which would copy a class built at run time
    by value (and fails on ctypes descriptors); a worker looks the class up by name instead."""
    return cls.c_name, cls.target


def decode_file(path: str, type, *, target=None, offset: int = 0, validate: bool = True, adapter=None):
    """One file as a pandas DataFrame: file, record, every leaf, then the finding summary."""
    pd = _need("pandas", "dask", "decode_file")
    validate = flag_argument(validate, "validate")
    columns = decode_array(type, path, target=target, offset=offset)
    data = {"file": pd.Series([os.path.basename(path)] * columns.count, dtype=object),
            "record": pd.Series(range(columns.count), dtype="int64")}
    data.update(columns.to_pandas().reset_index(drop=True).items())
    if validate:
        table = findings(columns, adapter=adapter)
        errors, warnings, rules = [0] * columns.count, [0] * columns.count, [[] for _ in range(columns.count)]
        for record, rule_id, severity, _field, _value in table.rows():
            (errors if severity == "error" else warnings)[record] += 1
            rules[record].append(rule_id)
        data["errors"] = pd.Series(errors, dtype="int32")
        data["warnings"] = pd.Series(warnings, dtype="int32")
        data["rules"] = pd.Series([" ".join(r) for r in rules], dtype=object)
    return pd.DataFrame(data)


def file_findings(path: str, type, *, target=None, offset: int = 0, adapter=None):
    """The findings of one file as a pandas DataFrame (``FINDING_COLUMNS``)."""
    pd = _need("pandas", "dask", "file_findings")
    table = findings(decode_array(type, path, target=target, offset=offset), adapter=adapter)
    frame = table.to_pandas() if len(table) else pd.DataFrame({c: [] for c in FINDING_COLUMNS[1:]})
    frame = frame.astype({"record": "int64", "value": "uint64", RULE_KEY: object, "severity": object, "field": object})
    frame.insert(0, "file", pd.Series([os.path.basename(path)] * len(frame), dtype=object))
    return frame


def _checked(folder, type, target, pattern, offset):
    cls = struct_layout(type, target)
    files = blob_files(folder, pattern)
    for path in files:  # the same checks decode_array makes, for every file, before any task exists
        check_span(cls, Source(path).size, offset, None)
    return cls, files


def decode_folder(folder, type, *, target=None, pattern: str = "*.bin", offset: int = 0, validate: bool = True,
                  adapter=None):
    """Every record of every matching file as one lazy ``dask.dataframe.DataFrame``, one partition per file."""
    dask = _need("dask", "dask", "decode_folder")
    dd = _need("dask.dataframe", "dask", "decode_folder")
    cls, files = _checked(folder, type, target, pattern, offset)
    name, where = _key(cls)
    meta = decode_file(files[0], name, target=where, offset=offset, validate=validate, adapter=adapter).iloc[:0]
    parts = [dask.delayed(decode_file)(path, name, target=where, offset=offset, validate=validate, adapter=adapter)
             for path in files]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def folder_findings(folder, type, *, target=None, pattern: str = "*.bin", offset: int = 0, adapter=None):
    """Every finding of every matching file as one lazy ``dask.dataframe.DataFrame``."""
    dask = _need("dask", "dask", "folder_findings")
    dd = _need("dask.dataframe", "dask", "folder_findings")
    cls, files = _checked(folder, type, target, pattern, offset)
    name, where = _key(cls)
    meta = file_findings(files[0], name, target=where, offset=offset, adapter=adapter).iloc[:0]
    parts = [dask.delayed(file_findings)(path, name, target=where, offset=offset, adapter=adapter) for path in files]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)
