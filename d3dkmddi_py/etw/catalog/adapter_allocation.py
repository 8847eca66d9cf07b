"""AdapterAllocation Start / Stop / DCStart (events 33 / 34 / 35, task 21, templates
AdapterAllocation{Start,Stop,DCStart}Args_V2): an allocation the kernel created for the driver, with
what DXGK_ALLOCATIONINFO and its usage hint said, as the kernel logs them.  Version 3, which the manifest
lacks, adds PageTableOrDirectory (its evidence in ``VERSION_3``).  Start and DCStart add a live allocation, Stop removes it by hDxgGlobalAlloc
(hVidMmGlobalAlloc when that is 0)."""
from __future__ import annotations

from ... import render
from ..model.registry import (ALLOCATION_TYPE, FLAG_VIEW, USAGE_TYPE, Column, EventEntry, Mapping, Newer, StateTable,
                              TableSpec, field_columns, manifest_fields, register)
from ..model.schema import BOOLEAN, KERNEL_FLAGS, AllocationFlag, UsageFlag, flag_names
from ..model.section import Section, plural, process_text
from ._allocations import (EVENT, LIVE_ROW, MOST_BYTES, AdapterAllocations, AllocationEntry, Allocations, allocations,
                           identity_of, key, track)
from ._live_picture import PANEL

FIELDS = manifest_fields(33)
CHUNK = 65536  # live allocations checked column-wise at once at the trace's end  # version 2, the manifest's (Start, Stop and DCStart alike)
# Version 3 (the manifest lacks it) adds PageTableOrDirectory after the version-2 fields; its width is the
# manifest's win:Boolean (4 bytes), not etl-parser's (which reads a win:Boolean as 1 byte everywhere).
VERSION_3 = Newer(3, (("PageTableOrDirectory", BOOLEAN),), (
    ("../shared/etw/real/README.md",
     "AdapterAllocation (ids 33, 34, 35) has versions 2 and 3; version 3 adds fields after the version-2 ones (a "
     "public field list of version 3: ... BackingStoreWasPinned (Boolean), pSectionObject (Pointer), "
     "PhysicalAdapterIndex (UInt16), PageTableOrDirectory (Boolean))"),
    ("https://github.com/airbus-cert/etl-parser/blob/76b7c046866ce0469cd129ee3f7bb3799b34e271/etl/parsers/etw/"
     "Microsoft_Windows_DxgKrnl.py",
     "Microsoft_Windows_DxgKrnl_33_3, _34_3 and _35_3 (event_id 33, 34, 35, version=3): the fields of version 2 in "
     "their order, then PageTableOrDirectory (Apache-2.0; Windows templates generated from a newer build)"),
))
HANDLES = ("hDxgGlobalAlloc", "hVidMmGlobalAlloc", "hDxgSharedResource")

_M, A = Mapping, EVENT
MAPPING = (
    _M(A, "hProcessId", None, None, "the owning process: the kernel's, not in DXGK_ALLOCATIONINFO"),
    _M(A, "hDevice", None, None, "the kernel's device object, not in DXGK_ALLOCATIONINFO"),
    _M(A, "pDxgAdapter", None, None, "the kernel's adapter object: it groups allocations by adapter"),
    _M(A, "Flags", ALLOCATION_TYPE, FLAG_VIEW,
       "bits 0-13 carry DXGK_ALLOCATIONINFOFLAGS names (AllocationFlags bit map); each set bit is written to the "
       "member of that name in the view in force, if the view has one; bits 20-31 are the kernel's own state "
       "and are not written"),
    _M(A, "allocSize", ALLOCATION_TYPE, "Size", "the allocation's size"),
    _M(A, "ulAlignment", ALLOCATION_TYPE, "Alignment", "the allocation's alignment"),
    _M(A, "dwReadSegment", ALLOCATION_TYPE, "SupportedReadSegmentSet", "the read segment set (a segment set word)"),
    _M(A, "dwWriteSegment", ALLOCATION_TYPE, "SupportedWriteSegmentSet",
       "the write segment set (a segment set word)"),
    _M(A, "PreferredSegment", ALLOCATION_TYPE, "PreferredSegment.Value", "the DXGK_SEGMENTPREFERENCE word"),
    _M(A, "HintedBank", ALLOCATION_TYPE, "HintedBank.Value", "the DXGK_SEGMENTBANKPREFERENCE word"),
    _M(A, "dwEvictionSegment", ALLOCATION_TYPE, "EvictionSegmentSet", "the eviction segment set"),
    _M(A, "Priority", ALLOCATION_TYPE, "AllocationPriority", "the priority, read against the priority bands"),
    _M(A, "hVidMmGlobalAlloc", None, None, "kernel handle: identifies the allocation when hDxgGlobalAlloc is 0; "
                                           "the VidMm events name the allocation by it (hGlobalAllocationHandle)"),
    _M(A, "hDxgGlobalAlloc", None, None, "kernel handle: identifies the allocation (Stop removes it by this)"),
    _M(A, "hDxgSharedResource", None, None, "the kernel's shared resource (non-zero for shared allocations)"),
    _M(A, "UsageVersion", USAGE_TYPE, "Version",
       "DXGK_ALLOCATIONUSAGEHINT.Version (1: v1 is DXGK_ALLOCATIONUSAGEINFO1)"),
    _M(A, "UsageFlags", USAGE_TYPE, "v1.Flags.Value", "the DXGK_ALLOCATIONUSAGEINFO1 flag word (UsageFlags bit map, "
                                                      "same names and bits)"),
    _M(A, "Format", USAGE_TYPE, "v1.Format", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "SwizzledFormat", USAGE_TYPE, "v1.SwizzledFormat", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "ByteOffset", USAGE_TYPE, "v1.ByteOffset", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "Width", USAGE_TYPE, "v1.Width", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "Height", USAGE_TYPE, "v1.Height", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "Pitch", USAGE_TYPE, "v1.Pitch", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "Depth", USAGE_TYPE, "v1.Depth", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "SlicePitch", USAGE_TYPE, "v1.SlicePitch", "DXGK_ALLOCATIONUSAGEINFO1, same name"),
    _M(A, "BackingStoreWasPinned", None, None, "the kernel's residency state, no mirror member"),
    _M(A, "pSectionObject", None, None, "the kernel's section object (SectionSupplied allocations)"),
    _M(A, "PhysicalAdapterIndex", None, None, "the kernel's linked-adapter index; the manifest does not say it is "
                                              "DXGK_ALLOCATIONINFO.PhysicalAdapterIndex, so it is not written there"),
    _M(A, "PageTableOrDirectory", None, None, "version 3 only: the kernel's own page-table allocations"),
)


def identity(event) -> tuple:
    """The handle the allocation is known by: hDxgGlobalAlloc, or hVidMmGlobalAlloc when that is 0."""
    return identity_of(event.fields["hDxgGlobalAlloc"], event.fields["hVidMmGlobalAlloc"])


def apply(tracker, event) -> bytes:
    """Start and DCStart add a live allocation, Stop removes it; returns its DXGK_ALLOCATIONINFO bytes."""
    f = event.fields
    a = tracker.adapter(event.adapter).part(EVENT)
    data = tracker.packer.pack(ALLOCATION_TYPE, event)
    live = allocations(tracker)
    live.track(((event.opcode == "Stop", *(f[n] for n in LIVE_ROW[1:-2]), event.number, event.time),))
    k = key(event.adapter, f["hDxgGlobalAlloc"], f["hVidMmGlobalAlloc"])  # the one rule (``_allocations``)
    if event.opcode == "Stop":
        a.stopped += 1
        live.entries.pop(k, None)
        gone = a.allocations.pop(identity(event), None) if tracker.entries and k is not None else None
        if tracker.entries and gone is None:
            a.stops_unmatched += 1
        for later in (gone.later.values() if gone is not None else ()):  # its text goes: keep its findings
            tracker.keep_loose(later.event, later.findings)
        return data
    a.started += 1
    if tracker.entries and k is not None:
        entry = a.allocations[identity(event)] = AllocationEntry(event, data, tracker.packer.pack(USAGE_TYPE, event))
        live.entries[k] = entry
    return data


def findings(tracker, event, data) -> list:
    return [] if event.opcode == "Stop" else tracker.check(event.adapter, ALLOCATION_TYPE, data)


def record(tracker, event, data) -> tuple:
    checked = event.opcode != "Stop"  # a Stop's record is not checked: the allocation is gone
    return ALLOCATION_TYPE, data, tracker.view(event.adapter)[0] if checked else None, checked


def finish(tracker) -> None:
    """Each adapter's live allocations checked against its final segments, a chunk at a time, column-wise."""
    for a in tracker.adapters.values():
        entries = list(a.allocations.values())
        for start in range(0, len(entries), CHUNK):
            part = entries[start:start + CHUNK]
            found = tracker.check_rows(ALLOCATION_TYPE, [e.event.adapter for e in part], [True] * len(part),
                                       b"".join(e.data for e in part))
            for entry, fs in zip(part, found):
                entry.findings = list(fs)


class _Text(Section):
    def unknown(self, tracker) -> list:
        pk = tracker.packer
        return [f"{ALLOCATION_TYPE} {', '.join(pk.unknown_members(ALLOCATION_TYPE))}, {pk.flag_member} bits 14-31"]

    def heading(self, a) -> str:
        return plural(len(a.allocations), "live allocation")

    def adapter(self, out, tracker, a) -> None:
        pk = tracker.packer
        for handle, e in a.allocations.items():
            ev = e.event
            flags = ev.fields["Flags"]
            out.line(f"\n-- allocation {handle[0]} 0x{handle[1]:x}: {ev.opcode} event #{ev.number}, "
                     f"{process_text(ev.fields['hProcessId'])}, {render.tally(e.findings, none='no findings')}")
            kernel = flags & KERNEL_FLAGS
            note = (f"; kernel state {flag_names(AllocationFlag, kernel)}: not driver flags, not checked"
                    if kernel else "")
            dropped = flags & pk.unmapped_flags
            if dropped:
                note += f"; {flag_names(AllocationFlag, dropped)} not in {pk.flag_type}"
            named = flag_names(AllocationFlag, flags) if flags else "(none)"
            out.line(f"   event Flags = 0x{int(flags):x} {named}{note}")
            if ev.fields["hDxgSharedResource"]:
                out.line(f"   shared: hDxgSharedResource 0x{ev.fields['hDxgSharedResource']:x}")
            for later in e.later.values():  # what later events said of it (its placement, its priority)
                out.line(later.line + (f" (the last of {later.count})" if later.count > 1 else ""))
                out.findings(later.findings)
            out.record(ALLOCATION_TYPE, e.data, findings=e.findings, adapter=a.adapter)
            if any(e.usage):
                out.record(USAGE_TYPE, e.usage, explain=False, note="UsageVersion, UsageFlags, Format...")

    def summary(self, out, tracker, entry) -> None:
        adapters = tracker.adapters.values()
        live = [[*e.findings, *(f for later in e.later.values() for f in later.findings)]  # its own, later events'
                for a in adapters for e in a.allocations.values()]
        started, stopped = sum(a.started for a in adapters), sum(a.stopped for a in adapters)
        unmatched = sum(a.stops_unmatched for a in adapters)
        clean = sum(not found for found in live)
        errors = sum(render.count_severity(found, "error") for found in live)
        warnings = sum(render.count_severity(found, "warning") for found in live)
        out.line(f"allocations: {started} started (Start or DCStart), {stopped} stopped ({unmatched} of them not seen "
                 f"starting), {len(live)} live: {clean} without findings, {len(live) - clean} with "
                 f"{plural(errors, 'error')} and {plural(warnings, 'warning')} from "
                 f"{plural(len({f.rule_id for found in live for f in found}), 'distinct rule')}")
        saturated = sum(t.saturated for t in allocations(tracker).processes.values())
        if saturated:
            out.line(f"   the live bytes of {plural(saturated, 'process', 'processes')} passed 2**64-1 "
                     f"(0xffffffffffffffff): the tables and the picture show that value")
        unkeyed = allocations(tracker).unkeyed
        if unkeyed:
            out.line(f"   {plural(unkeyed, 'allocation')} started with hDxgGlobalAlloc and hVidMmGlobalAlloc both 0: "
                     f"counted, not kept (nothing names it)")


# after the head: the handles, the event's whole Flags word (its kernel bits 20-31 have no mirror bit), then the
# fields no mirror member holds; the mirror's leaves follow
COLUMNS = field_columns([(n, dict(FIELDS)[n]) for n in HANDLES]) + (Column("AllocationFlags", "int", field="Flags"),) \
    + field_columns([(m.field, dict(FIELDS + VERSION_3.adds)[m.field]) for m in MAPPING
                     if m.mirror_type is None and m.field not in HANDLES + ("pDxgAdapter",)],
                    optional=("PageTableOrDirectory",))

def live_rows(tracker, when):
    """A row per allocation live at the trace's end (by its key, in the order they started): the event
    that started it, its owner, its adapter and handles, and its size, sets and preferences (the priority its
    last SetAllocationPriority gave, if any), named as the allocations table names the members they fill."""
    for handle, kept in allocations(tracker).live.values():
        adapter, read, write, process, dxg, size, eviction, preferred, hinted, priority, number, time = kept
        yield (number, *when(time), process, adapter, handle, dxg, size, read, write, eviction, preferred, hinted,
               priority)


LIVE = StateTable("live", (
    ("number", "int"), ("time", "time"), ("ms", "float"), ("hProcessId", "handle"), ("adapter", "handle"),
    ("hVidMmGlobalAlloc", "handle"), ("hDxgGlobalAlloc", "handle"), ("Size", "hex"), ("SupportedReadSegmentSet", "int"),
    ("SupportedWriteSegmentSet", "int"), ("EvictionSegmentSet", "int"), ("PreferredSegment.Value", "int"),
    ("HintedBank.Value", "int"), ("AllocationPriority", "int")), live_rows)


def process_rows(tracker, when):
    """A row per hProcessId that owned an allocation event: allocations started (Start, DCStart), stopped, live at
    the end and their bytes, and the highest live bytes with the event that reached them."""
    for process, t in allocations(tracker).processes.items():  # bytes past a uint64: MOST_BYTES (the text says so)
        yield (process, t.started, t.stopped, t.live, min(t.live_bytes, MOST_BYTES), min(t.peak, MOST_BYTES),
               t.peak_number, *when(t.peak_time))


PROCESSES = StateTable("processes", (
    ("hProcessId", "handle"), ("started", "int"), ("stopped", "int"), ("live", "int"), ("live_bytes", "hex"),
    ("peak_live_bytes", "hex"), ("peak_number", "opt"), ("peak_time", "time"), ("peak_ms", "float")), process_rows)

register(EventEntry(
    event=EVENT, ids=(33, 34, 35), newer=(VERSION_3,), mapping=MAPPING, adapter="pDxgAdapter",
    bit_maps={"Flags": AllocationFlag, "UsageFlags": UsageFlag},
    table=TableSpec("allocations", COLUMNS, (ALLOCATION_TYPE, USAGE_TYPE)),
    apply=apply, findings=findings, record=record, text=_Text(), batched=True, unchecked=("Stop",), track=track,
    state_tables=(LIVE, PROCESSES), order=20, panel=PANEL, state=lambda tracker: Allocations(tracker),
    adapter_state=lambda: AdapterAllocations(),
    finish=finish))
