"""Every public function of d3dkmddi_py, fed arbitrary JSON-like data: it returns, or raises one of the
library's own errors (a D3dkmddiError subclass) with a one-line message.  Never a bare TypeError,
ValueError, AttributeError, OverflowError or RecursionError, and never Python's refusal to print an
int of more than 4300 digits."""
from __future__ import annotations

import io
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import d3dkmddi_py as kmd
from d3dkmddi_py import bulk, semantics as sem
from d3dkmddi_py.errors import D3dkmddiError
from d3dkmddi_py.semantics import ValidationError
from d3dkmddi_py.windbg import Memory, parse_int

from .public import public_callables

TYPE_NAMES = ["DXGK_SEGMENTFLAGS", "DXGK_ALLOCATIONINFO", "DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3",
              "DXGK_SEGMENTBANKPREFERENCE", "DXGK_SEGMENTPREFERENCE", "DXGK_ALLOCATIONINFOFLAGS", "DXGK_PAGESIZE",
              "PHYSICAL_ADDRESS", "DXGK_QUERYSEGMENTOUT4", "dxgkrnl!_DXGK_SEGMENTFLAGS", "PDXGK_SEGMENTDESCRIPTOR"]
KEYS = ["type", "abi", "interface_version", "fields", "padding", "Flags", "Size", "BaseAddress", "Value",
        "BaseAddress.QuadPart", "Flags.Value", "Aperture", "0x44", "CpuTranslatedAddress", "Bank0", "SegmentId0",
        "hAllocation", "Direction", "segment_id", "bank"]


class Huge:
    """Stands for an int of more than 4300 decimal digits (str() of one raises ValueError) until the call,
    so hypothesis can print a failing example."""

    def __init__(self, sign: int):
        self.sign = sign

    def __repr__(self):
        return f"{'-' if self.sign < 0 else ''}(1 << 20000)"


def _real(value):
    if isinstance(value, Huge):
        return value.sign * (1 << 20000)
    if isinstance(value, list):
        return [_real(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_real(v) for v in value)
    if isinstance(value, dict):
        return {k: _real(v) for k, v in value.items()}
    return value


scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.integers(-2 ** 70, 2 ** 70),
    st.sampled_from([0, 1, -1, 31, 32, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, Huge(1), Huge(-1)]),
    st.floats(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.text(alphabet=st.characters(max_codepoint=0x1F), max_size=10),  # control characters
    st.sampled_from(["9" * 5000, "0x" + "f" * 5000, "-" + "1" * 4400, "1e400", "nan", "inf", "", " ", "\x00",
                     "all", "x64", "x86", "arm64", "WDDM2_0", "WIN8", "0x11007", "0x485", "85 04 00 00",
                     "00000000`00000485", "fffff801`2a3b4000  00000485 00000001", "0: kd> dd 0", "0y101",
                     *TYPE_NAMES]),
)
json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), inner, max_size=4)),
    max_leaves=12,
)
type_arg = st.one_of(st.sampled_from(TYPE_NAMES), json_like)
target_arg = st.one_of(st.none(), st.sampled_from([("x64", "WDDM2_0"), ("x86", "WIN8"), ("arm64", "WDDM3_2"), "x86"]),
                       json_like)

FUZZ = settings(max_examples=120, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True, scope="module")
def _empty_cwd(tmp_path_factory):
    """A relative path the fuzzer invents resolves in an empty directory: nothing real is read."""
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


def _only_library_errors(call, longest: int = 2000):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumpyMissingWarning and friends are not errors
            out = call()
        if hasattr(out, "__next__"):
            for _ in zip(range(3), out):
                pass
    except ValidationError:
        pass  # validate() lists every broken rule, one per line, by design
    except D3dkmddiError as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), message
        assert len(message) < longest, message[:200]


CALLS = {
    # name: (strategy of the arguments, how to call)
    "decode": (st.tuples(type_arg, json_like, target_arg, json_like, json_like),
               lambda a: kmd.decode(a[0], a[1], target=a[2], offset=a[3] if isinstance(a[3], int) else 0,
                                    count=a[4])),
    "decode(path=)": (st.tuples(type_arg, json_like), lambda a: kmd.decode_one(a[0], path=a[1])),
    "decode(offset=)": (st.tuples(json_like, json_like), lambda a: kmd.decode("DXGK_SEGMENTFLAGS", b"\x85\4\0\0" * 4,
                                                                              offset=a[0], count=a[1])),
    "parse_hex": (json_like, kmd.parse_hex),
    "parse_int": (st.tuples(json_like), lambda a: parse_int(*a)),
    "parse_windbg": (json_like, kmd.parse_windbg),
    "Memory.offset_of": (json_like, lambda a: Memory(bytes(8), 0xFFFFF8012A3B4000, "dump").offset_of(a)),
    "target": (st.tuples(json_like, json_like), lambda a: kmd.target(*a)),
    "parse_abi": (json_like, kmd.parse_abi),
    "parse_interface_version": (json_like, kmd.parse_interface_version),
    "check": (st.tuples(json_like, type_arg, target_arg), lambda a: kmd.check(a[0], a[1], target=a[2])),
    "validate": (st.tuples(json_like, type_arg, target_arg, st.booleans()),
                 lambda a: kmd.validate(a[0], a[1], target=a[2], strict=a[3])),
    "explain": (st.tuples(json_like, type_arg, target_arg), lambda a: kmd.explain(a[0], a[1], target=a[2])),
    "field_meanings": (st.tuples(json_like, type_arg, target_arg),
                       lambda a: kmd.field_meanings(a[0], a[1], target=a[2])),
    "check(adapter=)": (json_like, lambda a: kmd.check(0, "DXGK_ALLOCATIONINFOFLAGS", adapter=a)),
    "from_dict": (st.tuples(json_like, st.one_of(st.none(), type_arg), target_arg),
                  lambda a: kmd.from_dict(a[0], a[1], target=a[2])),
    "to_dict": (st.tuples(json_like, type_arg, target_arg), lambda a: kmd.to_dict(a[0], a[1], target=a[2])),
    "decode_bank_preference": (json_like, kmd.decode_bank_preference),
    "decode_segment_preference": (json_like, kmd.decode_segment_preference),
    "build_bank_preference": (json_like, kmd.build_bank_preference),
    "build_segment_preference": (json_like, kmd.build_segment_preference),
    "segment_set": (st.tuples(json_like, target_arg), lambda a: kmd.segment_set(a[0], target=a[1])),
    "segment_set_mask": (st.tuples(json_like, json_like), lambda a: kmd.segment_set_mask(a[0], system_memory=a[1])),
    "power_behaviour": (json_like, kmd.power_behaviour),
    "decode_priority": (json_like, kmd.decode_priority),
    "decode_segment_flags": (st.tuples(json_like, target_arg), lambda a: kmd.decode_segment_flags(a[0], target=a[1])),
    "Adapter.build": (st.tuples(st.lists(json_like, max_size=3), json_like, json_like),
                      lambda a: kmd.Adapter.build(*a[0], abi=a[1], interface_version=a[2])),
    "Adapter.build(abi ok)": (st.lists(json_like, max_size=3), lambda a: kmd.Adapter.build(*a)),
    "layout_table": (json_like, kmd.layout_table),
    "leaves": (json_like, kmd.leaves),
    "render_text": (json_like, kmd.render_text),
    "record_json": (st.tuples(json_like, type_arg), lambda a: kmd.record_json(a[0], c_name=a[1])),
    "decode_array": (st.tuples(type_arg, json_like, target_arg, json_like, json_like),
                     lambda a: bulk.decode_array(a[0], a[1], target=a[2], offset=a[3], count=a[4])),
    "iter_chunks": (st.tuples(type_arg, json_like, json_like, json_like),
                    lambda a: bulk.iter_chunks(a[0], a[1], offset=a[2], count=a[3])),
    "validate_array": (st.tuples(type_arg, json_like, json_like),
                       lambda a: bulk.validate_array(a[0], a[1], count=a[2])),
    "write_records": (st.tuples(type_arg, json_like, json_like, json_like),
                      lambda a: bulk.write_records(a[0], a[1], io.StringIO(), fmt=a[2], count=a[3], progress=False)),
}


TAKE_PATHS = {"decode(path=)", "decode_array", "iter_chunks", "validate_array", "write_records"}  # a str is a path


@pytest.mark.parametrize("name", list(CALLS))
def test_public_function_raises_only_library_errors(name):
    strategy, call = CALLS[name]

    @FUZZ
    @given(strategy)
    def run(args):
        # A path is echoed whole in messages (it may be long); every other value is clipped.
        _only_library_errors(lambda: call(_real(args)), 20000 if name in TAKE_PATHS else 2000)

    run()


# ------------------------------------------------------------------ every public callable of every module
PUBLIC = public_callables()  # found, so a new public function is fuzzed without editing this test (issue 14)


@pytest.mark.parametrize("module_name, name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_every_public_callable_raises_only_the_packages_value_and_type_errors(module_name, name):
    import importlib

    import inspect

    fn = getattr(importlib.import_module(module_name), name)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in params)  # a call Python itself refuses is not the package's
    keywords = [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind == p.KEYWORD_ONLY and p.default is p.empty]

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.lists(json_like, min_size=required + len(keywords),
                    max_size=max(required, min(len(params), 3)) + len(keywords)))
    def run(args):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = fn(*_real(args[:len(args) - len(keywords)]),
                         **dict(zip(keywords, _real(args[len(args) - len(keywords):]))))
            if hasattr(out, "__next__"):
                for _ in zip(range(3), out):
                    pass
        except ValidationError:
            pass
        except D3dkmddiError as exc:
            assert isinstance(exc, (ValueError, TypeError)), type(exc).__mro__
            assert "\n" not in str(exc).strip(), str(exc)[:300]

    run()


def test_an_etw_target_of_three_parts_is_the_packages_error():
    from d3dkmddi_py import etw
    from d3dkmddi_py.samples import DIRECTORY

    with pytest.raises(D3dkmddiError) as err:
        etw.adapters(etw.read(DIRECTORY / "etw_trace.xml"), target=("x64", "WDDM2_0", "x"))
    assert isinstance(err.value, (ValueError, TypeError))


def test_from_dict_with_an_unknown_field_is_a_value_error():
    with pytest.raises(ValueError, match="names no leaf"):
        sem.from_dict({"fields": {"NoSuchLeaf": 1}}, "DXGK_SEGMENTFLAGS")


def test_a_member_the_target_lacks_is_an_attribute_error_and_a_value_error():
    from d3dkmddi_py.errors import MissingMember

    x86 = kmd.target("x86", "WDDM3_0").DXGK_ALLOCATIONINFO()
    assert not hasattr(x86, "Flags2")
    assert issubclass(MissingMember, AttributeError) and issubclass(MissingMember, ValueError)


# Falsifying examples the fuzz found with other seeds, kept so they are tried every run.
@pytest.mark.parametrize("call", [
    lambda: kmd.to_dict(0, "DXGK_PAGESIZE"),
    lambda: kmd.parse_windbg("0", 1 << 20000),
    lambda: kmd.decode_one("DXGK_SEGMENTFLAGS", "9" * 5000),
], ids=["to_dict-enum", "parse_windbg-int-origin", "decode-5000-digit-group"])
def test_found_by_the_fuzz(call):
    _only_library_errors(call, 2000)


def test_found_by_the_fuzz_etw_nul_in_a_path():
    from d3dkmddi_py import etw

    _only_library_errors(lambda: etw.summary("\x00"), 2000)
    _only_library_errors(lambda: list(etw.read("a\x00b")), 2000)
