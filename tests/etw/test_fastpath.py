"""The fast block reader against the expat reader (``fast=False``): the same events, counts and errors."""
from __future__ import annotations

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError
from d3dkmddi_py.etw.readers import xmlfast
from d3dkmddi_py.samples import DIRECTORY, etw_build

from .helpers import NS, alloc_fields, seg_fields, trace, tracerpt_event, viewer_event

OTHER = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")
COUNTS = ("total", "decoded", "other_providers", "other_dxgkrnl", "providers")


def outcome(data: bytes, fast: bool, chunk_size: int = 1 << 18):
    """(events, counts, reader) or (error text, event, field) of one read."""
    r = etw.TraceReader(data, fast=fast, chunk_size=chunk_size)
    try:
        events = list(r)
    except EtwInputError as exc:
        return ("error", str(exc), exc.event, exc.field), r
    return (events, tuple(getattr(r, n) for n in COUNTS)), r


def odd(event: str, old: str, new: str) -> str:
    assert old in event
    return event.replace(old, new, 1)


def same(data: bytes, chunk_size: int = 1 << 18):
    fast, rf = outcome(data, True, chunk_size)
    slow, rs = outcome(data, False, chunk_size)
    assert fast == slow
    assert rs.blocks_fast == 0
    return fast, rf


RENDERING = ("\t<RenderingInfo Culture=\"en-US\">\r\n\t\t<Level>Log Always </Level>\r\n\t\t<Keywords>\r\n"
             "\t\t\t<Keyword>Resource </Keyword>\r\n\t\t</Keywords>\r\n\t\t<Message></Message>\r\n\t</RenderingInfo>\r\n")
ALLOC = odd(tracerpt_event(33, alloc_fields(hDxgGlobalAlloc="0xFFFFB80C4E600000", ulAlignment="   65536"), opcode=1),
            "</Event>", RENDERING + "</Event>")
SEG = tracerpt_event(78, seg_fields(1, 0x11), version=1)
NOISE = tracerpt_event(1, {"ProcessID": 4, "ImageName": "a.exe"}, provider=OTHER)
ODD = {
    "lf only": ALLOC.replace("\r\n", "\n"),
    "tabs and spaces": ALLOC.replace("\t", " \t "),
    "single quotes": ALLOC.replace('"', "'"),
    "event viewer line": viewer_event(35, alloc_fields(hDxgGlobalAlloc="0xffffb80c4e600001")),
    "amp in a value": tracerpt_event(33, alloc_fields(Extra="a &amp; b &lt;c&gt;")),
    "amp in a flag name": tracerpt_event(33, alloc_fields(Flags="CpuVisible|Cached")).replace("|", "&#124;"),
    "cdata value": odd(ALLOC, ">   65536<", "><![CDATA[   65536]]><"),
    "cdata with </Event>": odd(ALLOC, '<Data Name="Width">0', '<Data Name="Width"><![CDATA[</Event>]]>0'),
    "comment in EventData": odd(ALLOC, "\t\t<Data Name=\"Width\">", "\t\t<!-- width --><Data Name=\"Width\">"),
    "comment with </Event>": odd(ALLOC, "\t</EventData>", "\t<!-- </Event> -->\t</EventData>"),
    "processing instruction": odd(ALLOC, "<EventData>", "<EventData><?pi x?>"),
    "char reference": odd(ALLOC, ">   65536<", ">&#54;5536<"),
    "cr in a value": odd(tracerpt_event(33, alloc_fields(Extra="a\rb")), "a\rb", "a\r\nb\rc"),
    "space before =": odd(ALLOC, 'Name="Width"', 'Name = "Width"'),
    "end tag with space": odd(ALLOC, "</Data>", "</Data >"),
    "self-closing data": odd(tracerpt_event(33, alloc_fields(Extra="x")), ">x</Data>", "/>"),
    "empty data": odd(ALLOC, '"Width">0</Data>', '"Width"></Data>'),
    "duplicate data": odd(ALLOC, "</EventData>", '<Data Name="Width">7</Data></EventData>'),
    "no namespace": ALLOC.replace(f' xmlns="{NS}"', ""),
    "other namespace": ALLOC.replace(NS, "urn:other"),
    "non-ascii": odd(ALLOC, "<Task>21</Task>", "<Task>21</Task><Computer>caf\u00e9</Computer>"),
    "second System": odd(ALLOC, "</Event>", "<System><Provider Name='X'/></System></Event>"),
    "two EventData": odd(ALLOC, "</Event>", "<EventData><Data Name='allocSize'>1</Data></EventData></Event>"),
    "binary data too": odd(ALLOC, "</Event>", "<BinaryEventData>00</BinaryEventData></Event>"),
    "attribute with >": odd(ALLOC, 'ProcessID="4"', 'Note="a>b" ProcessID="4"'),
    "two Providers": odd(ALLOC, "<EventID>", "<Provider Name='Other' />\r\n\t\t<EventID>"),
    "two Providers, DxgKrnl last": odd(NOISE, "<EventID>", '<Provider Guid="{802EC45A-1E99-4B83-9920-87C98277BA9D}"/>'
                                                           "<EventID>").replace(">1</EventID>", ">33</EventID>"),
    "raw time": odd(ALLOC, "SystemTime=", "RawTime="),
    "version 3": tracerpt_event(33, alloc_fields(PageTableOrDirectory="true"), version=3),
    "stop by name": tracerpt_event(34, alloc_fields(Format="D3DDDIFMT_A8R8G8B8")),
    "text between events": "junk",
    "comment between events": "<!-- a comment -->",
}


def test_bundled_sample_gives_the_same_events_both_ways():
    data = (DIRECTORY / etw_build.FILE).read_bytes()
    (events, counts), r = same(data)
    assert len(events) == r.decoded == 82 and r.blocks_fast == counts[0] and r.blocks_expat == 0


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_forms_give_the_same_events_or_error(name):
    data = trace(SEG, NOISE, ODD[name], ALLOC, NOISE)
    result, r = same(data)
    assert r.blocks_fast >= 1  # the regular events before and after stay on the fast path
    for size in (1, 7, 64, 333):
        assert outcome(data, True, size)[0] == result


def test_regular_forms_stay_on_the_fast_path():
    for name in ("lf only", "tabs and spaces", "single quotes", "event viewer line", "amp in a value",
                 "empty data", "no namespace", "version 3", "stop by name", "duplicate data"):
        _result, r = same(trace(ODD[name]))
        assert r.blocks_expat == 0 and r.blocks_fast == 1, name


def test_blocks_outside_the_grammar_go_to_expat():
    for name in ("cdata value", "comment in EventData", "char reference", "cr in a value", "non-ascii",
                 "second System", "amp in a flag name", "space before =", "self-closing data"):
        _result, r = same(trace(SEG, ODD[name], NOISE))
        assert r.blocks_expat >= 1, name


def test_one_line_event_viewer_document():
    data = ("<Events>" + "".join(viewer_event(33, alloc_fields(hDxgGlobalAlloc=i + 1)) for i in range(30))
            + viewer_event(1, {"ProcessID": 4}, provider=OTHER) + "</Events>").encode()
    (events, counts), r = same(data)
    assert len(events) == 30 and counts[2] == 1 and r.blocks_fast == 31


def test_every_truncation_gives_the_same_error():
    data = trace(SEG, ODD["comment in EventData"], NOISE, ALLOC)
    for cut in range(0, len(data), 37):
        assert same(data[:cut])[0][0] == "error"


def test_errors_at_every_place_give_the_same_message_line_and_column():
    data = trace(SEG, NOISE, ALLOC, ODD["event viewer line"], ALLOC).decode()
    checked = 0
    for at in range(len("<Events>") + 2, len(data) - 12, 53):
        for junk in ("<", "&bogus;", "\x01", "</x>"):
            bad = (data[:at] + junk + data[at:]).encode()
            result, _r = same(bad)
            checked += result[0] == "error"
    assert checked > 100


def test_header_errors_name_the_same_event_and_element():
    bad = tracerpt_event(33, alloc_fields()).replace("<Version>2<", "<Version>x<")
    (kind, message, event, field), _r = same(trace(SEG, NOISE, bad))
    assert (kind, event, field) == ("error", 3, "Version") and "System/Version = 'x' is not a number" in message


def test_a_field_its_in_type_cannot_read_is_unread_the_same_way_on_both_paths():
    (events, _counts), _r = same(trace(SEG, NOISE, tracerpt_event(33, alloc_fields(allocSize="12kB"))))
    assert events[-1].odd.unread == (("allocSize", "12kB"),) and "allocSize" not in events[-1].fields


def test_an_empty_field_is_missing_the_same_way_on_both_paths():
    """An empty value was refused; the event is now kept with the field named missing, by either path alike."""
    (events, _counts), _r = same(trace(SEG, NOISE, tracerpt_event(33, alloc_fields(allocSize=""))))
    assert events[-1].odd.missing == ("allocSize",) and "allocSize" not in events[-1].fields


def test_fast_path_refuses_a_doctype_like_the_expat_path():
    data = b'<?xml version="1.0"?><!DOCTYPE Events [<!ENTITY x "y">]><Events>&x;</Events>'
    with pytest.raises(EtwInputError, match="refusing a <!DOCTYPE"):
        list(etw.read(data))
    data = ("<Events>" + ALLOC + "<!DOCTYPE x></Events>").encode()
    assert "not well-formed" in same(data)[0][1]


@pytest.mark.parametrize("name", sorted(ODD))
def test_repeated_blocks_read_through_a_learnt_shape_give_the_same_events(name):
    """The second and later blocks of a layout are matched by the shape learnt from the first."""
    variant = ODD[name].replace("0xFFFFB80C4E600000", "0x2a").replace("0xffffb80c4e600001", "0x2b")
    variant = variant.replace("4294901761", " 17").replace("a &amp; b", "c &gt; d").replace('"4"', '"5"')
    data = trace(SEG, NOISE, ODD[name], ALLOC, variant, NOISE, ODD[name], ALLOC, SEG)
    same(data)


def test_a_shape_only_takes_blocks_of_its_exact_markup():
    blocks = xmlfast._Blocks("")
    first = ALLOC.strip().encode()
    assert blocks.read(first) is not None and len(blocks.shapes) == 1
    (shapes,) = blocks.shapes.values()
    text = first.decode()
    assert shapes[0].regex.fullmatch(text.replace(">   65536<", ">7<"))
    for other in (text.replace(">   65536<", "><![CDATA[7]]><"), text.replace(">   65536<", ">&#55;<"),
                  text.replace(">   65536<", ">7\r<"), text.replace('Name="Width"', 'Name="Wide"'),
                  text.replace("\t<EventData>", "\t<EventData >"), text.replace('ThreadID="8"', "ThreadID='8'")):
        assert shapes[0].regex.fullmatch(other) is None


@pytest.mark.parametrize("prolog", [b"\xef\xbb\xbf", b'<?xml version="1.0" encoding="UTF-8"?>\r\n',
                                    b'\xef\xbb\xbf<?xml version="1.0"?><!-- tracerpt -->\n',
                                    b'<?xml version="1.0" encoding="ISO-8859-1"?>'])
def test_prologs(prolog):
    body = trace(SEG, NOISE, ALLOC, ODD["non-ascii"].replace("\u00e9", "e"), ALLOC)
    result, r = same(prolog + body)
    assert len(result[0]) == 4
    latin = b"ISO" in prolog
    assert (r.blocks_fast == 0) == latin  # a declared encoding other than UTF-8: expat reads it all
    bad, _r = same(prolog + body.replace(b"<Task>21</Task>", b"<Task>21</Tsk>", 2))
    assert bad[0] == "error" and "mismatched tag" in bad[1]


def test_a_block_longer_than_the_limit_leaves_the_rest_to_expat(monkeypatch):
    """A block not complete within BLOCK_LIMIT bytes is not buffered further: expat streams the rest."""
    data = trace(SEG, NOISE, ALLOC, NOISE, ALLOC)
    monkeypatch.setattr(xmlfast, "BLOCK_LIMIT", 300)
    result, r = same(data, 64)
    assert len(result[0]) == 3 and (r.blocks_fast, r.blocks_expat) == (0, 5)


def test_random_mutations_give_the_same_outcome_both_ways():
    """Seeded edits anywhere (deletions, markup characters, entities, line breaks, copies of a stretch):
    the fast path and expat agree on events, counts and the error message, event and field."""
    import random

    rng = random.Random(10)
    base = trace(SEG, NOISE, ALLOC, ODD["event viewer line"], ALLOC, ODD["amp in a value"], ALLOC, NOISE)
    pieces = [b"<", b">", b"&", b"&amp;", b"&#65;", b'"', b"'", b"\r", b"\n", b"\t", b" ", b"]]>", b"/",
              b"<!-- c -->", b"<![CDATA[x]]>", b"<Event>", b"</Event>", b"\xc3\xa9", b"\x00", b"="]
    for _ in range(400):
        data = bytearray(base)
        for _edit in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.3:
                del data[at:at + rng.randint(1, 4)]
            elif kind < 0.8:
                data[at:at] = rng.choice(pieces)
            else:
                span = rng.randint(1, 200)
                data[at:at] = data[max(0, at - span):at]
        same(bytes(data), rng.choice([64, 1000, 1 << 18]))


def test_chunk_boundaries_between_cr_and_lf_keep_the_line_numbers():
    data = trace(SEG, NOISE, ALLOC).replace(b"</Events>", b"<oops></Events>")
    for size in range(1, 70):
        result, _r = same(data, size)
        assert result[0] == "error" and "line 88, column 8" in result[1], (size, result)


def test_a_root_namespace_that_is_not_ascii_goes_to_expat():
    data = trace(ODD["no namespace"], ALLOC).replace(b"<Events>", "<Events xmlns='urn:caf\u00e9'>".encode())
    result, r = same(data)
    assert result[0] == "error" and "is an <Event> element" in result[1] and r.blocks_fast == 0


@pytest.mark.parametrize("old, new", [
    (">   65536<", ">\x01<"), (">   65536<", ">6\x0b5<"), (">   65536<", ">\x1f65536<"),  # captured text
    (">   65536<", ">6\t5<"), (">   65536<", ">6\n5<"), (">   65536<", ">6\r\n5<"), (">   65536<", ">6\r5<"),
    ("Log Always <", "Log\x02Always<"), ("Log Always <", "Log\tAlways\r\n<"),  # skipped text
    ('ProcessID="4"', 'ProcessID="\x014"'), ('ProcessID="4"', 'ProcessID="<4"'),  # captured attribute
    ('ProcessID="4"', 'ProcessID="4\t"'), ('Culture="en-US"', 'Culture="en<US"'),  # skipped attribute
    ('Culture="en-US"', 'Culture="en\nUS"')])
def test_the_plain_expression_takes_a_block_only_when_the_strict_one_would(old, new):
    """A learnt shape's plain expression lets any text through its slots; what it lets through that
    the grammar refuses (control characters, "<", line breaks to normalise) must reach the strict
    expression or expat, with the same events, errors, lines and columns."""
    blocks = xmlfast._Blocks("")
    later = odd(ALLOC, old, new).strip()
    blocks.read(ALLOC.strip().encode())
    blocks.read(later.encode("latin-1"))
    assert blocks.breaks is None  # not a plain match
    data = trace(SEG, ALLOC, ALLOC, odd(ALLOC, old, new), ALLOC).replace(b"</Events>", b"<oops></Events>")
    result, r = same(data)
    assert result[0] == "error" and r.blocks_fast >= 3  # a field's error, or <oops> at its line and column


def test_line_numbers_after_many_plain_matches():
    """Line breaks are counted from each shape, not from the bytes; an error after thousands of plain
    matches names the line and column expat names."""
    data = trace(SEG, *[ALLOC] * 2000, NOISE).replace(b"</Events>", b"\n  <oops></Events>")
    result, r = same(data, 4096)
    assert result[0] == "error" and r.blocks_fast == 2002
    line = data[:data.index(b"<oops>")].count(b"\n") + 1
    assert f"line {line}, column 10" in result[1]  # at the mismatched </Events>


# cases the differential fuzz (test_fastpath_fuzz.py) found: positions the fast path counted otherwise than expat
def test_a_byte_order_mark_is_one_column_like_expat():
    same(b"\xef\xbb\xbf<Events>")


def test_a_carriage_return_at_the_very_end_is_no_line_break_like_expat():
    same(b"\xef\xbb\xbf<Events>\r")
    same(trace(SEG)[:-2] + b"<\r")


def test_a_non_ascii_block_counts_columns_in_characters_like_expat():
    block = ODD["non-ascii"].replace("\r\n", " ")
    result, r = same(trace(block + " <" + ALLOC))
    assert result[0] == "error" and "column" in result[1] and r.blocks_expat == 1
