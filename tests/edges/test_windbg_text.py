"""WinDbg text as the debugger prints it: backtick numbers, every prompt, every width of every
memory command, and addresses given as offsets.  Expected bytes are typed by hand from the dumps
(little-endian: ``dd`` shows 00000485 for the bytes 85 04 00 00)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from d3dkmddi_py.decoding import (DecodeError, WinDbgTextError, decode, decode_one, decode_records, parse_int, parse_windbg,
                                  start_offset)
from d3dkmddi_py.windbg import _character_column_at, _characters

from .commandline import cli, good, one_line, python


# ------------------------------------------------------------------ numbers
@pytest.mark.parametrize("text, value", [
    ("00000000`00000485", 0x485),  # WinDbg's 64-bit form: hex, not the decimal 485
    ("fffff801`2a3b4000", 0xFFFFF8012A3B4000),
    ("1`0000", 0x10000),
    ("-00000000`00000010", -16),
    ("0n1157", 1157),  # WinDbg's explicit decimal
])
def test_parse_int_backtick_is_hex(text, value):
    assert parse_int(text) == value


@pytest.mark.parametrize("text, message", [
    ("1" * 5000, "is 5000 characters long"),
    ("fff", "for hex write 0xfff"),
    ("1`", "is not an integer"),
    ("١٢٣", "is not an integer"),  # Arabic-Indic digits: int() takes them, a user never means them
    (None, "must be an integer or its text, not NoneType"),
])
def test_parse_int_refuses_with_one_line(text, message):
    with pytest.raises(DecodeError, match=message) as e:
        parse_int(text)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300


def test_backtick_number_as_decode_data_is_a_word():
    assert decode_one("DXGK_SEGMENTFLAGS", "00000000`00000485").Value == 0x485


# ------------------------------------------------------------------ prompts
DD_LINE = "fffff801`2a3b4000  00000485 00000001"


# kd>, 0: kd>, 0:000> and 0:000:x86> were read before; these were refused.
@pytest.mark.parametrize("prompt", ["lkd>", "0: kd:x86>", "1: kd:ARM64>", "0:000:ARM64>", "12: lkd>"])
@pytest.mark.parametrize("command", ["", " dd fffff801`2a3b4000 L2"])
def test_every_prompt_form_is_skipped(prompt, command):
    memory = parse_windbg(f"{prompt}{command}\n{DD_LINE}\n{prompt}\n")
    assert memory.data == bytes([0x85, 4, 0, 0, 1, 0, 0, 0])


# ------------------------------------------------------------------ widths and commands
PAYLOAD = bytes(range(0x20, 0x40))  # 32 bytes, printable, so the character columns hold text


def _dd_words(data: bytes) -> list:
    return [f"{int.from_bytes(data[i:i + 4], 'little'):08x}" for i in range(0, len(data), 4)]


def _dq_words(data: bytes) -> list:
    words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]
    return [f"{w >> 32:08x}`{w & 0xFFFFFFFF:08x}" for w in words]


def test_dd_c8_reads_all_eight_dwords_of_a_line():
    text = ("0: kd> dd /c 8 fffff801`2a3b4000 L10\n"
            f"fffff801`2a3b4000  {' '.join(_dd_words(PAYLOAD))}\n"
            f"fffff801`2a3b4020  {' '.join(_dd_words(PAYLOAD))}\n")
    memory = parse_windbg(text)
    assert memory.data == PAYLOAD * 2 and memory.address == 0xFFFFF8012A3B4000


def test_wide_lines_count_the_address_step_for_their_own_width():
    # db /c 32: the second line starts 0x20 bytes on; an 0x10 step would be wrong here.
    row = " ".join(f"{b:02x}" for b in PAYLOAD)
    text = f"fffff801`2a3b4000  {row}  {PAYLOAD.decode()}\nfffff801`2a3b4020  {row}  {PAYLOAD.decode()}\n"
    assert parse_windbg(text).data == PAYLOAD * 2
    with pytest.raises(WinDbgTextError, match=r"line 2: address fffff801`2a3b4010 does not follow line 1 "
                                              r"\(fffff801`2a3b4000 \+ 32 bytes = fffff801`2a3b4020\)"):
        parse_windbg(text.replace("fffff801`2a3b4020", "fffff801`2a3b4010"))


def test_dq_c4_four_qwords_per_line():
    text = f"fffff801`2a3b4000  {' '.join(_dq_words(PAYLOAD))}\nfffff801`2a3b4020  {' '.join(_dq_words(PAYLOAD))}"
    assert parse_windbg(text).data == PAYLOAD * 2


def test_db_c32_with_hyphens_and_dw_wide():
    row = "-".join(" ".join(f"{b:02x}" for b in PAYLOAD[i:i + 8]) for i in range(0, 32, 8))
    assert parse_windbg(f"8a3b4000  {row}  {PAYLOAD.decode()}").data == PAYLOAD
    words = " ".join(f"{int.from_bytes(PAYLOAD[i:i + 2], 'little'):04x}" for i in range(0, 32, 2))
    assert parse_windbg(f"8a3b4000  {words}").data == PAYLOAD


def test_dc_wide_line_keeps_the_character_column_out():
    chars = PAYLOAD.decode()
    text = f"fffff801`2a3b4000  {' '.join(_dd_words(PAYLOAD))}  {chars}\n"
    assert parse_windbg(text).data == PAYLOAD


DPS = """\
0: kd> dps fffff801`2a3b4000 L3
fffff801`2a3b4000  fffff801`12345678 nt!KiSystemStartup+0x10
fffff801`2a3b4008  00000000`00000000
fffff801`2a3b4010  fffff801`0badf00d dxgkrnl!DXGADAPTER::Foo
"""


def test_dps_one_pointer_and_its_symbol_per_line():
    memory = parse_windbg(DPS)
    assert memory.data == (0xFFFFF80112345678).to_bytes(8, "little") + bytes(8) + \
        (0xFFFFF8010BADF00D).to_bytes(8, "little")


def test_dds_and_dp_on_x86():
    dds = "8a3b4000  80501234 nt!KiSystemStartup\n8a3b4004  80501238 nt+0x1238\n"
    assert parse_windbg(dds).data == bytes.fromhex("34125080" "38125080")
    dp = "0: kd:x86> dp 8a3b4000 L4\n8a3b4000  00000485 00000001 00000002 00000003\n"
    assert parse_windbg(dp).data == bytes.fromhex("85040000" "01000000" "02000000" "03000000")


def test_a_symbol_only_follows_a_single_pointer():
    with pytest.raises(WinDbgTextError, match="line 1: 'nt!Foo' at column .* is not a 16-digit qword"):
        parse_windbg("fffff801`2a3b4000  fffff801`12345678 fffff801`12345678 nt!Foo")


# ------------------------------------------------------------------ addresses as offsets
def test_offset_of_an_address_inside_the_dump():
    memory = parse_windbg(DPS)
    assert memory.offset_of("fffff801`2a3b4008") == 8
    assert memory.offset_of(0xFFFFF8012A3B4017) == 0x17


@pytest.mark.parametrize("value, message", [
    ("fffff801`2a3b4018", r"address fffff801`2a3b4018 is outside WinDbg text, which holds "
                          r"fffff801`2a3b4000\.\.fffff801`2a3b4017"),
    ("fffff801`2a3b3fff", "is outside"),
])
def test_offset_of_outside_the_dump(value, message):
    with pytest.raises(DecodeError, match=message):
        parse_windbg(DPS).offset_of(value)


def test_offset_and_address_each_have_one_meaning():
    """Issue 14: offset= is a byte offset into the input, address= a memory address of a dump, everywhere."""
    memory = parse_windbg(DPS)
    assert start_offset(memory, 8) == 8
    assert start_offset(memory, 0, "fffff801`2a3b4010") == 0x10
    with pytest.raises(DecodeError, match="not both"):
        start_offset(memory, 8, "fffff801`2a3b4010")
    with pytest.raises(DecodeError, match=r"address= 00000008 is outside WinDbg text"):
        start_offset(memory, 0, 8)
    with pytest.raises(DecodeError, match=r"address= <a 20001-bit number> is not a 64-bit address"):
        start_offset(memory, 0, 1 << 20000)


def test_an_address_given_as_text_is_hex_as_parse_address_reads_it():
    """Issue 24: Memory.offset_of read "1000" as decimal (parse_int); every address goes through parse_address."""
    memory = parse_windbg("00001000  00000485 00000001")
    assert memory.offset_of("1004") == 4 and memory.offset_of("0x1004") == 4
    with pytest.raises(DecodeError, match=r"--address '0n4100' is not an address: .* write 0x1004"):
        memory.offset_of("0n4100", "--address")


def test_offset_of_without_addresses():
    records, _, _, memory = decode_records("DXGK_SEGMENTFLAGS", b"\x85\x04\x00\x00")
    with pytest.raises(DecodeError, match="is a memory address: bytes has none"):
        memory.offset_of(0x1000)


def test_the_address_column_says_the_pointer_size_of_the_target():
    assert parse_windbg("8a3b4000  00000485").address_bytes == 4  # a 32-bit target: --abi x86
    assert parse_windbg(DPS).address_bytes == 8
    with pytest.raises(WinDbgTextError, match="line 2: a 16-digit address after 8-digit ones"):
        parse_windbg("8a3b4000  00000485\n00000000`8a3b4004  00000001")


@pytest.mark.parametrize("text", [
    "fffff801`2a3b4000  00000485  00000001",  # two spaces: the second dword is no character column
    "fffff801`2a3b4000  00000485\t00000001",
    "fffff801`2a3b4000  85 04  00 00 00",
    "fffff801`2a3b4000  00000000`00000485  00000000`00000001",
])
def test_values_after_a_wide_gap_are_not_dropped_silently(text):
    with pytest.raises(WinDbgTextError, match=r"line 1: .* after \d values? is not the character column"):
        parse_windbg(text)


# ------------------------------------------------------------------ wide lines, in linear time
# 20,000 db values took 52 s (a character-column test per value prefix, the rest of the line sliced per value);
# at 6 MB (2,000,000 values) that is days.  The child may spend 60 CPU seconds: linear time takes about 3,
# quadratic 10,000 times the limit.  CPU seconds, unlike the wall clock, do not grow when the machine is busy.
SIX_MB_CPU_SECONDS = 60
DB_6MB = 2_000_000  # db values in 6 MB of text


def _wide_db_line(data: bytes, tail: str = "") -> str:
    return "00001000  " + " ".join(f"{b:02x}" for b in data) + tail


def test_a_6_mb_db_line_reads_in_linear_time_on_the_command_line(tmp_path):
    dump = tmp_path / "wide.txt"
    dump.write_text(_wide_db_line((bytes(range(256)) * (DB_6MB // 256 + 1))[:DB_6MB]) + "\n")
    assert len(dump.read_bytes()) > 6_000_000
    out = tmp_path / "wide.csv"
    p = cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", dump, "--count", "all", "--format", "csv", "-o", out,
            timeout=600, cpu_seconds=SIX_MB_CPU_SECONDS)
    good(p)
    assert len(out.read_text().splitlines()) == 1 + DB_6MB // 4


@pytest.mark.parametrize("unit", ["dd", "dq"])
def test_a_6_mb_line_reads_in_linear_time_from_python(unit):
    code = f"""if 1:
        import d3dkmddi_py as kmd
        n = 700_000 if {unit!r} == "dd" else 350_000
        words = [f"{{i:08x}}" for i in range(n)] if {unit!r} == "dd" else [f"{{i:08x}}`{{i:08x}}" for i in range(n)]
        text = "fffff801`2a3b4000  " + " ".join(words)
        assert len(text) > 6_000_000
        records = kmd.decode("DXGK_SEGMENTFLAGS", text, count="all", kind="windbg")
        print(len(records), records[-1].Value)"""
    p = python(code, timeout=600, cpu_seconds=SIX_MB_CPU_SECONDS)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert p.stdout.split() == ([b"700000", b"699999"] if unit == "dd" else [b"700000", b"349999"])


def test_a_6_mb_line_with_a_character_column_after_one_space_is_refused_in_linear_time(tmp_path):
    data = b"ab " * 500_000  # its character column, 'ab ab ...', reads as 2-digit bytes
    dump = tmp_path / "wide.txt"
    dump.write_text(_wide_db_line(data, " " + _characters(data)) + "\n")
    assert len(dump.read_bytes()) > 6_000_000
    err = one_line(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", dump, "--count", "all",
                       timeout=600, cpu_seconds=SIX_MB_CPU_SECONDS))
    assert "'ab ab ab ab ab ab ab ab ab ab ab ab a...' after 1,500,000 values is the character column" in err


def _column_by_every_prefix(texts: list, data: bytes, size: int):
    """The quadratic reading the linear one replaced: the oracle."""
    return next((k for k in range(1, len(texts)) if " ".join(texts[k:]) == _characters(data[:k * size])), None)


_COLUMN_BYTES = st.sampled_from(b" ab.0\x00\x7f")


@given(st.integers(1, 4).map(lambda n: 1 << (n - 1) if n < 4 else 8), st.lists(_COLUMN_BYTES, max_size=40),
       st.lists(st.sampled_from(["ab", "a.", "..", "61", "20", "ab..", "abab", "ab.ab.ab", "0000000`00000062"]),
                max_size=12), st.binary(max_size=8))
def test_the_character_column_is_found_where_every_prefix_would_find_it(size, head, extra, noise):
    """A head of values followed by texts built from its character column (and random texts), compared with
    testing every prefix."""
    head = bytes(head)[:len(head) - len(head) % size]
    words = _characters(head).split() + extra
    texts = [bytes(head[i:i + size]).hex() for i in range(0, len(head), size)] + words
    data = head + (noise * (len(words) * size))[:len(words) * size].ljust(len(words) * size, b"a")
    assert _character_column_at(texts, data, size) == _column_by_every_prefix(texts, data, size)
