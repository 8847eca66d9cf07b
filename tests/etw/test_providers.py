"""--summary's names: the table of well-known providers (each GUID with its published source), DxgKrnl's
event ids by the manifest's symbols, and the count of providers in words."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import D3dkmddiError
from d3dkmddi_py.etw.model import providers, registry
from d3dkmddi_py.etw.catalog import KIND_BY_NAME, KINDS
from d3dkmddi_py.etw.model.dxgkrnl_manifest import EVENTS as DXGKRNL_EVENTS
from d3dkmddi_py.etw.model.schema import PROVIDER, PROVIDER_GUID
from tests.conftest import require
from tests.etw import etl_files
from tests.etw.etl_twin import DXGKRNL, Dxg, Other, twin
from tests.etw.helpers import alloc_fields, seg_fields

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT.parent / "shared" / "etw" / "Microsoft-Windows-DxgKrnl.manifest.xml"
GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SOURCES = {providers.WINDOWS_10_LIST, providers.PERFVIEW_KERNEL, providers.CLR_MANIFEST, providers.PERFVIEW_TPL,
           providers.PERFVIEW_FRAMEWORK, providers.PERFVIEW_BPERF}


def test_provider_table_guids_are_canonical_unique_and_sourced():
    guids = [p.guid for p in providers.PROVIDERS]
    assert all(GUID.fullmatch(g) for g in guids), [g for g in guids if not GUID.fullmatch(g)]
    assert len(set(guids)) == len(guids)
    for p in providers.PROVIDERS:
        assert p.name and p.name == p.name.strip()
        windows7 = re.fullmatch(re.escape(providers._REPNZ) + r"Manifests-Win7-7600/(.+)\.xml", p.source)
        assert p.source in SOURCES or (windows7 and windows7.group(1) == p.name), p
    # a name given twice is a provider that changed GUID: once from the Windows 10 list, once from Windows 7's
    for name in {p.name for p in providers.PROVIDERS}:
        rows = [p for p in providers.PROVIDERS if p.name == name]
        if len(rows) > 1:
            assert sorted("Win7" in p.source for p in rows) == [False, True], rows


def test_provider_table_dxgkrnl_is_the_manifests_provider():
    require(MANIFEST.is_file(), f"the DxgKrnl manifest is not at {MANIFEST} (../shared/etw beside the repository)")
    (provider,) = [e for e in ET.parse(MANIFEST).getroot().iter() if e.tag.rpartition("}")[2] == "provider"]
    guid = provider.get("guid").strip("{}").lower()
    assert providers.provider_name(guid) == provider.get("name") == PROVIDER
    assert guid == PROVIDER_GUID.strip("{}").lower()


def test_dxgkrnl_ids_of_every_event_name_its_kind_by_the_manifests_symbol():
    """Each id (every event of the manifest): its symbol is one the registry reads as that id's event."""
    assert len(KINDS) == len(DXGKRNL_EVENTS) == 451
    for event_id, kind in KINDS.items():
        symbol = DXGKRNL_EVENTS[event_id][0]
        assert registry.SYMBOLS[symbol] == kind and kind.symbol == symbol, (event_id, symbol)
        assert providers.dxgkrnl_event_name(event_id) == symbol


def test_an_entry_for_an_id_the_manifest_lacks_is_refused():
    """register() checks what the tests check: an entry reads ids of the manifest (a made-up id 60000 was
    registered once and named in --summary)."""
    assert 60000 not in DXGKRNL_EVENTS and providers.dxgkrnl_event_name(60000) is None
    entry = registry.EventEntry(event="MadeUpGpuEvent", ids=(60000,),
                                mapping=(registry.Mapping("MadeUpGpuEvent", "Count", None, None, "made up"),),
                                table=registry.TableSpec("made_up", ()))
    with pytest.raises(D3dkmddiError, match=r"^MadeUpGpuEvent: event id 60000 is not an event of the "
                                            r"Microsoft-Windows-DxgKrnl manifest"):
        registry.register(entry)
    assert providers.dxgkrnl_event_name(60000) is None and "MadeUpGpuEvent" not in etw.ENTRIES


def summary_of(data: bytes) -> tuple:
    """(--summary text, --summary --json) of an .etl given on standard input."""
    runs = [subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", "-", "--summary", *extra], input=data,
                           capture_output=True, check=True) for extra in ([], ["--json"])]
    return runs[0].stdout.decode(), json.loads(runs[1].stdout)


def test_summary_names_dxgkrnl_ids_and_providers():
    segment, start = KIND_BY_NAME[("ReportSegment", "Info")], KIND_BY_NAME[("AdapterAllocation", "Start")]
    powershell = ("Microsoft-Windows-PowerShell", "{a0c1853b-5c40-4b15-8766-3cf1c58f985a}")
    etl, _xml = twin([Dxg(segment, seg_fields(1, 0x0), version=1), Dxg(start, alloc_fields()),
                      Other(DXGKRNL, 26, (3, 2)), Other(powershell, 7, (1,))])
    text, facts = summary_of(etl)
    dxg = next(p for p in facts["providers"] if p["guid"] == PROVIDER_GUID.strip("{}"))
    assert dxg["name"] == "Microsoft-Windows-DxgKrnl"
    assert dxg["ids"] == {"26": 1, "33": 1, "78": 1}
    assert dxg["id_names"] == {"26": DXGKRNL_EVENTS[26][0], "33": "AdapterAllocationStart_V2", "78": "ReportSegment_V1"}
    assert f"ids 26 {DXGKRNL_EVENTS[26][0]}: 1, 33 AdapterAllocationStart_V2: 1, 78 ReportSegment_V1: 1" in text
    shell = next(p for p in facts["providers"] if p["guid"] == "a0c1853b-5c40-4b15-8766-3cf1c58f985a")
    assert shell["name"] == "Microsoft-Windows-PowerShell" and shell["id_names"] == {}
    assert "\n3 providers, most events first:\n" in text  # DxgKrnl, PowerShell and the log-file header's kernel


def test_summary_one_provider_is_singular():
    """ShutdownPerfDiagLogger.etl holds the kernel logger's events only."""
    text, facts = summary_of(etl_files.read("ShutdownPerfDiagLogger"))
    assert len(facts["providers"]) == 1
    assert "\n1 provider:\n" in text and "1 providers" not in text


def test_summary_names_the_providers_of_real_traces():
    """The real files' providers that the table names, by GUID (the GUIDs of tests/etw/real's readings)."""
    expected = {"gcevents": {"e13c0d23-ccbc-4e12-931b-d9cc2eee27e4": "Microsoft-Windows-DotNETRuntime"},
                "powershell": {"a0c1853b-5c40-4b15-8766-3cf1c58f985a": "Microsoft-Windows-PowerShell"},
                "net.4.5.2.x64": {"a669021c-c450-4609-a035-5af59af4df18": "Microsoft-Windows-DotNETRuntimeRundown",
                                  "763fd754-7086-4dfe-95eb-c01a46faf4ca": "Microsoft-Windows-DotNETRuntimePrivate",
                                  "edd08927-9cc4-4e65-b970-c2560fb5c289": "Microsoft-Windows-Kernel-File",
                                  "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716": "Microsoft-Windows-Kernel-Process",
                                  "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5": "System.Threading.Tasks.TplEventSource"},
                "ShutdownPerfDiagLogger": {"9e814aad-3204-11d2-9a82-006008a86939": "Windows Kernel"}}
    for name, names in expected.items():
        facts = etw.summary(etl_files.read(name))
        got = {p["guid"]: p["name"] for p in facts["providers"]}
        assert {g: got.get(g) for g in names} == names, name
