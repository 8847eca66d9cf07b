"""Every parameter of every public function, method and constructor, given a value of the wrong kind while
the other arguments are valid: the call returns, or raises the package's error (``errors.py``) with one short
line.  Never an AttributeError from deep inside (``check(info, adapter=[descriptor])`` was one), never a
message carrying an array's multi-line repr.  The functions, classes and methods are found (``public.py``);
each needs a valid call here, so a new one fails this test until it has one.  A constructor checks what a
user gives it once, where it comes in; where the package builds the object per event or per chunk, it does
so through an unchecked underscored classmethod.  An object the package takes back (an Event, an Adapter,
Columns, a memory) is handed to it after a construction that returned: what a constructor let through must
not crash there."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import os
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk, etw
from d3dkmddi_py._records import replace
from d3dkmddi_py.errors import D3dkmddiError
from d3dkmddi_py.resolve import resolve_layout
from d3dkmddi_py.samples import ALLOCATIONS_PATH, DIRECTORY, sample_adapter, sample_target
from d3dkmddi_py.semantics import Adapter, ValidationError

from ..conftest import require
from .public import MODULES, public_callables, public_classes, public_methods

ARGUMENT_MODULES = (*MODULES, "d3dkmddi_py.memory", "d3dkmddi_py.follow")  # every public function of the two, their own names


class NotBuilt(NamedTuple):
    """An exported class whose constructor is left out of the test, and why."""

    name: str
    reason: str


NOT_BUILT = ()  # every exported class's constructor is in the test

SAMPLE = sample_target()
ALLOC = SAMPLE.DXGK_ALLOCATIONINFO
DESCRIPTOR = SAMPLE.DXGK_SEGMENTDESCRIPTOR()
TRACE = DIRECTORY / "etw_trace.xml"
MADE_UP = "MadeUpArgumentEvent"

# The wrong kinds, each standing for a mistake a caller makes.
WRONG = {
    "None": None, "True": True, "-1": -1, "1.5": 1.5, "nan": float("nan"), "'sample'": "sample", "bytes": b"\x85",
    "[descriptor]": [DESCRIPTOR], "dict": {"a": 1}, "object()": object(), "array": np.arange(100),
    "huge int": 1 << 20000, "StringIO": io.StringIO(), "class": ALLOC,
}


def _folder() -> str:
    """A folder of two allocation blobs and the sample trace, in the test's working directory."""
    os.makedirs("blobs", exist_ok=True)
    for name in ("a.bin", "b.bin"):
        with open(os.path.join("blobs", name), "wb") as f:
            f.write(ALLOCATIONS_PATH.read_bytes()[:ALLOC._layout_.size * 3])
    os.makedirs("traces", exist_ok=True)
    with open(os.path.join("traces", "t.xml"), "wb") as f:
        f.write(TRACE.read_bytes())
    return "blobs"


def _info():
    """An allocation info that breaks no rule (the valid call of validate() returns)."""
    info = ALLOC()
    info.AllocationPriority, info.Size = 0x78000000, 0x10000
    return info


def _columns():
    return bulk.decode_array(ALLOC, ALLOCATIONS_PATH)


def _query():
    """A DXGK_QUERYSEGMENTOUT3 and its descriptors in memory: (memory, address of the query)."""
    q = SAMPLE.DXGK_QUERYSEGMENTOUT3()
    q.NbSegment, q.pSegmentDescriptor = 1, 0x1100
    return kmd.as_memory(bytes(q).ljust(0x100, b"\0") + bytes(SAMPLE.DXGK_SEGMENTDESCRIPTOR3()), base=0x1000), 0x1000


def _etl() -> bytes:
    """An .etl file of its log-file header alone."""
    from d3dkmddi_py.samples import etl_build

    return etl_build.etl_bytes([])


def _segment_fields() -> dict:
    return next(e for e in etw.read(TRACE) if e.event == "ReportSegment").fields


def _read_through():
    reader = etw.read(TRACE)
    for _event in reader:
        pass
    return reader


MADE_UP_ID = 1  # HighPagingLevel: an event of the manifest no entry reads, of two fields


def _entry():
    """An entry for an event no entry reads (no state change), unregistered again by the fixture."""
    from d3dkmddi_py.etw.model.registry import field_columns, manifest_fields

    fields = manifest_fields(MADE_UP_ID)
    return etw.EventEntry(event=MADE_UP, ids=(MADE_UP_ID,),
                          mapping=tuple(etw.Mapping(MADE_UP, n, None, None, "made up for the test") for n, _t in fields),
                          table=etw.TableSpec("made_up_argument", field_columns(fields)))


def _registered() -> str:
    """The made-up event's name, registered."""
    if MADE_UP not in etw.ENTRIES:
        etw.register(_entry())
    return MADE_UP


def _followed():
    return kmd.follow("DXGK_QUERYSEGMENTOUT3", *_query(), target=SAMPLE)


def _event(name: str = "AdapterAllocation"):
    return next(e for e in etw.read(TRACE) if e.event == name)


def _tracked():
    """A Tracker that has applied the sample trace."""
    tracker = etw.Tracker(SAMPLE)
    for event in etw.read(TRACE):
        tracker.apply(event)
    return tracker


def _fields(record) -> tuple:
    """A record's own fields as keywords: the valid construction of its class."""
    return (), {f.name: getattr(record, f.name) for f in type(record)._record_fields_}


def _finding():
    """The finding of an allocation info of priority 0."""
    (finding,) = kmd.check(ALLOC())
    return finding


def _trace():
    """The sample trace's one adapter."""
    return next(iter(etw.adapters(etw.read(TRACE), target=SAMPLE).values()))


def _image() -> str:
    """A raw memory image in the working directory: the sample's allocation infos."""
    with open("image.bin", "wb") as f:
        f.write(ALLOCATIONS_PATH.read_bytes())
    return "image.bin"


def _dump() -> str:
    """A kernel crash dump in the working directory, a page of the sample's allocation infos mapped at 0x..1000."""
    from d3dkmddi_py.samples.dump_build import Machine, write_dump

    machine = Machine()
    machine.write(DUMP_VA, ALLOCATIONS_PATH.read_bytes()[:0x100])
    return str(write_dump(Path("kernel.dmp"), machine, "kernel"))


DUMP_VA = 0xFFFFF8012A3B1000


def _ranges():
    return kmd.Ranges.of(b"\x85\x04\0\0", 0x1000, "the test's bytes")


def _columns_parts() -> tuple:
    from d3dkmddi_py.bulk._plan import plan_for

    columns = _columns()
    return (columns.layout, plan_for(columns.layout), [columns[n] for n in columns]), {
        "start": 0, "offset": 0, "buffers": None, "inputs": ()}


def _event_fields() -> tuple:
    event = _event()
    return (), {name: getattr(event, name) for name in etw.Event.__slots__}


# A valid call of each (the callable's qualified name: (args, kwargs)), built in the working directory.
VALID = {
    "layout_table": lambda: ((ALLOC,), {}),
    "layout_diff": lambda: ((ALLOC, "x86", "x64"), {}),
    "leaves": lambda: ((ALLOC,), {}),
    "parse_abi": lambda: (("x64",), {}),
    "parse_interface_version": lambda: (("WDDM3_0",), {}),
    "target": lambda: (("x64", "WDDM3_0"), {}),
    "build_bank_preference": lambda: (([3, (1, kmd.BankDirection.BOTTOM_UP)],), {}),
    "build_segment_preference": lambda: (([1, (3, 1)],), {}),
    "check": lambda: ((_info(),), {"adapter": sample_adapter()}),
    "validate": lambda: ((_info(),), {"adapter": sample_adapter()}),
    "explain": lambda: ((_info(),), {"adapter": sample_adapter()}),
    "field_meanings": lambda: ((_info(),), {"adapter": sample_adapter()}),
    "decode_bank_preference": lambda: ((0x0183,), {}),
    "decode_priority": lambda: ((0x78000001,), {}),
    "decode_segment_flags": lambda: ((0x485,), {"target": ("x64", "WDDM2_0")}),
    "decode_segment_preference": lambda: ((0x8C1,), {}),
    "from_dict": lambda: ((kmd.to_dict(ALLOC()),), {}),
    "to_dict": lambda: ((ALLOC(),), {}),
    "power_behaviour": lambda: ((0x180,), {}),
    "segment_set": lambda: ((0x80000003,), {"target": ("x64", "WDDM2_0")}),
    "segment_set_mask": lambda: (([1, 2],), {"system_memory": True}),
    "decode": lambda: (("DXGK_SEGMENTFLAGS", "85 04 00 00"), {"target": ("x64", "WDDM2_0"), "count": 1}),
    "decode_one": lambda: (("DXGK_QUERYSEGMENTOUT3",), {"memory": _query()[0], "address": "1000", "target": SAMPLE,
                                                        "follow": True, "offset": 0, "kind": "auto", "path": None}),
    "parse_hex": lambda: (("85 04 00 00",), {}),
    "parse_windbg": lambda: (("fffff801`2a3b4000  00000485 00000001",), {"origin": "dump"}),
    "render_text": lambda: ((kmd.decode_one(ALLOC, bytes(ALLOC._layout_.size)),), {"title": "one", "nonzero": True}),
    "record_json": lambda: ((ALLOC(),), {"index": 1, "offset": 8, "address": 0x1000}),
    "report": lambda: ((ALLOC._c_name_,), {"path": ALLOCATIONS_PATH, "target": SAMPLE, "count": 2,
                                         "adapter": sample_adapter(), "validate": True, "out": io.StringIO()}),
    "column_findings": lambda: ((_columns(),), {"adapter": sample_adapter()}),
    "decode_array": lambda: ((ALLOC, ALLOCATIONS_PATH), {"offset": 0, "count": 2, "out": _columns()}),
    "iter_chunks": lambda: ((ALLOC, ALLOCATIONS_PATH), {"count": 4, "chunk_records": 2, "reuse": True}),
    "validate_array": lambda: ((ALLOC, ALLOCATIONS_PATH), {"count": 2, "adapter": sample_adapter()}),
    "write_records": lambda: ((ALLOC, ALLOCATIONS_PATH, "out.csv"), {"fmt": "csv", "count": 2, "progress": False,
                                                                    "chunk_records": 1}),
    "get_include": lambda: ((), {}),
    "effective_segment_set": lambda: ((ALLOC(),), {}),
    "check_priority": lambda: ((0x78000000,), {"target": SAMPLE}),
    "effective_size": lambda: ((4097,), {"abi": "x86"}),
    "flags_member": lambda: ((0x5023,), {}),
    "rule_text": lambda: (("SEGFLAGS.CPUVISIBLE_ON_APERTURE",), {}),
    "describe_segment_set": lambda: ((kmd.segment_set(3),), {}),
    "is_aperture": lambda: ((0x4,), {}),
    "column_dtypes": lambda: ((ALLOC,), {}),
    "write_columns": lambda: (([_columns()], "out.jsonl"), {"fmt": "jsonl", "progress": None, "inputs": ()}),
    "records_per_chunk": lambda: ((ALLOC,), {"chunk_bytes": 1 << 20}),
    "columns_of_bytes": lambda: ((resolve_layout(ALLOC), bytes(ALLOC._layout_.size)), {"start": 1, "offset": 8}),
    "blob_files": lambda: ((_folder(),), {"pattern": "*.bin"}),
    "decode_file": lambda: ((os.path.join(_folder(), "a.bin"), ALLOC), {"offset": 0, "validate": True,
                                                                         "adapter": sample_adapter()}),
    "file_findings": lambda: ((os.path.join(_folder(), "a.bin"), ALLOC), {"adapter": sample_adapter()}),
    "decode_folder": lambda: ((_folder(), ALLOC), {"pattern": "*.bin", "adapter": sample_adapter()}),
    "folder_findings": lambda: ((_folder(), ALLOC), {"pattern": "*.bin", "adapter": sample_adapter()}),
    "trace_table": lambda: (("traces/t.xml" if _folder() else None,), {"table": "segments", "target": SAMPLE}),
    "trace_files": lambda: (("traces" if _folder() else None,), {"pattern": "*.xml"}),
    "trace_allocations": lambda: (("traces" if _folder() else None,), {"pattern": "*.xml", "target": SAMPLE}),
    "trace_findings": lambda: (("traces" if _folder() else None,), {"pattern": "*.xml", "target": SAMPLE}),
    "as_memory": lambda: ((b"\x85\x04\0\0",), {"base": 0x1000, "origin": "bytes"}),
    "parse_address": lambda: (("fffff801`2a3b4058",), {"what": "address"}),
    "follow": lambda: (("DXGK_QUERYSEGMENTOUT3", *_query()), {"target": SAMPLE, "counts": None, "max_records": 10,
                                                            "max_bytes": 4096, "table": None, "opaque": None}),
    "follow_all": lambda: (("DXGK_QUERYSEGMENTOUT3", *_query(), 1), {"target": SAMPLE, "counts": None,
                                                                      "max_records": 10, "max_bytes": 4096,
                                                                      "table": None, "opaque": None}),
    "check_target_address": lambda: ((resolve_layout("DXGK_QUERYSEGMENTOUT3", SAMPLE), 0x1000, 1), {}),
    "render_follow_lines": lambda: ((_followed(),), {"meanings": True, "findings": True, "adapter": None}),
    "follow_json_pieces": lambda: ((_followed(),), {"meanings": False, "findings": True, "adapter": None}),
    "render_follow": lambda: ((_followed(),), {"meanings": True}),
    "follow_json": lambda: ((_followed(),), {"meanings": False}),
    "segments_adapter": lambda: ((_followed(),), {}),
    "Adapter.from_bytes": lambda: (("DXGK_SEGMENTDESCRIPTOR3", [bytes(SAMPLE.DXGK_SEGMENTDESCRIPTOR3())]),
                                   {"target": SAMPLE}),
    "Adapter.from_descriptors": lambda: (([DESCRIPTOR],), {"abi": "x64", "interface_version": "WDDM3_0"}),
    "Adapter.build": lambda: ((0x485,), {"target": SAMPLE, "descriptor": "DXGK_SEGMENTDESCRIPTOR"}),
    "Adapter.descriptor": lambda: ((sample_adapter(), 1), {}),
    "Adapter.flags": lambda: ((sample_adapter(), 1), {}),
    "Adapter.segment_flags": lambda: ((sample_adapter(), 1), {}),
    "Adapter.has_flag": lambda: ((sample_adapter(), 1, kmd.SegmentFlag.Aperture), {}),
    "Adapter.is_aperture": lambda: ((sample_adapter(), 3), {}),
    "Adapter.nb_of_banks": lambda: ((sample_adapter(), 1), {}),
    "Columns.rows": lambda: ((_columns(),), {}),
    "Columns.keys": lambda: ((_columns(),), {}),
    "Columns.items": lambda: ((_columns(),), {}),
    "Columns.values": lambda: ((_columns(),), {}),
    "Columns.to_pandas": lambda: ((_columns(),), {}),
    "Columns.to_arrow": lambda: ((_columns(),), {}),
    "Columns.to_csv": lambda: ((_columns(), "out.csv"), {"header": False}),
    "Columns.to_jsonl": lambda: ((_columns(), "out.jsonl"), {}),
    "Columns.to_parquet": lambda: ((_columns(), "out.parquet"), {}),
    "read": lambda: ((TRACE,), {"name": "trace", "fast": True}),
    "summary": lambda: ((_etl(),), {"name": "trace"}),
    "from_records": lambda: (([{"event": "ReportSegment", "version": 1, "fields": _segment_fields()}],), {}),
    "adapters": lambda: ((etw.read(TRACE),), {"target": SAMPLE, "series": True}),
    "applies": lambda: (("SEGFLAGS.CPUVISIBLE_ON_APERTURE",), {}),
    "descriptor_type": lambda: (("WDDM2_0",), {}),
    "mapping_table": lambda: ((), {}),
    "flag_names": lambda: ((etw.AllocationFlag, 5), {}),
    "register": lambda: ((_entry(),), {}),
    "unregister": lambda: ((_registered(),), {}),
    "registered": lambda: ((_entry(),), {}),
    "plot": lambda: ((TRACE, "memory.svg"), {"target": SAMPLE, "name": "trace"}),
    "Event.where": lambda: ((next(iter(etw.read(TRACE))),), {}),
    "TraceReader.check_found": lambda: ((_read_through(),), {}),
    "EventEntry.optional": lambda: ((etw.ENTRIES["ReportSegment"],), {}),
    "EventEntry.kinds": lambda: ((etw.ENTRIES["ReportSegment"],), {}),
    "packer": lambda: (("x64", "WDDM3_0"), {}),
    "Tracker()": lambda: ((SAMPLE,), {"entries": True, "series": False}),
    "Tracker.apply": lambda: ((etw.Tracker(SAMPLE), _event()), {}),
    "Tracker.finish": lambda: ((_tracked(),), {}),
    "Tracker.pointer_note": lambda: ((_tracked(),), {}),
    "Packer()": lambda: ((SAMPLE,), {}),
    "Packer.record": lambda: ((etw.packer("x64", "WDDM3_0"), "DXGK_ALLOCATIONINFO", _event().fields),
                              {"where": lambda: "the test's event"}),
    "Packer.unknown_members": lambda: ((etw.packer("x64", "WDDM3_0"), "segment descriptor"), {}),
    "Packer.pack": lambda: ((etw.packer("x64", "WDDM3_0"), "DXGK_ALLOCATIONINFO", _event()), {}),
    "Tracker.adapter": lambda: ((etw.Tracker(SAMPLE), 0x1000), {}),
    "Tracker.part": lambda: ((etw.Tracker(SAMPLE), "AdapterAllocation"), {}),
    "Tracker.sample": lambda: ((etw.Tracker(SAMPLE), _event("TotalBytesResidentInSegment"), "resident", 1, 5), {}),
    "Tracker.note": lambda: ((etw.Tracker(SAMPLE), _event(), "the test's note"), {}),
    "Tracker.keep_loose": lambda: ((etw.Tracker(SAMPLE), _event(), [_finding()]), {}),
    "Tracker.view": lambda: ((_tracked(), _event().adapter), {}),
    "Tracker.segments_changed": lambda: ((_tracked(), _event().adapter), {}),
    "Tracker.check": lambda: ((_tracked(), _event().adapter, "DXGK_ALLOCATIONINFO", bytes(ALLOC())), {}),
    "Tracker.check_rows": lambda: ((_tracked(), "DXGK_ALLOCATIONINFO", [_event().adapter], [True], bytes(ALLOC())),
                                   {}),
    "AdapterTrace.part": lambda: ((_trace(), "ReportSegment"), {}),
    "Series()": lambda: ((True,), {}),
    "Series.add": lambda: ((etw.Series(True), 7, 0x10000), {}),
    "Column()": lambda: (("Count", "int"), {"field": "Count", "value": None}),
    "Adapter()": lambda: (((DESCRIPTOR,),), {"abi": "x64", "interface_version": "WDDM3_0"}),
    "Columns()": _columns_parts,
    "Finding()": lambda: _fields(_finding()),
    "Reference()": lambda: _fields(_finding().reference),
    "Rule()": lambda: _fields(next(iter(kmd.semantics.RULES.values()))),
    "LayoutDiff()": lambda: _fields(kmd.layout_diff(ALLOC, "x86", "x64")),
    "LayoutDiff.groups": lambda: ((kmd.layout_diff(ALLOC, "x86", "x64"),), {}),
    "Leaf()": lambda: _fields(kmd.leaves(ALLOC)[0]),
    "Target()": lambda: (("x64", kmd.InterfaceVersion.WDDM3_0), {"force_padding": False}),
    "EffectiveSegmentSet()": lambda: _fields(kmd.semantics.effective_segment_set(_info())),
    "Placement()": lambda: ((), {"alloc_info": _info(), "segment_id": 1, "offset": 0x1000, "target": SAMPLE,
                                    "how": "committed to"}),
    "Preferences()": lambda: _fields(kmd.decode_bank_preference(0x0183)),
    "BankPreferenceEntry()": lambda: _fields(kmd.decode_bank_preference(0x0183).entries[0]),
    "SegmentPreferenceEntry()": lambda: _fields(kmd.decode_segment_preference(0x8C1).entries[0]),
    "Slot()": lambda: _fields(kmd.decode_segment_preference(0x8C1 | 2 << 18).after_end[0]),
    "Priority()": lambda: _fields(kmd.decode_priority(0x78000001)),
    "SegmentFlagsInfo()": lambda: _fields(kmd.decode_segment_flags(0x485, target=("x64", "WDDM2_0"))),
    "SegmentSet()": lambda: _fields(kmd.segment_set(0x80000003)),
    "Event()": _event_fields,
    "EventKind()": lambda: _fields(_event().kind),
    "TraceReader()": lambda: ((TRACE,), {"name": "trace", "chunk_size": 1 << 16, "fast": True}),
    "AdapterTrace()": lambda: _fields(_trace()),
    "SegmentEntry()": lambda: _fields(next(iter(_trace().segments.values()))),
    "AllocationEntry()": lambda: _fields(next(iter(_trace().allocations.values()))),
    "Mapping()": lambda: _fields(_entry().mapping[0]),
    "EventEntry()": lambda: _fields(_entry()),
    "TableSpec()": lambda: _fields(_entry().table),
    "Progress()": lambda: (("records", 10), {"stream": io.StringIO(), "delay": 0.0, "clock": lambda: 1.5, "width": 20,
                                             "unit": "records"}),
    "Progress.update": lambda: ((bulk.Progress("records", 10, io.StringIO(), delay=0), 5), {}),
    "Progress.close": lambda: ((bulk.Progress("records", 10, io.StringIO(), delay=0), 10), {}),
    "Progress.abandon": lambda: ((bulk.Progress("records", 10, io.StringIO(), delay=0),), {}),
    "Ranges()": lambda: ((), {"origin": "the test's memory"}),
    "Ranges.of": lambda: ((b"\x85\x04\0\0",), {"base": 0x1000, "origin": "the test's bytes"}),
    "Ranges.add": lambda: ((kmd.Ranges(), 0x1000, b"\x85\x04"), {"origin": "the test's bytes"}),
    "Ranges.read": lambda: ((_ranges(), 0x1000, 4), {}),
    "Ranges.spans": lambda: ((_ranges(),), {}),
    "WinDbgLog()": lambda: (("fffff801`2a3b4000  00000485 00000001",), {"origin": "dump"}),
    "WinDbgLog.dump_at": lambda: ((kmd.WinDbgLog("fffff801`2a3b4000  00000485 00000001"), 0xFFFFF8012A3B4004), {}),
    "WinDbgLog.memory_at": lambda: ((kmd.WinDbgLog("fffff801`2a3b4000  00000485 00000001"),),
                                    {"address": 0xFFFFF8012A3B4000, "what": "address", "size": 8}),
    "ReadObject()": lambda: ((_ranges(),), {"origin": "the test's reader"}),
    "ReadObject.read": lambda: ((kmd.ReadObject(_ranges()), 0x1000, 4), {}),
    "ImageFile()": lambda: ((_image(),), {"base": 0x10000}),
    "ImageFile.read": lambda: ((kmd.ImageFile(_image(), 0x10000), 0x10000, 8), {}),
    "KernelDump()": lambda: ((_dump(),), {"directory_table_base": None}),
    "KernelDump.translate": lambda: ((kmd.KernelDump(_dump()), DUMP_VA), {}),
    "KernelDump.read": lambda: ((kmd.KernelDump(_dump()), DUMP_VA, 8), {}),
    "db_command": lambda: ((0xFFFFF8012A3B4058, 16), {}),
    "pointer_members": lambda: ((resolve_layout("DXGK_QUERYSEGMENTOUT3", SAMPLE),), {}),
    "Node()": lambda: _fields(_followed()),
    "Node.link": lambda: ((_followed(), "pSegmentDescriptor"), {}),
    "Link()": lambda: _fields(_followed().link("pSegmentDescriptor")),
    "Missing()": lambda: ((0x2000, "unread", "no bytes at 00002000"), {}),
}


def _node_use(node, **changes):
    """What the package does with a followed record: print it as text and JSON, and make an adapter of it."""
    made = replace(node, **changes)
    try:
        kmd.segments_adapter(made)
    except D3dkmddiError:
        pass  # an adapter needs every descriptor read: a refusal is the package's
    return kmd.render_follow(made), kmd.follow_json(made)


def _memory_use(address: int):
    """A memory handed to decode_one: the record at ``address``, where the valid construction holds bytes."""
    return lambda memory: kmd.decode_one("DXGK_SEGMENTFLAGS", memory=memory, address=address, target=SAMPLE)


def _ranges_use(memory):
    memory.add(0x1000, b"\x85\x04\0\0", "the test's bytes")
    return _memory_use(0x1000)(memory)


# What the package does with an object of a class it takes back, once a construction with a wrong kind returned:
# whatever the constructor let through must be refused there in one line, not crash (a hand-built Event with bad
# fields reached the Tracker's per-event code).  The other classes are only returned by the package.
TAKEN_BACK = {
    "Event()": lambda event: etw.Tracker(SAMPLE).apply(event),
    "EventKind()": lambda kind: etw.Event(1, kind, _event().version, _event().fields),
    "Tracker()": lambda tracker: (tracker.apply(_event()), tracker.finish()),
    "Series()": lambda series: series.add(1, 2),
    "Packer()": lambda packer: packer.record("DXGK_ALLOCATIONINFO", _event().fields),
    "TraceReader()": lambda reader: [None for _event in reader] and reader.check_found(),
    "Adapter()": lambda adapter: kmd.check(_info(), adapter=adapter),
    "Placement()": kmd.check,
    "SegmentSet()": kmd.semantics.describe_segment_set,
    "BankPreferenceEntry()": lambda entry: kmd.build_bank_preference([entry]),
    "SegmentPreferenceEntry()": lambda entry: kmd.build_segment_preference([entry]),
    "Preferences()": kmd.build_bank_preference,
    "Columns()": lambda columns: (bulk.column_findings(columns), bulk.write_columns([columns], "out.csv", fmt="csv")),
    "Target()": lambda t: kmd.decode("DXGK_SEGMENTFLAGS", "85 04 00 00", target=t, count=1),
    "Progress()": lambda bar: bulk.write_columns([_columns()], "out.csv", fmt="csv", progress=bar),
    "Ranges()": _ranges_use, "WinDbgLog()": _memory_use(0xFFFFF8012A3B4000), "ReadObject()": _memory_use(0x1000),
    "ImageFile()": _memory_use(0x10000), "KernelDump()": _memory_use(DUMP_VA),
    "Node()": lambda node: (kmd.render_follow(node), kmd.follow_json(node), kmd.segments_adapter(node)),
    "Link()": lambda link: _node_use(_followed(), links=(link,)),
    "Missing()": lambda missing: _node_use(_followed(), links=(replace(_followed().link("pSegmentDescriptor"),
                                                                       items=(missing,)),)),
}


def _functions() -> dict:
    """Qualified name -> the function (a function exported by two modules once), methods unbound."""
    found = {}
    for module_name, name in public_callables(ARGUMENT_MODULES):
        found.setdefault(name, getattr(importlib.import_module(module_name), name))
    for module_name, class_name, name in public_methods(ARGUMENT_MODULES):
        cls = getattr(importlib.import_module(module_name), class_name)
        value = vars(cls)[name]
        found[f"{class_name}.{name}"] = getattr(cls, name) if isinstance(value, classmethod) else value
    left_out = {n.name for n in NOT_BUILT}
    for module_name, name in public_classes(ARGUMENT_MODULES):
        if name not in left_out:
            found[f"{name}()"] = getattr(importlib.import_module(module_name), name)
    return found


def _signature(fn) -> inspect.Signature:
    """A record class's constructor takes its fields (``_records`` gives it no signature of its own)."""
    fields = getattr(fn, "_record_fields_", None)
    if fields is None:
        return inspect.signature(fn)
    return inspect.Signature([inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for f in fields])


FUNCTIONS = _functions()
CASES = [(name, param) for name, fn in FUNCTIONS.items()
         for param in _signature(fn).parameters
         if param not in ("self", "cls")]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield
    if MADE_UP in etw.ENTRIES:
        etw.unregister(MADE_UP)


def test_every_public_function_has_a_valid_call_here():
    assert sorted(set(FUNCTIONS) - set(VALID)) == []
    assert sorted(set(VALID) - set(FUNCTIONS)) == []  # a name that is gone
    assert sorted(set(TAKEN_BACK) - set(FUNCTIONS)) == []
    assert sorted({n.name for n in NOT_BUILT} - {name for _module, name in public_classes(ARGUMENT_MODULES)}) == []


def _call(fn, args, kwargs, use=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumpyMissingWarning and friends are not errors
        out = fn(*args, **kwargs)
        if use is not None:
            use(out)
        if inspect.isgenerator(out) or hasattr(out, "__next__"):
            for _ in zip(range(3), out):
                pass
        for method in ("compute",):  # a Dask table: its tasks are where a bad argument would surface
            if hasattr(out, method) and not inspect.isclass(out):
                getattr(out, method)(scheduler="sync")


@pytest.mark.parametrize("name, param", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_a_wrong_kind_of_argument_is_the_packages_error_in_one_line(name, param):
    fn = FUNCTIONS[name]
    if name.startswith(("decode_folder", "folder_findings", "trace_", "Columns.to_pandas", "Columns.to_arrow")):
        require(importlib.util.find_spec("dask") is not None, "dask, pandas and pyarrow (the test extra)")
    if name.startswith("KernelDump"):
        require(importlib.util.find_spec("kdmp_parser") is not None, "kdmp-parser (the test extra)")
    args, kwargs = VALID[name]()
    signature = _signature(fn)
    bound = signature.bind(*args, **kwargs)
    use = TAKEN_BACK.get(name)
    _call(fn, bound.args, bound.kwargs, use)  # the valid call works
    for label, wrong in WRONG.items():
        args, kwargs = VALID[name]()
        bound = signature.bind(*args, **kwargs)
        kind = signature.parameters[param].kind
        bound.arguments[param] = (wrong,) if kind is inspect.Parameter.VAR_POSITIONAL else \
            {"x": wrong} if kind is inspect.Parameter.VAR_KEYWORD else wrong
        try:
            _call(fn, bound.args, bound.kwargs, use)
        except ValidationError:
            pass  # every finding, one per line, by design
        except D3dkmddiError as exc:
            message = str(exc)
            assert "\n" not in message.strip() and len(message) < 600, (label, message[:1000])
        except BaseException as exc:  # noqa: BLE001 - the point: only the package's errors get out
            pytest.fail(f"{name}({param}={label}) raised {type(exc).__name__}: {str(exc)[:300]}")


# ------------------------------------------------------------------ the cases issue 21 names
@pytest.mark.parametrize("call", [kmd.check, kmd.validate, kmd.explain, kmd.field_meanings])
def test_an_adapter_given_as_a_list_of_descriptors_is_the_packages_error(call):
    with pytest.raises(D3dkmddiError, match=r"^adapter must be a semantics\.Adapter .* not \[DXGK_SEGMENTDESCRIPTOR"
                                            r".*; build one from descriptors with Adapter\.from_descriptors"):
        call(_info(), adapter=[DESCRIPTOR])
    assert kmd.check(_info(), adapter=Adapter.from_descriptors([DESCRIPTOR])) is not None


def test_report_with_adapter_sample_is_the_packages_error_naming_the_sample_adapter():
    with pytest.raises(D3dkmddiError, match=r"adapter must be a semantics\.Adapter .* not 'sample'; the command's "
                                            r"--adapter sample is d3dkmddi_py\.samples\.sample_adapter\(\)"):
        kmd.report(ALLOC, path=ALLOCATIONS_PATH, adapter="sample")
    text = kmd.report(ALLOC, path=ALLOCATIONS_PATH, count="all", adapter=sample_adapter(), validate=True)
    assert "ALLOCINFO." in text


@pytest.mark.parametrize("progress", [io.StringIO(), object(), True])
def test_write_columns_with_another_progress_is_the_packages_error(progress):
    with pytest.raises(D3dkmddiError, match=r"^progress must be a bulk\.Progress or None, not "):
        bulk.write_columns([_columns()], "out.csv", fmt="csv", progress=progress)
    assert not os.path.exists("out.csv")


def test_a_message_never_carries_an_arrays_multi_line_repr():
    for call in (lambda: kmd.check(np.arange(100), "DXGK_SEGMENTFLAGS"),
                 lambda: bulk.decode_array(ALLOC, ALLOCATIONS_PATH, offset=np.arange(100)),
                 lambda: bulk.iter_chunks(ALLOC, ALLOCATIONS_PATH, chunk_records=np.arange(100))):
        with pytest.raises(D3dkmddiError) as error:
            call()
        assert "\n" not in str(error.value) and "array([ 0, 1, 2," in str(error.value)


@pytest.mark.parametrize("value", [1 << 32, -1, "x", 1.5])
def test_a_word_argument_of_the_wrong_kind_or_out_of_its_width_names_the_range(value):
    """One helper (errors.integer_argument with a maximum) says a word's range, whatever is wrong with the value."""
    from d3dkmddi_py.semantics import check_priority

    with pytest.raises(D3dkmddiError, match=r"^priority must be an integer 0\.\.0xffffffff, not "):
        check_priority(value)


# ------------------------------------------------------------------ the cases issue 30 names (memory and follow)
@pytest.mark.parametrize("address, count, said", [
    (None, 16, r"^db_command: address must be an integer 0\.\.0xffffffffffffffff, not None$"),
    (0x1000, -5, r"^db_command: count must be an integer 1\.\.0xfffffffffffff000, not -5$"),  # it printed L0x-5
    (1 << 70, 16, r"^db_command: address must be an integer 0\.\.0xffffffffffffffff, not 1180591620717411303424$"),
    (0xFFFFFFFFFFFFFFF0, 32, r"^db_command: count must be an integer 1\.\.0x10, not 32$"),
])
def test_db_command_of_none_a_negative_count_or_a_71_bit_address_is_the_packages_error(address, count, said):
    from d3dkmddi_py.memory import db_command

    with pytest.raises(D3dkmddiError, match=said):
        db_command(address, count)
    assert db_command(0xFFFFF8012A3B4058, 0x1C) == "db fffff801`2a3b4058 L0x1c"


def test_pointer_members_of_a_str_and_a_table_entry_of_another_kind_are_the_packages_error():
    from d3dkmddi_py import _spec
    from d3dkmddi_py.follow import pointer_members

    with pytest.raises(D3dkmddiError, match=r"^unknown type 'x' at x64 "):
        pointer_members("x")
    assert pointer_members("DXGK_QUERYSEGMENTOUT3") == pointer_members(resolve_layout("DXGK_QUERYSEGMENTOUT3"))
    memory, address = _query()
    key = ("DXGK_QUERYSEGMENTOUT3", "pSegmentDescriptor")
    with pytest.raises(D3dkmddiError, match=r"^table\[\('DXGK_QUERYSEGMENTOUT3', 'pSegmentDescriptor'\)\] must be a "
                                            r"_spec\.PointsTo, not 3$"):
        kmd.follow("DXGK_QUERYSEGMENTOUT3", memory, address, target=SAMPLE, table={key: 3})
    with pytest.raises(D3dkmddiError, match=r"^opaque: a key is 'hAllocation', not a \(TYPE, member\) pair of strs$"):
        kmd.follow("DXGK_QUERYSEGMENTOUT3", memory, address, target=SAMPLE, opaque={"hAllocation": "a handle"})
    # an entry of the right kinds naming a member the record lacks: named when it is used
    entry = _spec.POINTS_TO[key]
    wrong = _spec.PointsTo(entry.type, "NbSegments", entry.quotes, entry.page, entry.stride, entry.when, entry.note)
    with pytest.raises(D3dkmddiError, match=r"^the entry for DXGK_QUERYSEGMENTOUT3\.pSegmentDescriptor says its count "
                                            r"is 'NbSegments', which DXGK_QUERYSEGMENTOUT3 does not have$"):
        kmd.follow("DXGK_QUERYSEGMENTOUT3", memory, address, target=SAMPLE, table={key: wrong})
    with pytest.raises(D3dkmddiError, match=r"^DXGK_QUERYSEGMENTOUT3 has no pointer member 'pSegment' \(its pointer "
                                            r"members: pSegmentDescriptor\)$"):
        _followed().link("pSegment")


# ------------------------------------------------------------------ an entry, field by field, at registration
def _entry_with(record: str, field: str, value):
    """The made-up entry with ``field`` of ``record`` (EventEntry, or a Mapping, TableSpec or StateTable in it)
    set to ``value``."""
    from d3dkmddi_py.etw.model.registry import StateTable

    entry = _entry()
    parts = {"EventEntry": {}, "Mapping": {"event": MADE_UP, "field": "Count", "mirror_type": None, "mirror": None,
                                           "reason": "made up for the test"},
             "TableSpec": {"name": "made_up_argument", "columns": entry.table.columns, "mirror": ()},
             "StateTable": {"name": "made_up_state", "columns": (("count", "int"),), "rows": lambda t, w: ()}}
    parts[record][field] = value
    if record == "EventEntry":
        return etw.EventEntry(**{**{f.name: getattr(entry, f.name) for f in etw.EventEntry._record_fields_},
                                 **parts[record]})
    from dataclasses import replace

    made = {"Mapping": etw.Mapping, "TableSpec": etw.TableSpec, "StateTable": StateTable}[record](**parts[record])
    return replace(entry, **{"Mapping": {"mapping": (made,)}, "TableSpec": {"table": made},
                             "StateTable": {"state_tables": (made,)}}[record])


def _entry_fields() -> list:
    from d3dkmddi_py.etw.model.registry import StateTable

    return [(cls.__name__, f.name) for cls in (etw.EventEntry, etw.Mapping, etw.TableSpec, StateTable)
            for f in cls._record_fields_]


# the wrong values that are right for the field (None where it is optional, a name that is a name, any integer order)
RIGHT_FOR = {("EventEntry", f, "None") for f in ("adapter", "apply", "findings", "text", "track", "record", "panel",
                                                  "state", "finish", "view", "adapter_state", "resolved")} | {
    ("EventEntry", "barrier", "True"), ("EventEntry", "order", "-1"), ("EventEntry", "order", "huge int"),
    ("Mapping", "mirror_type", "None"), ("Mapping", "mirror", "None"), ("Mapping", "reason", "'sample'"),
    ("TableSpec", "name", "'sample'"), ("StateTable", "name", "'sample'")}


@pytest.mark.parametrize("record, field", _entry_fields(), ids=[f"{r}.{f}" for r, f in _entry_fields()])
def test_a_wrong_kind_in_any_field_of_an_entry_is_refused_at_registration_and_changes_nothing(record, field):
    """The readers call an entry's parts for every event unchecked: register checks each field's kind first, and a
    refused entry leaves the registry as it was (an unsortable ``order`` once left it half registered)."""
    from d3dkmddi_py.etw.catalog import KINDS
    from d3dkmddi_py.etw.outputs.tables import table_names

    for label, wrong in WRONG.items():
        before = (list(etw.ENTRIES), dict(KINDS), table_names())
        try:
            etw.register(_entry_with(record, field, wrong))
        except D3dkmddiError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 600, (label, str(exc)[:1000])
            assert (list(etw.ENTRIES), dict(KINDS), table_names()) == before, label
            continue
        except BaseException as exc:  # noqa: BLE001 - the point: only the package's errors get out
            pytest.fail(f"{record}.{field}={label} raised {type(exc).__name__}: {str(exc)[:300]}")
        etw.unregister(MADE_UP)
        assert (record, field, label) in RIGHT_FOR, f"{record}.{field}={label} was registered"


def test_an_event_of_an_entry_unregistered_since_is_the_packages_error_in_tracker_apply_and_adapters():
    with etw.registered(_entry()):
        (event,) = etw.from_records([{"event": MADE_UP, "fields": {"ProcessHandle": 3, "PagingLevel": 1}}])
        assert etw.Tracker().apply(event) is None  # registered: read, no state change
    says = r"is MadeUpArgumentEvent Info, EventID 1, not an event registered now \(ReportSegment, .*\): etw\.register"
    with pytest.raises(D3dkmddiError, match=r"^Tracker\.apply: event " + says):
        etw.Tracker().apply(event)
    with pytest.raises(D3dkmddiError, match=r"^events: an item " + says):
        etw.adapters([event])
