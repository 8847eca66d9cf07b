"""A pipe or device is read only as far as the records asked for need: `--file /dev/urandom` with a count
is instant, and an endless pipe with `--count N` ends; `--count all` on one stops at the documented limit."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "d3dkmddi_py"]


def run(args, **kw):
    return subprocess.run([*CLI, *args], capture_output=True, cwd=REPO, timeout=60, **kw)


def test_a_device_with_a_count_reads_only_those_records():
    p = run(["decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/urandom", "--count", "3", "--json"])
    assert p.returncode == 0 and p.stdout.count(b"\n") == 3 and p.stderr == b""


@contextlib.contextmanager
def endless(argv):
    """The standard output of a process that writes for ever, ended when the block is done."""
    writer = subprocess.Popen(argv, stdout=subprocess.PIPE, cwd=REPO)
    try:
        yield writer.stdout
    finally:
        writer.stdout.close()
        writer.kill()
        writer.wait()


def test_an_endless_pipe_with_a_count_ends():
    with endless(["cat", "/dev/zero"]) as pipe:
        p = subprocess.run([*CLI, "decode", "DXGK_SEGMENTFLAGS", "--file", "-", "--count", "2", "--offset", "8"],
                           stdin=pipe, capture_output=True, cwd=REPO, timeout=60)
    assert p.returncode == 0 and b"[1] at +0xc" in p.stdout and p.stderr == b""


def test_an_endless_device_with_count_all_stops_at_the_limit():
    p = run(["decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/zero", "--count", "all"])
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode().count("\n") == 1 and "256 MiB" in p.stderr.decode()


# A trace that never ends: a valid .etl header buffer, then its data buffer over and over.
ENDLESS_ETL = """
import sys
from d3dkmddi_py.etw.catalog import KIND_BY_NAME
from d3dkmddi_py.samples import etl_build
from tests.etw.helpers import alloc_fields
start = KIND_BY_NAME[("AdapterAllocation", "Start")]
data = etl_build.etl_bytes([etl_build.dxgkrnl_event(start, alloc_fields(), ticks=i) for i in range(200)],
                           processors=1, buffer_size=65536)
sys.stdout.buffer.write(data[:65536])
buffers = data[65536:] * 64
try:
    while True:
        sys.stdout.buffer.write(buffers)
except (BrokenPipeError, OSError):
    pass
"""


@pytest.mark.parametrize("mode", [[], ["--summary"], ["--format", "csv", "-o", "tables"]],
                         ids=["time order", "summary", "tables"])
def test_an_endless_etl_on_standard_input_stops_at_the_limit_and_its_spool_is_removed(mode, tmp_path):
    """`etw -` once copied standard input to a temporary file with no limit (2 GB in 25 s, until the
    disk filled); now the 256 MiB of every input without a size, one line, exit 2, nothing left."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    with endless([sys.executable, "-c", ENDLESS_ETL]) as pipe:
        p = subprocess.run([*CLI, "etw", "-", *mode], stdin=pipe, capture_output=True, cwd=tmp_path, timeout=120,
                           env=dict(os.environ, TMPDIR=str(spool), PYTHONPATH=str(REPO)))
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "standard input has no size and gave more than 256 MiB, the limit for pipes, devices and standard " \
           "input; save it to a file" in err
    assert list(spool.iterdir()) == [] and not list(tmp_path.glob("tables/*"))  # no spool, no half table
