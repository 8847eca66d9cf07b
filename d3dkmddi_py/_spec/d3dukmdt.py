"""d3dukmdt.h (WDK 10.0.26100): interface versions, allocation priorities and
D3DDDI_SEGMENTPREFERENCE.  Facts from ../shared/spec/definitions.md §2, §14, §15."""
from __future__ import annotations

from .model import Bits, Const, Field, Header, Record, TypeDef
from .versions import INTERFACE_VERSIONS, NEWEST_VERSION  # noqa: F401  (re-exported)

LEARN = "https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/"

# The header spells some literals in its own way; the C mirror keeps that spelling.
_VERSION_SPELLING = {"WIN8": "0x300E", "WDDM2_2": "0x700A", "WDDM2_5": "0xA00B"}

HEADER = Header("d3dukmdt.h")

for _name, _value in INTERFACE_VERSIONS.items():
    HEADER.add(Const(f"DXGKDDI_INTERFACE_VERSION_{_name}", _value, "d3dukmdt.h",
                     c_text=_VERSION_SPELLING.get(_name, hex(_value))))

for _name, _value, _text in (
    ("MINIMUM", 0x28000000, "0x28000000"),
    ("LOW", 0x50000000, "0x50000000"),
    ("NORMAL", 0x78000000, "0x78000000"),
    ("HIGH", 0xA0000000, "0xa0000000"),
    ("MAXIMUM", 0xC8000000, "0xC8000000"),
):
    HEADER.add(Const(f"D3DDDI_ALLOCATIONPRIORITY_{_name}", _value, "d3dukmdt.h", c_text=_text))


def _preference_bits():
    out = []
    for i in range(5):
        out.append(Bits(f"SegmentId{i}", "UINT", 5))
        out.append(Bits(f"Direction{i}", "UINT", 1))
    out.append(Bits("Reserved", "UINT", 2))
    return tuple(out)


D3DDDI_SEGMENTPREFERENCE = HEADER.add(TypeDef(
    "D3DDDI_SEGMENTPREFERENCE", "struct",
    (Record("union", (Record("struct", _preference_bits()), Field("Value", "UINT"))),),
    "d3dukmdt.h", tag="_D3DDDI_SEGMENTPREFERENCE",
    doc=LEARN + "d3dukmdt/ns-d3dukmdt-_d3dddi_segmentpreference",
))
