"""The bundled sample: the checked-in files are what samples/build.py writes, and they decode back."""
from __future__ import annotations

import ctypes

import pytest

from d3dkmddi_py import samples
from d3dkmddi_py.samples import build


@pytest.mark.parametrize("name", sorted(build.files()))
def test_sample_file_is_fresh(name):
    shipped = (samples.DIRECTORY / name).read_bytes()
    assert shipped == build.files()[name], f"{name} is stale: run python -m d3dkmddi_py.samples"


def test_sample_decodes_to_what_the_table_says():
    segs = samples.segments()
    assert [s.value.Size for s in segs] == [s.Size for s in build.SEGMENTS]
    assert segs[0].value.NbOfBanks == 4 and segs[0].value.Flags.UseBanking == 1
    assert segs[2].value.Flags.Aperture == 1
    allocs = samples.allocations()
    assert len(allocs) == len(build.ALLOCATIONS) >= 24  # "a few dozen"
    assert ctypes.sizeof(type(allocs[0].value)) == 88
    assert [a.value.AllocationPriority == 0 for a in allocs] == [spec.AllocationPriority == 0
                                                                 for spec in build.ALLOCATIONS]


def test_sample_has_valid_and_invalid_records():
    valid = [a for a in build.ALLOCATIONS if not a.breaks]
    assert len(valid) >= 10 and len(build.ALLOCATIONS) - len(valid) >= 10


def test_every_rule_the_sample_names_exists():
    from d3dkmddi_py.semantics import RULES

    named = {r for a in build.ALLOCATIONS for r in a.breaks}
    assert named <= set(RULES), named - set(RULES)
