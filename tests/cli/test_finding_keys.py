"""Issue 23, "one key name": a finding's rule id was "rule" in validate's tables and "rule_id" in every JSON
object of a record.  It is ``render.RULE_KEY``, "rule_id", in each output the command and the library write
for decode and validate: --json, --format csv|jsonl|parquet, record_json, finding_json, column_findings and
the Dask recipe's findings table."""
from __future__ import annotations

import csv
import io
import json

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli, render
from d3dkmddi_py.bulk import column_findings, decode_array
from d3dkmddi_py.samples import ALLOCATIONS_PATH, sample_adapter

from tests.conftest import require

try:
    import pyarrow.parquet as pq
except ImportError:  # the test extra installs it; under CI its absence fails
    pq = None

COMMON = ["DXGK_ALLOCATIONINFO", "--file", str(ALLOCATIONS_PATH), "--ddi", "WDDM3_0", "--count", "all",
          "--adapter", "sample"]


def finding_objects(value) -> list:
    """Every object in a parsed JSON value that holds a finding (it has a severity)."""
    if isinstance(value, dict):
        here = [value] if "severity" in value else []
        return here + [f for v in value.values() for f in finding_objects(v)]
    if isinstance(value, list):
        return [f for v in value for f in finding_objects(v)]
    return []


def command(argv: list) -> str:
    out = io.StringIO()
    assert cli.execute(argv, out, io.StringIO()) == (1 if argv[0] == "validate" else 0)  # the sample has errors
    return out.getvalue()


def test_the_key_is_rule_id():
    assert render.RULE_KEY == "rule_id" and render.FINDING_CELLS[0] == "rule_id"


@pytest.mark.parametrize("argv", [["validate", *COMMON, "--json"], ["decode", *COMMON, "--json"]],
                         ids=["validate", "decode"])
def test_json_lines_name_the_rule_rule_id(argv):
    objects = [f for line in command(argv).splitlines() for f in finding_objects(json.loads(line))]
    assert len(objects) == 25 and all(list(f)[0] == "rule_id" and "rule" not in f for f in objects)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_validate_tables_name_the_rule_rule_id(fmt):
    text = command(["validate", *COMMON, "--format", fmt])
    rows = list(csv.DictReader(io.StringIO(text))) if fmt == "csv" else [json.loads(x) for x in text.splitlines()]
    assert len(rows) == 25 and all(list(row) == ["record", "offset", "rule_id", "severity", "field", "message"]
                                   for row in rows)


def test_validate_parquet_names_the_rule_rule_id(tmp_path):
    require(pq is not None, "pyarrow (the test extra)")
    command(["validate", *COMMON, "--format", "parquet", "-o", str(tmp_path / "f.parquet")])
    assert pq.read_table(tmp_path / "f.parquet").column_names[2] == "rule_id"


def test_python_findings_name_the_rule_rule_id():
    records = kmd.decode("DXGK_ALLOCATIONINFO", ALLOCATIONS_PATH, count="all", target=("x64", "WDDM3_0"))
    adapter = sample_adapter()
    found = [(r, kmd.semantics.check(r, adapter=adapter)) for r in records]
    objects = [f for r, fs in found for f in finding_objects(kmd.record_json(r, findings=fs))]
    assert len(objects) == 25 and all(list(f)[0] == "rule_id" for f in objects)
    assert all(list(render.finding_json(f))[0] == "rule_id" for _r, fs in found for f in fs)
    table = column_findings(decode_array("DXGK_ALLOCATIONINFO", ALLOCATIONS_PATH, target=("x64", "WDDM3_0")),
                            adapter=adapter)
    require(_installed("pandas"), "pandas (the test extra)")
    assert list(table.to_pandas().columns) == ["record", "rule_id", "severity", "field", "value"]


def test_the_dask_recipes_findings_name_the_rule_rule_id():
    from d3dkmddi_py.recipes.dask_decode import FINDING_COLUMNS

    assert FINDING_COLUMNS == ("file", "record", "rule_id", "severity", "field", "value")


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
