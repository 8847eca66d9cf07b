"""Memory at addresses: a debugger session, a list of bytes, a raw image or a crash dump, read alike.

One protocol, ``AddressSpace``: an object with ``read(address, size) -> bytes`` that returns exactly
``size`` bytes or raises.  The adapters here give it to what users hold: ``Ranges`` (bytes at
addresses, from several sources; ``Ranges.of`` for bytes or a pykd-style list of ints at a base),
``ReadObject`` (any object with its own ``read``: a pykd bridge, MemProcFS), ``ImageFile`` (a raw
image at a base address, read lazily) and ``KernelDump`` (a Windows kernel crash dump, by virtual
address, through the ``kdmp-parser`` package: the ``dump`` extra).  ``as_memory`` picks the adapter.

Reading bytes nobody provided raises ``MemoryGap`` (the exact missing ranges, and for a debugger
session the WinDbg ``db`` command that shows them); a backend that fails raises ``MemoryReadError``;
two sources that disagree about a byte raise ``MemoryConflict``.  Standard library only.
"""
from __future__ import annotations

import io
import os
import stat
import struct
from bisect import bisect_left, bisect_right

from .errors import (DecodeError, InvalidArgument, integer_argument, name_argument, path_argument, shown,
                     text_argument)
from .windbg import ADDRESS_BITS, ADDRESS_END as _ADDRESS_END, parse_address
from .windbg import Dump, Memory, line_holding, scan_log
from .windbg import _windbg_address as windbg_address
from .wording import noun, plural

WINDBG_RANGE_LIMIT = 256 << 20  # WinDbg's db refuses a longer L<count> without L? ("Range too large")
_SHOWN_GAPS = 4  # missing ranges a message lists; the error's ``missing`` holds them all


def __getattr__(name: str):
    """``AddressSpace``, made on first use: ``typing`` costs milliseconds that reading memory does not need."""
    if name != "AddressSpace":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Protocol

    class AddressSpace(Protocol):
        """What every memory here is: ``read(address, size)`` gives exactly ``size`` bytes or raises."""

        def read(self, address: int, size: int) -> bytes: ...

    AddressSpace.__module__, AddressSpace.__qualname__ = __name__, "AddressSpace"
    globals()["AddressSpace"] = AddressSpace
    return AddressSpace


# ------------------------------------------------------------------ errors
class UnreadableMemory(DecodeError):
    """Bytes that cannot be read; ``address`` and ``size`` are the read asked for."""

    def __init__(self, message: str, *, address: int, size: int):
        self.address, self.size = address, size
        super().__init__(message)


class MemoryGap(UnreadableMemory):
    """Bytes that no source provided; ``missing`` is every missing range as (start, end), end exclusive."""

    def __init__(self, message: str, *, address: int, size: int, missing: tuple):
        self.missing = missing
        super().__init__(message, address=address, size=size)


class MemoryReadError(UnreadableMemory):
    """A reader that failed or answered wrongly (an exception, a short or wrong-typed result)."""


class MemoryConflict(DecodeError):
    """Two sources give different bytes at ``address``; ``origins`` names them (the first one added first)."""

    def __init__(self, message: str, *, address: int, origins: tuple):
        self.address, self.origins = address, origins
        super().__init__(message)


# ------------------------------------------------------------------ addresses
def db_command(address: int, count: int) -> str:
    """The WinDbg command that dumps ``count`` bytes at ``address``: ``db fffff801`2a3b4058 L0x10``
    (``L?`` past WinDbg's 256 MB range limit; the count in hex whatever the session's radix).  The bytes
    must lie in the 64-bit address space: 1 to 2**64 - address of them."""
    address = _address(address, "db_command: address")
    count = integer_argument(count, "db_command: count", 1, min(_ADDRESS_END - address, _ADDRESS_END - 1))
    return f"db {windbg_address(address)} L{'?' if count > WINDBG_RANGE_LIMIT else ''}0x{count:x}"


def _check_read(address, size) -> tuple:
    address = _address(address, "read: address")
    size = integer_argument(size, "read: size", 0)
    if size > _ADDRESS_END - address:
        raise InvalidArgument(f"read: size {shown(size)} at {windbg_address(address)} runs past the end of the "
                              f"{ADDRESS_BITS}-bit address space (valid 0..{_ADDRESS_END - address:#x})")
    return address, size


def _address(value, name: str) -> int:
    """A virtual address as an int (what ``read`` takes; text is ``parse_address``'s)."""
    return integer_argument(value, name, 0, _ADDRESS_END - 1)


def _ranges_text(missing) -> str:
    shown = ", ".join(f"{windbg_address(s)}..{windbg_address(e - 1)} ({e - s} {noun(e - s, 'byte')})"
                      for s, e in missing[:_SHOWN_GAPS])
    more = len(missing) - _SHOWN_GAPS
    return shown + (f" and {more} more {noun(more, 'range')}" if more > 0 else "")


def gap_error(origin: str, address: int, size: int, missing: list, why: str) -> MemoryGap:
    """The MemoryGap of a read of ``size`` bytes at ``address`` that lacks ``missing``: the ranges, and why."""
    missing = tuple(missing)
    return MemoryGap(f"{origin} has no bytes at {_ranges_text(missing)} of the {size} read at "
                     f"{windbg_address(address)}: {why}", address=address, size=size, missing=missing)


def conflict_error(first: str, old: int, second: str, new: int, at: int, where: str = "") -> MemoryConflict:
    """The MemoryConflict of two sources that give ``old`` and ``new`` for the byte at ``at``."""
    return MemoryConflict(f"{where}{second} and {first} disagree at {windbg_address(at)}: {first} has {old:02x}, "
                          f"{second} has {new:02x} (the memory changed between the two dumps?); keep one of them",
                          address=at, origins=(first, second))


# ------------------------------------------------------------------ bytes at addresses
def _byte_values(values, origin: str) -> bytes:
    """The bytes of a list of ints (what pykd's loadBytes returns), each checked to be a byte."""
    for i, v in enumerate(values):
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 255:
            shown = f"{v!r}" if isinstance(v, int) else f"a {type(v).__name__}"
            raise InvalidArgument(f"{origin}: item {i} is {shown}, not a byte (valid 0..255): a byte list holds "
                                  f"one int 0..255 per byte, as pykd's loadBytes returns it")
    return bytes(values)


def _as_bytes(data, origin: str) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, (list, tuple)):
        return _byte_values(data, origin)
    raise InvalidArgument(f"{origin}: memory is bytes, a bytearray, a memoryview or a list of ints 0..255, "
                          f"not {type(data).__name__}")


_ORIGIN = "a name for the bytes in messages (a str)"


class Ranges:
    """Bytes at addresses from any number of sources, each range labelled with its origin ("line 7").

    Ranges that overlap must agree where they overlap (else ``MemoryConflict`` names both origins) and
    are merged, as are ranges that touch; a byte keeps the origin that provided it first.  ``read``
    finds its range by bisecting the sorted starts (O(log ranges)); bytes nobody provided are a
    ``MemoryGap`` listing exactly which, with the ``db`` command that shows them in WinDbg.
    """

    def __init__(self, origin: str = "the memory"):
        self.origin = name_argument(origin, "Ranges: origin", _ORIGIN)
        self._starts: list = []  # sorted, disjoint, never touching
        self._ends: list = []
        self._data: list = []  # bytearray per range
        self._pieces: list = []  # per range: [(start, end, origin), ...] sorted, covering it

    @classmethod
    def of(cls, data, base: int = 0, origin: str | None = None) -> "Ranges":
        """Bytes (or a pykd-style list of ints 0..255) at ``base``."""
        base = parse_address(base, "base")
        name = text_argument(origin, "Ranges.of: origin", _ORIGIN + " or None") or ("the byte list" if isinstance(data, (list, tuple)) else "the bytes")
        out = cls(name)
        out.add(base, data, name)
        return out

    def add(self, address, data, origin: str) -> None:
        """Add ``data`` (bytes-like or a list of ints 0..255) at ``address``, labelled ``origin``."""
        address = parse_address(address)
        data = _as_bytes(data, name_argument(origin, "Ranges.add: origin", _ORIGIN))
        if not data:
            return
        end = address + len(data)
        if end > _ADDRESS_END:
            raise InvalidArgument(f"{origin}: {plural(len(data), 'byte')} at {windbg_address(address)} run past the end of "
                                  f"the {ADDRESS_BITS}-bit address space")
        lo = bisect_left(self._ends, address)  # first range ending at or after it (touching counts)
        hi = bisect_right(self._starts, end)  # ranges starting at or before its end
        for k in range(lo, hi):
            self._agree(k, address, data, origin)
        if lo == hi:
            self._starts.insert(lo, address)
            self._ends.insert(lo, end)
            self._data.insert(lo, bytearray(data))
            self._pieces.insert(lo, [(address, end, origin)])
            return
        first, last = self._starts[lo], self._ends[hi - 1]
        if hi - lo == 1 and first <= address and end <= last:
            return  # nothing new
        if hi - lo == 1 and first <= address:  # the common case: it extends one range at its end
            self._data[lo] += data[last - address:]
            self._pieces[lo].append((last, end, origin))
            self._ends[lo] = end
            return
        start, stop = min(first, address), max(last, end)
        buf = bytearray(stop - start)
        buf[address - start:end - start] = data
        pieces, covered = [], []
        for k in range(lo, hi):
            s, e = self._starts[k], self._ends[k]
            buf[s - start:e - start] = self._data[k]
            pieces.extend(self._pieces[k])
            covered.append((s, e))
        at = address
        for s, e in covered:  # the parts of the new range no earlier range held take its origin
            if s > at and at < end:
                pieces.append((at, min(s, end), origin))
            at = max(at, e)
        if at < end:
            pieces.append((at, end, origin))
        pieces.sort()
        self._starts[lo:hi], self._ends[lo:hi] = [start], [stop]
        self._data[lo:hi], self._pieces[lo:hi] = [buf], [pieces]

    def _agree(self, k: int, address: int, data: bytes, origin: str) -> None:
        s, e = self._starts[k], self._ends[k]
        lo, hi = max(s, address), min(e, address + len(data))
        if lo >= hi:
            return
        old, new = self._data[k][lo - s:hi - s], data[lo - address:hi - address]
        if old == new:
            return
        i = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
        at = lo + i
        pieces = self._pieces[k]
        first = pieces[bisect_right(pieces, (at, _ADDRESS_END, "")) - 1][2]
        raise conflict_error(first, old[i], origin, new[i], at)

    def read(self, address: int, size: int) -> bytes:
        address, size = _check_read(address, size)
        if size == 0:
            return b""
        end = address + size
        k = bisect_right(self._starts, address) - 1
        if k >= 0 and end <= self._ends[k]:
            s = self._starts[k]
            return bytes(self._data[k][address - s:end - s])
        missing, at = [], address
        k = max(k, 0)
        while at < end:
            while k < len(self._starts) and self._ends[k] <= at:
                k += 1
            nxt = self._starts[k] if k < len(self._starts) else end
            if nxt > at:
                missing.append((at, min(nxt, end)))
                at = min(nxt, end)
            else:
                at = self._ends[k]
        first, last = missing[0][0], missing[-1][1]
        raise gap_error(self.origin, address, size, missing,
                        f"no dump holds them; `{db_command(first, last - first)}` in WinDbg shows them")

    def spans(self) -> tuple:
        """Every range as (start, end, origins), end exclusive, in address order."""
        return tuple((s, e, tuple(dict.fromkeys(p[2] for p in pieces)))
                     for s, e, pieces in zip(self._starts, self._ends, self._pieces))

    def __len__(self) -> int:
        return len(self._starts)

    def __repr__(self) -> str:
        return f"<Ranges {self.origin}: {plural(len(self._starts), 'range')}, " \
               f"{plural(sum(map(len, self._data)), 'byte')}>"


# ------------------------------------------------------------------ a WinDbg log
class WinDbgLog(Ranges):
    """Every memory dump of a WinDbg text (a ``.logopen`` session log, a script's output, one pasted dump) as
    ranges of bytes at addresses, each dump's range labelled with its first line ("line 7").

    Read by ``windbg.scan_log``: prompts, command lines and blank lines are passed over, other output is
    skipped and counted (``scan.note()`` says how many and the first); two dumps that overlap and disagree
    are refused naming the line of each that shows the byte.  ``memory_at`` gives the bytes of the range
    holding an address as a ``windbg.Memory``, what the records pipeline reads.
    """

    def __init__(self, text: str, origin: str = "WinDbg text"):
        scan = scan_log(text, origin)
        super().__init__(origin)
        self.scan = scan
        self._dumps = sorted(scan.dumps, key=lambda d: d.address)  # by address: the dump holding one
        self._starts_of_dumps = [d.address for d in self._dumps]
        labels = {}
        for dump in scan.dumps:
            label = f"line {dump.first_line}"
            labels[label] = dump
            try:
                self.add(dump.address, dump.data, label)
            except MemoryConflict as exc:
                at, (first, second) = exc.address, exc.origins
                a, b = (line_holding(text, labels[label], at) for label in (first, second))
                old, new = (labels[label].data[at - labels[label].address] for label in (first, second))
                raise conflict_error(f"line {a}", old, f"line {b}", new, at, f"{origin}: ") from None

    def dump_at(self, address: int) -> Dump | None:
        """The dump whose bytes hold ``address`` (the first one printed, where dumps agree), or None."""
        address = parse_address(address)
        for k in range(bisect_right(self._starts_of_dumps, address) - 1, -1, -1):  # a long dump may start earlier
            if address < self._dumps[k].end:
                return self._dumps[k]
        return None

    def memory_at(self, address=None, what: str = "address", size: int = 1) -> Memory:
        """The bytes of the range holding ``address`` (default: the log's one range) as a ``windbg.Memory``,
        from the range's first byte, so offsets and titles are those of a single dump.  With an address, the
        ``size`` bytes from it must be there (the records asked for): else the MemoryGap names what is missing."""
        if address is None:
            if len(self) != 1:
                shown = ", ".join(f"{windbg_address(s)} ({', '.join(o[:2])}{', ...' if len(o) > 2 else ''})"
                                  for s, _e, o in self.spans()[:3])
                raise DecodeError(f"{self.origin} holds {len(self)} separate ranges of memory ({shown}"
                                  f"{', ...' if len(self) > 3 else ''}); give the address of the record to read "
                                  f"(--address; address= in Python)")
            address = self._starts[0]
        else:
            address = parse_address(address, what)
            size = integer_argument(size, "WinDbgLog.memory_at: size", 0)
            self.read(address, min(max(size, 1), _ADDRESS_END - address))  # a gap past the range is named here
        k = bisect_right(self._starts, address) - 1
        dump = self.dump_at(address)
        return Memory(bytes(self._data[k]), self._starts[k], self.origin, dump.address_bytes or None)

    def __repr__(self) -> str:
        return (f"<WinDbgLog {self.origin}: {plural(len(self.scan.dumps), 'dump')} in {plural(len(self), 'range')}, "
                f"{plural(sum(map(len, self._data)), 'byte')}, {plural(self.scan.skipped, 'line')} skipped>")


# ------------------------------------------------------------------ an object with its own read()
class ReadObject:
    """Any object with ``read(address, size)`` (a pykd bridge, MemProcFS' ``vmm.memory``), used as it is.

    Its answers are checked (bytes-like, or a list of ints 0..255, of exactly ``size`` bytes); None
    means it has no bytes there (a ``MemoryGap``); its exceptions become ``MemoryReadError`` naming the
    address.
    """

    def __init__(self, reader, origin: str | None = None):
        if not callable(getattr(reader, "read", None)):
            raise InvalidArgument(f"{type(reader).__name__} has no read(address, size) method")
        self.reader = reader
        self.origin = text_argument(origin, "ReadObject: origin", _ORIGIN + " or None") or f"{type(reader).__name__}.read"

    def read(self, address: int, size: int) -> bytes:
        address, size = _check_read(address, size)
        where = f"{self.origin}({windbg_address(address)}, {size})"
        try:
            got = self.reader.read(address, size)
        except Exception as exc:  # noqa: BLE001 - any backend's failure, named with the address
            raise MemoryReadError(f"{where} failed: {type(exc).__name__}: {exc}", address=address,
                                  size=size) from exc
        if got is None:
            raise gap_error(self.origin, address, size, [(address, address + size)], "its read() returned None")
        if isinstance(got, (list, tuple)):
            try:
                got = _byte_values(got, where)
            except InvalidArgument as exc:
                raise MemoryReadError(str(exc), address=address, size=size) from None
        elif isinstance(got, (bytes, bytearray, memoryview)):
            got = bytes(got)
        else:
            raise MemoryReadError(f"{where} returned a {type(got).__name__}, not bytes or a list of ints",
                                  address=address, size=size)
        if len(got) != size:
            raise MemoryReadError(f"{where} returned {len(got)} bytes, not {size}", address=address, size=size)
        return got


# ------------------------------------------------------------------ a raw image file
_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file(path, origin: str, what: str = "memory") -> int:
    """The size of ``path``, checked by ``stat()`` to be a regular file before anything opens it: open()
    blocks on a FIFO, and a device has no end, where ``what`` is read by address."""
    path = path_argument(path, "path")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _cannot_read(origin, exc) from None
    except ValueError:  # stat() refuses a NUL in a name
        raise DecodeError(f"cannot read {origin}: the path contains a NUL character") from None
    return _regular(info, origin, what)


def _cannot_read(origin: str, exc: OSError) -> DecodeError:
    """The words decoding.open_input has for the same failures (that module is a layer above this one)."""
    why = "no such file" if isinstance(exc, FileNotFoundError) else \
        "permission denied" if isinstance(exc, PermissionError) else exc.strerror or str(exc)
    return DecodeError(f"cannot read {origin}: {why}")


def _regular(info, origin: str, what: str) -> int:
    if stat.S_ISDIR(info.st_mode):
        raise DecodeError(f"cannot read {origin}: it is a directory")  # as every input of the package says it
    if not stat.S_ISREG(info.st_mode):
        kind = next((k for test, k in _FILE_KINDS if test(info.st_mode)), "not a file")
        raise DecodeError(f"{origin} is {kind}, not a regular file: {what} is read by address, so save it to a "
                          f"file first")
    return info.st_size


def _open_regular(path, origin: str, what: str):
    """``path`` opened for reading after ``stat()`` said it is a regular file, without blocking on a FIFO put
    there since (O_NONBLOCK), and checked again through the descriptor: (file, size)."""
    regular_file(path, origin, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _cannot_read(origin, exc) from None
    f = os.fdopen(fd, "rb")
    try:
        return f, _regular(os.fstat(fd), origin, what)
    except BaseException:
        f.close()
        raise


class ImageFile:
    """A raw memory image: byte 0 of the file is at ``base``.  Each read opens the file and reads only
    the bytes asked for, inside the size the file had when this was made (a file that shrinks is an
    error, not a short read)."""

    def __init__(self, path, base=0):
        self.path, self.base = path_argument(path, "ImageFile: path"), parse_address(base, "base")
        self.origin = os.fsdecode(path)
        self.size = regular_file(self.path, self.origin, "a memory image")
        if self.base + self.size > _ADDRESS_END:
            raise DecodeError(f"{self.origin}: {self.size} bytes at base {windbg_address(self.base)} run past the "
                              f"end of the {ADDRESS_BITS}-bit address space")

    def read(self, address: int, size: int) -> bytes:
        address, size = _check_read(address, size)
        start, end = self.base, self.base + self.size
        lo, hi = max(address, start), min(address + size, end)
        if lo >= hi or (address, address + size) != (lo, hi):
            missing = [(s, e) for s, e in ((address, min(address + size, start)), (max(address, end), address + size))
                       if s < e]
            held = f"{windbg_address(start)}..{windbg_address(end - 1)}" if self.size else "nothing (it is empty)"
            raise gap_error(self.origin, address, size, missing, f"the image holds {held}")
        f, _size = _open_regular(self.path, self.origin, "a memory image")
        try:
            with f:
                f.seek(address - start)
                data = f.read(size)
        except OSError as exc:
            raise MemoryReadError(f"cannot read {self.origin}: {exc.strerror or exc}", address=address,
                                  size=size) from None
        if len(data) != size:
            raise MemoryReadError(f"{self.origin} ended at byte {address - start + len(data)} while being read (it "
                                  f"held {self.size} bytes): it changed size", address=address, size=size)
        return data

    def __repr__(self) -> str:
        return f"<ImageFile {self.origin} at {windbg_address(self.base)}, {plural(self.size, 'byte')}>"


# ------------------------------------------------------------------ a kernel crash dump
# The dump file's header as kdmp-parser 0.7.4 reads it (src/lib/kdmp-parser-structs.h: HEADER64, PHYSMEM_DESC,
# BMP_HEADER64, RDMP_HEADER64, KERNEL_/FULL_RDMP_HEADER64; src/lib/kdmp-parser.h: how each kind's pages are
# found).  It is checked here against the file's size before kdmp-parser maps it: kdmp-parser trusts the run
# and bitmap counts of full and bitmap dumps, so a damaged file would make it read past the mapping.  A 32-bit
# dump's header (PAGEDUMP) is volatility's _DMP_HEADER: MachineImageType at 0x20, PaeEnabled at 0x5c.
PAGE = 0x1000
_HEADER_SIZE = 0x2000  # u3 (the BMP/RDMP header, or a full dump's first page) starts here
_SIGNATURE, _VALID_DUMP = 0x45474150, 0x34365544  # 'PAGE', 'DU64'
_PAGE_PATTERN = 0x45474150  # unused header words are filled with 'PAGE'
_MAX_RUNS = (700 - 0x10) // 0x10  # PHYSMEM_DESC.Run[] inside its 700-byte buffer at 0x88
_BMP_SIGNATURES, _DUMP = (0x504D4453, 0x504D4446), 0x504D5544  # 'SDMP' / 'FDMP', 'DUMP'
_RDMP_MARKER, _RDMP_SIGNATURE = 0x40, 0x504D4452  # 'RDMP'
DUMP_TYPES = {1: "FullDump", 5: "BMPDump", 6: "LiveKernelBitmapDump", 8: "KernelMemoryDump",
              9: "KernelAndUserMemoryDump", 10: "CompleteMemoryDump"}  # what kdmp-parser 0.7.4 reads
X64 = 0x8664  # IMAGE_FILE_MACHINE_AMD64: the one machine whose page tables are walked here
MACHINES = {X64: "x64", 0xAA64: "ARM64", 0x14C: "i386", 0x1C4: "ARM", 0x200: "IA-64"}  # IMAGE_FILE_MACHINE_*
_PHYSICAL_BITS = 52  # an x64 physical address has at most 52 bits (MAXPHYADDR)
_FRAME = ((1 << _PHYSICAL_BITS) - 1) & ~(PAGE - 1)  # bits 12-51 of a page-table entry or CR3: the frame
_CHUNK = 1 << 20  # bytes of a header's bitmap or range list read at a time
_ones = getattr(int, "bit_count", lambda n: bin(n).count("1"))  # int.bit_count: Python 3.10


def _u32(buf, at):
    return int.from_bytes(buf[at:at + 4], "little")


def _u64(buf, at):
    return int.from_bytes(buf[at:at + 8], "little")


def _machine(code: int) -> str:
    name = MACHINES.get(code)
    return f"an {name} machine" if name else "a machine of a type not known here"  # every name starts with a vowel


_ELSEWHERE = ("dump the records in WinDbg (dq, db) and read its log with --windbg (WinDbgLog), which any machine's "
              "debugger writes")


def _check_machine(head: bytes, name: str) -> None:
    """Refuse a dump whose page tables are not x64's: they would be walked as x64's and read other bytes."""
    if head[:8] == b"PAGEDUMP" and len(head) >= 0x60:  # a 32-bit dump: 2 or 3 levels (PAE), 32-bit entries
        code, pae = _u32(head, 0x20), head[0x5C]
        raise DecodeError(f"{name} is a 32-bit kernel dump (PAGEDUMP) of {_machine(code)} (MachineImageType "
                          f"{code:#x}, PaeEnabled {pae}: {'3-level PAE' if pae else '2-level'} page tables): only "
                          f"x64 dumps (PAGEDU64, MachineImageType {X64:#x}) are translated here; {_ELSEWHERE}")
    code = _u32(head, 0x30)
    if head[:8] == b"PAGEDU64" and len(head) >= 0x34 and code != X64:
        raise DecodeError(f"{name} is a kernel dump of {_machine(code)} (MachineImageType {code:#x}): only x64 "
                          f"dumps (MachineImageType {X64:#x}) are translated here, and another machine's page "
                          f"tables walked as x64's give other bytes; {_ELSEWHERE}")


def _table_base(value: int, what: str) -> int:
    """The physical address of the top page table a CR3 value names (its PCID, bits 0-11, dropped), or a
    DecodeError when bits past an x64 physical address are set."""
    if value >> _PHYSICAL_BITS:
        raise DecodeError(f"{what} is {value:#x}: bits {_PHYSICAL_BITS}-63 are set, and an x64 CR3 holds a "
                          f"physical address of at most {_PHYSICAL_BITS} bits there (is it another machine's "
                          f"value, or damaged?)")
    return value & _FRAME


def check_dump_file(path) -> tuple:
    """(dump type name, pages the file holds) of an x64 kernel dump whose header kdmp-parser accepts and whose
    pages all lie inside the file; else a DecodeError naming the field, its value and the file's size.  Every
    count is checked against the file's size before it is used, and what the header lists is read a chunk at a
    time, so a damaged or sparse file costs no more memory than a chunk."""
    name = os.fsdecode(path_argument(path, "check_dump_file: path"))

    def bad(what):
        return DecodeError(f"{name} is not a kernel dump kdmp-parser can read: {what}")

    f, size = _open_regular(path, name, "a crash dump")
    try:
        with f:
            head = f.read(_HEADER_SIZE + 0x38)
            _check_machine(head, name)
            if len(head) < _HEADER_SIZE + 0x38:
                raise bad(f"it has {size} bytes, fewer than the {_HEADER_SIZE + 0x38} of the dump headers")
            if (_u32(head, 0), _u32(head, 4)) != (_SIGNATURE, _VALID_DUMP):
                raise bad(f"its signature is {head[:8]!r}, not b'PAGEDU64' (a 64-bit kernel dump)")
            kind = _u32(head, 0xF98)
            if kind not in DUMP_TYPES:
                raise bad(f"DumpType {kind} is not one of {', '.join(f'{k} ({v})' for k, v in DUMP_TYPES.items())}")
            if _u32(head, 0x348 + 0x34) != _u32(head, 0x348 + 0x118):
                raise bad("its CONTEXT record's MxCsr and MxCsr2 differ")
            _table_base(_u64(head, 0x10), f"{name}: its DirectoryTableBase")
            pages, first = _dump_pages(f, head, kind, size, bad)
    except OSError as exc:
        raise DecodeError(f"cannot read {name}: {exc.strerror or exc}") from None
    if first + pages * PAGE > size:
        least = "at least " if kind not in (1,) else ""  # a bitmap or range list is counted only this far
        raise DecodeError(f"{name} is cut short: its {DUMP_TYPES[kind]} header lists {least}{pages} pages from byte "
                          f"{first:#x}, {first + pages * PAGE} bytes, but the file has {size}")
    return DUMP_TYPES[kind], pages


def _chunks(f, at: int, length: int):
    """``length`` bytes of ``f`` from ``at``, a chunk at a time (the caller checked they are in the file)."""
    f.seek(at)
    while length > 0:
        data = f.read(min(length, _CHUNK))
        if not data:
            return
        length -= len(data)
        yield data


def _dump_pages(f, head, kind, size, bad) -> tuple:
    """(pages, file offset of the first) the header of a dump of ``kind`` declares; a count is given up on as
    soon as it passes what the file can hold (the caller then says it is cut short)."""
    header_at = {0x2000: "a BMP_HEADER64 (a bitmap dump's)", 0x40: "an RDMP_HEADER64 (a kernel dump's)"}
    if kind == 1:  # runs of physical pages, one after another from 0x2000
        marker = _u32(head, 0x2000)
        if (marker in _BMP_SIGNATURES and _u32(head, 0x2004) == _DUMP) or \
                (marker == _RDMP_MARKER and _u32(head, 0x2004) == _RDMP_SIGNATURE):
            held = header_at[0x40 if marker == _RDMP_MARKER else 0x2000]
            raise bad(f"DumpType is 1 (FullDump), whose pages start at byte 0x2000, but byte 0x2000 holds {held}: "
                      f"the header disagrees with itself")
        runs, listed = _u32(head, 0x88), _u64(head, 0x90)
        if runs == _PAGE_PATTERN or listed == 0x4547415045474150 or runs > _MAX_RUNS:
            raise bad(f"PhysicalMemoryBlock.NumberOfRuns is {runs:#x} (valid 0..{_MAX_RUNS})")
        listed = [(_u64(head, 0x98 + 16 * i), _u64(head, 0xA0 + 16 * i)) for i in range(runs)]
        for i, (base, count) in enumerate(listed):
            if (base + count) * PAGE > _ADDRESS_END:
                raise bad(f"run {i} (BasePage {base:#x}, PageCount {count:#x}) runs past 64-bit physical memory")
        pages = sum(count for _base, count in listed)
        if _HEADER_SIZE + pages * PAGE <= size:  # else the caller says the file is cut short
            for i, (base, count) in enumerate(listed):
                for j, (b, c) in enumerate(listed[:i]):
                    if count and c and base < b + c and b < base + count:
                        raise bad(f"run {i} (BasePage {base:#x}, PageCount {count:#x}) overlaps run {j} (BasePage "
                                  f"{b:#x}, PageCount {c:#x}): a page would have two copies")
        return pages, _HEADER_SIZE
    if kind in (5, 6):  # a bitmap of physical pages; the present ones follow FirstPage in order
        sig, valid, first, bits = _u32(head, 0x2000), _u32(head, 0x2004), _u64(head, 0x2020), _u64(head, 0x2030)
        if sig not in _BMP_SIGNATURES or valid != _DUMP:
            raise bad("its BMP_HEADER64 signature is not SDMP/FDMP + DUMP")
        if _HEADER_SIZE + 0x38 + bits // 8 > size:
            raise bad(f"BMP_HEADER64.Pages is {bits:#x}, a bitmap of {bits // 8} bytes, past the file's {size}")
        room = max(0, size - first) // PAGE + 1  # one page more than the file holds from FirstPage: cut short
        pages = 0
        for chunk in _chunks(f, _HEADER_SIZE + 0x38, bits // 8):
            pages += _ones(int.from_bytes(chunk, "little"))
            if pages >= room:
                break
        return pages, first
    sig = (_u32(head, 0x2000), _u32(head, 0x2004), _u32(head, 0x2008))
    meta, first = _u64(head, 0x2010), _u64(head, 0x2018)
    if sig != (_RDMP_MARKER, _RDMP_SIGNATURE, _DUMP) or (meta - 0x20) % _ADDRESS_END != (first - 0x2040) % _ADDRESS_END:
        raise bad("its RDMP_HEADER64 is not Marker 0x40, RDMP, DUMP with FirstPageOffset = MetadataSize + 0x2020")
    if meta % 16 or _HEADER_SIZE + 0x30 + meta > size:
        raise bad(f"RDMP_HEADER64.MetadataSize is {meta:#x}: not whole (PFN, count) pairs inside the file's "
                  f"{size} bytes")
    total = _u64(head, 0x2028) if kind == 10 else None  # a complete dump stops at TotalNumberOfPages
    room = max(0, size - first) // PAGE + 1
    pages, end = 0, 0
    for chunk in _chunks(f, _HEADER_SIZE + 0x30, meta):
        for pfn, count in struct.iter_unpack("<QQ", chunk):
            if (total is not None and pages >= total) or pfn == 0:
                return pages, first
            if (pfn + count) * PAGE > _ADDRESS_END:
                raise bad(f"the range at PFN {pfn:#x} of {count:#x} pages runs past 64-bit physical memory")
            if count and pfn < end:
                raise bad(f"the range at PFN {pfn:#x} of {count:#x} pages starts before the end of the one before "
                          f"it (PFN {end:#x}): the ranges must rise, or a page would have two copies")
            pages += count
            end = max(end, pfn + count)
            if pages >= room:
                return pages, first
    return pages, first


class KernelDump:
    """A Windows kernel crash dump of an x64 machine (full, kernel or bitmap), read by virtual address.

    kdmp-parser (the ``dump`` extra) finds the dump's physical pages; virtual addresses are translated
    here through the dump's 4-level page tables (large and huge pages included), because kdmp-parser 0.7.4
    prints "... address translation failed!" on standard output for every unmapped address, which would mix
    into the command's output.  The walk is the processor's: an address that is not canonical is mapped by
    nothing, an entry's frame is bits 12-51 (a large page's from bit 21 or 30: its bit 12 is PAT), and an
    entry that sets reserved bits maps nothing.  A dump of another machine (ARM64, i386) is refused.
    ``directory_table_base`` defaults to the header's (the kernel's); give a process's to read its user space.
    A read stops at the first page it cannot read, and never returns more bytes than the dump holds.
    """

    def __init__(self, path, directory_table_base=None):
        self.origin = os.fsdecode(path_argument(path, "KernelDump: path"))
        self.type, self.pages = check_dump_file(path)
        try:
            import kdmp_parser
        except ImportError:
            from ._numpy import install_hint

            raise DecodeError(f"reading a crash dump needs the kdmp-parser package: {install_hint('dump')}") from None
        try:
            self._parser = kdmp_parser.KernelDumpParser(os.fsdecode(path))
        except (RuntimeError, ValueError, TypeError) as exc:
            raise DecodeError(f"kdmp-parser cannot read {self.origin}: {exc}") from None
        if directory_table_base is None:
            value, what = self._parser.directory_table_base, f"{self.origin}: its DirectoryTableBase"
        else:
            value, what = parse_address(directory_table_base, "directory_table_base"), "directory_table_base"
        self.directory_table_base = _table_base(value, what)
        self._tables: dict = {}  # physical page -> bytes, for page-table pages
        self._mapped: dict = {}  # virtual page -> (physical page or None, why not)
        if self._parser.read_physical_page(self.directory_table_base) is None:
            raise DecodeError(f"{what} is {value:#x}, the page-map table at physical {self.directory_table_base:#x}, "
                              f"a page {self.origin} does not hold: no address can be translated (is it another "
                              f"dump's table base?)")

    def _entry(self, table: int, index: int):
        page = self._tables.get(table)
        if page is None:
            if len(self._tables) >= 512:
                self._tables.clear()
            raw = self._parser.read_physical_page(table)
            page = self._tables[table] = None if raw is None else bytes(raw)
        return None if page is None else _u64(page, index * 8)

    def translate(self, address: int) -> tuple:
        """(physical address or None, why not) of a virtual address."""
        return self._translate(_address(address, "KernelDump.translate: address"))

    def _translate(self, va: int) -> tuple:
        if (va >> 47) not in (0, 0x1FFFF):
            return None, "it is not a canonical x64 address (bits 48-63 must all equal bit 47), so nothing maps it"
        table = self.directory_table_base
        for level, shift, large in (("PML4E", 39, 0), ("PDPTE", 30, 1 << 30), ("PDE", 21, 1 << 21), ("PTE", 12, 0)):
            entry = self._entry(table, (va >> shift) & 0x1FF)
            if entry is None:
                return None, f"its {level} lies in physical page {table:#x}, which the dump does not hold"
            if not entry & 1:
                return None, f"it is not mapped (its {level} is not present)"
            if level == "PTE":
                return (entry & _FRAME) + (va & 0xFFF), ""
            if entry >> 7 & 1:  # PS: a large page; reserved in a PML4E
                reserved = (large - 1) & ~0x1FFF if large else 1 << 7
                if entry & reserved:
                    return None, (f"its {level} {entry:#x} sets reserved bits ({entry & reserved:#x}), so the "
                                  f"processor maps nothing there")
                return (entry & _FRAME & ~(large - 1)) + (va & (large - 1)), ""
            table = entry & _FRAME
        raise AssertionError("unreachable")

    def _page(self, page: int):
        hit = self._mapped.get(page)
        if hit is None:
            if len(self._mapped) >= 4096:
                self._mapped.clear()
            physical, why = self._translate(page)
            if physical is not None and self._parser.read_physical_page(physical) is None:
                held = " (a kernel memory dump holds kernel pages only)" if self.type == "KernelMemoryDump" else ""
                physical, why = None, f"it maps to physical {physical:#x}, a page the dump does not hold{held}"
            hit = self._mapped[page] = (physical, why)
        return hit

    def read(self, address: int, size: int) -> bytes:
        address, size = _check_read(address, size)
        out = bytearray()
        at, end, held = address, address + size, self.pages * PAGE
        while at < end:
            page = at & ~(PAGE - 1)
            stop = min(end, page + PAGE)
            physical, why = self._page(page)
            if physical is None:
                raise gap_error(self.origin, address, size, [(at, stop)],
                                f"{why} (page tables at DirectoryTableBase {self.directory_table_base:#x}); the read "
                                f"stopped at this first missing page")
            if len(out) + stop - at > held:
                raise MemoryReadError(f"read: {size} bytes at {windbg_address(address)} are more than the {held} bytes "
                                      f"{self.origin} holds: its pages would repeat; the size is wrong",
                                      address=address, size=size)
            raw = self._parser.read_physical_page(physical)
            out += raw[at - page:stop - page]
            at = stop
        return bytes(out)

    def __repr__(self) -> str:
        return f"<KernelDump {self.origin}: {self.type}, {self.pages} pages>"


# ------------------------------------------------------------------ choosing the adapter
def as_memory(source, base=None, origin: str | None = None) -> "AddressSpace":
    """The memory behind ``source``: an object with ``read`` is used as it is (wrapped in ``ReadObject``
    unless it is one of this module's); bytes or a list of ints need ``base``, the address of their
    first byte."""
    origin = text_argument(origin, "origin")
    if isinstance(source, (Ranges, ReadObject, ImageFile, KernelDump)):  # WinDbgLog is a Ranges
        return source
    if isinstance(source, (bytes, bytearray, memoryview, list, tuple)):
        if base is None:
            raise InvalidArgument("bytes or a byte list are memory at an address: give base=, the address of "
                                  "their first byte")
        return Ranges.of(source, base, origin)
    if isinstance(source, io.IOBase):
        raise InvalidArgument("an open file is not memory at addresses: read a raw image with ImageFile(path, base)")
    if isinstance(source, (str, os.PathLike)):
        raise InvalidArgument(f"{source!r} is a name, not memory: read a raw image with ImageFile(path, base) "
                              f"or a crash dump with KernelDump(path)")
    if callable(getattr(source, "read", None)):
        return ReadObject(source, origin)
    raise InvalidArgument(f"memory is an object with read(address, size), bytes or a list of ints at a base, "
                          f"not {type(source).__name__}")


__all__ = ["AddressSpace", "Ranges", "WinDbgLog", "ReadObject", "ImageFile", "KernelDump", "as_memory", "parse_address",
           "db_command", "UnreadableMemory", "MemoryGap", "MemoryReadError", "MemoryConflict"]
