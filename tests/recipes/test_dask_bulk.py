"""The Dask recipe on Dask's local synchronous scheduler: a folder of blobs into one table."""
from __future__ import annotations

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import BulkInputError, decode_array
from d3dkmddi_py.bulk.findings import findings

from ..conftest import require

try:
    import dask
    import dask.dataframe  # noqa: F401
    from d3dkmddi_py.recipes.dask_decode import decode_folder, folder_findings
except ImportError:  # the test extra installs dask[dataframe]; under CI its absence fails
    dask = None

CLS = kmd.target("x64", "WDDM2_7").DXGK_ALLOCATIONINFO
SIZES = {"a.bin": 7, "b.bin": 0, "c.bin": 12}


@pytest.fixture
def folder(tmp_path):
    require(dask is not None, "dask[dataframe] (the dask extra)")
    rng = np.random.default_rng(11)
    blobs = {}
    for name, n in SIZES.items():
        raw = rng.integers(0, 256, CLS._layout_.size * n, dtype=np.uint8)
        raw[rng.random(raw.size) < 0.6] = 0
        blobs[name] = raw.tobytes()
        (tmp_path / name).write_bytes(blobs[name])
    (tmp_path / "notes.txt").write_text("not a blob")
    return tmp_path, blobs


def test_decode_folder_is_every_record_of_every_file(folder):
    path, blobs = folder
    table = decode_folder(path, "DXGK_ALLOCATIONINFO", target=("x64", "WDDM2_7"))
    assert table.npartitions == 3
    with dask.config.set(scheduler="synchronous"):
        frame = table.compute()
    assert len(frame) == sum(SIZES.values())
    assert list(frame.columns[:2]) == ["file", "record"] and list(frame.columns[-3:]) == ["errors", "warnings", "rules"]
    for name, blob in blobs.items():
        part = frame[frame.file == name]
        columns = decode_array(CLS, blob)
        assert part.record.tolist() == list(range(columns.count))
        for leaf in kmd.leaves(CLS):
            assert part[leaf.path].tolist() == columns[leaf.path].tolist(), (name, leaf.path)
        table_ = findings(columns)
        expected_errors = [0] * columns.count
        for record, _rule, severity, _field, _value in table_.rows():
            expected_errors[record] += severity == "error"
        assert part.errors.tolist() == expected_errors
    assert frame.errors.sum() > 0  # random words break documented rules


def test_folder_findings_match_the_per_file_findings(folder):
    path, blobs = folder
    with dask.config.set(scheduler="synchronous"):
        frame = folder_findings(path, CLS).compute()
    expected = []
    for name in sorted(blobs):
        for row in findings(decode_array(CLS, blobs[name])).rows():
            expected.append((name, *row))
    assert [tuple(r) for r in frame.itertuples(index=False)] == expected


def test_a_bad_file_fails_before_any_task(folder):
    path, _blobs = folder
    (path / "d.bin").write_bytes(bytes(CLS._layout_.size + 3))
    with pytest.raises(BulkInputError, match="left over"):
        decode_folder(path, CLS)
    with pytest.raises(ValueError, match="no file matches"):
        decode_folder(path, CLS, pattern="*.dmp")


def test_tasks_carry_names_not_classes(folder):
    """Process and cluster schedulers pickle tasks: the graph must hold the C name and target only."""
    import pickle

    path, _blobs = folder
    table = decode_folder(path, CLS, validate=False)
    graph = dict(table.__dask_graph__())
    pickle.dumps(graph)  # would fail on a class built at run time
    with dask.config.set(scheduler="synchronous"):
        assert len(table.compute()) == sum(SIZES.values())


def test_the_process_scheduler_runs_the_recipe_with_an_adapter(folder):
    """Workers are other processes: the graph (adapter descriptors included) is pickled to them."""
    path, _blobs = folder
    adapter = kmd.Adapter.build(kmd.SegmentFlag.CpuVisible, {"Flags": kmd.SegmentFlag.Aperture, "Size": 1 << 20},
                                abi="x64", interface_version="WDDM2_7")
    table = decode_folder(path, CLS, pattern="[ac].bin", adapter=adapter)
    found = folder_findings(path, CLS, pattern="[ac].bin", adapter=adapter)
    frame, found_frame = dask.compute(table, found, scheduler="processes", num_workers=2)
    with dask.config.set(scheduler="synchronous"):
        expected, expected_found = table.compute(), found.compute()
    assert len(frame) == SIZES["a.bin"] + SIZES["c.bin"] and set(frame.file) == {"a.bin", "c.bin"}
    assert frame.reset_index(drop=True).equals(expected.reset_index(drop=True))
    assert found_frame.reset_index(drop=True).equals(expected_found.reset_index(drop=True))
    assert any(rule.startswith("ALLOC") for rule in found_frame.rule_id)  # the adapter's rules ran in the workers
