"""Windows base types as the kit's headers see them (winnt.h / basetsd.h), fixed width.

Pointer-sized types depend on the target, never on the host.  The C mirror's
``d3dkmddi_base.h`` declares the same names.
"""
from __future__ import annotations

from .model import Field, Header, Record, TypeDef

# name -> (size in bytes or "ptr", signed)
SCALARS = {
    "BYTE": (1, False),
    "UCHAR": (1, False),
    "WORD": (2, False),
    "USHORT": (2, False),
    "UINT16": (2, False),
    "UINT": (4, False),
    "UINT32": (4, False),
    "ULONG": (4, False),
    "DWORD": (4, False),
    "INT": (4, True),
    "LONG": (4, True),
    "UINT64": (8, False),
    "ULONGLONG": (8, False),
    "LONGLONG": (8, True),
    "D3DGPU_VIRTUAL_ADDRESS": (8, False),
    "SIZE_T": ("ptr", False),
    "ULONG_PTR": ("ptr", False),
    "HANDLE": ("ptr", False),
    "PMDL": ("ptr", False),
    # An MSVC enum is an int.  D3DDDIFORMAT's enumerators are not mirrored here.
    "D3DDDIFORMAT": (4, True),
}

POINTER_SIZE = {"x86": 4, "x64": 8, "arm64": 8}
# The native host page size of each ABI: what "a multiple of the page size" means for sizes.
PAGE_SIZE = {"x86": 0x1000, "x64": 0x1000, "arm64": 0x1000}

HEADER = Header("d3dkmddi_base.h")

# winnt.h: typedef union _LARGE_INTEGER { struct {DWORD LowPart; LONG HighPart;};
#          struct {DWORD LowPart; LONG HighPart;} u; LONGLONG QuadPart; } LARGE_INTEGER;
_HALVES = (Field("LowPart", "DWORD"), Field("HighPart", "LONG"))
LARGE_INTEGER = HEADER.add(TypeDef(
    "LARGE_INTEGER", "union",
    (Record("struct", _HALVES), Record("struct", _HALVES, name="u"), Field("QuadPart", "LONGLONG")),
    "d3dkmddi_base.h", tag="_LARGE_INTEGER", pointers=("PLARGE_INTEGER",),
    aliases=("PHYSICAL_ADDRESS",),
))


def scalar_size(ctype: str, abi: str) -> int:
    size, _signed = SCALARS[ctype]
    return POINTER_SIZE[abi] if size == "ptr" else size
