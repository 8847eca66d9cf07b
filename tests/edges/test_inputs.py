"""decode(type, str): a str is always data (hex, a number or WinDbg text), never a file name;
a file is a pathlib.Path (any os.PathLike) or the path= keyword."""
from __future__ import annotations

import pathlib

import pytest

from d3dkmddi_py.decoding import DecodeError, decode, read_input

FLAGS = bytes([0x85, 0x04, 0x00, 0x00])  # DXGK_SEGMENTFLAGS.Value 0x485


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_hex_text_that_names_a_file_is_still_hex(in_tmp):
    (in_tmp / "85040000").write_bytes(bytes(4))  # a file of that name must not be opened
    assert decode("DXGK_SEGMENTFLAGS", "85040000").Value == 0x485
    assert read_input("85040000").data == FLAGS


def test_a_file_name_as_str_is_refused_with_the_fix(in_tmp):
    (in_tmp / "in.bin").write_bytes(FLAGS)
    with pytest.raises(DecodeError, match=r"cannot read 'in.bin': .* to read a file pass "
                                          r"pathlib.Path\('in.bin'\) or path="):
        decode("DXGK_SEGMENTFLAGS", "in.bin")


def test_path_keyword_and_pathlike_read_the_file(in_tmp):
    (in_tmp / "in.bin").write_bytes(FLAGS)
    assert decode("DXGK_SEGMENTFLAGS", path="in.bin").Value == 0x485
    assert decode("DXGK_SEGMENTFLAGS", path=in_tmp / "in.bin").Value == 0x485
    assert decode("DXGK_SEGMENTFLAGS", pathlib.Path("in.bin")).Value == 0x485


@pytest.mark.parametrize("kwargs, message", [
    ({"data": FLAGS, "path": "in.bin"}, "give data or path=, not both"),
    ({}, "no data: give bytes"),
    ({"path": 3}, "path= must be a str or an os.PathLike such as pathlib.Path, not int"),
    ({"path": "a\0b"}, "the path contains a NUL character"),
    ({"data": pathlib.Path("a\0b")}, "the path contains a NUL character"),
])
def test_path_keyword_errors(in_tmp, kwargs, message):
    with pytest.raises(DecodeError, match=message):
        decode("DXGK_SEGMENTFLAGS", **kwargs)
