"""Rules every output of ``d3dkmddi etw`` follows, each stated once in the package and held here over every output
or table that follows it (hostile review of the every-event change, findings 4, 5, 6, 8, 16 and the --summary ids):

- the exit status: 1 when an event is not what its template says, in every output (``command.exit_status``);
- the one cell rule of every table of events (``registry.cells``): an entry's and a kind's, scalars and counted
  arrays, both readers' paths;
- the registry takes a column only of a kind its field's in-type fits;
- a kind's table per version of the event (an entry's newer version has its own columns);
- the tables' open files are bounded whatever the kinds, and parking a file changes none of its bytes.
"""
from __future__ import annotations

import io
import json
import math
import os
import resource
import struct
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from d3dkmddi_py import cli, etw
from d3dkmddi_py.bulk.table import KINDS as COLUMN_KINDS, CsvWriter, JsonlWriter, ParquetWriter, Table
from d3dkmddi_py.errors import InvalidArgument
from d3dkmddi_py.etw.catalog import ENTRY_OF, KINDS
from d3dkmddi_py.etw.model import registry
from d3dkmddi_py.etw.model.dxgkrnl_manifest import EVENTS as MANIFEST
from d3dkmddi_py.etw.model.registry import Column, EventEntry, Mapping, Newer, TableSpec, cells, field_columns, \
    field_kind
from d3dkmddi_py.etw.model.templates import IN_TYPES
from d3dkmddi_py.samples import etl_build, etw_build
from d3dkmddi_py.etw.outputs.tables import table_names
from tests.etw.etl_readings import tables
from tests.etw.helpers import alloc_fields

ROOT = Path(__file__).resolve().parents[2]
GPU = struct.pack("<QII", 0xFFFF800012340000, 1, 2) + "GPU".encode("utf-16-le") + b"\0\0"  # NodeMetadata (250)


def event(event_id: int, payload: bytes | None = None, *, version: int | None = None, ticks: int = 0, **fields):
    """An EtlEvent of a manifest event: ``fields`` over the template's blanks, or the ``payload`` bytes as given."""
    made = etl_build.dxgkrnl_event(KINDS[event_id], etw_build.manifest_values(event_id, fields), ticks=ticks)
    if payload is not None:
        made.payload = payload
    if version is not None:
        made.version = version
    return made


def etl(*events) -> bytes:
    return etl_build.etl_bytes(list(events), processors=1, buffer_size=65536)


def csv_rows(data: dict, name: str) -> list:
    lines = data[name].decode().splitlines()
    return [dict(zip(lines[0].split(","), line.split(","))) for line in lines[1:]]


# ------------------------------------------------------------------ the exit status (finding 4)
ODD = {"clean": event(250, GPU), "shorter": event(250, GPU[:10]), "longer": event(250, GPU + b"\1\2\3\4"),
       "bool (AllocationFault Write=2)": event(71, struct.pack("<QII", 1, 1, 2)),
       "no template (version 9)": event(250, GPU, version=9)}
OUTPUTS = {"text": [], "--json": ["--json"], "--format csv": ["--format", "csv", "-o", "{dir}"],
           "--format jsonl": ["--format", "jsonl", "-o", "{dir}"],
           "--format parquet": ["--format", "parquet", "-o", "{dir}"], "--plot": ["--plot", "{dir}.svg"]}


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("case", ODD)
def test_one_odd_event_exits_1_in_every_output(case, output, tmp_path):
    """--format and --plot exited 0 where --json and the text exited 1 (``tables.errors`` alone decided); one
    function now decides for every output, and the README's "an event that is not what its template says" holds."""
    path = tmp_path / "t.etl"
    path.write_bytes(etl(ODD[case]))
    out, err, status = cli.run(["etw", str(path), *(a.replace("{dir}", str(tmp_path / "o")) for a in OUTPUTS[output])])
    assert status == (0 if case == "clean" else 1), err
    if output.startswith("--format") or output == "--plot":
        assert err.count("\n") == 1
        assert ("events not as their template says" in err) == (case != "clean")


def test_the_format_line_says_how_many_odd_events_by_rule(tmp_path):
    """The stderr line of --format counts the odd events by rule, as the text's summary line does."""
    path = tmp_path / "t.etl"
    path.write_bytes(etl(event(250, GPU[:10]), event(250, GPU[:12], ticks=1), event(250, GPU + b"\1", ticks=2)))
    text, _err, _status = cli.run(["etw", str(path)])
    said = "events not as their template says: 3 (ETW.PAYLOAD_LONGER 1, ETW.PAYLOAD_SHORTER 2)"
    assert f"\n{said}, each kind reported once above\n" in text
    _out, err, status = cli.run(["etw", str(path), "--format", "csv", "-o", str(tmp_path / "o")])
    assert status == 1 and err.endswith(f"; {said}, each kind reported once in findings\n")


def test_the_exit_status_is_decided_in_one_place():
    """Each output returns what it found and ``command.run`` alone makes it the status (none returns 0 or 1)."""
    import inspect

    from d3dkmddi_py.etw.outputs import command, plot, text

    for function in (command._json, command._tables, plot.run, text.write_text):
        source = inspect.getsource(function)
        assert "return 1" not in source and "return 0" not in source and "1 if" not in source, function.__name__
    assert inspect.getsource(command.run).count("exit_status(") == 1


# ------------------------------------------------------------------ the one cell rule (findings 5 and 6)
def odd_booleans() -> bytes:
    """AdapterAllocationStart with BackingStoreWasPinned = 2 (a batched entry: column-wise and as Events), and a
    placement (ReportCommittedAllocation) with Pinned = 7 (an entry with value columns)."""
    placement = {f.name: 0 for f in registry.layout_of(80, KINDS[80].version)}
    placement.update(hAllocationHandle=1, ulSegmentId=1, Pinned=7, EvictionResource=True)
    return etl(etl_build.dxgkrnl_event(KINDS[33], alloc_fields(), ticks=0),
               etl_build.dxgkrnl_event(KINDS[33], alloc_fields(BackingStoreWasPinned=2, hVidMmGlobalAlloc=0xEEEE0002,
                                                               hDxgGlobalAlloc=0xFFFF0002), ticks=1),
               etl_build.dxgkrnl_event(KINDS[80], placement, ticks=2))


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_an_odd_boolean_in_an_entry_table_is_an_empty_cell(fmt, tmp_path):
    """BackingStoreWasPinned = 2 was written true (int(2), then a nonzero bool) and Pinned = 7 true, where a kind's
    table left the same case empty; --json keeps the number."""
    data = odd_booleans()
    got = tables(data, tmp_path, True, fmt)
    assert got == tables(data, tmp_path, False, fmt)  # column-wise as event by event
    if fmt == "parquet":
        path = tmp_path / "out-True-parquet"
        assert pq.read_table(path / "allocations.parquet").column("BackingStoreWasPinned").to_pylist() == [False, None]
        (row,) = pq.read_table(path / "placements.parquet").to_pylist()
        assert (row["Pinned"], row["EvictionResource"]) == (None, True)
        return
    if fmt == "csv":
        assert [r["BackingStoreWasPinned"] for r in csv_rows(got, "allocations.csv")] == ["false", ""]
        assert [(r["Pinned"], r["EvictionResource"]) for r in csv_rows(got, "placements.csv")] == [("", "true")]
    else:
        rows = [json.loads(line) for line in got["allocations.jsonl"].splitlines()]
        assert [r["BackingStoreWasPinned"] for r in rows] == [False, None]
        (row,) = [json.loads(line) for line in got["placements.jsonl"].splitlines()]
        assert (row["Pinned"], row["EvictionResource"]) == (None, True)
    path = tmp_path / "t.etl"
    path.write_bytes(data)
    lines = [json.loads(line) for line in cli.run(["etw", str(path), "--json"])[0].splitlines()]
    assert [line["fields"].get("BackingStoreWasPinned", line["fields"].get("Pinned")) for line in lines] == [False, 2, 7]


def arrays() -> bytes:
    """BlitRect (167): Int32 arrays; ReferenceAllocations (43): a Boolean array with an odd value, a Pointer array;
    GpuWork (246): an Int64 array; BltQueueEntryStart (1071): the scalars of the same in-types."""
    blit = struct.pack("<QII", 0x10, 1, 2) + struct.pack("<2i", -5, 7) + struct.pack("<2i", -1, 2**31 - 1) + \
        struct.pack("<2i", -2**31, 0) + struct.pack("<2i", 3, 4)
    ref = struct.pack("<QQI", 1, 2, 3) + struct.pack("<3Q", 0xA, 0xB, 0xC) + struct.pack("<3I", 1, 0, 2)
    work = struct.pack("<QI", 1, 2) + struct.pack("<2q", -1, 2**63 - 1)
    return etl(event(167, blit), event(43, ref, ticks=1), event(246, work, ticks=2),
               event(1071, struct.pack("<iI", -7, 1), ticks=3))


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_counted_arrays_are_written_by_the_scalar_rule(fmt, tmp_path):
    """Every counted array's value was hex (``0x-5 0x7``, Booleans ``0x1 0x0 0x2``) though the scalar column beside it
    is decimal or true/false; each value is now what its scalar cell would be (an odd Boolean an empty item)."""
    got = tables(arrays(), tmp_path, True, fmt)
    assert got == tables(arrays(), tmp_path, False, fmt)

    def row(name: str) -> dict:
        if fmt == "csv":
            return csv_rows(got, f"{name}.csv")[0]
        if fmt == "jsonl":
            return {k: v for k, v in json.loads(got[f"{name}.jsonl"]).items()}
        return pq.read_table(tmp_path / "out-True-parquet" / f"{name}.parquet").to_pylist()[0]

    assert {k: row("BlitRect")[k] for k in ("Left", "Right", "Top", "Bottom")} == \
        {"Left": "-5 7", "Right": "-1 2147483647", "Top": "-2147483648 0", "Bottom": "3 4"}
    assert (row("ReferenceAllocations")["Write"], row("ReferenceAllocations")["Allocations"]) == \
        ("true false ", "0xa 0xb 0xc")
    assert row("GpuWork")["RecordTime"] == "0xffffffffffffffff 0x7fffffffffffffff"  # Int64: the bit pattern, as JSON
    scalars = row("BltQueueEntryStart")
    assert (scalars["FrameNumber"], scalars["FrontOfQueue"]) == (("-7", "true") if fmt == "csv" else (-7, True))


# a value of each kind a field's in-type gives (field_kind), the edges included
VALUES = {"int": (0, 1, -1, 7, -(1 << 31), (1 << 31) - 1, (1 << 32) - 1), "hex": (0, 1, (1 << 64) - 1, 0xABC),
          "shex": (0, 1, -1, -(1 << 63), (1 << 63) - 1, 0xABC),
          "handle": (0, 0xFFFF800012340000, (1 << 64) - 1), "bool": (True, False, 0, 1, 2, 7),
          "float": (0.5, -0.0, 1e300, 3.4028234663852886e38, math.nan, math.inf, -math.inf),
          "text": ("", "a b", "café")}


@pytest.mark.parametrize("kind", VALUES)
def test_an_array_value_is_written_as_its_scalar_cell(kind):
    """The guard for every in-type: a counted array's item is the JSON lines writer's text of the same value as a
    scalar cell (quotes off, null empty), so an array and a scalar column beside it can never disagree.  The
    writer is bulk.table's, not the cell rule: the oracle is independent of it."""
    kinds = {field_kind(t) for t in IN_TYPES}
    assert set(VALUES) == kinds - {"opt", "ohex"} | {"text"} and kinds <= set(VALUES) | {"text"}
    scalar = {"int": "opt", "hex": "ohex"}.get(kind, kind)  # the kind of a column whose cell may be empty
    for value in (*VALUES[kind], None):
        out = io.StringIO()
        JsonlWriter(out).write(Table(["x"], [scalar], [cells([value], scalar)]))
        text = json.loads(out.getvalue())["x"]
        expected = "" if text is None else text if isinstance(text, str) else json.dumps(text)
        assert cells([(value, value)], "text", kind) == [f"{expected} {expected}"], value


def entry_for(event_id: int, *, newer=(), columns=None, table: str = "made_up") -> EventEntry:
    """A made-up entry for a manifest event no entry reads: a column per field (counted arrays text)."""
    fields = list(registry.manifest_fields(event_id)) + [pair for n in newer for pair in n.adds]
    name = MANIFEST[event_id][0]
    counted = {f.name for f in registry.layout_of(event_id, KINDS[event_id].version) if f.count is not None}
    optional = {n for v in newer for n, _t in v.adds}
    return EventEntry(event=name, ids=(event_id,), mapping=tuple(Mapping(name, n, None, None, "made up for the test")
                                                                  for n, _t in fields),
                      table=TableSpec(table, field_columns(fields, arrays=counted, optional=optional)
                                      if columns is None else columns), newer=newer)


def test_an_event_as_an_entry_row_and_as_its_kind_row_has_the_same_cells(tmp_path):
    """The twin: registry._cell (an entry's columns) and tables._kind_cell (a kind's) stated the rule twice; one
    function makes both, so an event's fields read the same in an entry's table and in its kind's."""
    data = arrays()
    kinds = tables(data, tmp_path / "kinds", True)
    for event_id, name in ((167, "BlitRect"), (43, "ReferenceAllocations"), (246, "GpuWork"),
                           (1071, "BltQueueEntryStart")):
        with registry.registered(entry_for(event_id)):
            made = tables(data, tmp_path / name, True)
        (as_entry,), (as_kind,) = csv_rows(made, "made_up.csv"), csv_rows(kinds, f"{name}.csv")
        fields = [n for n, _t in registry.manifest_fields(event_id)]
        assert {n: as_entry[n] for n in fields} == {n: as_kind[n] for n in fields}, name


def test_a_field_its_in_type_cannot_read_is_an_empty_cell(tmp_path):
    """A UnicodeString with an unpaired surrogate (Odd.unread: not in the event's fields) is an empty cell, its report
    counted in the row's warnings."""
    data = etl(event(250, struct.pack("<QII", 0x10, 1, 2) + b"\x00\xd8G\x00\0\0"))
    for fmt in ("csv", "jsonl"):
        got = tables(data, tmp_path, True, fmt)
        (row,) = csv_rows(got, "NodeMetadata.csv") if fmt == "csv" else [json.loads(got["NodeMetadata.jsonl"])]
        assert (row["FriendlyName"], row["NodeOrdinal"], row["warnings"]) == \
            (("", "1", "1") if fmt == "csv" else (None, 1, 1))


def test_a_newer_float_is_a_float_nan_and_inf_empty_cells_and_json_strings(tmp_path):
    """A Newer version's Float was truncated by int() (NaN raised ValueError) and --json wrote NaN, which is not
    JSON; the cell is the float, or empty where JSON has no number for it, and --json says "NaN" / "Infinity"."""
    newer = (Newer(1, (("F", "Float"),), (("made up", "for the test"),)),)
    values = (1.5, math.nan, math.inf, -math.inf)
    data = etl(*(event(250, GPU + struct.pack("<f", v), version=1, ticks=i) for i, v in enumerate(values)))
    with registry.registered(entry_for(250, newer=newer)):
        got = {fmt: tables(data, tmp_path, True, fmt) for fmt in ("csv", "jsonl", "parquet")}
        path = tmp_path / "t.etl"
        path.write_bytes(data)
        out, _err, _status = cli.run(["etw", str(path), "--json"])
    assert [r["F"] for r in csv_rows(got["csv"], "made_up.csv")] == ["1.5", "", "", ""]
    assert [json.loads(line)["F"] for line in got["jsonl"]["made_up.jsonl"].splitlines()] == [1.5, None, None, None]
    assert pq.read_table(tmp_path / "out-True-parquet" / "made_up.parquet").column("F").to_pylist() == \
        [1.5, None, None, None]

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    lines = [json.loads(line, parse_constant=refuse) for line in out.splitlines()]
    assert [line["fields"]["F"] for line in lines] == [1.5, "NaN", "Infinity", "-Infinity"]


# ------------------------------------------------------------------ the registry's columns (finding 16)
@pytest.mark.parametrize("column, says", [
    (Column("FriendlyName", "int", field="FriendlyName"), "a UnicodeString: its kind must be text, not int"),
    (Column("FriendlyName", "bool", field="FriendlyName"), "a UnicodeString: its kind must be text, not bool"),
    (Column("FriendlyName", "hex", field="FriendlyName"), "a UnicodeString: its kind must be text, not hex"),
    (Column("NodeOrdinal", "text", field="NodeOrdinal"), "a UInt32: its kind must be int or opt, not text"),
    (Column("NodeOrdinal", "hex", field="NodeOrdinal"), "a UInt32: its kind must be int or opt, not hex"),
    (Column("NodeOrdinal", "float", field="NodeOrdinal"), "a UInt32: .* not float"),
], ids=["int on a UnicodeString", "bool on a UnicodeString", "hex on a string", "text on a number",
        "hex on a 32-bit number (--json writes it in decimal)",
        "float on a number"])
def test_a_column_whose_kind_does_not_fit_its_field_is_refused(column, says):
    """An entry for event 250 with Column("FriendlyName", "int") registered, and writing its table raised ValueError;
    it is refused in one line naming the entry, the column, the field's in-type and the kinds it takes."""
    with pytest.raises(InvalidArgument, match=f"^NodeMetadata: table column {column.name} reads field {column.field}, "
                                              f"{says}"):
        registry.register(entry_for(250, columns=(column,)))
    assert 250 not in ENTRY_OF


def test_a_guid_or_a_newer_float_field_takes_only_its_kind():
    """The GUID and Float cases of the finding, through a Newer version (a field the manifest version lacks)."""
    for in_type, wrong, right in (("GUID", "int", "text"), ("Float", "int", "float"), ("Float", "opt", "float")):
        newer = (Newer(1, (("G", in_type),), (("made up", "for the test"),)),)
        with pytest.raises(InvalidArgument, match=f"table column G reads field G, a {in_type}: its kind must be "
                                                  f"{right}, not {wrong}$"):
            registry.register(entry_for(250, newer=newer, columns=(Column("G", wrong, field="G"),)))
        with registry.registered(entry_for(250, newer=newer, columns=(Column("G", right, field="G"),))):
            pass


# by hand, from what each in-type holds: a number (pointers too), a Boolean, a float, text
# a 64-bit number only as 0x... (a JSON number past 2**53 is rounded), a signed one as its bit pattern
TAKES = {"int": {"int", "opt"}, "int64": {"hex", "ohex", "handle"}, "sint64": {"shex"}, "pointer": {"hex", "ohex", "handle"},
         "bool": {"bool"}, "float": {"float"}, "text": {"text"}}
HOLDS = {"UInt8": "int", "Int8": "int", "UInt16": "int", "Int16": "int", "UInt32": "int", "Int32": "int",
         "UInt64": "int64", "Int64": "sint64", "HexInt32": "int", "HexInt64": "int64", "Pointer": "pointer", "SizeT": "pointer",
         "Boolean": "bool", "Float": "float", "Double": "float", "GUID": "text", "UnicodeString": "text",
         "AnsiString": "text", "Binary": "text"}


def test_every_in_type_takes_exactly_its_column_kinds():
    """The guard: for each in-type and each column kind, the registry takes the column exactly when the kind holds what
    the in-type holds; a field every version has through a manifest event that has one, every other in-type through a
    Newer version adding it (where the kind must also hold an empty cell: int and hex do not)."""
    assert set(HOLDS) == set(IN_TYPES)
    required = {}
    for event_id in sorted(MANIFEST):
        for f in () if event_id in ENTRY_OF else registry.layout_of(event_id, KINDS[event_id].version) or ():
            if f.count is None:
                required.setdefault(f.in_type, (event_id, f.name))
    assert len(required) > 10
    for in_type in IN_TYPES:
        if in_type in required:
            event_id, name = required[in_type]
            made = {kind: entry_for(event_id, columns=(Column("x", kind, field=name),)) for kind in COLUMN_KINDS}
            takes = TAKES[HOLDS[in_type]]
        elif in_type != "Binary":  # a Binary needs a length field: the manifest's Binary fields are above
            newer = (Newer(1, (("Added", in_type),), (("made up", "for the test"),)),)
            event_id, name = 250, "Added"
            made = {kind: entry_for(250, newer=newer, columns=(Column("x", kind, field=name),)) for kind in COLUMN_KINDS}
            takes = TAKES[HOLDS[in_type]] - {"int", "hex"}
        for kind, entry in made.items():
            if kind in takes:
                with registry.registered(entry):
                    pass
            else:
                with pytest.raises(InvalidArgument, match=f"reads field {name}, (a {in_type}: its kind must|which some "
                                                          f"versions lack)"):
                    registry.register(entry)
            assert event_id not in ENTRY_OF


def test_a_field_some_versions_lack_needs_a_kind_whose_cell_may_be_empty():
    """An int or hex column of a field only a newer version has would get None from the manifest version's events
    (the CSV writer's %d cannot write it): refused, naming the kinds that may be empty."""
    newer = (Newer(1, (("More", "UInt32"),), (("made up", "for the test"),)),)
    with pytest.raises(InvalidArgument, match="table column More reads field More, which some versions lack: its kind "
                                              r"must be one whose cell may be empty \(opt\), not int$"):
        registry.register(entry_for(250, newer=newer, columns=(Column("More", "int", field="More"),)))


# ------------------------------------------------------------------ a kind's table per version (finding 16, related)
def test_a_short_event_of_a_newer_version_goes_to_the_table_of_its_version(tmp_path):
    """A short event of an entry's Newer version went to the kind's table of the manifest version's columns, so the
    fields that version adds were dropped; each version now has its table, named as other readers name it."""
    newer = (Newer(1, (("A", "UInt32"), ("B", "UInt32")), (("made up", "for the test"),)),)
    short = GPU + struct.pack("<I", 77) + b"\1"  # A read, B cut
    data = etl(event(250, GPU[:10]), event(250, short, version=1, ticks=1))
    with registry.registered(entry_for(250, newer=newer)):
        got = tables(data, tmp_path, True)
        assert tables(data, tmp_path, False) == got
    (v0,), (v1,) = csv_rows(got, "NodeMetadata.csv"), csv_rows(got, "NodeMetadata_V1.csv")
    assert "A" not in v0 and (v1["A"], v1["B"], v1["FriendlyName"]) == ("77", "", "GPU")
    # the catalog's own: AdapterAllocation version 3 adds PageTableOrDirectory
    fields = alloc_fields()
    v3 = etl_build.dxgkrnl_event(KINDS[33], {**fields, "PageTableOrDirectory": True}, version=3)
    v3.payload = v3.payload[:-6]
    v2 = etl_build.dxgkrnl_event(KINDS[33], fields, ticks=1)
    v2.payload = v2.payload[:-2]
    got = tables(etl(v3, v2), tmp_path / "aa", True)
    assert "PageTableOrDirectory" in csv_rows(got, "AdapterAllocationStart_V3.csv")[0]
    assert "PageTableOrDirectory" not in csv_rows(got, "AdapterAllocationStart_V2.csv")[0]


# ------------------------------------------------------------------ open files (finding 8)
def every_kind(copies: int = 1) -> bytes:
    """Every event of the manifest (451 kinds: a table each), ``copies`` times in turn, the first AllocationFault with
    Write = 2."""
    made = []
    for n in range(copies):
        for event_id in sorted(KINDS):
            made.append(event(event_id, ticks=len(made), **({"Write": 2} if event_id == 71 and not n else {})))
    return etl_build.etl_bytes(made, processors=2, buffer_size=65536)


def rows_of(written: dict, fmt: str) -> dict:
    """Rows of each table written, read from its bytes: the oracle that parking lost none (a file emptied each time it
    was taken up again would be the same bytes on both sides)."""
    if fmt == "parquet":
        return {name: pq.read_metadata(io.BytesIO(data)).num_rows for name, data in written.items()}
    return {name: data.count(b"\n") - (fmt == "csv") for name, data in written.items()}


def kinds_rows(written: dict, fmt: str, copies: int) -> None:
    """Each table of a kind no entry reads holds its copies of the event."""
    counts = rows_of(written, fmt)
    kinds = [KINDS[i].symbol for i in KINDS if i not in ENTRY_OF]
    assert {k: counts.get(f"{k}.{fmt}") for k in kinds} == dict.fromkeys(kinds, copies)


def every_table(written: dict, fmt: str) -> None:
    """The files of the every-kind trace: a table per kind no entry reads, and the entries' tables (their state
    tables and findings too), no other file."""
    kind_files = {f"{KINDS[i].symbol}.{fmt}" for i in KINDS if i not in ENTRY_OF}
    entry_files = set(written) - kind_files
    assert kind_files <= set(written) and entry_files and entry_files <= {f"{n}.{fmt}" for n in table_names()}


def _limit(files: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    return set_limit


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_every_kind_writes_under_an_open_file_limit_of_64_the_same_bytes(fmt, tmp_path):
    """Every table held its file open to the end: under ``ulimit -n 256`` the every-event trace crashed (Errno 24).
    At most ``tables.OPEN_TABLES`` files are open, and the bytes are those of tables that never close a file."""
    data = every_kind()
    path = tmp_path / "t.etl"
    path.write_bytes(data)
    out = tmp_path / "low"
    run = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(path), "--format", fmt, "-o", str(out)],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600,
                         preexec_fn=_limit(64))
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr  # an odd event: 1
    written = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    every_table(written, fmt)
    kinds_rows(written, fmt, 1)
    assert written == tables(data, tmp_path, True, fmt, open_tables=100_000)


def test_too_few_open_files_is_one_line(tmp_path):
    """A limit below what the tables need (their open files and the process's own) is one line naming it, exit 2."""
    path = tmp_path / "t.etl"
    path.write_bytes(every_kind())
    run = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(path), "--format", "csv", "-o",
                          str(tmp_path / "o")], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), preexec_fn=_limit(16))
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "Too many open files (the open-file limit is 16: raise it with ulimit -n); nothing was written" in run.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_parking_files_between_chunks_changes_no_byte(fmt, tmp_path):
    """Three copies of every kind in chunks of 300 events with 3 files open: each file is parked and taken up again
    many times (CSV and JSON lines appended, Parquet's held rows spilled and read back), and every byte is as
    written with none parked."""
    data = every_kind(3)
    parked = tables(data, tmp_path / "parked", True, fmt, chunk=300, open_tables=3)
    assert parked == tables(data, tmp_path / "open", True, fmt, chunk=300, open_tables=100_000)
    every_table(parked, fmt)
    assert not [p for p in (tmp_path / "parked").rglob(".*")]  # no spill or partial file left
    kinds_rows(parked, fmt, 3)


def test_a_parked_parquet_writer_holds_no_rows(tmp_path):
    """Memory bounded by a chunk: a parked writer's rows waiting for a row group are in a temporary file (in the
    folder given), not in memory; they come back for the next chunk, and the file is gone after."""
    def chunk(start: int) -> Table:
        return Table(["n", "s"], ["int", "text"], [list(range(start, start + 3)), [f"r{i}" for i in range(3)]])

    files = {}
    for parking in (False, True):
        out = io.BytesIO()
        w = ParquetWriter(out, group_rows=5, spill=tmp_path)
        for start in range(0, 30, 3):
            w.write(chunk(start))
            if parking:
                w.park()
                assert w.held == [] and len(list(tmp_path.iterdir())) == (1 if w.held_rows else 0)
        w.close()
        files[parking] = out.getvalue()
        assert list(tmp_path.iterdir()) == []
    assert files[True] == files[False]
    assert pq.read_table(io.BytesIO(files[True])).column("n").to_pylist() == list(range(30))


def test_a_float_column_the_cell_rule_did_not_make_is_still_json(tmp_path):
    """The writers' own guard, for a float column of no event field (a state table's, ``ms``): NaN and the infinities
    are empty cells, so a JSON line is JSON whatever reaches it."""
    for writer, empty in ((JsonlWriter, "null"), (CsvWriter, "")):
        out = io.StringIO()
        writer(out, **({"header": False} if writer is CsvWriter else {})).write(
            Table(["f"], ["float"], [[math.nan, math.inf, -math.inf, 0.25]]))
        assert out.getvalue().splitlines() == [f'{{"f":{v}}}' if writer is JsonlWriter else v
                                               for v in (empty, empty, empty, "0.25")]


def test_a_parked_file_replaced_while_it_waits_is_refused(tmp_path):
    """A parked table is opened again by its temporary file's name: if another file took that name (a rename, a
    symlink), the write is refused in one line, never appended to the other file."""
    from d3dkmddi_py.errors import OutputError
    from d3dkmddi_py.outfile import open_output

    with pytest.raises(OutputError, match="t.csv: its temporary file was replaced while it was written"):
        with open_output(tmp_path / "t.csv", parkable=True) as out:
            out.write("a\n")
            out.park()
            (tmp_path / "other").write_text("x")
            os.replace(tmp_path / "other", out._temp)
            out.write("b\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_failed_run_leaves_no_spilled_or_partial_file(tmp_path, monkeypatch):
    """A trace cut in its last buffer fails after tables were parked and spilled: nothing of them is left."""
    spilled = []
    park = ParquetWriter.park
    monkeypatch.setattr(ParquetWriter, "park", lambda self: park(self) or spilled.append(self.spilled))
    data = every_kind(2)
    folder = tmp_path / "out-True-parquet"
    folder.mkdir()
    got = tables(data[:-100], tmp_path, True, "parquet", chunk=300, open_tables=3)
    assert "error" in got and any(spilled) and list(folder.iterdir()) == []


# ------------------------------------------------------------------ --summary's ids (minor)
def test_summary_shows_at_most_8_ids_of_every_provider_dxgkrnl_too(tmp_path):
    """20,000 unknown DxgKrnl ids made one line of 192,222 characters: every provider's line shows its first 8 ids,
    then how many more (--json has every one)."""
    path = tmp_path / "t.etl"
    path.write_bytes(etl(*(event(250, GPU, ticks=i) for i in range(2)),
                         *(etl_build.EtlEvent(etl_build.PROVIDER_GUID, 2000 + i, 0, b"\1", keyword=0x40, ticks=i + 2)
                           for i in range(30))))
    out, _err, status = cli.run(["etw", str(path), "--summary"])
    (line,) = [line for line in out.splitlines() if "ids 250" in line]
    assert status == 0 and line.endswith(", 2006: 1, and 23 more (--summary --json lists every one)")
    assert len(json.loads(cli.run(["etw", str(path), "--summary", "--json"])[0])["providers"][0]["ids"]) == 31


def test_a_table_named_as_another_entrys_newer_version_is_refused():
    """The sibling of a table named by an event's symbol: AdapterAllocation's version 3 events it cannot apply go to
    AdapterAllocationStart_V3; an entry's table of that name would mix the two."""
    with pytest.raises(InvalidArgument, match="NodeMetadata: table AdapterAllocationStart_V3 would be "
                                              "AdapterAllocation's too"):
        registry.register(entry_for(250, table="AdapterAllocationStart_V3"))


def test_a_versions_table_name_is_no_other_events():
    """A newer version's table is named by its symbol with that version (``versioned_symbol``); no two events of the
    manifest share a symbol without its ``_V<n>`` (case aside: file systems that ignore case), so such a name is
    never another event's table."""
    bases = [registry.versioned_symbol(row[0], None).lower() for row in MANIFEST.values()]
    assert len(set(bases)) == len(bases) == 451


# ------------------------------------------------------------------ one spelling (issue 31)
def _as_csv_cell(value) -> str:
    """What a JSON value reads as in a CSV cell if the two spell it alike: null empty, JSON's words, strings bare."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def test_every_cell_of_every_table_of_the_sample_is_spelled_in_csv_as_in_json_lines(tmp_path):
    """Issue 31: a 64-bit size was 65536 in CSV and "0x10000" in JSON lines. Every cell of every table the
    sample's .etl twin writes (the entries', the state tables, the kinds' and the findings) reads the same."""
    import csv

    from d3dkmddi_py.samples import DIRECTORY, etw_build as sample

    data = (DIRECTORY / sample.ETL_FILE).read_bytes()
    as_csv, as_jsonl = tables(data, tmp_path, True, "csv"), tables(data, tmp_path, True, "jsonl")
    assert sorted(n[:-4] for n in as_csv) == sorted(n[:-6] for n in as_jsonl) and len(as_csv) > 10
    hexed = 0
    for name, text in as_csv.items():
        header, *rows = list(csv.reader(io.StringIO(text.decode(), newline="")))
        objects = [json.loads(line) for line in as_jsonl[name[:-4] + ".jsonl"].decode().splitlines()]
        assert [list(o) for o in objects] == [header] * len(rows), name
        assert rows == [[_as_csv_cell(v) for v in o.values()] for o in objects], name
        hexed += sum(cell.startswith("0x") for row in rows for cell in row)
    assert hexed > 100  # pointers, handles and sizes are among them


@pytest.mark.parametrize("value", [-(1 << 62) - 1, -1, (1 << 63) - 1, 5])
def test_a_signed_64_bit_field_past_2_53_is_never_a_json_number_and_is_spelled_alike_in_every_output(value, tmp_path):
    """Hostile review of issue 31: an Int64 (VidMmWorkerThreadWake's Timeout) past 2**53 was a JSON number in --json
    and JSON lines, which readers round. It is 0x... of its bit pattern in --json, CSV and JSON lines alike (as a
    signed 64-bit structure member is), and Parquet keeps the signed value."""
    import csv

    data = etl(event(362, Timeout=value, WakeReason=1))
    pattern = f"0x{value & ((1 << 64) - 1):x}"
    path = tmp_path / "wake.etl"
    path.write_bytes(data)
    text, _err, status = cli.run(["etw", str(path), "--json"])
    lines = [json.loads(line) for line in text.splitlines()]
    (line,) = [e for e in lines if e.get("symbol") == "VidMmWorkerThreadWake"]
    assert status == 0 and line["fields"]["Timeout"] == pattern
    (back,) = etw.from_records([{"event": line["id"], "version": line["version"], "fields": line["fields"]}])
    assert back.fields["Timeout"] == value  # the package reads its own spelling back
    as_csv, as_jsonl = tables(data, tmp_path, True, "csv"), tables(data, tmp_path, True, "jsonl")
    (row,) = csv.DictReader(io.StringIO(as_csv["VidMmWorkerThreadWake.csv"].decode()))
    assert row["Timeout"] == pattern
    assert json.loads(as_jsonl["VidMmWorkerThreadWake.jsonl"])["Timeout"] == pattern
    tables(data, tmp_path, True, "parquet")
    (row,) = pq.read_table(tmp_path / "out-True-parquet" / "VidMmWorkerThreadWake.parquet").to_pylist()
    assert row["Timeout"] == value
