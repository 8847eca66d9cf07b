"""check / validate: run every documented rule that applies to a value of any project type."""
from __future__ import annotations

from ..errors import flag_argument
from ._rules import Severity, ValidationError
from ._view import coerce_layout
from .adapter import Adapter, as_adapter, check_adapter
from .allocation import Placement, check_placement
from .checks import check_record


def check(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None) -> list:
    """Every finding for a value: a ctypes instance of any project type, or an int / bytes with its
    C type name (``check(0x485, "DXGK_SEGMENTFLAGS")``), an Adapter, or a Placement (an allocation
    committed to a segment).

    ``target`` (a Target or an (abi, interface_version) pair) defaults to the instance's own target,
    else x64 at the newest version; the interface version decides which flags exist.  ``adapter``
    adds the rules that need the segment descriptors (DXGK_ALLOCATIONINFO only).  Types without
    documented rules give [].
    """
    if isinstance(value, Adapter):
        return check_adapter(value)
    if isinstance(value, Placement):
        return check_placement(value)
    layout, data = coerce_layout(value, type_name, target)
    return check_record(layout, data, as_adapter(adapter))


def validate(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None,
             strict: bool = False):
    """Like ``check``, but raises one ValidationError carrying every finding (errors and warnings)
    when at least one is an error (with ``strict=True``, when there is any finding at all).

    Returns the value unchanged otherwise, so it can wrap an expression.
    """
    strict = flag_argument(strict, "strict")
    findings = check(value, type_name, target=target, adapter=adapter)
    if any(f.severity is Severity.ERROR for f in findings) or (strict and findings):
        if isinstance(value, Adapter):
            raise ValidationError("Adapter", f"{value.abi} {value.interface_version.name}", findings)
        layout, _data = coerce_layout(value, type_name, target)
        raise ValidationError(layout.c_name, layout.label, findings)
    return value
