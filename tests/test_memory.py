"""Memory at addresses (d3dkmddi_py.memory): ranges with origins, bytes or a byte list at a base, any
read() object, a raw image file, and WinDbg's address forms.  Kernel dumps: test_memory_dump.py."""
from __future__ import annotations

import pickle

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.errors import DecodeError, InvalidArgument
from d3dkmddi_py.memory import (ImageFile, MemoryConflict, MemoryGap, MemoryReadError, Ranges, ReadObject, as_memory,
                                db_command, parse_address)

A = 0xFFFFF8012A3B4058


# ---- addresses as WinDbg prints and takes them

@pytest.mark.parametrize("text", ["fffff801`2a3b4058", "0xfffff8012a3b4058", "fffff8012a3b4058",
                                  "FFFFF801`2A3B4058", "0XFFFFF8012A3B4058", "  fffff801`2a3b4058 ",
                                  "0xfffff801`2a3b4058"])
def test_address_forms_windbg_prints(text):
    assert parse_address(text) == A


def test_bare_digits_are_hex_never_decimal():
    assert parse_address("1000") == 0x1000
    assert parse_address("8a3b4058") == 0x8A3B4058


@pytest.mark.parametrize("text,hint", [
    ("0n4096", "is decimal, and WinDbg reads an address in hex: write 0x1000"),
    ("-1000", "an address has no sign"),
    ("fffff801`2a3b405", "is not an address"),  # a backtick needs 8 digits after it
    ("nt!foo", "is not an address"),
    ("", "is not an address"),
    ("1`fffff801`2a3b4058", "is not an address"),
    ("1fffff8012a3b4058", "more than 16 hex digits"),
])
def test_address_errors_name_the_text_and_the_forms(text, hint):
    with pytest.raises(DecodeError, match="--address") as e:
        parse_address(text, "--address")
    assert hint in str(e.value)
    assert "fffff801`2a3b4058" in str(e.value) or "more than 16" in str(e.value)


def test_address_int_range_and_type():
    assert parse_address(0) == 0 and parse_address((1 << 64) - 1) == (1 << 64) - 1
    with pytest.raises(DecodeError, match="not a 64-bit address"):
        parse_address(1 << 64)
    with pytest.raises(InvalidArgument, match="not float"):
        parse_address(1.0)
    with pytest.raises(InvalidArgument):
        parse_address(True)


def test_db_command_counts_in_hex_and_uses_L_question_past_256_MB():
    assert db_command(A, 16) == "db fffff801`2a3b4058 L0x10"
    assert db_command(0x1000, 1) == "db 00001000 L0x1"
    assert db_command(A, (256 << 20) + 1) == "db fffff801`2a3b4058 L?0x10000001"


# ---- Ranges

def test_ranges_read_within_one_range_and_across_touching_ones():
    m = Ranges("log")
    m.add(A, b"\x01\x02\x03\x04", "line 7")
    m.add(A + 4, b"\x05\x06", "line 8")  # touches: merged
    assert len(m) == 1
    assert m.read(A + 1, 5) == b"\x02\x03\x04\x05\x06"
    assert m.read(A, 0) == b""
    assert m.spans() == ((A, A + 6, ("line 7", "line 8")),)


def test_ranges_gap_lists_exactly_the_missing_bytes_and_the_db_command():
    m = Ranges("log.txt")
    m.add(A, bytes(8), "line 7")
    m.add(A + 16, bytes(8), "line 9")
    with pytest.raises(MemoryGap) as e:
        m.read(A + 4, 32)
    assert e.value.missing == ((A + 8, A + 16), (A + 24, A + 36))
    assert (e.value.address, e.value.size) == (A + 4, 32)
    text = str(e.value)
    assert text.startswith("log.txt has no bytes at fffff801`2a3b4060..fffff801`2a3b4067 (8 bytes), "
                           "fffff801`2a3b4070..fffff801`2a3b407b (12 bytes) of the 32 read at fffff801`2a3b405c")
    assert text.endswith("`db fffff801`2a3b4060 L0x1c` in WinDbg shows them")


def test_ranges_gap_before_everything_and_in_an_empty_memory():
    m = Ranges()
    with pytest.raises(MemoryGap) as e:
        m.read(0x1000, 4)
    assert e.value.missing == ((0x1000, 0x1004),)
    m.add(0x2000, b"ab", "x")
    with pytest.raises(MemoryGap) as e:
        m.read(0x1FFF, 2)
    assert e.value.missing == ((0x1FFF, 0x2000),)


def test_ranges_many_gaps_are_all_kept_and_the_message_lists_four():
    m = Ranges()
    for i in range(10):
        m.add(0x1000 + 2 * i, b"x", f"line {i}")
    with pytest.raises(MemoryGap) as e:
        m.read(0x1000, 20)
    assert len(e.value.missing) == 10 and "and 6 more ranges" in str(e.value)


def test_overlapping_ranges_that_agree_merge_keeping_first_origins():
    m = Ranges()
    m.add(A + 8, b"89abcdef", "line 40")
    m.add(A, b"012345678", "line 7")  # overlaps one byte ("8"), agrees
    m.add(A + 20, b"KL", "line 50")
    m.add(A + 15, b"fGHIJK", "line 60")  # bridges the gap up to line 50's range
    assert len(m) == 1
    assert m.read(A, 22) == b"0123456789abcdefGHIJKL"
    s, e, origins = m.spans()[0]
    assert (s, e) == (A, A + 22) and origins == ("line 7", "line 40", "line 60", "line 50")


def test_overlapping_ranges_that_disagree_are_refused_naming_both_origins():
    m = Ranges()
    m.add(A, b"\x85\x04\x00\x00", "line 7")
    with pytest.raises(MemoryConflict) as e:
        m.add(A + 2, b"\x00\x01", "line 40")
    assert e.value.address == A + 3 and e.value.origins == ("line 7", "line 40")
    assert str(e.value).startswith("line 40 and line 7 disagree at fffff801`2a3b405b: line 7 has 00, line 40 has 01")
    assert m.read(A, 4) == b"\x85\x04\x00\x00"  # the refused range left nothing behind


def test_a_conflict_names_the_origin_of_the_byte_inside_a_merged_range():
    m = Ranges()
    m.add(0x100, b"aaaa", "line 1")
    m.add(0x104, b"bbbb", "line 2")
    with pytest.raises(MemoryConflict) as e:
        m.add(0x106, b"bX", "line 3")
    assert e.value.origins == ("line 2", "line 3")


def test_ranges_lookup_is_by_bisection_over_many_ranges():
    m = Ranges()
    for i in range(20000):
        m.add(i * 32, i.to_bytes(4, "little"), f"line {i}")
    assert len(m) == 20000
    assert m.read(12345 * 32, 4) == (12345).to_bytes(4, "little")


def test_ranges_refuse_bad_reads_and_data():
    m = Ranges()
    with pytest.raises(InvalidArgument, match="size must be a non-negative integer, not -1"):
        m.read(0, -1)
    with pytest.raises(InvalidArgument, match="past the end"):
        m.read((1 << 64) - 2, 4)
    with pytest.raises(InvalidArgument, match="not str"):
        m.add(0, "85 04", "x")
    with pytest.raises(InvalidArgument, match="past the end"):
        m.add((1 << 64) - 1, b"ab", "x")


# ---- bytes at a base, a byte list

def test_bytes_at_a_base():
    m = Ranges.of(b"\x01\x02\x03\x04", "fffff801`2a3b4058")
    assert m.read(A + 2, 2) == b"\x03\x04"
    with pytest.raises(MemoryGap, match="the bytes has no bytes at fffff801`2a3b405c"):
        m.read(A + 2, 4)


def test_a_pykd_byte_list_at_a_base():
    m = as_memory([0x85, 4, 0, 0], base=A)
    assert m.read(A, 4) == b"\x85\x04\x00\x00"


@pytest.mark.parametrize("item,shown", [(256, "256"), (-1, "-1"), (True, "True"), ("a", "a str"), (1.0, "a float")])
def test_a_byte_list_item_that_is_not_a_byte_is_refused_naming_it(item, shown):
    with pytest.raises(InvalidArgument, match=rf"item 2 is {shown}, not a byte \(valid 0\.\.255\)"):
        Ranges.of([1, 2, item], 0x1000)


def test_as_memory_needs_a_base_for_bytes_and_refuses_names_and_files(tmp_path):
    with pytest.raises(InvalidArgument, match="give base="):
        as_memory(b"1234")
    with pytest.raises(InvalidArgument, match="ImageFile"):
        as_memory(str(tmp_path / "image.bin"))
    p = tmp_path / "f.bin"
    p.write_bytes(b"x")
    with open(p, "rb") as f, pytest.raises(InvalidArgument, match="an open file"):
        as_memory(f)
    with pytest.raises(InvalidArgument, match="not int"):
        as_memory(5)


# ---- read() objects

class Bridge:
    """What a pykd or MemProcFS bridge looks like: read(address, size)."""

    def __init__(self, base, data, kind=bytes):
        self.base, self.data, self.kind, self.calls = base, data, kind, []

    def read(self, address, size):
        self.calls.append((address, size))
        chunk = self.data[address - self.base:address - self.base + size]
        return self.kind(chunk)


def test_a_read_object_is_used_as_it_is_bytes_or_a_byte_list():
    b = Bridge(A, bytes(range(16)))
    m = as_memory(b)
    assert isinstance(m, ReadObject) and m.read(A + 4, 3) == b"\x04\x05\x06" and b.calls == [(A + 4, 3)]
    assert as_memory(Bridge(A, bytes(range(16)), list)).read(A, 2) == b"\x00\x01"
    assert as_memory(Bridge(A, bytes(range(16)), bytearray)).read(A, 2) == b"\x00\x01"


def test_a_read_object_short_answer_is_refused():
    with pytest.raises(MemoryReadError, match=r"Bridge.read\(fffff801`2a3b4058, 32\) returned 16 bytes, not 32"):
        as_memory(Bridge(A, bytes(16))).read(A, 32)


def test_a_read_object_wrong_answers_are_refused():
    class Text:
        def read(self, address, size):
            return "ab"

    class Bad:
        def read(self, address, size):
            return [1, 999]

    with pytest.raises(MemoryReadError, match="returned a str, not bytes"):
        ReadObject(Text()).read(0, 2)
    with pytest.raises(MemoryReadError, match="item 1 is 999, not a byte"):
        ReadObject(Bad()).read(0x2000, 2)


def test_a_read_object_exception_is_wrapped_naming_the_address():
    class Failing:
        def read(self, address, size):
            raise OSError("Memory read error at 0x...")

    with pytest.raises(MemoryReadError) as e:
        ReadObject(Failing(), "pykd").read(A, 8)
    assert str(e.value) == "pykd(fffff801`2a3b4058, 8) failed: OSError: Memory read error at 0x..."
    assert isinstance(e.value.__cause__, OSError) and e.value.address == A


def test_a_read_object_returning_none_is_a_gap():
    class Nothing:
        def read(self, address, size):
            return None

    with pytest.raises(MemoryGap, match="its read\\(\\) returned None") as e:
        ReadObject(Nothing()).read(A, 8)
    assert e.value.missing == ((A, A + 8),)


def test_an_object_without_read_is_refused():
    with pytest.raises(InvalidArgument, match="has no read"):
        ReadObject(object())


# ---- a raw image file

def test_an_image_file_is_read_lazily_with_its_bounds(tmp_path):
    p = tmp_path / "image.bin"
    p.write_bytes(bytes(range(64)))
    m = ImageFile(p, "fffff801`2a3b4000")
    assert m.read(0xFFFFF8012A3B4010, 4) == bytes(range(16, 20))
    with pytest.raises(MemoryGap) as e:
        m.read(0xFFFFF8012A3B403E, 4)
    assert e.value.missing == ((0xFFFFF8012A3B4040, 0xFFFFF8012A3B4042),)
    assert "the image holds fffff801`2a3b4000..fffff801`2a3b403f" in str(e.value)
    with pytest.raises(MemoryGap) as e:
        m.read(0xFFFFF8012A3B3FFE, 70)  # both sides
    assert e.value.missing == ((0xFFFFF8012A3B3FFE, 0xFFFFF8012A3B4000), (0xFFFFF8012A3B4040, 0xFFFFF8012A3B4044))


def test_an_image_file_that_shrinks_while_used_is_an_error(tmp_path):
    p = tmp_path / "image.bin"
    p.write_bytes(bytes(64))
    m = ImageFile(p, 0x1000)
    p.write_bytes(bytes(16))
    with pytest.raises(MemoryReadError, match="changed size"):
        m.read(0x1020, 8)


def test_an_image_file_must_be_a_regular_file(tmp_path):
    with pytest.raises(DecodeError, match="cannot read .*missing.bin: no such file$"):
        ImageFile(tmp_path / "missing.bin")
    with pytest.raises(DecodeError, match="cannot read .*: it is a directory$"):
        ImageFile(tmp_path)
    with pytest.raises(DecodeError, match="^/dev/null is a character device, not a regular file"):
        ImageFile("/dev/null")


# ---- errors travel between processes intact

def test_memory_errors_pickle():
    m = Ranges()
    with pytest.raises(MemoryGap) as e:
        m.read(A, 4)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is MemoryGap and back.missing == e.value.missing and str(back) == str(e.value)


def test_the_package_exports_the_memories():
    assert kmd.Ranges is Ranges and kmd.parse_address is parse_address and kmd.MemoryGap is MemoryGap


# ---- what a memory is built with, and what read() is given (found by the wrong-kind test once it found the
# package's own classes: read(size=1 << 20000) once raised Python's "Exceeds the limit" making its message)

@pytest.mark.parametrize("memory", [lambda: Ranges.of(b"ab", A), lambda: ReadObject(Ranges.of(b"ab", A))])
def test_a_read_of_a_huge_or_negative_size_names_the_range_in_one_line(memory):
    for size, shown in ((1 << 20000, "<a 20001-bit int>"), (A, str(A))):
        with pytest.raises(InvalidArgument, match=rf"^read: size {shown} at fffff801`2a3b4058 runs past the end of "
                                                  rf"the 64-bit address space \(valid 0\.\.{(1 << 64) - A:#x}\)$"):
            memory().read(A, size)
    with pytest.raises(InvalidArgument, match=r"^read: size must be a non-negative integer, not -1$"):
        memory().read(A, -1)
    with pytest.raises(InvalidArgument, match=r"^read: address must be an integer 0\.\.0xffffffffffffffff, not "
                                              r"<a 20001-bit int>$"):
        memory().read(1 << 20000, 1)


@pytest.mark.parametrize("build, name", [(lambda o: Ranges(o), "Ranges: origin"),
                                         (lambda o: Ranges.of(b"ab", A, o), "Ranges.of: origin"),
                                         (lambda o: Ranges().add(A, b"ab", o), "Ranges.add: origin"),
                                         (lambda o: ReadObject(Ranges(), o), "ReadObject: origin")])
def test_an_origin_that_is_no_str_is_refused_where_the_memory_is_built(build, name):
    """An origin is echoed in every message of the memory: an array's would span lines, None would read 'None'."""
    import numpy as np

    with pytest.raises(InvalidArgument, match=rf"^{name} must be a name for the bytes in messages \(a str\)"):
        build(np.arange(100))


@pytest.mark.parametrize("path", [None, 5, "", "a\0b", b"a\0b"])
def test_a_memory_file_path_of_the_wrong_kind_empty_or_with_nul_is_refused_naming_it(path, tmp_path):
    """os.stat("a\\0b") is a ValueError and os.fsdecode(None) a TypeError of Python's own."""
    from d3dkmddi_py.memory import KernelDump

    for build, name in ((ImageFile, "ImageFile"), (KernelDump, "KernelDump")):
        with pytest.raises(InvalidArgument, match=rf"^{name}: path must be a file's path \(a str or an os\.PathLike"):
            build(path)


def test_kernel_dump_translate_and_windbg_log_dump_at_take_an_address_or_name_it():
    from d3dkmddi_py.memory import KernelDump, WinDbgLog

    log = WinDbgLog("fffff801`2a3b4000  00000485 00000001")
    assert log.dump_at("fffff801`2a3b4004").address == 0xFFFFF8012A3B4000
    with pytest.raises(InvalidArgument, match=r"^address must be an int or text"):
        log.dump_at(None)
    with pytest.raises(InvalidArgument, match=r"^WinDbgLog\.memory_at: size must be a non-negative integer, not "
                                              r"None"):
        log.memory_at(0xFFFFF8012A3B4000, size=None)
    dump = KernelDump.__new__(KernelDump)  # the check comes before the page tables are read
    with pytest.raises(InvalidArgument, match=r"^KernelDump\.translate: address must be an integer "
                                              r"0\.\.0xffffffffffffffff, not None"):
        dump.translate(None)
