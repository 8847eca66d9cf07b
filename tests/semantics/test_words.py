"""What the package prints says what the pages and the kit say, no more: one test per claim the reading
of the pages found (issue 22), named after it, and a sweep that none of those claims is printed again."""
from __future__ import annotations

from pathlib import Path

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.semantics._rules import READING
from d3dkmddi_py.semantics.explain import ALLOC_FLAG_MEANINGS
from d3dkmddi_py.semantics.segments import SEGMENT_FLAG_MEANINGS
from tests.semantics.cases import adapter, alloc, descriptor, seg

REPO = Path(__file__).resolve().parents[2]
BANK, SEGPREF = "DXGK_SEGMENTBANKPREFERENCE", "D3DDDI_SEGMENTPREFERENCE"


def t(version="WDDM3_2", abi="x64"):
    return kmd.target(abi, version)


def messages(*args, **kw) -> dict:
    return {f.rule_id: f.message for f in sem.check(*args, **kw)}


# ---- the contradiction

@pytest.mark.parametrize("version", ["VISTA", "WDDM1_3", "WDDM2_0", "WDDM3_2"])
def test_maximumrenaminglistlength_and_physicaladapterindex_are_one_word_the_page_dates_both_from_wddm2(version):
    m = sem.field_meanings(alloc(t(version)))
    for name, other in (("MaximumRenamingListLength", "PhysicalAdapterIndex"),
                        ("PhysicalAdapterIndex", "MaximumRenamingListLength")):
        text = m[name]
        assert f"one UINT with {other}" in text and "at every version" in text
        assert '"Support for this member started with Windows 10 and the WDDM v2."' in text
        assert "neither source says which one a driver means" in text
        assert "in force" not in text


# ---- said more than the page

def test_a_zero_bank_or_segment_id_is_no_preference_not_the_end_of_a_list():
    m = sem.field_meanings(1 | 3 << 16 | 1 << 15, BANK)  # Bank0 = 1, Bank1 = 0 with Direction1, Bank2 = 3
    assert m["Bank1"] == "no preference" and m["Direction1"] == "1, for Bank1 = 0 (no preference)"
    assert m["Bank2"] == "bank 3, priority 3 (below Bank1 = 0)"
    assert m["Value"] == "bank 1, bottom-up; from the first zero id on: Bank1 = 0, Direction1 = 1, Bank2 = 3"
    m = sem.field_meanings(1 | 2 << 12, SEGPREF)
    assert m["SegmentId1"] == "no preferred segment" and m["SegmentId2"] == "segment 2, priority 3 (below SegmentId1 = 0)"


@pytest.mark.parametrize("type_name, word, rule_id, said", [
    (BANK, 1 | 3 << 16, "BANKPREF.ID_AFTER_ZERO",
     "Bank2 = 3 while Bank1, of higher priority, is 0 (no preference); the page gives fewer preferences as the "
     "lower priority ones set to zero"),
    (SEGPREF, 1 | 2 << 12, "SEGPREF.ID_AFTER_ZERO",
     "SegmentId2 = 2 while SegmentId1, of higher priority, is 0 (no preferred segment); the page does not say "
     "whether a preference after a zero is used"),
])
def test_id_after_zero_says_what_the_page_says_not_that_the_preference_is_never_used(type_name, word, rule_id, said):
    assert messages(word, type_name)[rule_id] == said
    assert "ends at the first zero" not in sem.RULES[rule_id].summary


@pytest.mark.parametrize("rule_id, value, type_name, target", [
    ("SEGFLAGS.RESERVED_NONZERO", 1 << 31, "DXGK_SEGMENTFLAGS", None),
    ("ALLOCFLAGS.RESERVED_NONZERO", 1 << 31, "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", None),
    ("SEGFLAGS.RESERVEDSYSMEM_SET", 1 << 12, "DXGK_SEGMENTFLAGS", None),
])
def test_reserved_bits_should_be_zero_not_must(rule_id, value, type_name, target):
    message = messages(value, type_name, target=target)[rule_id]
    assert "must" not in message
    assert sem.RULES[rule_id].severity is sem.Severity.WARNING


def test_reserved_bit_meanings_quote_their_page():
    m = sem.field_meanings(1 << 31, "DXGK_SEGMENTFLAGS")
    assert m["Reserved"] == "reserved bits set (0x200): This member is reserved and should be set to zero."
    m = sem.field_meanings(1 << 6, "DXGK_ALLOCATIONINFOFLAGS2")
    assert m["Reserved"] == "reserved bits set (0x1): Reserved; do not use."  # Reserved starts at bit 6
    m = sem.field_meanings(1 | 1 << 30, SEGPREF)
    assert m["Reserved"] == "reserved bits set (0x1): Reserved (bits 31-32)."


def test_segpref_reserved_nonzero_rests_on_reserved_only():
    assert sem.RULES["SEGPREF.RESERVED_NONZERO"].sentence == "Reserved (bits 31-32)."
    assert "must" not in messages(1 | 1 << 30, SEGPREF)["SEGPREF.RESERVED_NONZERO"]


def test_usebanking_needs_banks_is_a_should():
    found = messages(descriptor(flags=seg("UseBanking")))
    assert "should also specify valid bank information" in found["DESC.USEBANKING_NEEDS_BANKS"]


def test_sysmemend_an_address_without_the_partial_flag_is_not_a_finding():
    assert "DESC.SYSMEMEND_MATCHES_PARTIAL" not in messages(descriptor(SystemMemoryEndAddress=0x1000))
    found = messages(descriptor(flags=seg("PreservedDuringStandby", "PartiallyPreservedDuringHibernate")))
    assert "should set it to a non-NULL value" in found["DESC.SYSMEMEND_MATCHES_PARTIAL"]
    assert "set both or neither" not in found["DESC.SYSMEMEND_MATCHES_PARTIAL"]


def test_pitchalignedsize_missing_rests_on_the_sentence_that_the_manager_uses_it():
    missing = sem.RULES["ALLOCINFO.PITCHALIGNEDSIZE_MISSING"]
    assert "uses the PitchAlignedSize member" in missing.sentence and "to zero" not in missing.sentence
    assert "to zero" in sem.RULES["ALLOCINFO.PITCHALIGNEDSIZE_UNUSED"].sentence
    m = sem.field_meanings(alloc())
    assert m["PitchAlignedSize"].startswith("0: what the driver should set if the allocation is not supported")


def test_hintedbank_without_banking_says_what_the_manager_does_not_that_it_means_nothing():
    a = alloc(preferred=(3, 1), banks=(1,))
    message = messages(a, adapter=adapter())["ALLOCINFO.HINTEDBANK_WITHOUT_BANKING"]
    assert "means nothing" not in message and "uses the banking information of the most preferred" in message
    value = sem.field_meanings(a, adapter=adapter())["HintedBank.Value"]
    assert value == ("bank 1, bottom-up; the video memory manager uses the banking information of the most preferred "
                     "segment: segment 3, which does not use banking")


@pytest.mark.parametrize("version", ["WDDM2_0", "WDDM3_1", "WDDM3_2"])
def test_read_set_ignored_has_no_wddm3_2_bound_the_mmuset_union_has_no_version_guard(version):
    message = messages(alloc(t(version), SupportedReadSegmentSet=0b001))["ALLOCINFO.READ_SET_IGNORED"]
    assert "may be MmuSet" not in message and "names this word MmuSet" in message
    note = sem.effective_segment_set(alloc(t(version))).note
    assert "MmuSet" not in note


def test_preferred_before_wddm2_0_states_read_and_write_apart():
    old = t("WDDM1_3")
    read_only = messages(alloc(old, preferred=(2,), SupportedReadSegmentSet=0b010, SupportedWriteSegmentSet=0b101))
    assert "not in SupportedWriteSegmentSet" in read_only["ALLOCINFO.PREFERRED_NOT_SUPPORTED"]
    write_only = messages(alloc(old, preferred=(2,), SupportedReadSegmentSet=0b101, SupportedWriteSegmentSet=0b010))
    assert "not in SupportedReadSegmentSet" in write_only["ALLOCINFO.PREFERRED_NOT_SUPPORTED"]
    assert sem.effective_segment_set(alloc(old)).note.startswith(READING)  # the union of both is the package's


def test_preferred_segment_below_a_zero_is_still_a_preference():
    found = messages(alloc(PreferredSegment=1 | 2 << 12))
    assert found["ALLOCINFO.PREFERRED_NOT_SUPPORTED"].startswith("preferred segment 2 is not in")


def test_segment_direction_1_is_not_called_top_down():
    m = sem.field_meanings(1 | 1 << 5, SEGPREF)
    assert m["Direction0"] == "1 (the page describes only 0)" and m["Value"] == "segment 1, Direction 1"
    m = sem.field_meanings(1, SEGPREF)
    assert m["Direction0"] == "VidMm chooses which end of SegmentId0 to do the allocation from"
    assert str(sem.SegmentPreferenceEntry(1, sem.SegmentDirection.TOP_DOWN)) == "segment 1, Direction 1"


def test_bank_direction_is_the_pages_bottom_up_and_top_bottom_search():
    m = sem.field_meanings(1 | 1 << 7, BANK)
    assert m["Direction0"] == "a top-bottom search (that is, high address to low address)"


def test_nbofbanks_and_pbankrangetable_without_banking_are_what_the_page_says_not_unused():
    m = sem.field_meanings(descriptor())
    assert m["NbOfBanks"] == "UseBanking is not set; The number of banks in the segment, if banking is used"
    assert m["pBankRangeTable"].endswith("The driver specifies this array only if it also sets the UseBanking "
                                         "bit-field flag in the Flags member")


def test_alignment_0_has_no_meaning_the_page_gives_it_none():
    assert "Alignment" not in sem.field_meanings(alloc(Alignment=0))
    assert sem.field_meanings(alloc())["Alignment"] == "64 KB alignment"


def test_cpuvisible_is_needed_for_pfnlockcb_not_that_pfnlockcb_works():
    text = ALLOC_FLAG_MEANINGS["DXGK_ALLOCATIONINFOFLAGS"]["CpuVisible"]
    assert "pfnLockCb works" not in text and "If this flag is not set on the allocation, pfnLockCb returns an error" in text


def test_mapaperturecpuvisible_and_noimplicitsynchronization_say_their_page_or_nothing():
    assert ALLOC_FLAG_MEANINGS["DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"]["MapApertureCpuVisible"] == (
        "the driver requires CPU access to memory during a DxgkDdiBuildPagingBuffer call for a "
        "DXGK_OPERATION_MAP_APERTURE_SEGMENT2 operation")
    for name in ("NoImplicitSynchronization", "DisablePartialResidency", "RestrictedToSingleSegment",
                 "NotifyEviction", "NotifyIoMmuUnmap"):  # no page describes them: a set flag prints "set"
        assert name not in ALLOC_FLAG_MEANINGS["DXGK_ALLOCATIONINFOFLAGS2"]
    assert sem.field_meanings(0x2, "DXGK_ALLOCATIONINFOFLAGS2")["NoImplicitSynchronization"] == "set"


def test_descriptor4_commitlimit_applies_to_apertures_only():
    assert "DESC.COMMITLIMIT_MEMORY" not in messages(descriptor("DXGK_SEGMENTDESCRIPTOR4", Size=0x2000,
                                                                CommitLimit=0x1000))
    m = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR4"))
    assert m["CommitLimit"].endswith("This value applies to the aperture segment only")


def test_size_page_multiple_only_on_the_descriptors_whose_page_says_it():
    assert "DESC.SIZE_PAGE_MULTIPLE" in messages(descriptor("DXGK_SEGMENTDESCRIPTOR3", Size=0x800))
    for name in ("DXGK_SEGMENTDESCRIPTOR4", "DXGK_SEGMENTDESCRIPTOR5"):
        assert "DESC.SIZE_PAGE_MULTIPLE" not in messages(descriptor(name, Size=0x800))


def test_descriptor5_has_no_page_so_descriptor4_words_are_labelled_a_reading():
    m = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR5", SystemMemoryEndAddress=0x1000))
    assert m["SystemMemoryEndAddress"].startswith(f"0x1000: {READING} as DXGK_SEGMENTDESCRIPTOR4: ")
    assert m["CpuTranslatedAddress.QuadPart"].startswith(f"{READING} ")  # the arm SupportsCpuHostAperture = 0 says
    host = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR5", flags=seg("SupportsCpuHostAperture")))
    assert host["CpuHostAperture.PhysicalAddress"].startswith(f"{READING} ")


def test_system_memory_segment_31_from_wddm2_is_labelled_a_reading():
    a = alloc(preferred=(1, 31), SupportedWriteSegmentSet=0x80000001, SupportedReadSegmentSet=0x80000001)
    assert sem.field_meanings(a)["PreferredSegment.SegmentId1"] == (
        f"segment 31 (DXGK_SEGMENT_ID_SYSTEMMEMORY; {READING} system memory from WDDM v2), priority 2")


def test_power_texts_are_the_current_tables_not_the_earlier_pages_sentences():
    value = sem.field_meanings(seg("PreservedDuringStandby"), "DXGK_SEGMENTFLAGS")["Value"]
    assert "standby: not purged, hibernate: purged" in value and "preserved in standby" not in value


def test_applicationtarget_says_the_page_and_the_kit_comment_apart():
    assert SEGMENT_FLAG_MEANINGS["ApplicationTarget"] == (
        "this segment should be targeted by application budgets (kit header comment: Deprecated, replaced by "
        "LocalBudgetGroup and NonLocalBudgetGroup)")


# ---- issue 30: a sentence used where its page does not say it

def test_descriptor4_commitlimit_on_a_memory_segment_does_not_contradict_itself():
    memory = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR4", Size=0x100000, CommitLimit=0x100000))
    assert memory["CommitLimit"] == "1 MB: This value applies to the aperture segment only"  # no "at most ... committed"
    aperture = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR4", flags=seg("Aperture"), CommitLimit=0x100000))
    assert aperture["CommitLimit"] == "1 MB: The maximum number of bytes that can be committed to this segment"
    three = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR3", Size=0x100000, CommitLimit=0x100000))
    assert three["CommitLimit"] == ("1 MB: For a memory segment, the commit limit is always the same as the size of "
                                    "the segment")


@pytest.mark.parametrize("version", ["VISTA", "WDDM1_3"])
def test_allocationinfoflags_reserved_before_wddm2_0_quotes_its_own_sentence(version):
    # the DXGK_ALLOCATIONINFOFLAGS page: Reserved "Reserved for system use."; DXGK_ALLOC_RESERVEDn "This member is
    # reserved and should be set to zero."
    m = sem.field_meanings(1 << 15 | 1 << 31, "DXGK_ALLOCATIONINFOFLAGS", target=t(version))
    assert m["Reserved"] == "reserved bits set (0x1): Reserved for system use."
    assert m["Reserved0"] == "reserved bits set (0x1): This member is reserved and should be set to zero."
    found = {f.rule_id: f for f in sem.check(1 << 15, "DXGK_ALLOCATIONINFOFLAGS", target=t(version))}
    assert found["ALLOCFLAGS.SYSTEM_RESERVED_SET"].reference.sentence == "Reserved for system use."
    assert found["ALLOCFLAGS.SYSTEM_RESERVED_SET"].severity is sem.Severity.WARNING  # it describes


def test_allocationinfoflags_wddm2_0_reserved00_quotes_its_own_sentence():
    m = sem.field_meanings(1 << 10, "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", target=t("WDDM2_0"))
    assert m["Reserved00"] == ("reserved bits set (0x1): For WDDM versions earlier than WDDM 2.1, this member is "
                               "reserved and should be set to zero.")
    (f,) = sem.check(1 << 10, "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0", target=t("WDDM2_0"))
    assert f.rule_id == "ALLOCFLAGS.RESERVED00_SET" and f.reference.sentence.startswith("For WDDM versions earlier")


# ---- quotes only on the older copy

def test_hibernate_flags_on_aperture_rules_say_they_come_from_the_earlier_page():
    word = seg("Aperture", "PreservedDuringStandby", "PreservedDuringHibernate")
    on_aperture = messages(word, "DXGK_SEGMENTFLAGS")["SEGFLAGS.HIBERNATE_ON_APERTURE"]
    assert on_aperture.endswith("(earlier version of the page)") and "the current page says neither" in on_aperture
    assert "the page forbids it, yet also recommends" not in on_aperture
    partial = messages(seg("Aperture", "PreservedDuringStandby", "PartiallyPreservedDuringHibernate"),
                       "DXGK_SEGMENTFLAGS")["SEGFLAGS.PARTIAL_ON_APERTURE"]
    assert partial.endswith("(earlier version of the page)")


def test_hibernate_partial_exclusive_cites_the_current_table():
    rule = sem.RULES["SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE"]
    assert rule.sentence.endswith('marked "invalid".') and rule.source.note == ""
    assert [q.source.note for q in rule.also] == ["earlier version of the page"]


# ---- the sweep: none of the claims above is printed for the cases named

CLAIMS = ("MB committed", "the one segment set the video memory manager uses", "ends the list", "after the end of the list", "unused slot", "more bits after the end", "means nothing",
          "must be 0", "must not set", "in force before WDDM2_0", "in force from WDDM2_0", "no alignment requirement",
          "pfnLockCb works", "yet also recommends", "may be MmuSet", "unused: the segment", "never used",
          "both must describe", "set both or neither", "VidMm chooses which end\n", ", top-down", "NORMAL band",
          "never purged during a power transition", "in the driver's address space", "not partially preserved",
          "the effective supported set", "preferences may use")
PRINTED = [*sorted((REPO / "tests" / "golden_output").glob("*.txt")),
           *sorted((REPO / "tests" / "golden_output").glob("*.json")), REPO / "tests" / "etw" / "golden" / "sample.txt",
           REPO / "tests" / "etw" / "golden" / "sample.jsonl"]


@pytest.mark.parametrize("path", PRINTED, ids=lambda p: p.name)
def test_no_claim_beyond_the_pages_is_printed(path):
    text = path.read_text()
    assert [c for c in CLAIMS if c in text] == []


def test_no_claim_beyond_the_pages_is_in_the_meaning_tables_or_messages():
    texts = [*(text for words in ALLOC_FLAG_MEANINGS.values() for text in words.values()),
             *SEGMENT_FLAG_MEANINGS.values(),
             *(r.summary for r in sem.RULES.values())]
    texts += [f.message for value in (alloc(preferred=(3, 1), banks=(1,)), alloc(HintedBank=1 | 3 << 16))
              for f in sem.check(value, adapter=adapter())]
    assert [(c, x) for x in texts for c in CLAIMS if c in x] == []
