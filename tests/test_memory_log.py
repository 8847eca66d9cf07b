"""A WinDbg log is memory (issue 24): every dump in a text, with prompts, command lines and other output
between them, becomes ranges of bytes at addresses (memory.WinDbgLog over windbg.scan_log).  Expected
bytes are typed by hand from the dumps (little-endian: ``dd`` shows 00000485 for 85 04 00 00)."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.errors import DecodeError, WinDbgTextError
from d3dkmddi_py.memory import MemoryConflict, MemoryGap, WinDbgLog
from d3dkmddi_py.samples import build
from d3dkmddi_py.windbg import parse_windbg, scan_log

# A session as WinDbg's .logopen writes it: the header, prompts, a breakpoint, disassembly (an address and
# ONE space), dt output, and dumps of several commands in no order.
SESSION = """\
Opened log file 'C:\\Users\\dev\\session.log'
0: kd> bp mydriver!DxgkDdiCreateAllocation
0: kd> g
Breakpoint 0 hit
mydriver!DxgkDdiCreateAllocation:
fffff801`2a3b1000 4c8bdc          mov     r11,rsp
0: kd> dq ffffb80c`4e2f0000 L4
ffffb80c`4e2f0000  00000000`00000485 00000000`00000001
ffffb80c`4e2f0010  00000000`00000002 00000000`00000003
0: kd> dt dxgkrnl!_DXGK_SEGMENTFLAGS ffffb80c`4e2f0000
   +0x000 Aperture         : 0y1
0: kd> db 8a3b4000 L8
8a3b4000  85 04 00 00 01 00 00 00                          ........
0: kd> dd ffffb80c`4e2f0020 L4
ffffb80c`4e2f0020  00000004 00000000 00000005 00000000

0: kd> .logclose
Closing open log file C:\\Users\\dev\\session.log
"""
Q = 0xFFFFB80C4E2F0000


def words(*values, size=8) -> bytes:
    return b"".join(v.to_bytes(size, "little") for v in values)


def test_a_session_log_is_ranges_of_bytes_at_addresses_each_named_by_its_first_line():
    log = WinDbgLog(SESSION, "session.log")
    assert log.read(Q, 0x30) == words(0x485, 1, 2, 3, 4, 5)  # the dq and the dd touch: one range
    assert log.read(0x8A3B4000, 8) == words(0x485, 1, size=4)
    assert log.spans() == ((0x8A3B4000, 0x8A3B4008, ("line 13",)), (Q, Q + 0x30, ("line 8", "line 15")))
    assert [(d.first_line, d.last_line) for d in log.scan.dumps] == [(8, 9), (13, 13), (15, 15)]


def test_prompts_and_blank_lines_are_passed_over_other_output_is_skipped_and_reported():
    scan = scan_log(SESSION, "session.log")
    # the header, the breakpoint line, the symbol line, the disassembly, the dt line, the closing line
    assert (scan.skipped, scan.first_skipped) == (6, (1, "Opened log file 'C:\\Users\\dev\\session.log'"))
    assert scan.note() == ("session.log: skipped 6 lines that are not a memory dump (the first, line 1: "
                           "\"Opened log file 'C:\\\\Users\\\\dev\\\\session...\")")  # clipped to 40
    assert scan_log("0: kd> dd 1000 L1\n00001000  00000485\n").note() == ""


@pytest.mark.parametrize("command, line", [
    ("db", "00001000  85 04 00 00 01 00 00 00-02 00 00 00 03 00 00 00  ................"),
    ("dw", "00001000  0485 0000 0001 0000 0002 0000 0003 0000"),
    ("dd", "00001000  00000485 00000001 00000002 00000003"),
    ("dc", "00001000  00000485 00000001 00000002 00000003  ................"),
    ("dq", "00001000  00000001`00000485 00000003`00000002"),
    ("dp", "00001000  00000485 00000001 00000002 00000003"),  # an 8-digit address: a 32-bit target's pointers
    ("dyb", "00001000  10000101 00000100 00000000 00000000  85 04 00 00"),
])
def test_every_dump_command_in_a_log_is_read_by_the_one_line_reader(command, line):
    log = WinDbgLog(f"Breakpoint 0 hit\n0: kd> {command} 1000\n{line}\n0: kd> g\n")
    want = parse_windbg(line)  # the single-dump reader reads the same line to the same bytes
    assert log.read(0x1000, len(want.data)) == want.data
    assert want.data[:4] == b"\x85\x04\x00\x00"


def test_dps_and_dds_keep_the_pointer_and_drop_the_symbol():
    text = ("0: kd> dps fffff801`2a3b4000 L2\nfffff801`2a3b4000  fffff801`12345678 nt!KiSystemStartup+0x10\n"
            "fffff801`2a3b4008  00000000`00000000\n0: kd> dds 8a3b4000 L1\n8a3b4000  8a3b5000 mydriver+0x5000\n")
    log = WinDbgLog(text)
    assert log.read(0xFFFFF8012A3B4000, 16) == words(0xFFFFF80112345678, 0)
    assert log.read(0x8A3B4000, 4) == words(0x8A3B5000, size=4)


def test_dumps_of_any_width_in_any_order():
    row = " ".join(f"{b:02x}" for b in range(32))
    text = (f"0: kd> db /c 32 00002000 L20\n00002000  {row}\n"
            "0: kd> dd /c 2 00001000 L4\n00001000  00000001 00000002\n00001008  00000003 00000004\n")
    log = WinDbgLog(text)
    assert log.read(0x2000, 32) == bytes(range(32)) and log.read(0x1000, 16) == words(1, 2, 3, 4, size=4)


def test_two_dumps_that_overlap_and_agree_merge():
    log = WinDbgLog("0: kd> dd 1000 L2\n00001000  00000001 00000002\n0: kd> dd 1004 L2\n00001004  00000002 00000003\n")
    assert log.spans() == ((0x1000, 0x100C, ("line 2", "line 4")),) and log.read(0x1000, 12) == words(1, 2, 3, size=4)


def test_two_dumps_that_overlap_and_disagree_are_refused_naming_both_lines():
    text = ("0: kd> dd 1000 L8\n00001000  00000001 00000002 00000003 00000004\n"
            "00001010  00000005 00000006 00000007 00000008\n"
            "0: kd> g\nBreakpoint 0 hit\n0: kd> dd 1014 L1\n00001014  00000009\n")
    with pytest.raises(MemoryConflict) as e:
        WinDbgLog(text, "session.log")
    # the byte is on the second line of the first dump (line 3), not its first line
    assert str(e.value) == ("session.log: line 7 and line 3 disagree at 00001014: line 3 has 06, line 7 has 09 (the "
                            "memory changed between the two dumps?); keep one of them")
    assert e.value.origins == ("line 3", "line 7") and e.value.address == 0x1014


def test_gaps_are_gaps_and_reading_one_names_the_missing_bytes_and_the_db_command():
    log = WinDbgLog("00001000  00000001 00000002\n0: kd> dd 1010\n00001010  00000003\n", "s.log")
    with pytest.raises(MemoryGap) as e:
        log.read(0x1000, 0x14)
    assert e.value.missing == ((0x1008, 0x1010),)
    assert "s.log has no bytes at 00001008..0000100f (8 bytes)" in str(e.value) and "db 00001008 L0x8" in str(e.value)


def test_a_log_of_several_ranges_needs_an_address_and_one_range_does_not():
    log = WinDbgLog(SESSION, "session.log")
    with pytest.raises(DecodeError, match=r"session.log holds 2 separate ranges of memory \(8a3b4000 \(line 13\), "
                                          r"ffffb80c`4e2f0000 \(line 8, line 15\)\); give the address"):
        log.memory_at()
    memory = log.memory_at("ffffb80c`4e2f0018")
    assert (memory.address, len(memory.data), memory.address_bytes) == (Q, 0x30, 8)
    assert WinDbgLog("0: kd> dd 1000\n00001000  00000485\n").memory_at().address == 0x1000
    with pytest.raises(MemoryGap, match="db ffffb80c`4e2f0030 L0x1"):
        log.memory_at(Q + 0x30)


def test_a_damaged_dump_line_is_refused_naming_it():
    text = "Breakpoint 0 hit\n0: kd> dd 1000\n00001000  00000485 0000zz00\n"
    with pytest.raises(WinDbgTextError, match=r"log line 3: '0000zz00' at column 20 is not an 8-digit dword"):
        WinDbgLog(text, "log")


def test_values_shown_as_question_marks_end_their_line_and_are_counted():
    text = ("0: kd> dq fffff801`2a3b4ff8 L3\nfffff801`2a3b4ff8  00000000`00000485 ????????`????????\n"
            "fffff801`2a3b5008  ????????`????????\n")
    log = WinDbgLog(text, "log")
    assert log.spans() == ((0xFFFFF8012A3B4FF8, 0xFFFFF8012A3B5000, ("line 2",)),)
    assert (log.scan.unreadable, log.scan.first_unreadable[0]) == (2, 2)
    assert "2 dump lines the debugger could not read, shown as ?? (the first, line 2)" in log.scan.note()
    with pytest.raises(WinDbgTextError, match="line 1: memory shown as \\?\\? was not readable in the debugger"):
        WinDbgLog("fffff801`2a3b4ff8  ????????`????????\n")


@pytest.mark.parametrize("text", [
    "Opened log file 'C:\\session.log'\nBreakpoint 0 hit\n0: kd> g\n",
    "fffff801`2a3b1000 4c8bdc          mov     r11,rsp\nfffff801`2a3b1003 4883ec28        sub     rsp,28h\n",
])
def test_a_log_of_only_non_dump_lines_is_refused_in_one_line(text):
    with pytest.raises(WinDbgTextError) as e:
        WinDbgLog(text, "session.log")
    assert "\n" not in str(e.value)
    if text.startswith("Opened"):
        assert str(e.value).startswith("session.log has no memory dumps: its 2 lines are other output (the first, "
                                       "line 1: \"Opened log file 'C:\\\\session.log'\")")


def test_dt_output_alone_is_refused_with_the_hint_to_dump_the_bytes():
    with pytest.raises(WinDbgTextError, match=r"is `dt`/`dx` output .* run `db <address> L<size>`"):
        WinDbgLog("0: kd> dt nt!_DXGK_SEGMENTFLAGS 1000\n   +0x000 Aperture         : 0y1\n")


def test_a_stack_line_of_one_space_is_other_output_not_a_pointer():
    """`k` prints Child-SP, one space, RetAddr, one space, the symbol: it has the shape of a retyped dps line
    and is no dump."""
    text = ("0: kd> k\n # Child-SP          RetAddr           Call Site\nffffd001`e2f3a8c8 fffff803`1e3d4a1e "
            "nt!KeBugCheckEx\n0: kd> dd 1000 L1\n00001000  00000485\n")
    log = WinDbgLog(text)
    assert log.spans() == ((0x1000, 0x1004, ("line 5",)),) and log.scan.skipped == 2


def test_a_text_of_one_space_lines_only_is_one_retyped_dump():
    log = WinDbgLog("00001000 00000485 00000001\n00001008 00000002\n")
    assert log.read(0x1000, 12) == words(0x485, 1, 2, size=4)
    with pytest.raises(WinDbgTextError, match="line 2: address 00001010 does not follow line 1"):
        WinDbgLog("00001000 00000485 00000001\n00001010 00000002\n")


def test_a_dump_line_wider_than_its_dumps_first_is_refused():
    with pytest.raises(WinDbgTextError, match="line 3: 3 values after 2 on line 2"):
        WinDbgLog("0: kd> dd 1000\n00001000  00000001 00000002\n00001008  00000003 00000004 00000005\n")


def test_a_dump_address_that_overflows_64_bits_is_refused():
    text = "0: kd> dq ffffffff`fffffff8 L2\nffffffff`fffffff8  00000000`00000485 00000000`00000001\n"
    with pytest.raises(WinDbgTextError, match=r"log line 2: 16 bytes at ffffffff`fffffff8 run past the end of the "
                                              r"64-bit address space"):
        WinDbgLog(text, "log")
    with pytest.raises(WinDbgTextError, match="run past the end of the 64-bit address space"):
        parse_windbg("ffffffff`fffffff8  00000000`00000485 00000000`00000001")


def test_a_6_mb_line():
    """A 6 MB dump line (db /c 2000000) is read whole, in linear time; a 6 MB line of other output is skipped
    and reported clipped."""
    data = bytes(range(256)) * 8192
    row = " ".join(f"{b:02x}" for b in data)
    assert len(row) > 6_000_000
    log = WinDbgLog(f"0: kd> db /c 0n{len(data)} 1000\n00001000  {row}\nBreakpoint 0 hit\n")
    assert log.read(0x1000, len(data)) == data
    junk = WinDbgLog("x" * 6_000_000 + "\n0: kd> dd 1000\n00001000  00000485\n", "log")
    assert junk.scan.skipped == 1 and len(junk.scan.note()) < 200


def test_a_utf16_log_of_logopen_u_and_a_byte_order_mark_are_read():
    assert WinDbgLog("\ufeff0: kd> dd 1000\r\n00001000  00000485\r\n").read(0x1000, 4) == b"\x85\x04\x00\x00"


def test_decode_reads_every_structure_of_a_log_by_address():
    flags = kmd.decode("DXGK_SEGMENTFLAGS", SESSION, address="8a3b4000", count=2)
    assert [f.Value for f in flags] == [0x485, 1]
    assert [r.Value for r in kmd.decode("DXGK_SEGMENTFLAGS", SESSION, address=Q + 0x20, count=4)] == [4, 0, 5, 0]
    with pytest.raises(DecodeError, match="holds 2 separate ranges"):
        kmd.decode("DXGK_SEGMENTFLAGS", SESSION, count=1)
    with pytest.raises(MemoryGap, match=r"no bytes at ffffb80c`4e2f0030\.\.ffffb80c`4e2f0033 \(4 bytes\) of the 8 "
                                        r"read at ffffb80c`4e2f002c"):
        kmd.decode("DXGK_SEGMENTFLAGS", SESSION, address=Q + 0x2C, count=2)


def test_decode_from_memory_at_an_address():
    log = WinDbgLog(SESSION)
    assert [f.Value for f in kmd.decode("DXGK_SEGMENTFLAGS", memory=log, address="ffffb80c`4e2f0000", count=2)] == \
        [0x485, 0]
    ranges = kmd.as_memory(bytes(4) + b"\x85\x04\0\0", base=0x1000)
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", memory=ranges, address="1004").Value == 0x485
    with pytest.raises(DecodeError, match="give base="):
        kmd.decode_one("DXGK_SEGMENTFLAGS", memory=b"\x85\x04\0\0", address=0x1000)
    with pytest.raises(DecodeError, match="memory has no end"):
        kmd.decode("DXGK_SEGMENTFLAGS", memory=log, address=Q, count="all")
    with pytest.raises(DecodeError, match="give address="):
        kmd.decode("DXGK_SEGMENTFLAGS", memory=log, count=1)


def test_report_reads_a_log_of_several_dumps_at_an_address():
    text = kmd.report("DXGK_SEGMENTFLAGS", SESSION, address="8a3b4000", count=2)
    assert text.count("DXGK_SEGMENTFLAGS  x64") == 2 and "[1] at +0x4 (00000000`8a3b4004)" in text


def test_decode_follow_from_log_text_and_from_memory_alike():
    t = kmd.target("x64", "WDDM2_7")
    q = t.DXGK_QUERYSEGMENTOUT3()
    q.NbSegment, q.pSegmentDescriptor = 2, 0x2000
    d = (t.DXGK_SEGMENTDESCRIPTOR3 * 2)()
    d[0].Size, d[1].Size = 1 << 20, 2 << 20
    text = "\n".join(["Breakpoint 0 hit", "0: kd> db 1000", *build.dump_lines("db", 0x1000, bytes(q)),
                      "0: kd> dq 2000", *build.dump_lines("dq", 0x2000, bytes(d))]) + "\n"
    from_text = kmd.decode_one("DXGK_QUERYSEGMENTOUT3", text, address="1000", follow=True, target=t)
    from_memory = kmd.decode("DXGK_QUERYSEGMENTOUT3", memory=WinDbgLog(text), address=0x1000, count=1, follow=True,
                             target=t)[0]
    assert kmd.render_follow(from_text) == kmd.render_follow(from_memory)
    assert [n.values["Size"] for n in from_text.link("pSegmentDescriptor").items] == [1 << 20, 2 << 20]
    with pytest.raises(DecodeError, match="follow=True reads pointers in memory at addresses"):
        kmd.decode_one("DXGK_QUERYSEGMENTOUT3", bytes(q), follow=True, target=t)


def test_a_pointer_cycle_in_a_log_is_shown_once_not_followed_again():
    """Two allocation infos that point to each other, dumped in a log, through a made-up table that makes
    pAllocationUsageHint the link of a list: the text shows the cycle and ends."""
    from d3dkmddi_py._spec.model import PointsTo

    t = kmd.target("x64", "WDDM2_7")
    a, b = t.DXGK_ALLOCATIONINFO(), t.DXGK_ALLOCATIONINFO()
    a.pAllocationUsageHint, b.pAllocationUsageHint = 0x2000, 0x1000
    text = "\n".join(["Breakpoint 0 hit", "0: kd> dq 1000", *build.dump_lines("dq", 0x1000, bytes(a)),
                      "0: kd> dq 2000", *build.dump_lines("dq", 0x2000, bytes(b))]) + "\n"
    table = {("DXGK_ALLOCATIONINFO", "pAllocationUsageHint"): PointsTo("DXGK_ALLOCATIONINFO", 1, (), None)}
    node = kmd.follow("DXGK_ALLOCATIONINFO", WinDbgLog(text), 0x1000, target=t, table=table)
    shown = kmd.render_follow(node, meanings=False)
    assert shown.count("DXGK_ALLOCATIONINFO  x64 WDDM2_7") == 2
    assert "[0] at 00000000`00001000: cycle" in shown
