"""Checked assignment (issue 2, requirement 3): every leaf of every class of every target
takes exactly its range, refuses the rest without writing anything, and says what was
wrong; misspelled names and foreign structs are refused too."""
from __future__ import annotations

import ctypes

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py.errors import InvalidArgument
from tests.golden.access import ALL_TARGETS, by_layout, class_layout, read_path, target_id, write_path


def _unique_classes(t):
    seen, out = set(), []
    for name, cls in sorted(t.types.items()):
        if name.startswith("_") or id(cls) in seen or not hasattr(cls, "_fields_"):
            continue
        seen.add(id(cls))
        out.append((cls._c_name_, cls))
    return out


ALL_CASES = [(abi, v, name) for abi, v in ALL_TARGETS for name, _cls in _unique_classes(kmd.target(abi, v))]
# checked assignment depends on the class's layout only: one representative per distinct layout
GROUPS = by_layout(ALL_CASES)
CASES = [members[0] for members in GROUPS.values()]
IDS = [f"{target_id(abi, v)}-{name}" for abi, v, name in CASES]


def test_layout_groups():
    """Every (abi, version) of a group lays its class out exactly as the group's representative (size,
    alignment, every leaf as ctypes places it), so testing the representative tests them all."""
    assert len(ALL_CASES) == sum(map(len, GROUPS.values())) and len(CASES) < len(ALL_CASES)
    for (name, spec), members in GROUPS.items():
        abi, v, _name = members[0]
        want = class_layout(getattr(kmd.target(abi, v), name))
        assert want == spec, (name, target_id(abi, v))
        for abi, v, _name in members[1:]:
            assert class_layout(getattr(kmd.target(abi, v), name)) == want, (name, target_id(abi, v))


def _owner_and_field(obj, path):
    """The object that holds the leaf's last member, and the field name an error should give."""
    head, _, last = path.rpartition(".")
    return (read_path(obj, head) if head else obj), last


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_every_leaf_takes_its_range_and_refuses_the_rest(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    for leaf in kmd.leaves(cls):
        obj = cls()
        owner, field = _owner_and_field(obj, leaf.path)
        for good in (leaf.max_value, leaf.min_value, leaf.max_value // 3):
            write_path(obj, leaf.path, good)
            got = read_path(obj, leaf.path)
            assert got == good and type(got) is int, leaf.path
        before = bytes(obj)
        refused = [(leaf.max_value + 1, kmd.InvalidFieldValue, "does not fit"),
                   (leaf.min_value - 1, kmd.InvalidFieldValue, "negative" if not leaf.signed else "does not fit"),
                   (1 << 64, kmd.InvalidFieldValue, "does not fit"),
                   (1.0, kmd.InvalidFieldType, "not an integer"),
                   ("1", kmd.InvalidFieldType, "not an integer"),
                   (None, kmd.InvalidFieldType, "not an integer")]
        for bad, error, words in refused:
            with pytest.raises(error) as err:
                write_path(obj, leaf.path, bad)
            e = err.value
            assert bytes(obj) == before, (leaf.path, bad)  # nothing written
            assert (e.type_name, e.field) == (owner._c_name_, field), leaf.path
            assert e.value is bad or e.value == bad
            assert f"{leaf.min_value}.." in e.valid and str(leaf.max_value) in e.valid
            assert words in str(e)
            message = str(e)
            assert e.type_name in message and field in message and repr(bad) in message and e.valid in message


def test_error_classes_are_value_and_type_errors():
    assert issubclass(kmd.InvalidFieldValue, ValueError)
    assert issubclass(kmd.InvalidFieldType, TypeError) and issubclass(kmd.InvalidFieldType, kmd.InvalidFieldValue)
    assert issubclass(kmd.MissingMember, AttributeError)


def test_signed_leaves_take_negative_values_in_their_range():
    desc = kmd.target("x86", "WDDM3_2").DXGK_SEGMENTDESCRIPTOR5()
    desc.BaseAddress.QuadPart = -1
    assert bytes(desc)[8:16] == b"\xff" * 8
    assert (desc.BaseAddress.LowPart, desc.BaseAddress.HighPart) == (0xFFFFFFFF, -1)
    desc.BaseAddress.HighPart = -(1 << 31)
    with pytest.raises(kmd.InvalidFieldValue) as err:
        desc.BaseAddress.HighPart = 1 << 31
    assert err.value.valid.startswith("-2147483648..2147483647")
    desc.SlabSize = kmd.DXGK_PAGESIZE.DXGK_PAGESIZE_2MB  # an IntEnum is an integer
    desc.SegmentType = -1  # an MSVC enum is an int
    assert (desc.SlabSize, desc.SegmentType) == (9, -1)


def test_issue_example_200_into_a_7_bit_field_is_refused_not_stored_as_72():
    assert 200 & 0x7F == 72  # what plain ctypes would store
    info = kmd.DXGK_ALLOCATIONINFO()
    info.HintedBank.Bank0 = 5
    with pytest.raises(ValueError) as err:
        info.HintedBank.Bank0 = 200
    e = err.value
    assert isinstance(e, kmd.InvalidFieldValue)
    assert (e.type_name, e.field, e.value) == ("DXGK_SEGMENTBANKPREFERENCE", "Bank0", 200)
    assert "0..127" in e.valid and "7 bits" in str(e)
    assert info.HintedBank.Bank0 == 5 and info.HintedBank.Value == 5


def test_error_names_the_type_that_declares_the_field():
    info = kmd.DXGK_ALLOCATIONINFO()
    cases = (
        (info.Flags, "CpuVisible", 2, "DXGK_ALLOCATIONINFOFLAGS"),
        (info.FlagsWddm2, "CreateInVpr", 2, "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"),
        (info.PreferredSegment, "SegmentId4", 32, "D3DDDI_SEGMENTPREFERENCE"),
        (info, "AllocationPriority", 1 << 32, "DXGK_ALLOCATIONINFO"),
        (info, "MinimumPageSize", 1 << 16, "DXGK_ALLOCATIONINFO"),  # flattened anonymous member
        (info.Flags2, "Reserved", 1 << 26, "DXGK_ALLOCATIONINFOFLAGS2"),
    )
    for owner, field, value, type_name in cases:
        with pytest.raises(kmd.InvalidFieldValue) as err:
            setattr(owner, field, value)
        assert (err.value.type_name, err.value.field, err.value.value) == (type_name, field, value)


# ---------------------------------------------------------------- arrays

def test_array_elements_are_checked():
    out5 = kmd.DXGK_QUERYSEGMENTOUT5()
    for i in range(4):
        out5.Reserved[i] = 0xFFFFFFFF
    assert bytes(out5)[8:] == b"\xff" * 16
    for bad, error in ((1 << 32, kmd.InvalidFieldValue), (-1, kmd.InvalidFieldValue), (1.5, kmd.InvalidFieldType)):
        with pytest.raises(error) as err:
            out5.Reserved[2] = bad
        assert (err.value.type_name, err.value.field, err.value.value) == ("DXGK_QUERYSEGMENTOUT5", "Reserved[2]", bad)
    assert list(out5.Reserved) == [0xFFFFFFFF] * 4
    with pytest.raises(IndexError):
        out5.Reserved[4] = 1


def test_array_slice_assignment_is_checked_before_anything_is_written():
    out5 = kmd.target("x86", "WDDM3_2").DXGK_QUERYSEGMENTOUT5()
    out5.Reserved[1:3] = [7, 8]
    assert list(out5.Reserved) == [0, 7, 8, 0]
    assert bytes(out5)[4:20] == bytes.fromhex("00000000" "07000000" "08000000" "00000000")
    with pytest.raises(kmd.InvalidFieldValue) as err:
        out5.Reserved[1:3] = [1, 1 << 32]
    assert (err.value.field, err.value.value) == ("Reserved[2]", 1 << 32)
    with pytest.raises(kmd.InvalidFieldType):
        out5.Reserved[0:2] = [1, "2"]
    assert list(out5.Reserved) == [0, 7, 8, 0]


def test_whole_array_assignment_is_checked():
    out5 = kmd.DXGK_QUERYSEGMENTOUT5()
    out5.Reserved = [1, 2, 3, 4]
    assert list(out5.Reserved) == [1, 2, 3, 4]
    assert bytes(out5)[8:] == bytes.fromhex("01000000" "02000000" "03000000" "04000000")
    other = kmd.DXGK_QUERYSEGMENTOUT5(Reserved=[5, 6, 7, 8])
    out5.Reserved = other.Reserved
    assert list(out5.Reserved) == [5, 6, 7, 8]
    refused = (([1, 2, 3], kmd.InvalidFieldValue, "Reserved"), ([1, 2, 3, 1 << 32], kmd.InvalidFieldValue, "Reserved[3]"),
               ([1, 2, 3, -4], kmd.InvalidFieldValue, "Reserved[3]"), ([1.0, 2, 3, 4], kmd.InvalidFieldType, "Reserved[0]"),
               (5, kmd.InvalidFieldType, "Reserved"))
    for bad, error, field in refused:
        with pytest.raises(error) as err:
            out5.Reserved = bad
        assert (err.value.type_name, err.value.field) == ("DXGK_QUERYSEGMENTOUT5", field)
    assert list(out5.Reserved) == [5, 6, 7, 8]


# ---------------------------------------------------------------- struct-typed members

def _struct_members(cls):
    """(path, class) of every member of struct or union type reachable by name."""
    out, obj = {}, cls()
    for leaf in kmd.leaves(cls):
        parts = leaf.path.split(".")
        for i in range(1, len(parts)):
            path = ".".join(parts[:i])
            out.setdefault(path, type(read_path(obj, path)))
    return out


@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_struct_members_take_only_an_instance_of_their_own_class(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    foreign = kmd.target("x86" if abi != "x86" else "x64", version).DXGK_SEGMENTFLAGS()
    for path, member_cls in _struct_members(cls).items():
        obj = cls()
        size = ctypes.sizeof(member_cls)
        value = member_cls.from_buffer_copy(bytes(range(1, size + 1)))
        write_path(obj, path, value)
        assert bytes(read_path(obj, path)) == bytes(range(1, size + 1))
        before = bytes(obj)
        for bad in (0, 1, foreign, object(), None):
            with pytest.raises(kmd.InvalidFieldType) as err:
                write_path(obj, path, bad)
            assert err.value.field == path.rpartition(".")[2]
            assert member_cls.__name__ in err.value.valid
        assert bytes(obj) == before


def test_a_struct_from_another_target_or_type_is_refused():
    info = kmd.DXGK_ALLOCATIONINFO()
    info.HintedBank = kmd.DXGK_SEGMENTBANKPREFERENCE(Value=0x01020304)
    assert bytes(info)[32:36] == bytes.fromhex("04030201")
    for bad in (kmd.target("x64", "WDDM3_1").DXGK_SEGMENTBANKPREFERENCE(), kmd.D3DDDI_SEGMENTPREFERENCE(), 0x01020304):
        with pytest.raises(kmd.InvalidFieldType) as err:
            info.HintedBank = bad
        assert (err.value.type_name, err.value.field) == ("DXGK_ALLOCATIONINFO", "HintedBank")
    assert "Value" in str(_raised(lambda: setattr(info, "HintedBank", 5)))
    desc = kmd.DXGK_SEGMENTDESCRIPTOR()
    desc.BaseAddress = kmd.PHYSICAL_ADDRESS(QuadPart=0x1000)
    assert desc.BaseAddress.QuadPart == 0x1000
    assert "QuadPart" in str(_raised(lambda: setattr(desc, "BaseAddress", 0x1000)))


def _raised(action):
    with pytest.raises(kmd.InvalidFieldType) as err:
        action()
    return err.value


# ---------------------------------------------------------------- misspelled names

@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_misspelled_names_raise_instead_of_creating_attributes(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    obj = cls()
    owners = [obj] + [read_path(obj, path) for path in _struct_members(cls)]
    for owner in owners:
        for typo in ("Vaule", "value", "Flag", "SegmentID0", "_typo"):
            if typo in dir(type(owner)):
                continue
            with pytest.raises(AttributeError):
                setattr(owner, typo, 1)
            with pytest.raises(AttributeError):
                getattr(owner, typo)
            assert getattr(owner, typo, None) is None
    assert bytes(obj) == bytes(ctypes.sizeof(cls))


def test_a_typo_names_the_type_the_target_and_the_members():
    flags = kmd.DXGK_SEGMENTFLAGS()
    with pytest.raises(AttributeError) as err:
        flags.Aperature = 1
    message = str(err.value)
    assert "DXGK_SEGMENTFLAGS" in message and "Aperature" in message and f"x64 {kmd.NEWEST.name}" in message
    assert "Aperture" in message  # the valid members are listed
    assert flags.Value == 0


# ---------------------------------------------------------------- constructors

@pytest.mark.parametrize("abi,version,name", CASES, ids=IDS)
def test_constructor_keywords_are_checked(abi, version, name):
    cls = getattr(kmd.target(abi, version), name)
    top = [l for l in kmd.leaves(cls) if "." not in l.path and "[" not in l.path]
    structs = {path: member for path, member in _struct_members(cls).items() if "." not in path}
    assert top or structs, name
    for path, member_cls in structs.items():
        assert bytes(getattr(cls(**{path: member_cls()}), path)) == bytes(ctypes.sizeof(member_cls))
        with pytest.raises(kmd.InvalidFieldType):
            cls(**{path: 0})
    for leaf in top:
        obj = cls(**{leaf.path: leaf.max_value})
        assert getattr(obj, leaf.path) == leaf.max_value
        with pytest.raises(kmd.InvalidFieldValue) as err:
            cls(**{leaf.path: leaf.max_value + 1})
        assert err.value.field == leaf.path
        with pytest.raises(kmd.InvalidFieldType):
            cls(**{leaf.path: 0.5})
    with pytest.raises(AttributeError):
        cls(NoSuchMember=1)


def test_constructor_keywords_from_the_issue():
    flags = kmd.target("x86", "WDDM2_0").DXGK_SEGMENTFLAGS(Aperture=1, DirectFlip=1, CpuVisible=1, PreservedDuringStandby=1)
    assert flags.Value == 0x485 and bytes(flags) == bytes.fromhex("85040000")
    with pytest.raises(AttributeError, match="WDDM2_9"):
        kmd.target("x86", "WDDM2_0").DXGK_SEGMENTFLAGS(PopulatedByReservedDDRByFirmware=1)
    with pytest.raises(kmd.InvalidFieldValue):
        kmd.DXGK_SEGMENTBANKPREFERENCE(Bank0=200)


def test_positional_constructor_arguments_are_refused_with_the_keyword_form():
    """ctypes would give a positional value to the hidden anonymous union (_u0).  The refusal is the package's
    error (a TypeError too), as every public call's is."""
    with pytest.raises(InvalidArgument, match=r"^DXGK_SEGMENTFLAGS takes keyword arguments only, e.g. "
                                              r"DXGK_SEGMENTFLAGS\(Value=\.\.\.\)"):
        kmd.DXGK_SEGMENTFLAGS(1)
    assert issubclass(InvalidArgument, TypeError)
    assert kmd.DXGK_SEGMENTFLAGS(Value=0x485).DirectFlip == 1
