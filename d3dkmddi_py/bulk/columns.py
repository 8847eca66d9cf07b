"""Decoded columns, and their way out to pandas, Arrow, CSV, Parquet and JSON lines."""
from __future__ import annotations

import contextlib
import io
import os
from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from functools import lru_cache

from .._numpy import numpy_module, optional_module as _need
from ..errors import InvalidArgument, bad_argument, flag_argument, integer_argument, items_argument
from ..outfile import open_output
from .table import INT64_MAX
from ..wording import plural


class _Leaves(KeysView):
    """A Columns' keys: as many as its leaves (``len(columns)`` counts its records)."""

    def __len__(self):
        return len(self._mapping._names)


class _LeafItems(ItemsView):
    def __len__(self):
        return len(self._mapping._names)


class _LeafValues(ValuesView):
    def __len__(self):
        return len(self._mapping._names)


@lru_cache(maxsize=None)
def _positions(names: tuple) -> dict:
    """Leaf path -> its column's position, once per tuple of paths (a plan's, or a pickled Columns')."""
    return {name: i for i, name in enumerate(names)}


class Columns(Mapping):
    """One array per leaf of a type, keyed by the leaf's dotted path, in ``leaves()`` order.

    ``len(columns)`` is the number of records (rows), as a pandas DataFrame's is, and iterating gives the leaf
    paths; ``len(columns.keys())`` counts the columns.

    Arrays are NumPy arrays (views into one shared buffer) or, without NumPy,
    ``array.array`` objects.  ``start`` is the index of the first record within the
    decoded range (non-zero for a chunk); ``offset`` is its byte offset in the data.  ``inputs``
    holds the file the records were read from (empty for bytes): the writers never write over it.
    """

    __slots__ = ("layout", "type_name", "target_label", "record_size", "start", "offset", "inputs", "_names",
                 "_arrays", "_where", "_buffers")

    def __init__(self, layout, plan, arrays, *, start: int, offset: int, buffers=None, inputs: tuple = ()):
        """Columns of a user's own arrays, checked: ``layout`` a struct's or union's TypeLayout, ``plan`` the
        bulk plan of it, ``arrays`` one 1-D array per leaf in plan order (NumPy, or ``array.array`` without
        it), each of its column's dtype and no wider than its leaf, all of one length.  ``buffers`` is the
        package's reusable chunk memory: None here.  The decoders build theirs with ``_new``, unchecked."""
        from ..layout import TypeLayout
        from ._plan import plan_for

        if not isinstance(layout, TypeLayout) or layout.kind == "enum":
            raise bad_argument("Columns: layout", layout, "the TypeLayout of a struct or union")
        if plan is not plan_for(layout):
            raise bad_argument("Columns: plan", plan, f"the bulk plan of {layout.c_name} at {layout.label} "
                                                      f"(bulk._plan.plan_for(layout))")
        arrays = _checked_arrays(layout, plan, arrays)
        rows = len(arrays[0]) if arrays else 0
        start = integer_argument(start, "Columns: start", 0, INT64_MAX - rows)  # the tables' record numbers are int64
        offset = integer_argument(offset, "Columns: offset", 0, INT64_MAX)
        if buffers is not None:
            raise bad_argument("Columns: buffers", buffers, "None (the decoders' own reusable memory)")
        inputs = items_argument(inputs, "Columns: inputs", (str, bytes, os.PathLike),
                                "a tuple of the files the records were read from (paths)")
        self._fill(layout, plan, arrays, start, offset, None, inputs)

    @classmethod
    def _new(cls, layout, plan, arrays, start: int, offset: int, buffers, inputs: tuple) -> "Columns":
        """The decoders' columns, unchecked (one per chunk)."""
        self = cls.__new__(cls)
        self._fill(layout, plan, arrays, start, offset, buffers, inputs)
        return self

    def _fill(self, layout, plan, arrays, start, offset, buffers, inputs) -> None:
        self.layout = layout  # the TypeLayout of the records (its target included)
        self.type_name, self.target_label, self.record_size = plan.type_name, plan.label, plan.record_size
        self.start, self.offset, self.inputs = start, offset, inputs
        self._names = plan.names
        self._arrays = arrays if isinstance(arrays, list) else list(arrays)  # no dict built a chunk
        self._where = _positions(self._names)
        self._buffers = buffers

    def __getitem__(self, path):
        try:
            return self._arrays[self._where[path]]
        except KeyError:
            raise KeyError(f"{self.type_name} at {self.target_label} has no leaf {path!r}; "
                           f"leaves: {', '.join(self._names)}") from None

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return self.count  # records, as a DataFrame's len (issue 31: it was the columns, 106 for 35 records)

    def keys(self):
        return _Leaves(self)

    def items(self):
        return _LeafItems(self)

    def values(self):
        return _LeafValues(self)

    def __repr__(self):
        return (f"<Columns {self.type_name} [{self.target_label}]: {plural(self.count, 'record')} "
                f"from {self.start:,}, {plural(len(self._names), 'column')}>")

    @property
    def cls(self):
        """The ctypes class of the records, for users who want instances (built on first use)."""
        from ..target import class_of

        return class_of(self.layout)

    # Pickle and copy: the layout travels by reference (C name, abi, version), the arrays by value; the
    # reusable chunk buffers stay behind.
    def __reduce__(self):
        return type(self)._restore, (self.layout, self.type_name, self.target_label, self.record_size, self.start,
                                     self.offset, self._names, list(self._arrays), self.inputs)

    @classmethod
    def _restore(cls, layout, type_name, target_label, record_size, start, offset, names, arrays, inputs=()):
        self = cls.__new__(cls)
        self.layout, self.type_name, self.target_label, self.record_size = layout, type_name, target_label, record_size
        self.start, self.offset, self._names, self._buffers = start, offset, tuple(names), None
        self.inputs = tuple(inputs)
        self._arrays, self._where = list(arrays), _positions(self._names)
        return self

    @property
    def count(self) -> int:
        """Number of records (rows)."""
        return len(self._arrays[0]) if self._names else 0

    @property
    def index(self) -> range:
        """The record numbers of these rows within the decoded range."""
        return range(self.start, self.start + self.count)

    @property
    def nbytes(self) -> int:
        """Bytes the column values take (itemsize times rows, summed)."""
        return sum(len(a) * a.itemsize for a in self._arrays)

    def rows(self):
        """One tuple per record, ``record`` number first then every leaf, as Python ints."""
        lists = [a.tolist() for a in self._arrays]
        return zip(self.index, *lists)

    # ---- conversions (optional libraries, imported on use)
    def to_pandas(self):
        """A pandas DataFrame, one column per leaf, indexed by record number."""
        pd = _need("pandas", "dataframe", "Columns.to_pandas")
        index = pd.RangeIndex(self.start, self.start + self.count, name="record")
        return pd.DataFrame({name: _as_numpy(a) for name, a in zip(self._names, self._arrays)}, index=index,
                            copy=False)

    def to_arrow(self):
        """A pyarrow Table: a ``record`` column, then one column per leaf (zero-copy where it can)."""
        pa = _need("pyarrow", "arrow", "Columns.to_arrow")
        arrays = [pa.array(range(self.start, self.start + self.count), type=pa.uint64())]
        arrays += [pa.array(_as_numpy(a)) for a in self._arrays]
        table = pa.Table.from_arrays(arrays, names=["record", *self._names])
        return table.replace_schema_metadata({"d3dkmddi.type": self.type_name, "d3dkmddi.target": self.target_label})

    def to_csv(self, out, *, header: bool = True) -> None:
        """CSV rows to a text file object or a path (``"-"``: standard output): ``record`` then every leaf,
        pointers, pointer-sized and 64-bit leaves as ``0x...`` (their bit pattern), as JSON writes them.

        A path is written through ``outfile.open_output``: complete or not at all, and never the file the
        records were read from.
        """
        from .table import CsvWriter, columns_table

        header = flag_argument(header, "header")
        with _text_out(out, self.inputs) as f:
            CsvWriter(f, header=header).write(columns_table(self, record=True))

    def to_jsonl(self, out) -> None:
        """One JSON object per record: ``record`` then every leaf, keys in leaf order (path or file as to_csv)."""
        from .table import JsonlWriter, columns_table

        with _text_out(out, self.inputs) as f:
            JsonlWriter(f).write(columns_table(self, record=True))

    def to_parquet(self, path) -> None:
        """A Parquet file of :meth:`to_arrow`: a path (written as to_csv writes one) or a binary file object."""
        from .table import write_chunk

        _need("pyarrow.parquet", "arrow", "Columns.to_parquet")
        if not isinstance(path, (str, bytes, os.PathLike)):
            write_chunk(self, path, "parquet")
            return
        with open_output(path, binary=True, inputs=self.inputs) as f:
            write_chunk(self, f, "parquet")


def _checked_arrays(layout, plan, arrays) -> list:
    """``arrays`` as ``Columns(...)`` takes them (see its docstring), or the package's error naming the first that
    is not."""
    import array

    if not isinstance(arrays, (list, tuple)) or len(arrays) != len(plan.columns):
        raise bad_argument("Columns: arrays", arrays, f"a list of {len(plan.columns)} arrays, one per leaf of "
                                                      f"{layout.c_name} (bulk.column_dtypes gives their dtypes)")
    length = None
    for i, (values, column, leaf) in enumerate(zip(arrays, plan.columns, layout.leaves)):
        at = f"Columns: arrays[{i}] ({column.path})"
        if isinstance(values, array.array) and values.typecode in "bBhHiIlLqQ":
            kind, itemsize = ("i" if values.typecode.islower() else "u"), values.itemsize
        elif type(values).__module__ == "numpy" and getattr(values, "ndim", None) == 1 and values.dtype.kind in "iu":
            kind, itemsize = values.dtype.kind, values.dtype.itemsize
        else:
            kind = itemsize = None
        if (kind, itemsize) != (column.dtype[0], column.itemsize):
            raise bad_argument(at, values, f"a 1-D array of {column.dtype} (NumPy, or array.array without it)")
        if length is None:
            length = len(values)
        elif len(values) != length:
            raise InvalidArgument(f"{at} holds {len(values)} values, arrays[0] {length}: a column per leaf, one value "
                                  f"per record in each")
        top = (1 << leaf.bit_width) - 1
        high = (int(values.max()) if hasattr(values, "max") else max(values)) if len(values) else 0
        if leaf.bit_width < column.itemsize * 8 and high > top:
            raise InvalidArgument(f"{at} holds {high}, more than its {leaf.bit_width} bits hold (valid 0..{top})")
    return list(arrays)


def _as_numpy(values):
    np = numpy_module()

    return values if isinstance(values, np.ndarray) else np.frombuffer(values, dtype=values.typecode)


def _text_out(out, inputs: tuple):
    """A caller's file object, left open, or a path opened by ``outfile.open_output`` (never one of ``inputs``)."""
    if isinstance(out, io.TextIOBase) or hasattr(out, "write"):
        return contextlib.nullcontext(out)
    return open_output(out, inputs=inputs)
