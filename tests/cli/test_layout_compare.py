"""Issue 22, "compare layouts": ``d3dkmddi layout TYPE --compare A,B`` as a user types it, text and JSON;
the values are held to definitions.md by tests/golden/test_layout_diff.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def d3dkmddi(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "d3dkmddi_py", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def rows(text: str) -> dict:
    """leaf path -> its row's cells after the path, from the table under the 'leaf' header."""
    lines = text.split("\n   leaf ", 1)[1].splitlines()[1:]
    return {line.split()[0]: line.split(None, 1)[1] for line in lines}


def test_compare_two_abis_prints_the_leaves_that_moved():
    p = d3dkmddi("layout", "DXGK_ALLOCATIONINFO", "--compare", "x86,x64", "--ddi", "WDDM3_0")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    head = p.stdout.splitlines()[:3]
    assert head == ["DXGK_ALLOCATIONINFO  x86 WDDM3_0 (0xF003)  against  x64 WDDM3_0 (0xF003)",
                    "   x86 WDDM3_0 (0xF003): size 0x3c (60), align 4",
                    "   x64 WDDM3_0 (0xF003): size 0x58 (88), align 8"]  # definitions.md §5
    table = rows(p.stdout)
    assert table["Size"].split() == ["+0x00c", "SIZE_T,", "4", "bytes", "+0x010", "SIZE_T,", "8", "bytes", "offset,",
                                     "width"]
    assert table["Flags2.ShareBackingStoreWithKmd"].split()[:2] == ["-", "+0x054"]
    assert table["Flags2.ShareBackingStoreWithKmd"].endswith("presence")
    assert "pPrivateDriverData" in table


def test_compare_two_versions_and_mixed_targets():
    out = d3dkmddi("layout", "DXGK_SEGMENTFLAGS", "--compare", "WDDM2_8,WDDM2_9").stdout
    assert list(rows(out)) == ["PopulatedByReservedDDRByFirmware", "Reserved"]
    assert rows(out)["Reserved"].split() == ["+0x000", "Pos", "21,", "11", "Bits", "+0x000", "Pos", "22,", "10", "Bits",
                                             "bit,", "width"]
    mixed = d3dkmddi("layout", "DXGK_ALLOCATIONLIST", "--compare", "x86:WDDM1_3,x64:0x5023").stdout
    assert mixed.splitlines()[0] == "DXGK_ALLOCATIONLIST  x86 WDDM1_3 (0x4002)  against  x64 WDDM2_0 (0x5023)"
    assert rows(mixed)["VirtualAddress"].startswith("-") and rows(mixed)["VirtualAddress"].endswith("presence")
    same = d3dkmddi("layout", "DXGK_SEGMENTFLAGS", "--compare", "x86,arm64").stdout
    assert "every one of the 24 leaves has the same offset, bit and width at both" in same


def test_compare_json():
    p = d3dkmddi("layout", "DXGK_SEGMENTFLAGS", "--compare", "WDDM2_8,WDDM2_9", "--json")
    obj = json.loads(p.stdout)
    assert obj["a"]["target"]["interface_version"] == "WDDM2_8" and obj["b"]["size"] == 4 and obj["same"] == 22
    assert obj["leaves"][1] == {"path": "Reserved", "a": {"offset": 0, "bit_offset": 21, "bit_width": 11, "c_type": "UINT"},
                                "b": {"offset": 0, "bit_offset": 22, "bit_width": 10, "c_type": "UINT"},
                                "differs": ["bit_offset", "bit_width"]}
    absent = json.loads(d3dkmddi("layout", "DXGK_SEGMENTDESCRIPTOR5", "--compare", "WDDM3_1,WDDM3_2", "--json").stdout)
    assert absent["a"]["absent"] == "only where interface version >= WDDM3_2" and absent["same"] == 0


def test_compare_refuses_in_one_line():
    for spec, words in (("x86", "two targets"), ("x86,x64,arm64", "two targets"), ("x86,", "two targets"),
                        ("x86,WDDM9_9", "neither an ABI"), ("mips:WDDM2_0,x64", "unknown abi")):
        p = d3dkmddi("layout", "DXGK_ALLOCATIONINFO", "--compare", spec)
        assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, (spec, p.stderr)
        assert words in p.stderr and "Traceback" not in p.stderr, (spec, p.stderr)
    p = d3dkmddi("layout", "DXGK_SEGMENTDESCRIPTOR5", "--compare", "WIN7,WDDM2_0")
    assert p.returncode == 2 and "exists only where interface version >= WDDM3_2" in p.stderr


def test_compare_groups_leaves_that_move_by_the_same_amount():
    """Issue 31: --compare x86,x64 listed all 111 leaves of DXGK_ALLOCATIONINFO (106 at WDDM3_0) because everything
    after the first pointer moves; a run that moves by one shift is now one line ("... 27 leaves, each offset shifted
    by +0xc")."""
    import d3dkmddi_py as kmd

    p = d3dkmddi("layout", "DXGK_ALLOCATIONINFO", "--compare", "x86,x64", "--ddi", "WDDM3_0")
    diff = kmd.layout_diff("DXGK_ALLOCATIONINFO", ("x86", "WDDM3_0"), ("x64", "WDDM3_0"))
    lines = p.stdout.splitlines()
    assert len(diff.leaves) == diff.same + len(diff.leaves) == 106 and len(lines) < 30
    assert ("   HintedBank.Bank0 .. PhysicalAdapterIndex: 27 leaves, each offset shifted by +0xc (12) (+0x014..+0x028 "
            "-> +0x020..+0x034), bit and width the same") in lines
    runs = [g for g in diff.groups() if hasattr(g, "shift")]
    assert sum(len(g.leaves) for g in runs) + sum(1 for g in diff.groups() if not hasattr(g, "shift")) == 106
    assert [line for line in lines if " leaves, each offset shifted by " in line] and \
        len([line for line in lines if " leaves, each offset shifted by " in line]) == len(runs)


def test_every_types_groups_are_its_differing_leaves_in_order():
    """The guard for every type and pair of ABIs: the groups hold each differing leaf once, in layout order, and a
    run is two or more leaves that differ in offset alone, each by the run's shift."""
    import d3dkmddi_py as kmd
    from d3dkmddi_py.introspect import LeafDiff, Shifted

    grouped = 0
    types = kmd.target("x64", "WDDM3_0").types.values()
    for name in sorted({cls._c_name_ for cls in types if hasattr(cls, "_leaves_")}):
        for a, b in (("x86", "x64"), ("x86", "arm64"), ("x64", "arm64")):
            diff = kmd.layout_diff(name, (a, "WDDM3_0"), (b, "WDDM3_0"))
            flat = []
            for g in diff.groups():
                if isinstance(g, Shifted):
                    assert len(g.leaves) >= 2 and all(
                        r.differs == ("offset",) and r.b.offset - r.a.offset == g.shift for r in g.leaves), name
                    flat.extend(g.leaves)
                    grouped += 1
                else:
                    assert isinstance(g, LeafDiff)
                    flat.append(g)
            assert tuple(flat) == diff.leaves, name
    assert grouped > 10


def test_print_of_a_layout_diff_is_the_commands_table_and_its_repr_is_short():
    import d3dkmddi_py as kmd

    diff = kmd.layout_diff("DXGK_ALLOCATIONINFO", "x86", "x64")
    p = d3dkmddi("layout", "DXGK_ALLOCATIONINFO", "--compare", "x86,x64")
    assert str(diff) + "\n" == p.stdout
    assert repr(diff) == f"<LayoutDiff DXGK_ALLOCATIONINFO {diff.a.label} against {diff.b.label}: 111 of 111 leaves differ>"
    assert len(repr(diff)) < 200
