"""The one way d3dkmddi_py writes an output file.

Every writer (the CLI's ``--output``, ``write_records``, ``Columns.to_csv``...) goes through
:func:`open_output`, so the edges are decided here once:

- the output is checked before any work (:func:`check_output`): never one of the inputs
  (by any spelling or link), never a directory, device, FIFO, socket or /proc-/sys-/dev path;
- the bytes go to a temporary file beside the final one, which is renamed over it only
  when complete, so an existing file is never left truncated or half written;
- the temporary file is removed on every failure: an error, a full disk, Ctrl-C, SIGTERM;
- a new file gets ``0o666 & ~umask`` (the kernel applies the umask, no process-wide read);
  an existing file keeps its mode and owner; a symlink stays a link and its target changes.

The guard around a command-line run (``run_guarded``) lives beside the command, in ``guard.py``;
it shares SIGTERM's handling (:class:`Terminated`) with :func:`open_output`.
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import threading

from .errors import OutputError, bad_argument, shown

try:  # here, not when a file cannot be opened: importing it then may need a descriptor too
    import resource
except ImportError:  # not on Windows
    resource = None

__all__ = ["OutputError", "Terminated", "binary_stream", "check_output", "make_output_folder", "open_output",
           "remove_made_folders", "safe_name"]

PROG = "d3dkmddi"
EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 2, 130, 143

# Pseudo file systems: writing a "file" there talks to the kernel or a device.
# /dev/shm is a plain tmpfs of regular files, so it stays allowed.
_SPECIAL_ROOTS = ("/proc", "/sys", "/dev")
_SPECIAL_ALLOWED = ("/dev/shm",)
# errnos that a write in the body can only mean "the output cannot take these bytes".
_WRITE_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS") if hasattr(errno, n))


class Terminated(BaseException):
    """SIGTERM, raised in the main thread inside open_output/run_guarded so cleanup code runs.

    A BaseException like KeyboardInterrupt, so ``except Exception`` does not swallow it.
    """


def shadowed(word: str, option: str) -> str | None:
    """The note when the word for a bundled file (``sample``) is also a file in the working folder: the bundled one
    is read, and the user's is one ``./`` away."""
    if not os.path.lexists(word):
        return None
    return (f"{option}{' ' if option else ''}{word} reads the bundled file; ./{word} here is a file of that name: "
            f"give {option}{' ' if option else ''}./{word} to read it")


def safe_name(path) -> str:
    """A file name fit to echo in a one-line message: unchanged when every character is
    printable, else quoted with repr-style escapes (control characters, ESC, bidi overrides,
    undecodable bytes), so a name can neither break the line nor drive the terminal."""
    try:
        name = os.fspath(path)
    except TypeError:
        return repr(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if name and name.isprintable() and name == name.strip():
        return name
    return repr(name)


def _as_name(path, what: str = "output") -> str:
    if isinstance(path, bool) or not isinstance(path, (str, bytes, os.PathLike)):
        raise OutputError(path, f"{what} must be a path (str or os.PathLike) or '-', not {type(path).__name__}")
    name = os.fspath(path)
    return os.fsdecode(name) if isinstance(name, bytes) else name


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def _isatty(stream) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (OSError, ValueError):
        return False


def _special_root(path: str) -> str:
    for root in _SPECIAL_ROOTS:
        inside = path == root or path.startswith(root + "/")
        if inside and not any(path == ok or path.startswith(ok + "/") for ok in _SPECIAL_ALLOWED):
            return root
    return ""


def _link_chain(name: str) -> list:
    """The absolute path and each symlink hop of its last component, as written (unresolved)."""
    hops = [os.path.abspath(name)]
    for _ in range(40):
        try:
            target = os.readlink(hops[-1])
        except (OSError, ValueError):
            break
        hops.append(os.path.abspath(os.path.join(os.path.dirname(hops[-1]), target)))
    return hops


def _identity(file):
    """(st_dev, st_ino) of a path or an open descriptor (an int), or None when it cannot be looked at."""
    try:
        info = os.fstat(file) if isinstance(file, int) else os.stat(file)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _same_identity(a, b) -> bool:
    return a is not None and a == b


def _input_files(inputs):
    """(shown name, (st_dev, st_ino) or None) of every input that is a file; ``"-"`` is standard input,
    compared by its descriptor, so `--file - < a.bin -o a.bin` is caught like `--file a.bin`.  One path is
    one input (not its characters); None is none."""
    if inputs is None:
        return
    if isinstance(inputs, (str, os.PathLike)):
        inputs = (inputs,)
    elif isinstance(inputs, (bytes, bytearray)) or not callable(getattr(inputs, "__iter__", None)):
        raise bad_argument("inputs", inputs, "a list of the paths being read")
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):  # bytes here are data, never a file name
            continue
        other = _as_name(item, "input")
        if other == "":
            continue
        if other == "-":
            yield "standard input", _identity(0)
        else:
            yield safe_name(other), _identity(other)


def _package_folders() -> list:
    """The installed package's folder, and in a source checkout the repository's headers/ beside it
    (get_include()'s folder there): their samples and headers are inputs, never outputs."""
    package = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    headers = os.path.join(os.path.dirname(package), "headers")
    return [package] + ([headers] if os.path.isfile(os.path.join(headers, "d3dkmddi.h")) else [])


def _inside(path: str, folder: str) -> bool:
    path = os.path.realpath(path)
    return path == folder or path.startswith(folder + os.sep)


def check_output(path, *, inputs=(), binary: bool = False) -> str:
    """Refuse, with an OutputError, an output path that cannot be written safely; run it before any work.

    Returns ``"-"`` for standard output, else the file that will be replaced (the target
    of a symlink, resolved).  ``inputs``: the paths being read (str or os.PathLike;
    anything else, such as a bytes buffer or None, and ``"-"`` are ignored).  ``binary``:
    standard output is refused when it is a terminal.
    """
    name = _as_name(path)
    if name == "-":
        if binary and _isatty(sys.stdout):
            raise OutputError(name, "refusing to write binary output to a terminal; "
                                    "give an output path or redirect standard output")
        for item, other in _input_files(inputs):  # `>> a.bin` while a.bin is read
            if _same_identity(_identity(1), other):
                raise OutputError(name, f"cannot write standard output: it is the input {item} (the same file); "
                                        "redirect standard output to another path")
        return name
    shown = safe_name(name)

    def refuse(why: str, fix: str = "give the path of a regular file") -> None:
        raise OutputError(name, f"cannot write {shown}: {why}; {fix}")

    if "\0" in name:
        refuse("the name contains a NUL character")
    if name == "" or name.endswith(("/", os.sep)) or os.path.basename(name) in (".", ".."):
        refuse("it names a directory, not a file", "give a file name such as out.csv")
    final = os.path.realpath(name)
    try:
        info = os.stat(final)
    except FileNotFoundError:
        info = None
    except OSError as exc:  # a symlink loop, a component that is a file, no permission
        refuse(exc.strerror or str(exc))
    if info is not None and not stat.S_ISREG(info.st_mode):
        refuse(f"it is {_kind(info.st_mode)}", "give the path of a regular file (or - for standard output)")
    _refuse_places(name, final, refuse)
    mine = _identity(final)
    for item, other in _input_files(inputs):
        if _same_identity(mine, other):
            refuse(f"it is the input {item} (the same file)", "write the output to another path")
    folder = os.path.dirname(final) or os.curdir
    if not os.path.isdir(folder):
        refuse(f"directory {safe_name(folder)} does not exist", "create it first or write elsewhere")
    if not os.access(folder, os.W_OK | os.X_OK):
        refuse(f"directory {safe_name(folder)} is not writable", "write elsewhere")
    if info is not None and not os.access(final, os.W_OK):
        refuse("the file is read-only", "make it writable or write elsewhere")
    return final


def binary_stream(stream):
    """Where an open output takes bytes: a text stream's ``.buffer`` (``sys.stdout``'s), else the stream.
    A text stream without one (``io.StringIO``, ``cli.run``'s output) cannot take Parquet: OutputError."""
    if not callable(getattr(stream, "write", None)):
        raise OutputError(None, f"the output must be a path or an open file, not {shown(stream, 40)}")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return buffer
    if isinstance(stream, io.TextIOBase) or hasattr(stream, "encoding"):
        raise OutputError(None, f"Parquet is binary and the output is a text stream ({type(stream).__name__}) "
                                f"without a binary .buffer; write it to a file (--output PATH; from Python a "
                                f"path, or a file opened 'wb')")
    return stream


def _refuse_places(name: str, final: str, refuse) -> None:
    """Where no output goes, by any spelling or link: a special file system, the installed package."""
    hops = (*_link_chain(name), final)  # /dev/stdout resolves to the file stdout was redirected to
    for hop in hops:
        root = _special_root(hop)
        if root:
            refuse(f"{root} is a special file system", "write to a regular directory (or - for standard output)")
    for package in _package_folders():
        if any(_inside(hop, package) for hop in hops):
            refuse(f"it is inside the installed package ({safe_name(package)})", "write the output elsewhere")


def make_output_folder(path, made: list | None = None) -> str:
    """The folder an output's files are written into (``etw --format ... -o DIR``), created when missing only
    after every check, so a refused folder leaves nothing behind: not a NUL in the name, not something that
    exists and is not a directory, not a special file system or the installed package, not under a file or
    a folder that cannot be written.  Returns its real path; each file in it is then checked by check_output.
    ``made``: the folders this call creates are appended to it, deepest first (remove_made_folders)."""
    name = _as_name(path, "output folder")
    shown = safe_name(name)

    def refuse(why: str, fix: str = "give a directory (created if missing)") -> None:
        raise OutputError(name, f"cannot write into {shown}: {why}; {fix}")

    if name == "" or "\0" in name:
        refuse("the name is empty" if not name else "the name contains a NUL character")
    final = os.path.realpath(name)
    if os.path.lexists(final) and not os.path.isdir(final):
        refuse("it is not a directory")
    _refuse_places(name, final, refuse)
    existing = final
    while not os.path.lexists(existing):  # the nearest folder that is there: what mkdir writes into
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        refuse(f"{safe_name(existing)} is not a directory")
    if existing != final and not os.access(existing, os.W_OK | os.X_OK):
        refuse(f"directory {safe_name(existing)} is not writable", "write elsewhere")
    missing = []
    folder = final
    while folder != existing:
        missing.append(folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(final, exist_ok=True)
    except OSError as exc:
        refuse(f"it cannot be created: {exc.strerror or exc}", "write elsewhere")
    if made is not None:
        made.extend(missing)
    return final


def remove_made_folders(made: list) -> None:
    """After a failed or interrupted output: the folders make_output_folder created, deepest first, each
    removed only while it is still empty (a file someone else put there keeps it)."""
    for folder in made:
        try:
            os.rmdir(folder)
        except OSError:
            return


@contextlib.contextmanager
def _sigterm_raises():
    """While active in the main thread, SIGTERM raises Terminated (unless someone else handles it)."""
    import signal  # here, not at import: the command's start-up time counts

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        previous = None
    if previous is not signal.SIG_DFL:  # ignored on purpose, or the program has its own handler
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum, frame):
    raise Terminated(f"signal {signum}")


_TEMP_SUFFIX_BYTES = len(".") + 8 + len(".partial")  # after the final name's start: ".<8 hex digits>.partial"


def _temp_start(folder: str, base: str) -> str:
    """The start of the final name that a temporary name beside it keeps: ``"." + start + suffix`` fits the
    folder's NAME_MAX in bytes (a file system counts bytes; a multibyte name of 244 bytes is legal)."""
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows), or no such limit known
        limit = -1
    room = (limit if limit > 0 else 255) - 1 - _TEMP_SUFFIX_BYTES
    start = base[:max(room, 0)]  # every character takes at least one byte
    while len(os.fsencode(start)) > room:
        start = start[:-1]
    return start


def _create_beside(final: str):
    """A new file in the final file's directory: (fd, path).  Mode 0o666 so the kernel applies the umask."""
    folder, base = os.path.split(final)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_BINARY", 0)
    start = _temp_start(folder, base)
    while True:
        temp = os.path.join(folder, f".{start}.{os.urandom(4).hex()}.partial")
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue


def _keep_owner_and_mode(fd: int, final: str) -> None:
    try:
        info = os.stat(final)
    except FileNotFoundError:
        return
    if hasattr(os, "fchown") and (info.st_uid, info.st_gid) != _owner(fd):
        try:
            os.fchown(fd, info.st_uid, info.st_gid)  # before chmod: chown clears set-id bits
        except PermissionError:
            pass
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(info.st_mode))


def _owner(fd: int):
    info = os.fstat(fd)
    return info.st_uid, info.st_gid


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Parkable:
    """``open_output``'s temporary file when asked ``parkable``: ``park()`` closes its descriptor while it waits, and
    the next write opens it again to append (the same file: its device and inode are checked), so a writer of many
    files holds few descriptors.  Failing to open it again names the file and the process's open-file limit."""

    def __init__(self, fd: int, temp: str, name: str, binary: bool, encoding: str, newline: str):
        self._temp, self._name = temp, name
        self._mode = dict(mode="ab") if binary else dict(mode="a", encoding=encoding, newline=newline)
        info = os.fstat(fd)
        self._identity = (info.st_dev, info.st_ino)
        self._f = os.fdopen(fd, "wb" if binary else "w", **{k: v for k, v in self._mode.items() if k != "mode"})
        self.closed = False

    def _file(self):
        f = self._f
        if f is None:
            flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) \
                | getattr(os, "O_BINARY", 0)
            try:
                fd = os.open(self._temp, flags)
            except OSError as exc:
                if exc.errno not in _FILES_ERRNOS:
                    raise
                raise _too_many_files(self._name, exc) from None
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != self._identity:
                os.close(fd)
                raise OutputError(self._name, f"cannot write {safe_name(self._name)}: its temporary file was "
                                              f"replaced while it was written")
            mode = self._mode
            f = self._f = os.fdopen(fd, mode["mode"], **{k: v for k, v in mode.items() if k != "mode"})
        return f

    def write(self, data):
        return self._file().write(data)

    def flush(self) -> None:
        if self._f is not None:
            self._f.flush()

    def fileno(self) -> int:
        return self._file().fileno()

    def park(self) -> None:
        """Close the descriptor (what was written is flushed to the file) until the next write."""
        f, self._f = self._f, None
        if f is not None:
            f.close()

    def close(self) -> None:
        self.park()
        self.closed = True


_FILES_ERRNOS = frozenset((errno.EMFILE, errno.ENFILE))  # no descriptor left, the process's or the system's


def _too_many_files(name: str, exc: OSError) -> OutputError:
    """The one line for a file that cannot be opened for want of a descriptor, naming the process's limit."""
    limit = "the process's open-file limit" if resource is None else \
        f"the open-file limit is {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}"
    return OutputError(name, f"cannot write {safe_name(name)}: {exc.strerror} ({limit}: raise it with ulimit -n); "
                             f"nothing was written")


@contextlib.contextmanager
def open_output(path, *, binary: bool = False, inputs=(), encoding: str = "utf-8", newline: str = "",
                parkable: bool = False):
    """A file object for ``path`` that replaces it atomically when the block ends without error.

    ``"-"`` yields ``sys.stdout`` (its ``.buffer`` when ``binary``; ``encoding``/``newline``
    are then the stream's own).  Otherwise :func:`check_output` runs first, the bytes go to a
    temporary file in the final file's directory, and on success it is flushed, fsynced
    and renamed over the final file.  On any failure (an exception, a full disk, Ctrl-C,
    SIGTERM) the temporary file is removed and an existing file is left as it was.  A
    full disk and any failure to complete the file raise OutputError naming the path.
    Replacing a file gives it a new inode: other hard links to it keep the old content.
    ``parkable``: the file is a ``Parkable`` (its descriptor closed while it waits, opened again to append).
    """
    final = check_output(path, inputs=inputs, binary=binary)
    if final == "-":
        stream = sys.stdout
        if stream is None:
            raise OutputError("-", "cannot write standard output: it is closed")
        if binary:
            stream.flush()
            stream = getattr(stream, "buffer", stream)
        yield stream
        stream.flush()
        return
    name = _as_name(path)
    with _sigterm_raises():
        fd, temp, f, committing = None, None, None, False
        try:
            fd, temp = _create_beside(final)
            _keep_owner_and_mode(fd, final)
            if parkable:
                f = Parkable(fd, temp, name, binary, encoding, newline)
            else:
                f = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline=newline)
            fd = None
            yield f
            committing = True
            f.flush()
            os.fsync(f.fileno())
            f.close()
            os.replace(temp, final)
            temp = None
            _sync_folder(os.path.dirname(final))
        except BaseException as exc:
            _discard(fd, f, temp)
            if isinstance(exc, OSError) and exc.errno in _FILES_ERRNOS:
                raise _too_many_files(name, exc) from exc
            if isinstance(exc, OSError) and (committing or exc.errno in _WRITE_ERRNOS):
                existed = os.path.exists(final)
                reason = exc.strerror or str(exc)
                raise OutputError(name, f"cannot write {safe_name(name)}: {reason}; nothing was written"
                                        + (" and the existing file is unchanged" if existed else "")) from exc
            raise


def _discard(fd, f, temp) -> None:
    """Close and remove a temporary file; a second failure here must not hide the first."""
    if f is not None:
        try:
            f.close()
        except (OSError, ValueError):
            pass
    elif fd is not None:
        os.close(fd)
    if temp is not None:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass


EMIT_CHARS = 1 << 20  # text handed to the output at once: larger strings cost the kernel a page fault per page


def write_lines(out, items: list, sep: str = "\n", first: str = "") -> None:
    """``out.write(first + sep.join(items) + "\n")``, in pieces of about EMIT_CHARS (a fresh 20 MB string
    per chunk made writing a GB cost more in page faults than in copying), each text copied once."""
    if first:
        out.write(first)
    step = max(1, EMIT_CHARS // (len(items[0]) + len(sep)))
    for start in range(0, len(items), step):
        piece = items[start:start + step]
        last = start + step >= len(items)
        if not last or sep == "\n":
            piece.append("")  # the separator (or the final line end) after the last item
        out.write(sep.join(piece))
    if sep != "\n":
        out.write("\n")
