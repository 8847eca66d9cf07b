"""An encoder of DxgKrnl events written from the manifest's XML alone (not from the package's templates or catalog):
each event's fields and values, its payload, its EVENT_HEADER record, the buffers of processor 0 that hold the
records, and the event as tracerpt writes it in XML.  The tests that hold the readers to the manifest build their
traces with it."""
from __future__ import annotations

import random
import struct
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

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
