"""The bundled sample: a small x64 adapter and allocation infos written for it.

``segments.bin`` holds three DXGK_SEGMENTDESCRIPTOR records (local memory in banks, a
CPU-visible BAR segment, an aperture), ``allocations.bin`` a few dozen DXGK_ALLOCATIONINFO
records, some valid and some breaking documented rules, and ``allocations.dq.txt`` the
first of them as WinDbg ``dq`` output.  All three are written by ``build.py`` (run
``python -m d3dkmddi_py.samples``); ``d3dkmddi demo`` decodes and validates them.
"""
from __future__ import annotations

from pathlib import Path

from . import build
from ..decoding import decode_records
from ..semantics import Adapter
from ..target import target

DIRECTORY = Path(__file__).resolve().parent
SEGMENTS_PATH = DIRECTORY / build.SEGMENTS_FILE
ALLOCATIONS_PATH = DIRECTORY / build.ALLOCATIONS_FILE
WINDBG_PATH = DIRECTORY / build.WINDBG_FILE


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


def sample_adapter():
    """The sample adapter as d3dkmddi_py.semantics sees one: its descriptors and its target."""
    tgt = sample_target()
    return Adapter.from_descriptors([r.value for r in segments()], abi=tgt.abi,
                                    interface_version=tgt.interface_version)


__all__ = ["DIRECTORY", "SEGMENTS_PATH", "ALLOCATIONS_PATH", "WINDBG_PATH", "sample_target", "segments",
           "allocations", "sample_adapter", "build"]
