"""Test-only: the same events as an .etl file and as tracerpt-style XML, so every output of the two
can be compared byte for byte."""
from __future__ import annotations

from d3dkmddi_py import etw
from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH
from d3dkmddi_py.etw.readers.etlfile import filetime_text
from d3dkmddi_py.etw.model.registry import layout_of
from d3dkmddi_py.etw.model.schema import OPCODES, PROVIDER, PROVIDER_GUID
from d3dkmddi_py.etw.outputs.tables import table_names
from d3dkmddi_py.samples import etl_build, etw_build
from tests.etw.helpers import run

KERNEL_PROCESS = etw_build.KERNEL_PROCESS
EVENT_TRACE_GUID = etw_build.EVENT_TRACE_GUID
TICKS_APART = 1_234  # 123.4 microseconds between events
THREAD_CLASSIC = (None, "{3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c}")
DXGKRNL = (PROVIDER, PROVIDER_GUID)


class Dxg:
    """A DxgKrnl event for both files."""

    def __init__(self, kind, fields: dict, version: int | None = None, process_id: int = 0x1F40, thread_id: int = 77):
        self.kind, self.fields, self.process_id, self.thread_id = kind, fields, process_id, thread_id
        self.version = kind.version if version is None else version


class Other:
    """An event of another provider (or another DxgKrnl event) with a payload of ``data`` UInt32s."""

    def __init__(self, provider: tuple, event_id: int, data: tuple = (), process_id: int = 4, thread_id: int = 8):
        self.provider, self.event_id, self.data = provider, event_id, data
        self.process_id, self.thread_id = process_id, thread_id


def _number(in_type: str, value) -> str:
    return etw_build._number(in_type, value)


def twin(items, *, pointer_size: int = 8, processors: int = 2, compress: bool = False, buffer_size: int = 4096):
    """(.etl bytes, XML text) of ``items`` (Dxg / Other), in that order; the .etl's header event is
    the XML's first event, as tracerpt writes it."""
    etl_events = []
    xml = [etw_build._event(lambda: filetime_text(etl_build.START_FILETIME), provider=None, guid=EVENT_TRACE_GUID,
                            event_id=0, version=2, task=0, opcode=0, keywords="0x0",
                            data=[("BufferSize", str(buffer_size))], pid=4, tid=8)]
    for i, item in enumerate(items, 1):
        ticks = i * TICKS_APART
        when = filetime_text(etl_build.START_FILETIME + ticks)
        where = dict(process_id=item.process_id, thread_id=item.thread_id, ticks=ticks, processor=i % processors)
        if isinstance(item, Dxg):
            kind = item.kind
            etl_events.append(etl_build.dxgkrnl_event(kind, item.fields, version=item.version,
                                                      pointer_size=pointer_size, **where))
            data = etw_build.data_items(kind.event_id, item.version, item.fields)
            xml.append(etw_build._event(lambda: when, provider=PROVIDER, guid=PROVIDER_GUID, event_id=kind.event_id,
                                        version=item.version, task=kind.task, opcode=OPCODES[kind.opcode],
                                        keywords="0x8000000000000040", data=data,
                                        rendering=(kind.opcode, kind.event), pid=item.process_id,
                                        tid=item.thread_id))
        else:
            name, guid = item.provider
            payload = b"".join(v.to_bytes(4, "little") for v in item.data)
            etl_events.append(etl_build.EtlEvent(guid, item.event_id, 0, payload, pointer_size=pointer_size, **where))
            xml.append(etw_build._event(lambda: when, provider=name, guid=guid, event_id=item.event_id, version=0,
                                        task=0, opcode=0, keywords="0x0",
                                        data=[(f"Value{j}", _number("UInt32", v)) for j, v in enumerate(item.data)],
                                        pid=item.process_id, tid=item.thread_id))
    etl = etl_build.etl_bytes(etl_events, processors=processors, compress=compress, buffer_size=buffer_size)
    text = "<Events>" + etw_build.EOL + "".join(xml) + "</Events>" + etw_build.EOL
    return etl, text


def fields_of(event) -> dict:
    return {f.name: event.fields[f.name] for f in layout_of(event.event_id, event.kind.version)}


def sample_items(pointer_size: int = 8) -> list:
    """The bundled sample's events in its order: its DxgKrnl events as they read (every one, those no entry reads
    too), its other events (the kernel's process event, a classic thread event) where it has them.  For 4-byte
    pointers, pointers keep their low 32 bits."""
    events = {e.number: e for e in etw.read(SAMPLE_PATH)}
    if pointer_size == 4:
        for e in events.values():
            for f in layout_of(e.event_id, e.version):
                if f.in_type == "Pointer":
                    e.fields[f.name] &= 0xFFFFFFFF
    others = sorted(set(range(2, max(events) + 1)) - set(events))  # the kernel's process event, then the thread's
    noise = dict(zip(others, (Other(KERNEL_PROCESS, 1, (0x1F40,)), Other(THREAD_CLASSIC, 36)), strict=True))
    items = []
    for number in range(2, max(events) + 1):
        e = events.get(number)
        items.append(noise[number] if e is None else Dxg(e.kind, e.fields, e.version, e.process_id, e.thread_id))
    return items


def outputs(data: bytes, monkeypatch, tmp_path) -> dict:
    """What the command writes for a trace on standard input: text, --json, and every table as CSV and JSON lines."""
    out = {}
    for label, argv in (("text", []), ("json", ["--json"])):
        out[label] = run(["-", *argv], stdin=data, monkeypatch=monkeypatch)
    for fmt in ("csv", "jsonl"):
        path = tmp_path / f"tables.{fmt}"
        status = run(["-", "--format", fmt, "-o", str(path)], stdin=data, monkeypatch=monkeypatch)[1]
        out[fmt] = ({p.name: p.read_bytes() for p in sorted(path.iterdir())}, status)
        assert set(table_names()) <= {name.rsplit(".", 1)[0] for name in out[fmt][0]}
    return out
