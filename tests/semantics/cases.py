"""Shared builders for the semantic tests: a well-formed adapter and allocation info, and flag words
from names.  Every value here is typed in from the rule it is meant to keep or break."""
from __future__ import annotations

import d3dkmddi_py as kmd
from d3dkmddi_py import semantics as sem
from d3dkmddi_py.semantics import SegmentFlag as F

NEWEST = kmd.target("x64")
NORMAL = 0x78000000
KB64 = 0x10000


def seg(*names) -> int:
    """A DXGK_SEGMENTFLAGS word from flag names."""
    out = 0
    for n in names:
        out |= F[n]
    return out


def alloc_flags(type_name: str, *names, target=NEWEST) -> int:
    """A flag word of DXGK_ALLOCATIONINFOFLAGS(_WDDM2_0 / 2) from leaf names, via the class itself."""
    obj = getattr(target, type_name)()
    for n in names:
        setattr(obj, n, 1)
    return obj.Value


def adapter(version=NEWEST.interface_version.name, abi="x64") -> sem.Adapter:
    """Segment 1: local memory in 4 banks with 64 KB pages (from WDDM2_0); 2: CPU-visible, pitch-aligned; 3: aperture."""
    big = F.Use64KBPages if kmd.target(abi, version).interface_version >= kmd.InterfaceVersion.WDDM2_0 else 0
    return sem.Adapter.build(
        {"Flags": F.UseBanking | big, "Size": 1 << 28, "NbOfBanks": 4, "pBankRangeTable": 0x1000},
        {"Flags": F.CpuVisible | F.PitchAlignment, "Size": 1 << 26},
        {"Flags": F.Aperture, "Size": 1 << 29, "CommitLimit": 1 << 28},
        abi=abi, interface_version=version)


def alloc(target=NEWEST, *, preferred=(1,), banks=(), flags=(), flags2=(), **fields):
    """A DXGK_ALLOCATIONINFO that breaks nothing against adapter(); keyword arguments override members."""
    a = target.DXGK_ALLOCATIONINFO()
    a.Size = KB64
    a.Alignment = KB64
    a.AllocationPriority = NORMAL
    a.SupportedReadSegmentSet = 0b101
    a.SupportedWriteSegmentSet = 0b101
    a.EvictionSegmentSet = 0b100
    a.PreferredSegment.Value = sem.build_segment_preference(preferred)
    a.HintedBank.Value = sem.build_bank_preference(banks)
    view = a.FlagsWddm2 if target.interface_version >= kmd.InterfaceVersion.WDDM2_0 else a.Flags
    for n in flags:
        setattr(view, n, 1)
    for n in flags2:
        setattr(a.Flags2, n, 1)
    for name, value in fields.items():
        if name in ("PreferredSegment", "HintedBank"):
            getattr(a, name).Value = value
        else:
            setattr(a, name, value)
    return a


def descriptor(type_name="DXGK_SEGMENTDESCRIPTOR3", target=NEWEST, flags=0, **fields):
    d = getattr(target, type_name)()
    d.Flags.Value = flags
    d.Size = fields.pop("Size", 0x100000)
    if "CommitLimit" in d._rules_:
        d.CommitLimit = fields.pop("CommitLimit", d.Size)
    for name, value in fields.items():
        setattr(d, name, value)
    return d
