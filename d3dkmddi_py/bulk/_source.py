"""What to decode and from where: the type, its target, and a checked byte range.

Every check happens here, before a byte is decoded, so a bad offset or a file of
the wrong length fails at once with the numbers a user needs to fix the call.
"""
from __future__ import annotations

import os

from .._numpy import loaded_numpy, numpy_module
from .._records import dataclass
from ..errors import BulkInputError, DecodeError, InvalidArgument  # noqa: F401  (re-exported)
from ..outfile import safe_name
from ..resolve import resolve_layout
from ..span import check_range


def struct_layout(type_, target=None):
    """The TypeLayout of the struct or union to decode: a d3dkmddi_py class (which keeps its own
    target), or a C name looked up in ``target``, as ``decode`` looks it up; an enum is refused."""
    layout = resolve_layout(type_, target)
    if layout.kind == "enum":
        raise InvalidArgument(f"{layout.c_name} is an enum, not a struct or union; decode the struct that holds "
                              f"it (an MSVC enum is a 4-byte signed int)")
    return layout


@dataclass(frozen=True)
class Span:
    """A checked byte range: ``count`` records of ``record_size`` bytes from ``offset``."""

    offset: int
    count: int
    record_size: int

    @property
    def stop(self) -> int:
        return self.offset + self.count * self.record_size


def check_span(layout, available: int, offset, count) -> Span:
    """The records ``offset``/``count`` select from ``available`` bytes (pipeline.check_range, where an
    empty input is zero records), or a BulkInputError."""
    return Span._new(*records_in(layout, available, offset, count), layout.size)


def records_in(layout, available: int, offset, count) -> tuple:
    """``check_span``'s (first byte, records)."""
    if offset.__class__ is int and offset == 0 and count is None and available % layout.size == 0:
        # every whole record from the first byte: check_range's answer without its work, which costs a few
        # microseconds (a sixth of decoding one record); anything else is asked of it
        return 0, available // layout.size
    return check_range(layout, available, "the data", offset, count, empty_ok=True)


class Source:
    """Bytes to decode: an in-memory buffer or a file, opened one range at a time.

    A file is read range by range (read, never memory-mapped: a file that shrinks while it is read
    is an error, not a SIGBUS), so a chunked decode of a file larger than memory holds one chunk.
    """

    def __init__(self, data):
        self.path = None
        self._buffer = None
        self.inputs = ()  # the file the bytes come from, which no writer may replace: a path's, a memmap's
        if data.__class__ is bytes:  # the commonest, first: NumPy reads bytes as they are
            self._buffer, self.size = data, len(data)
            return
        if isinstance(data, (str, os.PathLike)):
            path = os.fspath(data)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not os.path.exists(path):
                raise DecodeError(f"cannot read {safe_name(path)}: no such file (nothing was decoded)")
            if os.path.isdir(path):
                raise DecodeError(f"cannot read {safe_name(path)}: it is a directory, not a blob file")
            self.path = path
            self.size = os.path.getsize(path)
            self.inputs = (path,)
            return
        if _is_ndarray(data):
            np = numpy_module()
            if isinstance(data, np.memmap) and isinstance(data.filename, (str, os.PathLike)):
                self.inputs = (os.fspath(data.filename),)
            array = np.ascontiguousarray(data).reshape(-1)
            self._buffer = array.view(np.uint8)
            self.size = self._buffer.nbytes
            return
        try:
            view = memoryview(data)
        except TypeError:
            raise InvalidArgument(f"data must be bytes, a bytearray, a memoryview, a NumPy array or a path, "
                            f"not {type(data).__name__}") from None
        if not view.c_contiguous:
            raise InvalidArgument("data is a non-contiguous memoryview; pass bytes(view) or a contiguous buffer")
        self._buffer = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        self.size = self._buffer.nbytes

    def numpy_range(self, start: int, stop: int):
        """Bytes [start, stop) as a NumPy uint8 array (read from a file, never mapped)."""
        np = numpy_module()
        if self._buffer.__class__ is bytes:
            return np.frombuffer(self._buffer, dtype=np.uint8, count=stop - start, offset=start)
        if self.path is None:
            if _is_ndarray(self._buffer):
                return self._buffer[start:stop]
            return np.frombuffer(self._buffer, dtype=np.uint8, count=stop - start, offset=start)
        out = np.empty(stop - start, dtype=np.uint8)
        self._read_into(memoryview(out), start)
        return out

    def memoryview_range(self, start: int, stop: int):
        """Bytes [start, stop) as a memoryview; no NumPy needed."""
        if self.path is None:
            return memoryview(self._buffer)[start:stop]
        out = bytearray(stop - start)
        self._read_into(memoryview(out), start)
        return memoryview(out)

    def _read_into(self, view, start: int) -> None:
        """Fill ``view`` from the file at ``start``.  A read, not a mapping: a file that shrinks while
        it is read gives an error here, where a mapping would kill the process with SIGBUS."""
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                got = f.readinto(view)
                while got < len(view):
                    more = f.readinto(view[got:])
                    if not more:
                        break
                    got += more
        except OSError as exc:
            raise DecodeError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if got != len(view):
            raise DecodeError(f"{self.path} changed size while it was read (it had {self.size} bytes; "
                              f"{start + got} were there); read a copy that nothing is writing to")


def _is_ndarray(obj) -> bool:
    numpy = loaded_numpy()
    return numpy is not None and isinstance(obj, numpy.ndarray)
