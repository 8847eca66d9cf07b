"""The templates come from the manifest: the generated module is the manifest (every event, template and map),
every catalog entry's templates are the generated ones for its ids and versions, and a version the manifest
lacks names its evidence, which is found where it says.  Reads ../shared/etw (beside the repository)."""
from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.etw.model import dxgkrnl_manifest
from d3dkmddi_py.etw.model.registry import layout_of
from d3dkmddi_py.etw.model.schema import SHARED_FLAG_VIEW, USAGE_FLAG_TYPE, AllocationFlag, UsageFlag, one_bit_leaves
from d3dkmddi_py.etw.model.templates import manifest_event
from tests.conftest import require
from tests.golden.sources import normalise

from tests.etw.manifest_xml import MANIFEST, ROOT


@pytest.fixture(autouse=True)
def _shared():
    require(MANIFEST.is_file(), f"the DxgKrnl manifest is not at {MANIFEST} (../shared/etw beside the repository)")


def generator():
    spec = importlib.util.spec_from_file_location("gen_dxgkrnl_manifest", ROOT / "tools" / "gen_dxgkrnl_manifest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def manifest_xml() -> dict:
    """The manifest read here on its own (ElementTree, not the generator): id -> (symbol, version, [(name, in-type,
    count, length, map)])."""
    root = ET.parse(MANIFEST).getroot()
    tag = lambda e: e.tag.rpartition("}")[2]  # noqa: E731
    templates = {t.get("tid"): [(d.get("name"), d.get("inType"), d.get("count"), d.get("length"), d.get("map"))
                                for d in t if tag(d) == "data"] for t in root.iter() if tag(t) == "template"}
    return {int(e.get("value")): (e.get("symbol"), int(e.get("version")), templates.get(e.get("template"), []))
            for e in root.iter() if tag(e) == "event"}


def test_the_generated_module_is_the_manifest():
    tool = generator()
    assert tool.OUT.read_text() == tool.render(tool.read_manifest(MANIFEST)), \
        "stale: run python tools/gen_dxgkrnl_manifest.py"


def test_every_event_of_the_manifest_is_an_event_kind_with_its_template():
    events = manifest_xml()
    assert len(events) == len(etw.KINDS) == 451
    for event_id, (symbol, version, fields) in events.items():
        kind = etw.KINDS[event_id]
        assert (kind.symbol, kind.version) == (symbol, version)
        got = [(f.name, "win:" + f.in_type, None if f.count is None else str(f.count),
                None if f.length is None else str(f.length), f.map) for f in manifest_event(event_id).fields]
        assert got == fields, symbol


def test_every_in_type_the_manifest_uses_is_read():
    from d3dkmddi_py.etw.model.templates import IN_TYPES

    used = {f[1] for _s, _v, fields in manifest_xml().values() for f in fields}
    assert used and {u[len("win:"):] for u in used} <= set(IN_TYPES)


def test_every_catalog_entry_reads_the_manifests_template_for_its_ids_and_versions():
    """The catalog's templates were typed by hand and one took another event's fields (ReportCommittedAllocation
    had four of RecordQueuePacketTimestampsArgs); they are the manifest's now, held to its XML here."""
    events = manifest_xml()
    for entry in etw.ENTRIES.values():
        for event_id in entry.ids:
            symbol, version, fields = events[event_id]
            names = [(n, t[len("win:"):]) for n, t, *_rest in fields]
            assert list(entry.versions[version]) == names, (entry.event, event_id)
            assert layout_of(event_id, version) == entry.layouts[version]
            for newer in entry.newer:  # a version the manifest lacks: the manifest's fields, then what it adds
                assert newer.version != version and list(entry.versions[newer.version][:len(names)]) == names


def test_report_committed_allocation_has_the_manifests_eight_fields():
    assert [n for n, _t in etw.ENTRIES["ReportCommittedAllocation"].fields] == [
        "hProcessId", "hDevice", "hAllocationHandle", "Pinned", "EvictionResource", "Size", "ulSegmentId",
        "SegmentOffset"]


def test_a_version_the_manifest_lacks_names_its_evidence_and_the_shared_copy_says_it():
    """AdapterAllocation version 3: its evidence under ../shared is found there in those words, and the fields it
    adds are the tail of the field list that copy gives (names and in-types)."""
    newer = [(e, n) for e in etw.ENTRIES.values() for n in e.newer]
    assert newer, "no entry reads a version the manifest lacks"
    for entry, n in newer:
        shared = [(where, said) for where, said in n.evidence if where.startswith("../shared/")]
        assert shared and all(where.startswith(("../shared/", "https://")) for where, _s in n.evidence)
        for where, said in shared:
            text = normalise((ROOT / where).read_text(encoding="utf-8"))
            quoted = said.split(" (a public field list", 1)[0]
            assert normalise(quoted) in text, (entry.event, where)
            listed = said.rsplit("...", 1)[1].rstrip(")").split(",")
            tail = [tuple(p.strip().rstrip(")").split(" (")) for p in listed]
            assert list(entry.versions[n.version][-len(tail):]) == tail


def test_allocation_flags_bit_map_names_bits_0_to_13_as_the_kit_does():
    """The AllocationFlags bit map is the manifest's; where it names bits 0-13, it names them as
    DXGK_ALLOCATIONINFOFLAGS (non-WDDM2_0 view) names those bits (the kit and the manifest agree)."""
    kit = one_bit_leaves(SHARED_FLAG_VIEW[2], SHARED_FLAG_VIEW[0], SHARED_FLAG_VIEW[1])
    shared = {m.name: m.value.bit_length() - 1 for m in AllocationFlag if m.value < 1 << 14}
    assert shared and all(kit[name] == bit for name, bit in shared.items())


def test_usage_flags_bit_map_is_the_kits_usage_flag_word():
    kit = one_bit_leaves(USAGE_FLAG_TYPE, "x64", "WDDM2_0", "Flags.")
    assert {m.name: m.value.bit_length() - 1 for m in UsageFlag} == kit


def test_the_generated_module_has_no_hand_edit():
    """It says where it comes from, and the generator writes it whole (a diff is a stale file, never an edit)."""
    assert "Generated by" in dxgkrnl_manifest.__doc__ and "do not edit" in dxgkrnl_manifest.__doc__
