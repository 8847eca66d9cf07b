"""A pipe or device is read only as far as the records asked for need: `--file /dev/urandom` with a count
is instant, and an endless pipe with `--count N` ends; `--count all` on one stops at the documented limit."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "d3dkmddi_py"]


def run(args, **kw):
    return subprocess.run([*CLI, *args], capture_output=True, cwd=REPO, timeout=60, **kw)


def test_a_device_with_a_count_reads_only_those_records():
    p = run(["decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/urandom", "--count", "3", "--json"])
    assert p.returncode == 0 and p.stdout.count(b"\n") == 3 and p.stderr == b""


def test_an_endless_pipe_with_a_count_ends():
    endless = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
    try:
        p = subprocess.run([*CLI, "decode", "DXGK_SEGMENTFLAGS", "--file", "-", "--count", "2", "--offset", "8"],
                           stdin=endless.stdout, capture_output=True, cwd=REPO, timeout=60)
    finally:
        endless.stdout.close()
        endless.kill()
        endless.wait()
    assert p.returncode == 0 and b"[1] at +0xc" in p.stdout and p.stderr == b""


def test_an_endless_device_with_count_all_stops_at_the_limit():
    p = run(["decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/zero", "--count", "all"])
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode().count("\n") == 1 and "256 MiB" in p.stderr.decode()
