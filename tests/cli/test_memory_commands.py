"""Issue 24 on the command line: a debugger session, a raw image and a crash dump are memory at addresses.

``--windbg LOG --address A [--follow]``, ``--file IMAGE --base B``, ``--dump MEMORY.DMP``; ``validate --follow
--segments-at Q`` checks allocation infos against the segments the followed DXGK_QUERYSEGMENTOUT3 points to.
The same structures written into a log, a raw image and each kind of kernel dump print the same text."""
from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest

from d3dkmddi_py import cli, samples
from d3dkmddi_py.samples import build
from tests.conftest import require
from d3dkmddi_py.samples.dump_build import KINDS, Machine, write_dump
from tests.memory_scene import CREATE, INFOS, QUERY, base_of, image, scene

X64 = ("x64", "WDDM2_7")
SCENE_TARGET = ["--ddi", "WDDM2_7"]
SAMPLE = ["--ddi", build.INTERFACE_VERSION]


def at(address: int) -> str:
    return f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}"


def run(*argv) -> tuple:
    return cli.run([str(a) for a in argv])


def good(*argv, status: int = 0) -> tuple:
    out, err, code = run(*argv)
    assert code == status, err
    return out, err


def bad(*argv) -> str:
    """One line on standard error, exit 2, nothing on standard output."""
    out, err, code = run(*argv)
    assert (code, out) == (2, ""), (code, err, out[:300])
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ---- the bundled session log: every structure in it by address, followed and validated

OBJECTS = build.session_objects()


@pytest.mark.parametrize("type_name, name, count", [
    ("DXGK_QUERYSEGMENTOUT3", "query", 1), ("DXGK_SEGMENTDESCRIPTOR3", "descriptors", 3),
    ("DXGKARG_CREATEALLOCATION", "create", 1), ("DXGK_ALLOCATIONINFO", "infos", 3),
    ("DXGK_ALLOCATIONUSAGEHINT", "hints", 2),
])
def test_a_log_as_a_new_user_keeps_it_decodes_every_structure_in_it_by_address(type_name, name, count):
    address, data = OBJECTS[name]
    out, err = good("decode", type_name, "--windbg", "sample", "--address", at(address), "--count", "all", *SAMPLE)
    assert out.count(f"{type_name}  x64 WDDM3_0") == count
    assert f"[0] at +0x0 ({at(address)})" in out
    # the skipped lines are said once, on standard error
    assert err == ("d3dkmddi: <samples>/session.log: skipped 13 lines that are not a memory dump (the first, line 1: "
                   "\"Opened log file 'C:\\\\Users\\\\dev\\\\Desktop...\")\n")


def test_the_session_log_holds_a_breakpoint_line_a_logopen_header_prompts_and_two_dumps_or_more():
    text = samples.SESSION_PATH.read_text()
    assert text.startswith("Opened log file ") and "\nBreakpoint 0 hit\n" in text and "\n0: kd> dq " in text
    assert sum(line.startswith("0: kd> d") for line in text.splitlines()) >= 2


def test_decode_follow_createallocation_to_allocation_infos_to_usage_hints_from_the_session_log():
    create = OBJECTS["create"][0]
    out, _ = good("decode", "DXGKARG_CREATEALLOCATION", "--windbg", "sample", "--address", at(create), "--follow",
                  *SAMPLE)
    assert out.startswith(f"DXGKARG_CREATEALLOCATION  x64 WDDM3_0 (0xF003), 40 bytes at {at(create)}\n")
    assert "-> 3 DXGK_ALLOCATIONINFO (NumAllocations = 3) at ffffb80c`4e2f1000" in out
    assert out.count("DXGK_ALLOCATIONUSAGEHINT  x64") == 2 and "-> NULL" in out
    assert "+0x010 Width            : UINT            0x780 (1920)" in out
    assert "ffffb80c`4e2f0100  75 6d 64 20 63 72 65 61-74 65 20 64 61 74 61 21" in out  # the private data, as db
    # the infos' private data was never dumped: a gap, shown with the db command, not a failure
    assert "`db ffffb80c`4e3a0000 L0x40` in WinDbg shows them" in out
    line = json.loads(good("decode", "DXGKARG_CREATEALLOCATION", "--windbg", "sample", "--address", at(create),
                           "--follow", "--json", *SAMPLE)[0])
    infos = line["pointers"]["pAllocationInfo"]
    assert (infos["status"], infos["count"], len(infos["items"])) == ("followed", 3, 3)
    assert infos["items"][0]["pointers"]["pPrivateDriverData"]["status"] == "unread"  # never dumped: a gap
    assert infos["items"][0]["pointers"]["pAllocationUsageHint"]["items"][0]["fields"]["v1.Width"] == 1920


def test_validate_follow_checks_allocation_infos_against_the_segments_a_followed_query_describes():
    create, query = OBJECTS["create"][0], OBJECTS["query"][0]
    argv = ["validate", "DXGKARG_CREATEALLOCATION", "--windbg", "sample", "--address", at(create), "--follow", *SAMPLE]
    out, _ = good(*argv, "--segments-at", at(query), status=1)
    assert "ALLOCINFO.PRIORITY_ZERO" in out
    # the third info names segment 4: only the adapter read from memory (3 segments) says so
    assert "SupportedWriteSegmentSet = 0x9 names segment 4 but the adapter has 3 segments" in out
    assert out.rstrip().endswith("6 records: 1 error, 1 warning")
    assert "names segment 4" not in good(*argv, status=1)[0]
    rows = [json.loads(line) for line in good(*argv, "--segments-at", at(query), "--json", status=1)[0].splitlines()]
    assert [r["type"] for r in rows] == ["DXGKARG_CREATEALLOCATION", "DXGK_ALLOCATIONINFO", "DXGK_ALLOCATIONUSAGEHINT",
                                         "DXGK_ALLOCATIONINFO", "DXGK_ALLOCATIONINFO", "DXGK_ALLOCATIONUSAGEHINT"]


def test_decode_follow_a_querysegmentout3_to_its_descriptors_and_bank_table_from_the_session_log():
    out, _ = good("decode", "DXGK_QUERYSEGMENTOUT3", "--windbg", "sample", "--address", at(OBJECTS["query"][0]),
                  "--follow", *SAMPLE)
    assert out.count("DXGK_SEGMENTDESCRIPTOR3  x64 WDDM3_0") == 3
    assert "-> 4 SIZE_T (NbOfBanks = 4) at fffff806`1a2c3f40" in out and "SIZE_T 0x10000000" in out


# ---- the same structures in a log, a raw image and each kind of kernel dump

def _log_of(placements: dict) -> str:
    lines = ["Opened log file 'C:\\scene.log'", "Breakpoint 0 hit"]
    for address, data in placements.items():
        lines.append(f"0: kd> db {at(address)} L{len(data):x}")
        lines += build.dump_lines("db", address, data)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def memories(tmp_path_factory) -> dict:
    """name -> the input options of one memory holding the scene (tests/memory_scene.py)."""
    tmp = tmp_path_factory.mktemp("memories")
    placements = scene(X64)
    base, raw = image(placements)
    (tmp / "scene.log").write_text(_log_of(placements))
    (tmp / "image.bin").write_bytes(raw)
    out = {"log": ["--windbg", tmp / "scene.log"], "raw image": ["--file", tmp / "image.bin", "--base", at(base)]}
    machine = Machine.holding(placements)
    for kind in sorted(KINDS):
        out[f"{kind} dump"] = ["--dump", write_dump(tmp / f"{kind}.dmp", machine, kind)]
    return out


MEMORIES = ["log", "raw image", *(f"{kind} dump" for kind in sorted(KINDS))]


@pytest.mark.parametrize("name", MEMORIES)
def test_both_chains_are_followed_and_validated_alike_from_a_log_a_raw_image_and_each_kind_of_kernel_dump(memories,
                                                                                                           name):
    if name.endswith("dump"):
        require(importlib.util.find_spec("kdmp_parser") is not None, "kdmp-parser (pip install -e '.[test]')")
    base = base_of(X64)
    given = memories[name]
    texts = {}
    for memory, options in (("log", memories["log"]), (name, given)):
        decode_query = good("decode", "DXGK_QUERYSEGMENTOUT3", *options, "--address", at(base + QUERY), "--follow",
                            *SCENE_TARGET)[0]
        decode_create = good("decode", "DXGKARG_CREATEALLOCATION", *options, "--address", at(base + CREATE),
                             "--follow", "--json", *SCENE_TARGET)[0]
        validated = good("validate", "DXGKARG_CREATEALLOCATION", *options, "--address", at(base + CREATE), "--follow",
                         "--segments-at", at(base + QUERY), *SCENE_TARGET, status=1)[0]
        infos = good("decode", "DXGK_ALLOCATIONINFO", *options, "--address", at(base + INFOS), "--count", "3",
                     *SCENE_TARGET)[0]
        # a record's offset is into its input (the image, the log's range): the rest is the same
        texts[memory] = (decode_query, decode_create, validated, re.sub(r"at \+0x[0-9a-f]+ ", "at ", infos))
    assert texts[name] == texts["log"]
    decode_query, decode_create, validated, infos = texts[name]
    assert decode_query.count("DXGK_SEGMENTDESCRIPTOR3  x64 WDDM2_7") == 16
    hints = json.loads(decode_create)["pointers"]["pAllocationInfo"]["items"][2]["pointers"]
    assert hints["pPrivateDriverData"]["bytes"] == b"hello".hex()
    assert "names segment 19 but the adapter has 16 segments" in validated
    assert infos.count("DXGK_ALLOCATIONINFO  x64 WDDM2_7") == 3


def test_a_raw_image_decodes_at_base_plus_offset_and_at_an_address(memories):
    base = base_of(X64)
    options = memories["raw image"]
    by_address = good("decode", "DXGK_QUERYSEGMENTOUT3", *options, "--address", at(base + QUERY), *SCENE_TARGET)[0]
    by_offset = good("decode", "DXGK_QUERYSEGMENTOUT3", *options, "--offset", hex(QUERY), *SCENE_TARGET)[0]
    assert by_address == by_offset and f"[0] at +0x58 ({at(base + QUERY)})" in by_address
    assert "is below --base" in bad("decode", "DXGK_SEGMENTFLAGS", *options, "--address", at(base - 4))
    assert "`db fffff801`2a3b8000 L0x4` in WinDbg shows them" not in \
        bad("decode", "DXGK_SEGMENTFLAGS", *options, "--address", at(base + 0x8000))


def test_dev_zero_as_file_with_base_is_refused_in_one_line():
    assert bad("decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/zero", "--base", "fffff801`2a3b0000") == \
        "d3dkmddi: error: /dev/zero is a character device, not a regular file: a memory image is read by address, so save it " \
        "to a file first\n"
    assert "standard input is not a memory image" in bad("decode", "DXGK_SEGMENTFLAGS", "--file", "-", "--base", "0")


def test_a_crash_dump_needs_an_address_and_a_number_of_records(memories):
    require(importlib.util.find_spec("kdmp_parser") is not None, "kdmp-parser (pip install -e '.[test]')")
    options = memories["full dump"]
    assert "a crash dump is read by address: give --address" in bad("decode", "DXGK_SEGMENTFLAGS", *options)
    assert "a crash dump has no end at an address: give --count N" in \
        bad("decode", "DXGK_SEGMENTFLAGS", *options, "--address", at(base_of(X64)), "--count", "all")
    err = bad("decode", "DXGK_SEGMENTFLAGS", *options, "--address", "ffffc000`00000000")
    assert "ffffc000`00000000" in err and "not mapped" in err


def test_a_crash_dump_without_kdmp_parser_says_the_pip_command(memories, monkeypatch):
    monkeypatch.setitem(sys.modules, "kdmp_parser", None)  # import kdmp_parser raises ImportError
    err = bad("decode", "DXGK_SEGMENTFLAGS", *memories["full dump"], "--address", at(base_of(X64)))
    assert err == "d3dkmddi: error: reading a crash dump needs the kdmp-parser package: pip install 'd3dkmddi_py[dump]'\n"


# ---- hostile inputs: one line, exit 2

def test_overlapping_disagreeing_dumps_on_the_command_line_name_both_lines(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("0: kd> dd 1000 L2\n00001000  00000485 00000001\n0: kd> g\n0: kd> dd 1004 L1\n00001004  00000002\n")
    assert bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", log, "--address", "1000") == \
        (f"d3dkmddi: error: {log}: line 5 and line 2 disagree at 00001004: line 2 has 01, line 5 has 02 (the memory "
         f"changed between the two dumps?); keep one of them\n")


def test_a_log_of_only_non_dump_lines_on_the_command_line(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("Opened log file 'C:\\s.log'\n0: kd> g\nBreakpoint 0 hit\n")
    assert "has no memory dumps: its 2 lines are other output (the first, line 1:" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", log)


def test_a_6_mb_line_on_the_command_line():
    data = bytes(range(256)) * 8192
    text = f"0: kd> db 1000\n00001000  {' '.join(f'{b:02x}' for b in data)}\n".encode()
    p = cli.run  # in-process: the 6 MB arrive through a file
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".log") as f:
        f.write(text)
        f.flush()
        out, err, code = p(["decode", "DXGK_SEGMENTFLAGS", "--windbg", f.name, "--address", "1ffc", "--count", "2"])
    assert code == 0, err
    assert "0xfffefdfc" in out and "0x3020100" in out


def test_a_dump_address_that_overflows_64_bits(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("0: kd> dq ffffffff`fffffff8 L2\nffffffff`fffffff8  00000000`00000485 00000000`00000001\n")
    assert "line 2: 16 bytes at ffffffff`fffffff8 run past the end of the 64-bit address space" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", log)
    assert "is not an address" in bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "sample", "--address",
                                      "1`ffffffff`ffffffff")
    assert "has more than 16 hex digits" in bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "sample", "--address",
                                                "10000000000000000")


def test_a_count_of_2_32_minus_1(tmp_path):
    t = __import__("d3dkmddi_py").target(*X64)
    create = t.DXGKARG_CREATEALLOCATION()
    create.NumAllocations, create.pAllocationInfo = 0xFFFFFFFF, 0x2000
    log = tmp_path / "s.log"
    log.write_text("\n".join(["0: kd> dq 1000 L5", *build.dump_lines("dq", 0x1000, bytes(create))]) + "\n")
    assert "DXGKARG_CREATEALLOCATION.NumAllocations = 4294967295, the count of pAllocationInfo: 4294967295 " \
           "DXGK_ALLOCATIONINFO records would take the follow past its limit" in \
        bad("decode", "DXGKARG_CREATEALLOCATION", "--windbg", log, "--follow", *SCENE_TARGET)
    assert f"of the {4 * 0xFFFFFFFF} read at 00001000" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", log, "--address", "1000", "--count", str(0xFFFFFFFF))


@pytest.mark.parametrize("argv, said", [
    (["0x485", "--follow"], "--follow reads pointers in memory at addresses: give --windbg, --dump, or --file with "
                            "--base (not a VALUE)"),
    (["--windbg", "sample", "--follow", "--format", "csv", "-o", "x.csv"], "--follow prints text or JSON"),
    (["--windbg", "sample", "--address", "ffffb80c`4e2f0000", "--follow", "--count", "all"], "give --count N, not all"),
    (["0x485", "--base", "0"], "--base gives the address of --file's first byte (a raw memory image); give --file"),
    (["0x485", "--segments-at", "1000"], "--segments-at ADDRESS reads a DXGK_QUERYSEGMENTOUT* in memory"),
    (["--windbg", "sample", "--address", "0n4096"], "--address '0n4096' is not an address"),
])
def test_memory_options_used_wrongly_are_one_line(argv, said):
    assert said in bad("decode", "DXGK_SEGMENTFLAGS", *argv)


# ---- a wrong flag is answered with the right one, once

def test_a_wrong_flag_is_answered_with_the_right_one_once(memories, tmp_path):
    log, raw = str(samples.SESSION_PATH), str(samples.SEGMENTS_PATH)
    assert f"is not an integer; {log} is WinDbg text: pass --windbg {log}" in bad("decode", "DXGK_SEGMENTFLAGS", log)
    assert f"is not an integer; it is a file: pass --file {raw} (raw bytes)" in bad("decode", "DXGK_SEGMENTFLAGS", raw)
    assert f"{raw} is not text (UTF-8, or UTF-16 with a byte-order mark); for raw bytes pass --file {raw}" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", raw)
    assert f"{log} is WinDbg text: pass --windbg {log}" in bad("decode", "DXGK_SEGMENTFLAGS", "--file", log, "--base", "0")
    assert f"{log} is WinDbg text: pass --windbg {log}" in bad("decode", "DXGK_SEGMENTFLAGS", "--dump", log)
    assert f"{raw} is not a Windows crash dump (it does not start with PAGEDU64): for a raw memory image pass --file " \
           f"{raw} --base ADDRESS" in bad("decode", "DXGK_SEGMENTFLAGS", "--dump", raw)
    assert f"is not hex bytes; {log} is WinDbg text: pass --windbg {log}" in bad("decode", "DXGK_SEGMENTFLAGS", "--hex", log)
    dump = str(memories["full dump"][1])
    for argv in ([dump], ["--windbg", dump], ["--file", dump, "--base", "0"], ["--file", dump, "--address", "0"]):
        assert f"{dump} is a Windows crash dump, read by address: pass --dump {dump} --address ADDRESS" in \
            bad("decode", "DXGK_SEGMENTFLAGS", *argv)
    # the flag named is the one that reads it: no second hint
    good("decode", "DXGK_SEGMENTFLAGS", "--windbg", log, "--address", "ffffb80c`4e310000")
    good("decode", "DXGK_SEGMENTFLAGS", "--file", raw)


def test_a_message_that_starts_with_a_path_like_the_commands_name_gets_the_error_prefix(tmp_path, monkeypatch):
    """A hint naming ``d3dkmddi_py/samples/...`` passed for argparse's own "d3dkmddi decode: ..." lines and
    lost its "d3dkmddi: error:" prefix."""
    monkeypatch.chdir(samples.DIRECTORY.parent.parent)
    err = bad("decode", "DXGK_SEGMENTFLAGS", "--dump", "d3dkmddi_py/samples/session.log")
    assert err.startswith("d3dkmddi: error: d3dkmddi_py/samples/session.log is WinDbg text")
