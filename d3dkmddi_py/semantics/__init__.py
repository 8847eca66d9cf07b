"""Documented semantics of the segment and allocation structures: decode, build, explain, validate.

Every rule quotes the sentence of the Microsoft reference it enforces (``RULES``).  Helpers take a
plain integer (an ETW payload word, a WinDbg ``dd``) or a ctypes instance, are pure, and return
enums, IntFlags and frozen dataclasses.

Names load with their module on first use (PEP 562): the command line's record path needs the
rules and meanings, not the adapter's ctypes classes or serialization.
"""
from __future__ import annotations

import importlib
import sys
import types

_EXPORTS = {
    "._rules": ("RULES", "Rule", "Finding", "Reference", "Severity", "ValidationError"),
    ".adapter": ("Adapter",),
    ".allocation": ("EffectiveSegmentSet", "Placement", "check_priority", "effective_segment_set", "effective_size",
                    "flags_member"),
    ".check": ("check", "validate"),
    ".explain": ("explain", "field_meanings", "rule_text"),
    ".preferences": ("BankDirection", "BankPreferenceEntry", "Preferences", "SegmentDirection",
                     "SegmentPreferenceEntry", "Slot", "build_bank_preference", "build_segment_preference",
                     "decode_bank_preference", "decode_segment_preference"),
    ".priority": ("Priority", "PriorityBand", "decode_priority"),
    ".serialize": ("from_dict", "to_dict"),
    ".segments": ("DXGK_SEGMENT_ID_SYSTEMMEMORY", "DXGK_SEGMENT_SET_SYSTEMMEMORY", "PowerBehaviour", "SegmentFlag",
                  "SegmentFlagsInfo", "SegmentSet", "decode_segment_flags", "describe_segment_set", "is_aperture",
                  "power_behaviour", "segment_set", "segment_set_mask"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = [name for names in _EXPORTS.values() for name in names]


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Importing a submodule sets the package attribute of its name: the functions ``check`` and
    ``explain`` must stay the functions when their modules load after them."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _HOME.get(name) == "." + name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
