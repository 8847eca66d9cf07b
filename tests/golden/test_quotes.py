"""Every word the package quotes, held to its source as the layouts are held to the compilers: each
rule's sentence (and the sentences beside it) is found verbatim, markup and whitespace aside, in the
copy it cites (the current page, an earlier copy, or the kit comment), and so is every page text a
meaning prints (``semantics._rules.QUOTED``).  Reads ../shared (see sources.py)."""
from __future__ import annotations

import pytest

import d3dkmddi_py.semantics.explain  # noqa: F401 - loads every meaning, so QUOTED holds them all
from d3dkmddi_py.semantics import RULES
from d3dkmddi_py.semantics._rules import QUOTED, SEGFLAGS, SEGFLAGS_2017, Quote, Rule, Severity, SourceKind, kit
from tests.conftest import require
from tests.golden.sources import SHARED, copy_text, current_copy, missing, normalise


@pytest.fixture(autouse=True)
def _shared():
    require((SHARED / "docs").is_dir() and (SHARED / "seeds").is_dir(),
            f"the shared reference pages ({SHARED}/docs, /seeds) are not here")


def _quotes(rule: Rule) -> list:
    return [rule.quote, *rule.also, *([rule.softened_by] if rule.softened_by else [])]


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_quote_is_on_the_copy_it_cites(rule_id):
    for quote in _quotes(RULES[rule_id]):
        assert missing(quote) is None, f"{rule_id}: {quote.text!r}: {missing(quote)}"


@pytest.mark.parametrize("quote", sorted(set(QUOTED), key=lambda q: (q.source.copy, q.text)),
                         ids=lambda q: f"{q.source.copy.rsplit('/', 1)[-1]}:{q.text[:40]}")
def test_every_meaning_quote_is_on_the_copy_it_cites(quote):
    assert missing(quote) is None, f"{quote.text!r}: {missing(quote)}"


def test_meanings_quote_something():
    kinds = {q.source.kind for q in QUOTED}
    assert len(set(QUOTED)) > 60 and kinds == {SourceKind.PAGE, SourceKind.KIT}


def test_a_quote_of_an_earlier_copy_is_no_longer_on_the_current_page():
    # else it must cite the current page: "earlier version of the page" is printed only when true
    earlier = [q for r in RULES.values() for q in _quotes(r) if q.source.kind is SourceKind.EARLIER_PAGE]
    assert earlier
    for quote in earlier:
        assert normalise(quote.text) not in copy_text(current_copy(quote)), quote.text


def test_a_quote_of_the_current_page_names_its_docs_copy():
    for rule in RULES.values():
        for quote in _quotes(rule):
            if quote.source.kind is SourceKind.PAGE:
                assert quote.source.copy == current_copy(quote), rule.rule_id


# ---- the checker itself

def test_an_edited_quote_fails_the_check():
    rule = RULES["SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE"]
    assert missing(rule.quote) is None
    edited = Rule(rule.rule_id, Severity.ERROR, Quote(rule.source, rule.sentence.replace("must", "should")),
                  rule.summary)
    assert missing(edited.quote) == f"not verbatim in {SEGFLAGS.copy}"
    one_letter = Quote(SEGFLAGS, "This flag cannot be used in combination with the CpuVisibl flag.")
    assert missing(one_letter) is not None


def test_a_quote_is_checked_against_the_copy_it_names_not_any_copy():
    sentence = RULES["SEGFLAGS.PARTIAL_ON_APERTURE"].sentence  # on the earlier copy only
    assert missing(Quote(SEGFLAGS_2017, sentence)) is None
    assert missing(Quote(SEGFLAGS, sentence)) == f"not verbatim in {SEGFLAGS.copy}"
    assert missing(Quote(kit("DXGK_SEGMENTFLAGS.ApplicationTarget"), sentence)) is not None


def test_markup_and_whitespace_aside_the_words_must_match():
    # the page writes "**Value**", a line break, a link with "(v=vs.85)" in its address
    assert missing(Quote(SEGFLAGS, "Setting this member is equivalent to setting the first bit of the 32-bit Value "
                                   "member (0x00000001).")) is None
    assert missing(RULES["ALLOCINFO.HINTEDBANK_WITHOUT_BANKING"].quote) is None
    assert normalise('<b>A</b>  [**B**](x(y)) `C` | "D"') == 'A B C "D"'
    assert missing(Quote(SEGFLAGS, "")) == "the quote is empty"


def test_a_kit_quote_is_held_to_the_comment_on_its_member():
    assert missing(Quote(kit("DXGK_SEGMENTFLAGS.ApplicationTarget"),
                         "Deprecated, replaced by LocalBudgetGroup and NonLocalBudgetGroup")) is None
    assert missing(Quote(kit("DXGK_SEGMENTFLAGS.ApplicationTarget"), "Deprecated, replaced by Nothing")) is not None
    assert missing(Quote(kit("DXGK_SEGMENTFLAGS.Aperture"), "Deprecated")).startswith("definitions.md gives no")


# ---- issue 30: a quote only an earlier copy holds links today's page; the citation says which copy

def test_a_quote_only_the_earlier_copy_holds_cites_that_copy():
    earlier = {q.source for r in RULES.values() for q in _quotes(r) if q.source.kind is SourceKind.EARLIER_PAGE}
    assert earlier
    for source in earlier:
        assert source.released and source.released in (SHARED / source.copy).read_text(encoding="utf-8")
        assert source.citation == (f"{source.where} (earlier version of the page: the copy released "
                                   f"{source.released}, {source.copy})")
    for rule in RULES.values():
        if rule.source.kind is SourceKind.EARLIER_PAGE:
            assert rule.page == rule.reference.page == rule.source.citation  # what every output prints
            assert rule.source.citation in sem_rule_text(rule.rule_id)


def sem_rule_text(rule_id: str) -> str:
    from d3dkmddi_py.semantics import rule_text

    return rule_text(rule_id)
