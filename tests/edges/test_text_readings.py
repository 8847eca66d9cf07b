"""Issue 14, "Text that is read, never guessed": each case read a value wrong without a word on commit
137d756.  A text has one reading, in Python and on the command line, or it is refused naming them."""
from __future__ import annotations

import pathlib

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.errors import DecodeError

from .commandline import ALLOCATIONS, DQ_DUMP, WDDM3_0, cli, good, one_line

ONE_SPACE_DD = "00001000 00000485 00000001"
CHARACTER_COLUMN = "fffff801`2a3b4000 64636261 64636261 abcdabcd"


def values(records) -> list:
    return [r.Value for r in records]


def test_a_one_space_windbg_line_is_refused_naming_both_readings():
    with pytest.raises(DecodeError, match=r"two readings: WinDbg memory text \(address 00001000.*hex bytes.*"
                                          r"kind='windbg' or kind='hex'.*--windbg or --hex"):
        kmd.decode("DXGK_SEGMENTFLAGS", ONE_SPACE_DD, count=2)


def test_a_one_space_windbg_line_is_read_as_words_when_kind_or_the_option_says_so(tmp_path):
    assert values(kmd.decode("DXGK_SEGMENTFLAGS", ONE_SPACE_DD, count=2, kind="windbg")) == [0x485, 1]
    dump = tmp_path / "dd.txt"
    dump.write_text(ONE_SPACE_DD + "\n")
    out = good(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", dump, "--count", "all", "--format", "csv"))
    assert [int(row.split(",")[-1], 0) for row in out.splitlines()[1:]] == [0x485, 1]
    assert kmd.report("DXGK_SEGMENTFLAGS", ONE_SPACE_DD, count=2, kind="windbg") == \
        good(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", dump, "--count", "2"))


@pytest.mark.parametrize("text", ["85040000", "8504 0000", "00000485 00000001", "1157"])
def test_a_hex_group_longer_than_a_byte_is_never_split_silently(text):
    with pytest.raises(DecodeError, match=r"hex digits, which may be bytes in memory order or a word|two readings"):
        kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")
    with pytest.raises(DecodeError, match=r"hex digits|two readings"):
        kmd.report("DXGK_SEGMENTFLAGS", text)


def test_hex_bytes_of_two_digits_keep_their_one_reading():
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", "85 04 00 00").Value == 0x485
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", "85040000", kind="hex").Value == 0x485


def test_the_character_column_after_one_space_is_never_data():
    with pytest.raises(DecodeError, match=r"'abcdabcd' after 2 values is the character column"):
        kmd.decode("DXGK_SEGMENTFLAGS", CHARACTER_COLUMN, count="all", kind="windbg")


def test_the_character_column_after_one_space_on_the_command_line(tmp_path):
    dump = tmp_path / "dc.txt"
    dump.write_text(CHARACTER_COLUMN + "\n")
    assert "is the character column" in one_line(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", dump,
                                                     "--count", "all"))


def test_a_db_character_column_after_one_space_is_never_data():
    with pytest.raises(DecodeError, match=r"'ab' after 2 values is the character column"):
        kmd.decode("DXGK_SEGMENTFLAGS", "00001000 61 62 ab", count="all", kind="windbg")


def test_the_character_column_after_two_spaces_is_dropped_as_windbg_prints_it():
    text = "fffff801`2a3b4000  64636261 64636261  abcdabcd"
    assert values(kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")) == [0x64636261] * 2


def test_a_line_wider_than_the_first_is_refused():
    text = "00001000  00000485 00000001\n00001008  00000002 00000003 00000004\n"
    with pytest.raises(DecodeError, match=r"line 2: 3 values after 2 on line 1"):
        kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")


def test_the_last_line_may_be_shorter():
    text = "00001000  00000485 00000001\n00001008  00000002\n"
    assert values(kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")) == [0x485, 1, 2]


def test_a_dyb_line_is_read_as_its_bytes_never_as_words():
    text = "00001000  10000101 00000100 00000000 00000000  85 04 00 00  ....\n"
    assert values(kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")) == [0x485]


def test_a_dyb_line_whose_two_forms_differ_is_refused():
    text = "00001000  10000101 00000100 00000000 00000001  85 04 00 00  ....\n"
    with pytest.raises(DecodeError, match="binary groups and the hex bytes after them differ"):
        kmd.decode("DXGK_SEGMENTFLAGS", text, count="all")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_byte_order_mark_at_the_start_of_a_dump_file_is_accepted(tmp_path, encoding):
    """A dump saved with a BOM (Notepad; WinDbg's .logopen /u writes UTF-16) was read as raw bytes."""
    dump = tmp_path / "dump.txt"
    dump.write_text(DQ_DUMP.read_text(), encoding=encoding)
    first = kmd.decode_one("DXGK_ALLOCATIONINFO", pathlib.Path(dump), target=("x64", "WDDM3_0"))
    assert bytes(first) == ALLOCATIONS.read_bytes()[:88]
    out = good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", dump, "--json"))
    assert ALLOCATIONS.read_bytes()[:88].hex() in out


def test_a_byte_order_mark_at_the_start_of_a_str_is_accepted():
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", "\ufeff85 04 00 00").Value == 0x485
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", "\ufefffffff801`2a3b4000  00000485").Value == 0x485


def test_a_number_for_a_type_wider_than_8_bytes_is_refused():
    err = one_line(cli("decode", "DXGK_ALLOCATIONINFO", "0x485"))
    assert "DXGK_ALLOCATIONINFO is 88 bytes" in err and "give the record's bytes (--hex, --file, --windbg" in err
    with pytest.raises(DecodeError, match="a number is accepted only for types of at most 8 bytes"):
        kmd.decode_one("DXGK_ALLOCATIONINFO", 0x485)
    with pytest.raises(DecodeError, match="a number is accepted only for types of at most 8 bytes"):
        kmd.report("DXGK_ALLOCATIONINFO", "0x485")


def test_a_number_for_an_8_byte_type_is_still_accepted():
    word = kmd.decode_one("DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", 0x485)
    assert word.Value == 0x485


def test_offset_is_a_byte_offset_in_python_and_on_the_command_line():
    python = kmd.report("DXGK_ALLOCATIONINFO", path=DQ_DUMP, offset=0x58, target=("x64", "WDDM3_0"))
    command = good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", DQ_DUMP, "--offset", "0x58"))
    assert python == command and "[0] at +0x58 (ffffb80c`4e2f1058)" in python


def test_address_is_a_memory_address_in_python_and_on_the_command_line():
    address = "ffffb80c`4e2f1058"
    python = kmd.report("DXGK_ALLOCATIONINFO", path=DQ_DUMP, address=address, target=("x64", "WDDM3_0"))
    command = good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", DQ_DUMP, "--address", address))
    assert python == command and "[0] at +0x58 (ffffb80c`4e2f1058)" in python
    record = kmd.decode_one("DXGK_ALLOCATIONINFO", pathlib.Path(DQ_DUMP), address=address, target=("x64", "WDDM3_0"))
    assert bytes(record) == ALLOCATIONS.read_bytes()[88:176]


def test_an_address_is_refused_for_inputs_without_addresses():
    err = one_line(cli("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--address", "0x58"))
    assert "only memory has addresses: --windbg, --dump, or --file with --base (the address of its first byte); give a byte offset with --offset" in err
    with pytest.raises(DecodeError, match="is a memory address: bytes has none"):
        kmd.decode_one("DXGK_SEGMENTFLAGS", b"\x85\x04\x00\x00", address=0x1000)


def test_offset_and_address_together_are_refused():
    assert "not both" in one_line(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", DQ_DUMP,
                                      "--offset", "8", "--address", "ffffb80c`4e2f1058"))
    with pytest.raises(DecodeError, match="not both"):
        kmd.decode_one("DXGK_ALLOCATIONINFO", pathlib.Path(DQ_DUMP), offset=8, address="ffffb80c`4e2f1058")
