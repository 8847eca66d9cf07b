"""Every event of the DxgKrnl manifest, packed by an encoder written here from the manifest's XML alone (not from
the package's templates or catalog), in buffers appended to a real .etl file (gcevents.etl, written by Windows),
with 64-bit and with 32-bit event headers: each comes back with every field as packed, by the event-by-event and
the column-wise readers alike, and from tracerpt-style XML of the same values.  In the same trace, the four odd
cases (a payload longer and one shorter than its template, an id and a version the manifest lacks, a Boolean
that is neither 0 nor 1) are kept and reported once each, and every other event is read as if they were not there."""
from __future__ import annotations

import random
import struct
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import pytest

from d3dkmddi_py import etw
from tests.conftest import require
from tests.etw import etl_files
from tests.etw.etl_readings import tables
from tests.etw.manifest_xml import MANIFEST

DXGKRNL = uuid.UUID("802ec45a-1e99-4b83-9920-87c98277ba9d")
WIDTHS = {"UInt8": ("B", 1), "Int8": ("b", 1), "UInt16": ("H", 2), "Int16": ("h", 2), "UInt32": ("I", 4),
          "Int32": ("i", 4), "UInt64": ("Q", 8), "Int64": ("q", 8), "HexInt32": ("I", 4), "HexInt64": ("Q", 8),
          "Boolean": ("I", 4)}  # a manifest event's win:Boolean is 32 bits
TEXT = ("", "a", "GPU 0", "café", "显卡", "🎮 x", "tab\there")


def manifest() -> dict:
    """id -> (symbol, version, opcode, task value, [(name, in-type, count, length)]), from the XML."""
    root = ET.parse(MANIFEST).getroot()
    tag = lambda e: e.tag.rpartition("}")[2]  # noqa: E731
    tasks = {t.get("name"): int(t.get("value")) for t in root.iter() if tag(t) == "task"}
    templates = {t.get("tid"): [(d.get("name"), d.get("inType")[4:], d.get("count"), d.get("length"))
                                for d in t if tag(d) == "data"] for t in root.iter() if tag(t) == "template"}
    opcodes = {None: 0, "win:Start": 1, "win:Stop": 2, "win:DCStart": 3}
    return {int(e.get("value")): (e.get("symbol"), int(e.get("version")), opcodes[e.get("opcode")],
                                  tasks[e.get("task")], templates.get(e.get("template"), []))
            for e in root.iter() if tag(e) == "event"}


def values(fields: list, rng: random.Random, pointer_size: int) -> dict:
    """A value for each field: a count or length small, a field's number within its in-type."""
    refs = {ref for _n, _t, count, length in fields for ref in (count, length) if ref}
    out = {}

    def one(in_type, length):
        if in_type in ("Pointer", "SizeT"):
            return rng.randrange(1 << 8 * pointer_size)
        if in_type == "Boolean":
            return rng.random() < 0.5
        if in_type == "GUID":
            return "{" + str(uuid.UUID(bytes=rng.randbytes(16))) + "}"
        if in_type == "UnicodeString":
            return rng.choice(TEXT)
        if in_type == "AnsiString":
            return rng.choice(("", "ansi", "caf\xe9"))
        if in_type == "Binary":
            return rng.randbytes(length)
        code, width = WIDTHS[in_type]
        return rng.randrange(-(1 << 8 * width - 1), 1 << 8 * width - 1) if code.islower() else \
            rng.randrange(1 << 8 * width)

    for name, in_type, count, length in fields:
        if name in refs:
            out[name] = rng.randrange(4)
            continue
        n = out[count] if count else None
        size = out[length] if length else None
        out[name] = tuple(one(in_type, size) for _ in range(n)) if count else one(in_type, size)
    return out


def payload(fields: list, vals: dict, pointer_size: int) -> bytes:
    out = bytearray()
    for name, in_type, count, _length in fields:
        for v in (vals[name] if count else (vals[name],)):
            if in_type in ("Pointer", "SizeT"):
                out += v.to_bytes(pointer_size, "little")
            elif in_type == "GUID":
                out += uuid.UUID(v.strip("{}")).bytes_le
            elif in_type == "UnicodeString":
                out += v.encode("utf-16-le") + b"\0\0"
            elif in_type == "AnsiString":
                out += v.encode("latin-1") + b"\0"
            elif in_type == "Binary":
                out += v
            else:
                out += struct.pack("<" + WIDTHS[in_type][0], int(v))
    return bytes(out)


def event_record(event_id, version, opcode, task, data: bytes, ticks: int, pointer_size: int) -> bytes:
    """An EVENT_HEADER (evntcons.h: 80 bytes) and its payload, padded to 8 bytes."""
    kind, flags = (0x13, 0x40) if pointer_size == 8 else (0x12, 0x20)  # EVENT64/32, HEADER_FLAG_64/32_BIT_HEADER
    head = struct.pack("<HBBHHIIq16sHBBBBHQII16s", 80 + len(data), kind, 0xC0, flags, 0, 77, 0x1F40, ticks,
                       DXGKRNL.bytes_le, event_id, version, 0, 4, opcode, task, 0x40, 0, 0, bytes(16))
    record = head + data
    return record + bytes(-len(record) % 8)


def buffers(records: list, size: int, timestamp: int) -> bytes:
    """WMI_BUFFER_HEADERs (72 bytes) of processor 0 holding the records in order, each buffer ``size`` bytes."""
    out, body = bytearray(), b""

    def flush(body):
        end = 72 + len(body)
        head = struct.pack("<IIIiqqQHHIIHH", size, end, end, 0, timestamp, 0, 0, 0, 0, 0, end, 0x20, 0) + bytes(16)
        return head + body + b"\xff" * (size - end)

    for record in records:
        if 72 + len(body) + len(record) > size:
            out += flush(body)
            body = b""
        body += record
    return bytes(out + flush(body))


def xml_event(event_id, version, opcode, task, fields, vals) -> str:
    """The event as tracerpt writes it: one <Data> per field (a counted array's values repeated), numbers decimal,
    pointers 0x hex, Booleans true/false, Binary 0x hex."""
    def text(in_type, v):
        if in_type in ("Pointer", "SizeT"):
            return f"0x{v:X}"
        if in_type == "Boolean":
            return "true" if v else "false"
        if in_type == "Binary":
            return "0x" + v.hex().upper()
        return escape(str(v))

    data = "".join(f'<Data Name="{name}">{text(t, v)}</Data>' for name, t, count, _l in fields
                   for v in (vals[name] if count else (vals[name],)))
    return (f'<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System>'
            f'<Provider Name="Microsoft-Windows-DxgKrnl" Guid="{{{DXGKRNL}}}"/><EventID>{event_id}</EventID>'
            f'<Version>{version}</Version><Task>{task}</Task><Opcode>{opcode}</Opcode>'
            f'<TimeCreated SystemTime="2026-11-23T10:00:00.000000001Z"/><Execution ProcessID="8000" ThreadID="77"/>'
            f'</System><EventData>{data}</EventData></Event>')


def expected(fields, vals) -> dict:
    return {name: tuple(vals[name]) if count else vals[name] for name, _t, count, _l in fields}


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
