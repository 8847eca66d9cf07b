"""The Dask recipe for a folder of traces: one allocations table, each trace's rows as the command
writes them, on the synchronous and the process scheduler."""
from __future__ import annotations

import json

import pytest

from d3dkmddi_py.errors import EtwInputError

from ..conftest import require
from tests.etw.etl_hard import hard_trace
from tests.etw.etl_twin import sample_items, twin
from tests.etw.helpers import run

try:
    import dask
    import dask.dataframe  # noqa: F401
    from d3dkmddi_py.recipes.dask_etw import trace_allocations, trace_findings, trace_table
except ImportError:  # the test extra installs dask[dataframe]; under CI its absence fails
    dask = None


@pytest.fixture
def folder(tmp_path):
    require(dask is not None, "dask[dataframe] (the dask extra)")
    etl, xml = twin(sample_items())
    traces = {"a.etl": etl, "b.xml": xml.encode("ascii"), "c.etl": hard_trace(3, n=200)}
    for name, data in traces.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path, traces


def command_rows(path, tmp_path, table: str) -> list:
    out = tmp_path / f"tables-{path.name}"
    run([str(path), "--format", "jsonl", "-o", str(out)])
    return [json.loads(line) for line in (out / f"{table}.jsonl").read_text().splitlines()]


def test_one_table_of_every_trace_as_the_command_writes_it(folder, tmp_path):
    path, traces = folder
    table = trace_allocations(path)
    assert table.npartitions == 3
    with dask.config.set(scheduler="synchronous"):
        frame = table.compute()
    for name in traces:
        part = frame[frame.file == name].drop(columns="file")
        rows = command_rows(path / name, tmp_path, "allocations")
        assert len(part) == len(rows) > 0
        for got, want in zip(part.to_dict("records"), rows):
            assert {k: _plain(v) for k, v in got.items()} == {k: int(v, 16) if isinstance(v, str) and
                                                              v.startswith("0x") else v for k, v in want.items()}
    # the twins: one trace as .etl and as XML
    a, b = (frame[frame.file == n].drop(columns="file").reset_index(drop=True) for n in ("a.etl", "b.xml"))
    assert a.equals(b)


def test_every_table_of_the_catalog_is_a_frame_as_the_command_writes_it(folder, tmp_path):
    """The tables the recipe knows are the registry's: placements (an adapter only a lookup finds, an
    optional pointer) and residency as well as allocations."""
    from d3dkmddi_py.etw.outputs.tables import table_names

    path, _traces = folder
    for table in table_names():
        frame = trace_table(str(path / "b.xml"), table)
        rows = command_rows(path / "b.xml", tmp_path, table)
        assert len(frame) == len(rows), table
        for got, want in zip(frame.drop(columns="file").to_dict("records"), rows):
            assert {k: _plain(v) for k, v in got.items()} == {k: int(v, 16) if isinstance(v, str) and
                                                              v.startswith("0x") and " " not in v else v
                                                              for k, v in want.items()}
    assert str(trace_table(str(path / "b.xml"), "placements").adapter.dtype) == "UInt64"


def _plain(v):
    import pandas as pd

    if v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):  # the time: the text the command writes
        assert str(v.tz) == "UTC"
        return v.strftime("%Y-%m-%dT%H:%M:%S.") + f"{v.value % 10 ** 9:09d}Z"
    return v.item() if hasattr(v, "item") else v


def test_the_process_scheduler_gives_the_same_table(folder):
    path, _traces = folder
    with dask.config.set(scheduler="synchronous"):
        here = trace_findings(path).compute()
    there = trace_findings(path).compute(scheduler="processes", num_workers=2)
    assert len(here) > 10 and here.reset_index(drop=True).equals(there.reset_index(drop=True))


def test_a_folder_of_etl_and_xml_traces_loses_no_trace(folder, tmp_path):
    """The default read *.etl only: a folder of an .etl and a tracerpt XML trace gave 41 of 47 allocations and
    said nothing.  Every file is read now, told apart by content as the command does."""
    path, traces = folder
    with dask.config.set(scheduler="synchronous"):
        frame = trace_allocations(path).compute()
    assert sorted(set(frame.file)) == sorted(traces)
    assert len(frame) == sum(len(command_rows(path / name, tmp_path, "allocations")) for name in traces)


def test_a_stray_file_is_refused_naming_it_before_any_task(folder):
    path, _traces = folder
    (path / "notes.txt").write_text("not a trace")
    with pytest.raises(EtwInputError, match=r"notes.txt is neither an .etl file nor XML; move it out of the folder "
                                            r"or narrow the pattern \(pattern='\*' matched it\)"):
        trace_allocations(path)
    assert trace_findings(path, pattern="*.etl").npartitions == 2
    (path / "zzz.etl").write_bytes(b"\x00" * 100)
    with pytest.raises(EtwInputError, match="zzz.etl is neither an .etl file nor XML"):
        trace_allocations(path, pattern="*.etl")
    with pytest.raises(EtwInputError, match="no file matches"):
        trace_allocations(path, pattern="*.none")
