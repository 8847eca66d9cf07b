"""Issue 9 end to end through the real command: ``python -m d3dkmddi_py ...`` in a subprocess,
bounded by ``timeout=`` and, where memory matters, by ``RLIMIT_AS`` in the child.

Each case is one the issue lists: on commit af72b6e it destroyed a file, misread an input,
grew without bound or printed a traceback; here it must give the right records or one line
and exit status 2.  The source tree under test is the one this file sits in (PYTHONPATH).
"""
from __future__ import annotations

import array
import csv
import importlib.util
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from d3dkmddi_py import cli as cli_module
from ..conftest import require

from .commandline import ALLOCATIONS, DQ_DUMP, GB, SAMPLES, SEGMENTS, WDDM3_0, cli, env, good, one_line, shell

def csv_rows(text: str) -> list:
    return list(csv.DictReader(io.StringIO(text)))


def flags_file(path: Path, words) -> Path:
    """DXGK_SEGMENTFLAGS records: one little-endian UINT each."""
    path.write_bytes(array.array("I", words).tobytes() if sys.byteorder == "little"
                     else b"".join(int(w).to_bytes(4, "little") for w in words))
    return path


# ------------------------------------------------------------------ output that is the input
def _spell(tmp_path: Path, how: str) -> tuple:
    """(input path, output path) naming the same file ``how``; cwd is tmp_path."""
    data = tmp_path / "in.bin"
    data.write_bytes(ALLOCATIONS.read_bytes())
    if how == "same":
        return "in.bin", "in.bin"
    if how == "relative":
        (tmp_path / "sub").mkdir()
        return str(data), "./sub/../in.bin"
    if how == "hardlink":
        os.link(data, tmp_path / "hard.bin")
        return "in.bin", "hard.bin"
    os.symlink("in.bin", tmp_path / "link.bin")
    return "in.bin", "link.bin"


@pytest.mark.parametrize("how", ["same", "relative", "hardlink", "symlink"])
@pytest.mark.parametrize("command", [["decode", "--format", "text"], ["decode", "--format", "csv"],
                                     ["validate"]], ids=["decode-text", "decode-csv", "validate"])
def test_output_that_is_the_input_is_refused_before_any_work(tmp_path, how, command):
    source, output = _spell(tmp_path, how)
    before = ALLOCATIONS.read_bytes()
    p = cli(command[0], "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", source, "--count", "all", *command[1:],
            "--output", output, cwd=tmp_path)
    line = one_line(p)
    assert "input" in line and p.stdout == b""
    assert (tmp_path / "in.bin").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == sorted({"in.bin", "sub", "hard.bin", "link.bin"} &
                                                  set(os.listdir(tmp_path)))  # no temporary left


# ------------------------------------------------------------------ outputs that are not files
@pytest.mark.parametrize("output, says", [("folder", "directory"), ("", "directory"), (".", "directory"),
                                          ("fifo", "FIFO"), ("chardev", "device")])
def test_an_output_that_is_not_a_regular_file_is_one_line(tmp_path, output, says):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    try:
        os.mknod(tmp_path / "chardev", stat.S_IFCHR | 0o666, os.makedev(1, 7))  # what /dev/full is
    except PermissionError:
        if output == "chardev":
            pytest.skip("mknod needs CAP_MKNOD; /dev/full is tested below")
    p = cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "--output", output, cwd=tmp_path, timeout=30)
    assert says in one_line(p)
    if output == "chardev":
        assert stat.S_ISCHR(os.stat(tmp_path / "chardev").st_mode)
    assert sorted(os.listdir(tmp_path)) == sorted(["folder", "fifo"] + (["chardev"] if
                                                  (tmp_path / "chardev").exists() else []))


def test_dev_full_is_refused_and_stays_a_device(tmp_path):
    # Run as root on af72b6e this replaced /dev/full with a regular file: do not run it on old code.
    p = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all", "--format", "csv",
            "--output", "/dev/full", cwd=tmp_path)
    assert "character device" in one_line(p)
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


# ------------------------------------------------------------------ modes and links
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_output_file_gets_0666_less_the_umask(tmp_path, umask, mode):
    good(cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "--output", "new.txt", cwd=tmp_path, umask=umask))
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == mode


@pytest.mark.parametrize("mode", [0o644, 0o640])
def test_an_existing_output_file_keeps_its_mode(tmp_path, mode):
    out = tmp_path / "old.csv"
    out.write_text("old\n")
    out.chmod(mode)
    good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all",
             "--format", "csv", "--output", out, cwd=tmp_path, umask=0o077))
    assert stat.S_IMODE(os.stat(out).st_mode) == mode
    assert len(csv_rows(out.read_text())) == 35


def test_a_symlink_output_stays_a_link_and_its_target_gets_the_content(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.csv"
    target.write_text("old\n")
    os.symlink("real/out.csv", tmp_path / "link.csv")
    good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all",
             "--format", "csv", "--output", "link.csv", cwd=tmp_path))
    assert os.path.islink(tmp_path / "link.csv") and os.readlink(tmp_path / "link.csv") == "real/out.csv"
    assert len(csv_rows(target.read_text())) == 35
    assert sorted(os.listdir(tmp_path / "real")) == ["out.csv"]


# ------------------------------------------------------------------ endless and unsized inputs
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_stops_at_the_limit_with_one_line(tmp_path, device):
    started = time.monotonic()
    p = cli("decode", "DXGK_SEGMENTFLAGS", "--file", device, "--count", "all", cwd=tmp_path, timeout=20,
            address_space=GB)
    assert time.monotonic() - started < 20
    line = one_line(p)
    assert device in line and "MiB" in line and p.stdout == b""


def test_standard_input_from_cat_a_few_megabytes(tmp_path):
    words = [(i * 2654435761) & 0xFFFFFFFF for i in range(3 << 18)]  # 3 MiB of DXGK_SEGMENTFLAGS
    flags_file(tmp_path / "big.bin", words)
    p = shell('cat big.bin | $D decode DXGK_SEGMENTFLAGS --file - --count all --format csv', tmp_path)
    header, *lines = good(p).splitlines()
    assert len(lines) == len(words)
    value = header.split(",").index("Value")
    picked = (0, 1, 12345, len(words) // 2, len(words) - 1)
    assert [int(lines[i].split(",")[value], 0) for i in picked] == [words[i] for i in picked]


# ------------------------------------------------------------------ WinDbg numbers and dumps
def _fields(stdout: str) -> list:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_backtick_number_as_value_is_hex():
    (record,) = _fields(good(cli("decode", "DXGK_SEGMENTFLAGS", "00000000`00000485", "--json")))
    assert record["bytes"] == "85040000"  # 0x485, not the decimal 485 (0x1e5)


def test_a_backtick_number_as_offset_is_hex(tmp_path):
    data = bytearray(0x800)
    data[0x485:0x489] = (0x485).to_bytes(4, "little")
    data[485:489] = (0x1E5).to_bytes(4, "little")
    (tmp_path / "d.bin").write_bytes(bytes(data))
    (record,) = _fields(good(cli("decode", "DXGK_SEGMENTFLAGS", "--file", "d.bin", "--offset", "00000000`00000485",
                                 "--json", cwd=tmp_path)))
    assert (record["offset"], record["bytes"]) == (0x485, "85040000")


def _dd_c8(address: int, words) -> str:
    """`dd /c 8` text: eight dwords per line, addresses in WinDbg's 64-bit form."""
    lines = ["0: kd> dd /c 8 fffff801`2a3b4000 L%x" % len(words)]
    for i in range(0, len(words), 8):
        at = address + 4 * i
        lines.append(f"{at >> 32:08x}`{at & 0xFFFFFFFF:08x}  " + " ".join(f"{w:08x}" for w in words[i:i + 8]))
    return "\n".join(lines) + "\n"


def test_dd_c8_lines_are_read_whole_over_many_lines(tmp_path):
    words = [0x485 + i for i in range(24)]  # three lines of eight
    (tmp_path / "dd.txt").write_text(_dd_c8(0xFFFFF8012A3B4000, words))
    rows = csv_rows(good(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", "dd.txt", "--count", "all",
                             "--format", "csv", cwd=tmp_path)))
    assert [int(r["Value"], 0) for r in rows] == words


@pytest.mark.parametrize("prompt", ["kd>", "lkd>", "0: kd>", "0: kd:x86>", "1: kd:ARM64>", "0:000>", "0:000:x86>"])
def test_every_prompt_form_is_skipped(tmp_path, prompt):
    text = (f"{prompt} dd fffff801`2a3b4000 L2\n"
            "fffff801`2a3b4000  00000485 00000001\n"
            f"{prompt}\n")
    (tmp_path / "dump.txt").write_text(text)
    rows = csv_rows(good(cli("decode", "DXGK_SEGMENTFLAGS", "--windbg", "dump.txt", "--count", "all",
                             "--format", "csv", cwd=tmp_path)))
    assert [int(r["Value"], 0) for r in rows] == [0x485, 1]


def test_address_inside_a_windbg_dump():
    by_address = _fields(good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", DQ_DUMP,
                                  "--address", "ffffb80c`4e2f1058", "--json")))
    by_offset = _fields(good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS,
                                 "--offset", "0x58", "--json")))
    assert by_address[0]["bytes"] == by_offset[0]["bytes"] == ALLOCATIONS.read_bytes()[88:176].hex()
    assert by_address[0]["offset"] == 0x58 and by_address[0]["address"] == "0xffffb80c4e2f1058"


# ------------------------------------------------------------------ pipes and closed streams
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_columns_piped_to_head_end_quietly(tmp_path, fmt):
    flags_file(tmp_path / "big.bin", range(1 << 18))
    p = shell(f"$D decode DXGK_SEGMENTFLAGS --file big.bin --count all --format {fmt} | head -c 10", tmp_path)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert p.stderr == b"" and len(p.stdout) == 10


def test_a_closed_standard_output_is_one_line(tmp_path):
    p = shell("$D decode DXGK_SEGMENTFLAGS 0x485 >&-", tmp_path)
    one_line(p)


@pytest.mark.parametrize("command", ["decode", "validate"])
@pytest.mark.parametrize("fmt", ["text", "json", "csv", "jsonl", "parquet"])
@pytest.mark.parametrize("output", ["", " -o -"])
def test_parquet_to_a_closed_standard_output_is_one_line_like_every_format(tmp_path, command, fmt, output):
    if fmt == "parquet":
        require(importlib.util.find_spec("pyarrow") is not None, "pyarrow (the test extra)")
    p = shell(f"$D {command} DXGK_ALLOCATIONINFO --file '{ALLOCATIONS}' --ddi WDDM3_0 --count all --format {fmt}"
              f"{output} >&-", tmp_path)
    assert one_line(p) == "d3dkmddi: error: standard output is closed\n"


def test_parquet_from_cli_run_is_one_line_not_a_pyarrow_error():
    require(importlib.util.find_spec("pyarrow") is not None, "pyarrow (the test extra)")
    for command in ("decode", "validate"):
        out, err, status = cli_module.run([command, "DXGK_ALLOCATIONINFO", "--file", str(ALLOCATIONS),
                                           *WDDM3_0, "--count", "all", "--format", "parquet"])
        assert (out, status) == ("", 2)
        assert err == ("d3dkmddi: error: Parquet is binary and the output is a text stream (StringIO) without a "
                       "binary .buffer; write it to a file (--output PATH; from Python a path, or a file opened "
                       "'wb')\n")


def test_a_closed_standard_input_with_file_dash_is_one_line(tmp_path):
    p = shell("$D decode DXGK_SEGMENTFLAGS --file - --count all <&-", tmp_path)
    assert "standard input" in one_line(p)


def test_ctrl_c_while_writing_exits_130_and_keeps_the_old_file(tmp_path):
    flags_file(tmp_path / "big.bin", range(16 << 20))  # 64 MiB: seconds of CSV
    old = tmp_path / "out.csv"
    old.write_text("the old content\n")
    argv = [sys.executable, "-m", "d3dkmddi_py", "decode", "DXGK_SEGMENTFLAGS", "--file", "big.bin",
            "--count", "all", "--format", "csv", "--output", "out.csv"]
    # as from a terminal: SIGINT at its default (a runner started in the background ignores it, and
    # an ignored signal stays ignored across exec)
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=tmp_path,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            extra = set(os.listdir(tmp_path)) - {"big.bin", "out.csv"}
            if extra and any(os.path.getsize(tmp_path / n) > 0 for n in extra if (tmp_path / n).exists()):
                break  # the temporary file is being written
            time.sleep(0.02)
        assert child.poll() is None, "finished before it could be interrupted"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    p = subprocess.CompletedProcess(argv, child.returncode, out, err)
    assert "interrupt" in one_line(p, status=130).lower()
    assert old.read_text() == "the old content\n"
    assert sorted(os.listdir(tmp_path)) == ["big.bin", "out.csv"]


# ------------------------------------------------------------------ absurd numbers
@pytest.mark.parametrize("where", ["value", "--offset", "--count"])
def test_a_5000_digit_number_is_one_line(tmp_path, where):
    huge = "7" * 5000
    args = ["decode", "DXGK_SEGMENTFLAGS"]
    args += [huge] if where == "value" else ["--hex", "85040000", where, huge]
    line = one_line(cli(*args, cwd=tmp_path))
    assert len(line) < 400


# ------------------------------------------------------------------ what a new user met
def test_abi_amd64_is_x64():
    amd64 = good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--abi", "amd64", "--json"))
    x64 = good(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--abi", "x64", "--json"))
    assert amd64 == x64 and _fields(amd64)[0]["target"]["abi"] == "x64"


def test_version_prints_a_version():
    out = good(cli("--version"))
    assert out.startswith("d3dkmddi ") and out.count("\n") == 1 and len(out.split()) == 2


def test_no_progress_bar_off_a_terminal_and_a_wrote_line_after_writing(tmp_path):
    p = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all",
            "--format", "csv", "--output", "out.csv", cwd=tmp_path)
    good(p)
    assert p.stderr.decode() == "d3dkmddi: wrote 35 records to out.csv\n"  # no \r progress line before it


def test_a_progress_bar_on_a_terminal_ends_before_the_wrote_line(tmp_path):
    import pty

    leader, follower = pty.openpty()
    try:
        p = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all",
                "--format", "csv", "--output", "out.csv", cwd=tmp_path, stderr=follower, stdout=subprocess.PIPE)
        os.close(follower)
        follower = None
        chunks = []
        while True:
            try:
                part = os.read(leader, 65536)
            except OSError:
                break
            if not part:
                break
            chunks.append(part)
    finally:
        if follower is not None:
            os.close(follower)
        os.close(leader)
    assert p.returncode == 0
    shown = b"".join(chunks).decode()
    assert "\r" in shown and shown.rstrip().endswith("d3dkmddi: wrote 35 records to out.csv")


def test_more_records_than_printed_suggest_count_all(tmp_path):
    p = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS)
    good(p)
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "34 more" in err and "--count all" in err
    q = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all", "--json")
    good(q)
    assert q.stderr == b""


@pytest.mark.parametrize("situation", ["missing", "empty", "output"])
def test_file_names_with_control_characters_are_echoed_escaped(tmp_path, situation):
    name = "a\x1b[31mb.bin"
    if situation == "empty":
        (tmp_path / name).write_bytes(b"")
    args = ["--file", name] if situation != "output" else ["--file", "in.bin", "--output", name + "/"]
    if situation == "output":
        (tmp_path / "in.bin").write_bytes(b"\x85\x04\x00\x00")
    line = one_line(cli("decode", "DXGK_SEGMENTFLAGS", *args, cwd=tmp_path))
    assert "\x1b" not in line and "\\x1b" in line


def test_segments_given_as_windbg_text(tmp_path):
    raw = SEGMENTS.read_bytes()
    lines = []
    for i in range(0, len(raw), 16):
        words = [int.from_bytes(raw[j:j + 8], "little") for j in range(i, min(i + 16, len(raw)), 8)]
        at = 0xFFFFB80C4E300000 + i
        lines.append(f"{at >> 32:08x}`{at & 0xFFFFFFFF:08x}  " +
                     " ".join(f"{w >> 32:08x}`{w & 0xFFFFFFFF:08x}" for w in words))
    assert len(raw) % 8 == 0
    (tmp_path / "segments.txt").write_text("0: kd> dq ffffb80c`4e300000\n" + "\n".join(lines) + "\n")
    args = ["validate", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", ALLOCATIONS, "--count", "all", "--json"]
    from_text = cli(*args, "--segments", "segments.txt", cwd=tmp_path)
    from_bytes = cli(*args, "--segments", SEGMENTS, cwd=tmp_path)
    assert from_text.returncode == from_bytes.returncode in (0, 1), from_text.stderr.decode()
    assert from_text.stdout == from_bytes.stdout and from_text.stdout.count(b"\n") == 35
    assert b"segment" in from_text.stdout.lower()


# ------------------------------------------------------------------ a million records, bounded memory
SCALE_WORDS = (0x0, 0x4, 0x485, 0x8, 0x5, 0x100, 0x104, 0x1)  # plain, aperture, banked...: some with findings
TITLE = b"DXGK_SEGMENTFLAGS  x64 "


@pytest.fixture(scope="module")
def million(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("million")
    one = b"".join(w.to_bytes(4, "little") for w in SCALE_WORDS)
    (folder / "m1.bin").write_bytes(one * (1_000_000 // len(SCALE_WORDS)))
    (folder / "m02.bin").write_bytes(one * (200_000 // len(SCALE_WORDS)))
    return folder


# Linux carries a process's peak RSS across exec, and a child forked from this (large) test process
# starts with its peak: so a small Python process starts the command and reports its peak alone.
_PEAK = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(child.returncode)
"""


def _measured(args, cwd) -> tuple:
    """(exit status, (newlines, record titles, last bytes) of stdout, stderr, peak RSS in MB) of one run;
    stdout is tallied as it comes, so the parent holds no more than a chunk."""
    peak_file = Path(cwd) / "peak.txt"
    argv = [sys.executable, "-c", _PEAK, str(peak_file), sys.executable, "-m", "d3dkmddi_py", *args]
    lines = titles = 0
    tail = last = b"\n"  # a title at the very start counts like one after a newline
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=cwd) as child:
        try:
            while True:
                part = child.stdout.read(1 << 20)
                if not part:
                    break
                joined = tail + part
                lines += part.count(b"\n")
                titles += joined.count(b"\n" + TITLE)
                tail = joined[-len(TITLE):]  # too short to hold a whole match, so none is counted twice
                last = (last + part)[-200:]
            err = child.stderr.read()
            status = child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
    return status, (lines, titles, last), err.decode(), int(peak_file.read_text()) / 1024


def _findings_per_cycle(folder: Path) -> int:
    """Errors + warnings of one cycle of SCALE_WORDS, from validate on those 8 records alone."""
    (folder / "cycle.bin").write_bytes(b"".join(w.to_bytes(4, "little") for w in SCALE_WORDS))
    out = cli("validate", "DXGK_SEGMENTFLAGS", "--file", "cycle.bin", "--count", "all", cwd=folder).stdout.decode()
    head, errors, warnings = out.splitlines()[-1].replace(",", ":").split(":")
    assert head == f"{len(SCALE_WORDS)} records"
    return int(errors.split()[0]) + int(warnings.split()[0])


@pytest.mark.parametrize("command, source, fmt, records", [
    ("decode", "m02.bin", "text", 200_000), ("decode", "m02.bin", "json", 200_000),
    ("decode", "m1.bin", "csv", 1_000_000), ("decode", "m1.bin", "jsonl", 1_000_000),
    ("decode", "m1.bin", "parquet", 1_000_000),
    ("validate", "m1.bin", "text", 1_000_000), ("validate", "m1.bin", "json", 1_000_000),
    ("validate", "m1.bin", "csv", 1_000_000)])
def test_a_million_records_stream_in_bounded_memory(million, command, source, fmt, records):
    args = [command, "DXGK_SEGMENTFLAGS", "--file", source, "--count", "all", "--format", fmt]
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet")
        args += ["--output", "out.parquet"]
    started = time.monotonic()
    status, (lines, titles, tail), err, peak = _measured(args, million)
    assert status == (1 if command == "validate" else 0), err[-2000:]  # 0x485 has an error-level finding
    assert "Traceback" not in err and peak < 600, (peak, err[-2000:])
    if fmt == "parquet":
        assert pq.ParquetFile(million / "out.parquet").metadata.num_rows == records
        assert err == f"d3dkmddi: wrote {records:,} records to out.parquet\n"
    elif command == "decode":
        assert err == ""
        assert (titles if fmt == "text" else lines) == records + (fmt == "csv")
    elif fmt == "csv":  # one row per finding, and a header
        assert lines == 1 + _findings_per_cycle(million) * records // len(SCALE_WORDS)
    elif fmt == "text":
        assert titles == records and tail.decode().splitlines()[-1].startswith(f"{records:,} records: ")
    else:
        assert lines == records
    assert time.monotonic() - started < 30


# ------------------------------------------------------------------ under -X dev -W error
def _dev(*args, cwd) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-X", "dev", "-W", "error", "-m", "d3dkmddi_py", *args]
    return subprocess.run(argv, capture_output=True, env=env(), cwd=cwd, timeout=60)


def test_a_good_run_is_clean_under_dev_mode(tmp_path):
    flags_file(tmp_path / "f.bin", range(64))
    for fmt in ("text", "json", "csv", "jsonl"):
        p = _dev("decode", "DXGK_SEGMENTFLAGS", "--file", "f.bin", "--count", "all", "--format", fmt, cwd=tmp_path)
        assert p.returncode == 0 and p.stderr == b"", (fmt, p.stderr.decode()[-2000:])


@pytest.mark.parametrize("case", ["partial", "enum-columns"])
def test_a_refused_file_input_is_one_line_under_dev_mode(tmp_path, case):
    (tmp_path / "in.bin").write_bytes(bytes(100))
    args = ["DXGK_ALLOCATIONINFO", "--file", "in.bin", "--count", "all"] if case == "partial" else \
        ["DXGK_SEGMENTTYPE", "--file", "in.bin", "--count", "all", "--format", "csv"]
    one_line(_dev("decode", *args, cwd=tmp_path))


# ------------------------------------------------------------------ output folders: checked before anything is made
def test_etw_tables_into_a_new_folder_inside_the_package_create_nothing_before_the_refusal():
    """``etw sample --format csv -o <package>/samples/newdir/sub`` made newdir/sub, then refused the files."""
    target = SAMPLES / "newdir" / "sub"
    err = one_line(cli("etw", "sample", "--format", "csv", "-o", target))
    assert "it is inside the installed package" in err
    assert not (SAMPLES / "newdir").exists()


@pytest.mark.parametrize("case", ["under a file", "a file", "special", "read-only parent", "a link into the package"])
def test_every_output_folder_is_checked_before_any_folder_is_made(tmp_path, case):
    (tmp_path / "file.txt").write_text("a file")
    (tmp_path / "locked").mkdir(mode=0o500)
    (tmp_path / "into-package").symlink_to(SAMPLES)
    folder, message = {"under a file": (tmp_path / "file.txt" / "new" / "sub", "file.txt is not a directory"),
                       "a file": (tmp_path / "file.txt", "it is not a directory"),
                       "special": (Path("/proc/self/new/sub"), "/proc is a special file system"),
                       "read-only parent": (tmp_path / "locked" / "new" / "sub", "locked is not writable"),
                       "a link into the package": (tmp_path / "into-package" / "new", "inside the installed package"),
                       }[case]
    if case == "read-only parent" and os.access(tmp_path / "locked", os.W_OK):
        pytest.skip("root may write anywhere")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    err = one_line(cli("etw", "sample", "--format", "jsonl", "-o", folder))
    assert message in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before and not (SAMPLES / "new").exists()


# ------------------------------------------------------------------ issue 30: memory inputs bounded by the input
def _small_dump(tmp_path) -> Path:
    from d3dkmddi_py.samples.dump_build import Machine, write_dump

    return write_dump(tmp_path / "small.dmp", Machine.holding({0xFFFFF8012A3B4000: b"\x85\x04\0\0"}), "kernel")


@pytest.mark.parametrize("flag", [["--dump"], ["--file", "--base", "0"]], ids=["dump", "file-base"])
def test_a_fifo_given_to_dump_or_file_with_base_is_refused_after_stat_without_blocking(tmp_path, flag):
    os.mkfifo(tmp_path / "fifo")
    argv = [flag[0], "fifo", *flag[1:]]
    what = "a crash dump" if flag == ["--dump"] else "a memory image"
    err = one_line(cli("decode", "DXGK_SEGMENTFLAGS", *argv, "--address", "0", cwd=tmp_path, timeout=30))
    assert err == f"d3dkmddi: error: fifo is a FIFO (a named pipe), not a regular file: {what} is read by address, " \
                  f"so save it to a file first\n"


def test_the_hint_for_dump_dev_zero_names_no_command_that_is_refused_too():
    """It said "for a raw memory image pass --file /dev/zero --base ADDRESS", which is refused in turn."""
    err = one_line(cli("decode", "DXGK_SEGMENTFLAGS", "--dump", "/dev/zero", "--address", "0", timeout=30))
    assert err == ("d3dkmddi: error: /dev/zero is a character device, not a regular file: a crash dump is read by "
                   "address, so save it to a file first\n")
    assert "--file /dev/zero" not in err
    again = one_line(cli("decode", "DXGK_SEGMENTFLAGS", "--file", "/dev/zero", "--base", "0", timeout=30))
    assert "/dev/zero is a character device, not a regular file: a memory image is read by address" in again


def test_a_count_of_10_12_from_a_small_dump_stops_at_the_first_gap(tmp_path):
    """It listed every missing 4 KB page of the 10**12 records before raising; 60 CPU seconds bound the child."""
    require(importlib.util.find_spec("kdmp_parser") is not None, "kdmp-parser (the test extra)")
    dump = _small_dump(tmp_path)
    err = one_line(cli("decode", "DXGK_SEGMENTFLAGS", "--dump", dump, "--address", "0", "--count", "1000000000000",
                       cwd=tmp_path, timeout=120, cpu_seconds=60, address_space=2 * GB))
    assert "small.dmp has no bytes at 00000000..00000fff (4096 bytes) of the 4000000000000 read at 00000000: it is " \
           "not mapped" in err and "the read stopped at this first missing page" in err
    out = good(cli("decode", "DXGK_SEGMENTFLAGS", "--dump", dump, "--address", "fffff801`2a3b4000", cwd=tmp_path))
    assert "+0x000 Value                             : UINT             0x485 (1157)" in out
