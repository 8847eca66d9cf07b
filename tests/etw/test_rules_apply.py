"""Which rules apply to ETW events is derived from the leaves each Check reads against MAPPING."""
from __future__ import annotations

from d3dkmddi_py import etw
from d3dkmddi_py.etw.model import mapping
from d3dkmddi_py.semantics import RULES
from d3dkmddi_py.semantics.checks import CHECKS, Check


# the rule families whose checks run on the types the events fill (a family of a type no event
# carries, added later, is "not-on-events")
EVENT_FAMILIES = {"SEGFLAGS", "DESC", "ADAPTER", "BANKPREF", "SEGPREF", "ALLOCFLAGS", "ALLOCFLAGS2", "ALLOCINFO"}


def test_every_rule_has_a_derived_answer_and_a_reason():
    assert set(etw.RULES_APPLY) == set(RULES)
    for rule_id, (ok, why) in etw.RULES_APPLY.items():
        assert why in etw.REASONS, rule_id
        assert ok == (why in mapping.APPLYING), rule_id
        if rule_id.partition(".")[0] in EVENT_FAMILIES:
            assert why != "not-on-events", f"{rule_id}: no check of an event type reads anything"


def test_a_rule_no_event_type_checks_is_not_applied(monkeypatch):
    """A rule of a struct no event carries (here a made-up one) is derived as not-on-events."""
    monkeypatch.setitem(RULES, "PROBE.ONLY_ELSEWHERE", RULES["ALLOCINFO.PRIORITY_ZERO"])
    assert mapping._applicability()["PROBE.ONLY_ELSEWHERE"] == (False, "not-on-events")


def test_rules_reading_members_the_events_lack_are_not_applied():
    for rule_id, why in (("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", "no-pitch"),
                         ("ALLOCFLAGS2.RESERVED_NONZERO", "no-flags2"),
                         ("DESC.BANKTABLE_WITHOUT_USEBANKING", "no-bank-table"),
                         ("DESC.RESERVED_NONZERO", "no-reserved"),
                         ("ALLOCFLAGS.RESERVED_NONZERO", "kernel-bits"),
                         ("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", "no-high-flags"),
                         ("ALLOCINFO.READ_SET_IGNORED", "effective")):
        assert etw.RULES_APPLY[rule_id] == (False, why)
    for rule_id in ("SEGFLAGS.AGP_EXCLUSIVE", "ALLOCINFO.PREFERRED_NOT_SUPPORTED", "ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE",
                    "ADAPTER.ONE_AGP", "BANKPREF.ID_AFTER_ZERO"):
        assert etw.RULES_APPLY[rule_id] == (True, "carried")


def test_a_new_rule_reading_an_unmapped_field_is_not_applied(monkeypatch):
    """PhysicalAdapterIndex is a DXGK_ALLOCATIONINFO member no event field fills (MAPPING says why)."""
    monkeypatch.setitem(RULES, "TEST.READS_UNMAPPED", RULES["ALLOCINFO.PRIORITY_ZERO"])
    monkeypatch.setitem(RULES, "TEST.READS_MAPPED", RULES["ALLOCINFO.PRIORITY_ZERO"])
    extra = (Check("TEST.READS_UNMAPPED", "PhysicalAdapterIndex", lambda r: r["PhysicalAdapterIndex"] > 1, "x"),
             Check("TEST.READS_MAPPED", "Size", lambda r: r["Size"] > 1, "Size = {Size:#x}"))

    def build(abi, version, name, facts):
        found = CHECKS[name](abi, version, facts)
        return found + extra if name == mapping.ALLOCATION_TYPE else found

    table = mapping._applicability(mapping.rule_reasons(build))
    assert table["TEST.READS_UNMAPPED"] == (False, "unmapped")
    assert table["TEST.READS_MAPPED"] == (True, "carried")
    assert {k: v for k, v in table.items() if not k.startswith("TEST.")} == etw.RULES_APPLY


def test_a_check_knows_the_leaves_its_predicate_and_message_read():
    from d3dkmddi_py.semantics.checks import leaves_read

    c = Check("X", "Size", lambda r: (r["Size"] > 1) & r.bit("Flags.Agp"), "{Alignment:#x} {n}",
              params=lambda r: {"n": r["PitchAlignedSize"]}, prefix="")
    assert leaves_read(c, {"Size", "Alignment", "PitchAlignedSize", "Flags.Agp"}) == {
        "Size", "Flags.Agp", "Alignment", "PitchAlignedSize"}
    assert leaves_read(c.under("Sub."), {"Sub.Size"}) >= {"Sub.Size", "Sub.Flags.Agp", "Sub.PitchAlignedSize"}
