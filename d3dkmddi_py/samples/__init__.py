"""The bundled sample: a small x64 adapter and allocation infos written for it.

``segments.bin`` holds three DXGK_SEGMENTDESCRIPTOR records (local memory in banks, a
CPU-visible BAR segment, an aperture), ``allocations.bin`` a few dozen DXGK_ALLOCATIONINFO
records, some valid and some breaking documented rules, ``allocations.dq.txt`` the
first of them as WinDbg ``dq`` output, and ``session.log`` a WinDbg session log of the
driver's segment query and one DxgkDdiCreateAllocation call (``--windbg sample``), ``session.dmp``
the same memory as a small x64 kernel crash dump (``--dump sample``, written by ``dump_build``).  All
are written by ``build.py`` (run ``python -m d3dkmddi_py.samples``); ``d3dkmddi demo`` decodes
and validates them.  Every file option of the command takes the word ``sample`` for its bundled file
(``--file sample``: the blob of the TYPE's records; ``etw sample``, ``etw sample.etl``: etw_build's trace).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from . import build
from ..decoding import decode_records
from ..errors import InvalidFieldValue, MissingMember, UnsupportedTarget
from ..names import ABIS, InterfaceVersion
from ..semantics import Adapter
from ..target import as_target, target

DIRECTORY = Path(__file__).resolve().parent
SEGMENTS_PATH = DIRECTORY / build.SEGMENTS_FILE
ALLOCATIONS_PATH = DIRECTORY / build.ALLOCATIONS_FILE
WINDBG_PATH = DIRECTORY / build.WINDBG_FILE
SESSION_PATH = DIRECTORY / build.SESSION_FILE
DUMP_PATH = DIRECTORY / build.DUMP_FILE


def sample_target():
    """The sample's target: x64 at DXGKDDI_INTERFACE_VERSION_WDDM3_0."""
    return target(build.ABI, build.INTERFACE_VERSION)


def segments():
    """The adapter's segment descriptors as decode Records (segment id = index + 1)."""
    records, *_ = decode_records(build.SEGMENT_TYPE, SEGMENTS_PATH, target=sample_target(),
                                 count=len(build.SEGMENTS), kind="file")
    return records


def allocations():
    """The allocation infos as decode Records, in the order of build.ALLOCATIONS."""
    records, *_ = decode_records(build.ALLOCATION_TYPE, ALLOCATIONS_PATH, target=sample_target(),
                                 count=len(build.ALLOCATIONS), kind="file")
    return records


def sample_adapter(target=None):
    """The sample adapter as d3dkmddi_py.semantics sees one: its segments as a driver of ``target`` (a
    Target or an (abi, version) pair; default the sample's own, x64 WDDM3_0) reports them, so allocations
    of any target it fits are checked against the same segments.  A target whose descriptors cannot hold
    them (a flag its version lacks, a 64-bit address on x86) raises UnsupportedTarget naming those that can.
    """
    tgt = sample_target() if target is None else as_target(target)
    try:
        data = build.segment_bytes(tgt)
    except (MissingMember, InvalidFieldValue) as exc:
        own = sample_target()
        why = str(exc).split("; ")[0]  # what does not fit, without the fix for a Python caller
        raise UnsupportedTarget(f"the sample adapter's segments cannot be written at {tgt.label}: {why}; they can "
                                f"at {_where(sample_targets())} (its own target: {own.label}): check at one of those "
                                f"(--abi, --ddi), or against your adapter's segments (--segments FILE)") from None
    cls = getattr(tgt, build.SEGMENT_TYPE)
    size = len(data) // len(build.SEGMENTS)
    return Adapter.from_descriptors([cls.from_buffer_copy(data, i * size) for i in range(len(build.SEGMENTS))],
                                    abi=tgt.abi, interface_version=tgt.interface_version)


@lru_cache(maxsize=None)
def sample_targets() -> tuple:
    """Every (abi, version) at which the sample adapter's segments can be written, found by writing them."""
    out = []
    for abi in ABIS:
        for version in InterfaceVersion:
            try:
                build.segment_bytes(target(abi, version))
            except (MissingMember, InvalidFieldValue):
                continue
            out.append((abi, version))
    return tuple(out)


def _where(targets) -> str:
    """``x64 and arm64 from WDDM2_0``: the targets per ABI, as a range when they run to the newest."""
    versions = list(InterfaceVersion)
    parts = {}
    for abi in ABIS:
        mine = [v for a, v in targets if a == abi]
        if not mine:
            continue
        text = (f"from {mine[0].name}" if mine == versions[versions.index(mine[0]):] else
                ", ".join(v.name for v in mine))
        parts.setdefault(text, []).append(abi)
    return "; ".join(f"{' and '.join(abis)} {text}" for text, abis in parts.items())


__all__ = ["DIRECTORY", "SEGMENTS_PATH", "ALLOCATIONS_PATH", "WINDBG_PATH", "SESSION_PATH", "DUMP_PATH",
           "sample_target", "segments",
           "allocations", "sample_adapter", "sample_targets", "build"]
