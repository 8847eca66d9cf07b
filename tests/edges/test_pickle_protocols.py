"""Issue 14, pickling: arrays a user makes of the classes (``t.DXGK_SEGMENTFLAGS * 3``) and ETW events under
every protocol, 0 included (slots alone pickle only from protocol 2)."""
from __future__ import annotations

import copy
import pickle

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk, etw, semantics as sem
from d3dkmddi_py.samples import DIRECTORY

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_array_of_the_classes_pickles_byte_for_byte(protocol):
    t = kmd.target("x86", "WDDM2_0")
    array = (t.DXGK_ALLOCATIONINFO * 2).from_buffer_copy(bytes(range(120)))  # padding and reserved bits too
    again = pickle.loads(pickle.dumps(array, protocol=protocol))
    assert type(again) is type(array) and bytes(again) == bytes(array)
    assert again[1].Size == array[1].Size


def test_an_array_of_the_classes_copies():
    flags = (kmd.DXGK_SEGMENTFLAGS * 3)()
    flags[1].Value = 0x485
    assert bytes(copy.deepcopy(flags)) == bytes(copy.copy(flags)) == bytes(flags)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_etw_events_and_their_adapters_pickle(protocol):
    events = list(etw.read(DIRECTORY / "etw_trace.xml"))
    assert [pickle.loads(pickle.dumps(e, protocol=protocol)) for e in events] == events
    traces = etw.adapters(events, target=("x64", "WDDM2_7"))
    assert pickle.loads(pickle.dumps(traces, protocol=protocol)).keys() == traces.keys()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_value_classes_pickle_under_every_protocol(protocol):
    values = [sem.check(0x485, "DXGK_SEGMENTFLAGS")[0], kmd.leaves(kmd.DXGK_SEGMENTFLAGS)[0],
              sem.segment_set(3), sem.decode_bank_preference(0x183), sem.decode_priority(0x78000001),
              sem.SegmentFlag.Aperture, kmd.target("x86", "WDDM2_0"), kmd.DXGK_ALLOCATIONINFO]
    for value in values:
        assert pickle.loads(pickle.dumps(value, protocol=protocol)) == value
    columns = bulk.decode_array("DXGK_SEGMENTFLAGS", bytes.fromhex("85040000") * 2)
    assert list(pickle.loads(pickle.dumps(columns, protocol=protocol))["Value"]) == [0x485, 0x485]
