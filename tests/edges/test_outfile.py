"""Output files at the edges (issue 9): the input, links, modes, special files, failures, signals, pipes.

Every writer goes through d3dkmddi_py.outfile, so most cases are tried on open_output and
then once through write_records / Columns.to_csv, the writers a user calls.
"""
from __future__ import annotations

import errno
import importlib.util
import io
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.bulk import decode_array, iter_chunks, table as table_module, write_records
from d3dkmddi_py.bulk.write import Progress, write_columns
from d3dkmddi_py.errors import D3dkmddiError, OutputError
from d3dkmddi_py.guard import run_guarded
from d3dkmddi_py.outfile import Terminated, check_output, open_output, safe_name

from .commandline import cli

REPO = Path(__file__).resolve().parents[2]
ALLOC = kmd.target("x64", "WDDM3_1").DXGK_ALLOCATIONINFO
OLD = "old content\n"


def blob(n=30):
    return np.random.default_rng(9).integers(0, 256, ALLOC._layout_.size * n, dtype=np.uint8).tobytes()


def listing(folder: Path):
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


# ---------------------------------------------------------------- the output is the input
SPELLINGS = ["same", "relative", "dotted", "hard link", "symlink"]


def _input_spelled(tmp_path: Path, monkeypatch, spelling: str) -> tuple:
    """(input, its bytes, an output path naming the same file ``spelling``); the working directory is tmp_path."""
    data = blob()
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    if spelling == "hard link":
        os.link(src, tmp_path / "sub" / "other.bin")
    elif spelling == "symlink":
        os.symlink(src, tmp_path / "sub" / "other.bin")
    out = {"same": str(src), "relative": "./in.bin", "dotted": "sub/../in.bin",
           "hard link": "sub/other.bin", "symlink": Path("sub/other.bin")}[spelling]
    return src, data, out


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_output_that_is_the_input_is_refused_before_anything_is_written(tmp_path, monkeypatch, spelling):
    src, data, out = _input_spelled(tmp_path, monkeypatch, spelling)
    before = listing(tmp_path), listing(tmp_path / "sub")
    with pytest.raises(OutputError, match=r"is the input .*in\.bin \(the same file\)"):
        write_records(ALLOC, str(src), out, fmt="csv", progress=False)
    with pytest.raises(OutputError, match="the same file"):
        check_output(out, inputs=[src])
    assert src.read_bytes() == data
    assert (listing(tmp_path), listing(tmp_path / "sub")) == before
    if spelling == "symlink":
        assert os.path.islink(tmp_path / "sub" / "other.bin")


def _writers_of_columns(src: Path, pyarrow: bool):
    """Every writer of decoded columns, each given the columns or chunks of ``src`` and an output path."""
    columns = decode_array(ALLOC, src)
    yield "Columns.to_csv", columns.to_csv
    yield "Columns.to_jsonl", columns.to_jsonl
    if pyarrow:
        yield "Columns.to_parquet", columns.to_parquet
    yield "memmap Columns.to_csv", decode_array(ALLOC, np.memmap(src, mode="r")).to_csv
    for fmt in ("csv", "jsonl") + (("parquet",) if pyarrow else ()):
        yield f"write_columns {fmt}", lambda out, fmt=fmt: write_columns(iter_chunks(ALLOC, src, chunk_records=7), out,
                                                                         fmt=fmt)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_columns_writers_never_replace_their_own_input(tmp_path, monkeypatch, spelling):
    """``decode_array(T, "y.bin").to_csv("y.bin")`` replaced its input while write_records refused; every writer
    now knows the file its columns were read from."""
    src, data, out = _input_spelled(tmp_path, monkeypatch, spelling)
    before = listing(tmp_path), listing(tmp_path / "sub")
    for name, write in _writers_of_columns(Path("in.bin"), importlib.util.find_spec("pyarrow") is not None):
        with pytest.raises(OutputError, match=r"is the input .*in\.bin \(the same file\)"):
            write(out)
        assert src.read_bytes() == data, name
        assert (listing(tmp_path), listing(tmp_path / "sub")) == before, name


def test_a_later_chunk_read_from_the_output_stops_the_run_and_keeps_both_files(tmp_path):
    """Chunks of two files to one of them: the second file's chunk is refused before its rows are written;
    the output is written beside its name, so nothing has replaced it."""
    first, second = tmp_path / "a.bin", tmp_path / "b.bin"
    first.write_bytes(blob(3))
    second.write_bytes(blob(4))
    chunks = (c for path in (first, second) for c in iter_chunks(ALLOC, path))
    with pytest.raises(OutputError, match=r"cannot write .*b\.bin: it is the input .*b\.bin \(the same file\)"):
        write_columns(chunks, second, fmt="csv")
    assert second.read_bytes() == blob(4) and listing(tmp_path) == ["a.bin", "b.bin"]


def test_inputs_that_are_not_paths_or_other_files_are_no_conflict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "other.bin"
    other.write_bytes(b"same bytes")
    out = tmp_path / "out.bin"
    out.write_bytes(b"same bytes")  # equal content is not the same file
    assert check_output(out, inputs=[b"out.bin", None, "-", other]) == str(out)
    assert write_records(ALLOC, blob(2), out, fmt="csv", progress=False) == 2


# ---------------------------------------------------------------- modes and links
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    with open_output(tmp_path / "a.txt") as f:
        f.write("x")
    write_records(ALLOC, blob(3), tmp_path / "b.csv", fmt="csv", progress=False)
    decode_array(ALLOC, blob(3)).to_jsonl(tmp_path / "c.jsonl")
    for name in ("a.txt", "b.csv", "c.jsonl"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode, name


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_an_existing_file_keeps_its_mode(tmp_path, umask, mode):
    umask(0o077)
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    os.chmod(out, mode)
    write_records(ALLOC, blob(3), out, fmt="csv", progress=False)
    assert stat.S_IMODE(os.stat(out).st_mode) == mode
    assert out.read_text().startswith("record,")
    decode_array(ALLOC, blob(3)).to_csv(out)
    assert stat.S_IMODE(os.stat(out).st_mode) == mode


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_an_existing_file_keeps_its_owner(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    os.chown(out, 4321, 4322)
    with open_output(out) as f:
        f.write("new\n")
    info = os.stat(out)
    assert (info.st_uid, info.st_gid) == (4321, 4322) and out.read_text() == "new\n"


def test_a_symlink_stays_a_link_and_its_target_gets_the_content(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "data.csv"
    target.write_text(OLD)
    link = tmp_path / "link.csv"
    link.symlink_to(Path("real") / "data.csv")
    write_records(ALLOC, blob(4), link, fmt="csv", progress=False)
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "data.csv")
    assert len(target.read_text().splitlines()) == 5
    assert listing(tmp_path) == ["link.csv", "real"] and listing(tmp_path / "real") == ["data.csv"]
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "real" / "new.csv")
    with open_output(dangling) as f:
        f.write("made\n")
    assert dangling.is_symlink() and (tmp_path / "real" / "new.csv").read_text() == "made\n"


# ---------------------------------------------------------------- refused outputs
# The writers are only ever pointed at scratch paths: were the check to regress, a writer
# run as root would replace /dev/null or /dev/stdout with a regular file.  System paths
# go to check_output alone, which writes nothing whatever it decides.
def scratch_paths(tmp_path: Path):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "to-fifo").symlink_to(tmp_path / "fifo")
    return {"directory": (str(tmp_path / "folder"), "it is a directory"),
            "empty": ("", "names a directory"),
            "dot": (".", "names a directory"),
            "slash": (str(tmp_path / "nothing") + "/", "names a directory"),
            "fifo": (str(tmp_path / "fifo"), "it is a FIFO"),
            "link to a fifo": (str(tmp_path / "to-fifo"), "it is a FIFO"),
            "no parent": (str(tmp_path / "missing" / "out.csv"), "does not exist"),
            "loop": (str(tmp_path / "loop"), "symbolic links"),
            "nul": ("a\0b", "NUL")}


SCRATCH = ["directory", "empty", "dot", "slash", "fifo", "link to a fifo", "no parent", "loop", "nul"]


def assert_every_writer_refuses(path, message, folder: Path):
    before = listing(folder)
    for attempt in (lambda: check_output(path), lambda: open_output(path).__enter__(),
                    lambda: write_records(ALLOC, blob(2), path, fmt="jsonl", progress=False),
                    lambda: decode_array(ALLOC, blob(2)).to_csv(path)):
        with pytest.raises(OutputError, match=message) as info:
            attempt()
        assert isinstance(info.value, D3dkmddiError) and isinstance(info.value, ValueError)
        assert "\n" not in str(info.value) and "\0" not in str(info.value)
    assert listing(folder) == before


@pytest.mark.parametrize("case", SCRATCH)
def test_directories_fifos_and_missing_folders_are_refused_by_every_writer(tmp_path, monkeypatch, case):
    monkeypatch.chdir(tmp_path)
    path, message = scratch_paths(tmp_path)[case]
    assert_every_writer_refuses(path, message, tmp_path)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode) and (tmp_path / "folder").is_dir()


def test_a_device_is_refused_by_every_writer(tmp_path):
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("making a scratch device node needs CAP_MKNOD (system devices are checked below)")
    assert_every_writer_refuses(str(device), "it is a character device", tmp_path)
    assert stat.S_ISCHR(os.stat(device).st_mode)


@pytest.mark.parametrize("path, message", [
    ("/dev/null", "it is a character device"),
    ("/dev/stdout", "/dev is a special file system"),
    ("/proc/self/fd/1", "/proc is a special file system"),
    ("/proc/self/comm", "/proc is a special file system"),
    ("/sys/kernel/new-file", "/sys is a special file system"),
    ("/dev/new-file", "/dev is a special file system"),
    ("LINK", "/dev is a special file system"),
])
def test_devices_and_special_file_systems_are_refused(tmp_path, path, message):
    if path == "LINK":  # a link of the user's own to /dev/stdout, which resolves to wherever stdout goes
        path = tmp_path / "to-stdout"
        path.symlink_to("/dev/stdout")
    with pytest.raises(OutputError, match=message):
        check_output(path)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.path.islink("/dev/stdout")


def test_dev_shm_is_an_ordinary_folder():
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm here")
    assert check_output("/dev/shm/d3dkmddi-out.csv") == "/dev/shm/d3dkmddi-out.csv"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_a_read_only_directory_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    with pytest.raises(OutputError, match="is not writable"):
        check_output(folder / "out.csv")


def test_binary_output_to_a_terminal_is_refused_and_text_is_allowed(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    with pytest.raises(OutputError, match="binary output to a terminal"):
        check_output("-", binary=True)
    with pytest.raises(OutputError, match="binary output to a terminal"):
        write_records(ALLOC, blob(2), "-", fmt="parquet", progress=False)
    assert check_output("-") == "-"
    write_records(ALLOC, blob(2), "-", fmt="csv", progress=False)
    assert sys.stdout.getvalue().count("\n") == 3


def test_dash_is_standard_output(capsys):
    decode_array(ALLOC, blob(2)).to_jsonl("-")
    with open_output("-") as f:
        f.write("tail\n")
    assert capsys.readouterr().out.splitlines()[2:] == ["tail"]


# ---------------------------------------------------------------- failures leave nothing behind
def test_an_exception_in_the_block_leaves_no_temporary_and_the_old_file(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    with pytest.raises(RuntimeError, match="boom"):
        with open_output(out) as f:
            f.write("half")
            f.flush()
            assert len(listing(tmp_path)) == 2  # the temporary file exists beside it
            raise RuntimeError("boom")
    assert listing(tmp_path) == ["out.csv"] and out.read_text() == OLD


class FillsUp:
    """A file that takes ``room`` characters, then fails as a full disk does."""

    def __init__(self, real, room):
        self.real, self.room = real, room

    def write(self, text):
        if len(text) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(text)
        return self.real.write(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_full_disk_is_one_line_and_the_old_file_is_untouched(tmp_path, monkeypatch):
    src = tmp_path / "in.bin"
    src.write_bytes(blob(40))
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: FillsUp(real_fdopen(*a, **k), 2000))
    with pytest.raises(OutputError, match=r"^cannot write .*out\.csv: No space left on device; nothing was "
                                          r"written and the existing file is unchanged$"):
        write_records(ALLOC, src, out, fmt="csv", chunk_records=5, progress=False)
    assert listing(tmp_path) == ["in.bin", "out.csv"] and out.read_text() == OLD


def test_a_full_disk_at_the_final_flush_is_caught_too(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OutputError, match="No space left on device; nothing was written$"):
        decode_array(ALLOC, blob(3)).to_csv(out)
    assert listing(tmp_path) == []


def test_other_errors_in_the_block_are_not_renamed(tmp_path):
    with pytest.raises(PermissionError):
        with open_output(tmp_path / "out.csv"):
            raise PermissionError(errno.EACCES, "reading the input failed")
    assert listing(tmp_path) == []


def test_parquet_to_a_path_is_atomic_and_keeps_the_mode(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out.parquet"
    out.write_bytes(b"old")
    out.chmod(0o640)
    columns = decode_array(ALLOC, blob(5))
    columns.to_parquet(out)
    assert pq.read_table(out).num_rows == 5 and stat.S_IMODE(out.stat().st_mode) == 0o640
    write_records(ALLOC, blob(6), out, fmt="parquet", chunk_records=2, progress=False)
    assert pq.read_table(out).num_rows == 6 and listing(tmp_path) == ["out.parquet"]


def _name_of_bytes(length: int, character: str) -> str:
    """A name of ``length`` bytes (UTF-8): ``character`` repeated, topped up with ASCII."""
    width = len(character.encode())
    return character * (length // width) + "a" * (length % width)


@pytest.mark.parametrize("character", ["é", "日", "😀"])
def test_a_legal_long_name_of_multibyte_characters_is_written(tmp_path, character):
    """Names of 244-255 bytes are legal; the temporary name beside one was its first 100 characters (up to
    400 bytes) and failed with ENAMETOOLONG.  It is cut by bytes now, whole characters only."""
    for length in range(244, 256):
        name = _name_of_bytes(length, character)
        with open_output(tmp_path / name) as f:
            f.write(OLD)
        assert (tmp_path / name).read_text() == OLD
    assert len(listing(tmp_path)) == 12  # no temporary left beside them


def test_a_temporary_name_fits_the_folders_name_max_in_bytes(tmp_path, monkeypatch):
    """A file system with a smaller NAME_MAX (eCryptfs: 143) gets a temporary name that fits it."""
    seen = []
    real_open = os.open
    monkeypatch.setattr(os, "pathconf", lambda folder, name: 143 if name == "PC_NAME_MAX" else 0)
    monkeypatch.setattr(os, "open", lambda path, *a: seen.append(os.path.basename(path)) or real_open(path, *a))
    name = _name_of_bytes(140, "日")
    with open_output(tmp_path / name) as f:
        f.write(OLD)
    assert (tmp_path / name).read_text() == OLD
    temporary = next(n for n in seen if n.endswith(".partial"))
    assert len(os.fsencode(temporary)) <= 143 and temporary.startswith("." + "日" * 41 + ".")


def test_a_legal_long_name_on_the_command_line(tmp_path):
    name = _name_of_bytes(255, "日")
    p = cli("decode", "DXGK_SEGMENTFLAGS", "0x485", "--format", "json", "-o", name, cwd=tmp_path)
    assert p.returncode == 0 and p.stderr.decode() == f"d3dkmddi: wrote 1 record to {name}\n"
    assert '"Value"' in (tmp_path / name).read_text()


def test_sigterm_is_handled_only_inside_and_restored_after(tmp_path):
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(Terminated):
            with open_output(tmp_path / "out.csv") as f:
                f.write("x")
                assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(100_000):  # the handler runs between bytecodes, at once
                    pass
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert listing(tmp_path) == []


# ---------------------------------------------------------------- names in messages
@pytest.mark.parametrize("name, shown", [
    ("out.csv", "out.csv"),
    ("résumé 1.csv", "résumé 1.csv"),
    ("a\nb.csv", "'a\\nb.csv'"),
    ("\x1b[31mred", "'\\x1b[31mred'"),
    ("evil\u202egpj.csv", "'evil\\u202egpj.csv'"),
    (b"bad\xff.csv", "'bad\\udcff.csv'"),
    (" lead", "' lead'"),
    ("", "''"),
])
def test_safe_name(name, shown):
    assert safe_name(name) == shown


def test_messages_echo_names_without_control_characters(tmp_path):
    folder = tmp_path / "a\nb\x1b[2J"
    folder.mkdir()
    with pytest.raises(OutputError) as info:
        check_output(folder)
    text = str(info.value)
    assert all(c.isprintable() for c in text) and "\\n" in text and "\\x1b" in text


# ---------------------------------------------------------------- the command-line guard
def test_run_guarded_passes_the_status_through_and_turns_ctrl_c_into_130(capsys):
    assert run_guarded(lambda: 3) == 3

    def interrupted():
        raise KeyboardInterrupt

    assert run_guarded(interrupted) == 130
    assert capsys.readouterr().err == "d3dkmddi: interrupted\n"
    with pytest.raises(ZeroDivisionError):  # a real bug still shows its traceback
        run_guarded(lambda: 1 // 0)


def python(script: str, *args, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for name in ("PYTHONWARNINGS", "PYTHONUNBUFFERED"):  # a user's default: stdout to a pipe is buffered
        env.pop(name, None)
    return [sys.executable, "-c", textwrap.dedent(script), *args], dict(env=env, cwd=REPO, **kwargs)


SLOW_WRITER = """
    import os, signal, sys, time
    from d3dkmddi_py.guard import run_guarded
    from d3dkmddi_py.outfile import open_output
    signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test runner ignores
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def main():
        with open_output(sys.argv[1]) as f:
            f.write("new\\n")
            f.flush()
            print("READY", flush=True)
            for _ in range(3000):
                f.write("more\\n")
                f.flush()
                time.sleep(0.01)
        return 0

    sys.exit(run_guarded(main))
"""


@pytest.mark.parametrize("signum, status, line", [(signal.SIGINT, 130, "d3dkmddi: interrupted\n"),
                                                   (signal.SIGTERM, 143, "d3dkmddi: terminated\n")])
def test_a_signal_while_writing_removes_the_temporary_and_keeps_the_old_file(tmp_path, signum, status, line):
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    argv, kw = python(SLOW_WRITER, str(out))
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        assert child.stdout.readline() == "READY\n"
        assert len(listing(tmp_path)) == 2  # the temporary file is there while writing
        child.send_signal(signum)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert (child.returncode, err) == (status, line)
    assert listing(tmp_path) == ["out.csv"] and out.read_text() == OLD


def test_a_closed_pipe_ends_quietly(tmp_path):
    argv, kw = python("""
        import sys
        from d3dkmddi_py.guard import run_guarded
        from d3dkmddi_py.outfile import open_output

        def main():
            with open_output("-") as f:
                for i in range(2_000_000):
                    f.write(f"{i},0,0,0\\n")
            return 0

        sys.exit(run_guarded(main))
    """)
    err = tmp_path / "err.txt"
    with open(err, "wb") as errors:
        writer = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, **kw)
        head = subprocess.run(["head", "-c", "10"], stdin=writer.stdout, capture_output=True, timeout=60)
        writer.stdout.close()
        assert writer.wait(timeout=60) == 0
    assert head.stdout == b"0,0,0,0\n1,"
    assert err.read_text() == ""


def test_a_pipe_closed_before_the_final_flush_keeps_the_status():
    argv, kw = python("""
        import os, sys
        from d3dkmddi_py.guard import run_guarded
        read, write = os.pipe()
        os.dup2(write, 1)
        os.close(read)
        os.close(write)

        def main():
            sys.stdout.write("buffered, flushed at the end\\n")
            return 3

        sys.exit(run_guarded(main))
    """)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)
    assert (done.returncode, done.stderr) == (3, "")


@pytest.mark.parametrize("how", ["closed at start", "closed while running", "stdout and stderr closed",
                                 "stdin closed"])
def test_a_closed_standard_stream_gives_one_line_and_no_traceback(how):
    script = """
        import os, sys
        from d3dkmddi_py.guard import run_guarded

        def main():
            if sys.argv[1] == "closed while running":
                os.close(1)
            if sys.argv[1] == "stdin closed":
                sys.stdin.buffer.read()
            print("some output")
            return 0

        sys.exit(run_guarded(main))
    """
    argv, kw = python(script, how)
    command = " ".join(map(_quote, argv)) + {"closed at start": " >&-", "closed while running": "",
                                              "stdout and stderr closed": " >&- 2>&-", "stdin closed": " <&-"}[how]
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, **kw)
    assert done.returncode == 2
    expected = "" if how == "stdout and stderr closed" else \
        "d3dkmddi: error: standard input is closed\n" if how == "stdin closed" else \
        "d3dkmddi: error: standard output is closed\n" if how == "closed at start" else \
        "d3dkmddi: error: standard output is closed (Bad file descriptor)\n"
    assert done.stderr == expected


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_an_interrupted_run_ends_the_progress_line_so_the_message_stands_alone(tmp_path, monkeypatch):
    src = tmp_path / "in.bin"
    src.write_bytes(blob(30))
    real = table_module.CsvWriter.write
    calls = []

    def interrupted_write(self, table):
        calls.append(table.rows)
        if len(calls) == 3:  # the third chunk
            raise KeyboardInterrupt
        return real(self, table)

    monkeypatch.setattr(table_module.CsvWriter, "write", interrupted_write)
    stream = io.StringIO()
    bar = Progress("DXGK_ALLOCATIONINFO", 30, stream, delay=0.0)
    with pytest.raises(KeyboardInterrupt):
        write_columns(iter_chunks(ALLOC, src, chunk_records=10), tmp_path / "out.csv", fmt="csv", progress=bar)
    assert stream.getvalue().endswith(" s\n") and "20/30 records" in stream.getvalue()
    assert listing(tmp_path) == ["in.bin"]
