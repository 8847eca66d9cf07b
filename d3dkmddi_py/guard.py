"""The guard around a command-line run: Ctrl-C, SIGTERM, a closed pipe and a closed standard stream
become one line and an exit status instead of a traceback (``run_guarded``)."""
from __future__ import annotations

import errno
import os
import sys

from .outfile import _WRITE_ERRNOS, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, PROG, Terminated, _sigterm_raises

__all__ = ["is_closed_stream", "run_guarded"]


class _ClosedStream:
    """Stands for a standard stream that was closed when the program started (``>&-``):
    any use raises OSError(EBADF), which run_guarded reports in one line."""

    def __init__(self, what: str):
        self.what = what
        self.buffer = self

    def _fail(self, *args, **kwargs):
        raise OSError(errno.EBADF, f"standard {self.what} is closed")

    write = writelines = flush = read = readline = readlines = read1 = readinto = fileno = _fail

    def isatty(self) -> bool:
        return False

    def __iter__(self):
        self._fail()


def is_closed_stream(stream) -> bool:
    """Whether ``stream`` stands for a standard stream that was closed when the command started."""
    return isinstance(stream, _ClosedStream)


def _fill_closed_descriptors() -> dict:
    """Put /dev/null on a closed fd 0, 1 or 2, so no file opened later lands there and
    receives stray output; a closed stream's sys.stdin/stdout/stderr stays unusable."""
    replaced = {}
    for fd, attr, what in ((0, "stdin", "input"), (1, "stdout", "output"), (2, "stderr", "error")):
        closed = getattr(sys, attr) is None
        try:
            os.fstat(fd)
        except OSError as exc:
            if exc.errno != errno.EBADF:
                continue
            closed = True
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if closed:
            replaced[attr] = getattr(sys, attr)
            # errors about a closed stderr have nowhere to go: it takes them (into /dev/null) and the
            # exit status still says what happened (2 bad input, 1 findings)
            setattr(sys, attr, os.fdopen(fd, "w", closefd=False) if attr == "stderr" else _ClosedStream(what))
    return replaced


def _quiet(stream) -> None:
    """Point a failed stream's descriptor at /dev/null, so the flush at interpreter exit
    neither fails nor prints "Exception ignored ... BrokenPipeError"."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    if null != fd:  # a closed fd is the lowest free one, so /dev/null may already be on it
        os.dup2(null, fd)
        os.close(null)


def _say(text: str) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"{PROG}: {text}\n")
        stream.flush()
    except (OSError, ValueError):
        _quiet(stream)


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not isinstance(stream, _ClosedStream):
            stream.flush()


def _closed_stream(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno == errno.EBADF
    streams = (sys.stdin, sys.stdout, sys.stderr)
    return isinstance(exc, ValueError) and "closed file" in str(exc) and \
        any(getattr(s, "closed", False) for s in streams if s is not None)


def _closed_reason(exc: BaseException) -> str:
    """Which standard stream is closed, in words (a _ClosedStream's error already says)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if reason.startswith("standard "):
        return reason
    for fd, what in ((1, "output"), (0, "input"), (2, "error")):
        try:
            os.fstat(fd)
        except OSError:
            return f"standard {what} is closed ({reason})"
    return reason


def run_guarded(fn) -> int:
    """Run ``fn()`` (a command's main, returning its exit status) and return the status for sys.exit.

    Ctrl-C prints ``d3dkmddi: interrupted`` and gives 130; SIGTERM ``d3dkmddi: terminated``
    and 143; running out of memory prints one line and gives 2; a closed pipe on standard output (``| head``) ends quietly with fn's status (0
    when fn did not finish); a closed standard stream (``>&-``) prints one line if standard
    error works and gives 2.  None of them prints a traceback; any other exception propagates.
    """
    status = None
    replaced = _fill_closed_descriptors()
    try:
        with _sigterm_raises():
            try:
                status = fn()
                _flush_std()  # surface a closed pipe now, not in the interpreter's exit flush
                return status
            except KeyboardInterrupt:
                _say("interrupted")
                return EXIT_INTERRUPTED
            except Terminated:
                _say("terminated")
                return EXIT_TERMINATED
            except MemoryError:
                _quiet_if_failing(sys.stdout)
                _say("error: out of memory: the run needed more memory than this process may use; "
                     "raise its limit (ulimit -v) or read less at once (--count, fewer records per file)")
                return EXIT_USAGE
            except (OSError, ValueError) as exc:
                if isinstance(exc, BrokenPipeError) or getattr(exc, "errno", None) == errno.EPIPE:
                    for stream in (sys.stdout, sys.stderr):
                        _quiet_if_failing(stream)
                    return status if status is not None else 0
                if _closed_stream(exc):
                    reason = _closed_reason(exc)
                elif isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS:
                    # files go through open_output (an OutputError): a raw write error is standard output's
                    reason = f"cannot write standard output: {exc.strerror}"  # > /dev/full, a full disk
                else:
                    raise
                _quiet_if_failing(sys.stdout)
                _say(f"error: {reason}")
                return EXIT_USAGE
    finally:
        for attr, value in replaced.items():
            setattr(sys, attr, value)


def _quiet_if_failing(stream) -> None:
    if stream is None or isinstance(stream, _ClosedStream):
        return
    try:
        stream.flush()
    except (OSError, ValueError):
        _quiet(stream)
