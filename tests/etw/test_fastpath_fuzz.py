"""Seeded differential fuzz: generated tracerpt-like and Event-Viewer-like traces, with odd forms and
junk, read by the fast path and by expat alone (``fast=False``) give identical events or errors."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError

from .helpers import DXG, NS, alloc_fields, seg_fields, text_of

OTHER = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")
GUID_ONLY = ("", DXG[1].upper())
COUNTS = ("total", "decoded", "other_providers", "other_dxgkrnl", "providers")
EXAMPLES = 2000  # ~3.5 events a trace: ~7,000 events, each read twice, in ~15 s

# a value's spelling: (text, kept on the fast path)
VALUE_FORMS = st.sampled_from([
    ("plain", True), ("padded", True), ("amp", True), ("cdata", False), ("charref", False), ("comment", False),
    ("non-ascii", False), ("cr", False), ("bad number", True), ("empty", True), ("long digits", True)])
JUNK = st.sampled_from(["", "", "", "junk", "<!-- c -->", "<?pi x?>", "<Other/>", "&amp;", "<", "&bogus;",
                        "</Event>", "<Event>", "\x01", "]]>", "<![CDATA[x]]>", "\u00e9", "&#65;"])


def spell(value, form: str) -> str:
    text = text_of(value)
    return {"plain": text, "padded": "   " + text, "amp": text + " &amp; x", "cdata": f"<![CDATA[{text}]]>",
            "charref": "".join(f"&#{ord(c)};" for c in text[:2]) + text[2:], "comment": f"<!-- v -->{text}",
            "non-ascii": text + "\u00e9", "cr": text + "\r\n", "bad number": "0xZZ", "empty": "",
            "long digits": "9" * 45}[form]


@st.composite
def event(draw):
    """One <Event> in tracerpt's (indented, double quotes) or Event Viewer's (one line) form."""
    event_id = draw(st.sampled_from([33, 34, 35, 78, 78, 1, 77]))
    provider = draw(st.sampled_from([DXG, DXG, DXG, GUID_ONLY, OTHER]))
    fields = seg_fields(draw(st.integers(0, 5)), draw(st.integers(0, 0xFFF))) if event_id == 78 else \
        alloc_fields(allocSize=draw(st.integers(0, 1 << 40)), Flags=draw(st.integers(0, 0xFFFFFFFF)))
    names = list(fields)
    odd = draw(st.lists(st.tuples(st.sampled_from(names), VALUE_FORMS), max_size=2))
    kept = True
    for name, (form, fast) in odd:
        fields[name] = spell(fields[name], form)
        kept = kept and fast
    viewer = draw(st.booleans())
    q = "'" if viewer or draw(st.booleans()) else '"'
    eol = "" if viewer else draw(st.sampled_from(["\r\n", "\n", "\r\n", " "]))
    ind = "" if viewer else draw(st.sampled_from(["\t", "  ", ""]))
    eq = draw(st.sampled_from(["=", "=", "=", " = "]))
    kept = kept and eq == "="
    name, guid = provider
    prov = (f"<Provider Name={q}{name}{q} Guid={q}{guid}{q} />" if name else f"<Provider Guid={q}{guid}{q}/>")
    ns = draw(st.sampled_from([f" xmlns={q}{NS}{q}", f" xmlns={q}{NS}{q}", "", " xmlns='urn:other'"]))
    kept = kept and "urn:other" not in ns
    data = "".join(f"{ind}{ind}<Data Name{eq}{q}{n}{q}>{v}</Data>{eol}" for n, v in fields.items())
    system = (f"{ind}<System>{eol}{ind}{ind}{prov}{eol}{ind}{ind}<EventID>{event_id}</EventID>{eol}"
              f"{ind}{ind}<Version>{draw(st.sampled_from([0, 1, 2, 3, 'x']))}</Version>{eol}"
              f"{ind}{ind}<TimeCreated SystemTime={q}2026-11-23T10:00:00.0000001Z{q}/>{eol}"
              f"{ind}{ind}<Execution ProcessID={q}4{q} ThreadID={q}8{q}/>{eol}{ind}</System>{eol}")
    tail = draw(st.sampled_from(["", "", f"{ind}<RenderingInfo Culture={q}en-US{q}><Level>x</Level>"
                                 f"</RenderingInfo>{eol}", "<BinaryEventData>00</BinaryEventData>"]))
    kept = kept and "Binary" not in tail
    return f"<Event{ns}>{eol}{system}{ind}<EventData>{eol}{data}{ind}</EventData>{eol}{tail}</Event>{eol}", kept


@st.composite
def traces(draw):
    """(document, whether every block is in the fast path's grammar and nothing else is odd)."""
    events = draw(st.lists(event(), min_size=1, max_size=6))
    prolog = draw(st.sampled_from(["", "", "\ufeff", '<?xml version="1.0" encoding="UTF-8"?>\r\n',
                                   "<?xml version='1.0'?>\n", '<?xml version="1.0" encoding="ISO-8859-1"?>']))
    root = draw(st.sampled_from(["<Events>", "<Events>", f'<Events xmlns="{NS}">', "<Events >"]))
    between = [draw(JUNK) if draw(st.integers(0, 4)) == 0 else draw(st.sampled_from(["", "\r\n", " "]))
               for _ in events]
    doc = (prolog + root + "\r\n" + "".join(b + e for b, (e, _k) in zip(between, events)) + "</Events>\r\n")
    plain = all(k for _e, k in events) and not any(b.strip() for b in between) and "ISO" not in prolog
    data = bytearray(doc.encode("utf-8"))
    for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 2)) == 0 else 0):  # junk inside a block
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(JUNK).encode("utf-8")
        plain = False
    if draw(st.integers(0, 9)) == 0:  # truncated anywhere
        del data[draw(st.integers(0, len(data))):]
        plain = False
    return bytes(data), plain


def outcome(data: bytes, fast: bool, chunk_size: int):
    r = etw.TraceReader(data, fast=fast, chunk_size=chunk_size)
    try:
        return (list(r), tuple(getattr(r, n) for n in COUNTS)), r
    except EtwInputError as exc:
        return ("error", str(exc), exc.event, exc.field), r
    # any other exception fails the test: the reader raises only EtwInputError


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(traces(), st.sampled_from([1 << 18, 1 << 18, 1000, 97]))
def test_generated_traces_read_the_same_fast_and_through_expat(doc, chunk_size):
    data, plain = doc
    fast, rf = outcome(data, True, chunk_size)
    slow, rs = outcome(data, False, chunk_size)
    assert fast == slow
    assert rs.blocks_fast == 0
    if plain and fast[0] != "error" and b'encoding="ISO' not in data:
        # the regular forms are read by the grammar, so the comparison above tests the fast path
        assert rf.blocks_expat == 0 and rf.blocks_fast == fast[1][0]
