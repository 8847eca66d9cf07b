"""Small Windows x64 kernel crash dumps, written from scratch: the bundled ``session.dmp`` (``--dump sample``: the
session log's memory as a kernel dump) and the tests' dumps.

The file layout is the one kdmp-parser 0.7.4 reads (github.com/0vercl0k/kdmp-parser @ v0.7.4):
``src/lib/kdmp-parser-structs.h`` gives HEADER64 (Signature 'PAGE' at 0x0, ValidDump 'DU64' at 0x4,
DirectoryTableBase at 0x10, PHYSMEM_DESC PhysicalMemoryBlock at 0x88 with its runs at 0x98, the CONTEXT
record at 0x348, DumpType at 0xf98, and at 0x2000 the union of BMP_HEADER64 ('SDMP', 'DUMP', FirstPage
at +0x20, Pages at +0x30, the bitmap at +0x38) and KERNEL_/FULL_RDMP_HEADER64 (Marker 0x40, 'RDMP', 'DUMP',
MetadataSize at +0x10, FirstPageOffset at +0x18 = MetadataSize + 0x2020, then (PFN, page count) pairs
at +0x30 that end at a PFN of 0); ``src/lib/kdmp-parser.h`` how each kind's pages follow: a full dump's
runs one after another from 0x2000 (BuildPhysmemFullDump), a bitmap dump's set bits in order from
FirstPage (BuildPhysmemBMPDump), a kernel or complete dump's ranges from FirstPageOffset
(BuildPhysicalMemoryFromDump), and the 4-level x64 walk from DirectoryTableBase (VirtTranslate).
"""
from __future__ import annotations

import struct
from pathlib import Path

from ..errors import InvalidArgument

PAGE = 0x1000
PRESENT_RW = 0x3  # PTE bits 0 (Present) and 1 (Write)
LARGE = 0x80  # bit 7 (PS): a PDPTE maps 1 GB, a PDE 2 MB
KINDS = {"full": 1, "bitmap": 5, "kernel": 8, "complete": 10}


class Machine:
    """Physical pages and the page tables that map the test's virtual addresses (4 KB pages, or a 2 MB
    or 1 GB large page over physical pages of the test's choosing)."""

    def __init__(self, first_pfn: int = 0x100):
        self.pages: dict = {}  # pfn -> bytearray(PAGE); a kernel dump cannot hold PFN 0 (it ends the list)
        self.next_pfn = first_pfn
        self.pml4 = self.new_page()

    def new_page(self) -> int:
        pfn = self.next_pfn
        self.next_pfn += 1
        self.pages[pfn] = bytearray(PAGE)
        return pfn

    def _entry(self, table: int, index: int) -> int:
        return struct.unpack_from("<Q", self.pages[table], index * 8)[0]

    def _set(self, table: int, index: int, value: int) -> None:
        struct.pack_into("<Q", self.pages[table], index * 8, value)

    def _table(self, table: int, index: int) -> int:
        """The next-level table under ``table[index]``, made when absent."""
        entry = self._entry(table, index)
        if entry & 1:
            if entry & LARGE:
                raise InvalidArgument(f"Machine: a large page is mapped at table {table:#x} entry {index} already")
            return entry >> 12
        pfn = self.new_page()
        self._set(table, index, pfn << 12 | PRESENT_RW)
        return pfn

    def map_page(self, va: int) -> int:
        """The physical page of a 4 KB virtual page, mapping a fresh one when needed."""
        pdpt = self._table(self.pml4, va >> 39 & 0x1FF)
        pd = self._table(pdpt, va >> 30 & 0x1FF)
        pt = self._table(pd, va >> 21 & 0x1FF)
        entry = self._entry(pt, va >> 12 & 0x1FF)
        if entry & 1:
            return entry >> 12
        pfn = self.new_page()
        self._set(pt, va >> 12 & 0x1FF, pfn << 12 | PRESENT_RW)
        return pfn

    def write(self, va: int, data: bytes) -> None:
        """``data`` at virtual address ``va`` through 4 KB pages (made as needed)."""
        for i in range(len(data)):  # small test data: byte by byte keeps page crossings plain
            pfn = self.map_page(va + i)
            self.pages[pfn][(va + i) & 0xFFF] = data[i]

    def map_large(self, va: int, physical: int, size: str, flags: int = LARGE | PRESENT_RW) -> None:
        """A 2 MB (PDE) or 1 GB (PDPTE) page at ``va`` onto ``physical``; no page of it is in the dump
        until ``write_physical`` puts one there.  ``flags``: the entry's other bits (PAT is bit 12 here, a
        reserved bit 13 up; another machine's descriptor bits)."""
        pdpt = self._table(self.pml4, va >> 39 & 0x1FF)
        if size == "1GB":
            self._set(pdpt, va >> 30 & 0x1FF, physical | flags)
            return
        pd = self._table(pdpt, va >> 30 & 0x1FF)
        self._set(pd, va >> 21 & 0x1FF, physical | flags)

    def map_physical(self, va: int, physical: int) -> None:
        """The 4 KB page at ``va`` onto the page at ``physical`` (any of the 52 bits an x64 entry holds)."""
        self.map_page(va)
        pdpt = self._table(self.pml4, va >> 39 & 0x1FF)
        pt = self._table(self._table(pdpt, va >> 30 & 0x1FF), va >> 21 & 0x1FF)
        self._set(pt, va >> 12 & 0x1FF, physical | PRESENT_RW)

    def set_top(self, index: int, value: int) -> None:
        """The raw PML4 entry ``index`` (a self-reference, reserved bits)."""
        self._set(self.pml4, index, value)

    def write_physical(self, pa: int, data: bytes) -> None:
        for i in range(len(data)):
            page = self.pages.setdefault((pa + i) >> 12, bytearray(PAGE))
            page[(pa + i) & 0xFFF] = data[i]

    @classmethod
    def holding(cls, placements: dict) -> "Machine":
        """A machine whose virtual memory holds ``placements`` (address -> bytes) in 4 KB pages."""
        machine = cls()
        for address, data in placements.items():
            machine.write(address, data)
        return machine

    @property
    def directory_table_base(self) -> int:
        return self.pml4 << 12


def _runs(pfns: list) -> list:
    """(first PFN, count) of each run of consecutive PFNs."""
    runs = []
    for pfn in pfns:
        if runs and runs[-1][0] + runs[-1][1] == pfn:
            runs[-1][1] += 1
        else:
            runs.append([pfn, 1])
    return runs


def dump_bytes(machine: Machine, kind: str, machine_type: int = 0x8664) -> bytes:
    """The file of a dump of ``kind`` ("full", "bitmap", "kernel" or "complete") holding every page, its
    header's MachineImageType ``machine_type`` (IMAGE_FILE_MACHINE_AMD64 unless a test says otherwise)."""
    pfns = sorted(machine.pages)
    data = b"".join(bytes(machine.pages[p]) for p in pfns)
    head = bytearray(0x2000)
    struct.pack_into("<II", head, 0, 0x45474150, 0x34365544)  # 'PAGE', 'DU64'
    struct.pack_into("<II", head, 8, 15, 19041)  # MajorVersion, MinorVersion (not read)
    struct.pack_into("<Q", head, 0x10, machine.directory_table_base)
    struct.pack_into("<I", head, 0x30, machine_type)  # MachineImageType
    struct.pack_into("<I", head, 0xF98, KINDS[kind])
    runs = _runs(pfns)
    if kind == "full":
        if len(runs) > 42:
            raise InvalidArgument(f"dump_bytes: a full dump's PhysicalMemoryBlock holds 42 runs, not {len(runs)}")
        struct.pack_into("<IIQ", head, 0x88, len(runs), 0, len(pfns))
        for i, (first, count) in enumerate(runs):
            struct.pack_into("<QQ", head, 0x98 + 16 * i, first, count)
        return bytes(head) + data
    if kind == "bitmap":
        n = (pfns[-1] + 8) // 8 * 8
        bitmap = bytearray(n // 8)
        for p in pfns:
            bitmap[p // 8] |= 1 << (p % 8)
        first = (0x2038 + len(bitmap) + PAGE - 1) // PAGE * PAGE
        bmp = struct.pack("<II24xQQQ", 0x504D4453, 0x504D5544, first, len(pfns), n) + bytes(bitmap)  # 'SDMP'
        body = bytes(head) + bmp
        return body + bytes(first - len(body)) + data
    # kernel / complete: (PFN, count) pairs at 0x2030 ended by a zero pair, pages from FirstPageOffset
    pairs = b"".join(struct.pack("<QQ", first, count) for first, count in runs) + bytes(16)
    first_page = (0x2030 + len(pairs) + PAGE - 1) // PAGE * PAGE
    meta = first_page - 0x2020
    rdmp = struct.pack("<IIIIQQ", 0x40, 0x504D4452, 0x504D5544, 0, meta, first_page)  # Marker, 'RDMP', 'DUMP'
    extra = struct.pack("<IHHQ", len(runs), 0, 0, len(pfns)) if kind == "complete" else bytes(16)
    body = bytes(head) + rdmp + extra + pairs
    return body + bytes(first_page - len(body)) + data


def write_dump(path: Path, machine: Machine, kind: str, machine_type: int = 0x8664) -> Path:
    path.write_bytes(dump_bytes(machine, kind, machine_type))
    return path


def dump32_bytes(machine_type: int, pae: int) -> bytes:
    """The 4 KB header of a 32-bit dump (PAGEDUMP): volatility's _DMP_HEADER, MachineImageType at 0x20,
    PaeEnabled at 0x5c, DumpType at 0xf88 (1, full)."""
    head = bytearray(0x1000)
    head[0:8] = b"PAGEDUMP"
    struct.pack_into("<I", head, 0x20, machine_type)
    head[0x5C] = pae
    struct.pack_into("<I", head, 0xF88, 1)
    return bytes(head)
