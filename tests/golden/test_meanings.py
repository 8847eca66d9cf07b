"""Every member a page documents has a meaning, in that page's words (issue 30): the members the package left
without one (DXGK_ALLOCATIONINFO's pointers, size and handle, and every other type's), the full text where it
quoted part, and no meaning of one struct quoting another struct's page (a sentence used where its page does not
say it).  Reads the page copies in ../shared."""
from __future__ import annotations

from functools import lru_cache

import pytest

from d3dkmddi_py import semantics as sem
from d3dkmddi_py._spec import TYPEDEFS
from d3dkmddi_py.semantics._rules import QUOTED, READING, SourceKind
from d3dkmddi_py.semantics.segments import SegmentFlag
from tests.conftest import require
from tests.golden.access import distinct_layouts
from tests.golden.sources import SHARED, page_fields, type_copy
from tests.semantics.cases import alloc, descriptor, seg

PAGED = sorted(name for name in TYPEDEFS if type_copy(name))


@pytest.fixture(autouse=True)
def _shared():
    require((SHARED / "docs").is_dir(), f"the shared reference pages are not at {SHARED}/docs")


def _records(layout):
    """Records of a layout whose values take each meaning's branches: all bytes 0, all 0xFF, 0x11, and for a
    descriptor the CPU host aperture flag alone (the other arm of its union)."""
    for fill in (0x00, 0xFF, 0x11):
        yield bytes([fill]) * layout.size
    if "Flags.SupportsCpuHostAperture" in layout.by_path:
        leaf = layout.by_path["Flags.Value"]
        raw = bytearray(layout.size)
        raw[leaf.offset:leaf.offset + 4] = int(SegmentFlag.SupportsCpuHostAperture).to_bytes(4, "little")
        yield bytes(raw)


def _leaf_names(field: str) -> tuple:
    """The leaf path(s) a page's field name is spelled as: the kit's macros spell DXGK_ALLOC_RESERVEDn (n < 16)
    Reservedn."""
    if field.startswith("DXGK_ALLOC_RESERVED") and int(field[19:]) < 16:
        return (f"Reserved{field[19:]}",)
    return (field,)


# ---- case 5: the seed structs' documented members the package left empty

def test_allocationinfo_pointers_size_and_handle_have_their_pages_words():
    m = sem.field_meanings(alloc())
    assert m["pPrivateDriverData"] == "A pointer to a block of private data"
    assert m["PrivateDriverDataSize"] == "The size, in bytes, of the block of private data in pPrivateDriverData"
    assert m["hAllocation"] == ("A handle to the allocation; The display miniport driver must set this member to a "
                                "value that it can use to refer to its private tracking structure for the allocation")
    assert m["pAllocationUsageHint"] == ("A pointer to a DXGK_ALLOCATIONUSAGEHINT structure that the memory manager "
                                         "uses to determine how to use the allocation")


def test_maximumrenaminglistlength_and_physicaladapterindex_say_their_full_text():
    m = sem.field_meanings(alloc())
    fields = page_fields(type_copy("DXGK_ALLOCATIONINFO"))
    for name, first in (("MaximumRenamingListLength", "The maximum length of the renaming list for the allocation"),
                        ("PhysicalAdapterIndex", "The index of the physical adapter")):
        assert fields[name][1].startswith(first + ".")
        assert m[name].startswith(first + "; one UINT with ")


@pytest.mark.parametrize("type_name", PAGED)
def test_every_member_a_page_documents_has_a_meaning(type_name):
    missing = []
    for field, (_direction, text) in page_fields(type_copy(type_name)).items():
        if not text:  # listed without a word (none of the mirrored types' pages does this)
            continue
        found = present = False
        for layout in distinct_layouts(type_name):
            paths = [leaf.path for leaf in layout.leaves
                     if any(leaf.path == n or leaf.path.startswith(n + ".") for n in _leaf_names(field))]
            present = present or bool(paths)
            for raw in _records(layout):
                meanings = sem.field_meanings(raw, type_name, target=layout.target)
                found = found or any(p in meanings for p in paths)
        if present and not found:
            missing.append(field)
    assert not missing, f"{type_name}: documented on its page, no meaning: {missing}"


def test_the_types_without_a_page_copy_here():
    # the guard above covers every mirrored type whose page is in ../shared/docs; these have none there
    assert sorted(set(TYPEDEFS) - set(PAGED)) == [
        "DXGKARG_CREATEALLOCATION", "DXGK_CREATEALLOCATIONFLAGS", "DXGK_QUERYSEGMENTCOUNTIN", "DXGK_QUERYSEGMENTCOUNTOUT",
        "DXGK_QUERYSEGMENTIN5", "DXGK_QUERYSEGMENTOUT2", "DXGK_QUERYSEGMENTOUT5", "DXGK_SEGMENTDESCRIPTOR2",
        "DXGK_SEGMENTDESCRIPTOR5", "DXGK_SEGMENTFLAGS2", "LARGE_INTEGER"]


# ---- class: a meaning of one struct says only its own pages' words (or is labelled a reading)

@lru_cache(maxsize=None)
def _quotes() -> dict:
    """Quoted text -> the copies it is recorded from (a kit comment by its member's type): every meaning's quote
    and every rule's sentence (a reserved member's meaning prints its rule's)."""
    out: dict = {}
    for q in (*QUOTED, *(q for r in sem.RULES.values() for q in (r.quote, *r.also))):
        copy = q.source.copy.split(".")[0] if q.source.kind is SourceKind.KIT else q.source.copy
        out.setdefault(q.text, set()).add(copy)
    return out


def _allowed(layout) -> set:
    """The pages (and kit types) a record's meanings may quote: its own type's and its members' types'."""
    types = {layout.c_name} | {line.kind for line in layout.lines if line.leaf is None}
    return {type_copy(t) for t in types if type_copy(t)} | types


@pytest.mark.parametrize("type_name", sorted(sem.explain.__globals__["MEANINGS"]))
def test_no_meaning_quotes_another_structs_page(type_name):
    wrong = set()
    for layout in distinct_layouts(type_name):
        allowed = _allowed(layout)
        for raw in _records(layout):
            for path, meaning in sem.field_meanings(raw, type_name, target=layout.target).items():
                if READING in meaning:
                    continue
                matched = [text for text in _quotes() if text in meaning]
                widest = [t for t in matched if not any(t != u and t in u for u in matched)]
                for text in widest:
                    if not _quotes()[text] & allowed:
                        wrong.add((path, text, tuple(sorted(_quotes()[text]))))
    assert not wrong, sorted(wrong)


def test_allocationinfoflags_hardwareprotected_says_its_own_pages_words():
    # the _WDDM2_0 page says "hardware DRM", the DXGK_ALLOCATIONINFOFLAGS page "hardware digital rights management
    # (DRM)": each flag word prints its own
    old = sem.field_meanings(1 << 17, "DXGK_ALLOCATIONINFOFLAGS", target=("x64", "WDDM2_0"))
    new = sem.field_meanings(1 << 17, "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", target=("x64", "WDDM2_0"))
    assert old["HardwareProtected"].endswith("hardware digital rights management (DRM)")
    assert new["HardwareProtected"].endswith("hardware DRM")


def test_descriptor3_bank_words_cite_the_descriptor3_page():
    m = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR3"))
    assert m["NbOfBanks"] == "UseBanking is not set; The number of banks in the segment, if banking is used"
    copies = _quotes()["The number of banks in the segment, if banking is used"]
    assert copies == {"docs/ns-d3dkmddi-_dxgk_segmentdescriptor.md", "docs/ns-d3dkmddi-_dxgk_segmentdescriptor3.md"}
    assert m["BaseAddress.QuadPart"].startswith("The base address of the segment")
    four = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR4", flags=seg("SupportsCpuHostAperture")))
    assert four["CpuHostAperture.SizeInPages"] == "0 CPU host pages"
