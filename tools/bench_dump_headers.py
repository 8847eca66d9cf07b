"""Peak memory of opening a crash dump whose header declares more than the file holds:
python tools/bench_dump_headers.py [--tree PATH]

Issue 30 case 2: header counts are checked against the file's size first, and what the header lists is read a
chunk at a time.  Two hostile files, written by the package's dump writer (d3dkmddi_py/samples/dump_build.py):
- a sparse kernel dump whose RDMP_HEADER64.MetadataSize is 1 GiB (a few KB on disk, its range list all zeros);
- a bitmap dump whose 64 MiB bitmap is all ones (512 M pages declared) and that holds no page.
Each is opened with ``KernelDump(path)`` in a fresh process of the source tree ``--tree`` (default: this one;
give another checkout to measure it before a change) under ``/usr/bin/time -v``, and its "Maximum resident set
size" is printed beside the same process's importing ``d3dkmddi_py.memory`` alone, and the ratio of the two.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from d3dkmddi_py.samples.dump_build import Machine, dump_bytes  # noqa: E402


def _machine() -> Machine:
    return Machine.holding({0xFFFFF8012A3B4000: b"\x85\x04\0\0"})


def sparse_kernel(path: str) -> None:
    raw = bytearray(dump_bytes(_machine(), "kernel"))
    meta = (1 << 30) - 0x2040
    pairs = raw[0x2030:0x2050]
    struct.pack_into("<QQ", raw, 0x2010, meta, meta + 0x2020)
    with open(path, "wb") as f:
        f.write(raw[:0x2030] + pairs)
        f.truncate(0x2030 + meta + len(raw))


def ones_bitmap(path: str) -> None:
    raw = bytearray(dump_bytes(_machine(), "bitmap"))
    struct.pack_into("<Q", raw, 0x2030, 64 << 23)
    with open(path, "wb") as f:
        f.write(raw[:0x2038])
        f.write(b"\xff" * (64 << 20))


def peak_kb(tree: str, code: str, cwd: str) -> tuple:
    """(peak RSS in KB, what it printed) of ``python -c code`` importing ``tree``, run in ``cwd`` (``-c`` puts the
    working folder first on the path: it must hold no other tree)."""
    env = dict(os.environ, PYTHONPATH=tree)
    p = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                       text=True)
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if found is None:
        sys.exit(p.stderr[-2000:])
    return int(found.group(1)), p.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default=ROOT, help="the source tree to measure (default: this one)")
    args = parser.parse_args()
    if shutil.which("/usr/bin/time") is None:
        sys.exit("needs GNU time at /usr/bin/time")
    tree = os.path.abspath(args.tree)
    with tempfile.TemporaryDirectory() as tmp:
        files = {"sparse kernel dump, MetadataSize 1 GiB": os.path.join(tmp, "sparse.dmp"),
                 "bitmap dump, 64 MiB of ones": os.path.join(tmp, "ones.dmp")}
        sparse_kernel(files["sparse kernel dump, MetadataSize 1 GiB"])
        ones_bitmap(files["bitmap dump, 64 MiB of ones"])
        base, _ = peak_kb(tree, "import d3dkmddi_py.memory", tmp)
        print(f"tree {tree}")
        print(f"import d3dkmddi_py.memory alone: {base / 1024:.1f} MB peak RSS")
        for name, path in files.items():
            code = (f"from d3dkmddi_py.memory import KernelDump\ntry:\n    print(KernelDump({path!r}))\n"
                    f"except Exception as e:\n    print(type(e).__name__ + ':', str(e)[len({path!r}):])")
            kb, said = peak_kb(tree, code, tmp)
            blocks = os.stat(path).st_blocks * 512
            print(f"{name} ({os.path.getsize(path) / (1 << 20):.0f} MiB, {blocks / (1 << 20):.1f} MiB on disk): "
                  f"{kb / 1024:.1f} MB peak RSS, {kb / base:.2f} x the import alone; {said}")


if __name__ == "__main__":
    main()
