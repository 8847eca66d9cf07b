"""check / validate: run every documented rule that applies to a value of any project type."""
from __future__ import annotations

from ._rules import Severity, ValidationError
from ._view import View, coerce
from .adapter import DESCRIPTOR_TYPES, Adapter, check_adapter, check_descriptor
from .allocation import FLAGS2_TYPE, FLAGS_TYPE, FLAGS_WDDM2_TYPE, check_alloc_flags, check_alloc_flags2, \
    check_allocation_info
from .preferences import BANK_TYPE, check_bank_preference, check_segment_preference
from .segments import SEGFLAGS_TYPE, check_segment_flags


def _checker(type_name: str):
    if type_name == SEGFLAGS_TYPE:
        return lambda view, adapter: check_segment_flags(view)
    if type_name in DESCRIPTOR_TYPES:
        return lambda view, adapter: check_descriptor(view)
    if type_name == BANK_TYPE:
        return lambda view, adapter: check_bank_preference(view)
    if type_name == "D3DDDI_SEGMENTPREFERENCE":
        return lambda view, adapter: check_segment_preference(view)
    if type_name in (FLAGS_TYPE, FLAGS_WDDM2_TYPE):
        return lambda view, adapter: check_alloc_flags(view, type_name)
    if type_name == FLAGS2_TYPE:
        return lambda view, adapter: check_alloc_flags2(view)
    if type_name == "DXGK_ALLOCATIONINFO":
        return check_allocation_info
    if type_name == "DXGK_QUERYSEGMENTIN":
        return lambda view, adapter: check_segment_flags(view.sub("AgpFlags", SEGFLAGS_TYPE))
    return None


def check(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None) -> list:
    """Every finding for a value: a ctypes instance of any project type, or an int / bytes with its
    C type name (``check(0x485, "DXGK_SEGMENTFLAGS")``), or an Adapter.

    ``target`` (a Target or an (abi, interface_version) pair) defaults to the instance's own target,
    else x64 at the newest version; the interface version decides which flags exist.  ``adapter``
    adds the rules that need the segment descriptors (DXGK_ALLOCATIONINFO only).  Types without
    documented rules give [].
    """
    if isinstance(value, Adapter):
        return check_adapter(value)
    cls, data, t = coerce(value, type_name, target)
    run = _checker(cls._c_name_)
    if run is None:
        return []
    return run(View.of(cls, data, t), adapter)


def validate(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None,
             strict: bool = False):
    """Like ``check``, but raises one ValidationError carrying every finding (errors and warnings)
    when at least one is an error (with ``strict=True``, when there is any finding at all).

    Returns the value unchanged otherwise, so it can wrap an expression.
    """
    findings = check(value, type_name, target=target, adapter=adapter)
    if any(f.severity is Severity.ERROR for f in findings) or (strict and findings):
        if isinstance(value, Adapter):
            raise ValidationError("Adapter", f"{value.abi} {value.interface_version.name}", findings)
        cls, _data, t = coerce(value, type_name, target)
        raise ValidationError(cls._c_name_, t.label, findings)
    return value
