"""The x64 classes against a real C compiler, through the cffi shim (headers/ built with
-mms-bitfields).  Every answer comes from compiled C code, never from cffi's own view
of a structure."""
from __future__ import annotations

import ctypes
import shutil

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py._classes import _read
from tests.conftest import count, require

VERSIONS = list(kmd.InterfaceVersion)


@pytest.fixture(scope="session")
def shim():
    try:
        import cffi  # noqa: F401
    except ImportError:
        require(False, "cffi is not installed: pip install -e '.[test]'")
    require(shutil.which("cc") or shutil.which("gcc"), "no C compiler on PATH")
    from tests.compiler._shim import build

    return build.load()


def _set_all_ones(obj, leaf):
    parts = leaf.path.replace("[", ".[").split(".")
    for part in parts[:-1]:
        obj = obj[int(part[1:-1])] if part.startswith("[") else getattr(obj, part)
    value = -1 if leaf.signed else leaf.max_value
    last = parts[-1]
    if last.startswith("["):
        obj[int(last[1:-1])] = value
    else:
        setattr(obj, last, value)


def _mask_position(data: bytes):
    """(byte offset, bit, width) of the one contiguous run of ones in ``data``."""
    word = int.from_bytes(data, "little")
    assert word, "the C side set no bit"
    low = (word & -word).bit_length() - 1
    width = (word >> low).bit_length()
    assert word >> low == (1 << width) - 1, f"bits not contiguous: {word:#x}"
    return low // 8, low % 8, width


@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_every_leaf_matches_the_compiler(shim, version):
    from tests.compiler._shim.build import shim_types

    compared = 0
    for type_id, name, cls in shim_types(version):
        size = ctypes.sizeof(cls)
        assert shim.sizeof(version, type_id) == size, f"{name}[x64 {version.name}]: sizeof"
        assert shim.alignof(version, type_id) == ctypes.alignment(cls), f"{name}[x64 {version.name}]: alignof"
        compared += 2
        for leaf_id, leaf in enumerate(kmd.leaves(cls)):
            where = f"{name}.{leaf.path}[x64 {version.name}]"
            if not leaf.is_bitfield:
                assert shim.offsetof(version, type_id, leaf_id) == leaf.offset, f"{where}: offset"
                compared += 1
            c_bytes = shim.allones(version, type_id, leaf_id, size)
            obj = cls()
            _set_all_ones(obj, leaf)
            assert bytes(obj) == c_bytes, f"{where}: bytes after setting all ones (C vs ctypes)"
            c_byte, c_bit, c_width = _mask_position(c_bytes)
            bit = leaf.offset * 8 + leaf.bit_offset
            assert (c_byte * 8 + c_bit, c_width) == (bit, leaf.bit_width), f"{where}: position and width"
            compared += 2
    count("cffi shim (x64)", "x64", version, compared)


@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_values_read_by_c_equal_ctypes(shim, version):
    """Hypothesis: random bytes, every leaf read by C code and by the ctypes classes."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.compiler._shim.build import shim_types

    types = shim_types(version)
    compared = [0]

    @settings(max_examples=30, deadline=None)
    @given(st.sampled_from(types), st.data())
    def check(entry, data):
        type_id, name, cls = entry
        blob = data.draw(st.binary(min_size=ctypes.sizeof(cls), max_size=ctypes.sizeof(cls)))
        obj = cls.from_buffer_copy(blob)
        assert bytes(obj) == blob
        for leaf_id, leaf in enumerate(kmd.leaves(cls)):
            value = _read(obj, leaf.path)
            c_value = shim.read(version, type_id, leaf_id, blob)
            assert value % (1 << leaf.bit_width) == c_value, f"{name}.{leaf.path}[x64 {version.name}]"
            compared[0] += 1

    check()
    count("cffi shim reads (hypothesis)", "x64", version, compared[0])
