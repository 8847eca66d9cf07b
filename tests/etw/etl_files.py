"""The real .etl files of tests/etw/real, unpacked once per session, and PerfView's readings of them."""
from __future__ import annotations

import gzip
import re
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
        if name == "net.4.5.2.x64":
            with zipfile.ZipFile(REAL / f"{name}.etl.zip") as z:
                target.write_bytes(z.read(f"{name}.etl"))
        else:
            target.write_bytes(gzip.decompress((REAL / f"{name}.etl.gz").read_bytes()))
        out[name] = target
    return out


def baseline(name: str) -> list:
    """(ms, event name, process, thread, processor, payload length) per EVENT line of PerfView's reading."""
    rows = []
    for line in (REAL / f"{name}.perfview-baseline.txt").read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line)
        if m:
            rows.append((float(m[1].replace(",", "")), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6])))
    return rows
