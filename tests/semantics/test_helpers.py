"""The helpers: preferences, segment sets, flags at a version, power behaviour, priority bands,
Adapter, check/validate inputs, explain and field_meanings.  Expected values typed in from the pages."""
from __future__ import annotations

import json
import re

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.errors import D3dkmddiError, InvalidFieldType, InvalidFieldValue, MissingMember, UnsupportedTarget
from d3dkmddi_py.semantics import BankDirection as BD, PowerBehaviour as PB, SegmentDirection as SD
from tests.semantics.cases import NEWEST, adapter, alloc, descriptor, seg


# ---- bank and segment preferences

def test_bank_preference_decodes_highest_priority_first_and_stops_at_zero():
    # Bank0 = 3 top-bottom (0x83), Bank1 = 1 bottom-up (0x01 << 8), Bank2 = 0: no preference.
    prefs = sem.decode_bank_preference(0x0183)
    assert prefs.entries == (sem.BankPreferenceEntry(3, BD.TOP_DOWN), sem.BankPreferenceEntry(1, BD.BOTTOM_UP))
    assert str(prefs[0]) == "bank 3, top-bottom" and len(prefs) == 2 and list(prefs) == list(prefs.entries)
    assert prefs.after_end == ()


def test_bank_preference_keeps_what_follows_the_end():
    prefs = sem.decode_bank_preference(0x7F | 5 << 16)  # Bank0 = 127, Bank1 = 0, Bank2 = 5
    assert [e.bank for e in prefs.entries] == [127]
    assert prefs.after_end == (sem.Slot(2, 5, 0),)


def test_bank_preference_accepts_an_instance():
    hb = NEWEST.DXGK_SEGMENTBANKPREFERENCE()
    hb.Bank0, hb.Direction0, hb.Bank1 = 2, 1, 7
    assert sem.decode_bank_preference(hb).entries == (sem.BankPreferenceEntry(2, BD.TOP_DOWN),
                                                      sem.BankPreferenceEntry(7, BD.BOTTOM_UP))
    with pytest.raises(InvalidFieldType):
        sem.decode_bank_preference(NEWEST.D3DDDI_SEGMENTPREFERENCE())


def test_build_bank_preference_packs_the_documented_masks():
    assert sem.build_bank_preference([]) == 0
    assert sem.build_bank_preference([(1, 1)]) == 0x81
    assert sem.build_bank_preference([1, 2, 3, (127, 1)]) == 0xFF030201
    assert sem.build_bank_preference([sem.BankPreferenceEntry(4, BD.TOP_DOWN)]) == 0x84


@pytest.mark.parametrize("entries, field, fragment", [
    ([1, 2, 3, 4, 5], "Bank4", "holds 4"),
    ([0], "Bank0", "is 0 (no preference)"),
    ([1, 128], "Bank1", "1..127"),
    ([(1, 2)], "Direction0", "0 or 1"),
    ([1.5], "Bank0", "float"),
])
def test_build_bank_preference_refuses_what_the_word_cannot_hold(entries, field, fragment):
    with pytest.raises(InvalidFieldValue) as err:
        sem.build_bank_preference(entries)
    assert err.value.type_name == "DXGK_SEGMENTBANKPREFERENCE" and err.value.field == field
    assert fragment in str(err.value)


def test_segment_preference_decodes_and_reports_reserved_bits():
    # SegmentId0 = 2, Direction0 = 1 (0x22); SegmentId1 = 31 (31 << 6); Reserved = 0b10.
    prefs = sem.decode_segment_preference(0x22 | 31 << 6 | 0x80000000)
    assert prefs.entries == (sem.SegmentPreferenceEntry(2, SD.TOP_DOWN), sem.SegmentPreferenceEntry(31))
    assert prefs.reserved == 0x80000000


def test_build_segment_preference_packs_five_entries():
    assert sem.build_segment_preference([1, 2, 3, 4, (5, 1)]) == (1 | 2 << 6 | 3 << 12 | 4 << 18 | 5 << 24 | 1 << 29)
    with pytest.raises(InvalidFieldValue, match="SegmentId0"):
        sem.build_segment_preference([32])
    with pytest.raises(InvalidFieldValue, match="holds 5"):
        sem.build_segment_preference(range(1, 7))


# ---- segment sets

def test_segment_set_bit_n_is_segment_n_plus_1_and_bit_31_is_system_memory():
    s = sem.segment_set(0x80000003)
    assert s.ids == (1, 2) and s.system_memory and str(s) == "segments 1, 2 (+ system memory)"
    assert sem.segment_set(sem.DXGK_SEGMENT_SET_SYSTEMMEMORY).ids == ()
    assert str(sem.segment_set(0)) == "no segments"
    assert str(sem.segment_set(0b100)) == "segment 3"


def test_segment_set_before_wddm2_reads_bit_31_as_segment_32():
    s = sem.segment_set(0x80000001, target=("x64", "WDDM1_3"))
    assert s.ids == (1, 32) and not s.system_memory


def test_segment_set_mask_round_trips_and_refuses_bad_ids():
    assert sem.segment_set_mask([1, 3], system_memory=True) == 0x80000005
    assert sem.segment_set(sem.segment_set_mask(range(1, 32))).ids == tuple(range(1, 32))
    for bad in (0, 32, -1):
        with pytest.raises(InvalidFieldValue):
            sem.segment_set_mask([bad])
    assert sem.DXGK_SEGMENT_ID_SYSTEMMEMORY == kmd.DXGK_SEGMENT_ID_SYSTEMMEMORY == 31


def test_a_segment_set_built_by_hand_must_be_the_set_of_its_mask():
    """SegmentSet(...) took anything: ids=True failed in describe_segment_set (len of a bool), an array for
    system_memory in its truth test; ids that are not its mask's went on as if they were."""
    assert sem.SegmentSet(0x80000003, (1, 2), True) == sem.segment_set(0x80000003)
    assert sem.SegmentSet(0x80000001, (1, 32), False) == sem.segment_set(0x80000001, target=("x64", "WDDM1_3"))
    with pytest.raises(D3dkmddiError, match=r"^SegmentSet: mask 0x3 names ids \(1, 2\) with system_memory=False, "
                                            r"not ids \(5,\) with system_memory=False: segment_set\(mask\) gives it$"):
        sem.SegmentSet(3, (5,), False)
    with pytest.raises(D3dkmddiError, match=r"^SegmentSet: mask 0x80000000 names ids \(\) with system_memory=True "
                                            r"\(before WDDM2_0: ids \(32,\) with system_memory=False\), not ids "):
        sem.SegmentSet(0x80000000, (), False)
    for fields, message in (((3, True, False), r"^SegmentSet: ids must be a tuple of the segment ids the mask names, "
                                                r"not True$"),
                            ((-1, (), False), r"^SegmentSet: mask must be an integer 0\.\.0xffffffff, not -1$"),
                            ((3, (1, 2), [1]), r"^SegmentSet: system_memory must be True or False, not \[1\]$")):
        with pytest.raises(D3dkmddiError, match=message):
            sem.SegmentSet(*fields)


def test_preferences_built_by_hand_must_be_what_their_word_decodes_to():
    """build_bank_preference took a BankPreferenceEntry(direction=None) to int() (a TypeError) and Preferences with
    entries None to iter(); a Preferences, an entry or a slot a user builds is checked where it is built, the
    decoders build theirs unchecked."""
    decoded = sem.decode_segment_preference(0x8C1 | 2 << 18)
    assert sem.Preferences(decoded.value, decoded.entries, decoded.after_end, decoded.reserved) == decoded
    assert sem.build_bank_preference([sem.BankPreferenceEntry(3, 1), sem.BankPreferenceEntry(1)]) == 0x0183
    with pytest.raises(D3dkmddiError, match=r"^Preferences: 0x183 is \(bank 3, top-bottom; bank 1, bottom-up\) as a "
                                            r"bank preference and \(segment 3, VidMm chooses the end; segment 6, VidMm "
                                            r"chooses the end\) as a segment preference, not \(bank 3, bottom-up\) "):
        sem.Preferences(0x183, (sem.BankPreferenceEntry(3),))
    for build, message in (
            (lambda: sem.Preferences(0x183, None), r"^Preferences: entries must be a tuple of BankPreferenceEntry or "
                                                   r"of SegmentPreferenceEntry, not None$"),
            (lambda: sem.BankPreferenceEntry(3, None), r"^BankPreferenceEntry: direction must be an integer 0\.\.1, "
                                                       r"not None$"),
            (lambda: sem.BankPreferenceEntry(128), r"^BankPreferenceEntry: bank must be an integer 1\.\.0x7f, not "
                                                   r"128$"),
            (lambda: sem.SegmentPreferenceEntry(32), r"^SegmentPreferenceEntry: segment_id must be an integer "
                                                     r"1\.\.0x1f, not 32$"),
            (lambda: sem.Slot(0, 1, 2), r"^Slot: direction must be an integer 0\.\.1, not 2$")):
        with pytest.raises(D3dkmddiError, match=message):
            build()


def test_a_records_unchecked_constructor_is_the_packages_alone():
    """``_new`` builds a record from the package's own values without its checks; the public constructor
    checks (the same record either way)."""
    assert sem.SegmentSet._new(3, (1, 2), False) == sem.SegmentSet(3, (1, 2), False)
    assert sem.SegmentSet._new(3, (9,), False).ids == (9,)  # unchecked, by design: the package's values only


def test_effective_set_is_the_write_set_from_wddm2():
    a = alloc(SupportedReadSegmentSet=0b011, SupportedWriteSegmentSet=0b100)
    eff = sem.effective_segment_set(a)
    assert eff.segments.ids == (3,) and eff.source == "SupportedWriteSegmentSet" and "ignores" in eff.note
    old = alloc(kmd.target("x64", "WDDM1_3"), SupportedReadSegmentSet=0b011, SupportedWriteSegmentSet=0b100)
    assert sem.effective_segment_set(old).segments.ids == (1, 2, 3)


# ---- segment flags at a version, power behaviour

def test_decode_segment_flags_splits_named_newer_and_reserved_bits():
    info = sem.decode_segment_flags(0x80001885, target=("x64", "WIN8"))
    assert info.flags == sem.SegmentFlag.Aperture | sem.SegmentFlag.CpuVisible | sem.SegmentFlag.PreservedDuringStandby
    assert info.undefined == sem.SegmentFlag.Use64KBPages | sem.SegmentFlag.ReservedSysMem
    assert info.reserved == 0x80000000 and info.power is PB.PURGED_IN_HIBERNATE
    assert sem.decode_segment_flags(0x400, target=("x64", "WIN8")).names == ("DirectFlip",)


# The 'Optimized standby settings' table: (Standby, Hibernate, Partial) -> behaviour.
POWER_TABLE = [
    ((1, 1, 1), PB.INVALID), ((1, 1, 0), PB.NEVER_PURGED), ((1, 0, 1), PB.PARTIALLY_PURGED_IN_HIBERNATE),
    ((1, 0, 0), PB.PURGED_IN_HIBERNATE), ((0, 1, 1), PB.INVALID), ((0, 1, 0), PB.INVALID),
    ((0, 0, 1), PB.INVALID), ((0, 0, 0), PB.ALWAYS_PURGED),
]


@pytest.mark.parametrize("bits, behaviour", POWER_TABLE, ids=[str(b) for b, _ in POWER_TABLE])
def test_power_behaviour_follows_the_table(bits, behaviour):
    word = bits[0] << 7 | bits[1] << 8 | bits[2] << 9
    assert sem.power_behaviour(word) is behaviour
    assert sem.power_behaviour(descriptor(flags=word)) is behaviour


def test_power_behaviour_texts_are_the_tables_cells_and_hybrid_sleep_acts_as_hibernate():
    assert PB.NEVER_PURGED.hybrid_sleep == "as in hibernate (not purged)"
    assert PB.PURGED_IN_HIBERNATE.hybrid_sleep == "as in hibernate (purged)"
    assert PB.PURGED_IN_HIBERNATE.standby == "not purged" and PB.PURGED_IN_HIBERNATE.hibernate == "purged"
    assert PB.PARTIALLY_PURGED_IN_HIBERNATE.hibernate == "partially purged"
    assert PB.PURGED_IN_HIBERNATE.description == "standby: not purged, hibernate: purged"
    assert PB.INVALID.standby == "invalid" and "does not recognize" in PB.INVALID.description


# ---- priorities

@pytest.mark.parametrize("value, band, exact", [
    (0, sem.PriorityBand.INVALID, False),
    (1, sem.PriorityBand.BELOW_MINIMUM, False),
    (0x27FFFFFF, sem.PriorityBand.BELOW_MINIMUM, False),
    (0x28000000, sem.PriorityBand.MINIMUM, True),
    (0x50000000, sem.PriorityBand.LOW, True),
    (0x77FFFFFF, sem.PriorityBand.LOW, False),
    (0x78000000, sem.PriorityBand.NORMAL, True),
    (0x78000001, sem.PriorityBand.NORMAL, False),  # "slightly above normal"
    (0xA0000000, sem.PriorityBand.HIGH, True),
    (0xC8000000, sem.PriorityBand.MAXIMUM, True),
    (0xFFFFFFFF, sem.PriorityBand.MAXIMUM, False),
])
def test_priority_bands(value, band, exact):
    p = sem.decode_priority(value)
    assert p.band is band and p.exact is exact
    if exact:
        assert p.constant == f"D3DDDI_ALLOCATIONPRIORITY_{band.name}" == \
               next(k for k in kmd.__all__ if k.startswith("D3DDDI_ALLOC") and getattr(kmd, k) == value)


def test_priority_text_is_the_level_plus_the_difference():
    assert str(sem.decode_priority(0x78000001)) == "D3DDDI_ALLOCATIONPRIORITY_NORMAL + 0x1"
    assert str(sem.decode_priority(0x78000000)) == "D3DDDI_ALLOCATIONPRIORITY_NORMAL"
    assert str(sem.decode_priority(0x27FFFFFF)) == "D3DDDI_ALLOCATIONPRIORITY_MINIMUM - 0x1"
    assert str(sem.decode_priority(0)) == "0 is an invalid initial allocation priority"
    assert sem.decode_priority(alloc(AllocationPriority=0xA0000000)).band is sem.PriorityBand.HIGH


# ---- Adapter

def test_adapter_build_defaults_and_queries():
    ad = adapter()
    assert ad.segment_count == 3 and ad.segment_ids == (1, 2, 3)
    assert ad.abi == "x64" and ad.interface_version is NEWEST.interface_version
    assert type(ad.descriptor(1))._c_name_ == "DXGK_SEGMENTDESCRIPTOR3" and ad.descriptor(4) is None
    assert ad.nb_of_banks(1) == 4 and ad.is_aperture(3) and not ad.is_aperture(1)
    assert ad.descriptor(2).CommitLimit == ad.descriptor(2).Size == 1 << 26
    assert ad.segment_flags(1).flags == sem.SegmentFlag.UseBanking | sem.SegmentFlag.Use64KBPages
    old = sem.Adapter.build(seg("Aperture"), abi="x86", interface_version="WIN7")
    assert type(old.descriptor(1))._c_name_ == "DXGK_SEGMENTDESCRIPTOR"
    four = sem.Adapter.build(seg("Aperture"), descriptor="DXGK_SEGMENTDESCRIPTOR4")
    assert four.nb_of_banks(1) is None


def test_adapter_is_frozen_copies_its_descriptors_and_compares_by_bytes():
    d = descriptor(flags=seg("Aperture"))
    ad = sem.Adapter.from_descriptors([d])
    d.Flags.Value = seg("Agp")
    assert ad.flags(1) == seg("Aperture")
    assert ad == sem.Adapter.from_descriptors([descriptor(flags=seg("Aperture"))])
    assert hash(ad) == hash(sem.Adapter.from_descriptors([descriptor(flags=seg("Aperture"))]))
    with pytest.raises(AttributeError):
        ad.abi = "x86"


def test_adapter_reads_other_version_descriptors_at_its_own_version():
    win8 = descriptor(target=kmd.target("x64", "WIN8"), flags=1 << 11)  # Reserved at WIN8, Use64KBPages at 2.0
    ad = sem.Adapter((win8,), "x64", "WDDM2_0")
    assert ad.segment_flags(1).flags == sem.SegmentFlag.Use64KBPages
    assert [f.rule_id for f in sem.check(ad)] == []
    assert [f.rule_id for f in sem.check(sem.Adapter.from_descriptors([win8]))] == ["SEGFLAGS.UNDEFINED_AT_VERSION"]


def test_adapter_from_bytes_of_descriptors_read_from_memory():
    built = sem.Adapter.build(seg("Aperture"), {"Flags": seg("UseBanking"), "NbOfBanks": 2}, target=("x86", "WIN8"))
    raw = [bytes(d) for d in built.segments]
    assert sem.Adapter.from_bytes("DXGK_SEGMENTDESCRIPTOR3", raw, target=("x86", "WIN8")) == built
    with pytest.raises(InvalidFieldValue, match=r"records\[1\] = '<47 bytes>' is not one DXGK_SEGMENTDESCRIPTOR3 "
                                                r"of x86 WIN8 \(0x300E\) \(valid 48 bytes\)"):
        sem.Adapter.from_bytes("DXGK_SEGMENTDESCRIPTOR3", [raw[0], raw[1][:47]], target=("x86", "WIN8"))
    with pytest.raises(InvalidFieldType, match="is not a segment descriptor type at x64 VISTA"):
        sem.Adapter.from_bytes("DXGK_SEGMENTDESCRIPTOR3", raw, target=("x64", "VISTA"))
    with pytest.raises(InvalidFieldType, match="is not a segment descriptor type"):
        sem.Adapter.from_bytes("DXGK_SEGMENTFLAGS", [b"\0" * 4])


def test_adapter_refuses_what_is_not_a_descriptor_or_of_another_abi():
    with pytest.raises(InvalidFieldType):
        sem.Adapter((NEWEST.DXGK_SEGMENTFLAGS(),))
    x86 = kmd.target("x86", "WDDM3_2").DXGK_SEGMENTDESCRIPTOR3()
    with pytest.raises(UnsupportedTarget):
        sem.Adapter((x86,), "x64", "WDDM3_2")
    with pytest.raises(MissingMember):
        sem.Adapter.build({"Flags": 0, "NoSuchMember": 1})
    with pytest.raises(UnsupportedTarget):
        sem.check(alloc(), adapter=adapter("WDDM3_0"))


# ---- check / validate inputs

def test_check_gives_the_same_for_int_bytes_and_instance():
    value = seg("Agp", "CpuVisible")
    inst = NEWEST.DXGK_SEGMENTFLAGS()
    inst.Value = value
    by_int = sem.check(value, "DXGK_SEGMENTFLAGS")
    assert by_int == sem.check(inst) == sem.check(value.to_bytes(4, "little"), "_DXGK_SEGMENTFLAGS")
    assert [f.rule_id for f in by_int] == ["SEGFLAGS.AGP_EXCLUSIVE", "SEGFLAGS.CPUVISIBLE_ON_APERTURE"]


def test_check_uses_the_instances_own_target_unless_told():
    win8 = kmd.target("x64", "WIN8").DXGK_SEGMENTFLAGS()
    win8.Value = 1 << 11
    assert [f.rule_id for f in sem.check(win8)] == ["SEGFLAGS.UNDEFINED_AT_VERSION"]
    assert sem.check(win8, target=("x64", "WDDM2_0")) == []


def test_check_of_a_type_without_rules_is_empty():
    assert sem.check(NEWEST.DXGK_ALLOCATIONLIST()) == []
    assert sem.check(0, "DXGK_SEGMENTFLAGS2") == []


def test_check_refuses_unclear_input():
    with pytest.raises(InvalidFieldType, match="type_name"):
        sem.check(0x485)
    with pytest.raises(InvalidFieldValue, match="32|fit"):
        sem.check(1 << 32, "DXGK_SEGMENTFLAGS")
    with pytest.raises(InvalidFieldValue):
        sem.check(-1, "DXGK_SEGMENTFLAGS")
    with pytest.raises(InvalidFieldValue, match="bytes"):
        sem.check(b"\0\0\0", "DXGK_SEGMENTFLAGS")
    with pytest.raises(InvalidFieldType):
        sem.check(NEWEST.DXGK_SEGMENTFLAGS(), "DXGK_SEGMENTBANKPREFERENCE")
    with pytest.raises(MissingMember):
        sem.check(0, "DXGK_ALLOCATIONINFOFLAGS2", target=("x64", "WDDM2_9"))
    with pytest.raises(UnsupportedTarget):
        sem.check(0, "DXGK_SEGMENTFLAGS", target=("x64", 0x5022))


def test_validate_raises_once_with_every_finding():
    with pytest.raises(sem.ValidationError) as err:
        sem.validate(seg("Agp", "CpuVisible") | 1 << 31, "DXGK_SEGMENTFLAGS")
    e = err.value
    assert isinstance(e, ValueError) and isinstance(e, D3dkmddiError)
    assert [f.rule_id for f in e.findings] == ["SEGFLAGS.AGP_EXCLUSIVE", "SEGFLAGS.CPUVISIBLE_ON_APERTURE",
                                               "SEGFLAGS.RESERVED_NONZERO"]
    assert "DXGK_SEGMENTFLAGS" in str(e) and "3 documented rules" in str(e)


def test_validate_passes_warnings_unless_strict():
    warn_only = seg("Aperture", "CpuVisible")
    assert sem.validate(warn_only, "DXGK_SEGMENTFLAGS") == warn_only
    with pytest.raises(sem.ValidationError):
        sem.validate(warn_only, "DXGK_SEGMENTFLAGS", strict=True)
    with pytest.raises(sem.ValidationError):
        sem.validate(sem.Adapter.build(seg("Agp"), seg("Agp")))


# ---- the registry

def test_every_rule_quotes_a_sentence_and_states_its_predicate():
    assert len(sem.RULES) >= 50
    for rule_id, r in sem.RULES.items():
        prefix, _, name = rule_id.partition(".")
        assert re.fullmatch(r"[A-Z][A-Z0-9]+", prefix) and re.fullmatch(r"[A-Z][A-Z0-9_]+", name), rule_id
        assert r.rule_id == rule_id and isinstance(r.severity, sem.Severity)
        assert r.sentence.strip() and r.summary.strip() and r.page
        assert r.reference == sem.Reference(r.page, r.sentence)
        assert r.page.startswith(("https://learn.microsoft.com/", "d3dkmddi.h", "shared/etw/"))
        assert rule_id in sem.rule_text(rule_id)


# ---- explain and field_meanings

def test_explain_lists_fields_meanings_and_the_sentence_of_each_finding():
    text = sem.explain(seg("Agp", "CpuVisible"), "DXGK_SEGMENTFLAGS")
    assert text.splitlines()[0] == f"DXGK_SEGMENTFLAGS at {NEWEST.label}, 4 bytes"
    assert "Value" in text and "Agp | CpuVisible" in text
    assert "ERROR SEGFLAGS.AGP_EXCLUSIVE at Agp = 0x1" in text
    assert sem.RULES["SEGFLAGS.AGP_EXCLUSIVE"].sentence in text
    assert sem.explain(0, "DXGK_SEGMENTFLAGS").endswith("No findings.")


def test_explain_an_allocation_against_an_adapter():
    text = sem.explain(alloc(banks=(3, (1, 1)), AllocationPriority=0x78000001), adapter=adapter())
    assert "bank 3 of segment 1 (4 banks), priority 1" in text
    assert "D3DDDI_ALLOCATIONPRIORITY_NORMAL + 0x1" in text
    assert "segments 1 (memory, banks, 64 KB pages), 3 (aperture)" in text
    assert text.endswith("No findings.")
    adapter_text = sem.explain(adapter())
    assert "segment 3: DXGK_SEGMENTDESCRIPTOR3, 512 MB" in adapter_text
    assert "power: standby: purged, hibernate: purged" in adapter_text


def test_field_meanings_examples():
    m = sem.field_meanings(sem.build_bank_preference([(3, 1), 1]), "DXGK_SEGMENTBANKPREFERENCE")
    assert m["Value"] == "bank 3, top-bottom; bank 1, bottom-up"
    assert m["Bank0"] == "bank 3, priority 1" and m["Direction0"].startswith("a top-bottom search")
    assert m["Bank2"] == "no preference"
    a = alloc(SupportedWriteSegmentSet=0x80000003, SupportedReadSegmentSet=0x80000003, preferred=(1, 31))
    m = sem.field_meanings(a)
    assert m["SupportedWriteSegmentSet"] == ("segments 1, 2 (+ system memory); from WDDM v2, during surface creation "
                                             "the video memory manager will use only the segment set provide by "
                                             "SupportedWriteSegmentSet")
    assert m["AllocationPriority"] == "D3DDDI_ALLOCATIONPRIORITY_NORMAL"
    assert "DXGK_SEGMENT_ID_SYSTEMMEMORY; [reading]" in m["PreferredSegment.SegmentId1"]
    newest = kmd.target("x64").interface_version.name  # the default target's: the meaning names its version
    assert m["Flags.Value"] == f"{newest}: Drivers that target any WDDM version >= WDDM 2.0 should use FlagsWddm2"
    m = sem.field_meanings(alloc(Size=0x1001))
    assert m["Size"] == "4097 bytes; expanded to 0x2000, a multiple of the native host page size"
    m = sem.field_meanings(seg("PreservedDuringStandby", "PreservedDuringHibernate"), "DXGK_SEGMENTFLAGS")
    assert "standby: not purged, hibernate: not purged" in m["Value"]
    assert "hybrid sleep: as in hibernate (not purged)" in m["Value"]
    m = sem.field_meanings(descriptor("DXGK_SEGMENTDESCRIPTOR5"))
    assert m["SegmentType"] == "DXGK_SEGMENTTYPE_SYSMEM" and m["SlabSize"] == "DXGK_PAGESIZE_4KB"


def test_meanings_are_json_safe_strings():
    m = sem.field_meanings(alloc(), adapter=adapter())
    assert json.loads(json.dumps(m)) == m and all(isinstance(v, str) and v for v in m.values())


@pytest.mark.parametrize("abi, version, flags_view, flags2", [
    ("x64", "WDDM1_3", "Flags (DXGK_ALLOCATIONINFOFLAGS)", "none before WDDM3_0"),
    ("x64", "WDDM2_9", "FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)", "none before WDDM3_0"),
    ("x86", "WDDM3_2", "FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)", "none on 32-bit targets"),
    ("arm64", "WDDM3_0", "FlagsWddm2 (DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)", None),
])
def test_explain_says_which_flag_view_and_set_are_in_force(abi, version, flags_view, flags2):
    text = sem.explain(alloc(kmd.target(abi, version)))
    assert f"note: {flags_view} is read at {version}: " in text
    source = ("SupportedReadSegmentSet | SupportedWriteSegmentSet ([reading] " if version == "WDDM1_3"
              else "SupportedWriteSegmentSet; ")  # the union labelled where it is stated
    assert f"the supported set in force is {source}" in text
    if flags2:
        assert flags2 in text
    else:
        assert "no Flags2" not in text and "Flags2.Value" in text


def test_page_rounding_and_the_effective_set_are_one_function_each():
    """The record path (allocation.py), the rules (checks.py) and explain read the same two functions."""
    import inspect

    from d3dkmddi_py._spec.base import PAGE_SIZE
    from d3dkmddi_py.semantics import _effective, allocation, checks

    page = PAGE_SIZE["x64"]
    assert [_effective.page_rounded(n) for n in (0, 1, page, page + 1)] == [0, page, page, 2 * page]
    assert allocation.effective_size(page + 1) == 2 * page
    for module in (allocation, checks):
        text = inspect.getsource(module)
        assert "// page" not in text and '["SupportedReadSegmentSet"] |' not in text


@pytest.mark.parametrize("name", ["__", "__class__", "_u0"])
def test_adapter_build_refuses_hidden_and_dunder_names_as_members(name):
    """A fuzzed {"__": None} once escaped as a bare AttributeError, and "__class__" reached setattr."""
    with pytest.raises(MissingMember, match=f"no member '{name}'"):
        kmd.Adapter.build({name: None})
