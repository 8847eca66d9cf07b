"""The ``d3dkmddi`` command driven as a user types it: ``python -m d3dkmddi_py ...`` in a subprocess.

Good input: the right records, exit 0 (validate: 1 on an error-level finding).
Bad input (every kind the issue lists, and a few more): exactly one line on standard
error, exit status 2, no traceback, nothing on standard output.
"""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "d3dkmddi_py" / "samples"
ALLOCATIONS = str(SAMPLES / "allocations.bin")
SEGMENTS = str(SAMPLES / "segments.bin")
WINDBG = str(SAMPLES / "allocations.dq.txt")
SAMPLE = ["--ddi", "WDDM3_0"]
N_ALLOCATIONS = 35  # d3dkmddi_py/samples/build.py ALLOCATIONS
ALLOCATIONINFO_X64 = 88  # definitions.md §5 (x64)


def d3dkmddi(*args, stdin: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "d3dkmddi_py", *args], input=stdin, capture_output=True,
                          env=env, cwd=cwd or REPO, timeout=120)


def ok(*args, status: int = 0, **kw) -> str:
    p = d3dkmddi(*args, **kw)
    assert p.returncode == status, p.stderr.decode()
    assert b"Traceback" not in p.stderr
    return p.stdout.decode()


def bad(*args, **kw) -> str:
    """Run a bad command line: one stderr line, status 2, empty stdout; returns the line."""
    p = d3dkmddi(*args, **kw)
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, err, p.stdout[:300])
    assert "Traceback" not in err, err
    assert p.stdout == b"", p.stdout[:300]
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err


# ------------------------------------------------------------------ decode
def test_decode_a_word_from_an_etw_event():
    out = ok("decode", "DXGK_SEGMENTFLAGS", "0x485", "--ddi", "WDDM2_0")
    lines = out.splitlines()
    assert lines[0] == "DXGK_SEGMENTFLAGS  x64 WDDM2_0 (0x5023)  [0] at +0x0, 4 bytes"
    row = {ln.split(":")[0].split()[-1]: ln for ln in lines[1:] if ln.lstrip().startswith("+0x")}
    assert "Pos 0, 1 Bit" in row["Aperture"] and "0x1 (1)" in row["Aperture"]
    assert "Pos 10, 1 Bit" in row["DirectFlip"] and "0x1 (1)" in row["DirectFlip"]
    assert "Pos 1, 1 Bit" in row["Agp"] and "0x0 (0)" in row["Agp"]
    assert "Pos 21, 11 Bits" in row["Reserved"]  # WDDM2_0: no PopulatedByReservedDDRByFirmware yet
    assert "0x485 (1157)" in row["Value"]
    assert "SEGFLAGS.CPUVISIBLE_ON_APERTURE" in out  # a finding, shown under its field


def test_ddi_number_and_name_are_the_same_target():
    assert ok("decode", "DXGK_SEGMENTFLAGS", "1157", "--ddi", "0x5023") == \
        ok("decode", "DXGK_SEGMENTFLAGS", "0x485", "--ddi", "DXGKDDI_INTERFACE_VERSION_WDDM2_0")


def test_decode_at_x86():
    out = ok("decode", "DXGK_SEGMENTDESCRIPTOR", "--hex", "00" * 40, "--abi", "x86", "--ddi", "WDDM2_0")
    assert "40 bytes" in out.splitlines()[0]
    assert "+0x014 NbOfBanks" in out and "+0x020 Flags" in out  # definitions.md §10.1 x86 offsets


def test_decode_file_offset_count():
    out = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--offset", "0x58", "--count", "2")
    titles = [ln for ln in out.splitlines() if ln.startswith("DXGK_ALLOCATIONINFO")]
    assert titles == ["DXGK_ALLOCATIONINFO  x64 WDDM3_0 (0xF003)  [0] at +0x58, 88 bytes",
                      "DXGK_ALLOCATIONINFO  x64 WDDM3_0 (0xF003)  [1] at +0xb0, 88 bytes"]
    assert "0x7e9000 (8294400)" in out  # record 1 of the sample: a 1920x1080x4 primary


def test_decode_json_one_object_per_record_with_stable_keys():
    out = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "3", "--json",
             "--adapter", "sample")
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == 3
    keys = ["type", "target", "index", "offset", "address", "size", "bytes", "fields", "names", "meanings",
            "findings"]
    assert all(list(o) == keys for o in objs)
    raw = Path(ALLOCATIONS).read_bytes()
    assert [bytes.fromhex(o["bytes"]) for o in objs] == [raw[i * 88:(i + 1) * 88] for i in range(3)]
    assert objs[1]["fields"]["Size"] == "0x7e9000" and objs[1]["target"]["interface_version"] == "WDDM3_0"


def test_decode_windbg_file_and_stdin():
    from_file = ok("decode", "DXGK_ALLOCATIONINFO", "--windbg", WINDBG, *SAMPLE, "--count", "2")
    from_stdin = ok("decode", "DXGK_ALLOCATIONINFO", "--windbg", "-", *SAMPLE, "--count", "2",
                    stdin=Path(WINDBG).read_bytes())
    assert from_file == from_stdin
    assert "[1] at +0x58 (ffffb80c`4e2f1058)" in from_file
    raw = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "2")
    strip = lambda text: [ln for ln in text.splitlines() if not ln.startswith("DXGK_ALLOCATIONINFO")]  # noqa: E731
    assert strip(from_file) == strip(raw)  # same bytes, same fields


def test_decode_raw_stdin():
    data = Path(ALLOCATIONS).read_bytes()[:88]
    out = ok("decode", "DXGK_ALLOCATIONINFO", "--file", "-", *SAMPLE, "--json", stdin=data)
    assert bytes.fromhex(json.loads(out)["bytes"]) == data


def test_decode_nonzero_is_compact():
    full = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE)
    short = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--nonzero")
    assert len(short.splitlines()) < len(full.splitlines()) / 3
    assert "Reserved0" in full and "Reserved0" not in short


def test_decode_enum():
    out = ok("decode", "DXGK_PAGESIZE", "4")
    assert "DXGK_PAGESIZE_64KB" in out


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_decode_count_all_columns(fmt, tmp_path):
    out = ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "all", "--format", fmt)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
    else:
        rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == N_ALLOCATIONS
    assert int(rows[1]["Size"], 0) == 0x7E9000 and int(rows[12]["AllocationPriority"]) == 0
    if fmt == "jsonl":  # SIZE_T is a "0x..." string in JSON, a number in CSV
        assert rows[1]["Size"] == "0x7e9000"
    target = tmp_path / f"out.{fmt}"
    assert ok("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "all", "--format", fmt,
              "--output", str(target)) == ""
    assert target.read_text() == out


def test_decode_count_all_text_path():
    out = ok("decode", "DXGK_SEGMENTDESCRIPTOR", "--file", SEGMENTS, *SAMPLE, "--count", "all", "--nonzero")
    assert out.count("DXGK_SEGMENTDESCRIPTOR  x64") == 3


# ------------------------------------------------------------------ validate
def test_validate_exit_status_follows_error_findings():
    out = ok("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "all", "--adapter",
             "sample", status=1)
    assert out.splitlines()[-1] == "35 records: 14 errors, 11 warnings"
    assert "ALLOCINFO.PRIORITY_ZERO" in out
    clean = ok("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "12", "--adapter",
               "sample")
    assert clean.splitlines()[-1] == "12 records: 0 errors, 0 warnings"


def test_validate_warnings_only_exit_0():
    # record 14 is a constant buffer of 0x1234 bytes: a warning, not an error
    out = ok("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--offset", hex(14 * 88))
    assert "warning ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE" in out


def test_validate_word_and_json():
    p = d3dkmddi("validate", "DXGK_SEGMENTFLAGS", "0x3", "--json")  # Aperture + Agp
    assert p.returncode == 1
    obj = json.loads(p.stdout)
    assert "SEGFLAGS.AGP_EXCLUSIVE" in {f["rule_id"] for f in obj["findings"]}
    f = obj["findings"][0]
    assert list(f) == ["rule_id", "severity", "field", "value", "message", "reference"]
    assert set(f["reference"]) == {"page", "sentence"}


def test_validate_against_segments_file():
    out = ok("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--offset", hex(24 * 88),
             "--segments", SEGMENTS, "--segment-type", "DXGK_SEGMENTDESCRIPTOR")
    assert "warning ALLOCINFO.HINTEDBANK_OUT_OF_RANGE" in out  # a warning: "identifiers are one-based" describes
    no_adapter = ok("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--offset", hex(24 * 88))
    assert "HINTEDBANK_OUT_OF_RANGE" not in no_adapter  # needs the adapter's NbOfBanks


# ------------------------------------------------------------------ layout, types, demo
def test_layout_text_and_json():
    out = ok("layout", "DXGK_SEGMENTDESCRIPTOR", "--abi", "x86", "--ddi", "WDDM2_0")
    assert out.splitlines()[0] == "DXGK_SEGMENTDESCRIPTOR  x86 WDDM2_0 (0x5023)  size 0x28 (40), align 8"
    for line in ("+0x010 Size", "+0x014 NbOfBanks", "+0x018 pBankRangeTable", "+0x01c CommitLimit", "+0x020 Flags"):
        assert line in out  # definitions.md §10.1, x86 column
    assert "Pos 3, 1 Bit" in out  # Flags.UseBanking
    obj = json.loads(ok("layout", "DXGK_ALLOCATIONINFO", "--json"))
    assert obj["size"] == ALLOCATIONINFO_X64
    leaf = {x["path"]: x for x in obj["leaves"]}["PreferredSegment.SegmentId1"]
    assert (leaf["offset"], leaf["bit_offset"], leaf["bit_width"], leaf["mask"]) == (0x24, 6, 5, 0x7C0)


def test_layout_enum():
    out = ok("layout", "DXGK_SEGMENTTYPE")
    assert "DXGK_SEGMENTTYPE_LOCAL = 1" in out


def test_types():
    out = ok("types", "--ddi", "WDDM2_0")
    assert "DXGK_SEGMENTDESCRIPTOR4" in out and "DXGK_SEGMENTDESCRIPTOR5" in out.split("not at this target:")[1]
    obj = json.loads(ok("types", "--abi", "x86", "--json"))
    sizes = {t["name"]: t["size"] for t in obj["types"]}
    assert sizes["DXGK_ALLOCATIONINFO"] == 60 and sizes["DXGK_SEGMENTDESCRIPTOR5"] == 80  # definitions.md §16, §10.6


def test_demo():
    out = ok("demo")
    assert "35 DXGK_ALLOCATIONINFO records" in out
    assert "allocations: 35, 12 without findings, 23 with 14 errors and 11 warnings" in out
    assert "(written to break" not in out  # every record breaks exactly the rules it was written for
    obj = json.loads(ok("demo", "--json"))
    assert obj["summary"]["allocations"] == N_ALLOCATIONS
    for a in obj["allocations"]:
        assert {f["rule_id"] for f in a["findings"]} == set(a["written_to_break"]), a["note"]


def test_help_is_not_an_error():
    assert "decode" in ok("--help")
    assert "--windbg" in ok("decode", "--help")


# ------------------------------------------------------------------ bad input: one line, exit 2
def test_bad_unknown_type_suggests():
    err = bad("decode", "DXGK_ALOCATIONINFO", "0")
    assert "unknown type 'DXGK_ALOCATIONINFO'" in err and "did you mean DXGK_ALLOCATIONINFO" in err


def test_bad_type_from_a_later_version():
    err = bad("layout", "DXGK_SEGMENTDESCRIPTOR5", "--ddi", "WDDM2_0")
    assert "DXGK_SEGMENTDESCRIPTOR5 exists only where interface version >= WDDM3_2" in err


@pytest.mark.parametrize("command", [["decode", "DXGK_SEGMENTFLAGS", "0"], ["layout", "DXGK_SEGMENTFLAGS"],
                                     ["types"], ["validate", "DXGK_SEGMENTFLAGS", "0"]])
def test_bad_abi_lists_them(command):
    assert "unknown abi 'mips'; valid: x86, x64, arm64" in bad(*command, "--abi", "mips")


@pytest.mark.parametrize("version", ["WDDM9_9", "0x5022", "banana"])
def test_bad_version_lists_them(version):
    err = bad("decode", "DXGK_SEGMENTFLAGS", "0", "--ddi", version)
    assert "valid: VISTA (0x1052)" in err and "WDDM3_2 (0x11007)" in err


def test_bad_hex():
    assert "bad hex: 'g' at position 5" in bad("decode", "DXGK_SEGMENTFLAGS", "--hex", "85 0g 00 00")


def test_odd_length_hex():
    assert "odd-length hex: '8504000' has 7 digits" in bad("decode", "DXGK_SEGMENTFLAGS", "--hex", "8504000")


def test_value_too_wide():
    err = bad("decode", "DXGK_SEGMENTFLAGS", "0x100000000")
    assert "too wide for DXGK_SEGMENTFLAGS: it needs 5 bytes, DXGK_SEGMENTFLAGS has 4" in err


def test_negative_value():
    assert "is negative" in bad("decode", "DXGK_SEGMENTFLAGS", "--", "-5")


def test_value_not_an_integer():
    assert "VALUE 'zz' is not an integer" in bad("decode", "DXGK_SEGMENTFLAGS", "zz")
    assert "it is a file: pass --file" in bad("decode", "DXGK_ALLOCATIONINFO", ALLOCATIONS)


def test_truncated_data(tmp_path):
    short = tmp_path / "short.bin"
    short.write_bytes(bytes(100))
    err = bad("decode", "DXGK_ALLOCATIONINFO", "--file", str(short), "--offset", "0x20")
    assert "DXGK_ALLOCATIONINFO needs 88 bytes at offset 0x20" in err and "has 68 there" in err
    err = bad("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "36")
    assert "36 records of DXGK_ALLOCATIONINFO need 3168 bytes" in err and "(35 whole records fit)" in err


def test_truncated_hex_and_windbg():
    assert "needs 4 bytes" in bad("decode", "DXGK_SEGMENTFLAGS", "--hex", "85 04")
    assert "needs 88 bytes" in bad("decode", "DXGK_ALLOCATIONINFO", "--windbg", "-",
                                   stdin=b"ffffb80c`4e2f1000  00000485 00000000\n")


def test_offset_past_the_end():
    err = bad("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--offset", "0x1000")
    assert "offset 0x1000 (4096) is past the end" in err and "(3080 bytes)" in err


def test_negative_offset():
    assert "offset -4 is negative" in bad("decode", "DXGK_SEGMENTFLAGS", "0", "--offset", "-4")


@pytest.mark.parametrize("count", ["0", "-1"])
def test_zero_or_negative_count(count):
    assert f"count {count} is not positive" in bad("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS,
                                                   "--count", count)


def test_count_not_a_number():
    assert "--count 'many' is not an integer" in bad("decode", "DXGK_SEGMENTFLAGS", "0", "--count", "many")


def test_count_all_with_a_partial_record(tmp_path):
    blob = tmp_path / "odd.bin"
    blob.write_bytes(bytes(88 * 2 + 5))
    for extra in ([], ["--format", "csv"]):
        err = bad("decode", "DXGK_ALLOCATIONINFO", "--file", str(blob), "--count", "all", *extra)
        assert "2 whole DXGK_ALLOCATIONINFO records" in err and "5 bytes left over" in err


def test_unparseable_windbg_line_says_which_and_why(tmp_path):
    dump = tmp_path / "dump.txt"
    dump.write_text("0: kd> dd ffffb80c`4e2f1000\n"
                    "ffffb80c`4e2f1000  00000485 00000000 00000000 00000000\n"
                    "ffffb80c`4e2f1010  00000000 0000zz00 00000000 00000000\n")
    err = bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", str(dump))
    assert f"{dump} line 3: '0000zz00' at column 29 is not an 8-digit dword" in err


def test_windbg_gap_and_unreadable_memory():
    """Issue 24: two ranges are memory with a gap between them, read by address; the gap is named."""
    gap = b"ffffb80c`4e2f1000  00000485\nffffb80c`4e2f1008  00000485\n"
    assert "standard input holds 2 separate ranges of memory (ffffb80c`4e2f1000 (line 1), ffffb80c`4e2f1008 " \
           "(line 2)); give the address of the record to read (--address" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "-", stdin=gap)
    assert "has no bytes at ffffb80c`4e2f1004..ffffb80c`4e2f1007 (4 bytes) of the 8 read at ffffb80c`4e2f1000: no " \
           "dump holds them; `db ffffb80c`4e2f1004 L0x4` in WinDbg shows them" in \
        bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "-", "--address", "ffffb80c`4e2f1000", "--count", "2", stdin=gap)
    assert "was not readable in the debugger" in bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "-",
                                                     stdin=b"ffffb80c`4e2f1000  ????????\n")


def test_dt_output_is_refused_with_a_hint():
    dt = (b"0: kd> dt dxgkrnl!_DXGK_SEGMENTFLAGS ffffb80c`4e2f1000\n"
          b"   +0x000 Aperture         : 0y1\n   +0x000 Agp              : 0y0\n")
    err = bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "-", stdin=dt)
    assert "is `dt`/`dx` output" in err and "run `db <address> L<size>`" in err


def test_windbg_text_given_as_raw_file():
    assert f"read it with --windbg {WINDBG}" in bad("decode", "DXGK_ALLOCATIONINFO", "--file", WINDBG)


def test_binary_given_as_windbg():
    assert "is not text" in bad("decode", "DXGK_ALLOCATIONINFO", "--windbg", ALLOCATIONS)


def test_empty_windbg_text():
    assert "has no memory lines" in bad("decode", "DXGK_SEGMENTFLAGS", "--windbg", "-", stdin=b"")


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.bin")
    for option in ("--file", "--windbg"):
        assert f"cannot read {missing}: no such file" in bad("decode", "DXGK_ALLOCATIONINFO", option, missing)
    assert "no such file" in bad("decode", "DXGK_ALLOCATIONINFO", "--file", missing, "--count", "all",
                                 "--format", "csv")
    assert "no such file" in bad("validate", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, "--segments", missing)


def test_unreadable_file(tmp_path):
    assert "it is a directory" in bad("decode", "DXGK_ALLOCATIONINFO", "--file", str(tmp_path))
    if sys.platform.startswith("linux"):  # reading /proc/self/mem from offset 0 fails with EIO
        assert "cannot read /proc/self/mem: Input/output error" in bad("decode", "DXGK_SEGMENTFLAGS",
                                                                     "--file", "/proc/self/mem")


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert "is empty; DXGK_SEGMENTFLAGS needs 4 bytes" in bad("decode", "DXGK_SEGMENTFLAGS", "--file", str(empty))


def test_no_input_and_two_inputs():
    assert "no input" in bad("decode", "DXGK_SEGMENTFLAGS")
    assert "give one input, not value and hex" in bad("decode", "DXGK_SEGMENTFLAGS", "0", "--hex", "00000000")
    assert "not allowed with argument" in bad("decode", "DXGK_SEGMENTFLAGS", "--hex", "00", "--file", ALLOCATIONS)


def test_usage_errors_are_one_line():
    assert "invalid choice: 'bogus'" in bad("bogus")
    assert "unrecognized arguments: --frobnicate" in bad("decode", "DXGK_SEGMENTFLAGS", "0", "--frobnicate")
    assert "the following arguments are required: TYPE" in bad("layout")
    assert "invalid choice: 'xml'" in bad("decode", "DXGK_SEGMENTFLAGS", "0", "--format", "xml")


def test_output_option_misuse(tmp_path):
    text = tmp_path / "x"  # text and JSON go to --output too, whole and atomically, with a note on stderr
    p = d3dkmddi("decode", "DXGK_SEGMENTFLAGS", "0", "--output", str(text))
    assert p.returncode == 0 and p.stdout == b"" and text.read_text().startswith("DXGK_SEGMENTFLAGS  x64")
    assert p.stderr.decode() == f"d3dkmddi: wrote 1 record to {text}\n"
    assert "does not exist" in bad("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE,
                                                "--count", "all", "--format", "csv", "--output",
                                                str(tmp_path / "no" / "such" / "dir.csv"))


def test_parquet_without_pyarrow_or_with_it(tmp_path):
    target = tmp_path / "out.parquet"
    p = d3dkmddi("decode", "DXGK_ALLOCATIONINFO", "--file", ALLOCATIONS, *SAMPLE, "--count", "all", "--format",
                 "parquet", "--output", str(target))
    try:
        import pyarrow.parquet as pq
    except ImportError:
        assert p.returncode == 2 and "needs pyarrow" in p.stderr.decode() and not target.exists()
    else:
        assert p.returncode == 0 and pq.read_table(target).num_rows == N_ALLOCATIONS


def test_segment_type_without_segments():
    assert "--segment-type needs --segments" in bad("validate", "DXGK_SEGMENTFLAGS", "0", "--segment-type",
                                                    "DXGK_SEGMENTDESCRIPTOR")
