"""Severity follows the sentence: the policy (``_rules.severity_problem``, written once where the rules
live) holds over every rule, rejects the rules it must, and each severity the reading of the pages
changed is a case named after its rule, with the sentence it rests on."""
from __future__ import annotations

import pytest

from d3dkmddi_py.semantics import RULES, Severity
from d3dkmddi_py.semantics._rules import (ALLOCINFO, SEGFLAGS, SEGFLAGS_2017, Force, Quote, Rule, _rule,
                                          sentence_force, severity_problem)

E, W = Severity.ERROR, Severity.WARNING


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_severity_follows_its_sentence(rule_id):
    assert severity_problem(RULES[rule_id]) is None


def _made(severity, sentence, *, source=SEGFLAGS, also=(), softened_by=None) -> Rule:
    return Rule("TEST.MADE", severity, Quote(source, sentence), "made for the test", tuple(also), softened_by)


def test_an_error_on_a_should_sentence_is_rejected():
    rule = _made(E, "This member is reserved and should be set to zero.")
    assert "only says \"should\"" in severity_problem(rule)
    with pytest.raises(RuntimeError, match="TEST.MADE is an error, but its sentence only says \"should\""):
        _rule("TEST.MADE", E, SEGFLAGS, "This member is reserved and should be set to zero.", "made for the test")
    assert "TEST.MADE" not in RULES
    assert severity_problem(_made(W, "This member is reserved and should be set to zero.")) is None


def test_an_error_on_a_description_is_rejected_unless_a_sentence_that_forbids_goes_with_it():
    describes = "Preferred-bank identifiers are one-based (that is, the first bank has an identifier of one)."
    assert "only describes" in severity_problem(_made(E, describes))
    paired = _made(E, describes, also=(Quote(SEGFLAGS, "This flag cannot be used in combination with the CpuVisible "
                                                       "flag."),))
    assert severity_problem(paired) is None


def test_a_warning_on_a_sentence_that_forbids_needs_the_sentence_that_softens_it():
    forbids = "This flag is invalid and ignored on aperture segments."
    assert "make it an error" in severity_problem(_made(W, forbids))
    softened = _made(W, forbids, softened_by=Quote(SEGFLAGS_2017, "These two members should also both be set for "
                                                                  "aperture segments in which page table content "
                                                                  "should be preserved during power transitions."))
    assert severity_problem(softened) is None


@pytest.mark.parametrize("sentence, force", [
    ("The driver must not set Cached on the primary surface.", Force.FORBIDS),
    ("This flag cannot be used in combination with the CpuVisible flag.", Force.FORBIDS),
    ("Note that 0 is an invalid initial allocation priority.", Force.FORBIDS),
    ("Do not set this flag unless the PreservedDuringStandby member is also set.", Force.FORBIDS),
    ("Only aperture segments can be specified by this member.", Force.FORBIDS),
    ("The video memory manager asserts if the driver attempts to set preferences for unsupported segments in the "
     "PreferredSegment member.", Force.FORBIDS),
    ("Reserved for system use and should not be set by the kernel mode driver.", Force.SHOULD),
    ("Reserved (bits 31-32).", Force.DESCRIBES),
    ("Setting bit 0 indicates that the first segment is supported, setting bit 1 indicates that the second segment "
     "is supported, and so on.", Force.DESCRIBES),
    # an aside in parentheses is not what the sentence asks
    ("If the allocation is not supported in a pitch-aligned segment (graphics processing units [GPUs] commonly do "
     "not support this type of segment), the driver should set the value in PitchAlignedSize to zero.", Force.SHOULD),
    # "only" forbids where it restricts what can or may be done, in its own clause
    ("This member can be set only with setting the Aperture member (that is, CacheCoherent has no meaning for a "
     "memory segment).", Force.FORBIDS),
    ("The flag can only be set when the AccessedPhysically flag is set.", Force.FORBIDS),
    ("The display miniport driver can set preferences only for segments that are supported for read operations.",
     Force.FORBIDS),
    ("Because only one AGP segment can exist, the driver should not specify the Agp bit-field flag with any other "
     "DXGK_SEGMENTFLAGS bit-field flags.", Force.FORBIDS),
    ("UseAlternateVA is valid only for the primary allocation.", Force.FORBIDS),
    # a bare "only" describes; so does "can" without "only", and "do not" that opens no clause
    ("The driver specifies this array only if it also sets the UseBanking bit-field flag in the Flags member.",
     Force.DESCRIBES),
    ("During surface creation the video memory manager will ignore the SupportedReadSegmentSet value and use only "
     "the segment set provide by SupportedWriteSegmentSet.", Force.DESCRIBES),
    ("The driver can specify less than four preferences by setting the lower priority preferences of bank "
     "identifiers to zero.", Force.DESCRIBES),
    ("The driver can use each member; the manager only reads them.", Force.DESCRIBES),  # made up: two clauses
    ("GPUs commonly do not support this type of segment.", Force.DESCRIBES),
    ("Reserved; do not use.", Force.FORBIDS),
    ("Although the AGP-type aperture segment is an aperture and visible to the CPU, if any other members are set, "
     "the adapter fails to initialize.", Force.FORBIDS),
    ("If this flag is not set on the allocation, pfnLockCb returns an error.", Force.FORBIDS),
])
def test_sentence_force(sentence, force):
    assert sentence_force(sentence) is force


# Every severity the reading of the pages changed: (before, after, the word the sentence says it with).
CHANGED = {
    "SEGFLAGS.RESERVEDSYSMEM_SET": (E, W, "should"),
    "SEGFLAGS.UNDEFINED_AT_VERSION": (E, W, "should"),
    "SEGFLAGS.RESERVED_NONZERO": (E, W, "should"),
    "DESC.USEBANKING_NEEDS_BANKS": (E, W, "should"),
    "DESC.RESERVED_NONZERO": (E, W, "should"),
    "SEGPREF.RESERVED_NONZERO": (E, W, None),
    "ALLOCFLAGS.UNDEFINED_AT_VERSION": (E, W, "should"),
    "ALLOCFLAGS.RESERVED_NONZERO": (E, W, "should"),
    "ALLOCINFO.SET_UNKNOWN_SEGMENT": (E, W, None),
    "ALLOCINFO.HINTEDBANK_OUT_OF_RANGE": (E, W, None),
    "SEGFLAGS.POPULATED_ON_APERTURE": (W, E, "invalid"),
    # made an error on "only if" (issue 22), a warning again when the check learnt that a bare "only" describes
    "DESC.BANKTABLE_WITHOUT_USEBANKING": (E, W, None),
}


@pytest.mark.parametrize("rule_id", sorted(CHANGED))
def test_changed_severity_rests_on_its_sentence(rule_id):
    before, after, word = CHANGED[rule_id]
    rule = RULES[rule_id]
    assert rule.severity is after != before
    force = sentence_force(rule.sentence)
    assert force is {None: Force.DESCRIBES, "should": Force.SHOULD}.get(word, Force.FORBIDS)
    if word is not None:
        assert f" {word} " in f" {rule.sentence} "


def test_the_rules_the_issue_names_keep_their_new_sentences():
    # a sentence of the right force, from the page the rule checks
    assert RULES["ALLOCINFO.PITCHALIGNEDSIZE_UNUSED"].sentence.endswith(
        "the driver should set the value in PitchAlignedSize to zero.")
    assert RULES["ALLOCINFO.PITCHALIGNEDSIZE_MISSING"].source == SEGFLAGS
    assert "should no longer be a difference" in RULES["ALLOCINFO.READ_SET_IGNORED"].sentence
    assert RULES["ALLOCINFO.READ_SET_IGNORED"].source == ALLOCINFO


# ---- issue 30: the check reads the sentence, not the word "only"

USE_ONLY = ("During surface creation the video memory manager will ignore the SupportedReadSegmentSet value and use "
            "only the segment set provide by SupportedWriteSegmentSet.")


def test_use_only_the_segment_set_is_not_an_errors_sentence():
    assert "is an error, but its sentence only describes" in severity_problem(_made(E, USE_ONLY, source=ALLOCINFO))
    read_set = RULES["ALLOCINFO.READ_SET_IGNORED"]  # a warning whose sentence beside it is the one above
    assert [q.text for q in read_set.also] == [USE_ONLY]
    as_error = Rule(read_set.rule_id, E, read_set.quote, read_set.summary, read_set.also)
    assert severity_problem(as_error) is not None


def test_an_error_with_a_sentence_that_softens_it_is_rejected():
    forbids = "This flag is invalid and ignored on aperture segments."
    softener = Quote(SEGFLAGS_2017, "These two members should also both be set for aperture segments in which page "
                                    "table content should be preserved during power transitions.")
    assert "a sentence softens it" in severity_problem(_made(E, forbids, softened_by=softener))


def test_a_warning_with_a_sentence_beside_it_that_forbids_is_rejected():
    describes = "Reserved (bits 31-32)."
    forbidding = Quote(SEGFLAGS, "This flag cannot be used in combination with the CpuVisible flag.")
    assert "make it an error" in severity_problem(_made(W, describes, also=(forbidding,)))


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_the_severity_check_fails_when_the_rules_severity_is_flipped(rule_id):
    # every rule's sentences allow exactly one severity: flipping it is caught, so the check cannot pass vacuously
    rule = RULES[rule_id]
    flipped = Rule(rule.rule_id, W if rule.severity is E else E, rule.quote, rule.summary, rule.also,
                   rule.softened_by, rule.reading)
    assert severity_problem(rule) is None
    assert severity_problem(flipped) is not None
