"""The command's own entry point fed random input: every outcome is output with status 0/1, or one
line on standard error with status 2; anything else (a traceback) fails the test.

In-process (``cli.run``) so hypothesis can try hundreds of inputs quickly; the subprocess
tests in test_command_line.py show the same entry point behaves so as a real command.
"""
from __future__ import annotations

import os
import re
import tempfile

from hypothesis import given, settings, strategies as st

from d3dkmddi_py import cli

TYPES = st.sampled_from(["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO", "DXGK_SEGMENTDESCRIPTOR", "D3DDDI_SEGMENTPREFERENCE",
                         "DXGK_PAGESIZE", "DXGK_ALOCATIONINFO", "", "!", "_DXGK_SEGMENTFLAGS"])
WORDS = st.one_of(st.integers(-2**40, 2**70).map(hex), st.integers(0, 2**40).map(str), st.text(max_size=12))
LINE = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, vals: f"{a >> 32:08x}`{a & 0xFFFFFFFF:08x}  {vals}", st.integers(0, 2**64 - 1),
              st.lists(st.sampled_from(["00", "85", "0485", "00000485", "00000000`00000485", "??", "zz", "-",
                                        "   ", "+0x000", ":"]), max_size=6).map(" ".join)),
    st.sampled_from(["0: kd> db ffffb80c`4e2f1000", "   +0x000 Aperture : 0y1", "", "[+0x000] x"]),
)


LOG_NOTE = re.compile(r": (skipped \d+ lines? that (is|are) not a memory dump|\d+ dump lines? the debugger could not read)")


def check(argv, log=None):
    out, err, status = cli.run(argv)
    if status == 2:
        assert out == "" and err.count("\n") == 1 and err.strip(), (argv, out[:200], err)
    else:  # stderr carries at most the notes that more records follow and what a log's reading skipped
        notes = [line for line in err.splitlines() if not line.startswith("d3dkmddi: the input holds ")
                 and not (log and line.startswith(f"d3dkmddi: {log}: ") and LOG_NOTE.search(line))]
        assert status in (0, 1) and not notes, (argv, status, err)


@settings(max_examples=150, deadline=None)
@given(TYPES, WORDS, st.sampled_from([[], ["--abi", "x86"], ["--ddi", "WDDM2_0"], ["--ddi", "0x5022"], ["--json"],
                                      ["--count", "0"], ["--offset", "4"], ["--count", "all"]]))
def test_fuzz_value(type_name, word, extra):
    check(["decode", type_name, word, *extra])
    check(["validate", type_name, word, *extra])


@settings(max_examples=150, deadline=None)
@given(TYPES, st.lists(LINE, max_size=8).map("\n".join), st.sampled_from([[], ["--count", "2"], ["--count", "all"],
                                                                          ["--offset", "0x10"], ["--json"]]))
def test_fuzz_windbg_file(type_name, text, extra):
    fd, path = tempfile.mkstemp(suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        check(["decode", type_name, "--windbg", path, *extra], log=path)
        check(["decode", type_name, "--file", path, *extra], log=path)
    finally:
        os.unlink(path)


@settings(max_examples=100, deadline=None)
@given(TYPES, st.text(alphabet="0123456789abcdefABCDEFxg :-`\n", max_size=60), st.text(max_size=8))
def test_fuzz_hex_and_options(type_name, hex_text, option_value):
    check(["decode", type_name, "--hex", hex_text])
    check(["decode", "DXGK_SEGMENTFLAGS", "0", "--offset", option_value])
    check(["decode", "DXGK_SEGMENTFLAGS", "0", "--count", option_value])
    check(["layout", type_name, "--ddi", option_value])
