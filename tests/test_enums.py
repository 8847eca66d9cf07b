"""Every enum and flag type of the package prints its names with str() and f-strings, on every Python
(3.11's IntEnum and IntFlag print the number)."""
from __future__ import annotations

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.etw.model.schema import AllocationFlag, UsageFlag
from d3dkmddi_py.target import ENUM_CLASSES

ENUMS = [sem.BankDirection, sem.SegmentDirection, sem.PriorityBand, sem.PowerBehaviour, kmd.InterfaceVersion,
         *ENUM_CLASSES.values()]
FLAGS = [sem.SegmentFlag, AllocationFlag, UsageFlag]


@pytest.mark.parametrize("cls", ENUMS, ids=lambda c: c.__name__)
def test_enum_members_print_their_names(cls):
    for member in cls:
        assert str(member) == f"{member}" == member.name
        assert f"{member:d}" == str(int(member)) and f"{member:#x}" == hex(int(member))


@pytest.mark.parametrize("cls", FLAGS, ids=lambda c: c.__name__)
def test_flag_values_print_their_set_members(cls):
    first, second = list(cls)[:2]
    both = first | second
    assert str(both) == f"{both}" == f"{first.name}|{second.name}"
    assert str(cls(0)) == "(none set)" and f"{both:x}" == f"{int(both):x}"


def test_the_helpers_results_read_as_names():
    assert str(sem.power_behaviour(0x180)) == "NEVER_PURGED"
    assert f"{sem.decode_segment_flags(0x485).flags}" == "Aperture|CpuVisible|PreservedDuringStandby|DirectFlip"


def test_an_enumerator_names_its_own_type():
    """explain / check / field_meanings of a DXGK_SEGMENTTYPE or DXGK_PAGESIZE member need no type_name."""
    member = ENUM_CLASSES["DXGK_SEGMENTTYPE"](1)
    text = sem.explain(member)
    assert text.splitlines()[1] == "  DXGK_SEGMENTTYPE = 0x1  DXGK_SEGMENTTYPE_LOCAL"
    assert sem.check(ENUM_CLASSES["DXGK_PAGESIZE"](4)) == []
    with pytest.raises(kmd.InvalidFieldType, match="say which type it is"):
        sem.explain(5)


@pytest.mark.parametrize("name", sorted(ENUM_CLASSES))
def test_a_value_no_enumerator_has_decodes_as_json_too(name):
    """decode --json of an enum word outside the enumeration: the number, no name (it used to exit 2)."""
    import json

    from d3dkmddi_py import cli

    unused = max(int(m) for m in ENUM_CLASSES[name]) + 1
    out, err, status = cli.run(["decode", name, str(unused), "--json"])
    assert status == 0 and err == "", err
    record = json.loads(out)
    assert record["fields"] == {"": unused} and record["names"] == {}


def test_record_json_of_an_enum_value_without_a_target_names_the_default_one():
    from d3dkmddi_py.jsonformat import record_json

    value = ENUM_CLASSES["DXGK_SEGMENTTYPE"](1)
    assert record_json(value)["target"]["label"] == kmd.target().label
    assert record_json(7, c_name="DXGK_SEGMENTTYPE")["fields"] == {"": 7}
