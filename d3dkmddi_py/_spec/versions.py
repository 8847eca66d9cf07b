"""The interface-version table (d3dukmdt.h): the one place a DXGKDDI_INTERFACE_VERSION is written.

Its own module so that conditions (model.Since) and the header table (d3dukmdt) both read it
without importing each other.  Adding a version is one line here, then regeneration.
"""
from __future__ import annotations

# Every official DXGKDDI_INTERFACE_VERSION, oldest first (IS_OFFICIAL_DDI_INTERFACE_VERSION).
INTERFACE_VERSIONS = {
    "VISTA": 0x1052,
    "VISTA_SP1": 0x1053,
    "WIN7": 0x2005,
    "WIN8": 0x300E,
    "WDDM1_3": 0x4002,
    "WDDM1_3_PATH_INDEPENDENT_ROTATION": 0x4003,
    "WDDM2_0": 0x5023,
    "WDDM2_1": 0x6003,
    "WDDM2_1_5": 0x6010,
    "WDDM2_1_6": 0x6011,
    "WDDM2_2": 0x700A,
    "WDDM2_3": 0x8001,
    "WDDM2_4": 0x9006,
    "WDDM2_5": 0xA00B,
    "WDDM2_6": 0xB004,
    "WDDM2_7": 0xC004,
    "WDDM2_8": 0xD001,
    "WDDM2_9": 0xE003,
    "WDDM3_0": 0xF003,
    "WDDM3_1": 0x10004,
    "WDDM3_2": 0x11007,
}

# The kit's default DXGKDDI_INTERFACE_VERSION is its newest one.
NEWEST_VERSION = max(INTERFACE_VERSIONS, key=INTERFACE_VERSIONS.__getitem__)
