"""The bundled ETW sample: ``etw_trace.xml``, the sample adapter as a GPU trace would show it.

Written as ``tracerpt trace.etl -o etw_trace.xml -of XML`` writes XML (one <Events> root, CRLF,
tab indentation, UInt32 right-aligned to 8 columns, pointers as uppercase 0x hex, RenderingInfo
after each DxgKrnl event), from the tables of ``build.py`` through ``etw.MAPPING`` read backwards:
- the adapter's three segments as ReportSegment events (segment 2 reported twice: the later wins);
- its allocations as DCStart events (alive when the trace started) and Start events, a few of them
  stopped again, plus shared primaries whose Flags carry the kernel's high bits;
- where memory is: devices' references to some allocations (DeviceAllocation), where allocations are
  committed (ReportCommittedGlobalAllocationDCStart, ReportCommittedAllocation: one in a segment outside
  its sets, one through a device handle the trace never started), priority changes (one to 0), the
  bytes resident per segment, and the process's usage and budget per segment group;
- events of other providers, and other DxgKrnl events, as noise.
``etw_trace.etl`` is its .etl twin (``d3dkmddi etw sample.etl``, and what ``etw sample --summary`` reads): the
same events, packed by ``etl_build`` as Windows lays them out, its log-file header the XML's first event; each time
is the XML's to the 100 ns below (a FILETIME's unit: the XML's nanoseconds end in other digits).
``python -m d3dkmddi_py.samples.etw_build`` rewrites both; tests/etw/test_sample.py fails when either is stale.
"""
from __future__ import annotations

from pathlib import Path

from ..etw.outputs.command import SAMPLE_ETL_FILE as ETL_FILE, SAMPLE_FILE as FILE
from ..etw.catalog import KIND_BY_NAME, KINDS
from ..etw.model.mapping import ALLOCATION_TYPE, MAPPING, SEGMENT
from ..etw.model.registry import layout_of
from ..etw.model.schema import OPCODES, PROVIDER, PROVIDER_GUID, AllocationFlag
from ..etw.model.templates import IN_TYPES
from ..semantics import flags_member
from ..etw.model.times import UNIX_EPOCH_FILETIME, time_ns
from . import build, etl_build, sample_target

ADAPTER = 0xFFFFB80C4D2E5000
PROCESS = 0x1F40  # dwm.exe in the imagined session
DEVICE = 0xFFFFB80C4E1C2000
EOL = "\r\n"
NS = "http://schemas.microsoft.com/win/2004/08/events/event"
KERNEL_PROCESS = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")
EVENT_TRACE_GUID = "{68fdd900-4a3e-11d1-84f4-0000f80464e3}"  # the classic EventTrace header event

# Shared primaries: what the kernel logs for the desktop's swap chain (bits 20-31 are its own state).
PRIMARIES = (
    ("swap-chain back buffer of the shared primary", ("Primary", "Shareable", "SwapChainBackBuffer")),
    ("managed primary (DWM's redirection surface)", ("Primary", "ManagedPrimary", "Shareable", "CddWriteCombined")),
)


class _Clock:
    """tracerpt's local time (UTC+1) of each event in turn, to the nanosecond (the .etl twin holds each to its
    100 ns: a FILETIME's unit)."""

    def __init__(self):
        self.tick = 0

    def __call__(self) -> str:
        self.tick += 1
        ns = 123_456_789 + self.tick * 1_048_576
        return f"2026-11-23T10:15:{2 + ns // 1_000_000_000:02d}.{ns % 1_000_000_000:09d}+0100"


def _number(in_type: str, value) -> str:
    """A field's text as tracerpt writes it: Booleans as true/false, pointers in uppercase 0x hex, UInt32 right-aligned
    to 8 columns, Binary as 0x hex, the rest as they are."""
    kind = IN_TYPES[in_type].kind
    if kind == "bool":
        return "true" if value else "false"
    if kind == "pointer":
        return f"0x{value:X}"
    if in_type == "UInt32":
        return f"{value:8d}"
    if kind == "binary":
        return "0x" + bytes(value).hex().upper()
    return str(value)


def _event(clock, *, provider, guid, event_id, version, task, opcode, keywords, data, rendering=None,
           pid=4, tid=120, binary=None) -> str:
    t = "\t"
    name = f' Name="{provider}"' if provider else ""
    lines = [f'<Event xmlns="{NS}">', f"{t}<System>", f'{t}{t}<Provider{name} Guid="{guid}" />',
             f"{t}{t}<EventID>{event_id}</EventID>", f"{t}{t}<Version>{version}</Version>", f"{t}{t}<Level>0</Level>",
             f"{t}{t}<Task>{task}</Task>", f"{t}{t}<Opcode>{opcode}</Opcode>",
             f"{t}{t}<Keywords>{keywords}</Keywords>", f'{t}{t}<TimeCreated SystemTime="{clock()}" />',
             f'{t}{t}<Correlation ActivityID="{{00000000-0000-0000-0000-000000000000}}" />',
             f'{t}{t}<Execution ProcessID="{pid}" ThreadID="{tid}" ProcessorID="1" KernelTime="15" UserTime="0" />',
             f"{t}{t}<Channel />", f"{t}{t}<Computer />", f"{t}</System>"]
    if binary is not None:
        lines.append(f"{t}<BinaryEventData>{binary}</BinaryEventData>")
    else:
        lines.append(f"{t}<EventData>")
        lines += [f'{t}{t}<Data Name="{n}">{v}</Data>' for n, v in data]
        lines.append(f"{t}</EventData>")
    if rendering:
        op, task_name = rendering
        lines += [f'{t}<RenderingInfo Culture="en-US">', f"{t}{t}<Level>Log Always </Level>",
                  f"{t}{t}<Opcode>{op} </Opcode>", f"{t}{t}<Keywords>", f"{t}{t}{t}<Keyword>Resource </Keyword>",
                  f"{t}{t}</Keywords>", f"{t}{t}<Task>{task_name} </Task>", f"{t}{t}<Message></Message>",
                  f"{t}{t}<Channel></Channel>", f"{t}{t}<Provider>Microsoft-Windows-DxgKrnl </Provider>",
                  f"{t}</RenderingInfo>"]
    lines.append("</Event>")
    return EOL.join(lines) + EOL


def data_items(event_id: int, version: int, fields: dict) -> list:
    """(name, text) of each <Data> of an event's template: a counted array as one element per value."""
    out = []
    for f in layout_of(event_id, version):
        if f.count is not None:
            out += [(f.name, _number(f.in_type, v)) for v in fields[f.name]]
        else:
            out.append((f.name, _number(f.in_type, fields[f.name])))
    return out


def manifest_values(event_id: int, given: dict) -> dict:
    """Every field of a manifest event's template: ``given``, and the rest 0, empty, false or the nil GUID (a
    counted array of its count's values)."""
    out = {}
    for f in layout_of(event_id, KINDS[event_id].version):
        kind = IN_TYPES[f.in_type].kind
        blank = "" if kind in ("unicode", "ansi") else b"" if kind == "binary" else False if kind == "bool" else \
            "{00000000-0000-0000-0000-000000000000}" if kind == "guid" else 0.0 if kind == "float" else 0
        if f.name in given:
            out[f.name] = given[f.name]
        elif f.count is not None:
            count = f.count if isinstance(f.count, int) else out[f.count]
            out[f.name] = (blank,) * count
        else:
            out[f.name] = blank
    return out


class SampleEvent:
    """One event of the sample as both files hold it: its XML (``xml``) and its .etl form (``etl``), from one
    description: the time, the System values, and the payload (a DxgKrnl event's fields by its template, another
    provider's ``payload`` bytes)."""

    __slots__ = ("time", "system", "kind", "fields", "payload")

    def __init__(self, time: str, system: dict, *, kind=None, fields=None, payload: bytes = b""):
        self.time, self.system, self.kind, self.fields, self.payload = time, system, kind, fields, payload

    def xml(self) -> str:
        return _event(lambda: self.time, **self.system)

    def etl(self, start_ns: int) -> etl_build.EtlEvent:
        """The EtlEvent: ticks of the 10 MHz clock from the trace's start (``start_ns``, the header's time), so its
        FILETIME is this event's time to the 100 ns below."""
        s = self.system
        where = dict(process_id=s.get("pid", 4), thread_id=s.get("tid", 120), processor=1,
                     ticks=time_ns(self.time) // 100 - start_ns // 100)
        if self.kind is not None:
            return etl_build.dxgkrnl_event(self.kind, self.fields, **where)
        return etl_build.EtlEvent(s["guid"], s["event_id"], s["version"], self.payload, opcode=s["opcode"],
                                  task=s["task"], keyword=int(s["keywords"], 16), **where)


def _dxg_event(clock, kind, fields: dict) -> SampleEvent:
    return SampleEvent(clock(), dict(provider=PROVIDER, guid=PROVIDER_GUID, event_id=kind.event_id, version=kind.version,
                                     task=kind.task, opcode=OPCODES[kind.opcode], keywords="0x8000000000000040",
                                     data=data_items(kind.event_id, kind.version, fields),
                                     rendering=(kind.opcode, kind.event), pid=PROCESS if kind.event_id != 78 else 4),
                       kind=kind, fields=fields)


def _dxg(clock, kind, fields: dict) -> str:
    return _dxg_event(clock, kind, fields).xml()


def _mirror_fields(kind_name: str, cls, data: bytes, mapping) -> dict:
    """Event fields read back from a mirror record through MAPPING (the generator's only mapping)."""
    by_path = {leaf.path: leaf for leaf in cls._leaves_}
    out = {}
    for m in mapping:
        if m.mirror is None or m.mirror not in by_path:
            continue
        leaf = by_path[m.mirror]
        out[m.field] = int.from_bytes(data[leaf.offset:leaf.offset + leaf.size], "little")
    return out


def segment_events():
    """(ReportSegment fields) per segment report, in trace order."""
    seg_map = [m for m in MAPPING if m.mirror_type == SEGMENT]
    cls = getattr(sample_target(), build.SEGMENT_TYPE)
    data = build.segment_bytes()
    size = len(data) // len(build.SEGMENTS)
    blobs = [data[i * size:(i + 1) * size] for i in range(len(build.SEGMENTS))]
    out = []
    for i, blob in enumerate(blobs):
        fields = {"ulSegmentId": i + 1, "pDxgAdapter": ADAPTER, "SystemMemoryEndAddress": 0,
                  "MemorySegmentGroup": 1 if "Aperture" in build.SEGMENTS[i].flags else 0}
        fields.update(_mirror_fields("ReportSegment", cls, blob, seg_map))
        fields.setdefault("SystemMemoryEndAddress", 0)
        out.append(fields)
    return out


def allocation_events():
    """(opcode, note, fields) per AdapterAllocation event, in trace order."""
    tgt = sample_target()
    cls = getattr(tgt, ALLOCATION_TYPE)
    member, _ = flags_member(tgt.interface_version)
    alloc_map = [m for m in MAPPING if m.mirror_type == ALLOCATION_TYPE]
    data = build.allocation_bytes()
    size = len(data) // len(build.ALLOCATIONS)
    items = []
    for i, spec in enumerate(build.ALLOCATIONS):
        blob = data[i * size:(i + 1) * size]
        fields = _mirror_fields("AdapterAllocation", cls, blob, alloc_map)
        info = cls.from_buffer_copy(blob)
        view = getattr(info, member)
        fields["Flags"] = sum(int(m) for m in AllocationFlag if getattr(view, m.name, 0) == 1
                              and hasattr(type(view), m.name))
        items.append((spec.note, fields, i))
    for j, (note, names) in enumerate(PRIMARIES):
        fields = {"allocSize": 0x7E9000, "ulAlignment": 64 * build.KB, "dwReadSegment": build.seg_set(build.LOCAL),
                  "dwWriteSegment": build.seg_set(build.LOCAL), "PreferredSegment": build.LOCAL, "HintedBank": 0,
                  "dwEvictionSegment": build.seg_set(build.APERTURE), "Priority": build.PRIORITY["MAXIMUM"],
                  "Flags": sum(int(AllocationFlag[n]) for n in names)}
        items.append((note, fields, len(build.ALLOCATIONS) + j))
    out = []
    for note, fields, i in items:
        shared = i >= len(build.ALLOCATIONS)
        fields.update({
            "hProcessId": PROCESS, "hDevice": DEVICE, "pDxgAdapter": ADAPTER,
            "hVidMmGlobalAlloc": 0xFFFFB80C4E700000 + i * 0x80,
            "hDxgGlobalAlloc": 0 if i == 5 else 0xFFFFB80C4E600000 + i * 0x100,
            "hDxgSharedResource": 0xFFFFB80C4E900000 + i * 0x40 if shared else 0,
            "UsageVersion": 1 if shared else 0, "UsageFlags": 0,
            "Format": 21 if shared else 0, "SwizzledFormat": 0, "ByteOffset": 0,
            "Width": 1920 if shared else 0, "Height": 1080 if shared else 0, "Pitch": 7680 if shared else 0,
            "Depth": 0, "SlicePitch": 0, "BackingStoreWasPinned": False, "pSectionObject": 0,
            "PhysicalAdapterIndex": 0,
        })
        out.append(("DCStart" if i % 3 == 0 or shared else "Start", note, fields))
    return out


HEADER_DATA = (("BufferSize", 8192), ("Version", 0x0501000A), ("ProviderVersion", 22631), ("NumberOfProcessors", 2))
IMAGE = r"\Device\HarddiskVolume3\Windows\System32\dwm.exe"
THREAD_EVENT = "0400000010270000E8030000"  # a classic thread event's payload, as tracerpt gives one it cannot decode


def sample_events() -> list:
    """The sample's events in trace order (SampleEvent), the log-file header's event first."""
    clock = _Clock()
    out = [SampleEvent(clock(), dict(provider=None, guid=EVENT_TRACE_GUID, event_id=0, version=2, task=0, opcode=0,
                                     keywords="0x0", data=[(n, str(v)) for n, v in HEADER_DATA]))]
    out.append(SampleEvent(clock(), dict(provider=KERNEL_PROCESS[0], guid=KERNEL_PROCESS[1], event_id=1, version=3,
                                         task=1, opcode=1, keywords="0x8000000000000010",
                                         data=[("ProcessID", _number("UInt32", PROCESS)), ("ImageName", IMAGE)]),
                           payload=PROCESS.to_bytes(4, "little") + (IMAGE + "\0").encode("utf-16-le")))
    # The adapter itself (DxgKrnl AdapterDCStart, EventID 26): an event no entry reads, read from its template.
    out.append(_dxg_event(clock, KINDS[26], manifest_values(26, {
        "pDeviceObject": 0xFFFFB80C4D2E0000, "pDxgAdapter": ADAPTER, "NbVidPnSources": 1, "MaxSlotId": 3,
        "NbAsymetricProcessingNodes": 2, "ReservedTopology": (0, 1), "AdapterType": 0x10,
        "pMiniportContext": 0xFFFFB80C4D300000})))
    for node, engine, name in ((0, 1, "3D"), (1, 4, "Copy")):  # its engines (NodeMetadata, EventID 250): read only
        out.append(_dxg_event(clock, KINDS[250], {"pDxgAdapter": ADAPTER, "NodeOrdinal": node, "EngineType": engine,
                                                  "FriendlyName": name}))
    segments = segment_events()
    seg_kind = KIND_BY_NAME[("ReportSegment", "Info")]
    stale = dict(segments[1], Size=32 * build.MB, CommitLimit=32 * build.MB)  # before the BAR was resized
    out.append(_dxg_event(clock, seg_kind, stale))
    for fields in segments:
        out.append(_dxg_event(clock, seg_kind, fields))
    allocations = allocation_events()
    for n, (opcode, _note, fields) in enumerate(allocations):
        out.append(_dxg_event(clock, KIND_BY_NAME[("AdapterAllocation", opcode)], fields))
        if n == 7:
            out.append(SampleEvent(clock(), dict(provider=None, guid="{3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c}",
                                                 event_id=0, version=2, task=0, opcode=36, keywords="0x0", data=[],
                                                 binary=THREAD_EVENT), payload=bytes.fromhex(THREAD_EVENT)))
    for kind, fields in memory_events(allocations) + pressure_events(allocations):
        out.append(_dxg_event(clock, kind, fields))
    stop = KIND_BY_NAME[("AdapterAllocation", "Stop")]
    for n in (3, 5, 9):  # freed during the trace (5 has hDxgGlobalAlloc 0: removed by hVidMmGlobalAlloc)
        out.append(_dxg_event(clock, stop, allocations[n][2]))
    orphan = dict(allocations[0][2], hDxgGlobalAlloc=0xFFFFB80C4E6FF000, hVidMmGlobalAlloc=0xFFFFB80C4E7FF000)
    out.append(_dxg_event(clock, stop, orphan))  # created before the trace, never rundown: an unmatched Stop
    return out


def events_text(events=None) -> str:
    """The sample as tracerpt writes XML."""
    return "<Events>" + EOL + "".join(e.xml() for e in (events or sample_events())) + "</Events>" + EOL


def etl_file(events=None) -> bytes:
    """The sample's .etl twin: its first event is the log-file header (StartTime its time, the header's buffer size
    and processors), every other event packed by ``etl_build`` with its time as ticks of a 10 MHz clock."""
    header, *rest = events or sample_events()
    start = time_ns(header.time)
    facts = dict(HEADER_DATA)
    made = [e.etl(start) for e in rest]
    start_filetime = start // 100 + UNIX_EPOCH_FILETIME
    return etl_build.etl_bytes(made, processors=facts["NumberOfProcessors"], buffer_size=facts["BufferSize"],
                               compress=True, clock=etl_build.Clock(start_filetime=start_filetime),
                               end_filetime=start_filetime + max(e.ticks for e in made))


def device_handle(i: int) -> int:
    """The hVidMmAlloc of the sample's device reference to allocation ``i``."""
    return 0xFFFFB80C4E800000 + i * 0x40


LOCAL, NON_LOCAL = 0, 1  # D3DKMT_MEMORY_SEGMENT_GROUP


def memory_events(allocations) -> list:
    """(EventKind, fields) of the events that say where memory is, in trace order."""
    k = KIND_BY_NAME
    globals_ = [fields["hVidMmGlobalAlloc"] for _op, _note, fields in allocations]
    out = []
    for i in (0, 1, 10):  # the device's references: how VidMm's events name these allocations
        out.append((k[("DeviceAllocation", "DCStart" if allocations[i][0] == "DCStart" else "Start")], {
            "hProcessId": PROCESS, "hDevice": DEVICE, "pDxgAdapter": ADAPTER, "hVidMmAlloc": device_handle(i),
            "hVidMmGlobalAlloc": globals_[i], "hDxgResource": 0xFFFFB80C4EA00000 + i * 0x40, "hDxgSharedResource": 0,
            "hThunkAllocation": 0x40000040 + i * 0x40, "hThunkResource": 0, "PrivateRuntimeResourceHandle": 0,
            "pVirtualAddress": 0x100000 * (i + 1), "hProcessAllocDetails": 0xFFFFB80C4EB00000}))
    rundown = k[("ReportCommittedGlobalAllocation", "DCStart")]
    for i, segment, offset in ((0, 1, 0), (6, 3, 0x100000), (35, 1, 0x400000),
                               (18, 2, 0x200000)):  # 18's sets name segment 1 only: a placement outside them
        out.append((rundown, {"hGlobalAllocationHandle": globals_[i], "ulSegmentId": segment, "SegmentOffset": offset}))
    resident = k[("TotalBytesResidentInSegment", "Info")]
    for segment, resident_bytes in ((1, 0x1000000), (2, 0x200000), (3, 0x100000), (1, 0x1800000), (1, 0x1400000)):
        out.append((resident, {"DxgAdapter": ADAPTER, "SegmentId": segment, "TotalBytesResident": resident_bytes}))
    budget, usage = k[("VidMmProcessBudgetChange", "Info")], k[("VidMmProcessUsageChange", "Info")]
    for group, new in ((LOCAL, 0xC000000), (NON_LOCAL, 0x10000000)):
        out.append((budget, {"NewBudget": new, "OldBudget": 0, "pDxgAdapter": ADAPTER, "ProcessId": PROCESS,
                             "PhysicalAdapterIndex": 0, "NewPriorityBand": 1, "OldPriorityBand": 1,
                             "NewVisibilityState": 2, "OldVisibilityState": 2, "MemorySegmentGroup": group}))
    old = {LOCAL: 0, NON_LOCAL: 0}
    for group, new in ((LOCAL, 0x1400000), (NON_LOCAL, 0x200000), (LOCAL, 0x1C00000), (LOCAL, 0x1800000)):
        out.append((usage, {"NewUsage": new, "OldUsage": old[group], "pDxgAdapter": ADAPTER, "ProcessId": PROCESS,
                            "PhysicalAdapterIndex": 0, "MemorySegmentGroup": group}))
        old[group] = new
    committed = k[("ReportCommittedAllocation", "Info")]
    for handle, segment, offset in ((device_handle(1), 1, 0x1000000),
                                    (device_handle(10), 2, 0),  # 10's sets are segments 1 and 3
                                    (device_handle(99), 1, 0x2000000)):  # a device reference the trace never started
        out.append((committed, {"hProcessId": PROCESS, "hDevice": DEVICE, "hAllocationHandle": handle, "Pinned": False,
                                "EvictionResource": False, "Size": 0x400000, "ulSegmentId": segment,
                                "SegmentOffset": offset}))
    transfer = KINDS[53]  # PagingOpTransfer: one each way between segments 1 and 2/3
    for i, source, destination, size in ((1, 2, 1, 0x400000), (10, 1, 3, 0x200000)):
        out.append((transfer, manifest_values(53, {
            "pDxgAdapter": ADAPTER, "hDmaBuffer": 0xFFFFB80C4EC00000, "hAllocationGlobalHandle": globals_[i],
            "TransferSize": size, "SourceSegmentId": source, "DestinationSegmentId": destination,
            "DestinationSegmentOffset": 0x200000 * i})))
    priority = k[("SetAllocationPriority", "Info")]
    for handle, value in ((device_handle(0), build.PRIORITY["HIGH"]), (device_handle(10), 0),
                          (device_handle(99), build.PRIORITY["NORMAL"])):
        out.append((priority, {"hAllocationHandle": handle, "Priority": value}))
    return out


def pressure_events(allocations) -> list:
    """(EventKind, fields) of what the memory manager did under pressure, after ``memory_events``: the process's
    Local budget cut below its usage, a fill and a page-in while over it, two evictions (one through the device's
    handle), the usage back under the budget, and its commitment."""
    globals_ = [fields["hVidMmGlobalAlloc"] for _op, _note, fields in allocations]
    common = {"pDxgAdapter": ADAPTER, "ProcessId": PROCESS, "PhysicalAdapterIndex": 0}
    return [
        (KINDS[366], {**common, "NewBudget": 0x1000000, "OldBudget": 0xC000000, "NewPriorityBand": 1,
                      "OldPriorityBand": 1, "NewVisibilityState": 1, "OldVisibilityState": 2,
                      "MemorySegmentGroup": LOCAL}),  # occluded: the budget falls below the usage (24 MB)
        (KINDS[54], manifest_values(54, {"pDxgAdapter": ADAPTER, "hDmaBuffer": 0xFFFFB80C4EC00000,
                                         "hAllocationGlobalHandle": globals_[0], "FillSize": 0x100000,
                                         "SegmentId": 1, "SegmentOffset": 0})),
        (KINDS[73], {"hAllocationHandle": device_handle(0), "uiSegmentId": 1, "uliOffset": 0}),
        (KINDS[74], {"hGlobalAllocationHandle": globals_[1]}),  # paged into segment 1 by the first transfer
        (KINDS[321], {"pVidMmAlloc": device_handle(10), "ResidencyCount": 0}),
        (KINDS[53], manifest_values(53, {"pDxgAdapter": ADAPTER, "hDmaBuffer": 0xFFFFB80C4EC00000,
                                         "hAllocationGlobalHandle": globals_[1], "TransferSize": 0x800000,
                                         "SourceSegmentId": 1, "DestinationSegmentId": 2,
                                         "DestinationSegmentOffset": 0})),
        (KINDS[367], {**common, "NewUsage": 0xC00000, "OldUsage": 0x1800000, "MemorySegmentGroup": LOCAL}),
        (KINDS[371], {**common, "Commitment": 0xC00000, "OldCommitment": 0x1800000, "MemorySegmentGroup": LOCAL}),
    ]


def files() -> dict:
    events = sample_events()
    return {FILE: events_text(events).encode("ascii"), ETL_FILE: etl_file(events)}


def write(directory: Path | None = None) -> list:
    return build.write_files(files(), directory)


if __name__ == "__main__":
    for written in write():
        print(written)
