"""The JSON of a struct (jsonformat): the record form's keys, and the column form writing the same
bytes as the record form."""
from __future__ import annotations

import json

import numpy as np
import pytest

from d3dkmddi_py.jsonformat import column_lines, layout_json, line_head, record_json, record_tail, where_text
from d3dkmddi_py.semantics.explain import column_meanings, meanings_of
from tests.records import TARGETS, X64, flags, struct_columns


def test_record_json_keys_and_bytes():
    f = flags(0x485)
    obj = record_json(f, c_name="DXGK_SEGMENTFLAGS", tgt=X64, index=2, offset=8, address=None)
    assert list(obj) == ["type", "target", "index", "offset", "address", "size", "bytes", "fields", "names",
                         "meanings", "findings"]
    assert obj["bytes"] == "85040000" and obj["size"] == 4
    assert obj["target"] == {"abi": "x64", "interface_version": "WDDM3_2", "interface_version_value": 0x11007,
                             "label": "x64 WDDM3_2 (0x11007)"}
    assert obj["fields"]["DirectFlip"] == 1 and obj["names"]["Value"].startswith("Aperture|")


def test_layout_json_masks():
    obj = layout_json(X64.DXGK_SEGMENTBANKPREFERENCE, X64)
    masks = {leaf["path"]: leaf["mask"] for leaf in obj["leaves"]}
    # the DXGK_SEGMENTBANKPREFERENCE page's bit ranges: Bank1 bits 8-14, Direction3 bit 31
    assert masks["Bank1"] == 0x7F00 and masks["Direction3"] == 0x80000000


@pytest.mark.parametrize("tgt", TARGETS, ids=lambda t: t.label)
def test_column_lines_are_the_record_lines(tgt):
    """Every struct: the column form's lines are the record form's (line_head + where_text + record_tail),
    meanings included, at a memory address and without."""
    count = 40
    for layout, data, columns in struct_columns(tgt, count):
        name = layout.c_name
        meanings = column_meanings(layout, columns, np)
        address = None if len(name) % 2 else 0xFFFFF8012A3B0000
        lines = column_lines(np, layout, columns, meanings or {}, count, start=5, offset=16, address=address,
                             data=data, findings=[""] * count)
        for row, line in enumerate(lines):
            raw = data[row * layout.size:(row + 1) * layout.size]
            where = where_text(5 + row, 16 + row * layout.size, None if address is None else address + row * layout.size)
            tail = record_tail(layout, raw, layout.values(raw), meanings_of(layout, raw) if meanings is not None else {}, "")
            assert line == line_head(layout) + where + tail, (name, row)
            assert json.loads(line)["bytes"] == raw.hex()
