"""The command lines whose output is kept verbatim in this folder.

``<samples>`` in an argument stands for the bundled sample folder; in the output the
folder's real path is written back as ``<samples>``, so the files do not depend on
where the repository is.  Regenerate after an intended change with

    PYTHONPATH=. python tests/golden_output/regenerate.py

and read the diff before committing it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SAMPLES = REPO / "d3dkmddi_py" / "samples"

# file name -> argv after `d3dkmddi`
CASES = {
    "demo.txt": ["demo"],
    "decode_segmentflags_0x485_wddm2_0.txt": ["decode", "DXGK_SEGMENTFLAGS", "0x485", "--ddi", "WDDM2_0"],
    "decode_segmentflags_0x485_x86_vista.json": ["decode", "DXGK_SEGMENTFLAGS", "0x485", "--abi", "x86",
                                                 "--ddi", "0x1052", "--json"],
    "decode_sample_windbg.txt": ["decode", "DXGK_ALLOCATIONINFO", "--windbg", "<samples>/allocations.dq.txt",
                                 "--ddi", "WDDM3_0", "--count", "2"],
    "decode_sample_record24.txt": ["decode", "DXGK_ALLOCATIONINFO", "--file", "<samples>/allocations.bin",
                                   "--ddi", "WDDM3_0", "--offset", "0x840", "--adapter", "sample"],
    "decode_sample_record24.json": ["decode", "DXGK_ALLOCATIONINFO", "--file", "<samples>/allocations.bin",
                                    "--ddi", "WDDM3_0", "--offset", "0x840", "--adapter", "sample", "--json"],
    "decode_sample_segments.json": ["decode", "DXGK_SEGMENTDESCRIPTOR", "--file", "<samples>/segments.bin",
                                    "--ddi", "WDDM3_0", "--count", "all", "--json"],
    # issue 31: a pointer and a SIZE_T are 0x... in CSV as in JSON (one spelling), never decimal
    "decode_sample_records.csv": ["decode", "DXGK_ALLOCATIONINFO", "--file", "<samples>/allocations.bin",
                                  "--ddi", "WDDM3_0", "--count", "4", "--format", "csv"],
    "validate_sample.txt": ["validate", "DXGK_ALLOCATIONINFO", "--file", "<samples>/allocations.bin",
                            "--ddi", "WDDM3_0", "--count", "all", "--adapter", "sample"],
    "layout_allocationinfo_x86_wddm2_0.txt": ["layout", "DXGK_ALLOCATIONINFO", "--abi", "x86", "--ddi", "WDDM2_0"],
    "layout_segmentdescriptor4_x64.json": ["layout", "DXGK_SEGMENTDESCRIPTOR4", "--json"],
    "types_wddm2_0.txt": ["types", "--ddi", "WDDM2_0"],
    # issue 24: the bundled session log, its structures followed by address and validated against its segments
    "decode_session_createallocation_follow.txt": ["decode", "DXGKARG_CREATEALLOCATION", "--windbg",
                                                   "<samples>/session.log", "--address", "ffffb80c`4e2f0000",
                                                   "--follow", "--ddi", "WDDM3_0"],
    "decode_session_query_follow.json": ["decode", "DXGK_QUERYSEGMENTOUT3", "--windbg", "<samples>/session.log",
                                         "--address", "ffffb80c`4e310000", "--follow", "--json", "--ddi", "WDDM3_0"],
    "validate_session_follow.txt": ["validate", "DXGKARG_CREATEALLOCATION", "--windbg", "<samples>/session.log",
                                    "--address", "ffffb80c`4e2f0000", "--follow", "--segments-at", "ffffb80c`4e310000",
                                    "--ddi", "WDDM3_0"],
}


def command(argv, *, program=None, samples: Path = SAMPLES, cwd: Path = REPO) -> tuple[str, int]:
    """(normalised stdout, exit status) of ``d3dkmddi argv`` as a user runs it: by default
    ``python -m d3dkmddi_py`` from this checkout; ``program`` is another installed command."""
    args = [a.replace("<samples>", str(samples)) for a in argv]
    if program is None:
        program, env = [sys.executable, "-m", "d3dkmddi_py"], dict(os.environ, PYTHONPATH=str(REPO))
    else:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([*map(str, program), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    if p.stderr and "Traceback" in p.stderr:
        raise AssertionError(f"d3dkmddi {' '.join(argv)} crashed:\n{p.stderr}")
    return p.stdout.replace(str(samples), "<samples>"), p.returncode


def expected_status(name: str) -> int:
    return 1 if name.startswith("validate") else 0
