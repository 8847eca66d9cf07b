"""Damaged .etl files: one line naming the buffer and offset, exit 2; thousands of seeded mutations of
real files never crash, hang or hold on to memory."""
from __future__ import annotations

import io
import random
import re
import zlib
import struct
import subprocess
import sys
import tracemalloc

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError
from tests.etw.etl_files import REAL

pytestmark = pytest.mark.filterwarnings("error")


def primitive() -> bytes:
    import gzip
    return gzip.decompress((REAL / "primitive-types.etl.gz").read_bytes())


def damaged() -> dict:
    d = primitive()
    event = 8192 + 0x48  # the second buffer's first event
    big_buffer = bytearray(d)
    struct.pack_into("<I", big_buffer, 8192, 1 << 20)
    big_event = bytearray(d)
    struct.pack_into("<H", big_event, event, 60000)
    zero_event = bytearray(d)
    struct.pack_into("<H", zero_event, event, 0)
    marker = bytearray(d)
    marker[event + 3] = 0x41
    return {
        "cut in the header buffer": (d[:100], r"buffer 0 \(file offset 0\): its BufferSize is 8192 bytes but the file "
                                              r"ends 100 bytes into it \(truncated"),
        "cut in a buffer header": (d[:8192 + 30], r"buffer 1 \(file offset 8192\): the file ends 30 bytes into the "
                                                  r"buffer's 72-byte header \(truncated\)"),
        "cut in a buffer": (d[:8192 + 500], r"buffer 1 \(file offset 8192\): its BufferSize is 8192 bytes but the file "
                                            r"ends 500 bytes into it"),
        "buffer size past the header's": (bytes(big_buffer), r"buffer 1 \(file offset 8192\): BufferSize is "
                                                             r"1,048,576, more than the 8,192 bytes the log-file "
                                                             r"header gives every buffer"),
        "event size past its buffer": (bytes(big_event), r"buffer 1 \(file offset 8192, byte 72 of it \(file offset "
                                                         r"8264\)\): an EVENT_HEADER event of 60,000 bytes runs 58,120 "
                                                         r"bytes past the end of its buffer's events \(byte 1952\)"),
        "zero-length event": (bytes(zero_event), r"byte 72 of it \(file offset 8264\)\): an EVENT_HEADER event of 0 "
                                                 r"bytes, shorter than its 80-byte header"),
        "not a marker": (bytes(marker), r"file offset 8264\)\): 0x41130176 is not an event header's marker"),
    }


@pytest.mark.parametrize("case", list(damaged()))
def test_damage_is_one_line_naming_buffer_and_offset(case, tmp_path):
    data, message = damaged()[case]
    path = tmp_path / "trace.etl"
    path.write_bytes(data)
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == "", out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("d3dkmddi: error: "), out.stderr
    assert re.search(message, lines[0]), lines[0]
    for read in (etw.summary, lambda d: list(etw.read(d))):  # the summary and the events say the same
        with pytest.raises(EtwInputError, match=message):
            read(data)


@pytest.mark.parametrize("data, message", [
    (b"", "is empty"), (bytes(range(256)) * 40, "neither an .etl file nor XML"),
    (random.Random(5).randbytes(20_000), "neither an .etl file nor XML")], ids=["zero-length", "bytes", "random"])
def test_not_an_etl_file(data, message, tmp_path):
    path = tmp_path / "trace.etl"
    path.write_bytes(data)
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1
    with pytest.raises(EtwInputError, match="not an .etl file"):
        etw.summary(data)


def mutations(data: bytes, seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        b = bytearray(data)
        how = rng.randrange(4)
        if how == 0:  # flip bytes anywhere
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif how == 1:  # hit the fields that steer the reader: buffer headers and event markers
            base = rng.choice([0, 8192, 8192 + 0x48, 0x48]) % len(b)
            for _ in range(rng.randint(1, 3)):
                b[min(len(b) - 1, base + rng.randrange(0x50))] = rng.choice([0, 0xFF, rng.randrange(256)])
        elif how == 2:
            del b[rng.randrange(len(b)):]
        else:
            at = rng.randrange(len(b))
            b[at:at] = rng.randbytes(rng.randint(1, 64))
        yield bytes(b)


def read_all(mutant: bytes, outcomes: dict) -> None:
    for step in (etw.summary, lambda m: list(etw.read(m))):
        try:
            step(mutant)
            outcomes["read"] += 1
        except EtwInputError as exc:
            assert "\n" not in str(exc)
            outcomes["refused"] += 1


@pytest.mark.parametrize("name", ["primitive-types", "SelfDescribingSingleEvent", "lxcore_kernel"])
def test_mutated_real_files_never_crash_hang_or_grow(name):
    """1,000 seeded mutations per file (3,000 in all), each read for its summary and its DxgKrnl
    events: a result or an EtwInputError, never another exception.  The last 100 are traced: what
    they leave behind is under 256 KB and their peak under 40 MB (one damaged buffer at a time)."""
    import gzip
    data = gzip.decompress((REAL / f"{name}.etl.gz").read_bytes())
    outcomes = {"read": 0, "refused": 0}
    every = list(mutations(data, seed=zlib.crc32(name.encode()), count=1000))
    for mutant in every[:900]:
        read_all(mutant, outcomes)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for mutant in every[900:]:
            read_all(mutant, outcomes)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcomes["read"] > 0 and outcomes["refused"] > 0
    assert after - before < 256 << 10 and peak < 40 << 20, (before, after, peak)


def outcome(read, mutant: bytes):
    try:
        return read(mutant)
    except EtwInputError as exc:
        return str(exc)


@pytest.mark.parametrize("name", ["primitive-types", "SelfDescribingSingleEvent", "lxcore_kernel"])
def test_mutants_count_the_same_column_wise_and_one_by_one(name):
    """The column-wise --summary against the event-by-event reader on 300 seeded mutants per file:
    the same facts, or the same error naming the same buffer and byte."""
    import gzip
    from d3dkmddi_py.etw.readers import etlreader

    data = gzip.decompress((REAL / f"{name}.etl.gz").read_bytes())
    same = refused = 0
    for mutant in mutations(data, seed=zlib.crc32(name.encode()) + 1, count=300):
        fast = outcome(lambda m: etlreader.summary(io.BytesIO(m), "trace.etl"), mutant)
        slow = outcome(lambda m: etlreader.summary(io.BytesIO(m), "trace.etl", columns=False), mutant)
        assert fast == slow
        same += 1
        refused += isinstance(fast, str)
    assert same == 300 and 0 < refused < 300


@pytest.mark.parametrize("name", ["\n", "a\x1b[31mb", "tab\there"])
def test_a_name_with_control_characters_is_one_line(name):
    """The public-call fuzz found "cannot read \\n: ..." (a path of one line break) breaking the line."""
    for read in (etw.summary, lambda n: list(etw.read(n))):
        with pytest.raises(EtwInputError) as caught:
            read(name)
        assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value) and repr(name) in str(caught.value)
