"""The .etl mutation fuzz: seeded mutants of hard traces (bytes anywhere; the log-file header's clock,
frequency, start and header time; its buffer size and processor count; buffers' processors; buffers
replaced by XPRESS streams that expand), each read by both readers of each question: the column-wise
and the event-by-event tables, the column-wise and the event-by-event --summary.  One answer per
input (the same bytes, or the same error naming the same buffer), never another exception, and the
memory of the whole run under a bound."""
from __future__ import annotations

import io
import random
import tracemalloc

from d3dkmddi_py.etw.readers import etlfile, etlreader
from d3dkmddi_py.samples.etl_build import SMALLEST_EVENT, compressed_buffer, repeat_stream

from .etl_hard import hard_trace
from .etl_readings import answer, tables

BUFFER = 2048  # hard_trace's buffer size
LOGFILE_AT = etlfile.BUFFER_HEADER + etlfile.SYSTEM_HEADER.length  # the header event's data
TAIL_AT = etlfile.logfile_tail_at(LOGFILE_AT, 8)
HEADER_TIME_AT = etlfile.BUFFER_HEADER + etlfile.SYSTEM_HEADER.offset["SystemTime"]
INT64 = 1 << 63


def put(b: bytearray, at: int, layout, field: str, value: int) -> None:
    """Write ``value`` into ``field`` of ``layout`` at ``at``, wrapped to the field's width."""
    width, start = layout.width[field], at + layout.offset[field]
    b[start:start + width] = (value % (1 << 8 * width)).to_bytes(width, "little")


def buffers_of(b: bytes) -> list:
    return list(range(BUFFER, len(b) - etlfile.BUFFER_HEADER, BUFFER))


EXPANDING = (5, 6)  # the mutations that make buffers expand, whose memory is traced


def mutate(rng: random.Random, data: bytes) -> tuple:
    """(how, the mutant)."""
    b = bytearray(data)
    how = rng.randrange(8)
    if how == 0:  # bytes anywhere past the header buffer
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(BUFFER, len(b))] = rng.randrange(256)
    elif how == 7:  # two buffers damaged: one's body (its compressed stream, or cut), another's first event
        first, second = rng.sample(buffers_of(b), 2)
        b[second + etlfile.BUFFER_HEADER + etlfile.EVENT_HEADER.offset["MarkerFlags"]] = 0x41
        if b[first + etlfile.BUFFER.offset["BufferFlag"]] & etlfile.FLAG_COMPRESSED:
            b[first + etlfile.BUFFER_HEADER + rng.randrange(4)] ^= 0xFF  # its first flag word
        else:
            del b[first + rng.randrange(etlfile.BUFFER_HEADER, BUFFER):first + BUFFER]  # cut short, the rest after
    elif how == 1:  # the clock: type, frequency, CPU speed, start time
        put(b, TAIL_AT, etlfile.LOGFILE_TAIL, "ReservedFlags", rng.choice([0, 1, 2, 3, 7]))
        put(b, TAIL_AT, etlfile.LOGFILE_TAIL, "PerfFreq", rng.choice([0, 1, -1, 10 ** 7, 10 ** 12, INT64 - 1]))
        put(b, LOGFILE_AT, etlfile.LOGFILE, "CpuSpeedInMHz", rng.choice([0, 1, 3000, 2 ** 32 - 1]))
        put(b, TAIL_AT, etlfile.LOGFILE_TAIL, "StartTime", rng.choice([0, -1, 1, 2 ** 62, INT64 - 1,
                                                                       rng.randrange(-INT64, INT64)]))
    elif how == 2:  # the header event's time (time 0 of the trace)
        b[HEADER_TIME_AT:HEADER_TIME_AT + 8] = rng.choice([-INT64, INT64 - 1, 0, rng.randrange(-INT64, INT64)]) \
            .to_bytes(8, "little", signed=True)
    elif how == 3:  # what the header declares: its buffer size, its processors
        if rng.random() < 0.5:
            put(b, LOGFILE_AT, etlfile.LOGFILE, "BufferSize", rng.choice([0, 71, 72, 1024, 2048, 4096, 1 << 24,
                                                                          (1 << 24) + 1]))
        else:
            put(b, LOGFILE_AT, etlfile.LOGFILE, "NumberOfProcessors", rng.choice([0, 1, 2, 3, 255, 2 ** 32 - 1]))
    elif how == 4:  # a buffer's processor
        at = rng.choice(buffers_of(b))
        put(b, at, etlfile.BUFFER, "ProcessorNumber", rng.choice([0, 1, 2, 3, 4, 255, 256, 65535]))
        if rng.random() < 0.3:
            b[at + etlfile.BUFFER.offset["BufferFlag"]] ^= etlfile.FLAG_PROC_INDEX
    else:  # a buffer replaced by an XPRESS stream that expands, to within the header's size or past it
        at = rng.choice(buffers_of(b))
        first = b[at + etlfile.BUFFER_HEADER:][:int.from_bytes(b[at + 72:at + 74], "little")]  # its first event
        unit = bytes(first) if 16 <= len(first) <= 512 and rng.random() < 0.5 else SMALLEST_EVENT
        unit += bytes(-len(unit) & 7)
        held = rng.choice([BUFFER, 1 << 15, 1 << 17, 1 << 24])  # 16 MB: past what the header declares
        end = etlfile.BUFFER_HEADER + (held - etlfile.BUFFER_HEADER) // len(unit) * len(unit)
        if BUFFER < held < 1 << 24 and rng.random() < 0.5:  # declared: every buffer as large
            put(b, LOGFILE_AT, etlfile.LOGFILE, "BufferSize", held)
        processor = int.from_bytes(b[at + 40:at + 42], "little")
        b[at:at + BUFFER] = compressed_buffer(repeat_stream(unit, end - etlfile.BUFFER_HEADER), end, processor)
        if how == 6:  # and a byte of it changed
            b[rng.randrange(at, at + 80)] = rng.randrange(256)
    return how, bytes(b)


def readings(mutant: bytes, folder) -> tuple:
    """Both readers' tables, then both readers' --summary."""
    return (tables(mutant, folder, True), tables(mutant, folder, False),
            answer(lambda: etlreader.summary(io.BytesIO(mutant), "trace.etl")),
            answer(lambda: etlreader.summary(io.BytesIO(mutant), "trace.etl", columns=False)))


def test_one_answer_per_input_across_the_two_readers_and_memory_bounded(tmp_path):
    """180 seeded mutants of 3 traces (compressed or not, 2 or 3 processors), read at the column
    reader's own run sizes (it reads buffers ahead of the event-by-event reader: where a different
    buffer was once named for the same damage).  The expanding ones are traced: buffers of 128 KB at
    most get through (16 MB ones are past what the header declares), so each peaks under 64 MB."""
    rng = random.Random(20261202)
    bases = [hard_trace(31, n=60, processors=2), hard_trace(32, n=60, processors=3, compress=True),
             hard_trace(33, n=60, processors=3, pointer_size=4)]
    seen = {"tables": 0, "refused": 0}
    peak = 0
    for i in range(180):
        how, mutant = mutate(rng, bases[i % len(bases)])
        if how in EXPANDING:
            tracemalloc.start()
            try:
                fast, exact, counted, one_by_one = readings(mutant, tmp_path)
                peak = max(peak, tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
        else:
            fast, exact, counted, one_by_one = readings(mutant, tmp_path)
        assert fast == exact, (i, fast.get("error", "tables"), exact.get("error", "tables"))
        assert counted == one_by_one, i
        seen["refused" if "error" in exact else "tables"] += 1
    assert seen["tables"] > 40 and seen["refused"] > 40, seen
    assert 0 < peak < 64 << 20, peak
