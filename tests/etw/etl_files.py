"""The real .etl files of tests/etw/real, unpacked once per session, and PerfView's readings of them."""
from __future__ import annotations

import gzip
import re
import struct
import zipfile
from pathlib import Path

REAL = Path(__file__).resolve().parent / "real"
NAMES = ("AMSITrace", "SelfDescribingSingleEvent", "ShutdownPerfDiagLogger", "gcevents", "lxcore_kernel",
         "powershell", "primitive-types", "net.4.5.2.x64")

# PerfView's line: "EVENT 2,942.306: provider/event PID=..; TID=..; PName=..; ProceNum=..; DataLen=..;"
_LINE = re.compile(r"^EVENT ([\d,]+\.\d+): (.+?) PID=(-?\d+); TID=(-?\d+); PName=[^;]*; ProceNum=(\d+); "
                   r"DataLen=(\d+);")


def unpack(directory: Path) -> dict:
    """name -> path of each real file, written into ``directory``."""
    out = {}
    for name in NAMES:
        target = directory / f"{name}.etl"
        target.write_bytes(read(name))
        out[name] = target
    return out


def read(name: str) -> bytes:
    """The bytes of one real file, unpacked in memory."""
    if name == "net.4.5.2.x64":
        with zipfile.ZipFile(REAL / f"{name}.etl.zip") as z:
            return z.read(f"{name}.etl")
    return gzip.decompress((REAL / f"{name}.etl.gz").read_bytes())


def compressed_streams(data: bytes) -> list:
    """(XPRESS stream, size it decompresses to) of each compressed buffer of an .etl file's bytes:
    its body after the 72-byte header, and SavedOffset less the header."""
    from d3dkmddi_py.etw.readers.etlfile import BUFFER, BUFFER_HEADER, FLAG_COMPRESSED

    out, at = [], 0
    while at + BUFFER_HEADER <= len(data):
        size, saved = struct.unpack_from("<II", data, at)
        if size < BUFFER_HEADER:
            raise ValueError(f"a buffer of {size} bytes at {at}: not a real file's")
        if struct.unpack_from("<H", data, at + BUFFER.offset["BufferFlag"])[0] & FLAG_COMPRESSED:
            out.append((data[at + BUFFER_HEADER:at + size], saved - BUFFER_HEADER))
        at += size
    return out


def baseline(name: str) -> list:
    """(ms, event name, process, thread, processor, payload length) per EVENT line of PerfView's reading."""
    rows = []
    for line in (REAL / f"{name}.perfview-baseline.txt").read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line)
        if m:
            rows.append((float(m[1].replace(",", "")), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6])))
    return rows
