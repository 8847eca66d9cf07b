"""Bad input: one line naming the event number and the field, raised as EtwInputError (exit 2)."""
from __future__ import annotations

import json

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.cli import main
from d3dkmddi_py.errors import D3dkmddiError, EtwInputError

from .helpers import alloc_fields, run, seg_fields, trace, tracerpt_event

OTHER = ("Microsoft-Windows-Kernel-Process", "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}")
GOOD = tracerpt_event(78, seg_fields(1, 0x11), version=1)


def fail(tmp_path, data: bytes, name="t.xml") -> EtwInputError:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(EtwInputError) as info:
        run([str(p)])
    assert isinstance(info.value, D3dkmddiError)
    assert "\n" not in str(info.value)
    return info.value


def test_not_xml(tmp_path):
    e = fail(tmp_path, b"\x00\x01ETL binary\xff", "trace.etl")
    assert "is neither an .etl file nor XML" in str(e) and "log-file header" in str(e)


def test_empty_file(tmp_path):
    assert "is empty" in str(fail(tmp_path, b""))


def test_truncated_xml(tmp_path):
    data = trace(GOOD, tracerpt_event(33, alloc_fields()))
    e = fail(tmp_path, data[:len(data) // 2 + 100])
    assert "truncated" in str(e) and "in event #2" in str(e)
    e = fail(tmp_path, data[:-12])  # only </Events> is missing
    assert "truncated" in str(e)


def test_another_schema(tmp_path):
    e = fail(tmp_path, b"<rss><channel/></rss>")
    assert "root element is <rss>" in str(e)
    e = fail(tmp_path, b"<Events><Item/></Events>")
    assert "event #1 is an <Item> element" in str(e)


def test_a_missing_field_is_kept_and_reported_and_the_trace_read(tmp_path):
    """A field missing from one event refused the whole trace (exit 2); the event is now kept with the fields it
    has, its entry does not apply it, and it is reported (ETW.PAYLOAD_SHORTER, a warning: exit 1)."""
    f = alloc_fields()
    del f["hDxgGlobalAlloc"]
    p = tmp_path / "t.xml"
    p.write_bytes(trace(GOOD, tracerpt_event(33, f)))
    events = list(etw.read(p))
    assert [e.number for e in events] == [1, 2] and events[1].odd.missing == ("hDxgGlobalAlloc",)
    out, status = run([str(p), "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and lines[1]["missing"] == ["hDxgGlobalAlloc"]
    assert [f["rule_id"] for f in lines[1]["findings"]] == ["ETW.PAYLOAD_SHORTER"]
    assert lines[1]["findings"][0]["field"] == "hDxgGlobalAlloc"


def test_a_value_its_in_type_cannot_read_is_kept_unread_and_the_trace_read(tmp_path):
    """A value that is not a number of its in-type refused the whole trace (exit 2); the event is now kept with the
    field unread (as given), its entry does not apply it, and it is reported (ETW.FIELD_UNREADABLE: exit 1)."""
    for name, text in (("allocSize", "12kB"), ("Priority", "1_000"), ("ulAlignment", "0x100000000"),
                       ("Flags", "CpuVisible|Bogus"), ("BackingStoreWasPinned", "yes")):
        p = tmp_path / "t.xml"
        p.write_bytes(trace(GOOD, tracerpt_event(33, alloc_fields(**{name: text})), GOOD))
        events = list(etw.read(p))
        assert [e.number for e in events] == [1, 2, 3] and events[1].odd.unread == ((name, text),)
        assert name not in events[1].fields and not events[1].odd.whole
        out, status = run([str(p), "--json"])
        lines = [json.loads(line) for line in out.splitlines()]
        assert status == 1 and lines[1]["unread"] == {name: text}
        assert [f["rule_id"] for f in lines[1]["findings"]] == ["ETW.FIELD_UNREADABLE"]


def test_an_event_id_out_of_range_is_refused_naming_the_file_event_and_element(tmp_path):
    e = fail(tmp_path, trace(GOOD, tracerpt_event(33, alloc_fields()).replace("<EventID>33<", "<EventID>70000<")))
    assert str(e).startswith(f"{tmp_path / 't.xml'}: event #2: System/EventID = '70000' is out of range (valid "
                             f"0..65535") and e.event == 2 and e.field == "EventID"


def test_no_dxgkrnl_events_says_how_many_others(tmp_path):
    e = fail(tmp_path, trace(tracerpt_event(1, {"ProcessID": 4}, provider=OTHER),
                             tracerpt_event(2, {"ProcessID": 4}, provider=OTHER)))
    assert "no event of Microsoft-Windows-DxgKrnl: it has 2 events, 2 of other providers (2 " \
           "Microsoft-Windows-Kernel-Process)" in str(e)


def test_binary_event_data_is_kept_as_its_payload_and_reported(tmp_path):
    """tracerpt's <BinaryEventData> (it had no schema) refused the trace; the event is kept with its payload's
    bytes, undecoded, and reported (ETW.UNDECODED), the other events read."""
    ev = tracerpt_event(33, alloc_fields())
    start, end = ev.index("\t<EventData>"), ev.index("</EventData>") + len("</EventData>")
    p = tmp_path / "t.xml"
    p.write_bytes(trace(GOOD, ev[:start] + "\t<BinaryEventData>00FF</BinaryEventData>" + ev[end:]))
    out, status = run([str(p), "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and len(lines) == 2 and lines[1]["payload"] == "00ff" and lines[1]["fields"] == {}
    assert [f["rule_id"] for f in lines[1]["findings"]] == ["ETW.UNDECODED"]


def test_value_too_wide_for_the_abi(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(trace(tracerpt_event(33, alloc_fields(allocSize=1 << 33))))
    with pytest.raises(EtwInputError, match=r"t.xml: event #1 .*field allocSize = 0x200000000 does not fit "
                                            r"DXGK_ALLOCATIONINFO.Size \(4 bytes"):
        run([str(p), "--abi", "x86"])


# encodings Python knows but expat cannot take (multi-byte or stateful): one line, exit 2, never a traceback
EXPAT_LACKS = ["utf-32", "utf-32-le", "shift_jis", "utf-7", "euc-jp", "big5", "gb2312"]


@pytest.mark.parametrize("encoding", EXPAT_LACKS)
@pytest.mark.parametrize("fast", [True, False])
def test_xml_declaration_of_an_encoding_expat_lacks(encoding, fast):
    data = f'<?xml version="1.0" encoding="{encoding}"?>\n'.encode("ascii") + trace(GOOD)
    with pytest.raises(EtwInputError) as info:
        list(etw.read(data, fast=fast))
    assert "names an encoding expat cannot read" in str(info.value) and info.value.field == "encoding"


@pytest.mark.parametrize("encoding", ["utf-32", "shift_jis", "utf-7"])
def test_xml_declaration_of_an_encoding_expat_lacks_exits_2(tmp_path, capsys, encoding):
    p = tmp_path / "t.xml"
    p.write_bytes(f'<?xml version="1.0" encoding="{encoding}"?>\n'.encode("ascii") + trace(GOOD))
    assert main(["etw", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names an encoding expat cannot read" in err and "Traceback" not in err
