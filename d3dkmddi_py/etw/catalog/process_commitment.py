"""VidMmProcessCommitmentChange (event 371, template VidMmProcessCommitmentChangeArgs): a process's commitment on
an adapter and memory segment group changed; a series per (process, physical adapter, segment group), beside its
usage and budget, and a row of the ``commitments`` table (shared with VidMmProcessDemotedCommitmentChange)."""
from __future__ import annotations

from ..model.registry import Column, EventEntry, Mapping, TableSpec, manifest_fields, register
from ..model.section import SeriesSection, process_text
from .process_usage import GROUP_NAMES

EVENT = "VidMmProcessCommitmentChange"
FIELDS = manifest_fields(371)  # the manifest's template
SHARED = {
    "Commitment": "the process's commitment now, in bytes: the kernel's count, no mirror member ([reading] of its "
                  "name: what the memory manager has committed for it)",
    "OldCommitment": "the commitment before this change (the series keeps the new values)",
    "pDxgAdapter": "the kernel's adapter object: it groups the series by adapter",
    "ProcessId": "the process's id, as VidMmProcessUsageChange gives it",
    "PhysicalAdapterIndex": "the linked adapter's index: a series per index",
}
MAPPING = tuple(Mapping(EVENT, name, None, None, why) for name, why in (
    *SHARED.items(),
    ("MemorySegmentGroup", "the D3DKMT_MEMORY_SEGMENT_GROUP, as VidMmProcessUsageChange gives it: a series per group"),
))
KEY = ("ProcessId", "PhysicalAdapterIndex", "MemorySegmentGroup")


def _field(name: str):
    return lambda e, r: e.fields.get(name)


COMMITMENTS = TableSpec("commitments", (
    Column("ProcessId", "int", field="ProcessId"), Column("PhysicalAdapterIndex", "int", field="PhysicalAdapterIndex"),
    Column("MemorySegmentGroup", "opt", value=_field("MemorySegmentGroup")),
    Column("PriorityClass", "opt", value=_field("PriorityClass")),
    Column("Commitment", "hex", field="Commitment"), Column("OldCommitment", "hex", field="OldCommitment")))


def series_apply(group: str, key: tuple):
    """``EventEntry.apply``: one more sample of the commitment in ``group``, a series per ``key``'s values."""
    def apply(tracker, event) -> None:
        f = event.fields
        tracker.sample(event, group, tuple(f[k] for k in key), f["Commitment"])
    return apply


def key_text(k: tuple) -> str:
    process, index, group = k
    return f"{process_text(process)}, physical adapter {index}, group {GROUP_NAMES.get(group, group)}"


register(EventEntry(
    event=EVENT, ids=(371,), mapping=MAPPING, adapter="pDxgAdapter", table=COMMITMENTS,
    apply=series_apply("commitment", KEY), groups=("commitment",), order=42,
    text=SeriesSection("commitment", f"video memory commitment per process and segment group ({EVENT})",
                       "process group", key_text)))
