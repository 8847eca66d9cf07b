"""The one place names are read: ABIs, interface versions and C type names (no ctypes).

``Target``/``target()``, ``resolve``, the command line, ``etw`` and ``semantics`` all parse
here, so ``amd64`` means x64 everywhere, a misspelt version or type gets the same
suggestions everywhere, and a name missing at the chosen target names the target that has it.
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import _spec
from ._enums import NamedIntEnum
from ._spec.model import Bits, Field, If, Not, Record
from ._spec.versions import INTERFACE_VERSIONS, NEWEST_VERSION
from .errors import UnknownType, UnsupportedTarget, shown

# ---------------------------------------------------------------- ABIs
ABIS = ("x86", "x64", "arm64")
# What compilers, Python and Windows call the same ABIs (platform.machine(), PROCESSOR_ARCHITECTURE).
ABI_ALIASES = {"amd64": "x64", "x86_64": "x64", "i386": "x86", "i686": "x86", "aarch64": "arm64"}


def parse_abi(value) -> str:
    """"x86", "x64" or "arm64" from any case of those or of an alias (``amd64`` is x64)."""
    if isinstance(value, str):
        text = value.strip().lower()
        text = ABI_ALIASES.get(text, text)
        if text in ABIS:
            return text
    raise UnsupportedTarget(f"unknown abi {shown(value)}; valid: {', '.join(ABIS)} (amd64 means x64)")


# ---------------------------------------------------------------- interface versions
InterfaceVersion = NamedIntEnum("InterfaceVersion", list(INTERFACE_VERSIONS.items()), module=__name__,
                                qualname="InterfaceVersion")
InterfaceVersion.__doc__ = "The official DXGKDDI_INTERFACE_VERSION values (d3dukmdt.h)."
NEWEST = InterfaceVersion[NEWEST_VERSION]
_MACRO = "DXGKDDI_INTERFACE_VERSION_"


def _version_list() -> str:
    return ", ".join(f"{v.name} (0x{v.value:X})" for v in InterfaceVersion)


def _squashed(text: str) -> str:
    """A version name without its prefix, "WDDM" and punctuation: "wddm2.0", "2.0" and "WDDM2_0" agree."""
    return re.sub(r"[^0-9A-Z]", "", text.upper().removeprefix(_MACRO).replace("WDDM", ""))


def _close_versions(text: str) -> list:
    """The version names a misspelling most likely meant, best first."""
    import difflib  # only for a name that is wrong: not at start-up

    key = _squashed(text)
    same = [name for name in INTERFACE_VERSIONS if key and _squashed(name) == key]
    if same:
        return same
    close = difflib.get_close_matches(text.upper()[:80], list(INTERFACE_VERSIONS), n=3, cutoff=0.6)
    if close:
        return close
    by_key = {_squashed(name): name for name in INTERFACE_VERSIONS}
    return [by_key[k] for k in difflib.get_close_matches(key[:80], list(by_key), n=3, cutoff=0.6)]


def parse_version(value) -> InterfaceVersion:
    """An official interface version from its value (0x5023, "0x5023"), its name ("WDDM2_0", any case)
    or its macro name ("DXGKDDI_INTERFACE_VERSION_WDDM2_0").  A near miss ("WDDM20", "2.0") is refused
    with the closest names."""
    if isinstance(value, str):
        text = value.strip()
        name = text.upper().removeprefix(_MACRO)
        if name in InterfaceVersion.__members__:
            return InterfaceVersion[name]
        try:
            if not text.isascii():  # int() would read other scripts' digits: a number here is ASCII
                raise ValueError
            value = int(text.replace("`", ""), 0)
        except ValueError:
            close = _close_versions(text)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise UnsupportedTarget(f"unknown interface version {shown(text)}{hint} (valid: {_version_list()})") \
                from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnsupportedTarget(f"interface version must be an int or a name, not {type(value).__name__}; "
                                f"valid: {_version_list()}")
    try:
        return InterfaceVersion(value)
    except ValueError:
        hint = " (0x5022 is WDDM2_0 in the 10240 kit only; every later kit says 0x5023)" if value == 0x5022 else ""
        as_hex = int(str(value), 16) if 0 < value < 1 << 64 else None
        if as_hex in INTERFACE_VERSIONS.values():  # "5023" typed for 0x5023
            hint = f"; did you mean 0x{as_hex:X} ({InterfaceVersion(as_hex).name})? a number without 0x is decimal"
        number = f"0x{value:X}" if 0 <= value < 1 << 64 else shown(value)
        raise UnsupportedTarget(f"{number} is not an official DXGKDDI_INTERFACE_VERSION{hint}; "
                                f"valid: {_version_list()}") from None


parse_interface_version = parse_version  # the public name (d3dkmddi_py.parse_interface_version)


def parse_target(value=None) -> tuple:
    """(abi, interface version as a plain int) from a Target, an abi name, an (abi, version) pair,
    or None (x64, newest).  A plain int: layouts and caches key on it, and print it as a number."""
    if value is None:
        return ("x64", int(NEWEST))
    abi = getattr(value, "abi", None)
    version = getattr(value, "interface_version", None)
    if abi is not None and version is not None:  # a Target, or anything shaped like one
        return (parse_abi(abi), int(parse_version(version)))
    if isinstance(value, str):
        return (parse_abi(value), int(NEWEST))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return (parse_abi(value[0]), int(parse_version(value[1])))
    raise UnsupportedTarget(f"target must be a Target, an abi name or an (abi, interface version) pair, "
                            f"not {shown(value)}")


def target_label(abi: str, version: int) -> str:
    """How messages name a target: "x64 WDDM2_0 (0x5023)"."""
    return f"{abi} {InterfaceVersion(version).name} (0x{int(version):X})"


def fix_for(holds, abi: str, version: int) -> str:
    """What to pass to reach a target where ``holds(abi, version)`` is true, or "" when none is.

    The nearest later version at the same ABI first (what a newer driver would use), then the
    nearest earlier one, then the other ABIs."""
    versions = sorted(InterfaceVersion, key=lambda v: (v < version, abs(v - version)))
    for a in (abi, *(a for a in ABIS if a != abi)):
        for v in versions:
            if holds(a, int(v)):
                if a == abi:
                    return f"pass --ddi {v.name} on the command line, target({abi!r}, {v.name!r}) from Python"
                return (f"pass --abi {a} --ddi {v.name} on the command line, target({a!r}, {v.name!r}) "
                        f"from Python")
    return ""


# ---------------------------------------------------------------- type names
# The C enums as Python enums (no ctypes needed), as module attributes so pickle finds each by name.
ENUM_CLASSES = {e.name: NamedIntEnum(e.name, list(e.values), module=__name__, qualname=e.name)
                for e in _spec.ENUMS.values()}
for _e in _spec.ENUMS.values():
    ENUM_CLASSES[_e.name].__doc__ = _e.doc or (f"The C enum {_e.name} of {_e.header} (an IntEnum): "
                                               + ", ".join(name for name, _value in _e.values))
globals().update(ENUM_CLASSES)


@lru_cache(maxsize=None)
def known_names(abi: str, version: int) -> dict:
    """Every C name (typedef, tag, pointer-free alias, enum) that exists at a target -> its typedef name."""
    out = {}
    for td in _spec.TYPEDEFS.values():
        if td.guard is None or td.guard.holds(abi, version):
            for name in (td.name, td.tag, *td.aliases):
                if name:
                    out[name] = td.name
    for alias, original in _spec.ALIASES.items():
        if original in out.values():
            out.setdefault(alias, original)
    for e in _spec.ENUMS.values():
        if e.guard is None or e.guard.holds(abi, version):
            out[e.name] = e.name
            if e.tag:
                out[e.tag] = e.name
    return out


def type_guard(name: str):
    """The condition under which a known type exists (None: always, or not a type of the headers)."""
    original = _spec.ALIASES.get(name, name)
    td = _spec.TYPEDEFS.get(original) or _spec.ENUMS.get(original)
    if td is None:
        td = next((t for t in _spec.TYPEDEFS.values() if t.tag == name), None)
    return None if td is None else td.guard


def absent_type(name: str, abi: str, version: int) -> str | None:
    """Why a type of the headers is missing at this target and the target that has it, else None."""
    guard = type_guard(name)
    if guard is None:
        return None
    fix = fix_for(guard.holds, abi, version)
    return (f"{name} exists only where {guard.describe()}; this target is {target_label(abi, version)}"
            + (f": {fix}" if fix else ""))


def type_name(name: str, abi: str, version: int) -> str:
    """The typedef name of a C name at a target: WinDbg decoration (``dxgkrnl!_TAG``) and case are
    ignored.  A type missing here names where it exists; an unknown one gets the closest names."""
    name = name.strip().split("!")[-1].strip()
    names = known_names(abi, version)
    if name in names:
        return names[name]
    by_upper = {n.upper(): n for n in names}
    if name.upper() in by_upper:
        return names[by_upper[name.upper()]]
    note = absent_type(name, abi, version)
    if note is not None:
        raise UnknownType(note)
    import difflib  # only for a name that is wrong: not at start-up

    public = [n for n in names if not n.startswith("_")]
    close = difflib.get_close_matches(name.upper()[:200], [n.upper() for n in public], n=3, cutoff=0.6)
    close = [by_upper[c] for c in close] or [n for n in public if name.upper() in n.upper()][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; `d3dkmddi types` lists them"
    text = name if len(name) <= 60 else name[:57] + "..."
    raise UnknownType(f"unknown type {text!r} at {target_label(abi, version)}{hint}")


# ---------------------------------------------------------------- member names
def _member_conditions(members, conds=()):
    """(name, [conditions]) for every member name a typedef's class exposes directly."""
    for m in members:
        if isinstance(m, If):
            yield from _member_conditions(m.then, conds + (m.cond,))
            yield from _member_conditions(m.otherwise, conds + (Not(m.cond),))
        elif isinstance(m, Record) and m.name is None:
            yield from _member_conditions(m.members, conds)
        elif isinstance(m, (Field, Bits, Record)):
            yield m.name, conds


def absent_members(abi: str, version: int) -> dict:
    """c_name -> {member: note} for members this target lacks but other targets have; each note says
    where the member exists and what to pass to get there."""
    out = {}
    for td in _spec.TYPEDEFS.values():
        present, where = set(), {}
        for name, conds in _member_conditions(td.members):
            if all(c.holds(abi, version) for c in conds):
                present.add(name)
            else:
                where.setdefault(name, []).append(conds)
        notes = {}
        for name, alternatives in where.items():
            if name in present:
                continue
            text = " or ".join(" and ".join(c.describe() for c in conds) for conds in alternatives)
            fix = fix_for(lambda a, v, alts=alternatives: any(all(c.holds(a, v) for c in conds) for conds in alts),
                          abi, version)
            notes[name] = f"it exists only where {text}" + (f"; {fix}" if fix else "")
        out[td.name] = notes
    return out
