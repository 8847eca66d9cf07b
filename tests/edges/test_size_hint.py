"""The size-mismatch hint names the likelier mistake: a dump from a 32-bit target read with a 64-bit
layout.  Sizes typed from definitions.md §5: DXGK_ALLOCATIONINFO is 88 bytes at x64, 60 at x86."""
from __future__ import annotations

import pytest

from d3dkmddi_py.errors import BulkInputError
from d3dkmddi_py.layout import type_layout
from d3dkmddi_py.span import check_range

from .commandline import WDDM3_0, cli, one_line

X64 = type_layout("DXGK_ALLOCATIONINFO", "x64", 0xF003)
X86 = type_layout("DXGK_ALLOCATIONINFO", "x86", 0xF003)


def _hint(layout, total, count="all", **kw) -> str:
    with pytest.raises(BulkInputError) as e:
        check_range(layout, total, "dump.bin", 0, count, **kw)
    assert "\n" not in str(e.value)
    return e.value.hint


@pytest.mark.parametrize("total, records", [(600, 10), (60, 1), (180, 3)])
def test_bytes_that_x86_reads_exactly_suggest_abi_x86_before_count(total, records):
    assert (X64.size, X86.size) == (88, 60)
    hint = _hint(X64, total)
    assert "--abi x86" in hint and f"{records} record" in hint
    if "--count" in hint:
        assert hint.index("--abi x86") < hint.index("--count")
    # four bytes more and x86 does not read them exactly either: no guess about the abi
    assert "--abi x86" not in _hint(X64, total + 4)


def test_a_count_that_fills_the_bytes_exactly_at_x86_suggests_abi_x86():
    hint = _hint(X64, 120, 2)
    assert "--abi x86" in hint and "2 records fill the 120 bytes exactly" in hint
    assert "--abi" not in _hint(X64, 68)  # one x86 record would fit, with bytes to spare: no guess


def test_eight_digit_addresses_say_the_dump_is_from_a_32_bit_target():
    hint = _hint(X64, 100, address_bytes=4)  # 100 bytes: not whole records at x86 either
    assert "8-digit addresses" in hint and "32-bit target" in hint and "--abi x86" in hint
    assert hint.index("--abi x86") < hint.index("--count 1")


def test_sixteen_digit_addresses_never_suggest_x86_and_name_x64_for_an_x86_layout():
    assert "--abi x86" not in _hint(X64, 600, address_bytes=8)
    assert "64-bit target" in _hint(X86, 100, address_bytes=8)
    assert "--abi" not in _hint(X86, 100)  # an x86 layout with no addresses: nothing says which abi


def test_the_command_suggests_abi_x86_for_a_file_of_x86_records(tmp_path):
    (tmp_path / "x86.bin").write_bytes(bytes(range(60)) * 10)
    line = one_line(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--file", "x86.bin", "--count", "all",
                        cwd=tmp_path))
    assert "--abi x86" in line and line.index("--abi x86") < line.index("--count 6")
    records = cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--abi", "x86", "--file", "x86.bin", "--count", "all",
                  "--format", "csv", cwd=tmp_path)
    assert records.returncode == 0 and records.stdout.count(b"\n") == 11


def test_the_command_says_an_8_digit_dump_is_from_a_32_bit_target(tmp_path):
    words = [0x1000 + i for i in range(25)]  # 100 bytes: x86 does not read them exactly either
    lines = [f"{0x8A3B4000 + 16 * i:08x}  " + " ".join(f"{w:08x}" for w in words[4 * i:4 * i + 4])
             for i in range((len(words) + 3) // 4)]
    (tmp_path / "dd.txt").write_text("0: kd:x86> dd 8a3b4000 L19\n" + "\n".join(lines) + "\n")
    line = one_line(cli("decode", "DXGK_ALLOCATIONINFO", *WDDM3_0, "--windbg", "dd.txt", "--count", "all",
                        cwd=tmp_path))
    assert "8-digit addresses" in line and "--abi x86" in line
