"""Every sentence _spec.POINTS_TO quotes is on the page it names: checked against the page copies in
../shared/docs (MicrosoftDocs windows-driver-docs-ddi, 2024-03-27), markup left out, whitespace collapsed.

Entries whose page has no copy there are listed below with where their words were read:
DXGKARG_CREATEALLOCATION's from MicrosoftDocs/windows-driver-docs-ddi
wdk-ddi-src/content/d3dkmddi/ns-d3dkmddi-_dxgkarg_createallocation.md (the -field sections of
NumAllocations, pAllocationInfo and PrivateDriverDataSize), DXGK_QUERYSEGMENTOUT2's from the comments of the
WDK 10.0.26100 d3dkmddi.h (no page: "reserved for system use"), and DXGK_QUERYSEGMENTOUT5 quotes nothing
(no page covers it; its count is unknown)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from d3dkmddi_py import _spec
from tests.conftest import require

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "docs"
NO_COPY = {
    ("DXGKARG_CREATEALLOCATION", "pAllocationInfo"): "MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md",
    ("DXGKARG_CREATEALLOCATION", "pPrivateDriverData"): "MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md",
    ("DXGK_QUERYSEGMENTOUT2", "pSegmentDescriptor"): _spec.d3dkmddi.KIT,
    ("DXGK_QUERYSEGMENTOUT5", "SegmentDescriptors"): None,
}


def page_text(markdown: str) -> str:
    """A page as a reader reads it: links and HTML tags by their text, **emphasis** without its stars."""
    text = re.sub(r"<a\s[^>]*>(.*?)</a>", r"\1", markdown, flags=re.S)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"</?(?:b|i|em|strong)>", "", text)
    text = re.sub(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    return re.sub(r"\s+", " ", text)


def _copy(page: str | None):
    if page is None or not page.startswith("https://"):
        return None
    path = DOCS / (page.rsplit("/", 1)[-1] + ".md")
    return path if path.exists() else None


def test_page_text_drops_markup_only():
    assert page_text("of the <b>NbSegment</b> [**DXGK_X**](a.md) a <b>BYTE*</b> ***NbOfBanks***th\n bank") == \
        "of the NbSegment DXGK_X a BYTE* NbOfBanksth bank"


@pytest.mark.parametrize("key", sorted(_spec.POINTS_TO), ids=lambda k: ".".join(k))
def test_every_quote_is_on_its_page(key):
    entry = _spec.POINTS_TO[key]
    copy = _copy(entry.page)
    if key in NO_COPY:
        assert copy is None and (entry.page is None) == (NO_COPY[key] is None)
        assert bool(entry.quotes) == (NO_COPY[key] is not None)
        return
    require(DOCS.is_dir(), f"the page copies are not at {DOCS} (../shared/docs beside the repository)")
    assert copy is not None, f"{key}: no copy of {entry.page} in {DOCS}; list it in NO_COPY with its source"
    text = page_text(copy.read_text(encoding="utf-8"))
    assert entry.quotes
    for quote in entry.quotes:
        assert quote in text, f"{key}: not on {copy.name}: {quote!r}"


def test_the_createallocation_quotes_as_read_from_its_page():
    """Typed from MicrosoftDocs ns-d3dkmddi-_dxgkarg_createallocation.md, which ../shared has no copy of."""
    entry = _spec.POINTS_TO[("DXGKARG_CREATEALLOCATION", "pAllocationInfo")]
    assert entry.quotes == (
        "The number of elements in the array that pAllocationInfo specifies, which represents the number of "
        "allocations to create.",
        "An array of DXGK_ALLOCATIONINFO structures that describe the allocations to create.")
    assert entry.page == "https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/d3dkmddi/" \
                         "ns-d3dkmddi-_dxgkarg_createallocation"
    data = _spec.POINTS_TO[("DXGKARG_CREATEALLOCATION", "pPrivateDriverData")]
    assert data.quotes == ("The size, in bytes, of the private data that pPrivateDriverData points to.",)
