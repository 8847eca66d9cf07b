"""adapters(): segments replaced by later reports, allocations added and removed, checks per adapter."""
from __future__ import annotations

from d3dkmddi_py import etw, target

from .helpers import ADAPTER, alloc_fields, seg_fields

T = target("x64", "WDDM3_0")


def ev(event_id, fields, version=None):
    """A record of another reader; without a version, the manifest's (from_records' default)."""
    return {"event": event_id, "fields": fields, **({} if version is None else {"version": version})}


def test_later_report_replaces_the_segment():
    a = etw.adapters(etw.from_records([ev(78, seg_fields(1, 0x1, Size=0x1000)), ev(78, seg_fields(1, 0x11))]),
                     target=T)[ADAPTER]
    assert list(a.segments) == [1] and a.segments_replaced == 1 and a.segments[1].event.number == 2


def test_start_dcstart_add_and_stop_removes_by_handle():
    recs = [ev(35, alloc_fields(hDxgGlobalAlloc=0xA)), ev(33, alloc_fields(hDxgGlobalAlloc=0xB)),
            ev(33, alloc_fields(hDxgGlobalAlloc=0, hVidMmGlobalAlloc=0xC)),
            ev(34, alloc_fields(hDxgGlobalAlloc=0xA)), ev(34, alloc_fields(hDxgGlobalAlloc=0, hVidMmGlobalAlloc=0xC)),
            ev(34, alloc_fields(hDxgGlobalAlloc=0xD))]
    a = etw.adapters(etw.from_records(recs), target=T)[ADAPTER]
    assert list(a.allocations) == [("hDxgGlobalAlloc", 0xB)]
    assert (a.started, a.stopped, a.stops_unmatched) == (3, 3, 1)


def test_allocations_are_checked_against_their_adapters_segments():
    other = ADAPTER + 0x1000
    recs = [ev(78, seg_fields(1, 0x0)), ev(78, seg_fields(2, 0x1)),  # memory, then an aperture
            ev(33, alloc_fields(dwWriteSegment=0x4, dwReadSegment=0x4, PreferredSegment=0)),  # names segment 3
            ev(33, alloc_fields(pDxgAdapter=other, dwWriteSegment=0x4, dwReadSegment=0x4, PreferredSegment=0))]
    got = etw.adapters(etw.from_records(recs), target=T)
    mine = next(iter(got[ADAPTER].allocations.values()))
    assert [f.rule_id for f in mine.findings] == ["ALLOCINFO.SET_UNKNOWN_SEGMENT"]
    alone = next(iter(got[other].allocations.values()))
    assert alone.findings == [] and "no ReportSegment" in got[other].adapter_note


def test_segment_ids_with_a_gap_check_allocations_alone():
    recs = [ev(78, seg_fields(1, 0x0)), ev(78, seg_fields(3, 0x1)),
            ev(33, alloc_fields(dwWriteSegment=0x80, PreferredSegment=0))]
    a = etw.adapters(etw.from_records(recs), target=T)[ADAPTER]
    assert a.adapter is None and "not 1..2" in a.adapter_note
    assert next(iter(a.allocations.values())).findings == []


def test_kernel_bits_are_never_reported_but_driver_bits_are():
    primary = etw.AllocationFlag.Primary | etw.AllocationFlag.Shareable | etw.AllocationFlag.ManagedPrimary
    recs = [ev(78, seg_fields(1, 0x0)), ev(78, seg_fields(2, 0x1)),
            ev(33, alloc_fields(hDxgGlobalAlloc=1, Flags=int(primary))),
            ev(33, alloc_fields(hDxgGlobalAlloc=2, Flags=int(etw.AllocationFlag.Cached)))]
    a = etw.adapters(etw.from_records(recs), target=T)[ADAPTER]
    assert a.allocations[("hDxgGlobalAlloc", 1)].findings == []
    assert [f.rule_id for f in a.allocations[("hDxgGlobalAlloc", 2)].findings] == ["ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE"]
    # the same word read as DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 reports the kernel's bits as reserved
    from d3dkmddi_py import check
    naive = check(int(primary), "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", target=T)
    assert {f.rule_id for f in naive} == {"ALLOCFLAGS.RESERVED_NONZERO"}


def test_no_finding_names_a_member_the_event_lacks():
    from d3dkmddi_py.samples import DIRECTORY, etw_build

    for version in ("WIN8", "WDDM2_0", "WDDM3_0", "WDDM3_2"):
        t = target("x64", version)
        pk = etw.packer("x64", int(t.interface_version))
        unknown = set(pk.unknown_members("DXGK_ALLOCATIONINFO")) | set(pk.unknown_members("segment descriptor"))
        got = etw.adapters(etw.read(DIRECTORY / etw_build.FILE), target=t)
        fields = [f.field for a in got.values() for e in list(a.allocations.values()) + list(a.segments.values())
                  for f in e.findings]
        assert fields and not {f.split(".")[0] for f in fields} & unknown


def test_adapter_wide_rule_in_adapters_and_in_json(tmp_path):
    import json

    from .helpers import run, trace, tracerpt_event

    recs = [ev(78, seg_fields(1, 0x2), version=1), ev(78, seg_fields(2, 0x2), version=1)]  # two AGP segments
    a = etw.adapters(etw.from_records(recs), target=T)[ADAPTER]
    assert [f.rule_id for f in a.adapter_findings] == ["ADAPTER.ONE_AGP"]
    p = tmp_path / "agp.xml"
    p.write_bytes(trace(*(tracerpt_event(78, r["fields"], version=1) for r in recs)))
    out, status = run([str(p), "--json", "--ddi", "WDDM3_0"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert [[f["rule_id"] for f in line["findings"]] for line in lines] == [[], ["ADAPTER.ONE_AGP"]]
    assert status == 1
