"""What to decode and from where: the type, its target, and a checked byte range.

Every check happens here, before a byte is decoded, so a bad offset or a file of
the wrong length fails at once with the numbers a user needs to fix the call.
"""
from __future__ import annotations

import errno
import mmap
import operator
import os
import sys
from dataclasses import dataclass

from ..errors import BulkInputError  # noqa: F401  (re-exported)


def resolve_type(type_, target=None):
    """The struct or union class to decode: a d3dkmddi_py class (which keeps its own target),
    or a C name looked up in ``target`` (a Target, an abi name, an (abi, version) pair, or None
    for x64 at the newest version), as ``decode`` looks it up."""
    from ..decoding import resolve_type as resolve_decodable

    cls, _tgt = resolve_decodable(type_, target)
    if not hasattr(cls, "_leaves_"):
        raise TypeError(f"{cls.__name__} is an enum, not a struct or union; decode the struct that holds it "
                        f"(an MSVC enum is a 4-byte signed int)")
    return cls


@dataclass(frozen=True)
class Span:
    """A checked byte range: ``count`` records of ``record_size`` bytes from ``offset``."""

    offset: int
    count: int
    record_size: int

    @property
    def stop(self) -> int:
        return self.offset + self.count * self.record_size


def _as_index(value, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__} ({value!r})") from None


def check_span(cls, available: int, offset, count) -> Span:
    """The records ``offset``/``count`` select from ``available`` bytes, or a BulkInputError."""
    size = cls._layout_.size
    name, label = cls._c_name_, cls._target_label_
    offset = _as_index(offset, "offset")
    if count is not None:
        count = _as_index(count, "count")

    def fail(message, hint):
        raise BulkInputError(message, type_name=name, record_size=size, offset=offset, count=count,
                             available=available, hint=hint)

    if offset < 0:
        fail(f"offset {offset} is negative", f"pass a byte offset 0..{available:#x}")
    if offset > available:
        fail(f"offset {offset:#x} is past the end of the data ({available:,} bytes = {available:#x})",
             f"pass an offset 0..{available:#x}")
    room = available - offset
    whole, extra = divmod(room, size)
    if count is None:
        if extra:
            fail(f"{room:,} bytes from offset {offset:#x} are not a whole number of {name} records "
                 f"({size} bytes each at {label}): {whole:,} records and {extra} bytes left over",
                 f"pass count={whole} to decode the whole records, or check the offset and the target "
                 f"(abi and interface version change the size)")
        return Span(offset, whole, size)
    if count < 0:
        fail(f"count {count} is negative", f"pass a count 0..{whole} or count=None for every record")
    if count > whole:
        fail(f"count {count:,} needs {count * size:,} bytes of {name} ({size} bytes each at {label}) "
             f"from offset {offset:#x}, but only {room:,} bytes ({whole:,} whole records) are there",
             f"pass a count 0..{whole} or count=None")
    return Span(offset, count, size)


class Source:
    """Bytes to decode: an in-memory buffer or a file, opened one range at a time.

    A file is memory-mapped range by range and never read whole, so a chunked
    decode of a file larger than memory keeps only one chunk mapped.
    """

    def __init__(self, data):
        self.path = None
        self._buffer = None
        if isinstance(data, (str, os.PathLike)):
            path = os.fspath(data)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not os.path.exists(path):
                raise FileNotFoundError(errno.ENOENT, f"no such file: {path!r} (nothing was decoded)", path)
            if os.path.isdir(path):
                raise IsADirectoryError(errno.EISDIR, f"{path!r} is a directory, not a blob file", path)
            self.path = path
            self.size = os.path.getsize(path)
            return
        if _is_ndarray(data):
            import numpy as np

            array = np.ascontiguousarray(data).reshape(-1)
            self._buffer = array.view(np.uint8)
            self.size = self._buffer.nbytes
            return
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(f"data must be bytes, a bytearray, a memoryview, a NumPy array or a path, "
                            f"not {type(data).__name__}") from None
        if not view.c_contiguous:
            raise ValueError("data is a non-contiguous memoryview; pass bytes(view) or a contiguous buffer")
        self._buffer = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        self.size = self._buffer.nbytes

    def numpy_range(self, start: int, stop: int):
        """Bytes [start, stop) as a read-only NumPy uint8 array (a memmap for a file)."""
        import numpy as np

        if self.path is None:
            if _is_ndarray(self._buffer):
                return self._buffer[start:stop]
            return np.frombuffer(self._buffer, dtype=np.uint8, count=stop - start, offset=start)
        if stop == start:
            return np.zeros(0, dtype=np.uint8)
        return np.memmap(self.path, dtype=np.uint8, mode="r", offset=start, shape=(stop - start,))

    def memoryview_range(self, start: int, stop: int):
        """Bytes [start, stop) as a memoryview (an mmap for a file); no NumPy needed."""
        if self.path is None:
            return memoryview(self._buffer)[start:stop]
        if stop == start:
            return memoryview(b"")
        with open(self.path, "rb") as f:
            base = start - start % mmap.ALLOCATIONGRANULARITY
            mapped = mmap.mmap(f.fileno(), stop - base, offset=base, access=mmap.ACCESS_READ)
        return memoryview(mapped)[start - base:stop - base]


def _is_ndarray(obj) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(obj, numpy.ndarray)
