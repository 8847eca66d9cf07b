"""Names are read in one place (d3dkmddi_py.names): ABIs and their aliases, interface versions from
any spelling, and type and member names, with suggestions and the target that has a missing name.
Facts (versions, where a type exists) are read from the tables, not written here."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk, cli, decoding, names, resolve, span
from d3dkmddi_py._spec.versions import INTERFACE_VERSIONS
from d3dkmddi_py.bulk import _source
from d3dkmddi_py.errors import MissingMember, UnknownType, UnsupportedTarget
from d3dkmddi_py.layout import type_layout

REPO = Path(__file__).resolve().parents[1]
target_module = importlib.import_module("d3dkmddi_py.target")  # the module, not the function kmd.target
OLDEST, NEWEST = min(INTERFACE_VERSIONS, key=INTERFACE_VERSIONS.get), max(INTERFACE_VERSIONS, key=INTERFACE_VERSIONS.get)


def first_version_with(present) -> str:
    """The oldest version name (from the table) at which ``present(version int)`` holds."""
    return next(name for name, value in INTERFACE_VERSIONS.items() if present(value))


# ---------------------------------------------------------------- ABIs
@pytest.mark.parametrize("alias", ["amd64", "AMD64", "x86_64", " x64 "])
def test_amd64_is_x64_in_target(alias):
    assert kmd.target(alias) is kmd.target("x64")
    assert kmd.target(alias, "WDDM2_0") is kmd.target("x64", "WDDM2_0")


def test_amd64_is_x64_in_resolve_decode_and_bulk():
    assert resolve.resolve_layout("DXGK_SEGMENTFLAGS", ("amd64", "WDDM2_0")).target == ("x64", 0x5023)
    assert kmd.decode_one("DXGK_SEGMENTFLAGS", b"\x85\x04\0\0", target=("amd64", "WDDM2_0")).Value == 0x485
    assert bulk.decode_array("DXGK_SEGMENTFLAGS", b"\x85\x04\0\0", target="amd64")["Value"][0] == 0x485


def test_amd64_is_x64_on_the_command_line():
    out, err, status = cli.run(["decode", "DXGK_SEGMENTFLAGS", "0x485", "--abi", "amd64", "--json"])
    assert (status, err) == (0, "")
    assert out == cli.run(["decode", "DXGK_SEGMENTFLAGS", "0x485", "--abi", "x64", "--json"])[0]


def test_etw_sample_abi_amd64_exits_0():
    """`d3dkmddi etw sample --abi amd64` exited 2: etw parsed ABIs with a parser of its own."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = [subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", "sample", "--abi", abi], capture_output=True,
                           env=env, timeout=120) for abi in ("amd64", "x64")]
    assert [r.returncode for r in runs] == [runs[1].returncode] * 2 and runs[1].returncode in (0, 1)
    assert runs[0].stderr == b"" and runs[0].stdout == runs[1].stdout


def test_unknown_abi_names_the_valid_ones_and_the_alias():
    with pytest.raises(UnsupportedTarget, match=r"unknown abi 'mips'; valid: x86, x64, arm64 \(amd64 means x64\)"):
        names.parse_abi("mips")


# ---------------------------------------------------------------- interface versions
@pytest.mark.parametrize("spelling", ["WDDM2_0", "wddm2_0", "DXGKDDI_INTERFACE_VERSION_WDDM2_0", "0x5023", " 0x5023 ",
                                      0x5023, kmd.InterfaceVersion.WDDM2_0])
def test_version_from_name_number_text_and_enum(spelling):
    assert names.parse_version(spelling) is kmd.InterfaceVersion.WDDM2_0
    assert kmd.target("x64", spelling) is kmd.target("x64", INTERFACE_VERSIONS["WDDM2_0"])


def test_every_version_of_the_table_parses_by_name_and_number():
    for name, value in INTERFACE_VERSIONS.items():
        assert names.parse_version(name) == names.parse_version(value) == names.parse_version(hex(value)) == value


@pytest.mark.parametrize("spelling", ["WDDM20", "2.0", "wddm2.0", "WDDM 2.0"])
def test_version_near_miss_suggests_closest_names(spelling):
    with pytest.raises(UnsupportedTarget) as err:
        kmd.target("x64", spelling)
    assert "did you mean WDDM2_0?" in str(err.value)
    assert f"0x{INTERFACE_VERSIONS[NEWEST]:X}" in str(err.value)  # and the valid list


def test_version_near_miss_on_the_command_line_is_one_line_exit_2():
    for command in (["decode", "DXGK_SEGMENTFLAGS", "0x485"], ["types"], ["etw", "sample"]):
        out, err, status = cli.run([*command, "--ddi", "WDDM20"])
        assert status == 2 and out == "" and err.count("\n") == 1, err
        assert "did you mean WDDM2_0?" in err


def test_version_not_official_is_refused_with_the_list():
    with pytest.raises(UnsupportedTarget, match=r"0x5022 is not an official .*10240 kit"):
        names.parse_version(0x5022)


# ---------------------------------------------------------------- type and member names
def test_type_missing_at_the_version_names_the_first_version_that_has_it():
    name = "DXGK_SEGMENTDESCRIPTOR5"
    first = first_version_with(lambda v: name in names.known_names("x64", v))
    with pytest.raises(UnknownType) as err:
        resolve.resolve_layout(name, ("x64", OLDEST))
    assert f"pass --ddi {first} on the command line, target('x64', '{first}') from Python" in str(err.value)
    with pytest.raises(MissingMember) as err:
        getattr(kmd.target("x64", OLDEST), name)
    assert f"--ddi {first}" in str(err.value)


def test_type_missing_at_the_version_on_the_command_line_names_the_fix():
    name = "DXGK_SEGMENTDESCRIPTOR5"
    first = first_version_with(lambda v: name in names.known_names("x64", v))
    out, err, status = cli.run(["decode", name, "--ddi", "WDDM2_0", "--hex", "00"])
    assert status == 2 and out == ""
    assert f"pass --ddi {first} on the command line" in err


def test_member_missing_at_the_version_names_the_first_version_that_has_it():
    """Flags2 of DXGK_ALLOCATIONINFO: 64-bit targets from some version on (the table says which)."""
    first = first_version_with(lambda v: any(leaf.path.startswith("Flags2.") for leaf in
                                             type_layout("DXGK_ALLOCATIONINFO", "x64", v).leaves))
    with pytest.raises(MissingMember) as err:
        kmd.target("x64", OLDEST).DXGK_ALLOCATIONINFO().Flags2
    assert f"pass --ddi {first} on the command line, target('x64', '{first}') from Python" in str(err.value)


def test_member_missing_at_every_version_of_the_abi_names_another_abi():
    with pytest.raises(MissingMember) as err:
        kmd.target("x86", NEWEST).DXGK_ALLOCATIONINFO().Flags2
    assert "pass --abi x64 --ddi" in str(err.value)


def test_unknown_type_suggests_close_names_in_one_place():
    with pytest.raises(UnknownType, match="did you mean DXGK_ALLOCATIONINFO"):
        names.type_name("DXGK_ALOCATIONINFO", "x64", INTERFACE_VERSIONS[NEWEST])
    assert names.type_name("dxgkrnl!_dxgk_allocationinfo", "x64", INTERFACE_VERSIONS[NEWEST]) == "DXGK_ALLOCATIONINFO"


# ---------------------------------------------------------------- one parser, no namesakes
def test_one_parser_of_each_name():
    assert target_module.parse_abi is names.parse_abi and kmd.parse_abi is names.parse_abi
    assert kmd.parse_interface_version is names.parse_version is target_module.parse_interface_version
    assert kmd.InterfaceVersion is names.InterfaceVersion is target_module.InterfaceVersion
    for module in (resolve, span, decoding, cli):
        own = [n for n, v in vars(module).items() if n.startswith("parse_") and callable(v)
               and getattr(v, "__module__", "") == module.__name__ and ("abi" in n or "version" in n or "target" in n)]
        assert own == [], (module.__name__, own)


def test_same_named_wrappers_with_different_results_are_gone():
    """decoding.resolve_type gave (class, Target), bulk's gave a TypeLayout; decoding.check_range took a
    class where span.check_range (the one span check) takes a layout."""
    assert not hasattr(decoding, "resolve_type") and not hasattr(_source, "resolve_type")
    assert not hasattr(decoding, "check_range") or decoding.check_range is span.check_range
    cls, tgt = decoding.resolve_class("DXGK_SEGMENTFLAGS", "amd64")
    assert tgt is kmd.target("x64") and cls is tgt.DXGK_SEGMENTFLAGS
    assert _source.struct_layout("DXGK_SEGMENTFLAGS", "amd64") is resolve.resolve_layout("DXGK_SEGMENTFLAGS")


def test_interface_version_pickles_by_its_new_home_and_loads_old_pickles():
    import pickle

    v = kmd.InterfaceVersion.WDDM2_0
    assert pickle.loads(pickle.dumps(v)) is v
    old = pickle.dumps(v, protocol=0).replace(b"d3dkmddi_py.names", b"d3dkmddi_py.target")  # as an earlier release wrote it
    assert pickle.loads(old) is v


def test_header_enums_live_with_the_names_and_old_pickles_still_load():
    """The C enums need no ctypes, so they moved from target.py to names.py; pickles naming
    d3dkmddi_py.target load as the same class."""
    import pickle

    kind = kmd.ENUM_CLASSES["DXGK_SEGMENTTYPE"]
    assert kind is names.ENUM_CLASSES["DXGK_SEGMENTTYPE"] is target_module.ENUM_CLASSES["DXGK_SEGMENTTYPE"]
    value = kind(1)
    assert pickle.loads(pickle.dumps(value)) is value
    old = pickle.dumps(value, protocol=0).replace(b"d3dkmddi_py.names", b"d3dkmddi_py.target")
    assert pickle.loads(old) is value


def test_version_typed_as_decimal_digits_of_its_hex_suggests_the_hex():
    value = INTERFACE_VERSIONS["WDDM2_0"]
    with pytest.raises(UnsupportedTarget, match=rf"did you mean 0x{value:X} \(WDDM2_0\)\?"):
        names.parse_version(f"{value:X}")


@pytest.mark.parametrize("text", ["２０５１５", "٢٠٥١٥"])
def test_version_number_in_other_scripts_digits_is_refused(text):
    """int() reads these as 20515 (WDDM2_0); a number is ASCII here, never read another way."""
    assert int(text) == INTERFACE_VERSIONS["WDDM2_0"]
    with pytest.raises(UnsupportedTarget, match="unknown interface version"):
        names.parse_version(text)
