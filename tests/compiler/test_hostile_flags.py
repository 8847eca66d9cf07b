"""Issue 21, "C headers: MSVC's layout or an error, under any flags": each flag a hostile user tried
either compiles with MSVC's layout (every size and offset of the classes asserted by a probe) or stops
at the headers' own check, whose message names the flag to drop.  The layouts are checked once per
distinct layout of the target (probes.layout_versions), in C11, C++ and older C."""
from __future__ import annotations

import subprocess

import pytest

from tests.compiler.probes import (clang_diagnostics, compile_c, layout_asserts, layout_versions, leaf_images,
                                   object_images)
from tests.conftest import count

GCC_ABI = {"x64": ["-m64"], "x86": ["-m32"]}
C11 = ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror"]
TAIL = "drop -fpack-struct, /Zp or a #pragma pack around the #include, and -fshort-enums"
OLD_TAIL = "is_not_MSVCs_layout_drop_fpack_struct_Zp_pragma_pack_or_fshort_enums"  # the negative array's name


def _cases(abis) -> list:
    return [pytest.param(abi, v, id=f"{abi}-{v.name}") for abi in abis for v in layout_versions(abi)]


def _msvc_layout_under_gcc(tmp_path, abi, version, flags, style="c11", compiler="gcc"):
    text = layout_asserts(abi, version, style)
    result = compile_c(tmp_path, text, [*GCC_ABI[abi], *flags], compiler)
    assert result.returncode == 0, result.stderr[-3000:]
    count(f"{compiler} {' '.join(flags)}", abi, version, text.count("\n") - 2)


@pytest.mark.parametrize("abi,version", _cases(GCC_ABI))
def test_gcc_short_enums_keeps_msvcs_4_byte_enums(tmp_path, abi, version):
    """-fshort-enums made DXGK_SEGMENTTYPE and DXGK_PAGESIZE one byte (DXGK_SEGMENTDESCRIPTOR5 kept its
    size: only the enum's own size and the probe's offsets could tell)."""
    _msvc_layout_under_gcc(tmp_path, abi, version, [*C11, "-fshort-enums"])


@pytest.mark.parametrize("abi,version", _cases(["x86"]))
def test_gcc_m32_with_a_false_msc_ver_keeps_msvcs_x86_layout(tmp_path, abi, version):
    """-m32 -D_MSC_VER=1930 switched off the 8-byte alignment of 64-bit integers: a 36-byte
    DXGK_SEGMENTDESCRIPTOR (MSVC: 40)."""
    _msvc_layout_under_gcc(tmp_path, abi, version, [*C11, "-D_MSC_VER=1930"])


@pytest.mark.parametrize("flags", [["-fpack-struct"], ["-fpack-struct=4"], ["-m32", "-fpack-struct"],
                                   ["-m32", "-fpack-struct=4"], ["-m32", "-fpack-struct=2"]],
                         ids=lambda f: " ".join(f))
def test_gcc_pack_struct_is_an_error_naming_the_flag(tmp_path, flags):
    """-fpack-struct gave an 84-byte DXGK_ALLOCATIONINFO (MSVC: 88)."""
    result = compile_c(tmp_path, '#include "d3dkmddi.h"\n', [*C11, *flags])
    assert result.returncode != 0
    assert "static assertion failed" in result.stderr and TAIL in result.stderr, result.stderr[-3000:]


@pytest.mark.parametrize("pragma", ["#pragma pack(1)", "#pragma pack(push, 4)", "#pragma pack(2)"])
@pytest.mark.parametrize("abi", list(GCC_ABI))
def test_a_pragma_pack_around_the_include_is_an_error_naming_it(tmp_path, pragma, abi):
    result = compile_c(tmp_path, f'{pragma}\n#include "d3dkmddi.h"\n', [*GCC_ABI[abi], *C11])
    assert result.returncode != 0 and TAIL in result.stderr, result.stderr[-3000:]


# ---- C++ and C before C11: static_assert, or the negative array of MSVC's C without /std:c11
OLDER = {"g++ -std=c++98": ("g++", ["-std=c++98"], "old"), "g++ -std=c++11": ("g++", ["-std=c++11"], "c++11"),
         "g++ -std=c++17": ("g++", ["-std=c++17"], "c++11"), "gcc -std=c89": ("gcc", ["-std=c89"], "old"),
         "gcc -std=c99": ("gcc", ["-std=c99"], "old")}


@pytest.mark.parametrize("language", list(OLDER))
@pytest.mark.parametrize("abi,version", _cases(GCC_ABI))
def test_headers_compile_as_cxx_and_older_c_with_msvcs_layout(tmp_path, language, abi, version):
    compiler, std, style = OLDER[language]
    _msvc_layout_under_gcc(tmp_path, abi, version, [*std, "-Wall", "-Wextra", "-Werror"], style, compiler)


@pytest.mark.parametrize("language", list(OLDER))
def test_cxx_and_older_c_stop_at_pack_struct_naming_the_flag(tmp_path, language):
    compiler, std, _style = OLDER[language]
    result = compile_c(tmp_path, '#include "d3dkmddi.h"\n', [*std, "-fpack-struct"], compiler)
    assert result.returncode != 0
    said = TAIL if "c++1" in language else OLD_TAIL
    assert said in result.stderr, result.stderr[-3000:]


# ---- clang, through libclang: the Linux and Windows targets
CLANG_TARGETS = {"x86": ["i686-linux-gnu", "i686-pc-windows-msvc"], "x64": ["x86_64-linux-gnu", "x86_64-pc-windows-msvc"],
                 "arm64": ["aarch64-linux-gnu", "aarch64-pc-windows-msvc"]}


def _clang_cases(abis) -> list:
    return [pytest.param(abi, v, triple, id=f"{triple}-{v.name}")
            for abi in abis for v in layout_versions(abi) for triple in CLANG_TARGETS[abi]]


def _msvc_layout_under_clang(ci, abi, version, triple, flags, style="c11"):
    text = layout_asserts(abi, version, style)
    assert clang_diagnostics(ci, text, ["-target", triple, "-Wall", "-Wextra", *flags]) == []
    count(f"clang {' '.join(flags)}", abi, version, text.count("\n") - 2)


@pytest.mark.parametrize("abi,version,triple", _clang_cases(["x86"]))
def test_clang_ms_compatibility_for_i686_keeps_msvcs_x86_layout(cindex, abi, version, triple):
    """clang -fms-compatibility defines neither __GNUC__ nor _MSC_VER for i686 Linux: a 36-byte
    DXGK_SEGMENTDESCRIPTOR (MSVC: 40) when the alignment was asked of __GNUC__."""
    _msvc_layout_under_clang(cindex, abi, version, triple, ["-std=c11", "-fms-compatibility"])


@pytest.mark.parametrize("abi,version,triple", _clang_cases(CLANG_TARGETS))
def test_clang_short_enums_keeps_msvcs_4_byte_enums(cindex, abi, version, triple):
    _msvc_layout_under_clang(cindex, abi, version, triple, ["-std=c11", "-pedantic", "-fshort-enums"])


@pytest.mark.parametrize("language", [["-std=c99"], ["-x", "c++", "-std=c++98"], ["-x", "c++", "-std=c++14"]],
                         ids=lambda f: " ".join(f))
@pytest.mark.parametrize("abi,version,triple", _clang_cases(CLANG_TARGETS))
def test_clang_compiles_as_cxx_and_older_c_with_msvcs_layout(cindex, abi, version, triple, language):
    """MSVC's own modes as clang's Windows targets model them: C++, and C without /std:c11 (no
    _Static_assert, no __GNUC__: the negative array with __alignof__)."""
    style = "c++11" if language[-1] == "-std=c++14" else "old"
    _msvc_layout_under_clang(cindex, abi, version, triple, language, style)


@pytest.mark.parametrize("zp", ["-fpack-struct=1", "-fpack-struct=2"])
@pytest.mark.parametrize("triple", [t for targets in CLANG_TARGETS.values() for t in targets])
def test_clang_pack_struct_and_msvc_zp_are_an_error_naming_the_flag(cindex, triple, zp):
    """clang-cl's /Zp1 and /Zp2 are -fpack-struct=1 and 2."""
    said = clang_diagnostics(cindex, '#include "d3dkmddi.h"\n', ["-target", triple, "-std=c11", "-ferror-limit=0", zp])
    assert said and all(TAIL in d for d in said), said[:3]


# ---- issue 30 case 4: a scalar's byte order and a bit-field's position, under every flag that could move them
SSO = {"-fsso-struct=big-endian": (["-fsso-struct=big-endian"], ""),
       "#pragma scalar_storage_order big-endian": ([], "#pragma scalar_storage_order big-endian")}
# each flag gcc has that could change where a bit or a byte of a structure goes (the -m32 ABI is x86's cases)
BIT_FLAGS = {"-mms-bitfields": ["-mms-bitfields"], "-mno-ms-bitfields": ["-mno-ms-bitfields"],
             "-fsigned-bitfields": ["-fsigned-bitfields"], "-funsigned-bitfields": ["-funsigned-bitfields"],
             "-fshort-enums": ["-fshort-enums"], "-malign-double": ["-malign-double"],
             "-D_MSC_VER=1930": ["-D_MSC_VER=1930"], "none": []}


def _every_leaf_in_place(tmp_path, abi, version, flags, before="", label=""):
    """Each leaf set alone in a static object (a bit-field to ones, a scalar to 01 02 03 ...), compiled to an
    object file: its bytes are the ones MSVC's layout gives, so every bit position and byte order holds."""
    text, expected = leaf_images(abi, version, before)
    result, images = object_images(tmp_path, text, [*GCC_ABI[abi], *C11, *flags])
    assert result.returncode == 0, result.stderr[-3000:]
    wrong = [(what, images.get(symbol, b"").hex(), image.hex()) for symbol, what, image in expected
             if images.get(symbol) != image]
    assert wrong == [], wrong[:5]
    count(f"gcc {label or ' '.join(flags)} (bytes of each leaf)", abi, version, len(expected))


@pytest.mark.parametrize("how", list(SSO))
@pytest.mark.parametrize("abi,version", _cases(GCC_ABI))
def test_big_endian_storage_order_is_reset_inside_the_headers(tmp_path, how, abi, version):
    """gcc -fsso-struct=big-endian, or the pragma before the #include, compiled the headers silently and
    stored every scalar and bit-field of the structures reversed: 85 04 00 00 read as 0x85040000."""
    flags, before = SSO[how]
    _every_leaf_in_place(tmp_path, abi, version, flags, before, how)


@pytest.mark.parametrize("how", list(SSO))
def test_big_endian_storage_order_reads_85_04_00_00_as_0x485(tmp_path, how):
    flags, before = SSO[how]
    text = before + '''
#include <stdio.h>
#include <string.h>
#include "d3dkmddi.h"
int main(void) {
    static const unsigned char raw[4] = {0x85, 0x04, 0x00, 0x00};
    DXGK_SEGMENTFLAGS f;
    memcpy(&f, raw, sizeof f);
    printf("%#x %u %u %u\\n", f.Value, f.Aperture, f.CpuVisible, f.DirectFlip);
    return 0;
}
'''
    result = compile_c(tmp_path, text, [*C11, *flags, "-o", str(tmp_path / "probe")], action="-O0")
    assert result.returncode == 0, result.stderr[-3000:]
    assert subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, timeout=60).stdout == "0x485 1 1 1\n"


@pytest.mark.parametrize("flag", list(BIT_FLAGS))
@pytest.mark.parametrize("abi,version", _cases(GCC_ABI))
def test_every_leaf_keeps_msvcs_bit_position_and_byte_order_under_each_layout_flag(tmp_path, flag, abi, version):
    """The siblings: gcc's bit-field rules (-mms-bitfields is MSVC's, -mno- the System V one), the sign of plain
    bit-fields, short enums, double alignment and a false _MSC_VER.  Every bit-field of the kit is a UINT, so
    none of them moves a bit; this holds it when the table changes."""
    _every_leaf_in_place(tmp_path, abi, version, BIT_FLAGS[flag], label=flag)


@pytest.mark.parametrize("triple", ["aarch64_be-linux-gnu", "powerpc64-linux-gnu", "s390x-linux-gnu"])
def test_a_big_endian_target_stops_naming_the_byte_order(cindex, triple):
    """No flag of the headers can turn a big-endian target's scalars: it stops at an #error saying so."""
    said = clang_diagnostics(cindex, '#include "d3dkmddi.h"\n', ["-target", triple, "-std=c11", "-D_AMD64_"])
    assert len(said) == 1 and "this target stores scalars big-endian (__BYTE_ORDER__), and Windows' structures are " \
                              "little-endian: compile for a little-endian target" in said[0], said[:3]
