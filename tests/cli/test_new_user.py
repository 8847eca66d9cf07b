"""Issue 14, "What a new user met": each case as a new user meets it."""
from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

import d3dkmddi_py as kmd
from d3dkmddi_py import cli


def _next_commands() -> list:
    out, _err, status = cli.run(["demo"])
    assert status == 0
    lines = out.split("Next, on the same files:\n", 1)[1].splitlines()
    return [line.strip() for line in lines if line.strip().startswith("d3dkmddi ")]


@pytest.mark.parametrize("index", range(5))
def test_the_demos_next_commands_paste_and_run(index):
    commands = _next_commands()
    assert len(commands) == 5 and "<samples>" not in "".join(commands)
    argv = shlex.split(commands[index])
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", *argv[1:]], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, (commands[index], p.stderr[-1000:])
    assert p.stdout


def test_adapter_build_takes_target_like_everything_else():
    from d3dkmddi_py import semantics as sem

    by_target = sem.Adapter.build(sem.SegmentFlag.Aperture, target=("x86", "WDDM2_0"))
    by_parts = sem.Adapter.build(sem.SegmentFlag.Aperture, abi="x86", interface_version="WDDM2_0")
    assert (by_target.abi, by_target.interface_version) == (by_parts.abi, by_parts.interface_version) == \
        ("x86", kmd.InterfaceVersion.WDDM2_0)
    assert sem.Adapter.build(sem.SegmentFlag.Aperture, target=kmd.target("arm64", "WDDM3_0")).abi == "arm64"
    with pytest.raises(ValueError, match="not both"):
        sem.Adapter.build(sem.SegmentFlag.Aperture, target=("x86", "WDDM2_0"), abi="x64")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_validate_to_a_table_says_findings_for_records(tmp_path, fmt):
    from d3dkmddi_py.samples import ALLOCATIONS_PATH

    out = tmp_path / f"f.{fmt}"
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "validate", "DXGK_ALLOCATIONINFO", "--file",
                        str(ALLOCATIONS_PATH), "--count", "all", "--ddi", "WDDM3_0", "--format", fmt, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    rows = out.read_text().count("\n") - (1 if fmt == "csv" else 0)
    assert p.stderr == f"d3dkmddi: wrote {rows} findings for 35 records to {out}\n", p.stderr


def test_from_records_names_every_missing_field_without_a_chained_error():
    from d3dkmddi_py import etw
    from d3dkmddi_py.errors import EtwInputError

    with pytest.raises(EtwInputError) as err:
        list(etw.from_records([{"event": 78, "version": 1, "fields": {"SegmentId": 1}}]))
    message = str(err.value)
    assert "missing or None: " in message and "pDxgAdapter" in message and "tracerpt" not in message
    assert err.value.__cause__ is None and err.value.__context__ is None


PUBLIC_MODULES = ("d3dkmddi_py", "d3dkmddi_py.semantics", "d3dkmddi_py.bulk", "d3dkmddi_py.etw",
                  "d3dkmddi_py.errors", "d3dkmddi_py.recipes.dask_decode")


def _public(module_name):
    import importlib

    module = importlib.import_module(module_name)
    if module_name == "d3dkmddi_py":  # its __all__ leaves the classes to dir() (help stays a guide)
        names = [n for n in dir(module) if not n.startswith("_")]
    else:
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return [(n, getattr(module, n)) for n in names]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_class_and_function_has_a_docstring(module_name):
    import inspect

    bare = [name for name, value in _public(module_name)
            if (inspect.isfunction(value) or inspect.isclass(value)) and not (value.__doc__ or "").strip()]
    assert bare == []


def test_help_of_the_package_opens_with_a_guide():
    import pydoc

    text = pydoc.render_doc(kmd, renderer=pydoc.plaintext)
    head = text[:1500]
    assert "Start here" in head and "kmd.target(" in head and "d3dkmddi demo" in head
    assert "PEP 562" not in head


def test_modules_are_not_public_names_of_the_package():
    assert not {"os", "sys", "importlib", "types"} & set(dir(kmd))
    assert not {"os", "sys", "importlib", "types"} & set(kmd.__all__)


@pytest.mark.parametrize("name", ["decode", "validate", "layout", "types", "demo", "etw"])
def test_every_subcommand_help_has_a_description_and_two_examples(name):
    p = subprocess.run([sys.executable, "-m", "d3dkmddi_py", name, "--help"], capture_output=True, text=True,
                       timeout=60)
    out = p.stdout
    assert p.returncode == 0, p.stderr
    _usage, rest = out.split("\n\n", 1)
    description = rest.split("\n\n", 1)[0]
    assert len(description) > 40 and not description.startswith(("positional", "options")), description
    examples = out.split("examples:\n", 1)[1].splitlines()
    assert len([e for e in examples if e.strip().startswith("d3dkmddi " + name)]) >= 2, out


def test_bulk_docstrings_do_not_say_memory_mapped():
    from d3dkmddi_py import bulk

    for fn in (bulk.decode_array, bulk.iter_chunks):
        assert "never memory-mapped" in fn.__doc__ and "(memory-mapped" not in fn.__doc__


def _meanings(version):
    from d3dkmddi_py import semantics as sem

    info = kmd.target("x64", version).DXGK_ALLOCATIONINFO()
    info.Alignment = 0x10000
    return sem.field_meanings(info)


def test_the_page_size_arm_is_explained_only_where_its_codes_exist():
    """MinimumPageSize/RecommendedPageSize read the Alignment bytes as DXGK_PAGESIZE codes, which exist only
    from the version that defines DXGK_PAGESIZE (the 26100 kit's WDDM3_2)."""
    from d3dkmddi_py.names import known_names

    for version in kmd.InterfaceVersion:
        has_codes = "DXGK_PAGESIZE" in known_names("x64", version)
        meanings = _meanings(version)
        assert ("RecommendedPageSize" in meanings) == has_codes, version
        assert meanings["Alignment"] == "64 KB alignment"


def test_an_etw_event_shows_no_meaning_of_a_member_it_did_not_carry():
    out = subprocess.run([sys.executable, "-m", "d3dkmddi_py", "etw", "sample"], capture_output=True, text=True,
                         timeout=120).stdout
    assert "as a DXGK_PAGESIZE code" not in out and "same word as SupportedReadSegmentSet" not in out
    assert "64 KB alignment" in out  # ulAlignment is carried: Alignment keeps its meaning
