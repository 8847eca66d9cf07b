"""Issue 31, a sample for every feature: every option of every command works on the bundled files, each file option
taking the word ``sample`` for its own (a trace as XML and .etl, the WinDbg session log, a kernel crash dump of the
same memory, blobs of records); a file named sample stays reachable as ./sample."""
from __future__ import annotations

import argparse

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli
from d3dkmddi_py.samples import DIRECTORY, build
from tests.conftest import require


def at(address: int) -> str:
    return f"{address >> 32:08x}`{address & 0xFFFFFFFF:08x}"


CREATE, QUERY, INFOS = at(build.CREATE_ADDRESS), at(build.QUERY_ADDRESS), at(build.WINDBG_ADDRESS)
DDI = ["--ddi", build.INTERFACE_VERSION]
BLOB = ["DXGK_ALLOCATIONINFO", "--file", "sample", *DDI]
DUMP = ["DXGKARG_CREATEALLOCATION", "--dump", "sample", "--address", CREATE, *DDI]
INFOS_IN_DUMP = ["DXGK_ALLOCATIONINFO", "--dump", "sample", "--address", INFOS, "--count", "3", *DDI]
# (command, option) -> a command line that uses the option on a bundled file; {out}: a fresh folder
IO_CASES = {
    "type": BLOB, "value": ["DXGK_SEGMENTFLAGS", "0x485"], "--file": BLOB,
    "--windbg": ["DXGK_ALLOCATIONINFO", "--windbg", "sample", "--address", INFOS, "--count", "3", *DDI],
    "--dump": DUMP, "--hex": ["DXGK_SEGMENTFLAGS", "--hex", "85 04 00 00"],
    "--offset": [*BLOB, "--offset", "0x58"], "--base": [*BLOB, "--base", INFOS, "--address", at(build.WINDBG_ADDRESS + 88)],
    "--address": DUMP, "--follow": [*DUMP, "--follow"], "--count": [*BLOB, "--count", "all"],
    "--adapter": [*BLOB, "--count", "all", "--adapter", "sample"],
    "--segments": [*BLOB, "--count", "all", "--segments", "sample"],
    "--segments-at": [*INFOS_IN_DUMP, "--segments-at", QUERY],
    "--segment-type": [*BLOB, "--segments", "sample", "--segment-type", "DXGK_SEGMENTDESCRIPTOR"],
    "--format": [*BLOB, "--count", "all", "--format", "csv", "-o", "{out}/records.csv"],
    "--output": [*BLOB, "--output", "{out}/records.txt"], "--abi": [*BLOB, "--abi", "x64"], "--ddi": BLOB,
    "--json": [*BLOB, "--json"],
}
CASES = {
    **{("decode", o): ["decode", *argv] for o, argv in IO_CASES.items()},
    ("decode", "--nonzero"): ["decode", *BLOB, "--nonzero"],
    **{("validate", o): ["validate", *argv] for o, argv in IO_CASES.items()},
    ("layout", "type"): ["layout", "DXGK_ALLOCATIONINFO"],
    ("layout", "--compare"): ["layout", "DXGK_ALLOCATIONINFO", "--compare", "x86,x64"],
    ("layout", "--abi"): ["layout", "DXGK_ALLOCATIONINFO", "--abi", "x86"],
    ("layout", "--ddi"): ["layout", "DXGK_ALLOCATIONINFO", "--ddi", "WDDM2_0"],
    ("layout", "--json"): ["layout", "DXGK_ALLOCATIONINFO", "--json"],
    ("types", "--abi"): ["types", "--abi", "arm64"], ("types", "--ddi"): ["types", "--ddi", "WDDM2_0"],
    ("types", "--json"): ["types", "--json"], ("demo", "--json"): ["demo", "--json"],
    ("etw", "file"): ["etw", "sample"], ("etw", "--abi"): ["etw", "sample", "--abi", "x64"],
    ("etw", "--ddi"): ["etw", "sample.etl", "--ddi", "WDDM3_0"], ("etw", "--json"): ["etw", "sample.etl", "--json"],
    ("etw", "--summary"): ["etw", "sample", "--summary"],
    ("etw", "--format"): ["etw", "sample.etl", "--format", "csv", "-o", "{out}"],
    ("etw", "--output"): ["etw", "sample", "--format", "jsonl", "--output", "{out}"],
    ("etw", "--plot"): ["etw", "sample", "--plot", "{out}/memory.png"],
}
NEEDS = {"--dump": "kdmp_parser", "--address": "kdmp_parser", "--follow": "kdmp_parser", "--segments-at": "kdmp_parser",
         "--plot": "matplotlib"}


def _options() -> set:
    """(command, option) of every option and positional argument the parser has: read from it, not listed."""
    parser = cli._parser(["etw"])
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {(name, a.option_strings[0] if a.option_strings else a.dest) for name, sub in commands.items()
            for a in sub._actions if not isinstance(a, argparse._HelpAction)}


def test_every_option_of_every_command_has_a_case_on_the_bundled_sample():
    assert set(CASES) == _options()


@pytest.mark.parametrize("command, option", sorted(CASES))
def test_every_option_of_every_command_works_on_the_bundled_sample(command, option, tmp_path):
    module = NEEDS.get(option)
    if module is not None:
        require(__import__("importlib").util.find_spec(module) is not None, f"{module} is not installed")
    argv = [a.replace("{out}", str(tmp_path)) for a in CASES[command, option]]
    out, err, status = cli.run(argv)
    findings = command in ("validate", "etw") and "--summary" not in argv  # 1: the sample's error findings
    assert status in ((0, 1) if findings else (0,)), err
    assert "error:" not in err and (out or any(tmp_path.iterdir())), err


@pytest.mark.parametrize("option, name", [("--windbg", build.SESSION_FILE), ("--dump", build.DUMP_FILE),
                                          ("--segments", build.SEGMENTS_FILE)])
def test_each_file_option_names_its_bundled_file_as_samples_name(option, name, tmp_path):
    args = cli._parser().parse_args(["decode", "DXGK_ALLOCATIONINFO", option, "sample"])
    cli._bundled(args, cli._target(args))
    assert getattr(args, option[2:]) == str(DIRECTORY / name) and cli._origin(args, option[2:]) == f"<samples>/{name}"


@pytest.mark.parametrize("type_name, name", sorted(build.BLOBS.items()))
def test_file_sample_is_the_bundled_blob_of_the_types_records(type_name, name):
    out, err, status = cli.run(["decode", type_name, "--file", "sample", "--count", "all", "--json", *DDI])
    direct, _err, _status = cli.run(["decode", type_name, "--file", str(DIRECTORY / name), "--count", "all", "--json",
                                     *DDI])
    assert status == 0 and out == direct.replace(str(DIRECTORY / name), f"<samples>/{name}")


def test_file_sample_of_a_type_without_a_bundled_blob_is_refused_in_one_line():
    out, err, status = cli.run(["decode", "DXGK_SEGMENTFLAGS", "--file", "sample"])
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert "--file sample is the bundled blob of DXGK_ALLOCATIONINFO or DXGK_SEGMENTDESCRIPTOR records" in err


@pytest.mark.parametrize("argv, said", [
    (["DXGK_ALLOCATIONINFO", "--file", "sample", "--abi", "x86"],
     f"--file sample is DXGK_ALLOCATIONINFO records written at x64 WDDM3_0 (0xF003), which {kmd.target('x86').label} "
     "lays out otherwise: pass --abi x64 --ddi WDDM3_0"),
    (["DXGK_SEGMENTDESCRIPTOR", "--file", "sample", "--abi", "x86", *DDI],
     "--file sample is DXGK_SEGMENTDESCRIPTOR records written at x64 WDDM3_0 (0xF003), which x86 WDDM3_0 (0xF003) "
     "lays out otherwise"),
    ([*BLOB, "--segments", "sample", "--segment-type", "DXGK_SEGMENTDESCRIPTOR3"],
     "--segments sample is DXGK_SEGMENTDESCRIPTOR records written at x64 WDDM3_0 (0xF003), not "
     "DXGK_SEGMENTDESCRIPTOR3: give --segments PATH"),
], ids=["allocation infos at x86", "segment descriptors at x86", "segments as another descriptor type"])
def test_a_bundled_blob_read_at_a_target_or_as_a_type_that_lays_it_out_otherwise_is_refused(argv, said):
    """--file sample --abi x86 decoded x64 bytes as x86 records with exit 0 (every field another's bytes)."""
    for command in ("decode", "validate"):
        out, err, status = cli.run([command, *argv, "--count", "1"])
        assert (status, out) == (2, "") and err.count("\n") == 1 and said in err, err


@pytest.mark.parametrize("argv", [["--abi", "arm64"], ["--ddi", "WDDM3_2"], ["--ddi", "VISTA"]])
def test_a_bundled_blob_reads_at_a_target_that_lays_it_out_alike(argv):
    """arm64 lays the records out as x64; a newer version carves its members out of reserved bits the blob holds 0."""
    out, err, status = cli.run(["decode", "DXGK_ALLOCATIONINFO", "--file", "sample", "--count", "1", *argv])
    direct, _e, _s = cli.run(["decode", "DXGK_ALLOCATIONINFO", "--file", str(DIRECTORY / build.ALLOCATIONS_FILE),
                              "--count", "1", *argv])
    assert status == 0 and out == direct.replace(str(DIRECTORY / build.ALLOCATIONS_FILE),
                                                 f"<samples>/{build.ALLOCATIONS_FILE}")


# option -> (the bundled file copied to ./sample, the command line reading it)
DOT_SLASH = {
    "--file": (build.ALLOCATIONS_FILE, ["decode", "DXGK_ALLOCATIONINFO", "--file", "./sample", *DDI]),
    "--segments": (build.SEGMENTS_FILE, ["decode", *BLOB, "--segments", "./sample"]),
    "--windbg": (build.SESSION_FILE, ["decode", "DXGK_ALLOCATIONINFO", "--windbg", "./sample", "--address", INFOS, *DDI]),
    "--dump": (build.DUMP_FILE, ["decode", "DXGK_ALLOCATIONINFO", "--dump", "./sample", "--address", INFOS, *DDI]),
}


@pytest.mark.parametrize("option", sorted(DOT_SLASH))
def test_a_file_named_sample_stays_reachable_as_dot_slash(option, tmp_path, monkeypatch):
    if option == "--dump":
        require(__import__("importlib").util.find_spec("kdmp_parser") is not None, "kdmp_parser is not installed")
    source, argv = DOT_SLASH[option]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample").write_bytes((DIRECTORY / source).read_bytes())
    out, err, status = cli.run(argv)
    assert status == 0, err
    assert "<samples>" not in out + err  # the file in the working folder, not the bundled one


def test_dot_slash_cases_cover_every_file_option():
    assert set(DOT_SLASH) == {"--" + o for o in cli.FILE_OPTIONS}


@pytest.mark.parametrize("option, name", [("--file", build.ALLOCATIONS_FILE), ("--segments", build.SEGMENTS_FILE)])
def test_output_onto_a_bundled_sample_is_refused(option, name):
    argv = ["decode", "DXGK_ALLOCATIONINFO", *DDI, "--count", "all", "-o", str(DIRECTORY / name)]
    argv += ["--file", "sample"] if option == "--file" else ["--file", "sample", "--segments", "sample"]
    before = (DIRECTORY / name).read_bytes()
    out, err, status = cli.run(argv)
    assert (status, out) == (2, "") and err.count("\n") == 1 and (DIRECTORY / name).read_bytes() == before


def test_decode_dump_sample_follows_createallocation_as_the_session_log_does():
    """The bundled dump holds the session log's memory: the same records, followed alike; only what neither holds
    (the private data) is said in each source's words."""
    require(__import__("importlib").util.find_spec("kdmp_parser") is not None, "kdmp_parser is not installed")
    follow = ["decode", "DXGKARG_CREATEALLOCATION", "--address", CREATE, "--follow", *DDI]
    from_dump, err, status = cli.run([*follow, "--dump", "sample"])
    from_log, _err, log_status = cli.run([*follow, "--windbg", "sample"])
    assert (status, log_status) == (0, 0), err

    def kept(text, source):
        return [line for line in text.splitlines() if f"<samples>/{source} has no bytes" not in line]

    assert kept(from_dump, build.DUMP_FILE) == kept(from_log, build.SESSION_FILE)
    assert len(kept(from_dump, build.DUMP_FILE)) > 300


@pytest.mark.parametrize("argv, word", [
    (["decode", "DXGK_ALLOCATIONINFO", "--file", "sample", "--count", "1", *DDI], "--file sample"),
    (["decode", *BLOB, "--count", "1", "--segments", "sample"], "--segments sample"),
    (["etw", "sample", "--summary"], "sample"), (["etw", "sample.etl", "--summary"], "sample.etl"),
], ids=["--file", "--segments", "etw sample", "etw sample.etl"])
def test_the_word_sample_beside_a_file_of_that_name_says_which_it_read(argv, word, tmp_path, monkeypatch):
    """A ./sample in the working folder was passed over for the bundled file without a word."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / word.split()[-1]).write_bytes(b"mine")
    _out, err, status = cli.run(argv)
    assert status in (0, 1)
    assert f"{word} reads the bundled file; ./{word.split()[-1]} here is a file of that name" in err, err
