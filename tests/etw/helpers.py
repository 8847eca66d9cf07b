"""Test-only: build small traces in the forms tracerpt and Event Viewer write."""
from __future__ import annotations

import argparse
import io
from pathlib import Path

from d3dkmddi_py.etw import KINDS
from d3dkmddi_py.etw.outputs import command
from d3dkmddi_py.etw.catalog.adapter_allocation import FIELDS as ALLOCATION_FIELDS
from d3dkmddi_py.etw.catalog.report_segment import FIELDS as SEGMENT_FIELDS

NS = "http://schemas.microsoft.com/win/2004/08/events/event"
DXG = ("Microsoft-Windows-DxgKrnl", "{802ec45a-1e99-4b83-9920-87c98277ba9d}")
ADAPTER = 0xFFFFC000DEAD0000
GOLDEN = Path(__file__).resolve().parent / "golden"
# golden file -> (argv after `d3dkmddi etw`, exit status); rewritten by tests/etw/regenerate_golden.py
GOLDEN_CASES = {"sample.txt": (["sample"], 1), "sample.jsonl": (["sample", "--json"], 1),  # 1: the sample's findings
                "sample_summary.txt": (["sample", "--summary"], 0)}


def alloc_fields(**over) -> dict:
    f = {n: 0 for n, _t in ALLOCATION_FIELDS}
    f.update(pDxgAdapter=ADAPTER, allocSize=0x10000, ulAlignment=0x10000, dwReadSegment=1, dwWriteSegment=1,
             PreferredSegment=1, dwEvictionSegment=2, Priority=0x78000000, hDxgGlobalAlloc=0xFFFF0001,
             hVidMmGlobalAlloc=0xEEEE0001, BackingStoreWasPinned=False)
    f.update(over)
    return f


def seg_fields(segment_id: int, flags: int, **over) -> dict:
    f = {n: 0 for n, _t in SEGMENT_FIELDS}
    f.update(ulSegmentId=segment_id, pDxgAdapter=ADAPTER, Size=0x10000000, CommitLimit=0x10000000, Flags=flags)
    f.update(over)
    return f


def text_of(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return value


def _version(event_id: int, version):
    """The event's version in the manifest unless given (an id the manifest lacks: 0)."""
    kind = KINDS.get(event_id)
    return version if version is not None else kind.version if kind is not None else 0


def tracerpt_event(event_id: int, fields: dict, *, provider=DXG, version=None, opcode=0, eol="\r\n") -> str:
    version = _version(event_id, version)
    name, guid = provider
    prov = f'<Provider Name="{name}" Guid="{guid}" />' if name else f'<Provider Guid="{guid}" />'
    data = "".join(f'\t\t<Data Name="{n}">{text_of(v)}</Data>{eol}' for n, v in fields.items())
    return (f'<Event xmlns="{NS}">{eol}\t<System>{eol}\t\t{prov}{eol}\t\t<EventID>{event_id}</EventID>{eol}'
            f'\t\t<Version>{version}</Version>{eol}\t\t<Task>21</Task>{eol}\t\t<Opcode>{opcode}</Opcode>{eol}'
            f'\t\t<TimeCreated SystemTime="2026-11-23T10:00:00.000000001+0100" />{eol}'
            f'\t\t<Execution ProcessID="4" ThreadID="8" />{eol}\t</System>{eol}'
            f'\t<EventData>{eol}{data}\t</EventData>{eol}</Event>{eol}')


def viewer_event(event_id: int, fields: dict, *, provider=DXG, version=None) -> str:
    """Event Viewer / wevtutil form: one line, single quotes, unpadded numbers, lowercase hex."""
    version = _version(event_id, version)
    name, guid = provider
    data = "".join(f"<Data Name='{n}'>{text_of(v)}</Data>" for n, v in fields.items())
    return (f"<Event xmlns='{NS}'><System><Provider Name='{name}' Guid='{guid}'/><EventID>{event_id}</EventID>"
            f"<Version>{version}</Version><Level>0</Level><Task>21</Task><Opcode>1</Opcode>"
            f"<TimeCreated SystemTime='2026-11-23T09:00:00.0000001Z'/><Execution ProcessID='4' ThreadID='8'/>"
            f"</System><EventData>{data}</EventData></Event>")


def trace(*events: str, eol="\r\n") -> bytes:
    return ("<Events>" + eol + "".join(events) + "</Events>" + eol).encode("utf-8")


def run(argv, stdin: bytes | None = None, monkeypatch=None) -> tuple[str, int]:
    p = argparse.ArgumentParser(prog="d3dkmddi etw")
    command.add_arguments(p)
    args = p.parse_args(argv)
    if stdin is not None:
        import sys

        class _In:
            buffer = io.BytesIO(stdin)
        monkeypatch.setattr(sys, "stdin", _In)
    out = io.StringIO()
    status = command.run(args, out)
    return out.getvalue(), status


def sample_other_kinds() -> tuple:
    """The symbols of the bundled sample's events no entry reads (a table each), sorted: read, not listed, so an
    entry added for one of them changes no test but its own."""
    from d3dkmddi_py.etw.catalog import ENTRY_OF
    from d3dkmddi_py.etw.outputs.command import SAMPLE_PATH
    from d3dkmddi_py.etw import read

    return tuple(sorted({e.symbol for e in read(SAMPLE_PATH) if e.event_id not in ENTRY_OF}))
