"""The .etl reader on real files Windows wrote (tests/etw/real): each read to its end, the counts and
header facts two independent readers agree on, and PerfView's per-event readings."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw.readers import etlreader
from d3dkmddi_py.etw.readers.etlfile import KERNEL_LOGGER_GUID, EtlFile
from tests.etw.etl_files import NAMES, baseline, unpack


@pytest.fixture(scope="session")
def real(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("real-etl"))


def providers(facts: dict) -> dict:
    return {p["guid"]: p["events"] for p in facts["providers"]}


# Per file: events per provider GUID (hand-typed from tests/etw/real/README and ../shared's README;
# the kernel logger's are the log-file header and its companion events).
EXPECTED = {
    "powershell": {"a0c1853b-5c40-4b15-8766-3cf1c58f985a": 112, KERNEL_LOGGER_GUID: 2},
    "gcevents": {"e13c0d23-ccbc-4e12-931b-d9cc2eee27e4": 69, KERNEL_LOGGER_GUID: 2},
    "primitive-types": {"d3dd3dd4-aac2-4e2a-8dd4-a8fb61b77615": 5, KERNEL_LOGGER_GUID: 2},
    "AMSITrace": {"8e805eb3-6a8f-4a1e-90fa-a831d94e54a1": 19, KERNEL_LOGGER_GUID: 2},
    "lxcore_kernel": {"0cd1c309-0878-4515-83db-749843b3f5c9": 2, KERNEL_LOGGER_GUID: 2},
}
# net.4.5.2.x64: the counts PerfView's baseline and a second parser agree on.
NET_PROVIDERS = {
    "763fd754-7086-4dfe-95eb-c01a46faf4ca": 1627,  # Microsoft-Windows-DotNETRuntimePrivate
    "edd08927-9cc4-4e65-b970-c2560fb5c289": 562,  # Microsoft-Windows-Kernel-File
    "b675ec37-bdb6-4648-bc92-f3fdc74d3ca2": 77,  # Microsoft-Windows-Kernel-EventTracing
    "a8a71ac1-040f-54a2-07ca-00a89b5ab761": 108,  # PerfView's EventSource
    "1c95126e-7eea-49a9-a3fe-a378b03ddb4d": 4,  # Microsoft-Windows-DNS-Client
    "315a8872-923e-4ea2-9889-33cd4754bf64": 8,  # Microsoft-Windows-Immersive-Shell
}


@pytest.mark.parametrize("name", NAMES)
def test_every_real_file_reads_to_its_end(real, name):
    facts = etw.summary(real[name])
    assert facts["events"] == sum(p["events"] for p in facts["providers"]) > 0
    assert facts["buffers"] >= 2
    assert all(sum(p["ids"].values()) == p["events"] for p in facts["providers"])
    with open(real[name], "rb") as f:
        in_time_order = list(EtlFile(f, name, ordered=True).ordered())
    assert len(in_time_order) == facts["events"]
    times = [r.timestamp for r in in_time_order]
    assert times == sorted(times)
    if name in EXPECTED:
        assert providers(facts) == EXPECTED[name]
    reader = etw.read(real[name])
    assert list(reader) == [] and reader.total == facts["events"] and reader.format == "etl"
    with pytest.raises(EtwInputError, match=f"it has {facts['events']:,} events"):
        reader.check_found()


@pytest.mark.parametrize("name", NAMES)
def test_the_column_wise_count_is_the_event_by_event_count(real, name):
    with open(real[name], "rb") as f:
        fast = etlreader.summary(f, name)
    with open(real[name], "rb") as f:
        assert fast == etlreader.summary(f, name, columns=False)


def test_the_column_wise_count_over_many_batches(real, tmp_path):
    """The real kernel-logger file's buffers three times over (about 10 MB: three batches of buffers)."""
    raw = real["ShutdownPerfDiagLogger"].read_bytes()
    first = int.from_bytes(raw[:4], "little")
    path = tmp_path / "repeated.etl"
    path.write_bytes(raw[:first] + raw[first:] * 3)
    with open(path, "rb") as f:
        fast = etlreader.summary(f, "repeated.etl")
    with open(path, "rb") as f:
        assert fast == etlreader.summary(f, "repeated.etl", columns=False)
    assert fast["events"] == 3 * 17_075 + 3  # its header buffer holds 3 of its 17,078 events


def test_the_kernel_logger_file_holds_classic_kernel_events_only(real):
    facts = etw.summary(real["ShutdownPerfDiagLogger"])
    assert providers(facts) == {KERNEL_LOGGER_GUID: facts["events"]}
    assert 16_000 < facts["events"] < 18_000  # "about 17,000 classic kernel events"
    assert set(facts["header_kinds"]) == {"system", "perfinfo"}
    assert facts["windows_build"] == 18362


def test_net_4_5_2_counts_and_header_facts(real):
    facts = etw.summary(real["net.4.5.2.x64"])
    got = providers(facts)
    assert {guid: got.get(guid) for guid in NET_PROVIDERS} == NET_PROVIDERS
    assert (facts["pointer_size"], facts["processors"], facts["buffer_size"], facts["timer_resolution"]) == \
        (8, 8, 65_536, 156_250)
    assert facts["header_kinds"].keys() == {"system", "perfinfo", "full", "EVENT_HEADER"}


def test_compressed_buffers_are_read(real):
    """Both files hold ETW_BUFFER_FLAG_COMPRESSED buffers (XPRESS); their events are all there."""
    facts = etw.summary(real["SelfDescribingSingleEvent"])
    assert facts["windows_build"] == 22000 and facts["events"] == 23
    assert {p["name"] for p in facts["providers"]} >= {"MySource"}  # a TraceLogging provider's own name
    assert etw.summary(real["net.4.5.2.x64"])["events"] > 140_000


def test_the_header_buffers_events_end_at_its_offset_not_its_saved_offset(real):
    """SelfDescribingSingleEvent.etl's header buffer says SavedOffset 440 and Offset 520; an 80-byte
    kernel event (HookId 0x0050) lies between.  Offset bounds a buffer's events, by the evidence:

    - there, bytes 440-519 are one well-formed system event with the log-file header's own time,
      process and thread, and from 520 to the buffer's end every byte is 0xFF, the unused fill;
    - every other real file's header buffer holds the same pair (the log-file header, then an 80-byte
      0x0050 event; ShutdownPerfDiagLogger a 0x0005 event between) with SavedOffset = Offset at the
      end of the 0x0050 event; only net.4.5.2.x64, relogged, holds the header alone;
    - in every buffer of the eight files (about 450) the bytes from Offset to the buffer's end are all
      0xFF (Offset is where the written bytes end), and SavedOffset equals Offset in every buffer but
      that one (for a compressed buffer both are the decompressed size);
    - PerfView's readings do not decide it: primitive-types' lists the log-file header as its only
      kernel event (COUNT Windows Kernel/EventTrace:1) although its header buffer holds the 0x0050
      event inside both fields.
    So the reader stops at Offset: 23 events, the kernel logger's 2 in the header buffer as in the others."""
    from d3dkmddi_py.etw.readers import etlfile

    def header_buffer(name):
        with open(real[name], "rb") as f:
            etl = EtlFile(f, name)
            first = next(etl.buffers())
            saved = int.from_bytes(first.data[4:8], "little")
            events = [(etlfile.record(first, *at, name).event_id, at[2]) for at in etlfile.walk(first, name)]
            return first, saved, events

    first, saved, events = header_buffer("SelfDescribingSingleEvent")
    assert (saved, first.end) == (440, 520) and events[1] == (0x0050, 80)
    assert first.data[520:] == b"\xff" * (len(first.data) - 520)
    header_time = first.data[72 + 16:72 + 24]  # the system header's SystemTime, thread and process the same
    assert first.data[440 + 8:440 + 24] == first.data[72 + 8:72 + 16] + header_time
    for name in NAMES:
        first, saved, events = header_buffer(name)
        if name == "net.4.5.2.x64":
            assert events == [(0, 364)] and saved == first.end == 440
        else:
            assert events[0][0] == 0 and events[-1] == (0x0050, 80), (name, events)
            assert saved == first.end or name == "SelfDescribingSingleEvent"
        with open(real[name], "rb") as f:
            for buffer in EtlFile(f, name).buffers():
                assert not buffer.data[buffer.end:].strip(b"\xff"), (name, buffer.index)
    facts = etw.summary(real["SelfDescribingSingleEvent"])
    assert facts["events"] == 23 and providers(facts)[KERNEL_LOGGER_GUID] == 4  # the header's 2, and 2 later
    assert etlfile.BUFFER.offset["Offset"] == 0x30


def test_guids_are_windows_guids_not_swapped(real):
    """The first three groups are little-endian: the .NET runtime is e13c0d23-ccbc-4e12-..., never
    230d3ce1-bccc-124e-... as one public reader reports it."""
    assert "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4" in providers(etw.summary(real["gcevents"]))


@pytest.mark.parametrize("name", ["primitive-types", "gcevents", "net.4.5.2.x64"])
def test_events_equal_perfviews_readings(real, name):
    """Each PerfView line (time in ms from the trace's start, process, thread, processor, payload
    length) is one of our events, in the same order.  primitive-types must match every line; the
    others every line but the events TraceEvent makes up itself (MSNT_SystemTrace).  For classic
    kernel events PerfView shows the process and thread from the payload, not the header: their
    time, processor and payload length are compared."""
    def signed(v):
        return -1 if v is None else v - (1 << 32) if v >= 1 << 31 else v

    with open(real[name], "rb") as f:
        etl = EtlFile(f, name, ordered=True)
        records = list(etl.ordered())
        ours = [(etl.header.milliseconds(r.timestamp), signed(r.process_id), signed(r.thread_id), r.processor,
                 r.offset + r.size - r.payload) for r in records]
    kernel = [r.provider == KERNEL_LOGGER_GUID and r.event_id != 0 for r in records]  # not the log-file header
    lines = [row for row in baseline(name) if not row[1].startswith("MSNT_SystemTrace/")]

    def same(i, want):
        got = ours[i]
        return got == want or (kernel[i] and (got[0], *got[3:]) == (want[0], *want[3:]))

    at = 0
    for ms, event, *rest in lines:
        want = (ms, *rest)
        while at < len(ours) and not same(at, want) and ours[at][0] <= ms:
            at += 1
        assert at < len(ours) and same(at, want), f"{event} at {ms} ms: {want} not found in order"
        at += 1
    if name == "primitive-types":  # every event: the header, then the five of the test's provider
        assert ours[0] == (lines[0][0], *lines[0][2:])
        mine = [row for row, r in zip(ours, records) if r.provider != KERNEL_LOGGER_GUID]
        assert mine == [(ms, *rest) for ms, _event, *rest in lines[1:]]


def test_primitive_types_header_event_is_perfviews(real):
    facts = etw.summary(real["primitive-types"])
    assert (facts["logger_name"], facts["buffers_written"], facts["events_lost"], facts["perf_freq"],
            facts["clock"], facts["time_zone_bias_minutes"], facts["cpu_mhz"]) == \
        ("solar_system", 2, 0, 10_000_000, "QPC", -120, 2304)
    assert facts["log_file_name"] == "C:\\primitive-types_000004.etl"
    assert facts["last_event_ms"] == 4626.652


def test_summary_command_text_and_json(real):
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(real["powershell"]), "--summary",
                          "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == ""
    facts = json.loads(out.stdout)
    assert providers(facts)["a0c1853b-5c40-4b15-8766-3cf1c58f985a"] == 112
    with open(real["powershell"], "rb") as f:
        text = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", "-", "--summary"], stdin=f,
                              capture_output=True, text=True)
    assert text.returncode == 0 and "a0c1853b-5c40-4b15-8766-3cf1c58f985a" in text.stdout
    assert "112" in text.stdout and "pointer size:" in text.stdout


def test_without_dxgkrnl_events_the_command_exits_2_naming_what_it_saw(real):
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(real["gcevents"])],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "it has 71 events, 71 of other providers" in out.stderr


def test_standard_input_and_bytes_read_as_the_file(real):
    data = real["gcevents"].read_bytes()
    assert etw.summary(data) | {"file": ""} == etw.summary(real["gcevents"]) | {"file": ""}
    assert etw.summary(io.BufferedReader(io.BytesIO(data)))["events"] == 71
