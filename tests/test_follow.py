"""Following pointers (d3dkmddi_py.follow): DXGK_QUERYSEGMENTOUT3 -> descriptors -> bank table and
DXGKARG_CREATEALLOCATION -> allocation infos -> usage hints and private data, from every kind of memory
(ranges, bytes at a base, a byte list, a read() object, a raw image, each kernel dump kind the tests
write); what cannot be followed is recorded, never raised; limits are refused; the followed segments
become the adapter allocation infos are checked against."""
from __future__ import annotations

import json

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import _spec
from d3dkmddi_py._spec.model import PointsTo
from d3dkmddi_py.errors import DecodeError, NotAType
from d3dkmddi_py.follow import (CYCLE, EMPTY, FOLLOWED, MAX_DEPTH, NULL, OPAQUE, TOO_DEEP, UNKNOWN_COUNT, UNREAD,
                                UNUSED, FollowLimit, Missing, Node, follow, follow_json, pointer_members,
                                render_follow, segments_adapter)
from d3dkmddi_py.layout import type_layout
from d3dkmddi_py.memory import ImageFile, MemoryGap, Ranges, as_memory
from d3dkmddi_py.render import is_pointer
from d3dkmddi_py.semantics.checks import check_record
from tests.conftest import ALL_TARGETS, require
from d3dkmddi_py.samples.dump_build import KINDS, Machine, write_dump
from tests.memory_scene import (BANK_ENDS, CREATE, DESCRIPTORS, HINTS, INFOS, QUERY, SEGMENTS, base_of, image,
                                scene)

X64 = ("x64", "WDDM2_7")


class Bridge:
    """A pykd-style bridge: read(address, size) over one image."""

    def __init__(self, base, data):
        self.base, self.data = base, data

    def read(self, address, size):
        if not self.base <= address <= address + size <= self.base + len(self.data):
            raise OSError(f"Memory read error at {address:#x}")
        return self.data[address - self.base:address - self.base + size]


def as_ranges(placements) -> Ranges:
    m = Ranges("session.log")
    for line, (address, data) in enumerate(placements.items(), 1):
        m.add(address, data, f"line {line * 10}")
    return m


def memories(tmp_path, target=X64):
    """name -> memory holding the scene, one of each kind."""
    placements = scene(target)
    base, raw = image(placements)
    out = {"ranges": as_ranges(placements), "bytes at a base": as_memory(raw, base=base),
           "byte list": as_memory(list(raw), base=base), "read() object": as_memory(Bridge(base, raw))}
    image_path = tmp_path / "image.bin"
    image_path.write_bytes(raw)
    out["raw image"] = ImageFile(image_path, base)
    try:
        import kdmp_parser  # noqa: F401
    except ImportError:
        return out
    machine = Machine.holding(placements)
    for kind in sorted(KINDS):
        out[f"{kind} dump"] = kmd.KernelDump(write_dump(tmp_path / f"{kind}.dmp", machine, kind))
    return out


SOURCES = ["ranges", "bytes at a base", "byte list", "read() object", "raw image", "full dump", "bitmap dump",
           "kernel dump", "complete dump"]


@pytest.fixture(params=SOURCES)
def memory(request, tmp_path):
    found = memories(tmp_path)
    require(request.param in found, "kdmp-parser is not installed (pip install -e '.[test]')")
    return found[request.param]


# ---- the two chains, from every memory

def test_querysegmentout3_to_its_16_descriptors_and_the_bank_table(memory):
    placements, base = scene(X64), base_of(X64)
    node = follow("DXGK_QUERYSEGMENTOUT3", memory, base + QUERY, target=X64)
    assert node.values["NbSegment"] == SEGMENTS
    link = node.link("pSegmentDescriptor")
    assert (link.status, link.count, link.stride) == (FOLLOWED, SEGMENTS, 72)
    assert b"".join(n.data for n in link.items) == placements[base + DESCRIPTORS]
    assert [n.address for n in link.items] == [base + DESCRIPTORS + 72 * i for i in range(SEGMENTS)]
    banks = link.items[0].link("pBankRangeTable")
    assert (banks.status, banks.items) == (FOLLOWED, BANK_ENDS)
    unused = link.items[1].link("pBankRangeTable")
    assert unused.status == UNUSED and "Flags.UseBanking is 0" in unused.note


def test_createallocation_to_allocation_infos_to_usage_hints(memory):
    base = base_of(X64)
    node = follow("DXGKARG_CREATEALLOCATION", memory, base + CREATE, target=X64)
    assert node.link("pPrivateDriverData").items == (b"umd-data",)
    assert node.link("hResource").status == OPAQUE
    infos = node.link("pAllocationInfo")
    assert (infos.status, infos.count) == (FOLLOWED, 3)
    first, second, third = infos.items
    hint = first.link("pAllocationUsageHint")
    assert hint.status == FOLLOWED and hint.items[0].address == base + HINTS
    assert hint.items[0].values["v1.Width"] == 640 and hint.items[0].values["Version"] == 1
    assert second.link("pAllocationUsageHint").status == NULL
    assert third.link("pAllocationUsageHint").items[0].values["v1.Width"] == 1920
    assert first.link("pPrivateDriverData").status == EMPTY  # PrivateDriverDataSize 0
    assert third.link("pPrivateDriverData").items == (b"hello",)
    assert first.link("hAllocation").status == OPAQUE


def test_allocation_infos_are_validated_against_the_segments_found_in_memory(memory):
    base = base_of(X64)
    adapter = segments_adapter(follow("DXGK_QUERYSEGMENTOUT3", memory, base + QUERY, target=X64))
    assert adapter.segment_count == SEGMENTS and adapter.nb_of_banks(1) == 2 and adapter.is_aperture(2)
    infos = follow("DXGKARG_CREATEALLOCATION", memory, base + CREATE, target=X64).link("pAllocationInfo").items
    unknown = [[f.rule_id for f in check_record(n.layout, n.data, adapter)].count("ALLOCINFO.SET_UNKNOWN_SEGMENT")
               for n in infos]
    assert unknown == [0, 0, 1]  # the third names segment 18 of 16
    assert "ALLOCINFO.SET_UNKNOWN_SEGMENT" not in [f.rule_id for f in check_record(infos[2].layout, infos[2].data)]


def test_x86_pointers_are_4_bytes(tmp_path):
    target = ("x86", "WDDM2_7")
    m = as_ranges(scene(target))
    node = follow("DXGKARG_CREATEALLOCATION", m, base_of(target) + CREATE, target=target)
    infos = node.link("pAllocationInfo").items
    assert len(infos) == 3 and infos[0].layout.size == 60 and infos[1].address == base_of(target) + INFOS + 60
    assert infos[0].link("pAllocationUsageHint").items[0].values["v1.Width"] == 640
    q = follow("DXGK_QUERYSEGMENTOUT3", m, base_of(target) + QUERY, target=target)
    assert q.link("pSegmentDescriptor").stride == 48
    assert q.link("pSegmentDescriptor").items[0].link("pBankRangeTable").items == BANK_ENDS


# ---- what cannot be followed is recorded

def test_a_pointer_into_a_gap_is_recorded_with_the_db_command():
    placements = scene(X64)
    del placements[base_of(X64) + HINTS]
    node = follow("DXGKARG_CREATEALLOCATION", as_ranges(placements), base_of(X64) + CREATE, target=X64)
    hint = node.link("pAllocationInfo").items[0].link("pAllocationUsageHint")
    assert hint.status == UNREAD and isinstance(hint.items[0], Missing)
    assert "`db fffff801`2a3b5000 L0x28` in WinDbg shows them" in hint.note


def test_an_array_partly_in_memory_keeps_what_is_there():
    placements = scene(X64)
    base = base_of(X64)
    raw = placements.pop(base + DESCRIPTORS)
    m = as_ranges(placements)
    m.add(base + DESCRIPTORS, raw[:72 * 10], "line 99")  # descriptors 10..15 were not dumped
    link = follow("DXGK_QUERYSEGMENTOUT3", m, base + QUERY, target=X64).link("pSegmentDescriptor")
    assert link.status == UNREAD and link.note.startswith("6 of 16 not decoded: ")
    assert [type(i).__name__ for i in link.items] == ["Node"] * 10 + ["Missing"] * 6
    with pytest.raises(DecodeError, match="segment descriptors were not read"):
        segments_adapter(follow("DXGK_QUERYSEGMENTOUT3", m, base + QUERY, target=X64))


def test_the_first_record_itself_must_be_there():
    with pytest.raises(MemoryGap):
        follow("DXGK_QUERYSEGMENTOUT3", Ranges(), 0x1000)


def _list_table(to="DXGK_ALLOCATIONINFO"):
    """A made-up table: pAllocationUsageHint as the link of a list of allocation infos."""
    return {("DXGK_ALLOCATIONINFO", "pAllocationUsageHint"): PointsTo(to, 1, (), None)}


def _chain(n: int, loop_to: int | None = None) -> Ranges:
    t = kmd.target(*X64)
    m = Ranges()
    for i in range(n):
        info = t.DXGK_ALLOCATIONINFO()
        nxt = (i + 1) if i + 1 < n else loop_to
        info.pAllocationUsageHint = 0 if nxt is None else 0x10000 + 0x100 * nxt
        m.add(0x10000 + 0x100 * i, bytes(info), f"line {i}")
    return m


def test_a_cycle_is_recorded_not_followed_again():
    node = follow("DXGK_ALLOCATIONINFO", _chain(3, loop_to=0), 0x10000, target=X64, table=_list_table())
    third = node.link("pAllocationUsageHint").items[0].link("pAllocationUsageHint").items[0]
    back = third.link("pAllocationUsageHint")
    assert back.status == CYCLE and back.items[0].address == 0x10000 and "being decoded above" in back.note


def test_a_self_pointer_is_a_cycle():
    link = follow("DXGK_ALLOCATIONINFO", _chain(1, loop_to=0), 0x10000, target=X64,
                  table=_list_table()).link("pAllocationUsageHint")
    assert link.status == CYCLE


def test_a_chain_deeper_than_the_limit_stops_there():
    node = follow("DXGK_ALLOCATIONINFO", _chain(MAX_DEPTH + 5), 0x10000, target=X64, table=_list_table())
    depth = 0
    while node.link("pAllocationUsageHint").status == FOLLOWED:
        node, depth = node.link("pAllocationUsageHint").items[0], depth + 1
    assert depth == MAX_DEPTH and node.link("pAllocationUsageHint").status == TOO_DEEP


def _out5(count_value=None):
    t = kmd.target("x64", "WDDM3_2")
    q = t.DXGK_QUERYSEGMENTOUT5()
    q.SegmentDescriptors = 0x2000
    d = (t.DXGK_SEGMENTDESCRIPTOR5 * 2)()
    d[0].Size, d[1].Size = 1 << 20, 2 << 20
    m = Ranges()
    m.add(0x1000, bytes(q), "line 1")
    m.add(0x2000, bytes(d), "line 2")
    return m


def test_querysegmentout5_count_is_unknown_unless_given():
    link = follow("DXGK_QUERYSEGMENTOUT5", _out5(), 0x1000, target=("x64", "WDDM3_2")).link("SegmentDescriptors")
    assert link.status == UNKNOWN_COUNT and "counts={'DXGK_QUERYSEGMENTOUT5.SegmentDescriptors': N}" in link.note
    node = follow("DXGK_QUERYSEGMENTOUT5", _out5(), 0x1000, target=("x64", "WDDM3_2"),
                  counts={"DXGK_QUERYSEGMENTOUT5.SegmentDescriptors": 2})
    assert [n.values["Size"] for n in node.link("SegmentDescriptors").items] == [1 << 20, 2 << 20]
    assert segments_adapter(node).segment_count == 2
    with pytest.raises(DecodeError, match=r"counts\['DXGK_QUERYSEGMENTOUT5.SegmentDescriptors'\] must be a "
                                          r"non-negative integer, not -1"):
        follow("DXGK_QUERYSEGMENTOUT5", _out5(), 0x1000, target=("x64", "WDDM3_2"),
               counts={"DXGK_QUERYSEGMENTOUT5.SegmentDescriptors": -1})


# ---- DXGK_QUERYSEGMENTOUT4's stride

def _out4(stride: int, count: int = 3):
    t = kmd.target("x64", "WDDM2_7")
    q = t.DXGK_QUERYSEGMENTOUT4()
    q.NbSegment, q.pSegmentDescriptor, q.SegmentDescriptorStride = count, 0x2000, stride
    m = Ranges()
    m.add(0x1000, bytes(q), "line 1")
    raw = bytearray(max(stride, 96) * count)
    for i in range(count):
        d = t.DXGK_SEGMENTDESCRIPTOR4()
        d.Size = (i + 1) << 20
        raw[i * stride:i * stride + 96] = bytes(d)
    m.add(0x2000, raw, "line 2")
    return m


def test_querysegmentout4_elements_are_a_stride_apart():
    link = follow("DXGK_QUERYSEGMENTOUT4", _out4(128), 0x1000, target=X64).link("pSegmentDescriptor")
    assert (link.status, link.stride) == (FOLLOWED, 128)
    assert [(n.address, n.values["Size"]) for n in link.items] == [(0x2000 + 128 * i, (i + 1) << 20) for i in range(3)]


def test_querysegmentout4_stride_smaller_than_the_descriptor_is_refused():
    with pytest.raises(DecodeError, match=r"SegmentDescriptorStride = 88, less than the 96 bytes of "
                                          r"DXGK_SEGMENTDESCRIPTOR4 at x64 WDDM2_7"):
        follow("DXGK_QUERYSEGMENTOUT4", _out4(88), 0x1000, target=X64)


# ---- limits

def _create(num: int, data_size: int = 0):
    t = kmd.target(*X64)
    c = t.DXGKARG_CREATEALLOCATION()
    c.NumAllocations, c.pAllocationInfo = num, 0x100000
    c.PrivateDriverDataSize, c.pPrivateDriverData = data_size, 0x200000
    m = Ranges()
    m.add(0x1000, bytes(c), "line 1")
    return m


def test_a_count_over_the_limit_is_refused_naming_member_count_and_limit():
    with pytest.raises(FollowLimit) as e:
        follow("DXGKARG_CREATEALLOCATION", _create(65536), 0x1000, target=X64)
    assert str(e.value).startswith("DXGKARG_CREATEALLOCATION.NumAllocations = 65536, the count of pAllocationInfo: "
                                   "65536 DXGK_ALLOCATIONINFO records would take the follow past its limit of "
                                   "65,536 records and 16,777,216 bytes in all (65,535 records")
    with pytest.raises(FollowLimit, match=r"PrivateDriverDataSize = 4294967295, the count of pPrivateDriverData: "
                                          r"4294967295 bytes"):
        follow("DXGKARG_CREATEALLOCATION", _create(0, 0xFFFFFFFF), 0x1000, target=X64)
    with pytest.raises(FollowLimit, match="limit of 10 records"):
        follow("DXGKARG_CREATEALLOCATION", _create(10), 0x1000, target=X64, max_records=10)
    with pytest.raises(DecodeError, match="max_bytes must be a positive integer, not 0"):
        follow("DXGKARG_CREATEALLOCATION", _create(1), 0x1000, target=X64, max_bytes=0)


def test_an_array_past_the_end_of_the_address_space_is_refused():
    t = kmd.target(*X64)
    c = t.DXGKARG_CREATEALLOCATION()
    c.NumAllocations, c.pAllocationInfo = 2, (1 << 64) - 100
    m = Ranges()
    m.add(0x1000, bytes(c), "line 1")
    with pytest.raises(DecodeError, match="run past the end of the 64-bit address space"):
        follow("DXGKARG_CREATEALLOCATION", m, 0x1000, target=X64)


def test_a_null_pointer_with_a_count_and_a_count_of_zero():
    node = follow("DXGKARG_CREATEALLOCATION", _create(0), 0x1000, target=X64)
    assert node.link("pAllocationInfo").status == EMPTY
    t = kmd.target(*X64)
    c = t.DXGKARG_CREATEALLOCATION()
    c.NumAllocations = 4
    m = Ranges()
    m.add(0x1000, bytes(c), "line 1")
    link = follow("DXGKARG_CREATEALLOCATION", m, 0x1000, target=X64).link("pAllocationInfo")
    assert (link.status, link.count) == (NULL, 4)
    assert "      -> NULL, though NumAllocations = 4" in render_follow(
        follow("DXGKARG_CREATEALLOCATION", m, 0x1000, target=X64))


def test_types_without_pointers_and_enums():
    m = Ranges.of(b"\x85\x04\x00\x00", 0x1000)
    node = follow("DXGK_SEGMENTFLAGS", m, 0x1000)
    assert isinstance(node, Node) and node.links == () and node.values["Value"] == 0x485
    with pytest.raises(DecodeError, match="is an enum"):
        follow("DXGK_SEGMENTTYPE", m, 0x1000)


# ---- text and JSON

def test_text_shows_each_record_with_its_address_and_what_each_pointer_points_to():
    base = base_of(X64)
    text = render_follow(follow("DXGKARG_CREATEALLOCATION", as_ranges(scene(X64)), base + CREATE, target=X64))
    lines = text.splitlines()
    assert lines[0] == "DXGKARG_CREATEALLOCATION  x64 WDDM2_7 (0xC004), 40 bytes at fffff801`2a3b3000"
    assert lines[1].startswith("   +0x000 pPrivateDriverData    : VOID*")
    assert lines[2] == "      -> 8 bytes (PrivateDriverDataSize = 8) at fffff801`2a3b3100"
    assert lines[3] == "         fffff801`2a3b3100  75 6d 64 2d 64 61 74 61"
    assert "      -> 3 DXGK_ALLOCATIONINFO (NumAllocations = 3) at fffff801`2a3b4000" in lines
    assert "         [1] DXGK_ALLOCATIONINFO  x64 WDDM2_7 (0xC004), 88 bytes at fffff801`2a3b4058" in lines
    assert "               -> NULL" in lines
    assert "               -> not followed: a handle to the driver's resource, not memory this mirror describes" \
        not in lines  # hResource is the root's member: indented one level
    assert "      -> not followed: a handle to the driver's resource, not memory this mirror describes" in lines
    assert any(line.strip().startswith("[0] DXGK_ALLOCATIONUSAGEHINT  x64 WDDM2_7 (0xC004), 40 bytes at "
                                       "fffff801`2a3b5000") for line in lines)


def test_text_of_a_gap_a_scalar_array_and_an_unused_table():
    base = base_of(X64)
    text = render_follow(follow("DXGK_QUERYSEGMENTOUT3", as_ranges(scene(X64)), base + QUERY, target=X64),
                         meanings=False)
    assert "               [1] at fffff801`2a3b2008 : SIZE_T 0x8000000 (134217728)" in text
    assert "-> not used: Flags.UseBanking is 0, so the array does not exist (the page: \"The driver specifies " \
           "this array only if it also sets the UseBanking bit-field flag in the Flags member.\")" in text


def _numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, int) and not isinstance(value, bool):
        yield value


def test_json_follows_the_package_rules():
    base = base_of(X64)
    for root, at in (("DXGKARG_CREATEALLOCATION", CREATE), ("DXGK_QUERYSEGMENTOUT3", QUERY)):
        out = follow_json(follow(root, as_ranges(scene(X64)), base + at, target=X64))
        json.dumps(out, allow_nan=False)
        assert max(_numbers(out)) < 2 ** 53
        assert out["address"] == hex(base + at)
    links = out["pointers"]
    descriptors = links["pSegmentDescriptor"]
    assert set(descriptors) == {"status", "pointer", "points_to", "count", "count_from", "stride", "items", "bytes",
                                "note"}
    assert descriptors["pointer"] == hex(base + DESCRIPTORS) and descriptors["count_from"] == "NbSegment"
    assert descriptors["items"][0]["pointers"]["pBankRangeTable"]["items"] == ["0x4000000", "0x8000000"]
    assert descriptors["items"][0]["fields"]["pBankRangeTable"] == hex(base + 0x2000)
    create = follow_json(follow("DXGKARG_CREATEALLOCATION", as_ranges(scene(X64)), base + CREATE, target=X64))
    assert create["pointers"]["pPrivateDriverData"]["bytes"] == b"umd-data".hex()
    assert create["pointers"]["hResource"] == {"status": OPAQUE, "pointer": hex(base + 0x7230), "points_to": None,
                                               "count": None, "count_from": None, "stride": None, "items": [],
                                               "bytes": None,
                                               "note": _spec.OPAQUE[("DXGKARG_CREATEALLOCATION", "hResource")]}


def test_segments_adapter_needs_a_followed_query():
    m = _create(0)
    with pytest.raises(DecodeError, match="not DXGKARG_CREATEALLOCATION"):
        segments_adapter(follow("DXGKARG_CREATEALLOCATION", m, 0x1000, target=X64))


# ---- the table covers every pointer of every type

def test_every_pointer_leaf_has_a_target_or_a_reason():
    seen, uncovered = set(), []
    for abi, version in ALL_TARGETS:
        for name, td in _spec.TYPEDEFS.items():
            if td.guard is not None and not td.guard.holds(abi, int(version)):
                continue
            layout = type_layout(name, abi, int(version))
            members = pointer_members(layout)
            assert [m.path for m in members] == [leaf.path for leaf in layout.leaves if is_pointer(leaf.c_type)]
            for m in members:
                key = (m.owner, m.member)
                seen.add(key)
                if (key in _spec.POINTS_TO) == (key in _spec.OPAQUE):
                    uncovered.append(key)
    assert uncovered == []
    assert seen == set(_spec.POINTS_TO) | set(_spec.OPAQUE)  # no entry for a member that does not exist


def test_every_count_stride_and_flag_member_exists_where_its_pointer_does():
    for abi, version in ALL_TARGETS:
        for (owner, member), entry in _spec.POINTS_TO.items():
            guard = _spec.TYPEDEFS[owner].guard
            if guard is not None and not guard.holds(abi, int(version)):
                continue
            paths = type_layout(owner, abi, int(version)).by_path
            assert member in paths
            for named in (entry.count, entry.stride, entry.when):
                assert not isinstance(named, str) or named in paths, (owner, named)
            if entry.type in _spec.TYPEDEFS:
                element = _spec.TYPEDEFS[entry.type].guard
                assert element is None or element.holds(abi, int(version)), (owner, entry.type, abi, version)
            assert entry.count is not None or entry.note, (owner, member)


def test_the_renderers_and_the_adapter_take_only_what_follow_returned():
    for fn in (render_follow, follow_json, segments_adapter):
        with pytest.raises(NotAType, match="takes what follow\\(\\) returned, not NoneType"):
            fn(None)
