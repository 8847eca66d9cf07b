"""decode(type, str): a str is always data (hex, a number or WinDbg text), never a file name;
a file is a pathlib.Path (any os.PathLike) or the path= keyword."""
from __future__ import annotations

import pathlib

import pytest

from d3dkmddi_py.decoding import DecodeError, decode, decode_one, read_input

FLAGS = bytes([0x85, 0x04, 0x00, 0x00])  # DXGK_SEGMENTFLAGS.Value 0x485


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_hex_text_that_names_a_file_is_still_hex(in_tmp):
    (in_tmp / "85040000").write_bytes(bytes(4))  # a file of that name must not be opened
    assert decode_one("DXGK_SEGMENTFLAGS", "85040000", kind="hex").Value == 0x485
    assert read_input("85040000", kind="hex").data == FLAGS
    with pytest.raises(DecodeError, match="8 hex digits"):  # two readings: refused, still never opened
        decode_one("DXGK_SEGMENTFLAGS", "85040000")


def test_a_file_name_as_str_is_refused_with_the_fix(in_tmp):
    (in_tmp / "in.bin").write_bytes(FLAGS)
    with pytest.raises(DecodeError, match=r"cannot read 'in.bin': .* to read a file pass "
                                          r"pathlib.Path\('in.bin'\) or path="):
        decode_one("DXGK_SEGMENTFLAGS", "in.bin")


def test_path_keyword_and_pathlike_read_the_file(in_tmp):
    (in_tmp / "in.bin").write_bytes(FLAGS)
    assert decode_one("DXGK_SEGMENTFLAGS", path="in.bin").Value == 0x485
    assert decode_one("DXGK_SEGMENTFLAGS", path=in_tmp / "in.bin").Value == 0x485
    assert decode_one("DXGK_SEGMENTFLAGS", pathlib.Path("in.bin")).Value == 0x485


@pytest.mark.parametrize("kwargs, message", [
    ({"data": FLAGS, "path": "in.bin"}, "give data or path=, not both"),
    ({}, "no data: give bytes"),
    ({"path": 3}, "path= must be a str or an os.PathLike such as pathlib.Path, not int"),
    ({"path": "a\0b"}, "the path contains a NUL character"),
    ({"data": pathlib.Path("a\0b")}, "the path contains a NUL character"),
])
def test_path_keyword_errors(in_tmp, kwargs, message):
    with pytest.raises(DecodeError, match=message):
        decode_one("DXGK_SEGMENTFLAGS", **kwargs)


# ------------------------------------------------------------------ from_dict: malformed dicts, one library error
import json  # noqa: E402

import d3dkmddi_py as kmd  # noqa: E402
from d3dkmddi_py import semantics as sem  # noqa: E402
from d3dkmddi_py.errors import D3dkmddiError, InvalidFieldType, InvalidFieldValue  # noqa: E402
from d3dkmddi_py.jsonvalue import json_hex  # noqa: E402


@pytest.mark.parametrize("d, type_name, error, message", [
    ({"fields": [1, 2]}, "DXGK_SEGMENTFLAGS", InvalidFieldType,
     r"from_dict.fields = \[1, 2\] is a list \(valid a dict of leaf path"),
    ({"fields": {}, "colour": "red"}, "DXGK_SEGMENTFLAGS", InvalidFieldValue,
     r"from_dict.colour = 'red' is not a key of a to_dict dict \(valid type, abi, interface_version, fields, "
     r"padding\); delete it"),
    ({"type": 5}, None, InvalidFieldType, r"from_dict.type = 5 is a int \(valid a C type name"),
    ({"type": "DXGK_SEGMENTFLAGS", "abi": "x64"}, None, InvalidFieldValue,
     "from_dict.interface_version = None is missing: to_dict writes abi and interface_version together"),
    ({"abi": 3, "interface_version": "WDDM2_0"}, "DXGK_SEGMENTFLAGS", InvalidFieldType, "from_dict.abi = 3 is a int"),
    ({"fields": {"Value": 1.5}}, "DXGK_SEGMENTFLAGS", InvalidFieldType,
     r"DXGK_SEGMENTFLAGS.Value = 1.5 is a float, not an int or a '0x...' string \(valid 0..4294967295\)"),
    ({"fields": {"Value": None}}, "DXGK_SEGMENTFLAGS", InvalidFieldType,
     "is a NoneType, not an int or a '0x...' string"),
    ({"fields": {"Value": 10 ** 5000}}, "DXGK_SEGMENTFLAGS", InvalidFieldValue,
     "Value = <a 16610-bit int> does not fit in 32 bits"),
    ({"fields": {5: 1}}, "DXGK_SEGMENTFLAGS", InvalidFieldValue, r"fields\[<int key>\] = 1 names no leaf"),
    ({"fields": {"x" * 5000: 1}}, "DXGK_SEGMENTFLAGS", InvalidFieldValue, r"fields\[x{37}\.\.\.\] = 1 names no leaf"),
    ({"padding": []}, "DXGK_SEGMENTFLAGS", InvalidFieldType, "from_dict.padding = .* is a list"),
    ({"padding": {"zz": "00000000"}}, "DXGK_ALLOCATIONINFO", InvalidFieldValue,
     r"padding\[zz\] = '00000000' is not a padding run .* \(valid 0x44: 4 bytes\)"),
    ({"padding": {"0x44": "zz"}}, "DXGK_ALLOCATIONINFO", InvalidFieldType, r"padding\[0x44\] = 'zz' is not hex bytes"),
    ({"fields": {}}, "DXGK_PAGESIZE", InvalidFieldValue, "is not a struct or union"),
    ({"fields": {}}, 5, InvalidFieldType, "from_dict.type_name = 5 is a int"),
])
def test_from_dict_refuses_malformed_dicts_naming_the_key(d, type_name, error, message):
    with pytest.raises(error, match=message) as e:
        sem.from_dict(d, type_name)
    assert isinstance(e.value, D3dkmddiError) and "\n" not in str(e.value) and len(str(e.value)) < 1200


# ------------------------------------------------------------------ JSON: no integer a JSON reader would round
def test_to_dict_writes_pointers_handles_sizes_and_64_bit_fields_as_hex():
    info = kmd.DXGK_ALLOCATIONINFO(hAllocation=0xFFFFF80212345670, Size=0x10000, PrivateDriverDataSize=16)
    fields = sem.to_dict(info)["fields"]
    assert fields["hAllocation"] == "0xfffff80212345670"  # jq would print 18446735286340327000
    assert fields["Size"] == "0x10000" and fields["pPrivateDriverData"] == "0x0"
    assert fields["PrivateDriverDataSize"] == 16 and fields["Flags.Value"] == 0
    x86 = sem.to_dict(kmd.target("x86", "WDDM3_2").DXGK_ALLOCATIONINFO(Size=5))["fields"]
    assert x86["Size"] == "0x5" and x86["hAllocation"] == "0x0"  # the same form on every ABI
    assert all(not isinstance(v, int) or abs(v) <= 2 ** 53 for v in json.loads(json.dumps(fields)).values())


def test_signed_64_bit_is_written_as_its_bit_pattern_and_read_back_in_every_form():
    seg = kmd.DXGK_SEGMENTDESCRIPTOR()
    seg.BaseAddress.QuadPart = -0x200000000
    d = sem.to_dict(seg)
    assert d["fields"]["BaseAddress.QuadPart"] == "0xfffffffe00000000"
    assert bytes(sem.from_dict(json.loads(json.dumps(d)))) == bytes(seg)
    for given in (0xFFFFFFFE00000000, "0xFFFFFFFE00000000", -0x200000000, "-0x200000000"):
        back = sem.from_dict({"fields": {"BaseAddress.QuadPart": given}}, "DXGK_SEGMENTDESCRIPTOR")
        assert back.BaseAddress.QuadPart == -0x200000000, given
    with pytest.raises(InvalidFieldValue, match=r"does not fit in 64 bits \(valid -0x8000000000000000.."
                                                r"0x7fffffffffffffff, or the bit pattern 0..0xffffffffffffffff\)"):
        sem.from_dict({"fields": {"BaseAddress.QuadPart": 1 << 64}}, "DXGK_SEGMENTDESCRIPTOR")


def test_json_hex_is_decided_by_the_c_type():
    leaves = {leaf.path: leaf for leaf in kmd.DXGK_SEGMENTDESCRIPTOR._leaves_ + kmd.DXGK_ALLOCATIONINFO._leaves_}
    assert [json_hex(leaves[p]) for p in ("BaseAddress.QuadPart", "Size", "hAllocation", "pPrivateDriverData",
                                           "pAllocationUsageHint", "BaseAddress.LowPart", "Flags.Value",
                                           "Flags.CpuVisible")] == [True] * 5 + [False] * 3


def test_empty_text_says_what_to_give():
    with pytest.raises(DecodeError, match=r"^empty text: give hex bytes .* or path=$"):
        decode_one("DXGK_SEGMENTFLAGS", "  \n")


def test_a_file_name_with_control_characters_is_echoed_on_one_line(in_tmp):
    with pytest.raises(DecodeError) as e:
        decode_one("DXGK_SEGMENTFLAGS", path="in\n\x1b[31mred.bin")
    assert str(e.value) == r"cannot read 'in\n\x1b[31mred.bin': no such file"


def test_a_huge_value_is_named_by_its_size():
    with pytest.raises(DecodeError, match=r"^value <a 20001-bit number> is too wide for DXGK_SEGMENTFLAGS") as e:
        decode_one("DXGK_SEGMENTFLAGS", 1 << 20000)
    assert len(str(e.value)) < 300
