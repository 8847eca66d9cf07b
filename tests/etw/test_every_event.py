"""Every event of the DxgKrnl manifest, packed by an encoder written here from the manifest's XML alone (not from
the package's templates or catalog), in buffers appended to a real .etl file (gcevents.etl, written by Windows),
with 64-bit and with 32-bit event headers: each comes back with every field as packed, by the event-by-event and
the column-wise readers alike, and from tracerpt-style XML of the same values.  In the same trace, the four odd
cases (a payload longer and one shorter than its template, an id and a version the manifest lacks, a Boolean
that is neither 0 nor 1) are kept and reported once each, and every other event is read as if they were not there."""
from __future__ import annotations

import random
import struct

import pytest

from d3dkmddi_py import etw
from tests.conftest import require
from tests.etw import etl_files
from tests.etw.etl_readings import tables
from tests.etw.manifest_encoder import buffers, event_record, expected, manifest, payload, values, xml_event
from tests.etw.manifest_xml import MANIFEST

def built(pointer_size: int, seed: int = 29):
    """(the real file with every manifest event and the odd ones appended, [(id, fields expected or None)], XML)."""
    require(MANIFEST.is_file(), f"the DxgKrnl manifest is not at {MANIFEST}")
    real = etl_files.read("gcevents")
    size = struct.unpack_from("<I", real, 0)[0]  # the real file's BufferSize: every buffer's
    rng = random.Random(seed)
    records, want, xml = [], [], []
    last = max(struct.unpack_from("<q", real, at + 16)[0] for at in range(0, len(real), size))
    for i, (event_id, (symbol, version, opcode, task, fields)) in enumerate(sorted(manifest().items())):
        vals = values(fields, rng, pointer_size)
        records.append(event_record(event_id, version, opcode, task, payload(fields, vals, pointer_size), last + i,
                                    pointer_size))
        want.append((event_id, version, expected(fields, vals)))
        xml.append(xml_event(event_id, version, opcode, task, fields, vals))
    m = manifest()
    odd = []
    _s, v53, op53, task53, f53 = m[53]
    vals = values(f53, rng, pointer_size)
    base = payload(f53, vals, pointer_size)
    odd.append((53, v53, op53, task53, base + b"\x01\x02\x03\x04", ("extra", expected(f53, vals))))
    odd.append((53, v53, op53, task53, base[:len(base) - 6], ("short", None)))
    odd.append((60001, 0, 0, 0, b"\x05\x06", ("id", None)))
    odd.append((53, 9, op53, task53, base, ("version", None)))
    boolean = bytearray(base)
    boolean[pointer_size * 2:pointer_size * 2 + 4] = struct.pack("<I", 2)  # ContinueNextBuffer, after two pointers
    odd.append((53, v53, op53, task53, bytes(boolean), ("boolean", None)))
    for j, (event_id, version, opcode, task, data, what) in enumerate(odd):
        records.append(event_record(event_id, version, opcode, task, data, last + len(records) + j, pointer_size))
        want.append((event_id, version, what))
    trace = "<Events>" + "".join(xml) + "</Events>"
    return real + buffers(records, size, last), want, trace


@pytest.mark.parametrize("pointer_size", [8, 4], ids=["64-bit headers", "32-bit headers"])
def test_every_event_of_the_manifest_comes_back_as_packed_and_the_odd_ones_are_kept_and_reported(pointer_size):
    data, want, _xml = built(pointer_size)
    reader = etw.read(data)
    events = list(reader)
    assert reader.other_providers > 0 and len(events) == len(want) == 451 + 5  # the real file's events: another's
    tracker = etw.Tracker()
    reports = {}
    for e in events:
        tracker._apply(e)
        for f in tracker.odd.take(e):
            reports.setdefault(f.rule_id, []).append(e.number)
    for e, (event_id, version, what) in zip(events, want):
        assert (e.event_id, e.version) == (event_id, version)
        if isinstance(what, dict):
            assert e.fields == what and e.odd is None, e.symbol
            continue
        case, fields = what
        odd = e.odd
        fields_of_53 = lambda e: {**{n: 0 for n, *_r in manifest()[53][4]}, **e.fields}  # noqa: E731
        if case == "extra":
            assert e.fields == fields and odd.extra_bytes == b"\x01\x02\x03\x04" and odd.whole
        elif case == "short":
            assert odd.missing == ("DestinationSegmentOffset", "Flags") and "DestinationSegmentId" in e.fields  # cut
            assert odd.cut_at == len(payload(manifest()[53][4], fields_of_53(e), pointer_size)) - 6  # inside the first
        elif case in ("id", "version"):
            assert e.fields == {} and odd.why == case and odd.payload is not None
        else:
            assert e.fields["ContinueNextBuffer"] == 2 and odd.booleans == ("ContinueNextBuffer",)
    assert sorted(reports) == ["ETW.BOOLEAN_NOT_0_OR_1", "ETW.NO_TEMPLATE", "ETW.PAYLOAD_LONGER",
                               "ETW.PAYLOAD_SHORTER"]
    assert len(reports["ETW.NO_TEMPLATE"]) == 2 and all(len(v) == 1 for k, v in reports.items()
                                                         if k != "ETW.NO_TEMPLATE")
    assert tracker.odd.events == 5


def test_the_same_events_as_tracerpt_xml_read_as_from_the_etl_file():
    data, want, xml = built(8)
    from_etl = [e for e in etw.read(data)][:451]
    from_xml = list(etw.read(xml.encode("utf-8")))
    assert [(e.event_id, e.fields) for e in from_xml] == [(e.event_id, e.fields) for e in from_etl]
    assert all(e.odd is None for e in from_xml)
    assert list(etw.read(xml.encode("utf-8"), fast=False)) == from_xml


@pytest.mark.parametrize("pointer_size", [8, 4], ids=["64-bit headers", "32-bit headers"])
def test_the_tables_of_every_event_read_column_wise_equal_the_event_by_event_ones(pointer_size, tmp_path):
    data, want, _xml = built(pointer_size)
    fast, exact = tables(data, tmp_path, True), tables(data, tmp_path, False)
    assert "error" not in exact and fast == exact
    symbols = {etw.KINDS[i].symbol for i, _v, what in want if isinstance(what, dict) and i not in etw.catalog.ENTRY_OF}
    assert {f"{s}.csv" for s in symbols} <= set(exact) and "undecoded.csv" in exact
    assert exact["findings.csv"].count(b",ETW.") == 5
