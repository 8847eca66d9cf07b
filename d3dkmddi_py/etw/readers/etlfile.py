"""The .etl container as Windows writes it: buffers (compressed ones too), the event-header kinds, and
the log-file header.  Facts from the public headers (evntcons.h, evntrace.h, ntwmi.h as published)
and checked against the real files in the tests; nothing here reads a payload's meaning.

An .etl file is a run of buffers.  Each starts with a 0x48-byte WMI_BUFFER_HEADER: BufferSize (its
length in the file), SavedOffset (for a compressed buffer, the size it decompresses to, header
included), Offset (where its events end, header included), the processor that filled it, flags and a
type.  Events follow the header, each aligned to 8 bytes; the first buffer's first event is the
log-file header, whose BufferSize and NumberOfProcessors bound every buffer after it.

Buffers are read one at a time.  Each processor fills its own buffers, so events are in time order
within one processor's buffers, not across them: ``ordered`` merges the processors' buffers by time
(a seekable file is read once to index its buffers, standard input is first copied to a temporary
file), holding one buffer per processor, at most HELD_BYTES of them.
"""
from __future__ import annotations

import heapq
import io
import shutil
import struct
import tempfile
import uuid
from array import array
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ...errors import EtwInputError
from ...pipeline.source import MAX_UNSIZED_BYTES
from ..model.times import UNIX_EPOCH_FILETIME, filetime_ns
from .xpress import XpressError, decompress
from ...wording import plural


class Layout:
    """One fixed header of the format, stated once: its fields' names, offsets and one struct.  The
    event-by-event reader unpacks it; the column-wise readers (``etlcount``, ``etlcolumns``) read the
    same fields at ``offset[name]`` of many events at once."""

    __slots__ = ("name", "length", "struct", "offset", "width", "time", "event_id", "provider")

    def __init__(self, name: str, length: int, fields: tuple, *, time: str | None = None,
                 event_id: str | None = None, provider: str | None = None):
        """``time``, ``event_id``, ``provider``: which field holds the event's raw timestamp, its id
        and its provider GUID (None: the kind has none)."""
        self.name, self.length, self.time, self.event_id, self.provider = name, length, time, event_id, provider
        self.struct = struct.Struct("<" + "".join(code for _field, code in fields))
        self.offset, self.width, at = {}, {}, 0
        for field, code in fields:
            self.offset[field], self.width[field] = at, struct.calcsize("<" + code)
            at += self.width[field]


# WMI_BUFFER_HEADER (0x48 bytes; 16 bytes of ReferenceTime / padding follow BufferType)
BUFFER = Layout("WMI_BUFFER_HEADER", 0x48, (
    ("BufferSize", "I"), ("SavedOffset", "I"), ("CurrentOffset", "I"), ("ReferenceCount", "i"), ("TimeStamp", "q"),
    ("SequenceNumber", "q"), ("ClockAndFrequency", "Q"), ("ProcessorNumber", "H"), ("LoggerId", "H"),
    ("State", "I"), ("Offset", "I"), ("BufferFlag", "H"), ("BufferType", "H")))
BUFFER_HEADER = BUFFER.length
FLAG_EVENTS_LOST, FLAG_BUFFER_LOST, FLAG_PROC_INDEX, FLAG_COMPRESSED = 0x2, 0x4, 0x20, 0x40
BUFFER_TYPE_HEADER = 4
LARGEST_BUFFER = 1 << 24  # an ETW buffer is at most 16 MB (BufferSize is at most 16384 KB); a larger one is damage
HELD_BYTES = 256 << 20  # time order holds one buffer per processor at once: at most this much (documented)
PROCESSOR_BYTES = 4 << 10  # what a processor's place in the merge costs besides its buffer (its reader, its event)

# The event-header kinds (ntwmi.h, evntcons.h, evntrace.h), to their fixed length.  The classic
# kernel headers carry a HookId (group << 8 | type) where the others carry a provider.
_SYSTEM_FIELDS = (("Version", "H"), ("HeaderType", "B"), ("MarkerFlags", "B"), ("Size", "H"), ("HookId", "H"),
                  ("ThreadId", "I"), ("ProcessId", "I"), ("SystemTime", "q"), ("KernelTime", "I"), ("UserTime", "I"))
SYSTEM_HEADER = Layout("system", 32, _SYSTEM_FIELDS, time="SystemTime", event_id="HookId")
COMPACT_HEADER = Layout("compact system", 24, _SYSTEM_FIELDS[:-2], time="SystemTime", event_id="HookId")  # no times
PERFINFO_HEADER = Layout("perfinfo", 16, (
    ("Version", "H"), ("HeaderType", "B"), ("MarkerFlags", "B"), ("Size", "H"), ("HookId", "H"),
    ("SystemTime", "q")), time="SystemTime", event_id="HookId")
FULL_HEADER = Layout("full", 48, (  # EVENT_TRACE_HEADER
    ("Size", "H"), ("HeaderType", "B"), ("MarkerFlags", "B"), ("Type", "B"), ("Level", "B"), ("Version", "H"),
    ("ThreadId", "I"), ("ProcessId", "I"), ("TimeStamp", "q"), ("Guid", "16s"), ("KernelTime", "I"),
    ("UserTime", "I")), time="TimeStamp", event_id="Type", provider="Guid")
INSTANCE_HEADER = Layout("instance", 56, (  # EVENT_INSTANCE_HEADER: a registration handle, not a GUID
    ("Size", "H"), ("HeaderType", "B"), ("MarkerFlags", "B"), ("Type", "B"), ("Level", "B"), ("Version", "H"),
    ("ThreadId", "I"), ("ProcessId", "I"), ("TimeStamp", "q"), ("RegHandle", "Q"), ("InstanceId", "I"),
    ("ParentInstanceId", "I"), ("KernelTime", "I"), ("UserTime", "I"), ("ParentRegHandle", "Q")), time="TimeStamp",
    event_id="Type")
EVENT_HEADER = Layout("EVENT_HEADER", 80, (
    ("Size", "H"), ("HeaderType", "B"), ("MarkerFlags", "B"), ("Flags", "H"), ("EventProperty", "H"), ("ThreadId", "I"),
    ("ProcessId", "I"), ("TimeStamp", "q"), ("ProviderId", "16s"), ("Id", "H"), ("Version", "B"), ("Channel", "B"),
    ("Level", "B"), ("Opcode", "B"), ("Task", "H"), ("Keyword", "Q"), ("KernelTime", "I"), ("UserTime", "I"),
    ("ActivityId", "16s")), time="TimeStamp", event_id="Id", provider="ProviderId")
MESSAGE_HEADER = Layout("TraceMessage", 8, (  # its marker's low word is its size; no type byte
    ("Size", "H"), ("Reserved", "B"), ("MarkerFlags", "B"), ("MessageNumber", "H"), ("MessageFlags", "H")))
EXTENDED_ITEM = Layout("EVENT_HEADER_EXTENDED_DATA_ITEM", 8, (
    ("Reserved1", "H"), ("ExtType", "H"), ("Linkage", "H"), ("DataSize", "H")))

# The type byte of an event's marker (TRACE_HEADER_TYPE_*, ntwmi.h), and its header.
SYSTEM32, SYSTEM64, COMPACT32, COMPACT64 = 0x01, 0x02, 0x03, 0x04
FULL32, INSTANCE32, PERFINFO32, PERFINFO64 = 0x0A, 0x0B, 0x10, 0x11
EVENT32, EVENT64, FULL64, INSTANCE64 = 0x12, 0x13, 0x14, 0x15
MESSAGE = 0x100  # a TraceMessage (WPP) record: its marker has no type byte, this stands for it
HEADERS = {SYSTEM32: SYSTEM_HEADER, SYSTEM64: SYSTEM_HEADER, COMPACT32: COMPACT_HEADER, COMPACT64: COMPACT_HEADER,
           PERFINFO32: PERFINFO_HEADER, PERFINFO64: PERFINFO_HEADER, FULL32: FULL_HEADER, FULL64: FULL_HEADER,
           INSTANCE32: INSTANCE_HEADER, INSTANCE64: INSTANCE_HEADER, EVENT32: EVENT_HEADER, EVENT64: EVENT_HEADER,
           MESSAGE: MESSAGE_HEADER}
# Whose size is where: the system, compact and perfinfo headers keep it in their second word.
SIZE_IN_SECOND_WORD = frozenset(k for k, h in HEADERS.items() if h.offset["Size"] == 4)
# Each kind's fixed header length: an event shorter than its header is damage.
HEADER_LENGTH = {k: h.length for k, h in HEADERS.items()}
KIND_NAMES = {k: h.name for k, h in HEADERS.items()}
CLASSIC_KERNEL = frozenset(k for k, h in HEADERS.items() if "HookId" in h.offset)
EVENT_HEADERS = frozenset((EVENT32, EVENT64))
_TRACE_HEADER_FLAG, _EVENT_TRACE_FLAG, _TRACE_MESSAGE_FLAG = 0x80, 0x40, 0x10  # the marker's top byte
_PADDING = 0xFFFFFFFF  # a marker of all ones: the rest of the buffer is unused

# EVENT_HEADER flags (evntcons.h)
EXTENDED_INFO, HEADER_32_BIT, HEADER_64_BIT = 0x01, 0x20, 0x40
EXT_TYPE_PROV_TRAITS = 0x000C  # a TraceLogging provider's traits: its name first

# The kernel logger's provider: classic kernel events (system, compact and perfinfo headers) carry a
# HookId (group << 8 | type) in place of a provider GUID, and are counted under this GUID.
KERNEL_LOGGER_GUID = "9e814aad-3204-11d2-9a82-006008a86939"

# TRACE_LOGFILE_HEADER, the log-file header event's data: the part before its two pointers
LOGFILE = Layout("TRACE_LOGFILE_HEADER", 56, (  # to its two name pointers, of the writer's width
    ("BufferSize", "I"), ("Version", "I"), ("ProviderVersion", "I"), ("NumberOfProcessors", "I"), ("EndTime", "q"),
    ("TimerResolution", "I"), ("MaximumFileSize", "I"), ("LogFileMode", "I"), ("BuffersWritten", "I"),
    ("StartBuffers", "I"), ("PointerSize", "I"), ("EventsLost", "I"), ("CpuSpeedInMHz", "I")))
LOGFILE_TAIL = Layout("TRACE_LOGFILE_HEADER after its TIME_ZONE_INFORMATION", 32, (
    ("BootTime", "q"), ("PerfFreq", "q"), ("StartTime", "q"), ("ReservedFlags", "I"), ("BuffersLost", "I")))
WIDE_FACTS = ("perf_freq",)  # the header's 64-bit facts kept as numbers: "0x..." in JSON (jsonvalue.wide_text)
TIME_ZONE = 172  # TIME_ZONE_INFORMATION, after the pointers; LOGFILE_TAIL follows at the next 8 bytes


def logfile_tail_at(fixed_at: int, pointer_size: int) -> int:
    """Where LOGFILE_TAIL starts, for a TRACE_LOGFILE_HEADER at ``fixed_at`` of a buffer (8-aligned)."""
    return (fixed_at + LOGFILE.length + 2 * pointer_size + TIME_ZONE + 7) & ~7


_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=timezone.utc)
_LAST_FILETIME = 2_650_467_743_990_000_000  # 9999-12-31T23:59:59 in 100 ns since 1601
_INT64 = 1 << 63
CLOCKS = {1: "QPC", 2: "system time", 3: "CPU cycle counter"}

_MARK = struct.Struct("<IH")  # an event's first word, and the next half-word (the size of some kinds)
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")


class Buffer:
    """One buffer: where it is in the file, who filled it, and its events' bytes (decompressed).

    ``data`` starts at the buffer's first byte (the header is kept, so event offsets are the
    buffer's own); ``end`` is where its events end.
    """

    __slots__ = ("index", "file_offset", "size", "processor", "flags", "type", "timestamp", "data", "end")

    def __init__(self, index, file_offset, size, processor, flags, type_, timestamp, data, end):
        self.index, self.file_offset, self.size, self.processor = index, file_offset, size, processor
        self.flags, self.type, self.timestamp, self.data, self.end = flags, type_, timestamp, data, end

    def where(self, offset: int | None = None) -> str:
        at = "" if offset is None else f", byte {offset} of it (file offset {self.file_offset + offset})" \
            if not self.flags & FLAG_COMPRESSED else f", byte {offset} of it decompressed"
        return f"buffer {self.index} (file offset {self.file_offset}{at})"


class Record:
    """One event's header facts, whatever its header kind.

    ``provider`` is the GUID as lowercase text without braces (the kernel logger's for classic kernel
    events, None where the header carries none); ``event_id`` the EVENT_DESCRIPTOR Id, the classic
    event's type, or the kernel event's HookId.  ``payload`` and ``payload_end`` are offsets into
    ``buffer.data``.  ``number`` is set by the reader that orders the events.
    """

    __slots__ = ("kind", "offset", "size", "timestamp", "process_id", "thread_id", "provider", "event_id",
                 "version", "opcode", "level", "flags", "payload", "buffer", "number", "traits")

    def __init__(self, kind, offset, size, timestamp, process_id, thread_id, provider, event_id, version, opcode,
                 level, flags, payload, buffer, traits=None):
        self.kind, self.offset, self.size, self.timestamp = kind, offset, size, timestamp
        self.process_id, self.thread_id, self.provider, self.event_id = process_id, thread_id, provider, event_id
        self.version, self.opcode, self.level, self.flags = version, opcode, level, flags
        self.payload, self.buffer, self.number, self.traits = payload, buffer, 0, traits

    @property
    def payload_end(self) -> int:
        return self.offset + self.size

    @property
    def processor(self) -> int:
        return self.buffer.processor

    def payload_bytes(self) -> bytes:
        return bytes(self.buffer.data[self.payload:self.offset + self.size])

    @property
    def pointer_size(self) -> int:
        """4 or 8: from an EVENT_HEADER's flags (the writing process's width), else from the header kind."""
        if self.kind in EVENT_HEADERS:
            if self.flags & HEADER_32_BIT:
                return 4
            if self.flags & HEADER_64_BIT:
                return 8
            return 4 if self.kind == EVENT32 else 8
        return 4 if self.kind in (SYSTEM32, COMPACT32, PERFINFO32, FULL32, INSTANCE32) else 8


def _error(name: str, where: str, what: str) -> EtwInputError:
    return EtwInputError(f"{name}: {where}: {what}")


# ------------------------------------------------------------------ buffers
class _Reader:
    """Buffers of a binary stream, in file order, one in memory at a time."""

    def __init__(self, stream, name: str, declared: LogHeader | None = None):
        self.stream, self.name = stream, name
        self.declared = declared  # the log-file header, once read: what every later buffer is held to
        self.position = 0
        self.index = 0

    def _read(self, n: int) -> bytes:
        try:
            return self.stream.read(n)
        except OSError as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc.strerror or exc}") from None

    def next_buffer(self, into: bytearray | None = None):
        """The next buffer, or None at the end of the file.  With ``into``, its bytes are appended
        there (then padded to 8) and its ``data`` is None."""
        at = self.position
        head = self._read_header(at)
        if head is None:
            return None
        rest = self._read_rest(head, at)
        self.position = at + len(head) + len(rest)
        buffer = parse_buffer(head, rest, self.index, at, self.name, into)
        self.index += 1
        return buffer

    def _read_header(self, at: int):
        """The next buffer's 72-byte header, or None at the end of the file."""
        head = self._read(BUFFER_HEADER)
        if not head:
            return None
        if len(head) < BUFFER_HEADER:
            raise _error(self.name, f"buffer {self.index} (file offset {at})",
                         f"the file ends {plural(len(head), 'byte')} into the buffer's 72-byte header (truncated)")
        return head

    def _read_rest(self, head: bytes, at: int) -> bytes:
        size = check_header(head, self.index, at, self.name, self.declared)
        want = size - BUFFER_HEADER
        rest = self._read(want)
        while len(rest) < want:
            more = self._read(want - len(rest))
            if not more:
                raise _error(self.name, f"buffer {self.index} (file offset {at})",
                             f"its BufferSize is {size} bytes but the file ends {BUFFER_HEADER + len(rest)} bytes into "
                             f"it (truncated, or a BufferSize past the end of the file)")
            rest += more
        return rest

    def skip_buffer(self, origin: int = 0):
        """(index, file offset, processor, bytes once read) of the next buffer, its body not read (the
        index pass), or None at the end.  Seeks past its body."""
        at = self.position
        head = self._read_header(at)
        if head is None:
            return None
        size = check_header(head, self.index, at, self.name, self.declared)
        try:
            self.stream.seek(origin + at + size)
        except (OSError, ValueError) as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc}") from None
        self.position = at + size
        index = self.index
        self.index += 1
        return index, at, _processor(head), held_bytes(head)


_B = BUFFER.offset


def _processor(head: bytes) -> int:
    flags = _U16.unpack_from(head, _B["BufferFlag"])[0]
    context = _U16.unpack_from(head, _B["ProcessorNumber"])[0]
    return context if flags & FLAG_PROC_INDEX else context & 0xFF


def held_bytes(head: bytes) -> int:
    """A buffer's bytes once read: its size, or for a compressed one the size it decompresses to."""
    flags = _U16.unpack_from(head, _B["BufferFlag"])[0]
    return _U32.unpack_from(head, _B["SavedOffset" if flags & FLAG_COMPRESSED else "BufferSize"])[0]


def check_header(head: bytes, index: int, at: int, name: str, declared: LogHeader | None = None) -> int:
    """The buffer's length in the file, once its header is sane and within what the log-file header
    ``declared``: no larger than its BufferSize once read (decompressed), and filled by one of its
    processors."""
    size, saved = _U32.unpack_from(head, _B["BufferSize"])[0], _U32.unpack_from(head, _B["SavedOffset"])[0]
    offset, flags = _U32.unpack_from(head, _B["Offset"])[0], _U16.unpack_from(head, _B["BufferFlag"])[0]
    where = f"buffer {index} (file offset {at})"
    if size < BUFFER_HEADER or size > LARGEST_BUFFER:
        raise _error(name, where, f"BufferSize is {size}, not a buffer (72 bytes to 16 MB); not an .etl file, or "
                                  f"damaged here")
    if flags & FLAG_COMPRESSED and not BUFFER_HEADER <= saved <= LARGEST_BUFFER:
        raise _error(name, where, f"a compressed buffer decompressing to {plural(saved, 'byte')}: damaged")
    held = held_bytes(head)
    if not BUFFER_HEADER <= offset <= held:
        raise _error(name, where, f"its events end at byte {offset} (Offset), outside its {held} bytes"
                                  f"{' decompressed' if flags & FLAG_COMPRESSED else ''}: damaged")
    if declared is not None:
        if held > declared.buffer_size:
            what = f"it decompresses to {held:,} bytes (SavedOffset)" if flags & FLAG_COMPRESSED else \
                f"BufferSize is {size:,}"
            raise _error(name, where, f"{what}, more than the {declared.buffer_size:,} bytes the log-file header gives "
                                      f"every buffer: damaged")
        processor = _processor(head)
        if processor >= declared.processors:
            raise _error(name, where, f"processor {processor} filled it, but the log-file header says the trace has "
                                      f"{plural(declared.processors, 'processor')} (0 to {declared.processors - 1}): damaged")
    return size


def parse_buffer(head: bytes, rest: bytes, index: int, at: int, name: str, into: bytearray | None = None) -> Buffer:
    (size, saved, _current, _refs, timestamp, _sequence, _clock, _context, _logger, _state, offset, flags,
     type_) = BUFFER.struct.unpack_from(head, 0)
    kept = into is None  # its own bytes (``data``), or appended to a run (``into``)
    compressed = flags & FLAG_COMPRESSED
    if kept:
        out = bytearray(head) if compressed else head + rest
    else:
        out, start = into, len(into)
        out += head
        if not compressed:
            out += rest
    if compressed:  # decompressed where it is kept: one copy of the buffer in memory
        try:
            decompress(rest, saved - BUFFER_HEADER, out)
        except XpressError as exc:
            if not kept:
                del out[start:]  # the run keeps the buffers before this one, whole
            raise _error(name, f"buffer {index} (file offset {at})", f"its compressed events do not decompress: "
                                                                       f"{exc}") from None
    if not kept:
        out += bytes(-len(out) & 7)
    data = out if kept else None
    return Buffer(index, at, size, _processor(head), flags, type_, timestamp, data, offset)


# ------------------------------------------------------------------ events of a buffer
def walk(buffer: Buffer, name: str):
    """(kind, offset, size) of each event of a buffer, in order; EtwInputError naming the buffer and
    offset at the first that does not fit."""
    data, end = buffer.data, buffer.end
    p = BUFFER_HEADER
    unpack = _MARK.unpack_from
    while p < end:
        if end - p < 8:
            if data[p:end].strip(b"\xff\x00"):
                raise _error(name, buffer.where(p), f"{plural(end - p, 'byte')} left after the last event, too few for a header")
            return
        marker, second = unpack(data, p)
        if marker == _PADDING:
            return
        top = marker >> 24
        if top & _EVENT_TRACE_FLAG and top & _TRACE_HEADER_FLAG:
            kind = marker >> 16 & 0xFF
            size = second if kind in SIZE_IN_SECOND_WORD else marker & 0xFFFF
            least = HEADER_LENGTH.get(kind)
            if least is None:
                raise _error(name, buffer.where(p), f"an event header of kind 0x{kind:02x}, which this reader does not "
                                                    f"know (it reads {_known_kinds()})")
        elif top & _TRACE_HEADER_FLAG and top & _TRACE_MESSAGE_FLAG:
            kind, size, least = MESSAGE, marker & 0xFFFF, HEADER_LENGTH[MESSAGE]
        else:
            raise _error(name, buffer.where(p), f"0x{marker:08x} is not an event header's marker: damaged, or the "
                                                f"buffer's Offset ({end}) is past its events")
        if size < least:
            raise _error(name, buffer.where(p), f"{_a(KIND_NAMES[kind])} event of {plural(size, 'byte')}, shorter than its "
                                                f"{least}-byte header")
        if p + size > end:
            raise _error(name, buffer.where(p), f"{_a(KIND_NAMES[kind])} event of {plural(size, 'byte')} runs "
                                                f"{plural(p + size - end, 'byte')} past the end of its buffer's events (byte {end})")
        yield kind, p, size
        p += (size + 7) & ~7


def _a(word: str) -> str:
    return ("an " if word[0] in "AEIOUaeiou" else "a ") + word


def _known_kinds() -> str:
    return ", ".join(f"0x{k:02x} {KIND_NAMES[k]}" for k in sorted(HEADER_LENGTH) if k != MESSAGE) + \
        " and TraceMessage"


def record(buffer: Buffer, kind: int, p: int, size: int, name: str, last_time: int = 0) -> Record:
    """The header facts of one event (``walk`` gave its kind, offset and size)."""
    data = buffer.data
    if kind in EVENT_HEADERS:
        (_size, _type, _marker, flags, _prop, tid, pid, ts, guid, event_id, version, _channel, level, opcode, _task,
         *_rest) = EVENT_HEADER.struct.unpack_from(data, p)
        payload = p + EVENT_HEADER.length
        traits = None
        if flags & EXTENDED_INFO:
            payload, traits = _extended(buffer, p, size, name)
        return Record(kind, p, size, ts, pid, tid, str(uuid.UUID(bytes_le=guid)), event_id, version, opcode, level,
                      flags, payload, buffer, traits)
    if kind in (SYSTEM32, SYSTEM64, COMPACT32, COMPACT64):
        version, _t, _m, _size, hook, tid, pid, ts = COMPACT_HEADER.struct.unpack_from(data, p)  # system's start
        return Record(kind, p, size, ts, pid, tid, KERNEL_LOGGER_GUID, hook, version, hook & 0xFF, 0, 0,
                      p + HEADER_LENGTH[kind], buffer)
    if kind in (PERFINFO32, PERFINFO64):
        version, _t, _m, _size, hook, ts = PERFINFO_HEADER.struct.unpack_from(data, p)
        return Record(kind, p, size, ts, None, None, KERNEL_LOGGER_GUID, hook, version, hook & 0xFF, 0, 0,
                      p + PERFINFO_HEADER.length, buffer)
    if kind in (FULL32, FULL64):
        _size, _t, _m, class_type, level, version, tid, pid, ts, guid, *_rest = FULL_HEADER.struct.unpack_from(data, p)
        return Record(kind, p, size, ts, pid, tid, str(uuid.UUID(bytes_le=guid)), class_type, version, class_type,
                      level, 0, p + FULL_HEADER.length, buffer)
    if kind in (INSTANCE32, INSTANCE64):  # the provider is a registration handle, not a GUID
        _size, _t, _m, class_type, level, version, tid, pid, ts, *_rest = INSTANCE_HEADER.struct.unpack_from(data, p)
        return Record(kind, p, size, ts, pid, tid, None, class_type, version, class_type, level, 0,
                      p + INSTANCE_HEADER.length, buffer)
    return _message(buffer, p, size, name, last_time)


TRAITS_NAME = EXTENDED_ITEM.length + 2  # in a traits item: its data's total size (a UINT16), then the name


def _extended(buffer: Buffer, p: int, size: int, name: str):
    """(payload offset, provider name from TraceLogging traits or None) after an event's extended items."""
    data = buffer.data
    q = p + EVENT_HEADER.length
    end = p + size
    traits = None
    while True:
        if q + EXTENDED_ITEM.length > end:
            raise _error(name, buffer.where(q), f"an extended data item runs past the end of its {size}-byte event")
        _reserved, ext_type, linkage, length = EXTENDED_ITEM.struct.unpack_from(data, q)
        if q + EXTENDED_ITEM.length + length > end:
            raise _error(name, buffer.where(q), f"an extended data item of {plural(length, 'byte')} runs past the end of its "
                                                f"{size}-byte event")
        if ext_type == EXT_TYPE_PROV_TRAITS and length > 2:
            name_end = data.find(b"\0", q + TRAITS_NAME, q + EXTENDED_ITEM.length + length)
            if name_end > q + TRAITS_NAME:
                traits = data[q + TRAITS_NAME:name_end].decode("utf-8", "replace")
        q += (EXTENDED_ITEM.length + length + 7) & ~7
        if not linkage & 1:  # the last item's padding may not be there when it ends the event: no payload then
            return min(q, end), traits


def _message(buffer: Buffer, p: int, size: int, name: str, last_time: int) -> Record:
    """A TraceMessage record: its optional items follow in the order of its option flags."""
    data = buffer.data
    number, options = MESSAGE_HEADER.struct.unpack_from(data, p)[3:]
    q = p + MESSAGE_HEADER.length
    guid = None
    timestamp, pid, tid = last_time, None, None
    lengths = ((0x1, 4), (0x2, 16), (0x4, 4), (0x18, 8), (0x20, 8))  # sequence, GUID, component, time, ids
    for bit, length in lengths:
        if not options & bit:
            continue
        if q + length > p + size:
            raise _error(name, buffer.where(p), f"a TraceMessage record of {size} bytes is shorter than its option "
                                                f"flags 0x{options:04x} say")
        if bit == 0x2:
            guid = str(uuid.UUID(bytes_le=bytes(data[q:q + 16])))
        elif bit == 0x18:
            timestamp = _I64.unpack_from(data, q)[0]
        elif bit == 0x20:
            tid, pid = _U32.unpack_from(data, q)[0], _U32.unpack_from(data, q + 4)[0]
        q += length
    return Record(MESSAGE, p, size, timestamp, pid, tid, guid, number, 0, 0, 0, options, q, buffer)


# ------------------------------------------------------------------ the log-file header
class LogHeader:
    """The facts of TRACE_LOGFILE_HEADER, the data of the first buffer's first event."""

    def __init__(self, values: dict, header_time: int):
        self.__dict__.update(values)
        self.header_time = header_time  # the header event's raw timestamp: time 0 of the trace

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def ticks_per_second(self) -> int | None:
        """The clock's rate, or None where the header gives none (a CPU-cycle clock of 0 MHz, a QPC
        frequency of 0 or less): its events then have no time."""
        if self.clock_type == 3:
            return self.cpu_mhz * 1_000_000 or None
        if self.clock_type == 2:
            return 10_000_000
        return self.perf_freq if self.perf_freq > 0 else None

    # The time rule, stated once: a raw event timestamp counts ticks of the header's clock from the
    # header event's, which is StartTime (a FILETIME).  ``nanoseconds`` runs the same rule on an array.
    def filetime(self, timestamp: int) -> int | None:
        """A raw event timestamp as a FILETIME (100 ns since 1601), exactly; None without a clock rate."""
        tps = self.ticks_per_second()
        if tps is None:
            return None
        return self.start_filetime + (timestamp - self.header_time) * 10_000_000 // tps

    def utc(self, timestamp: int) -> str | None:
        """A raw event timestamp as UTC, ISO 8601 with 7 fractional digits (the FILETIME resolution);
        None where it is no date (before 1601, past 9999, or no clock rate)."""
        return filetime_text(self.filetime(timestamp))

    def milliseconds(self, timestamp: int) -> float | None:
        """A raw event timestamp as milliseconds from the trace's start (the header event), to the
        microsecond, halves rounded up (as PerfView prints them); None without a clock rate."""
        tps = self.ticks_per_second()
        if tps is None:
            return None
        ticks = (timestamp - self.header_time) * 2_000_000 // tps
        return (ticks + 1) // 2 / 1000

    def nanoseconds(self, np, timestamps):
        """``times.filetime_ns(filetime(t))`` of each of an int64 array of raw timestamps: an int64 array
        where no step of the rule can overflow 64 bits (checked on the extremes: the rule is monotonic)
        and every time is one, else a list (None where there is no time)."""
        tps = self.ticks_per_second()
        if tps is None:
            return [None] * len(timestamps)
        if len(timestamps) == 0 or not self._fits_int64(int(timestamps.min()), int(timestamps.max()), tps):
            return [filetime_ns(self.filetime(t)) for t in timestamps.tolist()]
        diff = timestamps - self.header_time
        hundred_ns = self.start_filetime + (diff // tps) * 10_000_000 + (diff % tps) * 10_000_000 // tps
        low, high = int(hundred_ns.min()), int(hundred_ns.max())
        if filetime_ns(low) is None or filetime_ns(high) is None:  # no date, or past 64-bit nanoseconds
            return [filetime_ns(v) for v in hundred_ns.tolist()]
        return (hundred_ns - UNIX_EPOCH_FILETIME) * 100

    def _fits_int64(self, low: int, high: int, tps: int) -> bool:
        """Whether every step of ``nanoseconds``' arithmetic stays inside int64 for timestamps in [low, high]."""
        if tps * 10_000_000 >= _INT64:  # (diff % tps) * 10**7
            return False
        for timestamp in (low, high):
            diff = timestamp - self.header_time
            scaled = diff // tps * 10_000_000
            if not all(-_INT64 <= v < _INT64 for v in (diff, scaled, self.start_filetime + scaled,
                                                       self.filetime(timestamp))):
                return False
        return True


def filetime_text(hundred_ns: int | None) -> str | None:
    if hundred_ns is None or hundred_ns <= 0:
        return None
    second = _second_text(hundred_ns // 10_000_000)
    return None if second is None else second + f"{hundred_ns % 10_000_000:07d}Z"


@lru_cache(maxsize=1024)  # events come in time order: the date and second repeat (strftime costs as much as the rest)
def _second_text(seconds: int) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS.`` of a second since 1601, or None past 9999 (a later fraction overflows alike)."""
    try:
        moment = _FILETIME_EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.")


def log_header(buffer: Buffer, name: str) -> LogHeader:
    """The log-file header: the first event of the first buffer, a system event of group 0, type 0."""
    events = walk(buffer, name)
    first = next(events, None)
    if first is None or first[0] not in (SYSTEM32, SYSTEM64):
        raise _error(name, buffer.where(BUFFER_HEADER), "the first event is not the log-file header (a system event): "
                                                         "not an .etl file, or its first buffer is damaged")
    kind, p, size = first
    data = buffer.data
    hook = _U16.unpack_from(data, p + SYSTEM_HEADER.offset["HookId"])[0]
    if hook != 0:
        raise _error(name, buffer.where(p), f"the first event has HookId 0x{hook:04x}, not the log-file header's 0")
    q, end = p + SYSTEM_HEADER.length, p + size
    if end - q < LOGFILE.length:
        raise _error(name, buffer.where(p), f"the log-file header has {plural(end - q, 'byte')} of data, fewer than its fields")
    (buffer_size, version, build, processors, end_time, timer_resolution, max_file_size, mode, buffers_written,
     _start_buffers, pointer_size, events_lost, cpu_mhz) = LOGFILE.struct.unpack_from(data, q)
    if not BUFFER_HEADER <= buffer_size <= LARGEST_BUFFER:
        raise _error(name, buffer.where(p), f"the log-file header's BufferSize is {buffer_size}, not a buffer size (72 "
                                            f"bytes to 16 MB): damaged")
    if processors == 0:
        raise _error(name, buffer.where(p), "the log-file header's NumberOfProcessors is 0: damaged")
    if pointer_size not in (4, 8):
        pointer_size = 4 if kind == SYSTEM32 else 8
    tz_at = q + LOGFILE.length + 2 * pointer_size
    tail_at = logfile_tail_at(q, pointer_size)
    if end - tail_at < LOGFILE_TAIL.length:
        raise _error(name, buffer.where(p), f"the log-file header has {plural(end - q, 'byte')} of data, fewer than its fields")
    boot_time, perf_freq, start_time, clock_type, buffers_lost = LOGFILE_TAIL.struct.unpack_from(data, tail_at)
    bias = struct.unpack_from("<i", data, tz_at)[0]  # TIME_ZONE_INFORMATION.Bias: UTC = local time + bias
    strings = bytes(data[tail_at + LOGFILE_TAIL.length:end])
    logger_name, log_file_name = (_wide_strings(strings) + [None, None])[:2]
    values = {
        "pointer_size": pointer_size, "processors": processors, "buffer_size": buffer_size,
        "start_time": filetime_text(start_time), "end_time": filetime_text(end_time),
        "events_lost": events_lost, "buffers_lost": buffers_lost, "buffers_written": buffers_written,
        "windows_build": build, "log_version": f"{version & 0xFF}.{version >> 8 & 0xFF}",
        "timer_resolution": timer_resolution, "clock": CLOCKS.get(clock_type, f"unknown ({clock_type})"),
        "clock_type": clock_type, "perf_freq": perf_freq, "cpu_mhz": cpu_mhz, "log_file_mode": f"0x{mode:x}",
        "maximum_file_size": max_file_size, "time_zone_bias_minutes": bias, "logger_name": logger_name,
        "log_file_name": log_file_name, "boot_time": filetime_text(boot_time), "start_filetime": start_time,
    }
    return LogHeader(values, _I64.unpack_from(data, p + SYSTEM_HEADER.offset[SYSTEM_HEADER.time])[0])


def _wide_strings(raw: bytes) -> list:
    out = []
    for part in raw[:len(raw) // 2 * 2].decode("utf-16-le", "replace").split("\0")[:2]:
        out.append(part or None)
    return out


# ------------------------------------------------------------------ opening, in file order or in time order
def is_etl(head: bytes) -> bool:
    """Whether the first bytes of an input are an .etl file's: a header buffer whose first event is a
    system event.  Decided from the content, whatever the name."""
    if len(head) < BUFFER_HEADER + 8:
        return False
    marker = _U32.unpack_from(head, BUFFER_HEADER)[0]
    return marker >> 16 in (0xC001, 0xC002) and _U16.unpack_from(head, _B["BufferType"])[0] == BUFFER_TYPE_HEADER \
        and _U32.unpack_from(head, _B["BufferSize"])[0] >= BUFFER_HEADER


class EtlFile:
    """An opened .etl input: its log-file header, then its buffers or its events.

    ``stream``: a binary file object; ``head``: the bytes already read from it to recognise it.  A
    seekable stream is read again from where ``head`` began; any other (standard input, a pipe) is
    read up to MAX_UNSIZED_BYTES, and for ``ordered`` reading first copied to a temporary file
    (``close`` removes it).
    """

    def __init__(self, stream, name: str, head: bytes = b"", *, ordered: bool = False):
        self.name = name
        self._origin = 0
        self._spooled = False
        if _can_seek(stream):
            try:
                self._origin = stream.tell() - len(head)
                stream.seek(self._origin)
            except (OSError, ValueError) as exc:
                raise EtwInputError(f"cannot read {name}: {exc}") from None
        else:
            stream = _Unsized(stream, head, name)
            if ordered:
                stream, self._spooled = _spool(stream, name), True
        self._stream = stream
        try:
            self._reader = _Reader(stream, name)
            first = self._reader.next_buffer()
            if first is None:
                raise EtwInputError(f"{name} is empty: not an .etl file")
            self.header = log_header(first, name)
            check_header(first.data[:BUFFER_HEADER], first.index, first.file_offset, name, self.header)
        except BaseException:
            self.close()
            raise
        self._reader.declared = self.header
        self._first = first
        self.held = 0  # the bytes of one buffer per processor, once ``processor_buffers`` has looked
        self.buffers_seen = 0
        self.events_lost_flags = 0  # buffers flagged ETW_BUFFER_FLAG_EVENTS_LOST

    def _seen(self, buffer: Buffer) -> None:
        self.buffers_seen += 1
        if buffer.flags & FLAG_EVENTS_LOST:
            self.events_lost_flags += 1

    def buffers(self):
        """Every buffer in file order, the header's first."""
        buffer = self._first
        self._first = None
        while buffer is not None:
            self._seen(buffer)
            yield buffer
            buffer = self._reader.next_buffer()

    def runs(self, limit: int):
        """Every buffer in file order, in runs of about ``limit`` bytes read into one bytearray, for
        a reader of many buffers at once: (run, buffers, starts), buffer i's bytes (header and events,
        decompressed) at ``run[starts[i]:]``, each start a multiple of 8, its ``data`` None (the
        header buffer's is kept).  The buffers before one that cannot be read come before its error."""
        first, self._first = self._first, None
        if first is not None:
            self._seen(first)
            yield bytearray(first.data) + bytes(-len(first.data) & 7), [first], [0]
        reader = self._reader
        while True:
            run, buffers, starts = bytearray(), [], []
            try:
                while len(run) < limit:
                    start = len(run)
                    buffer = reader.next_buffer(run)
                    if buffer is None:
                        break
                    self._seen(buffer)
                    buffers.append(buffer)
                    starts.append(start)
            except EtwInputError:
                if buffers:
                    yield run, buffers, starts
                raise
            if not buffers:
                return
            yield run, buffers, starts

    def records(self):
        """Every event's Record in file order, numbered from 1."""
        name = self.name
        number = 0
        for buffer in self.buffers():
            last = 0
            for kind, p, size in walk(buffer, name):
                rec = record(buffer, kind, p, size, name, last)
                last = rec.timestamp
                number += 1
                rec.number = number
                yield rec

    def ordered(self):
        """Every event's Record in time order (file order among equal times), numbered from 1."""
        streams = [self._processor_records(offsets) for offsets in self.processor_buffers().values()]
        number = 0
        for _time, _buffer, _offset, rec in heapq.merge(*streams):
            number += 1
            rec.number = number
            yield rec

    def processor_buffers(self) -> dict:
        """processor -> its buffers' (index, file offset) in file order, as a flat array('q') (see
        ``pairs``), for ``ordered`` reading.  A file whose processors' largest buffers add up to more
        than HELD_BYTES (the merge holds one buffer per processor) is refused."""
        if not _can_seek(self._stream):
            raise EtwInputError(f"{self.name}: ordered reading needs a seekable input (open it with ordered=True)")
        starts, largest = self._index()
        held = sum(largest.values()) + PROCESSOR_BYTES * len(largest)
        if held > HELD_BYTES:
            raise EtwInputError(f"{self.name}: its {len(largest)} processors' largest buffers add up to {held:,} bytes "
                                f"(decompressed, with {PROCESSOR_BYTES >> 10} KB a processor), more than the "
                                f"{HELD_BYTES >> 20} MiB held at once to put its events in time order (one buffer per "
                                f"processor); --summary reads it in file order")
        self.held = held
        return starts

    def buffer_reader(self):
        """A reader of single buffers, placed by ``seek_buffer``."""
        return _Reader(self._stream, self.name, self.header)

    def seek_buffer(self, reader, index: int, at: int) -> None:
        try:
            self._stream.seek(self._origin + at)
        except (OSError, ValueError) as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc}") from None
        reader.index, reader.position = index, at

    def _index(self) -> tuple:
        """(processor -> its buffers' index and file offset, flat; processor -> its largest buffer),
        the header buffer too: 16 bytes a buffer."""
        self._first = None
        self._stream.seek(self._origin)
        reader = _Reader(self._stream, self.name, self.header)
        starts: dict = {}
        largest: dict = {}
        while True:
            seen = reader.skip_buffer(self._origin)
            if seen is None:
                return starts, largest
            index, at, processor, held = seen
            where = starts.get(processor)
            if where is None:
                where = starts[processor] = array("q")
                largest[processor] = 0
            where.append(index)
            where.append(at)
            largest[processor] = max(largest[processor], held)

    def _processor_records(self, offsets):
        name = self.name
        reader = self.buffer_reader()
        for index, at in pairs(offsets):
            self.seek_buffer(reader, index, at)
            buffer = reader.next_buffer()
            self._seen(buffer)
            last = 0
            for kind, p, size in walk(buffer, name):
                rec = record(buffer, kind, p, size, name, last)
                last = rec.timestamp
                yield rec.timestamp, at, p, rec

    def close(self) -> None:
        """Close the temporary copy of a pipe, if one was made (the caller's stream stays open)."""
        if self._spooled:
            self._stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()


def pairs(flat):
    """(index, file offset) of each buffer of a ``processor_buffers`` array, without copying it."""
    values = iter(flat)
    return zip(values, values)


def _can_seek(stream) -> bool:
    try:
        return bool(stream.seekable())
    except (OSError, ValueError, AttributeError):
        return False


def _spool(stream, name: str):
    """A temporary file holding what ``stream`` gives (up to MAX_UNSIZED_BYTES): disk, not memory,
    for a pipe; closed (and so removed) if that fails."""
    spool = tempfile.TemporaryFile()
    try:
        shutil.copyfileobj(stream, spool, 1 << 20)
        spool.seek(0)
    except OSError as exc:
        spool.close()
        raise EtwInputError(f"cannot read {name}: {exc.strerror or exc}") from None
    except BaseException:
        spool.close()
        raise
    return spool


class _Unsized(io.RawIOBase):
    """A stream without a size (a pipe, standard input), its first bytes already read to recognise
    it: given back whole, up to the limit every unsized input of the package has (MAX_UNSIZED_BYTES);
    past it, EtwInputError (an endless pipe stops)."""

    def __init__(self, stream, head: bytes, name: str):
        super().__init__()
        self.stream, self.head, self.name, self._at, self._given = stream, head, name, 0, 0

    def readable(self):
        return True

    def read(self, n: int = -1) -> bytes:
        if self._at < len(self.head):
            take = self.head[self._at:self._at + n] if n >= 0 else self.head[self._at:]
            self._at += len(take)
            if n < 0 or len(take) < n:
                take += self._more(-1 if n < 0 else n - len(take))
        else:
            take = self._more(n)
        return take

    def _more(self, n: int) -> bytes:
        left = MAX_UNSIZED_BYTES + 1 - self._given
        try:
            more = self.stream.read(left if n < 0 else min(n, left)) or b""
        except OSError as exc:
            raise EtwInputError(f"cannot read {self.name}: {exc.strerror or exc}") from None
        self._given += len(more)
        if self._given > MAX_UNSIZED_BYTES:
            raise EtwInputError(f"{self.name} has no size and gave more than {MAX_UNSIZED_BYTES >> 20} MiB, the limit "
                                f"for pipes, devices and standard input; save it to a file (files are read in "
                                f"buffers with no limit)")
        return more
