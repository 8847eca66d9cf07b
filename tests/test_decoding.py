"""decode(): every input form, every check before a read, and the WinDbg text reader.

Expected bytes and values are typed by hand (a WinDbg dump is little-endian, so ``dd``
shows 00000485 for the bytes 85 04 00 00); the parser is fuzzed with hypothesis and may
only ever raise the package's own DecodeError.
"""
from __future__ import annotations

import ctypes
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py.decoding import (DecodeError, TruncatedData, UnknownType, WinDbgTextError, decode, decode_one,
                                decode_records, parse_hex, parse_int, parse_windbg, read_input, resolve_class)

FLAGS_BYTES = bytes([0x85, 0x04, 0x00, 0x00])  # Aperture, CpuVisible, PreservedDuringStandby, DirectFlip


def check_0x485(flags):
    assert (flags.Aperture, flags.Agp, flags.CpuVisible, flags.PreservedDuringStandby, flags.DirectFlip) == \
        (1, 0, 1, 1, 1)
    assert flags.Value == 0x485


# ------------------------------------------------------------------ input forms
@pytest.mark.parametrize("data", [
    FLAGS_BYTES, bytearray(FLAGS_BYTES), memoryview(FLAGS_BYTES), 0x485, "0x485", "0x00000485",
    "85 04 00 00", "85:04:00:00",
    "fffff801`2a3b4000  85 04 00 00                                      ....",
    "fffff801`2a3b4000  00000485",
    "8a3b4000  00000485 00000000",
    "fffff801`2a3b4000  00000000`00000485",
    "fffff801`2a3b4000  0485 0000",
], ids=lambda data: f"memoryview({bytes(data)!r})" if isinstance(data, memoryview) else repr(data))
def test_every_input_form_gives_the_same_struct(data):
    check_0x485(decode_one("DXGK_SEGMENTFLAGS", data))


def test_a_hex_group_longer_than_a_byte_is_read_as_bytes_only_when_kind_says_so():
    """Issue 14: "85040000" may be bytes or a word; refused with both, read as bytes under kind='hex'."""
    with pytest.raises(DecodeError, match=r"the group '85040000' has 8 hex digits.*kind='hex'.*0x85040000"):
        decode_one("DXGK_SEGMENTFLAGS", "85040000")
    check_0x485(decode_one("DXGK_SEGMENTFLAGS", "85040000", kind="hex"))


def test_path_and_path_keyword(tmp_path):
    p = tmp_path / "flags.bin"
    p.write_bytes(FLAGS_BYTES + bytes(4))
    check_0x485(decode_one("DXGK_SEGMENTFLAGS", p))
    check_0x485(decode_one("DXGK_SEGMENTFLAGS", path=str(p)))  # a str is data; a str path goes by path=
    assert decode_one("DXGK_SEGMENTFLAGS", p, offset=4).Value == 0


def test_path_to_windbg_text_is_read_as_text(tmp_path):
    p = tmp_path / "dump.txt"
    p.write_text("0: kd> dd fffff801`2a3b4000 L1\nfffff801`2a3b4000  00000485\n")
    check_0x485(decode_one("DXGK_SEGMENTFLAGS", p))


def test_class_keeps_its_own_target():
    t = kmd.target("x86", "WDDM2_0")
    info = decode_one(t.DXGK_ALLOCATIONINFO, bytes(60))
    assert type(info) is t.DXGK_ALLOCATIONINFO
    with pytest.raises(DecodeError, match="class of x86 WDDM2_0"):
        decode_one(t.DXGK_ALLOCATIONINFO, bytes(60), target=("x64", "WDDM3_2"))


def test_name_at_a_target_and_size_per_abi():
    x86 = decode_one("DXGK_SEGMENTDESCRIPTOR", bytes(40), target=("x86", "WDDM2_0"))
    assert ctypes.sizeof(x86) == 40  # definitions.md §10.1
    with pytest.raises(TruncatedData, match="needs 56 bytes"):
        decode_one("DXGK_SEGMENTDESCRIPTOR", bytes(40), target=("x64", "WDDM2_0"))


def test_windbg_decorated_and_tag_names():
    for name in ("_DXGK_SEGMENTFLAGS", "dxgkrnl!_DXGK_SEGMENTFLAGS", "dxgk_segmentflags"):
        check_0x485(decode_one(name, FLAGS_BYTES))


def test_count_and_offsets():
    data = bytes(range(16))
    many = decode("DXGK_SEGMENTFLAGS", data, count=3, offset=4)
    assert [m.Value for m in many] == [0x07060504, 0x0B0A0908, 0x0F0E0D0C]
    assert [m.Value for m in decode("DXGK_SEGMENTFLAGS", data, count="all")] == \
        [0x03020100, 0x07060504, 0x0B0A0908, 0x0F0E0D0C]
    records, *_ = decode_records("DXGK_SEGMENTFLAGS", data, offset=8, count=2)
    assert [(r.index, r.offset) for r in records] == [(0, 8), (1, 12)]


def test_decode_returns_a_list_for_every_count_and_decode_one_returns_one_record():
    """Issue 24: one type of result per call shape; len() of decode()'s result always works."""
    one = decode("DXGK_SEGMENTFLAGS", FLAGS_BYTES, count=1)
    assert isinstance(one, list) and len(one) == 1 and one[0].Value == 0x485
    assert len(decode("DXGK_SEGMENTFLAGS", FLAGS_BYTES, count="all")) == 1
    assert decode_one("DXGK_SEGMENTFLAGS", FLAGS_BYTES).Value == 0x485


def test_the_old_single_record_call_still_returns_one_record_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"decode\(\) without count= returns one record.*decode_one\(\)"):
        record = decode("DXGK_SEGMENTFLAGS", FLAGS_BYTES)
    assert record.Value == 0x485
    with pytest.raises(DecodeError), warnings.catch_warnings():  # a refusal warns of nothing
        warnings.simplefilter("error")
        decode("DXGK_SEGMENTFLAGS", b"")


def test_windbg_address_is_kept():
    records, *_ = decode_records("DXGK_SEGMENTFLAGS", "fffff801`2a3b4000  00000485 00000001", count=2)
    assert [r.address for r in records] == [0xFFFFF8012A3B4000, 0xFFFFF8012A3B4004]


def test_enum_decodes_by_name():
    assert decode_one("DXGK_PAGESIZE", 4) is kmd.DXGK_PAGESIZE.DXGK_PAGESIZE_64KB
    assert decode_one("DXGK_PAGESIZE", 99) == 99  # not an enumerator: the number is kept


def test_bytes_round_trip_for_the_sample_allocations():
    from d3dkmddi_py import samples

    raw = samples.ALLOCATIONS_PATH.read_bytes()
    infos = decode("DXGK_ALLOCATIONINFO", raw, target=samples.sample_target(), count="all")
    assert b"".join(bytes(i) for i in infos) == raw


# ------------------------------------------------------------------ checks before any read
@pytest.mark.parametrize("kwargs, message", [
    ({"offset": 4}, r"offset 0x4 \(4\) is past the end"),
    ({"offset": -1}, "offset -1 is negative"),
    ({"count": 0}, "count 0 is not positive"),
    ({"count": -2}, "count -2 is not positive"),
    ({"count": 2}, "2 records of DXGK_SEGMENTFLAGS need 8 bytes at offset 0x0"),
    ({"count": 1.5}, "count must be a positive integer"),
    ({"offset": "4"}, "offset must be an integer"),
])
def test_offset_and_count_checks(kwargs, message):
    with pytest.raises(DecodeError, match=message):
        decode("DXGK_SEGMENTFLAGS", FLAGS_BYTES, **kwargs)


def test_truncated_says_how_many_bytes_are_needed_and_there():
    with pytest.raises(TruncatedData) as e:
        decode_one("DXGK_ALLOCATIONINFO", bytes(100), offset=0x40)
    assert "needs 88 bytes at offset 0x40" in str(e.value) and "has 36 there" in str(e.value)


def test_count_all_refuses_a_partial_record():
    with pytest.raises(TruncatedData, match="2 whole DXGK_SEGMENTFLAGS records .* and 2 bytes left over"):
        decode("DXGK_SEGMENTFLAGS", bytes(10), count="all")


def test_empty_data():
    with pytest.raises(TruncatedData, match="is empty"):
        decode_one("DXGK_SEGMENTFLAGS", b"")


@pytest.mark.parametrize("value, message", [
    (1 << 32, "too wide for DXGK_SEGMENTFLAGS: it needs 5 bytes"),
    (-1, "is negative"),
    ("0x1_0000_0000", "too wide"),
])
def test_value_too_wide_or_negative(value, message):
    with pytest.raises(DecodeError, match=message):
        decode_one("DXGK_SEGMENTFLAGS", value)


def test_unknown_type_suggests_close_names():
    with pytest.raises(UnknownType, match="did you mean DXGK_ALLOCATIONINFO"):
        resolve_class("DXGK_ALOCATIONINFO")


def test_type_from_a_later_version_says_where_it_exists():
    with pytest.raises(UnknownType, match="exists only where interface version >= WDDM3_2"):
        resolve_class("DXGK_SEGMENTDESCRIPTOR5", ("x64", "WDDM2_0"))


def test_unknown_target_lists_valid_values():
    with pytest.raises(kmd.UnsupportedTarget, match="valid: x86, x64, arm64"):
        decode_one("DXGK_SEGMENTFLAGS", FLAGS_BYTES, target=("mips", "WDDM2_0"))


def test_missing_file(tmp_path):
    with pytest.raises(DecodeError, match="no such file"):
        decode_one("DXGK_SEGMENTFLAGS", tmp_path / "absent.bin")
    with pytest.raises(DecodeError, match="it is a directory"):
        decode_one("DXGK_SEGMENTFLAGS", tmp_path)


def test_unsupported_data_kind():
    with pytest.raises(DecodeError, match="not float"):
        decode_one("DXGK_SEGMENTFLAGS", 1.0)


# ------------------------------------------------------------------ hex
@pytest.mark.parametrize("text, expected", [
    ("85 04 00 00", FLAGS_BYTES), ("85040000", FLAGS_BYTES), ("85-04-00-00", FLAGS_BYTES),
    ("  AbCd ", b"\xab\xcd"),
])
def test_parse_hex(text, expected):
    assert parse_hex(text) == expected


@pytest.mark.parametrize("text, message", [
    ("85 0g", r"bad hex: 'g' at position 5"),
    ("850", "odd-length hex: '850' has 3 digits"),
    ("", "empty hex"),
    ("0x85 04", "bytes are written without 0x"),
])
def test_parse_hex_errors(text, message):
    with pytest.raises(DecodeError, match=message):
        parse_hex(text)


@pytest.mark.parametrize("text, value", [("0x485", 0x485), ("1157", 1157), ("0b101", 5), ("00000485", 485),
                                         ("0x00000000`00000485", 0x485), ("1_000", 1000)])
def test_parse_int(text, value):
    assert parse_int(text) == value


# ------------------------------------------------------------------ WinDbg text
DB = """\
0: kd> db ffffb80c`4e2f1000 L18
ffffb80c`4e2f1000  85 04 00 00 01 00 00 00-02 00 00 00 03 00 00 00  ................
ffffb80c`4e2f1010  41 42 43 44 45 46 30 31                          ABCDEF01
"""
DD = """\
0: kd> dd ffffb80c`4e2f1000 L6
ffffb80c`4e2f1000  00000485 00000001 00000002 00000003
ffffb80c`4e2f1010  44434241 31304645
"""
DC = """\
ffffb80c`4e2f1000  00000485 00000001 00000002 00000003  ................
ffffb80c`4e2f1010  44434241 31304645                    ABCDEF01
"""
DQ = """\
ffffb80c`4e2f1000  00000001`00000485 00000003`00000002
ffffb80c`4e2f1010  31304645`44434241
"""
DP_X86 = """\
8a3b4000  00000485 00000001 00000002 00000003
8a3b4010  44434241 31304645
"""
EXPECTED = FLAGS_BYTES + bytes([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]) + b"ABCDEF01"


@pytest.mark.parametrize("text", [DB, DD, DC, DQ, DP_X86, DB.replace("\n", "\r\n")],
                         ids=["db", "dd", "dc", "dq", "dp-x86", "crlf"])
def test_windbg_memory_commands(text):
    memory = parse_windbg(text)
    assert memory.data == EXPECTED


def test_windbg_ascii_column_that_looks_like_hex_is_ignored():
    # The character column holds "ab cd" here; it must not be read as two more bytes.
    text = "ffffb80c`4e2f1000  61 62 20 63 64                                   ab cd\n"
    assert parse_windbg(text).data == b"ab cd"


@pytest.mark.parametrize("text, message", [
    ("   +0x000 Aperture : 0y1\n   +0x000 Agp : 0y0", "is `dt`/`dx` output .* run `db <address>"),
    ("dxgkrnl!_DXGK_SEGMENTFLAGS\n   +0x000 Aperture         : Pos 0, 1 Bit", "is `dt`/`dx` output"),
    ("[+0x000 ( 0: 0)] Aperture : 0x1 [Type: unsigned int]", "is `dt`/`dx` output"),
    ("ffffb80c`4e2f1000  00000485 00000001\nffffb80c`4e2f1010  00000002", "line 2: address .* does not follow"),
    ("ffffb80c`4e2f1000  00000485\nffffb80c`4e2f1004  05 04", "line 2: db-style values after dd-style"),
    ("ffffb80c`4e2f1000  ?? ?? ?? ??", "line 1: memory shown as \\?\\? was not readable"),
    ("ffffb80c`4e2f1000  0000048", "line 1: .* is not a hex byte, word, dword or qword"),
    ("ffffb80c`4e2f1000  00000485 0000001", "line 1: '0000001' at column 29 is not an 8-digit dword"),
    ("hello world", "line 1: 'hello world' does not start with an address column"),
    ("ffffb80c`4e2f1000", "line 1: address ffffb80c`4e2f1000 has no values"),
    ("0: kd> db ffffb80c`4e2f1000\n\n", "has no memory lines"),
])
def test_windbg_errors_say_which_line_and_why(text, message):
    with pytest.raises(WinDbgTextError, match=message):
        parse_windbg(text)


def test_windbg_error_carries_the_line_number():
    with pytest.raises(WinDbgTextError) as e:
        parse_windbg("ffffb80c`4e2f1000  00000485\n\nffffb80c`4e2f1004  0000zz00")
    assert e.value.line_number == 3


def test_dt_text_given_to_decode_is_refused_with_a_hint():
    with pytest.raises(WinDbgTextError, match="decode needs the raw bytes"):
        decode_one("DXGK_SEGMENTFLAGS", "   +0x000 Aperture : Pos 0, 1 Bit\n   +0x000 Agp : Pos 1, 1 Bit")


def test_file_kind_refuses_windbg_text(tmp_path):
    p = tmp_path / "dump.txt"
    p.write_text(DD)
    with pytest.raises(DecodeError, match="is WinDbg text, not raw bytes; read it with --windbg"):
        read_input(p, kind="file")


# ------------------------------------------------------------------ fuzzing: only our own errors, never a crash
_windbg_alphabet = st.sampled_from(list("0123456789abcdefABCDEF`?- \t+:!_[]()xyzkd>") + ["\n", "  ", "0x", "ffffb80c`4e2f1000  "])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_windbg_alphabet, max_size=60).map("".join))
def test_fuzz_windbg_text_structured(text):
    try:
        memory = parse_windbg(text)
    except DecodeError:
        return
    assert isinstance(memory.data, bytes) and memory.data


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_windbg_text_any_unicode(text):
    try:
        parse_windbg(text)
    except DecodeError:
        pass


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.sampled_from(["db", "dd", "dq"]),
                          st.binary(min_size=1, max_size=16)), min_size=1, max_size=3),
       st.integers(0, 3))
def test_fuzz_mutated_real_dumps(chunks, cut):
    """Real-looking dumps, each cut or joined oddly: parsing gives the bytes back or says which line is wrong."""
    addr, unit, payload = chunks[0]
    addr &= ~0xF
    lines = []
    size = {"db": 1, "dd": 4, "dq": 8}[unit]
    payload = payload[: len(payload) - len(payload) % size] or bytes(size)
    for at in range(0, len(payload), 16):
        row = payload[at:at + 16]
        a = addr + at
        if unit == "db":
            values = " ".join(f"{b:02x}" for b in row)
        else:
            words = [int.from_bytes(row[i:i + size], "little") for i in range(0, len(row), size)]
            values = " ".join(f"{w:0{2 * size}x}" if size == 4 else f"{w >> 32:08x}`{w & 0xFFFFFFFF:08x}"
                              for w in words)
        lines.append(f"{(a >> 32) & 0xFFFFFFFF:08x}`{a & 0xFFFFFFFF:08x}  {values}")
    text = "\n".join(lines)
    assert parse_windbg(text).data == payload
    mutated = text[: len(text) - cut] if cut else text + "\n" + "".join(str(c[0] % 7) for c in chunks)
    try:
        parse_windbg(mutated)
    except DecodeError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=80), st.binary(max_size=120), st.integers(-2**70, 2**70)),
       st.integers(-4, 200), st.one_of(st.integers(-2, 5), st.just("all")))
def test_fuzz_decode_any_input(data, offset, count):
    try:
        decode("DXGK_SEGMENTFLAGS", data, offset=offset, count=count)
    except DecodeError:
        pass


def test_a_file_is_read_only_where_the_records_are(tmp_path):
    """An 8 GiB sparse dump: reading it whole would exhaust memory; decode reads 8 bytes."""
    big = tmp_path / "sparse.bin"
    with open(big, "wb") as f:
        f.truncate(1 << 33)
        f.seek((1 << 33) - 8)
        f.write(FLAGS_BYTES + bytes([1, 0, 0, 0]))
    first, second = decode("DXGK_SEGMENTFLAGS", big, offset=(1 << 33) - 8, count=2)
    check_0x485(first)
    assert second.Aperture == 1
    with pytest.raises(TruncatedData, match="has 8 there"):
        decode("DXGK_SEGMENTFLAGS", big, offset=(1 << 33) - 8, count=3)
