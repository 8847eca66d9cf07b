"""Start-up (issue 16, "Small calls"): a one-word decode loads no module it does not need, and the
record classes built without ``dataclasses`` are still dataclasses to the standard library.
The time itself is measured by tools/bench.py (``--only command``), never by a test."""
from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import _records
from d3dkmddi_py.layout import Leaf
from d3dkmddi_py.semantics import Finding
from tests.packaging.import_graph import fresh_interpreter

# Each costs milliseconds at start-up and a one-word decode has no use for it.
NOT_AT_START_UP = ("dataclasses", "inspect", "typing", "difflib", "numpy", "ctypes", "shutil")


def test_a_one_word_decode_loads_no_costly_module_it_does_not_use():
    probe = ("import sys, json\nfrom d3dkmddi_py import cli\n"
             "out, err, status = cli.run(['decode', 'DXGK_SEGMENTFLAGS', '0x485'])\n"
             f"print(json.dumps([status, [m for m in {NOT_AT_START_UP!r} if m in sys.modules]]))\n")
    assert json.loads(fresh_interpreter(probe)) == [0, []]


def test_a_wrong_name_still_gets_its_suggestions_without_difflib_at_start_up():
    with pytest.raises(kmd.UnsupportedTarget, match="did you mean WDDM2_0"):
        kmd.target("x64", "WDDM20")


def _finding():
    return kmd.check(0x485, "DXGK_SEGMENTFLAGS")[0]


def test_records_are_dataclasses_to_the_standard_library():
    finding = _finding()
    assert isinstance(finding, Finding) and dataclasses.is_dataclass(finding)
    names = [f.name for f in dataclasses.fields(finding)]
    assert names == [f.name for f in Finding._record_fields_] and "rule_id" in names
    assert dataclasses.asdict(finding)["rule_id"] == finding.rule_id
    moved = dataclasses.replace(finding, field="elsewhere")
    assert moved.field == "elsewhere" and moved != finding and moved.rule_id == finding.rule_id


def test_records_are_frozen_hashable_comparable_and_pickle():
    finding = _finding()
    with pytest.raises(AttributeError):
        finding.field = "x"
    assert isinstance(_records.FrozenInstanceError("x"), AttributeError)
    again = pickle.loads(pickle.dumps(finding))
    assert again == finding and hash(again) == hash(finding) and repr(again) == repr(finding)


def test_a_field_that_does_not_compare_is_left_out_of_equality_and_hash():
    """Leaf.since (the version that introduced a leaf) is compare=False, as it was as a dataclass."""
    leaf = kmd.leaves(kmd.target("x64").DXGK_ALLOCATIONINFO)[0]
    other = _records.replace(leaf, since="SOMETHING_ELSE")
    assert isinstance(leaf, Leaf)
    assert other == leaf and hash(other) == hash(leaf) and other.since != leaf.since


def test_record_construction_errors_name_the_argument():
    with pytest.raises(TypeError, match="missing required argument"):
        Finding()
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        Finding(**dataclasses.asdict(_finding()), nope=1)
    with pytest.raises(TypeError, match="has no field 'nope'"):
        _records.replace(_finding(), nope=1)
