"""One sink choice (issue 23, "One owner per output"): the command's ``_sink`` repeated ``report``'s choice of
a sink; both now call ``pipeline.sink_for``."""
from __future__ import annotations

import importlib
import io

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli, pipeline
from d3dkmddi_py.samples import ALLOCATIONS_PATH

run_module = importlib.import_module("d3dkmddi_py.pipeline.run")  # the attribute "run" is the function

CHOICES = {("text", False): pipeline.TextDecode, ("json", False): pipeline.JsonDecode,
           ("text", True): pipeline.TextValidate, ("json", True): pipeline.JsonValidate,
           ("csv", False): pipeline.ColumnRows, ("jsonl", False): pipeline.ColumnRows,
           ("csv", True): pipeline.FindingRows, ("jsonl", True): pipeline.FindingRows}


@pytest.mark.parametrize("fmt, validate", list(CHOICES))
def test_sink_for_each_format(fmt, validate):
    assert type(pipeline.sink_for(fmt, io.StringIO(), validate=validate)) is CHOICES[(fmt, validate)]


def test_sink_for_an_unknown_format_is_refused_by_the_table_writers():
    with pytest.raises(ValueError, match=r"unknown table format 'xml'; formats: csv, jsonl, parquet"):
        pipeline.sink_for("xml", io.StringIO(), validate=True)


def test_the_command_and_report_choose_their_sink_by_one_function(monkeypatch):
    chosen = []
    real = run_module.sink_for

    def spy(fmt, out, **options):
        chosen.append((fmt, options["validate"], bool(options.get("nonzero"))))
        return real(fmt, out, **options)

    monkeypatch.setattr(run_module, "sink_for", spy)  # report's
    monkeypatch.setattr(pipeline, "sink_for", spy)  # the command's
    common = ["DXGK_ALLOCATIONINFO", "--file", str(ALLOCATIONS_PATH), "--ddi", "WDDM3_0", "--count", "2"]
    for argv, want in ((["validate", *common, "--format", "csv"], ("csv", True, False)),
                       (["decode", *common, "--json"], ("json", False, False)),
                       (["decode", *common, "--nonzero"], ("text", False, True))):
        cli.execute(argv, io.StringIO(), io.StringIO())
        assert chosen.pop() == want
    text = kmd.report("DXGK_ALLOCATIONINFO", path=ALLOCATIONS_PATH, target=("x64", "WDDM3_0"), count=2,
                      validate=True, fmt="json")
    assert chosen == [("json", True, False)] and text.count("\n") == 2
