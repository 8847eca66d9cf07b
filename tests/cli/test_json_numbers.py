"""Issue 22, "every JSON follows the 2**53 rule": the README promises that no integer above 2**53 is
written as a JSON number (jq and JavaScript round it without a word).  Every JSON the command writes is
walked value by value: decode, validate, layout, types, demo, etw (events, tables, --summary), with
records whose every bit is set, so each 64-bit leaf holds its largest value."""
from __future__ import annotations

import json
import struct

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli
from d3dkmddi_py.names import known_names
from d3dkmddi_py.resolve import resolve_layout
from tests.etw.etl_files import unpack

LIMIT = 2 ** 53
OLDEST = min(kmd.InterfaceVersion)
# every public type, each where it exists: the newest version holds them all
TYPES = sorted(n for n in known_names("x64", int(kmd.NEWEST)) if not n.startswith("_"))


def big_numbers(value, where: str = "") -> list:
    """The places in a parsed JSON value that hold an integer beyond 2**53 either way."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [where] if abs(value) > LIMIT else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in big_numbers(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in big_numbers(v, f"{where}[{i}]")]
    return []


def json_documents(text: str) -> list:
    """One document (indented) or JSON lines."""
    text = text.strip()
    assert text, "no JSON written"
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]


def assert_no_big_numbers(text: str, what) -> int:
    """Fails naming the first places; returns how many documents were walked."""
    documents = json_documents(text)
    big = [p for doc in documents for p in big_numbers(doc)]
    assert not big, (what, big[:5], len(big))
    return len(documents)


def run(*argv, status=(0,)) -> str:
    out, err, code = cli.run(list(argv))
    assert code in status, (argv, err)
    return out


def test_the_walk_finds_a_big_number():
    """The check itself can fail: the mask layout --json wrote before (issue 22) is found."""
    assert big_numbers({"leaves": [{"mask": 18446744073709551615}]}) == [".leaves[0].mask"]
    assert big_numbers({"a": [2 ** 53, -(2 ** 53), True, "0xffffffffffffffff"]}) == []


@pytest.mark.parametrize("abi", kmd.ABIS)
@pytest.mark.parametrize("version", [OLDEST, kmd.NEWEST], ids=lambda v: v.name)
def test_layout_json_of_every_type(abi, version):
    names = [n for n in TYPES if n in known_names(abi, int(version))]
    for name in names:
        assert_no_big_numbers(run("layout", name, "--abi", abi, "--ddi", version.name, "--json"), (name, abi))
        other = "x64" if abi == "x86" else "x86"
        assert_no_big_numbers(run("layout", name, "--compare", f"{abi}:{version.name},{other}:{kmd.NEWEST.name}",
                                  "--json"), (name, abi, "--compare"))


def test_a_64_bit_leafs_mask_is_a_hex_string_as_its_values_are():
    leaves = {leaf["path"]: leaf for leaf in json.loads(run("layout", "DXGK_SEGMENTDESCRIPTOR", "--json"))["leaves"]}
    assert leaves["Size"]["mask"] == "0xffffffffffffffff"  # SIZE_T, x64
    assert leaves["BaseAddress.QuadPart"]["mask"] == "0xffffffffffffffff"
    assert leaves["NbOfBanks"]["mask"] == 0xFFFFFFFF  # a UINT stays a number
    x86 = {leaf["path"]: leaf for leaf in
           json.loads(run("layout", "DXGK_SEGMENTDESCRIPTOR", "--abi", "x86", "--json"))["leaves"]}
    assert x86["Size"]["mask"] == "0xffffffff"  # a SIZE_T is a hex string on every ABI, as its values are


@pytest.mark.parametrize("abi,version", [("x64", kmd.NEWEST), ("x86", OLDEST)], ids=["x64-newest", "x86-oldest"])
def test_decode_and_validate_json_of_every_type_all_bits_set(abi, version, tmp_path):
    for name in TYPES:
        if name not in known_names(abi, int(version)):
            continue
        layout = resolve_layout(name, (abi, int(version)))
        data = "ff" * layout.size
        where = ["--hex", data, "--count", "1", "--abi", abi, "--ddi", version.name]
        for command, status in (("decode", (0,)), ("validate", (0, 1))):
            assert_no_big_numbers(run(command, name, *where, "--json", status=status), (command, name))
            if command == "decode" and layout.kind == "enum":
                continue  # decode's tables are the columns of a struct
            out = tmp_path / f"{command}-{name}.jsonl"
            run(command, name, *where, "--format", "jsonl", "-o", str(out), status=status)
            if out.read_text().strip():
                assert_no_big_numbers(out.read_text(), (command, name, "jsonl"))


def test_types_demo_and_sample_records_json():
    for abi in kmd.ABIS:
        assert_no_big_numbers(run("types", "--abi", abi, "--json"), ("types", abi))
    assert_no_big_numbers(run("demo", "--json"), "demo")
    from d3dkmddi_py.samples import ALLOCATIONS_PATH

    sample = ["--file", str(ALLOCATIONS_PATH), "--ddi", "WDDM3_0", "--count", "all",
              "--adapter", "sample"]
    assert assert_no_big_numbers(run("decode", "DXGK_ALLOCATIONINFO", *sample, "--json"), "decode") == 35
    assert_no_big_numbers(run("validate", "DXGK_ALLOCATIONINFO", *sample, "--json", status=(1,)), "validate")


def test_etw_events_and_tables_json(tmp_path):
    assert_no_big_numbers(run("etw", "sample", "--json", status=(0, 1)), "etw --json")
    run("etw", "sample", "--format", "jsonl", "-o", str(tmp_path), status=(0, 1))
    tables = sorted(tmp_path.glob("*.jsonl"))
    from d3dkmddi_py.etw.outputs.tables import table_names

    # one per event entry, the findings, and one per kind of the sample's events no entry reads
    from tests.etw.helpers import sample_other_kinds

    assert [p.stem for p in tables] == sorted(table_names() + sample_other_kinds())
    for table in tables:
        assert_no_big_numbers(table.read_text(), table.name)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("real-etl"))


def test_etw_summary_json_of_every_real_file(real):
    for name, path in real.items():
        assert_no_big_numbers(run("etw", str(path), "--summary", "--json"), name)


def test_a_summary_whose_clock_frequency_is_beyond_2_53_writes_it_as_hex(real, tmp_path):
    """PerfFreq is a LARGE_INTEGER of the log-file header: a damaged or hostile file may hold any 64-bit
    value there, and --summary --json writes it as "0x..." whatever its value (as every 64-bit field)."""
    data = bytearray(real["gcevents"].read_bytes())
    facts = json.loads(run("etw", str(real["gcevents"]), "--summary", "--json"))
    assert facts["perf_freq"] == f"0x{10_000_000:x}"  # PerfView's reading of this file: a 10 MHz clock
    at = data.index(struct.pack("<q", 10_000_000))  # the header's PerfFreq, in the first buffer
    assert at < 4096
    struct.pack_into("<q", data, at, 2 ** 62 + 1)
    hostile = tmp_path / "hostile.etl"
    hostile.write_bytes(bytes(data))
    facts = json.loads(run("etw", str(hostile), "--summary", "--json"))
    assert facts["perf_freq"] == "0x4000000000000001"
    assert_no_big_numbers(json.dumps(facts), "hostile summary")
    text = run("etw", str(hostile), "--summary")
    assert f"clock frequency:   {2 ** 62 + 1:#x} ({2 ** 62 + 1:,})\n" in text  # as --json spells it, the number beside
