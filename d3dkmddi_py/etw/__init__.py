"""ETW traces of the Microsoft-Windows-DxgKrnl provider: every event of its manifest read from its template, and
the events the catalog's entries read further (``etw.catalog``, one entry each: the segments a driver reports, the
allocations the kernel creates, where memory is) decoded into the mirror structures and checked against the
documented rules that hold for them.  An event that is not what its template says is kept and reported.

``read(source)`` streams an .etl file or its tracerpt / Event Viewer XML (told apart by content);
``summary(source)`` says what any .etl file holds; ``from_records(dicts)`` takes the output of any
other ETW reader; ``adapters(events, target=...)`` groups them per adapter; ``plot(source, "out.png")`` draws it.
``MAPPING`` and ``RULES_APPLY`` are the evidence: which event field fills which mirror member, and
which rules apply to the kernel's view of these values.  The parts: ``readers`` (XML, .etl, XPRESS), ``model``
(the manifest, the registry, templates, Events, the Tracker), ``outputs`` (text, tables, picture, command).
"""
from __future__ import annotations

from .catalog import ENTRIES, KINDS
from .model.events import Event, from_records
from .model import mapping as _mapping
from .model.mapping import MAPPING, REASONS, Mapping, Packer, applies, descriptor_type, mapping_table, packer
from .model.tracker import AdapterTrace, Series, Tracker, adapters
from .catalog._allocations import AllocationEntry
from .catalog.report_segment import SegmentEntry
from .model.registry import Column, EventEntry, TableSpec, register, registered, unregister
from .model.schema import (KERNEL_FLAGS, PROVIDER, PROVIDER_GUID, SHARED_FLAGS, AllocationFlag, EventKind, UsageFlag,
                     flag_names)
from .readers.xmlreader import TraceReader, read, summary
from .outputs.plot import plot  # matplotlib is imported when a picture is drawn

__all__ = ["read", "summary", "from_records", "adapters", "plot", "Event", "EventKind", "TraceReader", "Tracker",
           "AdapterTrace", "SegmentEntry", "AllocationEntry", "Series", "AllocationFlag", "UsageFlag", "SHARED_FLAGS",
           "KERNEL_FLAGS", "KINDS", "ENTRIES", "PROVIDER", "PROVIDER_GUID", "MAPPING", "Mapping", "RULES_APPLY",
           "REASONS", "applies", "descriptor_type", "mapping_table", "Packer", "packer", "flag_names", "EventEntry",
           "TableSpec", "Column", "register", "unregister", "registered"]


def __getattr__(name):  # RULES_APPLY is derived from the rules on first use
    if name == "RULES_APPLY":
        return _mapping.RULES_APPLY
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
