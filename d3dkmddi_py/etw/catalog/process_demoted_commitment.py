"""VidMmProcessDemotedCommitmentChange (event 370, template VidMmProcessDemotedCommitmentChangeArgs): a process's
demoted commitment on an adapter changed, per priority class; a series per (process, physical adapter, priority
class), and a row of the ``commitments`` table (shared with VidMmProcessCommitmentChange)."""
from __future__ import annotations

from ..model.registry import EventEntry, Mapping, manifest_fields, register
from ..model.section import SeriesSection, process_text
from .process_commitment import COMMITMENTS, SHARED, series_apply

EVENT = "VidMmProcessDemotedCommitmentChange"
FIELDS = manifest_fields(370)  # the manifest's template
MAPPING = tuple(Mapping(EVENT, name, None, None, why) for name, why in (
    *SHARED.items(),
    ("PriorityClass", "the kernel's priority class of the demoted commitment (no value map in the manifest): a series "
                      "per class"),
))
KEY = ("ProcessId", "PhysicalAdapterIndex", "PriorityClass")


def key_text(k: tuple) -> str:
    process, index, priority = k
    return f"{process_text(process)}, physical adapter {index}, priority class {priority}"


register(EventEntry(
    event=EVENT, ids=(370,), mapping=MAPPING, adapter="pDxgAdapter", table=COMMITMENTS,
    apply=series_apply("demoted", KEY), groups=("demoted",), order=43,
    text=SeriesSection("demoted", f"demoted video memory commitment per process and priority class ({EVENT})",
                       "process class", key_text)))
