"""Issue 14, "Files and streams": each case replaced a file, printed a traceback or pointed at the wrong
thing on commit 137d756.  Run through the real command in a subprocess."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from .commandline import ALLOCATIONS, REPO, SAMPLES, SEGMENTS, WDDM3_0, cli, env, good, one_line, shell

TRACE = SAMPLES / "etw_trace.xml"


def _copy(tmp_path, source=ALLOCATIONS, name="a.bin"):
    target = tmp_path / name
    shutil.copyfile(source, target)
    return target


@pytest.mark.parametrize("how", ["file", "windbg", "segments", "etw"])
def test_output_equal_to_standard_input_is_refused(tmp_path, how):
    """`--file - < a.bin -o a.bin` replaced a.bin: standard input is compared by its descriptor."""
    source = {"windbg": SAMPLES / "allocations.dq.txt", "segments": SEGMENTS, "etw": TRACE}.get(how, ALLOCATIONS)
    target = _copy(tmp_path, source, "in" + source.suffix)
    before = target.read_bytes()
    args = {"file": ["decode", "DXGK_ALLOCATIONINFO", "--file", "-", "--count", "all", "--format", "csv"],
            "windbg": ["decode", "DXGK_ALLOCATIONINFO", "--windbg", "-", "--count", "all", "--format", "csv"],
            "segments": ["validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--segments", "-",
                         "--format", "csv", *WDDM3_0],
            "etw": ["etw", "-", "--format", "csv"]}[how]
    out = target
    if how == "etw":  # the tables go into a directory: one of them is the input
        out = tmp_path / "tables"
        out.mkdir()
        target = out / "allocations.csv"
        target.write_bytes(before)
    with open(target, "rb") as stdin:
        p = cli(*args, "-o", out, stdin=stdin)
    err = one_line(p)
    assert "standard input" in err and "the same file" in err, err
    assert target.read_bytes() == before


def test_standard_output_appended_to_the_input_is_refused(tmp_path):
    """`--file a.bin >> a.bin` would grow the file it reads."""
    target = _copy(tmp_path)
    before = target.read_bytes()
    p = shell(f"$D decode DXGK_ALLOCATIONINFO --file {target} --count all >> {target}", cwd=tmp_path)
    assert "is the input" in one_line(p), p.stderr
    assert target.read_bytes() == before


@pytest.mark.parametrize("args", [["etw", "sample", "--format", "csv", "-o", SAMPLES],
                                  ["decode", "DXGK_SEGMENTFLAGS", "0x485", "-o", SAMPLES / "new.txt"],
                                  ["decode", "DXGK_SEGMENTFLAGS", "0x485", "-o", REPO / "d3dkmddi_py" / "cli.py"]],
                         ids=["the-samples-directory", "a-new-file-in-the-package", "a-module"])
def test_package_files_are_never_outputs(args):
    before = {p: p.read_bytes() for p in (TRACE, REPO / "d3dkmddi_py" / "cli.py")}
    listed = sorted(SAMPLES.iterdir())
    err = one_line(cli(*args))
    assert "the same file" in err or "inside the installed package" in err, err
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(SAMPLES.iterdir()) == listed  # no table, no temporary file


def test_package_files_are_never_outputs_through_a_symlink(tmp_path):
    link = tmp_path / "link.xml"
    link.symlink_to(TRACE)
    before = TRACE.read_bytes()
    assert "inside the installed package" in one_line(cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "-o", link))
    assert TRACE.read_bytes() == before


STDOUT_COMMANDS = [
    ["--help"], ["--version"], ["decode", "--help"], ["etw", "--help"], ["types"], ["types", "--json"],
    ["layout", "DXGK_ALLOCATIONINFO"], ["decode", "DXGK_SEGMENTFLAGS", "0x485"], ["demo"], ["etw", "sample"],
    ["etw", "sample", "--json"],
    ["decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--count", "all", "--format", "csv"],
    ["validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--count", "all", *WDDM3_0],
]


@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=[" ".join(map(str, a))[:40] for a in STDOUT_COMMANDS])
@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_standard_output_on_dev_full_is_one_line(args, buffered):
    with open("/dev/full", "wb") as full:
        p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *map(str, args)], stdout=full,
                           stderr=subprocess.PIPE, env=dict(env(), PYTHONUNBUFFERED="" if buffered else "1"),
                           timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2 and "Traceback" not in err, err
    assert err == "d3dkmddi: error: cannot write standard output: No space left on device\n", err


INTERRUPT_WHILE_LOADING = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
from d3dkmddi_py.__main__ import main
sys.exit(main(["types"]))
"""


@pytest.mark.parametrize("module", ["d3dkmddi_py.cli", "d3dkmddi_py.pipeline", "d3dkmddi_py.render"])
def test_ctrl_c_while_the_command_loads_is_one_line(module):
    """Ctrl-C during start-up: the command's modules load inside the guard of __main__.main."""
    p = subprocess.run([sys.executable, "-c", INTERRUPT_WHILE_LOADING.format(module=module)], capture_output=True,
                       env=env(), timeout=60)
    assert (p.returncode, p.stderr) == (130, b"d3dkmddi: interrupted\n"), p.stderr[-2000:]


def test_the_console_script_is_the_guarded_entry():
    text = (REPO / "pyproject.toml").read_text()
    assert 'd3dkmddi = "d3dkmddi_py.__main__:main"' in text


@pytest.mark.parametrize("command", ["decode", "validate"])
def test_a_parquet_writer_after_sigterm_prints_no_traceback(tmp_path, command):
    """SIGTERM mid-run: the writer is closed before its file goes, so its destructor has nothing to say."""
    pytest.importorskip("pyarrow")
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * (48 << 12))  # 12 MiB of flag words: long enough to interrupt
    out = tmp_path / "o.parquet"
    p = subprocess.Popen([sys.executable, "-m", "d3dkmddi_py", command, "DXGK_SEGMENTFLAGS", "--file", str(big),
                          "--count", "all", "--format", "parquet", "-o", str(out)],
                         stderr=subprocess.PIPE, env=env())
    deadline = time.monotonic() + 60
    def writing() -> bool:  # SIGTERM once the writer has written to its file, as the case is
        return any(part.stat().st_size for part in tmp_path.glob(".o.parquet.*.partial"))

    while not writing() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    if p.returncode == 0:
        pytest.fail("the run ended before SIGTERM; make the input larger")
    assert (p.returncode, err) == (143, b"d3dkmddi: terminated\n"), err[-2000:]
    assert not out.exists() and not list(tmp_path.glob(".*partial"))


@pytest.mark.parametrize("args,status", [(["decode", "NO_SUCH_TYPE", "0"], 2), (["--no-such-option"], 2),
                                         (["decode", "DXGK_SEGMENTFLAGS", "0x485"], 0),
                                         (["validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS,
                                           "--count", "all", *WDDM3_0], 1)],
                         ids=["bad-type", "bad-option", "good", "findings"])
def test_closed_standard_error_keeps_the_exit_status(tmp_path, args, status):
    """2 for usage errors, 1 for findings, 0 for a clean run, whatever standard error is."""
    p = shell("$D " + " ".join(f"'{a}'" for a in args) + " >/dev/null 2>&-", cwd=tmp_path)
    assert p.returncode == status, p.stderr


def test_closed_standard_input_is_said_once(tmp_path):
    p = shell("$D decode DXGK_SEGMENTFLAGS --file - <&-", cwd=tmp_path)
    assert one_line(p) == "d3dkmddi: error: standard input is closed; give --file PATH\n"


@pytest.mark.parametrize("source", ["/dev/zero", "-"])
def test_a_huge_offset_on_an_unsized_input_names_the_offset(source):
    with open("/dev/zero", "rb") as zero:
        p = cli("decode", "DXGK_SEGMENTFLAGS", "--file", source, "--offset", "0x7fffffffffffffff", stdin=zero)
    err = one_line(p)
    assert "--offset" in err and "9,223,372,036,854,775,811" in err, err


def test_dev_shm_is_written_as_the_readme_says():
    """/dev/shm is a tmpfs of regular files: written like any folder, and the documentation says so."""
    readme = (REPO / "docs" / "command-line.md").read_text()
    assert "except `/dev/shm`" in readme
    out = "/dev/shm/d3dkmddi-corner-test.txt"
    try:
        good(cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "-o", out))
        with open(out) as f:
            assert "Value" in f.read()
    finally:
        if os.path.exists(out):
            os.unlink(out)
    assert "/dev is a special file system" in one_line(cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "-o", "/dev/x"))


def test_good_runs_still_write(tmp_path):
    out = tmp_path / "o.csv"
    good(cli("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--count", "all", "--format", "csv", "-o", out))
    assert out.read_text().count("\n") == 36
