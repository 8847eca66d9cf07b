"""Each statement names its source: every rule says where its sentence is (``Rule.source``), and a
finding whose sentence is no longer on the current page, or is a kit comment, says so wherever it is
printed: its message ends with the note, so the text, the JSON and the tables all carry it."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.semantics._rules import SourceKind
from d3dkmddi_py.semantics.checks import CHECKS, adapter_facts
from tests.semantics.cases import adapter, seg

REPO = Path(__file__).resolve().parents[2]
NOTED = sorted(r for r, rule in sem.RULES.items() if rule.source.kind is not SourceKind.PAGE)


def test_every_rule_names_its_source():
    for rule in sem.RULES.values():
        kind = rule.source.kind
        assert rule.page == rule.source.citation and rule.source.copy
        assert (rule.page == rule.source.where) == (kind is not SourceKind.EARLIER_PAGE)  # an earlier copy is named
        assert (kind is SourceKind.PAGE) == (rule.source.note == "")
        if kind is SourceKind.KIT:
            assert rule.source.where.startswith("d3dkmddi.h (WDK 10.0.26100), ")
        elif kind is SourceKind.TRACE_NOTES:  # a trace's rules (ETW.*): the notes beside the provider's manifest
            assert rule.rule_id.startswith("ETW.") and rule.source.copy.startswith("etw/")
            assert rule.page == f"shared/{rule.source.copy}"
        else:
            assert rule.page.startswith("https://learn.microsoft.com/windows-hardware/drivers/ddi/")
            assert rule.source.copy.startswith("docs/" if kind is SourceKind.PAGE else "seeds/")


def test_the_rules_that_rest_on_an_earlier_page_or_a_kit_comment():
    assert {r: sem.RULES[r].source.kind.value for r in NOTED} == {
        "SEGFLAGS.APPLICATIONTARGET_DEPRECATED": "kit header comment",
        "SEGFLAGS.HIBERNATE_ON_APERTURE": "earlier version of the page",
        "SEGFLAGS.PARTIAL_ON_APERTURE": "earlier version of the page",
        **dict.fromkeys(("ETW.PAYLOAD_LONGER", "ETW.PAYLOAD_SHORTER", "ETW.NO_TEMPLATE", "ETW.BOOLEAN_NOT_0_OR_1",
                         "ETW.FIELD_UNREADABLE", "ETW.UNDECODED"), "notes on the DxgKrnl manifest and its traces")}


def _every_check():
    for name, build in CHECKS.items():
        for abi in kmd.ABIS:
            for version in kmd.InterfaceVersion:
                if name not in kmd.target(abi, version).types:
                    continue
                facts = adapter_facts(adapter(version.name, abi)) if name == "DXGK_ALLOCATIONINFO" else None
                yield from build(abi, int(version), facts)
                yield from build(abi, int(version), None)


def test_every_check_of_a_noted_rule_ends_its_message_with_the_note():
    seen = set()
    for check in _every_check():
        rule = sem.RULES[check.rule_id]
        note = rule.source.note
        if note:
            seen.add(check.rule_id)
            assert check.message.endswith(f" ({note})"), (check.rule_id, check.message)
        else:
            assert not check.message.endswith(("(earlier version of the page)", "(kit header comment)"))
    assert seen == {r for r in NOTED if not r.startswith("ETW.")}  # a trace's rules are the readers', no check's


def test_a_note_is_added_once_when_a_check_is_placed_inside_a_record():
    check = next(c for c in _every_check() if c.rule_id == "SEGFLAGS.PARTIAL_ON_APERTURE")
    inner = check.under("Flags.").under("segments[0].")
    assert inner.message == check.message and inner.message.count("(earlier version of the page)") == 1


WORD = seg("Aperture", "PreservedDuringStandby", "PartiallyPreservedDuringHibernate")  # PARTIAL_ON_APERTURE


def test_the_note_is_in_the_text_and_the_json():
    text = kmd.report("DXGK_SEGMENTFLAGS", WORD, target=("x64", "WDDM2_0"), validate=True)
    line = next(x for x in text.splitlines() if "SEGFLAGS.PARTIAL_ON_APERTURE" in x)
    assert line.endswith("(earlier version of the page)")
    obj = json.loads(kmd.report("DXGK_SEGMENTFLAGS", WORD, target=("x64", "WDDM2_0"), validate=True, fmt="json"))
    (finding,) = [f for f in obj["findings"] if f["rule_id"] == "SEGFLAGS.PARTIAL_ON_APERTURE"]
    assert finding["message"].endswith("(earlier version of the page)")
    assert finding["reference"]["sentence"] == sem.RULES["SEGFLAGS.PARTIAL_ON_APERTURE"].sentence
    assert "(earlier version of the page: the copy released 12/8/2017, seeds/004_514edaf6af042189.txt)" in \
        sem.explain(WORD, "DXGK_SEGMENTFLAGS").splitlines()[-1]
    assert finding["reference"]["page"].endswith("(earlier version of the page: the copy released 12/8/2017, "
                                                 "seeds/004_514edaf6af042189.txt)")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_note_is_in_the_tables(fmt):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "validate", "DXGK_SEGMENTFLAGS", hex(WORD), "--ddi",
                        "WDDM2_0", "--format", fmt], capture_output=True, env=env, cwd=REPO, timeout=120)
    assert p.returncode == 1, p.stderr.decode()
    out = p.stdout.decode()
    rows = list(csv.DictReader(io.StringIO(out))) if fmt == "csv" else [json.loads(x) for x in out.splitlines()]
    (row,) = [r for r in rows if r["rule_id"] == "SEGFLAGS.PARTIAL_ON_APERTURE"]
    assert row["message"].endswith("(earlier version of the page)")


def test_a_finding_made_outside_a_check_gets_the_note_too():
    from d3dkmddi_py.semantics._rules import finding

    f = finding("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", "ApplicationTarget", 1, "ApplicationTarget is set")
    assert f.message == "ApplicationTarget is set (kit header comment)"
    assert finding("ADAPTER.ONE_AGP", "Agp", 1, "two").message == "two"


def test_rule_text_names_the_source_and_the_sentences_beside_it():
    text = sem.rule_text("SEGFLAGS.HIBERNATE_ON_APERTURE")
    assert "(earlier version of the page: the copy released 12/8/2017" in text and "a warning because:" in text
    assert "also:" in sem.rule_text("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE")
