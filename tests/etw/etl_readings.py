"""Test-only: what a reader of an .etl file says, as one value to compare: the tables by either path
(the column-wise or the event-by-event one), or the error's text."""
from __future__ import annotations

import io

from d3dkmddi_py.errors import EtwInputError, OutputError
from d3dkmddi_py.etw import read
from d3dkmddi_py.etw.model.tracker import Tracker
from d3dkmddi_py.etw.outputs.tables import TraceTables


def answer(reading):
    """``reading()``, or the text of the EtwInputError it raises."""
    try:
        return reading()
    except EtwInputError as exc:
        return str(exc)


def tables(data: bytes, folder, columns: bool, fmt: str = "csv", abi: str = "x64", **options) -> dict:
    """Every table's bytes by name, or {"error": its text}, from one path of the reader (``options``: TraceTables')."""
    out = folder / f"out-{columns}-{fmt}"
    reader = read(io.BytesIO(data), name="trace.etl")
    t = TraceTables(fmt, out, Tracker((abi, "WDDM3_2")), **options)
    try:
        with t:
            t.read(reader, columns=columns)
            reader.check_found()
    except (EtwInputError, OutputError) as exc:
        return {"error": str(exc)}
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def column_runs(monkeypatch) -> list:
    """The length of each run of batched rows (allocations) the tables go on to read as columns, as they come: a
    test that holds the column-wise path to the Events' shows it ran."""
    from d3dkmddi_py.etw.outputs import tables as tables_module

    runs = []
    real = tables_module._rows_of_batch
    monkeypatch.setattr(tables_module, "_rows_of_batch", lambda *a: runs.append(len(a[6])) or real(*a))
    return runs
