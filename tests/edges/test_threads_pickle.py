"""Threads and processes (issue 9): one Target per (abi, version) whatever the threads, and every
object (instances, classes, enums, Columns, Adapter, findings, errors) through copy, pickle and
process pools, back as the same class of the same cached target with the same bytes."""
from __future__ import annotations

import copy
import ctypes
import importlib
import multiprocessing
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics
from d3dkmddi_py.errors import InvalidFieldValue

target_module = importlib.import_module("d3dkmddi_py.target")

PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)
WAYS = [f"pickle{p}" for p in PROTOCOLS] + ["copy", "deepcopy"]


def through(way: str, value):
    if way == "copy":
        return copy.copy(value)
    if way == "deepcopy":
        return copy.deepcopy(value)
    return pickle.loads(pickle.dumps(value, protocol=int(way[len("pickle"):])))


def pattern(size: int, seed: int = 7) -> bytes:
    """Bytes with every bit position used, reserved bits and padding included."""
    return bytes((seed * 37 + i * 101) % 251 + 3 for i in range(size))


# ---- threads

def test_sixteen_threads_on_a_cold_cache_share_one_target(monkeypatch):
    keys = [("x86", kmd.InterfaceVersion.WDDM2_0), ("arm64", kmd.InterfaceVersion.WDDM1_3)]
    saved = {k: target_module._TARGETS.pop(k) for k in keys if k in target_module._TARGETS}
    real_target = target_module.Target

    class Nested(real_target):
        """Building x86 WDDM2_0 asks for arm64 WDDM1_3 meanwhile: a build touching another target."""

        def __init__(self, abi, version, force_padding=False):
            if (abi, version) == keys[0]:
                target_module.target(*keys[1])
            super().__init__(abi, version, force_padding)

    monkeypatch.setattr(target_module, "Target", Nested)
    barrier, results, errors = threading.Barrier(16), [None] * 16, []

    def work(i):
        try:
            barrier.wait()
            t = kmd.target(*keys[i % 2])
            info, flags = t.DXGK_ALLOCATIONINFO(), t.DXGK_ALLOCATIONINFOFLAGS(Value=4 + i)
            results[i] = (t, info, flags, kmd.target(*keys[(i + 1) % 2]))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        assert not errors and all(r is not None for r in results)
        for key in keys:
            built = {id(r[0]) for i, r in enumerate(results) if keys[i % 2] == key}
            built |= {id(r[3]) for i, r in enumerate(results) if keys[(i + 1) % 2] == key}
            assert len(built) == 1, f"{len(built)} Target objects for {key}"
            assert target_module.target(*key) is target_module._TARGETS[key]
        x86 = [r for i, r in enumerate(results) if i % 2 == 0]
        for _t, info, _flags, _other in x86:
            for _t2, _info2, flags, _other2 in x86:  # a flags word made in any thread fits any thread's info
                info.Flags = flags
                assert info.Flags.Value == flags.Value
    finally:
        for key in keys:
            target_module._TARGETS.pop(key, None)
        target_module._TARGETS.update(saved)


# ---- instances, nested members, classes

def _classes_and_members(t):
    """(path, class) of every typedef class of a target and of every record or array inside it."""
    seen, out = set(), []

    def walk(cls, path):
        if id(cls) in seen:
            return
        seen.add(id(cls))
        out.append((path, cls))
        for name, ftype, *_ in getattr(cls, "_fields_", ()):
            if "_path_" in vars(ftype):
                walk(ftype, f"{path}.{name}")

    for name, cls in sorted(t.types.items()):
        if hasattr(cls, "_fields_") and name == cls._c_name_:
            walk(cls, name)
    return out


TARGETS = [("x86", "WDDM2_0"), ("x64", "WDDM3_2"), ("arm64", "VISTA")]


@pytest.mark.parametrize("abi,version", TARGETS)
def test_every_class_and_instance_comes_back_as_itself(abi, version):
    t = kmd.target(abi, version)
    members = _classes_and_members(t)
    assert any("._u" in p or "._s" in p for p, _ in members)
    assert any("Array" in c.__name__ for _, c in members) == ("DXGK_QUERYSEGMENTOUT5" in t.types)
    for way in WAYS:
        for path, cls in members:
            assert through(way, cls) is cls, (way, path)
            value = cls.from_buffer_copy(pattern(ctypes.sizeof(cls)))
            back = through(way, value)
            assert type(back) is cls and bytes(back) == bytes(value), (way, path)
            assert back is not value


def test_an_instance_reduces_to_target_name_and_bytes():
    t = kmd.target("x86", "WDDM2_0")
    raw = pattern(ctypes.sizeof(t.DXGK_ALLOCATIONINFO))
    info = t.DXGK_ALLOCATIONINFO.from_buffer_copy(raw)
    function, args = info.__reduce__()
    assert args == ("x86", 0x5023, "DXGK_ALLOCATIONINFO", raw)
    assert function(*args).__class__ is t.DXGK_ALLOCATIONINFO
    # a member read from a record is its own class of the same target, and travels alone
    flags = pickle.loads(pickle.dumps(info.Flags))
    assert type(flags) is t.DXGK_ALLOCATIONINFOFLAGS and bytes(flags) == bytes(info.Flags)
    inner = pickle.loads(pickle.dumps(info._u0))
    assert type(inner) is type(info._u0) and type(inner)._path_ == "DXGK_ALLOCATIONINFO._u0"
    info.Flags = flags  # the unpickled member is accepted where the original was
    out = kmd.target("x64").DXGK_QUERYSEGMENTOUT5()
    out.Reserved = [1, 2, 3, 0xFFFFFFFF]
    reserved = pickle.loads(pickle.dumps(out.Reserved))
    assert type(reserved) is type(out.Reserved) and list(reserved) == [1, 2, 3, 0xFFFFFFFF]
    with pytest.raises(InvalidFieldValue):
        reserved[0] = 1 << 32  # still the checked array


def test_enums_pickle_and_copy_as_themselves():
    enums = [*kmd.ENUM_CLASSES.values(), kmd.InterfaceVersion, semantics.SegmentFlag, semantics.PowerBehaviour,
             semantics.BankDirection, semantics.SegmentDirection, semantics.PriorityBand, semantics.Severity]
    for way in WAYS:
        for enum_class in enums:
            assert through(way, enum_class) is enum_class, (way, enum_class)
            for member in enum_class:
                assert through(way, member) is member, (way, member)
    combined = semantics.SegmentFlag.Aperture | semantics.SegmentFlag.CpuVisible
    assert pickle.loads(pickle.dumps(combined)) == combined


def test_columns_adapter_findings_and_errors_pickle_and_copy():
    np = pytest.importorskip("numpy")
    from d3dkmddi_py.bulk import decode_array

    t = kmd.target("x86", "WDDM2_0")
    cls = t.DXGK_ALLOCATIONINFO
    size = ctypes.sizeof(cls)
    columns = decode_array(cls, pattern(size * 3))
    adapter = semantics.Adapter.build(semantics.SegmentFlag.CpuVisible, {"Flags": semantics.SegmentFlag.Aperture},
                                      abi="x86", interface_version="WDDM2_0")
    info = cls.from_buffer_copy(pattern(size, 3))
    found = semantics.check(info, adapter=adapter)
    assert found
    try:
        info.Size = -1
    except InvalidFieldValue as e:
        error = e
    for way in WAYS:
        back = through(way, columns)
        assert back.cls is cls and list(back) == list(columns) and back.start == columns.start
        assert all(np.array_equal(back[k], columns[k]) for k in columns)
        assert through(way, adapter) == adapter
        assert [type(d) for d in through(way, adapter).segments] == [type(d) for d in adapter.segments]
        assert through(way, found) == found
        again = through(way, error)
        assert type(again) is InvalidFieldValue and str(again) == str(error) and again.field == "Size"


# ---- process pools

def _in_child(info, adapter, columns):
    """Runs in a worker: change the record, check it, hand back everything."""
    info.Size = 0x4000
    return info, type(info), semantics.check(info, adapter=adapter), adapter, columns, columns.cls


def _fails_in_child(info):
    info.Size = -5


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_process_pool_round_trip(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method on this platform")
    pytest.importorskip("numpy")
    from d3dkmddi_py.bulk import decode_array

    t = kmd.target("arm64", "WDDM2_7")
    cls = t.DXGK_ALLOCATIONINFO
    size = ctypes.sizeof(cls)
    info = cls.from_buffer_copy(pattern(size, 5))
    adapter = semantics.Adapter.build(0x1, 0x2, abi="arm64", interface_version="WDDM2_7")
    columns = decode_array(cls, pattern(size * 2, 9))
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method)) as pool:
        back, back_cls, found, adapter2, columns2, columns_cls = pool.submit(_in_child, info, adapter, columns).result()
        with pytest.raises(InvalidFieldValue, match=r"DXGK_ALLOCATIONINFO\.Size = -5 is negative"):
            pool.submit(_fails_in_child, info).result()
    assert type(back) is cls and back_cls is cls and columns_cls is cls
    expected = cls.from_buffer_copy(info)
    expected.Size = 0x4000
    assert bytes(back) == bytes(expected)
    assert found == semantics.check(expected, adapter=adapter)
    assert adapter2 == adapter and columns2.cls is cls and columns2["Size"].tolist() == columns["Size"].tolist()


def test_a_member_of_another_target_is_refused_naming_both():
    info = kmd.target("x86", "WDDM2_0").DXGK_ALLOCATIONINFO()
    with pytest.raises(InvalidFieldValue, match=r"is a DXGK_ALLOCATIONINFOFLAGS of x64 WDDM2_0 \(0x5023\), not of "
                                                r"x86 WDDM2_0 .*from_buffer_copy\(value\)"):
        info.Flags = kmd.target("x64", "WDDM2_0").DXGK_ALLOCATIONINFOFLAGS()
    with pytest.raises(InvalidFieldValue, match=r"another Target object for x86 WDDM2_0 .*target\(\) returns the "
                                                r"shared ones"):
        info.Flags = kmd.Target("x86", kmd.InterfaceVersion.WDDM2_0).DXGK_ALLOCATIONINFOFLAGS()


def test_a_target_comes_back_as_the_cached_target():
    t = kmd.target("arm64", "WDDM2_0")
    for way in WAYS:
        assert through(way, t) is t, way
    assert through("pickle5", [t, t.DXGK_ALLOCATIONINFO]) == [t, t.DXGK_ALLOCATIONINFO]
