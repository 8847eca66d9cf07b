"""Write .etl files as Windows lays them out, from a list of events: the tests' twin of a tracerpt
XML trace, and a way to make a DxgKrnl trace on a machine without Windows.

The layout is the one ``etw.etlfile`` reads: a header buffer holding the log-file header (a system
event), then buffers of EVENT_HEADER events, each processor's events in its own buffers.  Buffers can
be written out of time order across processors (as a real logger flushes them) and compressed
(an XPRESS stream of literals only: valid, not small).  ``expanding_bytes`` writes the other
extreme: buffers of a few bytes that decompress to megabytes.
"""
from __future__ import annotations

import struct
import uuid

from ..etw.readers.etlfile import BUFFER, BUFFER_HEADER, BUFFER_TYPE_HEADER, EVENT32, EVENT64, EVENT_HEADER, FLAG_COMPRESSED, \
    FLAG_PROC_INDEX, HEADER_32_BIT, HEADER_64_BIT, LOGFILE, LOGFILE_TAIL, PERFINFO64, PERFINFO_HEADER, SYSTEM64, \
    SYSTEM_HEADER, TIME_ZONE
from ..errors import InvalidArgument, bad_argument, integer_argument, mapping_argument, shown
from ..etw.model.registry import layout_of
from ..etw.model.schema import OPCODES, PROVIDER_GUID
from ..etw.model.templates import IN_TYPES

START_FILETIME = 134_083_065_021_234_567  # 2025-11-22T17:35:02.1234567Z
PERF_FREQ = 10_000_000
HEADER_TICKS = 5_000_000_000  # the header event's timestamp; an event's ticks count from it
# A classic kernel event with a perfinfo header and no payload: 16 bytes, the smallest an event can be
SMALLEST_EVENT = PERFINFO_HEADER.struct.pack(2, PERFINFO64, 0xC0, PERFINFO_HEADER.length, 0x052E, HEADER_TICKS)


class EtlEvent:
    """One event to write: its provider, descriptor, who logged it, when (ticks after the header
    event), on which processor, and its payload bytes."""

    __slots__ = ("provider", "event_id", "version", "opcode", "task", "keyword", "level", "process_id",
                 "thread_id", "ticks", "processor", "payload", "pointer_size")

    def __init__(self, provider: str, event_id: int, version: int, payload: bytes, *, opcode: int = 0, task: int = 0,
                 keyword: int = 0, level: int = 0, process_id: int = 4, thread_id: int = 120, ticks: int = 0,
                 processor: int = 0, pointer_size: int = 8):
        self.provider, self.event_id, self.version, self.payload = provider.strip("{}"), event_id, version, payload
        self.opcode, self.task, self.keyword, self.level = opcode, task, keyword, level
        self.process_id, self.thread_id, self.ticks, self.processor = process_id, thread_id, ticks, processor
        self.pointer_size = pointer_size


def dxgkrnl_payload(event_id: int, version: int, fields: dict, pointer_size: int = 8) -> bytes:
    """A DxgKrnl event's payload: its template's fields (its entry's, else the manifest's) packed in order, as
    ``etw.readers.payload`` reads them: numbers little-endian of their width (a Pointer of ``pointer_size``, a
    Boolean 4 bytes), a GUID's 16 bytes as Windows stores it, a UnicodeString as UTF-16LE and an AnsiString as
    bytes, each ended by a NUL (or of their length), a Binary as it is, a counted array as its values."""
    if pointer_size not in (4, 8) or type(pointer_size) is not int:  # noqa: E721
        raise bad_argument("dxgkrnl_payload: pointer_size", pointer_size, "4 or 8")
    template = layout_of(event_id, version) if isinstance(event_id, int) and isinstance(version, int) else None
    if template is None:
        raise InvalidArgument(f"dxgkrnl_payload: no template for event {shown(event_id, 20)} version "
                              f"{shown(version, 20)}; give an id and version of the manifest or an entry (for an "
                              f"odd payload, give EtlEvent its bytes)")
    where = f"dxgkrnl_payload: event {event_id} version {version}"
    fields = mapping_argument(fields, where + ": fields", "a dict of the template's field -> value")
    for f in template:  # what the reader reads back is what was given: counts and lengths agree with their values
        if f.name not in fields:
            raise InvalidArgument(f"{where}: field {f.name} ({f.in_type}) missing; give every field of the template")
        value = fields[f.name]
        for ref, what in ((f.count, "count"), (f.length, "length")):
            held = _held(f, value, what) if isinstance(ref, str) else None
            if held is not None and fields.get(ref) != held:
                raise InvalidArgument(f"{where}: field {ref} = {shown(fields.get(ref), 20)} is not the {what} of "
                                      f"{f.name} ({held}); make them agree (for an odd payload, give EtlEvent its "
                                      f"bytes)")
    out = bytearray()
    for f in template:
        value = fields[f.name]
        if f.count is not None and not isinstance(value, (list, tuple)):
            raise bad_argument(f"{where}: {f.name}", value, f"a list of {f.in_type} values (a counted array)")
        for item in (value if f.count is not None else (value,)):
            out += _packed(f, item, pointer_size, where)
    if EVENT_HEADER.length + len(out) > 0xFFFF:
        raise InvalidArgument(f"{where}: a payload of {len(out):,} bytes; an event holds at most "
                              f"{0xFFFF - EVENT_HEADER.length:,} after its header")
    return bytes(out)


def _held(f, value, what: str):
    """The count of a counted array's values, or the length of a string or Binary in its units (None: not one)."""
    if what == "count":
        return len(value) if isinstance(value, (list, tuple)) else None
    kind = IN_TYPES[f.in_type].kind
    if f.count is not None or not isinstance(value, (str, bytes, bytearray)):
        return None
    return len(value.encode("utf-16-le", "surrogatepass")) // 2 if kind == "unicode" and isinstance(value, str) \
        else len(value)


def _packed(f, value, pointer_size: int, where: str) -> bytes:
    t = IN_TYPES[f.in_type]
    try:
        if t.kind == "unicode":  # surrogatepass: a test may write an unpaired surrogate on purpose
            return value.encode("utf-16-le", "surrogatepass") + (b"" if f.length is not None else b"\x00\x00")
        if t.kind == "ansi":
            return value.encode("latin-1") + (b"" if f.length is not None else b"\x00")
        if t.kind == "binary":
            if not isinstance(value, (bytes, bytearray)):
                raise TypeError
            return bytes(value)
        if t.kind == "guid":
            return uuid.UUID(value.strip("{}")).bytes_le
        code = {4: "I", 8: "Q"}[pointer_size] if t.kind == "pointer" else t.code
        if t.kind == "float" and not isinstance(value, (int, float)) or \
                t.kind != "float" and not isinstance(value, int):
            raise TypeError
        return struct.pack("<" + code, value)
    except (TypeError, ValueError, AttributeError, UnicodeError, struct.error):
        raise InvalidArgument(f"{where}: field {f.name} = {shown(value, 40)} is not a {f.in_type}"
                              + (f" ({pointer_size}-byte pointers)" if t.kind == "pointer" else "")) from None


def dxgkrnl_event(kind, fields: dict, *, version: int | None = None, pointer_size: int = 8, **where) -> EtlEvent:
    """An EtlEvent of DxgKrnl event ``kind`` (an etw EventKind) with ``fields``."""
    version = kind.version if version is None else version
    return EtlEvent(PROVIDER_GUID, kind.event_id, version, dxgkrnl_payload(kind.event_id, version, fields, pointer_size),
                    opcode=OPCODES[kind.opcode], task=kind.task, keyword=0x8000000000000040, level=0,
                    pointer_size=pointer_size, **where)


def event_bytes(e: EtlEvent, header_ticks: int = HEADER_TICKS) -> bytes:
    """``e`` as a buffer holds it (its EVENT_HEADER and payload, padded to 8 bytes)."""
    flags = HEADER_64_BIT if e.pointer_size == 8 else HEADER_32_BIT
    size = EVENT_HEADER.length + len(e.payload)
    if size > 0xFFFF:
        raise InvalidArgument(f"event_bytes: a payload of {len(e.payload):,} bytes; an event holds at most "
                              f"{0xFFFF - EVENT_HEADER.length:,} after its header")
    head = EVENT_HEADER.struct.pack(size, EVENT64 if e.pointer_size == 8 else EVENT32, 0xC0, flags, 0, e.thread_id,
                                    e.process_id, header_ticks + e.ticks, uuid.UUID(e.provider).bytes_le, e.event_id,
                                    e.version, 0, e.level, e.opcode, e.task, e.keyword, 0, 0, bytes(16))
    return _aligned(head + e.payload)


def _aligned(data: bytes) -> bytes:
    return data + bytes(-len(data) % 8)


def _literals(data: bytes) -> bytes:
    """An XPRESS stream that decompresses to ``data``: flag words of zeros, each before 32 literals."""
    out = bytearray()
    for i in range(0, len(data), 32):
        out += bytes(4) + data[i:i + 32]
    return bytes(out)


def _buffer_header(size: int, end: int, processor: int, flags: int, type_: int = 0,
                   timestamp: int = HEADER_TICKS) -> bytes:
    """A WMI_BUFFER_HEADER of ``size`` bytes in the file whose events end at ``end`` (its SavedOffset
    and Offset; for a compressed buffer, the size it decompresses to)."""
    return BUFFER.struct.pack(size, end, end, 0, timestamp, 0, 0, processor, 0, 0, end, flags, type_) + \
        bytes(BUFFER_HEADER - BUFFER.struct.size)


def _buffer(events: bytes, size: int, processor: int, flags: int, type_: int, timestamp: int, compress: bool) -> bytes:
    saved = BUFFER_HEADER + len(events)
    if compress:
        body = _literals(events)
        return _buffer_header(BUFFER_HEADER + len(body), saved, processor, flags | FLAG_COMPRESSED, type_,
                              timestamp) + body
    return _buffer_header(size, saved, processor, flags, type_, timestamp) + events + b"\xff" * (size - saved)


class Clock:
    """The log-file header's clock: its type (1 QPC, 2 system time, 3 CPU cycles), PerfFreq,
    CpuSpeedInMHz and StartTime (the FILETIME of the header event)."""

    __slots__ = ("clock_type", "perf_freq", "cpu_mhz", "start_filetime")

    def __init__(self, clock_type: int = 1, perf_freq: int = PERF_FREQ, cpu_mhz: int = 3000,
                 start_filetime: int = START_FILETIME):
        self.clock_type, self.perf_freq, self.cpu_mhz, self.start_filetime = clock_type, perf_freq, cpu_mhz, \
            start_filetime


def _log_header(header_ticks: int, processors: int, buffer_size: int, buffers: int, end: int, clock: Clock) -> bytes:
    name, file_name = "d3dkmddi_py", "C:\\traces\\twin.etl"
    data = LOGFILE.struct.pack(buffer_size, 0x0501000A, 22631, processors, end, 156_250, 0, 0, buffers, 1, 8, 0,
                               clock.cpu_mhz)
    data += bytes(16)  # the two name pointers (8 bytes each): numbers the reader never follows
    data += struct.pack("<i", -60) + bytes(TIME_ZONE - 4)  # TIME_ZONE_INFORMATION: Bias -60 (UTC+1), the rest zero
    data = _aligned(data)
    data += LOGFILE_TAIL.struct.pack(START_FILETIME - 36_000_000_000, clock.perf_freq, clock.start_filetime,
                                     clock.clock_type, 0)
    data += (name + "\0" + file_name + "\0").encode("utf-16-le")
    system = SYSTEM_HEADER.struct.pack(2, SYSTEM64, 0xC0, SYSTEM_HEADER.length + len(data), 0, 8, 4, header_ticks, 0, 0)
    return _aligned(system + data)


def etl_bytes(events, *, processors: int = 2, buffer_size: int = 4096, compress: bool = False,
              reverse_processors: bool = True, header_ticks: int = HEADER_TICKS, clock: Clock | None = None,
              end_filetime: int | None = None) -> bytes:
    """An .etl file of ``events`` (EtlEvent), each on its processor (``processor % processors``).

    ``reverse_processors`` writes the higher processors' buffers first, so their events come before
    earlier ones of processor 0 in the file (a reader must merge by time).  ``clock``: the header's
    (default: QPC at 10 MHz, starting at START_FILETIME).  ``end_filetime``: the header's EndTime (default
    START_FILETIME plus the last event's ticks, whatever the clock).
    """
    integer_argument(processors, "etl_bytes: processors", 1, 64)
    integer_argument(buffer_size, "etl_bytes: buffer_size", BUFFER_HEADER + EVENT_HEADER.length, 1 << 24)
    per: dict = {p: [] for p in range(processors)}
    for e in events:
        per[e.processor % processors].append(event_bytes(e, header_ticks))
    room = buffer_size - BUFFER_HEADER
    bodies = []
    for p in (sorted(per, reverse=True) if reverse_processors else sorted(per)):
        current = b""
        for record in per[p]:
            if len(record) > room:
                raise InvalidArgument(f"etl_bytes: an event of {len(record)} bytes does not fit a {buffer_size}-byte "
                                      f"buffer; give a larger buffer_size")
            if len(current) + len(record) > room:
                bodies.append((p, current))
                current = b""
            current += record
        if current:
            bodies.append((p, current))
    last = max((e.ticks for e in events), default=0)
    end = START_FILETIME + last if end_filetime is None else end_filetime
    header = _log_header(header_ticks, processors, buffer_size, len(bodies) + 1, end, clock or Clock())
    out = [_buffer(header, buffer_size, 0, 0x1 | FLAG_PROC_INDEX, BUFFER_TYPE_HEADER, header_ticks, False)]
    for p, body in bodies:
        out.append(_buffer(body, buffer_size, p, FLAG_PROC_INDEX, 0, header_ticks, compress))
    return b"".join(out)


def repeat_stream(unit: bytes, total: int) -> bytes:
    """An XPRESS stream (MS-XCA 2.4) that decompresses to ``unit`` repeated to ``total`` bytes: the
    unit as literals, then one match of the rest (a 32-bit length), so a few bytes more than the unit."""
    if not 0 < len(unit) <= total - 25:
        raise ValueError(f"a unit of {len(unit)} bytes cannot be repeated to {total} bytes by one match")
    out = bytearray()
    literals = unit
    while len(literals) >= 32:  # full flag words of literals
        out += bytes(4) + literals[:32]
        literals = literals[32:]
    flags = 1 << (31 - len(literals))  # the remaining literals' 0 bits, then the match's 1
    token = (len(unit) - 1) << 3 | 7  # the distance, and a length in the extensions: 15, 255, 0, then 32 bits
    return bytes(out) + struct.pack("<I", flags) + literals + struct.pack("<HBBHI", token, 15, 255, 0,
                                                                          total - len(unit) - 3)


def expanding_bytes(unit: bytes, buffers: int, *, processors: int, held: int = 1 << 24, declared_size: int = 1 << 24,
                    declared_processors: int | None = None) -> bytes:
    """An .etl file of a header buffer and ``buffers`` compressed buffers, buffer i filled by
    processor i % ``processors``, each a few bytes that decompress to ``held`` bytes (whole units) of
    ``unit`` over and over; its log-file header declares ``declared_size`` bytes a buffer and
    ``declared_processors`` (default ``processors``).  Kilobytes that read as gigabytes: the memory
    benchmark's and the tests' hostile files."""
    end = BUFFER_HEADER + (held - BUFFER_HEADER) // len(unit) * len(unit)
    stream = repeat_stream(unit, end - BUFFER_HEADER)
    header_size = min(4096, declared_size)
    header = _log_header(HEADER_TICKS, declared_processors or processors, declared_size, buffers + 1, 0, Clock())
    out = bytearray(_buffer(header, header_size, 0, 0x1 | FLAG_PROC_INDEX, BUFFER_TYPE_HEADER, HEADER_TICKS, False))
    for i in range(buffers):
        out += compressed_buffer(stream, end, i % processors)
    return bytes(out)


def compressed_buffer(stream: bytes, end: int, processor: int) -> bytes:
    """A buffer of processor ``processor`` whose XPRESS ``stream`` decompresses to its events, which
    end at byte ``end`` (header included)."""
    return _buffer_header(BUFFER_HEADER + len(stream), end, processor, FLAG_PROC_INDEX | FLAG_COMPRESSED) + stream
