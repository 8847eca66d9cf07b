"""What every format says alike (render): numbers, a finding's plain values, and leaf values read
from bytes, checked against the ctypes classes' own reads for random blobs."""
from __future__ import annotations

import ctypes

from hypothesis import given, settings, strategies as st

from d3dkmddi_py._classes import _read
from d3dkmddi_py.dttext import render_text
from d3dkmddi_py.render import field_values, finding_json, format_number
from tests.records import TARGETS, finding


def test_number_formats():
    assert format_number(0x485, 4, "UINT") == "0x485 (1157)"
    assert format_number(0, 4, "UINT") == "0x0 (0)"
    assert format_number(-1, 4, "LONG") == "0xffffffff (-1)"
    assert format_number(0xFFFFF8012A3B4000, 8, "VOID*") == "0xfffff801`2a3b4000"
    assert format_number(0x8A3B4000, 4, "HANDLE") == "0x8a3b4000"


def test_finding_json_is_plain():
    j = finding_json(finding("Agp"))
    assert j == {"rule_id": "R.TEST", "severity": "error", "field": "Agp", "value": 1, "message": "Agp is wrong",
                 "reference": {"page": "page", "sentence": "The sentence."}}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(TARGETS), st.data())
def test_values_read_from_bytes_match_ctypes(tgt, data):
    names = sorted(n for n, c in tgt.types.items() if hasattr(c, "_leaves_") and not n.startswith("_"))
    cls = tgt.types[data.draw(st.sampled_from(names))]
    blob = data.draw(st.binary(min_size=ctypes.sizeof(cls), max_size=ctypes.sizeof(cls)))
    obj = cls.from_buffer_copy(blob)
    assert field_values(obj) == {leaf.path: _read(obj, leaf.path) for leaf in cls._leaves_}
    text = render_text(obj)
    assert len(text.splitlines()) >= len(cls._leaves_)
