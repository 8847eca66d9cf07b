"""Issue 30, "No silent misread on the new inputs": WinDbg logs as people keep them.  Each case is a test named
after it; each class a guard that holds for its siblings:

- every line's unit is the dump's unit (a cut line, a line of another width under a command, dyd's binary
  groups, dD/df's decimal numbers): a line that changes it is damage, refused or skipped and said;
- one odd line does not stop a log (dpa/dpu, dda/ddu/dqa/dqu, ddp/dqp/dpp, dD/df/da/du): read or said;
- a "line N" is the line an editor shows (\\n, \\r\\n, \\r end lines; \\f, \\v, NEL, U+2028 do not);
- a log read at another pointer width than its addresses say is refused (an x86 record above 4 GB) or said;
- a log file is read a chunk at a time, whatever its size;
- a follow's limits hold for the whole command, and its output is written a piece at a time.
Expected bytes are typed by hand from the dumps (little-endian: ``dd`` shows 00000485 for 85 04 00 00)."""
from __future__ import annotations

import json
import sys

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli
from d3dkmddi_py.errors import DecodeError, WinDbgTextError
from d3dkmddi_py.follow import FollowLimit, follow_all, follow_json, follow_json_pieces, render_follow, \
    render_follow_lines
from d3dkmddi_py.memory import ImageFile, WinDbgLog
from d3dkmddi_py.pipeline import source
from d3dkmddi_py.samples import SESSION_PATH
from d3dkmddi_py.windbg import parse_windbg, scan_log, text_lines

from .commandline import cli as command, good, one_line

Q = 0xFFFFB80C4E310000


def words(*values, size=8) -> bytes:
    return b"".join(v.to_bytes(size, "little") for v in values)


def run(*argv) -> tuple:
    return cli.run([str(a) for a in argv])


# ------------------------------------------------------------------ 1. a cut line read at another width
CUT_DQ = """\
0: kd> dq ffffb80c`4e310000 L4
ffffb80c`4e310000  00000000`00000003 ffffb80c`4e311000
ffffb80c`4e310010  fffff801
"""
CUT_DD = """\
0: kd> dd 1000 L8
00001000  00000001 00000002 00000003 00000004
00001010  0000
"""


@pytest.mark.parametrize("prompt", [True, False], ids=["with its command", "lines alone"])
def test_a_cut_dq_line_is_refused_not_read_as_a_dword_at_the_qwords_address(prompt):
    text = CUT_DQ if prompt else CUT_DQ.split("\n", 1)[1]
    number = 3 if prompt else 2
    for reader in (WinDbgLog, parse_windbg):
        with pytest.raises(WinDbgTextError, match=rf"line {number}: 'fffff801' continues the dq dump of line "
                                                  rf"{number - 1} but ends inside a 16-digit qword: the line was cut"):
            reader(text)


def test_a_cut_dq_line_on_the_command_line_is_one_line_exit_2(tmp_path):
    log = tmp_path / "cut.log"
    log.write_text(CUT_DQ)
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", log, "--address", "ffffb80c`4e310010")
    assert (status, out) == (2, "") and "0xfffff801" not in err and err.count("\n") == 1
    assert "cut.log line 3: 'fffff801' continues the dq dump of line 2" in err


def test_a_cut_dd_line_is_refused_not_read_as_a_word():
    with pytest.raises(WinDbgTextError, match=r"line 3: '0000' continues the dd dump of line 2 but ends inside an "
                                              r"8-digit dword"):
        WinDbgLog(CUT_DD)


# The class: every line continuing a dump is read in the dump's unit; its siblings are a cut at every
# character of every unit's line (inside a value, after a qword's backtick, inside a db byte), each read
# as the bytes the line really holds there or refused.
FULL_LINES = {
    "db": "00001000  85 04 00 00 01 00 00 00-02 00 00 00 03 00 00 00  ................\n"
          "00001010  11 22 33 44 55 66 77 88-99 aa bb cc dd ee ff 00  .\"3DUfw.........",
    "dw": "00001000  0485 0000 0001 0000 0002 0000 0003 0000\n00001010  2211 4433 6655 8877 aa99 ccbb eedd 00ff",
    "dd": "00001000  00000485 00000001 00000002 00000003\n00001010  44332211 88776655 ccbbaa99 00ffeedd",
    "dq": "00000000`00001000  00000001`00000485 00000003`00000002\n"
          "00000000`00001010  88776655`44332211 00ffeedd`ccbbaa99",
}
MEMORY = words(0x485, 1, 2, 3, size=4) + bytes.fromhex("112233445566778899aabbccddeeff00")


@pytest.mark.parametrize("unit", FULL_LINES)
def test_every_line_of_a_dump_is_read_in_the_dumps_unit(unit):
    text = FULL_LINES[unit]
    first, second = text.split("\n")
    assert WinDbgLog(text).read(0x1000, 32) == MEMORY
    start = second.index("  ") + 2
    for cut in range(start + 1, len(second)):
        text = f"0: kd> {unit} 1000 L20\n{first}\n{second[:cut]}\n"
        for reader in (WinDbgLog, parse_windbg):
            try:
                got = reader(text)
            except WinDbgTextError:
                continue
            if isinstance(got, WinDbgLog):
                for low, high, _origins in got.spans():
                    assert got.read(low, high - low) == MEMORY[low - 0x1000:high - 0x1000], (unit, cut, text)
            else:
                assert got.address == 0x1000 and got.data == MEMORY[:len(got.data)], (unit, cut, text)


@pytest.mark.parametrize("command, line", [
    ("dq ffffb80c`4e310000 L1", "ffffb80c`4e310000  fffff801"),  # a dq line cut after its first 8 digits
    ("dd 1000 L4", "00001000  0485 0000 0001 0000"),
    ("dw 1000 L4", "00001000  85 04 00 00"),
    ("db 1000 L4", "00001000  00000485"),
    ("dp ffffb80c`4e310000 L1", "ffffb80c`4e310000  00000485"),  # a 64-bit target's dp prints qwords
])
def test_a_line_of_another_width_under_a_dump_command_is_refused(command, line):
    text = f"0: kd> {command}\n{line}\n"
    for reader in (WinDbgLog, parse_windbg):
        with pytest.raises(WinDbgTextError, match=rf"line 2: .* is not (a|an) .* as {command.split()[0]} prints it "
                                                  rf"\(line 1\)"):
            reader(text)


def test_a_whole_line_of_another_unit_after_a_dump_is_a_dump_of_its_own():
    """Not a cut: two commands on one prompt print one after the other (`dd ...; dw ...`)."""
    text = ("0: kd> dd 1000 L4; dw 1010 L4\n00001000  00000485 00000001 00000002 00000003\n"
            "00001010  2211 4433 6655 8877\n")
    log = WinDbgLog(text)
    assert [(d.unit, d.first_line) for d in log.scan.dumps] == [("dd", 2), ("dw", 3)]
    assert log.read(0x1000, 24) == MEMORY[:24]


# ------------------------------------------------------------------ 2. dyd read as dd, dD read as dd
DYD = """\
0: kd> dyd 1000 L3
           3          2          1          0
          10987654 32109876 54321098 76543210
          -------- -------- -------- --------
00001000  00000000 00000000 00000100 10000101  00000485
00001004  00000000 00000000 00000000 00000001  00000001
00001008  10000000 00000000 00000000 00000010  80000002
"""


@pytest.mark.parametrize("prompt", [True, False], ids=["with its command", "with its header alone"])
def test_dyd_lines_are_read_as_their_dwords_not_as_four_hex_dwords(prompt):
    text = DYD if prompt else DYD.split("\n", 1)[1]
    assert parse_windbg(text).data == words(0x485, 1, 0x80000002, size=4)
    log = WinDbgLog(text)
    assert log.spans() == ((0x1000, 0x100C, (f"line {5 if prompt else 4}",)),) and log.scan.note() == ""


def test_a_dyd_log_on_the_command_line_raises_no_false_memory_changed(tmp_path):
    log = tmp_path / "dyd.log"
    log.write_text(DYD)
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", log, "--address", "1000", "--count", "3",
                           "--format", "csv")
    assert status == 0 and err == "", err
    assert [int(row.split(",")[-1], 0) for row in out.splitlines()[1:]] == [0x485, 1, 0x80000002]


@pytest.mark.parametrize("line, what", [
    ("00001000  00000000 00000000 00000100 10000101  00000486", "the binary groups and the hex dwords after them "
                                                                "differ"),
    ("00001000  00000000 00000000 00000100 10000101  0485", "is not dyd's binary groups followed by the same dwords"),
    ("00001000  10000101 00000100  85 04 00", "is not dyd's binary groups"),
])
def test_a_dyd_line_that_is_not_dyds_layout_is_refused(line, what):
    with pytest.raises(WinDbgTextError, match=what):
        WinDbgLog(f"0: kd> dyd 1000\n{line}\n")


def _floats(command: str, values, address: int = 0x2000) -> str:
    code, size, field = ("<d", 8, 22) if command == "dD" else ("<f", 4, 15)
    line = f"{address:08x} " + "".join(f"{v:.{15 if size == 8 else 7}g}".rjust(field) for v in values)
    return f"0: kd> {command} {address:x}\n{line}\n"


@pytest.mark.parametrize("command", ["dD", "df"])
@pytest.mark.parametrize("prompt", [True, False], ids=["with its command", "lines alone"])
def test_dD_and_df_lines_are_never_read_as_dwords(command, prompt):
    """A double that prints as 8 digits (12345678) looked like a dd line."""
    text = _floats(command, [12345678.0, 0.0, 1.5])
    if not prompt:
        text = text.split("\n", 1)[1]
    with pytest.raises(WinDbgTextError, match=r"line \d: .*(dD|df)"):
        parse_windbg(text)
    log = WinDbgLog("0: kd> dd 1000 L1\n00001000  00000485\n" + text)
    assert log.spans() == ((0x1000, 0x1004, ("line 2",)),)
    assert (log.scan.not_bytes, log.scan.first_not_bytes[0]) == (1, 4 if prompt else 3)
    assert "skipped 1 dump line of dD, df, da or du" in log.scan.note()


@pytest.mark.parametrize("command, line", [("da", '00002000  "umd create data!"'), ("du", '00002000  "C:\\Windows"')])
def test_da_and_du_lines_are_skipped_and_said_in_a_log(command, line):
    log = WinDbgLog(f"0: kd> dd 1000 L1\n00001000  00000485\n0: kd> {command} 2000\n{line}\n")
    assert log.scan.not_bytes == 1 and len(log) == 1
    with pytest.raises(WinDbgTextError, match=rf"{command} output \(.*characters\) is not the memory's bytes"):
        parse_windbg(f"0: kd> {command} 2000\n{line}\n")


# ------------------------------------------------------------------ 3. logs as people keep them
@pytest.mark.parametrize("command", ["dpa", "dpu", "dqa", "dqu"])
@pytest.mark.parametrize("spaces", [" ", "  "])
def test_a_dpa_or_dpu_line_anywhere_in_a_log_keeps_its_pointer(command, spaces, tmp_path):
    text = ("0: kd> dq 1000 L2\n00000000`00001000  00000000`00000485 00000000`00000001\n"
            f"0: kd> {command} 2000 L2\n00000000`00002000  00000000`00003000{spaces}\"hello  world\"\n"
            f"00000000`00002008  00000000`00000000{spaces}\"\"\n")
    log = WinDbgLog(text)
    assert log.read(0x2000, 16) == words(0x3000, 0) and log.read(0x1000, 16) == words(0x485, 1)
    assert WinDbgLog(text.replace(f"0: kd> {command} 2000 L2\n", "")).read(0x2000, 16) == words(0x3000, 0)
    path = tmp_path / "session.log"
    path.write_text(text)
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", path, "--address", "1000")
    assert status == 0 and "Value" in out, err


@pytest.mark.parametrize("command", ["dda", "ddu"])
def test_dda_and_ddu_keep_their_32_bit_pointer(command):
    log = WinDbgLog(f"0: kd> {command} 2000 L2\n00002000  00003000 \"abc\"\n00002004  00000000 \"\"\n")
    assert log.read(0x2000, 8) == words(0x3000, 0, size=4)


@pytest.mark.parametrize("command, width", [("ddp", 4), ("dqp", 8), ("dpp", 8)])
def test_ddp_dqp_dpp_keep_the_pointer_not_the_value_it_points_to(command, width):
    a = lambda n: f"{n:08x}" if width == 4 else f"{n >> 32:08x}`{n & 0xFFFFFFFF:08x}"  # noqa: E731
    text = (f"0: kd> {command} 2000 L2\n{a(0x2000)}  {a(0x3000)} {a(0x485)}\n"
            f"{a(0x2000 + width)}  {a(0x3100)} {a(0x1)} nt!Foo+0x10\n")
    assert WinDbgLog(text).read(0x2000, 2 * width) == words(0x3000, 0x3100, size=width)


@pytest.mark.parametrize("width", [4, 8])
def test_ddp_lines_without_their_command_keep_the_pointer_not_the_value_it_points_to(width):
    """A sibling: ddp/dqp/dpp lines pasted without the prompt read as two values a line, the second line
    starting inside the first, "memory changed" or the pointee read as memory.  Lines that overlap so are
    read as d*p's; no display command prints them otherwise."""
    a = lambda n: f"{n:08x}" if width == 4 else f"{n >> 32:08x}`{n & 0xFFFFFFFF:08x}"  # noqa: E731
    text = "".join(f"{a(0x2000 + k * width)}  {a(0x3000 + k)} {a(0x485 + k)}{' nt!Foo+0x10' if k % 2 else ''}\n"
                   for k in range(4))
    for reader in (WinDbgLog, parse_windbg):
        got = reader(text)
        data = got.read(0x2000, 4 * width) if isinstance(got, WinDbgLog) else got.data
        assert data == words(0x3000, 0x3001, 0x3002, 0x3003, size=width)


@pytest.mark.parametrize("char", ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"],
                         ids=["FF", "VT", "FS", "GS", "RS", "NEL", "LS", "PS"])
def test_lines_are_counted_at_newline_crlf_and_cr_only(char):
    """str.splitlines() also ends a line at each of these: every "line N" after one was off."""
    text = f"0: kd> dd 1000 L1{char}\r\n00001000  00000485\rBreakpoint 0 hit{char}x\n0: kd> dd 2000\n00002000  0000zz00\n"
    assert text_lines(text)[4] == "00002000  0000zz00" and len(text_lines(text)) == 5
    with pytest.raises(WinDbgTextError) as e:
        WinDbgLog(text)
    assert e.value.line_number == 5 and "line 5:" in str(e.value)
    log = WinDbgLog(text.replace("0000zz00", "00000001"))
    assert log.scan.first_skipped == (3, f"Breakpoint 0 hit{char}x") and len(log) == 2
    one = f"0: kd> dd 1000 L2{char}\r\n{char}\r00001000  00000485\n00001004  0000zz00\n"
    with pytest.raises(WinDbgTextError) as e:
        parse_windbg(one)
    assert e.value.line_number == 4 and "line 4:" in str(e.value)


def test_a_form_feed_near_the_start_of_a_log_is_text(tmp_path):
    path = tmp_path / "ff.log"
    path.write_bytes(b"\x0c0: kd> dd 1000 L1\r\n\x0c00001000  00000485\r\n")
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", path)
    assert status == 0 and "0x485 (1157)" in out, err


# ------------------------------------------------------------------ 4. the log's address width against --abi
def test_follow_at_abi_x86_of_a_64_bit_log_is_refused_not_printed_cut():
    out, err, status = run("decode", "DXGK_QUERYSEGMENTOUT3", "--windbg", "sample", "--address", "ffffb80c`4e310000",
                           "--follow", "--abi", "x86", "--ddi", "WDDM3_0")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert "DXGK_QUERYSEGMENTOUT3 at ffffb80c`4e310000: x86 WDDM3_0 (0xF003) is a 32-bit target" in err
    assert "pass --abi x64 or arm64" in err and "at 4e310000" not in err
    log = WinDbgLog(f"ffffb80c`4e310000  {' '.join(['00000000`00000000'] * 2)}\n")
    with pytest.raises(DecodeError, match="is a 32-bit target"):
        kmd.follow("DXGK_QUERYSEGMENTOUT3", log, Q, target=("x86", "WDDM3_0"))
    with pytest.raises(DecodeError, match="is a 32-bit target"):  # not followed: decoded at the address alike
        run_or_raise("decode", "DXGK_QUERYSEGMENTOUT3", "--windbg", "sample", "--address", "ffffb80c`4e310000",
                     "--abi", "x86", "--ddi", "WDDM3_0")


def run_or_raise(*argv):
    out, err, status = run(*argv)
    if status == 2:
        raise DecodeError(err)
    return out


def test_an_x86_array_past_4_gb_is_refused():
    t = kmd.target("x86", "WDDM2_7")
    q = t.DXGK_QUERYSEGMENTOUT3()
    q.NbSegment, q.pSegmentDescriptor = 2, 0xFFFFFFF0
    memory = kmd.as_memory(bytes(q), base=0x1000)
    with pytest.raises(DecodeError, match="run past the end of the 32-bit address space"):
        kmd.follow("DXGK_QUERYSEGMENTOUT3", memory, 0x1000, target=t)


@pytest.mark.parametrize("dump, abi, said", [
    ("00001000  " + " ".join(["00000000"] * 4), "x64", "prints 8-digit addresses, as WinDbg does for a 32-bit target, "
                                                      "and --abi x64 reads 64-bit layouts there"),
    ("00000000`00001000  " + " ".join(["00000000`00000000"] * 2), "x86",
     "prints 16-digit addresses, as WinDbg does for a 64-bit target, and --abi x86 reads 32-bit layouts there"),
])
def test_a_logs_address_width_that_disagrees_with_abi_is_said(dump, abi, said, tmp_path):
    path = tmp_path / "w.log"
    path.write_text("".join(line + "\n" for line in _lines_at(dump, 8)))
    out, err, status = run("decode", "DXGK_ALLOCATIONINFO", "--windbg", path, "--address", "1000", "--abi", abi)
    assert status == 0 and said in err, err
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", path, "--address", "1000", "--abi", abi)
    assert status == 0 and "prints" not in err, err  # laid out alike at both widths: nothing to say


def _lines_at(first: str, count: int) -> list:
    """``count`` lines like ``first``, each 16 bytes on."""
    head, values = first.split("  ", 1)
    wide = "`" in head
    out = []
    for i in range(count):
        at = 0x1000 + 16 * i
        out.append(f"{at >> 32:08x}`{at & 0xFFFFFFFF:08x}  {values}" if wide else f"{at:08x}  {values}")
    return out


# ------------------------------------------------------------------ 5. a log file of any size
def _big_log(records: int) -> str:
    lines = ["Opened log file 'C:\\big.log'"]
    for k in range(records):
        at = 0x10000 + 0x100 * k
        lines.append(f"0: kd> dd {at:x} L4")
        lines.append(f"{at:08x}  {k:08x} {k + 1:08x} {k + 2:08x} {k + 3:08x}")
    return "\r\n".join(lines) + "\r\n"


def test_a_windbg_log_file_larger_than_the_unsized_limit_is_read_in_chunks(tmp_path, monkeypatch):
    """A 270 MB log was refused as "has no size ... save it to a file": a file is read a chunk at a time."""
    path = tmp_path / "big.log"
    path.write_text(_big_log(20_000), newline="")
    size = path.stat().st_size
    monkeypatch.setattr(source, "MAX_UNSIZED_BYTES", size // 4)
    monkeypatch.setattr(source, "CHUNK_BYTES", 4093)  # lines and \r\n split across pieces
    last = 0x10000 + 0x100 * 19_999
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", path, "--address", f"{last + 4:x}",
                           "--format", "csv")
    assert status == 0, err
    assert int(out.splitlines()[1].split(",")[-1], 0) == 20_000  # the second dword of the last dump
    assert "skipped 1 line that is not a memory dump (the first, line 1" in err


def test_a_log_read_in_pieces_is_read_as_the_whole_text():
    text = _big_log(40) + "00100000  0000zz00\n"
    whole = None
    try:
        scan_log(text)
    except WinDbgTextError as exc:
        whole = str(exc)
    assert whole and "line 82" in whole
    ok = _big_log(40)
    want = scan_log(ok)
    for step in (1, 2, 3, 7, 64):
        pieces = iter([ok[i:i + step] for i in range(0, len(ok), step)])
        assert scan_log(pieces) == want
        with pytest.raises(WinDbgTextError) as e:
            scan_log(iter([text[i:i + step] for i in range(0, len(text), step)]))
        assert str(e.value) == whole


def test_a_log_file_that_is_not_text_past_its_first_bytes_is_refused_naming_the_byte(tmp_path):
    path = tmp_path / "bad.log"
    path.write_bytes(_big_log(400).encode() + b"\xff\xfe junk\n")
    out, err, status = run("decode", "DXGK_SEGMENTFLAGS", "--windbg", path, "--address", "10000")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"bad.log is not UTF-8 text at byte {len(_big_log(400).encode()):,}" in err


# ------------------------------------------------------------------ 6. --follow --count N: bounded, streamed
def _creates(tmp_path, records: int, infos: int) -> tuple:
    """An image of ``records`` DXGKARG_CREATEALLOCATION, each pointing to the same ``infos`` allocation infos."""
    t = kmd.target("x64", "WDDM3_2")
    base = 0xFFFFB80C00000000
    create = t.DXGKARG_CREATEALLOCATION()
    create.NumAllocations, create.pAllocationInfo = infos, base + 0x1000
    array = (t.DXGK_ALLOCATIONINFO * infos)()
    for i in range(infos):
        array[i].Size, array[i].Alignment = 0x10000, 0x1000
    image = bytearray(0x1000)
    for k in range(records):
        image[k * len(bytes(create)):(k + 1) * len(bytes(create))] = bytes(create)
    path = tmp_path / "image.bin"
    path.write_bytes(bytes(image) + bytes(array))
    return path, base


def test_follow_count_n_is_bounded_by_one_follows_limits(tmp_path):
    """Each record had its own limits, so --count 4 decoded 4 x 65,536 records (3.9 GB); they hold for all."""
    path, base = _creates(tmp_path, 4, 20_000)
    image = ImageFile(path, base)
    assert len(follow_all("DXGKARG_CREATEALLOCATION", image, base, 3, target=("x64", "WDDM3_2"))) == 3  # 60,003
    with pytest.raises(FollowLimit, match=r"past its limit of 65,536 records"):
        follow_all("DXGKARG_CREATEALLOCATION", image, base, 4, target=("x64", "WDDM3_2"))
    err = one_line(command("decode", "DXGKARG_CREATEALLOCATION", "--file", path, "--base", f"{base:x}", "--address",
                           f"{base:x}", "--follow", "--count", "4", timeout=600))
    assert "past its limit of 65,536 records" in err


def test_follow_output_is_written_a_record_at_a_time(monkeypatch):
    """The text (and JSON) of a follow was made whole before the first byte was written: 1.5 GB for one record
    of 60,000 allocation infos.  Each record's is made when it is reached; the pieces make the same text."""
    log = WinDbgLog(SESSION_PATH.read_text())
    node = kmd.follow("DXGKARG_CREATEALLOCATION", log, "ffffb80c`4e2f0000", target=("x64", "WDDM3_0"))
    assert "\n".join(render_follow_lines(node)) == render_follow(node)
    assert "".join(follow_json_pieces(node)) == json.dumps(follow_json(node))
    made = []
    notes = sys.modules["d3dkmddi_py.follow"]._Notes
    real = notes.of
    monkeypatch.setattr(notes, "of", lambda self, n: made.append(n) or real(self, n))
    lines = render_follow_lines(node)
    next(lines)
    assert made == [node]  # the first line is there, and only the first record's text was made
    pieces = follow_json_pieces(node)
    next(pieces)
    assert made == [node, node]


def test_a_follow_of_thousands_of_records_runs_in_bounded_memory(tmp_path):
    """12,000 allocation infos: about 150 MB of text, written within an address space that could not hold it."""
    path, base = _creates(tmp_path, 1, 12_000)
    p = command("decode", "DXGKARG_CREATEALLOCATION", "--file", path, "--base", f"{base:x}", "--address", f"{base:x}",
                "--follow", "-o", tmp_path / "out.txt", timeout=900, address_space=600 << 20)
    good(p)
    assert (tmp_path / "out.txt").stat().st_size > 100 << 20
