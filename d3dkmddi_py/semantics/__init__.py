"""Documented semantics of the segment and allocation structures: decode, build, explain, validate.

Every rule quotes the sentence of the Microsoft reference it enforces (``RULES``).  Helpers take a
plain integer (an ETW payload word, a WinDbg ``dd``) or a ctypes instance, are pure, and return
enums, IntFlags and frozen dataclasses.
"""
from __future__ import annotations

from ._rules import RULES, Finding, Reference, Rule, Severity, ValidationError
from .adapter import Adapter
from .allocation import EffectiveSegmentSet, effective_segment_set, effective_size, flags_member
from .check import check, validate
from .explain import explain, field_meanings, rule_text
from .preferences import (BankDirection, BankPreferenceEntry, Preferences, SegmentDirection, SegmentPreferenceEntry,
                          Slot, build_bank_preference, build_segment_preference, decode_bank_preference,
                          decode_segment_preference)
from .priority import Priority, PriorityBand, decode_priority
from .serialize import from_dict, to_dict
from .segments import (DXGK_SEGMENT_ID_SYSTEMMEMORY, DXGK_SEGMENT_SET_SYSTEMMEMORY, PowerBehaviour, SegmentFlag,
                       SegmentFlagsInfo, SegmentSet, decode_segment_flags, describe_segment_set, is_aperture,
                       power_behaviour, segment_set, segment_set_mask)

__all__ = [
    "RULES", "Rule", "Finding", "Reference", "Severity", "ValidationError", "check", "validate",
    "explain", "field_meanings", "rule_text", "to_dict", "from_dict",
    "Adapter", "EffectiveSegmentSet", "effective_segment_set", "effective_size", "flags_member",
    "BankDirection", "BankPreferenceEntry", "SegmentDirection", "SegmentPreferenceEntry", "Preferences", "Slot",
    "build_bank_preference", "build_segment_preference", "decode_bank_preference", "decode_segment_preference",
    "Priority", "PriorityBand", "decode_priority",
    "DXGK_SEGMENT_ID_SYSTEMMEMORY", "DXGK_SEGMENT_SET_SYSTEMMEMORY", "PowerBehaviour", "SegmentFlag",
    "SegmentFlagsInfo", "SegmentSet", "decode_segment_flags", "describe_segment_set", "is_aperture", "power_behaviour", "segment_set",
    "segment_set_mask",
]
