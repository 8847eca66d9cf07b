"""Sources: a checked range of records from bytes or a file, read as chunks of whole records."""
from __future__ import annotations

import os
import stat

from .._records import dataclass
from ..errors import DecodeError
from ..layout import TypeLayout
from ..span import check_offset_count, check_range
from ..wording import plural

CHUNK_BYTES = 4 << 20  # input bytes per chunk: small enough to print at once, large enough for NumPy
MAX_UNSIZED_BYTES = 256 << 20  # pipes, devices and standard input hold at most this much (documented)


@dataclass(frozen=True)
class Chunk:
    """``count`` whole records of ``layout``: record ``start`` is at byte ``offset`` of the input."""

    layout: TypeLayout
    start: int
    offset: int
    data: bytes
    address: int | None = None  # the debuggee address of data[0] (WinDbg input), else None

    @property
    def count(self) -> int:
        return len(self.data) // self.layout.size

    def record(self, row: int) -> bytes:
        size = self.layout.size
        return self.data[row * size:(row + 1) * size]


class Records:
    """A checked range of records to read: from bytes in memory or from a file, chunk by chunk.

    Everything is checked when it is made (type, offset, count, size), before the first read.
    ``more`` is how many whole records the input holds past the range (for the "--count all" hint).
    """

    def __init__(self, layout: TypeLayout, *, data: bytes | None = None, path=None, origin: str = "data",
                 offset: int = 0, count=1, address: int | None = None, address_bytes: int | None = None):
        self.layout, self.origin, self.address = layout, origin, address
        self.path, self.data = path, data
        if path is not None:
            self._file = open_input(path, origin)
            try:
                info = os.fstat(self._file.fileno())
                if stat.S_ISREG(info.st_mode):
                    total = info.st_size
                    try:
                        head = self._file.read(4096)
                    except OSError as exc:
                        raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
                    if looks_like_text_dump(head):
                        raise DecodeError(f"{origin} is WinDbg text, not raw bytes; read it with --windbg {origin}")
                else:  # a pipe or a device: read what the range needs (up to the limit), then from memory
                    self.data = read_unsized(self._file, origin, wanted_bytes(layout, offset, count))
                    self._file.close()
                    self._file, self.path = None, None
                    total = len(self.data)
            except BaseException:
                self.close()
                raise
        else:
            self._file = None
            total = len(data)
        self.total = total
        try:
            self.offset, self.count = check_range(layout, total, origin, offset, count, address_bytes=address_bytes)
        except BaseException:
            self.close()
            raise
        self.more = (total - self.offset) // layout.size - self.count

    @classmethod
    def from_memory(cls, layout: TypeLayout, memory, offset: int = 0, count=1) -> "Records":
        """From a ``decoding.Memory`` (bytes with an origin and maybe a debuggee address)."""
        return cls(layout, data=memory.data, origin=memory.origin, offset=offset, count=count,
                   address=memory.address, address_bytes=getattr(memory, "address_bytes", None))

    def chunks(self, records: int | None = None):
        """Consecutive Chunks of at most ``records`` records (default: about CHUNK_BYTES of input each)."""
        size = self.layout.size
        step = records or max(1, CHUNK_BYTES // size)
        try:
            for first in range(0, self.count, step):
                n = min(step, self.count - first)
                at = self.offset + first * size
                yield Chunk(self.layout, first, at, self._read(at, n * size),
                            None if self.address is None else self.address + at)
        finally:
            self.close()

    def _read(self, at: int, length: int) -> bytes:
        if self._file is None:
            return bytes(memoryview(self.data)[at:at + length])
        try:
            self._file.seek(at)
            data = self._file.read(length)
            now = os.fstat(self._file.fileno()).st_size
        except OSError as exc:
            raise DecodeError(f"cannot read {self.origin}: {exc.strerror or exc}") from None
        if len(data) != length or now != self.total:
            raise DecodeError(f"{self.origin} changed size while it was read (it had {plural(self.total, 'byte')}, now "
                              f"{now}); read a copy that nothing is writing to")
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def open_input(path, origin: str):
    """An input file opened for reading, or DecodeError naming it and the reason."""
    from ..decoding import open_input as opened

    return opened(path, origin)


def looks_like_text_dump(head: bytes) -> bool:
    """Whether the first bytes of a file are WinDbg text rather than raw records."""
    from ..decoding import looks_like_windbg, text_of_bytes

    text = text_of_bytes(head)
    return text is not None and looks_like_windbg(text)


DUMP_SIGNATURES = (b"PAGEDU64", b"PAGEDUMP")  # a Windows crash dump's first 8 bytes (64-bit, 32-bit)


def input_kind(head: bytes) -> str:
    """What a file's first bytes are, by content: "windbg" (WinDbg text), "dump" (a Windows crash dump),
    "text" (other text) or "bytes" (raw records or a memory image)."""
    if head[:8] in DUMP_SIGNATURES:
        return "dump"
    from ..decoding import looks_like_windbg, text_of_bytes

    text = text_of_bytes(head)
    if text is None:
        return "bytes"
    return "windbg" if looks_like_windbg(text) else "text"


def flag_hint(head: bytes, path, given: str | None = None) -> str:
    """The one line that names the input flag a file's content needs, or "" when ``given`` (the flag used:
    "file", "windbg", "dump"; None for a VALUE that names a file) is the right one."""
    name = os.fsdecode(path)
    kind = input_kind(head)
    if kind == "dump" and given != "dump":
        return f"{name} is a Windows crash dump, read by address: pass --dump {name} --address ADDRESS"
    if kind == "windbg" and given != "windbg":
        return f"{name} is WinDbg text: pass --windbg {name}"
    if given == "dump" and kind != "dump":
        return (f"{name} is not a Windows crash dump (it does not start with PAGEDU64): for a raw memory image pass "
                f"--file {name} --base ADDRESS")
    if given == "windbg" and kind == "bytes":
        return f"for raw bytes pass --file {name}"
    if given is None:
        return f"it is a file: pass --file {name}" + (" (raw bytes)" if kind == "bytes" else "")
    return ""


class Followed:
    """Every record a follow reached (``follow.Node`` trees), in the order printed, as one-record chunks for
    the sinks: what ``run`` reads for ``validate --follow``.  Each chunk's index and offset are the
    record's place in the array it is an element of."""

    def __init__(self, nodes):
        self.nodes = tuple(nodes)
        self.layout = self.nodes[0].layout
        self.more = 0

    def chunks(self, records: int | None = None):
        for i, node in enumerate(self.nodes):
            yield from _walk(node, i, i * node.layout.size)

    def close(self) -> None:
        pass


def _walk(node, index: int, offset: int):
    yield Chunk(node.layout, index, offset, node.data, node.address)
    for link in node.links:
        for i, item in enumerate(link.items):
            if hasattr(item, "links"):  # a Node: a record (not a value, the bytes, or a Missing)
                yield from _walk(item, i, i * (link.stride or item.layout.size))


def _text_dump_file(path) -> bool:
    """Whether a regular file holds WinDbg text (read whole, as decode(path=) reads it), not raw records."""
    with open_input(path, str(os.fspath(path))) as f:
        try:
            return stat.S_ISREG(os.fstat(f.fileno()).st_mode) and looks_like_text_dump(f.read(4096))
        except OSError:
            return False  # Records reports the read error with its own words


def read_unsized(f, origin: str, want: int | None = None) -> bytes:
    """A pipe or device, in chunks: all of it, or its first ``want`` bytes (all the records asked for
    need), refusing more than MAX_UNSIZED_BYTES (an endless /dev/zero with --count all)."""
    if want is not None and want > MAX_UNSIZED_BYTES:
        raise DecodeError(f"{origin} has no size, and the records asked for end at byte {want:,}, past the "
                          f"{MAX_UNSIZED_BYTES >> 20} MiB that pipes, devices and standard input are read to; "
                          f"save it to a file (files are read in chunks with no limit) or give a smaller "
                          f"--offset or --count")
    parts, total = [], 0
    while want is None or total < want:
        try:
            part = f.read(min(CHUNK_BYTES, MAX_UNSIZED_BYTES + 1 - total,
                              want - total if want is not None else CHUNK_BYTES))
        except OSError as exc:
            raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
        if not part:
            return b"".join(parts)
        parts.append(part)
        total += len(part)
        if total > MAX_UNSIZED_BYTES:
            raise DecodeError(f"{origin} has no size and gave more than {MAX_UNSIZED_BYTES >> 20} MiB, the "
                              f"limit for pipes, devices and standard input; save it to a file (files are read "
                              f"in chunks with no limit) or give a --count")
    return b"".join(parts)


def read_text(f, origin: str) -> tuple:
    """(text, head) of an open input that should be text (a WinDbg log): for a regular file the text a chunk at
    a time (an iterator of str pieces that closes ``f``: files are read with no limit), for a pipe or device
    all of it as one str (up to MAX_UNSIZED_BYTES; ``f`` is closed); text None when the first bytes are not
    text (``head`` names the flag they need).  UTF-8, or UTF-16 with its byte-order mark, as
    ``windbg.text_of_bytes`` reads it."""
    from ..windbg import text_encoding, text_of_bytes

    try:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raw = read_unsized(f, origin)
            f.close()
            return (text_of_bytes(raw) if raw else ""), raw[:4096]
        head = f.read(4096)
    except OSError as exc:
        f.close()
        raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
    except BaseException:
        f.close()
        raise
    found = text_encoding(head) if head else ("utf-8", 0)
    if found is None:
        f.close()
        return None, head
    return _text_pieces(f, origin, head, *found, info.st_size), head


def _text_pieces(f, origin: str, head: bytes, encoding: str, skip: int, size: int):
    """The text of a regular file from its first bytes ``head`` on, CHUNK_BYTES at a time; a character cut by
    the file's end is dropped (as text_of_bytes drops it), a file that changes size while read is refused."""
    import codecs

    decoder = codecs.getincrementaldecoder(encoding)()
    data, done = head[skip:], len(head)
    try:
        while data:
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(data)
            except UnicodeDecodeError as exc:
                at = done - len(data) - pending + exc.start
                raise DecodeError(f"{origin} is not {encoding.upper()} text at byte {at:,} ({exc.reason}); a WinDbg "
                                  f"log is UTF-8, or UTF-16 with a byte-order mark (.logopen /u)") from None
            if text:
                yield text
            try:
                data = f.read(CHUNK_BYTES)
            except OSError as exc:
                raise DecodeError(f"cannot read {origin}: {exc.strerror or exc}") from None
            done += len(data)
        now = os.fstat(f.fileno()).st_size
        if done != size or now != size:
            raise DecodeError(f"{origin} changed size while it was read (it had {plural(size, 'byte')}, now {now:,}); read "
                              f"a copy that nothing is writing to")
    finally:
        f.close()


def wanted_bytes(layout: TypeLayout, offset, count) -> int | None:
    """The bytes an unsized input must give for ``offset`` and ``count`` (None: all of it)."""
    offset, wanted = check_offset_count(offset, count)
    return None if wanted is None else offset + wanted * layout.size
