"""Kernel crash dumps (memory.KernelDump): dumps of each kind the tests write (samples/dump_build.py, the
layout kdmp-parser 0.7.4 reads), read back by virtual address through kdmp-parser's physical pages and the
dump's page tables: every mapped byte is what was written, an unmapped address is refused naming it,
and a damaged file is refused before kdmp-parser maps it."""
from __future__ import annotations

import os
import random
import re
import struct
import sys
import tracemalloc

import pytest

from d3dkmddi_py.errors import DecodeError
from d3dkmddi_py.memory import ImageFile, KernelDump, MemoryGap, MemoryReadError, as_memory, check_dump_file
from tests.conftest import require
from d3dkmddi_py.samples.dump_build import KINDS, Machine, dump32_bytes, dump_bytes, write_dump

try:
    import kdmp_parser
except ImportError:  # the test extra installs it; require() below decides whether that may skip
    kdmp_parser = None

VA = 0xFFFFF8012A3B4FF0  # 16 bytes before a page boundary: reads cross it
HUGE_VA, HUGE_PA = 0xFFFFA00000000000, 0x40000000  # a 1 GB page
LARGE_VA, LARGE_PA = 0xFFFFB00000200000, 0x800000  # a 2 MB page
PAYLOAD = bytes(range(256)) * 3


@pytest.fixture(autouse=True)
def _kdmp():
    require(kdmp_parser is not None, "kdmp-parser is not installed (pip install -e '.[test]')")


def machine() -> Machine:
    m = Machine()
    m.write(VA, PAYLOAD)
    m.write(0xFFFFE00012345000, b"far away")
    m.map_large(HUGE_VA, HUGE_PA, "1GB")
    m.write_physical(HUGE_PA + 0x5000, b"huge!")
    m.map_large(LARGE_VA, LARGE_PA, "2MB")
    m.write_physical(LARGE_PA + 0x3010, b"large")
    return m


@pytest.fixture(params=sorted(KINDS))
def dump(request, tmp_path):
    return write_dump(tmp_path / f"{request.param}.dmp", machine(), request.param)


def test_every_mapped_byte_reads_back(dump, capfd):
    d = KernelDump(dump)
    assert d.read(VA, len(PAYLOAD)) == PAYLOAD
    for i in range(0, len(PAYLOAD), 7):
        assert d.read(VA + i, 1) == PAYLOAD[i:i + 1]
    assert d.read(0xFFFFE00012345000, 8) == b"far away"
    assert d.read(HUGE_VA + 0x5000, 5) == b"huge!"
    assert d.read(LARGE_VA + 0x3010, 5) == b"large"
    assert as_memory(d) is d
    assert capfd.readouterr().out == ""  # kdmp-parser printed nothing


def test_the_dump_kind_and_its_pages(dump):
    d = KernelDump(dump)
    assert d.type == {1: "FullDump", 5: "BMPDump", 8: "KernelMemoryDump", 10: "CompleteMemoryDump"}[
        KINDS[dump.stem]]
    assert d.pages == len(machine().pages)


def test_translation_agrees_with_kdmp_parser(dump, capfd):
    d = KernelDump(dump)
    theirs = kdmp_parser.KernelDumpParser(str(dump))
    for va in (VA, VA + 0x10, 0xFFFFE00012345000, HUGE_VA + 0x5004, LARGE_VA + 0x3010, 0xFFFFF80000000000,
               HUGE_VA + 0x6000):
        ours, _why = d.translate(va)
        assert ours == theirs.translate_virtual(va), hex(va)
        page = theirs.read_virtual_page(va)
        if page is not None:
            assert d.read(va & ~0xFFF, 0x1000) == bytes(page)
    capfd.readouterr()  # kdmp-parser's own messages for the unmapped ones


def test_an_unmapped_address_is_refused_naming_it(dump):
    d = KernelDump(dump)
    with pytest.raises(MemoryGap) as e:
        d.read(0xFFFFF80000000000, 8)
    assert e.value.missing == ((0xFFFFF80000000000, 0xFFFFF80000000008),)
    assert "no bytes at fffff800`00000000..fffff800`00000007" in str(e.value)
    assert "it is not mapped (its PDPTE is not present)" in str(e.value)


def test_a_mapped_page_the_dump_does_not_hold_is_refused_naming_it(dump):
    with pytest.raises(MemoryGap, match=r"ffffa000`00006000.* it maps to physical 0x40006000, a page the dump "
                                        r"does not hold"):
        KernelDump(dump).read(HUGE_VA + 0x6000, 4)


def test_a_read_across_a_mapped_and_an_unmapped_page_lists_the_gap(tmp_path):
    m = Machine()
    m.write(0xFFFFF80100000FF8, b"12345678")
    d = KernelDump(write_dump(tmp_path / "k.dmp", m, "kernel"))
    with pytest.raises(MemoryGap) as e:
        d.read(0xFFFFF80100000FF8, 16)
    assert e.value.missing == ((0xFFFFF80100001000, 0xFFFFF80100001008),)


def test_another_directory_table_base(tmp_path):
    m = Machine()
    m.write(0xFFFFF80100000000, b"kernel")
    kernel_pml4, m.pml4 = m.pml4, m.new_page()  # a process's page tables over the same physical memory
    m.write(0x7FF600000000, b"user")
    process_pml4, m.pml4 = m.pml4, kernel_pml4  # the header names the kernel's
    path = write_dump(tmp_path / "f.dmp", m, "full")
    assert KernelDump(path).read(0xFFFFF80100000000, 6) == b"kernel"
    with pytest.raises(MemoryGap):
        KernelDump(path).read(0x7FF600000000, 4)
    assert KernelDump(path, directory_table_base=process_pml4 << 12).read(0x7FF600000000, 4) == b"user"


# ---- damaged files are refused before kdmp-parser maps them

def _listed_twice(raw: bytearray, number_at, first_at: int, runs: int) -> None:
    """Run ``runs`` (the one after the last) made a second copy of the first run's first page, the first
    run one page shorter: as many pages as before, one of them listed twice."""
    base, count = struct.unpack_from("<QQ", raw, first_at)
    struct.pack_into("<QQ", raw, first_at, base, count - 1)
    struct.pack_into("<QQ", raw, first_at + 16 * runs, base, 1)
    if number_at is not None:
        struct.pack_into("<I", raw, number_at, runs + 1)


def _damaged(tmp_path, kind, edit):
    raw = bytearray(dump_bytes(machine(), kind))
    edit(raw)
    path = tmp_path / "bad.dmp"
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("kind,edit,message", [
    ("full", lambda b: b.__setitem__(slice(0, 4), b"MDMP"), "its signature is"),
    ("full", lambda b: struct.pack_into("<I", b, 0xF98, 4), "DumpType 4 is not one of"),
    ("full", lambda b: struct.pack_into("<I", b, 0x348 + 0x34, 0x1F80), "MxCsr and MxCsr2 differ"),
    ("full", lambda b: struct.pack_into("<I", b, 0x88, 43), "NumberOfRuns is 0x2b (valid 0..42)"),
    ("full", lambda b: struct.pack_into("<Q", b, 0xA0, 1 << 40), "is cut short: its FullDump header lists"),
    ("full", lambda b: struct.pack_into("<Q", b, 0x98, (1 << 52) - 1), "runs past 64-bit physical memory"),
    ("bitmap", lambda b: struct.pack_into("<Q", b, 0x2030, 1 << 40), "a bitmap of"),
    ("bitmap", lambda b: struct.pack_into("<I", b, 0x2000, 0), "BMP_HEADER64 signature"),
    ("bitmap", lambda b: struct.pack_into("<Q", b, 0x2020, 1 << 30), "is cut short: its BMPDump header"),
    ("kernel", lambda b: struct.pack_into("<I", b, 0x2000, 0x41), "RDMP_HEADER64 is not"),
    ("kernel", lambda b: struct.pack_into("<QQ", b, 0x2030, 0x100, 1 << 30), "is cut short"),
    ("kernel", lambda b: struct.pack_into("<QQ", b, 0x2010, 0x7FFF0, 0x7FFF0 + 0x2020), "MetadataSize is 0x7fff0"),
    ("complete", lambda b: struct.pack_into("<QQ", b, 0x2030, 0x100, 1 << 30), "is cut short"),
    # the dump type says how the pages are found: a full dump's start at 0x2000, where another kind has its header
    ("bitmap", lambda b: struct.pack_into("<I", b, 0xF98, 1), "DumpType is 1 (FullDump), whose pages start at byte "
                                                              "0x2000, but byte 0x2000 holds a BMP_HEADER64"),
    ("kernel", lambda b: struct.pack_into("<I", b, 0xF98, 1), "but byte 0x2000 holds an RDMP_HEADER64"),
    # a page listed twice would have two copies (kdmp-parser keeps the first)
    ("full", lambda b: _listed_twice(b, 0x88, 0x98, 3), "run 3 (BasePage 0x100, PageCount 0x1) overlaps run 0"),
    ("kernel", lambda b: _listed_twice(b, None, 0x2030, 3), "the range at PFN 0x100 of 0x1 pages starts before the "
                                                            "end of the one before it"),
])
def test_a_damaged_dump_is_refused_naming_the_field(tmp_path, capfd, kind, edit, message):
    with pytest.raises(DecodeError, match="bad.dmp") as e:
        KernelDump(_damaged(tmp_path, kind, edit))
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert capfd.readouterr().out == ""  # refused before kdmp-parser saw it


def test_a_dump_cut_anywhere_is_refused_or_read_never_a_crash(tmp_path, capfd):
    rng = random.Random(24)
    for kind in sorted(KINDS):
        raw = dump_bytes(machine(), kind)
        cuts = sorted({0, 8, 0xF9C, 0x2000, 0x2038, len(raw) - 1, *(rng.randrange(len(raw)) for _ in range(12))})
        for cut in cuts:
            path = tmp_path / f"{kind}-{cut}.dmp"
            path.write_bytes(raw[:cut])
            with pytest.raises(DecodeError, match=f"{kind}-{cut}.dmp"):
                KernelDump(path)
    assert capfd.readouterr().out == ""


def test_a_missing_file_and_a_missing_package(tmp_path, monkeypatch):
    with pytest.raises(DecodeError, match="cannot read"):
        KernelDump(tmp_path / "none.dmp")
    path = write_dump(tmp_path / "k.dmp", machine(), "kernel")
    monkeypatch.setitem(sys.modules, "kdmp_parser", None)
    with pytest.raises(DecodeError, match=r"needs the kdmp-parser package: pip install 'd3dkmddi_py\[dump\]'"):
        KernelDump(path)


# ---- issue 30, case 1: a kernel dump of another machine, and every header field the walk trusts

ARM64_BLOCK = 0x401  # an ARM64 level-2 block descriptor: valid (bit 0), block (bit 1 clear), AF (bit 10)


def _arm64_dump(tmp_path, machine_type: int):
    """A 2 MB ARM64 block holding 0x485 at LARGE_VA + 0x3010.  Walked as x64 page tables, the block's
    descriptor has no PS bit, so its first page is taken for a page table: entry 3 there sends the read to a
    page holding 0xdeadbeef."""
    m = Machine()  # its table entries (bits 0 and 1 set) are ARM64 table descriptors too
    m.map_large(LARGE_VA, LARGE_PA, "2MB", flags=ARM64_BLOCK)
    m.write_physical(LARGE_PA + 0x3010, struct.pack("<I", 0x485))
    m.write_physical(LARGE_PA + 3 * 8, struct.pack("<Q", 0x900000 | 3))
    m.write_physical(0x900010, struct.pack("<I", 0xDEADBEEF))
    return write_dump(tmp_path / f"{machine_type:x}.dmp", m, "kernel", machine_type)


def test_a_kernel_dump_of_another_machine_is_refused_naming_it(tmp_path, capfd):
    # what the refusal prevents: the same file labelled x64 reads the wrong bytes
    assert KernelDump(_arm64_dump(tmp_path, 0x8664)).read(LARGE_VA + 0x3010, 4) == struct.pack("<I", 0xDEADBEEF)
    with pytest.raises(DecodeError) as e:
        KernelDump(_arm64_dump(tmp_path, 0xAA64))
    assert str(e.value).endswith(
        "aa64.dmp is a kernel dump of an ARM64 machine (MachineImageType 0xaa64): only x64 dumps (MachineImageType "
        "0x8664) are translated here, and another machine's page tables walked as x64's give other bytes; dump the "
        "records in WinDbg (dq, db) and read its log with --windbg (WinDbgLog), which any machine's debugger writes")
    for code, named in ((0x14C, "an i386 machine (MachineImageType 0x14c)"),
                        (0x45474150, "a machine of a type not known here (MachineImageType 0x45474150)")):
        with pytest.raises(DecodeError, match=re.escape(named) + ": only x64 dumps"):
            KernelDump(write_dump(tmp_path / "other.dmp", machine(), "full", code))
    assert capfd.readouterr().out == ""  # refused before kdmp-parser saw them


@pytest.mark.parametrize("pae, tables", [(1, "3-level PAE"), (0, "2-level")])
def test_a_32_bit_dump_is_refused_naming_its_machine_and_its_pae_flag(tmp_path, pae, tables):
    path = tmp_path / "x86.dmp"
    path.write_bytes(dump32_bytes(0x14C, pae))
    with pytest.raises(DecodeError) as e:
        KernelDump(path)
    assert f"x86.dmp is a 32-bit kernel dump (PAGEDUMP) of an i386 machine (MachineImageType 0x14c, PaeEnabled " \
           f"{pae}: {tables} page tables): only x64 dumps (PAGEDU64, MachineImageType 0x8664) are translated here" \
           in str(e.value)


def test_a_directory_table_base_past_52_bits_or_in_a_page_the_dump_does_not_hold_is_refused(tmp_path, capfd):
    m = machine()
    good = m.directory_table_base
    raw = bytearray(dump_bytes(m, "kernel"))
    for value, said in ((good | 1 << 63, "bits 52-63 are set"), (0x4547415045474150, "bits 52-63 are set"),
                        (0x7777000, "the page-map table at physical 0x7777000, a page")):
        struct.pack_into("<Q", raw, 0x10, value)
        path = tmp_path / "dtb.dmp"
        path.write_bytes(bytes(raw))
        with pytest.raises(DecodeError, match=f"dtb.dmp: its DirectoryTableBase is {value:#x}.*{re.escape(said)}"):
            KernelDump(path)
    struct.pack_into("<Q", raw, 0x10, good | 0x5)  # a PCID in bits 0-11 is dropped, as the processor does
    path.write_bytes(bytes(raw))
    assert KernelDump(path).read(VA, 4) == PAYLOAD[:4]
    for value, said in ((1 << 60, "bits 52-63 are set"), (0x7777000, "dtb.dmp does not hold")):
        with pytest.raises(DecodeError, match=f"^directory_table_base is {value:#x}.*{re.escape(said)}"):
            KernelDump(path, directory_table_base=value)
    capfd.readouterr()


def test_an_address_that_is_not_canonical_is_mapped_by_nothing(tmp_path):
    d = KernelDump(write_dump(tmp_path / "k.dmp", machine(), "kernel"))
    aliased = VA & ((1 << 48) - 1)  # the same table indexes, bits 48-63 clear: not canonical since bit 47 is set
    with pytest.raises(MemoryGap, match="not a canonical x64 address"):
        d.read(aliased, 4)
    assert d.translate(aliased)[0] is None and d.read(VA, 4) == PAYLOAD[:4]


@pytest.mark.parametrize("size, va, pa", [("2MB", LARGE_VA, LARGE_PA), ("1GB", HUGE_VA, HUGE_PA)])
def test_a_large_page_with_its_pat_bit_set_reads_its_own_bytes(tmp_path, size, va, pa):
    """Bit 12 of a large page's entry is PAT (write-combining video memory sets it), not part of the frame."""
    m = Machine()
    m.map_large(va, pa, size, flags=0x1000 | 0x80 | 0x3)
    m.write_physical(pa + 0x3010, b"mine")
    m.write_physical(pa + 0x4010, b"next")  # where a frame with the PAT bit in it would point
    assert KernelDump(write_dump(tmp_path / "pat.dmp", m, "kernel")).read(va + 0x3010, 4) == b"mine"


def test_a_frame_above_bit_47_is_read_whole(tmp_path):
    """A frame is bits 12-51 of an entry: a 36-bit frame would read the page 2**48 bytes lower."""
    m = Machine()
    m.map_physical(VA & ~0xFFF, 1 << 48)
    m.write_physical(1 << 48, b"high")
    m.write_physical(0, b"\0")  # PFN 0 present in the full dump (a kernel dump's list cannot hold it)
    m.write_physical(0, b"low!")
    d = KernelDump(write_dump(tmp_path / "high.dmp", m, "full"))
    assert d.read(VA & ~0xFFF, 4) == b"high"


@pytest.mark.parametrize("where, entry, said", [
    ("PDE", LARGE_PA | 1 << 13 | 0x83, "its PDE 0x802083 sets reserved bits (0x2000)"),
    ("PML4E", 0x83, "its PML4E 0x83 sets reserved bits (0x80)"),
])
def test_an_entry_that_sets_reserved_bits_maps_nothing(tmp_path, where, entry, said):
    m = Machine()
    m.write(0xFFFFF80100000000, b"kept")
    if where == "PDE":
        m.map_large(LARGE_VA, LARGE_PA, "2MB", flags=1 << 13 | 0x83)
        m.write_physical(LARGE_PA + 0x3010, b"lost")
        va = LARGE_VA + 0x3010
    else:
        m.set_top(5, entry)
        va = 5 << 39
    d = KernelDump(write_dump(tmp_path / "r.dmp", m, "kernel"))
    with pytest.raises(MemoryGap, match=re.escape(said)):
        d.read(va, 4)
    assert d.read(0xFFFFF80100000000, 4) == b"kept"


# ---- issue 30, case 2: bounded by the input

def test_a_read_stops_at_the_first_gap(tmp_path):
    d = KernelDump(write_dump(tmp_path / "k.dmp", machine(), "kernel"))
    with pytest.raises(MemoryGap) as e:
        d.read(0, 1 << 62)  # 2**50 pages: listing them all never ended
    assert e.value.missing == ((0, 0x1000),) and "the read stopped at this first missing page" in str(e.value)
    with pytest.raises(MemoryGap) as e:
        d.read(VA, (1 << 64) - VA)
    assert e.value.missing == ((0xFFFFF8012A3B6000, 0xFFFFF8012A3B7000),)  # PAYLOAD fills the two pages before


def test_a_read_never_returns_more_bytes_than_the_dump_holds(tmp_path):
    """Page tables that map every address onto one page (a PML4 that is its own every level) would make a read of
    2**40 bytes return 2**40 bytes: it stops once it passes what the dump holds."""
    m = Machine()
    for i in range(512):
        m.set_top(i, m.pml4 << 12 | 3)
    d = KernelDump(write_dump(tmp_path / "loop.dmp", m, "kernel"))
    assert d.read(0x1000, 8) == struct.pack("<Q", m.pml4 << 12 | 3)
    with pytest.raises(MemoryReadError, match=r"1099511627776 bytes at 00000000 are more than the 4096 bytes "
                                              r".*loop.dmp holds: its pages would repeat"):
        d.read(0, 1 << 40)


def test_a_fifo_or_a_device_is_refused_after_stat_before_open(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for make, what in ((KernelDump, "a crash dump"), (lambda p: ImageFile(p, 0), "a memory image")):
        with pytest.raises(DecodeError, match=f"fifo is a FIFO \\(a named pipe\\), not a regular file: {what} is read "
                                              f"by address, so save it to a file first"):
            make(fifo)  # open() would wait for a writer
        with pytest.raises(DecodeError, match="/dev/zero is a character device, not a regular file"):
            make("/dev/zero")


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
    except DecodeError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_header_counts_are_checked_against_the_file_and_read_a_chunk_at_a_time(tmp_path, capfd):
    """A sparse kernel dump whose MetadataSize is 1 GiB took 1.07 GB to read its range list; a 64 MiB bitmap
    of ones took 677 MB to count before the file was found short.  Both stay within a few chunks now."""
    sparse = tmp_path / "sparse.dmp"
    raw = bytearray(dump_bytes(machine(), "kernel"))
    pairs = raw[0x2030:0x2050]
    meta = (1 << 30) - 0x2040
    struct.pack_into("<QQ", raw, 0x2010, meta, meta + 0x2020)
    with open(sparse, "wb") as f:
        f.write(raw[:0x2030] + pairs)
        f.truncate(0x2030 + meta + len(raw))  # 1 GiB on paper, a few KB on disk
    assert _peak(lambda: check_dump_file(sparse)) < 8 << 20
    ones = tmp_path / "ones.dmp"
    raw = bytearray(dump_bytes(machine(), "bitmap"))
    struct.pack_into("<Q", raw, 0x2030, 64 << 23)  # Pages: a bitmap of 64 MiB
    with open(ones, "wb") as f:
        f.write(raw[:0x2038])
        f.write(b"\xff" * (64 << 20))
    assert _peak(lambda: check_dump_file(ones)) < 8 << 20
    with pytest.raises(DecodeError, match="ones.dmp is cut short: its BMPDump header lists at least"):
        check_dump_file(ones)
    capfd.readouterr()
