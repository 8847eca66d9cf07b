"""Kernel crash dumps (memory.KernelDump): dumps of each kind the tests write (tests/kdump.py, the layout
kdmp-parser 0.7.4 reads), read back by virtual address through kdmp-parser's physical pages and the
dump's page tables: every mapped byte is what was written, an unmapped address is refused naming it,
and a damaged file is refused before kdmp-parser maps it."""
from __future__ import annotations

import random
import struct
import sys

import pytest

from d3dkmddi_py.errors import DecodeError
from d3dkmddi_py.memory import KernelDump, MemoryGap, as_memory
from tests.conftest import require
from tests.kdump import KINDS, Machine, dump_bytes, write_dump

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
