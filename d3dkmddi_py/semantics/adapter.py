"""Adapter: the segment descriptors a driver reported, so allocation infos can be checked against them."""
from __future__ import annotations

from collections.abc import Mapping

from .._records import dataclass
from ..errors import (InvalidArgument, InvalidFieldType, InvalidFieldValue, UnsupportedTarget, integer_argument,
                      items_argument, shown, text_argument)
from ..names import NEWEST, InterfaceVersion, parse_abi, parse_interface_version
from ..layout import type_layout
from ._rules import finding
from .checks import DESCRIPTOR_TYPES, check_record
from .segments import SEGFLAGS_TYPE, SegmentFlag, SegmentFlagsInfo, decode_segment_flags

DEFAULT_SEGMENT_SIZE = 0x10000000  # 256 MB, used by Adapter.build when a segment gives no Size
_DESCRIPTORS = "a list of segment descriptors (" + ", ".join(DESCRIPTOR_TYPES) + " instances)"


@dataclass(frozen=True, eq=False)
class Adapter:
    """A frozen description of an adapter: segment descriptors (segment id n is ``segments[n-1]``),
    the ABI and the interface version its driver reports.

    The descriptors are copied on construction, so later changes to the caller's objects do not
    leak in.  Two adapters are equal when their descriptors' bytes, ABI and version are equal.
    """

    segments: tuple
    abi: str = "x64"
    interface_version: InterfaceVersion = NEWEST

    def __post_init__(self):
        # ctypes and the classes only here and below, where descriptors are at hand: the meaning of a
        # flag word needs neither
        import ctypes

        from ..target import target as make_target

        abi = parse_abi(self.abi)
        version = parse_interface_version(self.interface_version)
        copies = []
        for i, d in enumerate(items_argument(self.segments, "segments", object, _DESCRIPTORS)):
            name = getattr(type(d), "_c_name_", None)
            if name not in DESCRIPTOR_TYPES:
                raise InvalidFieldType("Adapter", f"segments[{i}]", d, " / ".join(DESCRIPTOR_TYPES),
                                       f"is a {name or type(d).__name__}, not a segment descriptor")
            cls = type(d)
            if cls._target_ != (abi, int(version)):
                # Read the same bytes with the adapter's own class, so flag names match its version.
                cls = getattr(make_target(abi, version), name)
                if ctypes.sizeof(cls) != ctypes.sizeof(d):
                    raise UnsupportedTarget(
                        f"Adapter({abi} {version.name}): segments[{i}] is a {name} of {type(d)._target_label_} "
                        f"({ctypes.sizeof(d)} bytes); at the adapter's target it is {ctypes.sizeof(cls)} bytes: "
                        f"build the descriptors with target({abi!r}, {version.name!r})")
            copies.append(cls.from_buffer_copy(bytes(d)))
        if len(copies) > 32:
            raise InvalidFieldType("Adapter", "segments", len(copies), "at most 32 segments",
                                   "has more segments than a segment set can name")
        object.__setattr__(self, "segments", tuple(copies))
        object.__setattr__(self, "abi", abi)
        object.__setattr__(self, "interface_version", version)

    # ---- construction

    @classmethod
    def from_descriptors(cls, descriptors, *, abi=None, interface_version=None) -> "Adapter":
        """An adapter from descriptor instances; ABI and version default to the first one's target."""
        descriptors = items_argument(descriptors, "descriptors", object, _DESCRIPTORS)
        first = type(descriptors[0])._target_ if descriptors and hasattr(type(descriptors[0]), "_target_") else None
        abi = abi if abi is not None else (first[0] if first else "x64")
        interface_version = interface_version if interface_version is not None else (first[1] if first else NEWEST)
        return cls(descriptors, abi, interface_version)

    @classmethod
    def from_bytes(cls, descriptor: str, records, *, target=None) -> "Adapter":
        """An adapter from segment descriptors' bytes as read from memory (segment id 1 first), each
        exactly one ``descriptor`` (a DXGK_SEGMENTDESCRIPTOR* name) of ``target`` (default x64, newest)."""
        from ..target import as_target

        t = as_target(target)
        records = items_argument(records, "records", (bytes, bytearray, memoryview),
                                 f"a list of {descriptor if isinstance(descriptor, str) else 'descriptor'} bytes")
        if not isinstance(descriptor, str) or descriptor not in DESCRIPTOR_TYPES or getattr(t, descriptor, None) is None:
            raise InvalidFieldType("Adapter.from_bytes", "descriptor", descriptor, " / ".join(DESCRIPTOR_TYPES),
                                   f"is not a segment descriptor type at {t.label}")
        desc_cls = getattr(t, descriptor)
        size = type_layout(descriptor, t.abi, int(t.interface_version)).size
        built = []
        for i, raw in enumerate(records):
            if len(raw) != size:
                raise InvalidFieldValue("Adapter.from_bytes", f"records[{i}]", f"<{len(raw)} bytes>", f"{size} bytes",
                                        f"is not one {descriptor} of {t.label}")
            built.append(desc_cls.from_buffer_copy(raw))
        return cls(tuple(built), t.abi, t.interface_version)

    @classmethod
    def build(cls, *segments, target=None, abi: str | None = None, interface_version=None,
              descriptor: str | None = None) -> "Adapter":
        """An adapter from short segment specs, one per segment (id 1 first).

        A spec is a flag word (int, SegmentFlag or DXGK_SEGMENTFLAGS) or a mapping of descriptor
        member names to values, e.g. ``{"Flags": SegmentFlag.UseBanking, "Size": 1 << 30,
        "NbOfBanks": 4, "pBankRangeTable": 0xFFFF8000_00001000}``.  The descriptor type defaults to
        DXGK_SEGMENTDESCRIPTOR3 from WIN8 and DXGK_SEGMENTDESCRIPTOR before; Size defaults to 256 MB
        and CommitLimit to Size.  ``target`` is a Target or (abi, version) as everywhere else; ``abi`` and
        ``interface_version`` are the older spelling of the same (default x64 at the newest version).
        """
        from ..target import as_target, target as make_target

        if target is not None:
            if abi is not None or interface_version is not None:
                raise InvalidFieldType("Adapter.build", "target", target, "target=, or abi= and interface_version=",
                                       "was given with abi=/interface_version=: give one or the other, not both")
            t = as_target(target)
        else:
            t = make_target("x64" if abi is None else abi, NEWEST if interface_version is None else interface_version)
        if descriptor is None:
            descriptor = ("DXGK_SEGMENTDESCRIPTOR3" if t.interface_version >= InterfaceVersion.WIN8
                          else "DXGK_SEGMENTDESCRIPTOR")
        text_argument(descriptor, "descriptor", "a descriptor's C name (" + ", ".join(DESCRIPTOR_TYPES) + ") or None")
        desc_cls = getattr(t, descriptor)
        if desc_cls._c_name_ not in DESCRIPTOR_TYPES:
            raise InvalidFieldType("Adapter.build", "descriptor", descriptor, " / ".join(DESCRIPTOR_TYPES),
                                   "is not a segment descriptor type")
        built = []
        for spec in segments:
            fields = dict(spec) if isinstance(spec, Mapping) else {"Flags": spec}
            d = desc_cls()
            size = fields.pop("Size", DEFAULT_SEGMENT_SIZE)
            d.Size = size
            if "CommitLimit" in d._rules_:
                d.CommitLimit = fields.pop("CommitLimit", size)
            for name, value in fields.items():
                _assign(d, name, value)
            built.append(d)
        return cls(tuple(built), t.abi, t.interface_version)

    # ---- queries

    @property
    def target(self):
        """The Target of the adapter's ABI and interface version."""
        from ..target import target as make_target

        return make_target(self.abi, self.interface_version)

    @property
    def segment_count(self) -> int:
        return len(self.segments)

    @property
    def segment_ids(self) -> tuple:
        return tuple(range(1, len(self.segments) + 1))

    def descriptor(self, segment_id: int):
        """The descriptor of a segment id (1-based), or None when the adapter has no such segment."""
        segment_id = integer_argument(segment_id, "segment_id")
        return self.segments[segment_id - 1] if 1 <= segment_id <= len(self.segments) else None

    def flags(self, segment_id: int) -> int:
        d = self.descriptor(segment_id)
        return 0 if d is None else int.from_bytes(bytes(d.Flags), "little")

    def segment_flags(self, segment_id: int) -> SegmentFlagsInfo:
        return decode_segment_flags(self.flags(segment_id), target=self.target)

    def has_flag(self, segment_id: int, flag: SegmentFlag) -> bool:
        flag = integer_argument(flag, "flag")
        return self.descriptor(segment_id) is not None and bool(self.flags(segment_id) & flag)

    def is_aperture(self, segment_id: int) -> bool:
        return self.has_flag(segment_id, SegmentFlag.Aperture | SegmentFlag.Agp)

    def nb_of_banks(self, segment_id: int) -> int | None:
        """NbOfBanks of the segment, or None when its descriptor type has no bank members."""
        d = self.descriptor(segment_id)
        return None if d is None or "NbOfBanks" not in d._rules_ else d.NbOfBanks

    def __eq__(self, other):
        if not isinstance(other, Adapter):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.abi, self.interface_version, tuple((type(d)._c_name_, bytes(d)) for d in self.segments))

    def __repr__(self):
        inner = ", ".join(f"{i}: {type(d)._c_name_} Flags={self.flags(i):#x}" for i, d in
                          zip(self.segment_ids, self.segments))
        return f"Adapter({self.abi} {self.interface_version.name}; {inner})"


def as_adapter(value):
    """``value`` when it is an Adapter or None: what every ``adapter=`` takes; anything else is refused in one
    line naming what to build instead."""
    if value is None or isinstance(value, Adapter):
        return value
    if isinstance(value, (list, tuple)):
        hint = "; build one from descriptors with Adapter.from_descriptors(descriptors)"
    elif isinstance(value, str) and value == "sample":
        hint = "; the command's --adapter sample is d3dkmddi_py.samples.sample_adapter()"
    else:
        hint = ""
    raise InvalidArgument(f"adapter must be a semantics.Adapter (Adapter.build(...) or Adapter.from_descriptors(...)) "
                          f"or None, not {shown(value, 40)}" + hint)


def _assign(d, name: str, value):
    """Set one descriptor member; Flags and addresses accept ints, an address also as the unsigned
    bit pattern C code writes (0xFFFFFFFE00000000 stores -0x200000000 in PHYSICAL_ADDRESS.QuadPart)."""
    import ctypes  # loaded already: a descriptor is a ctypes instance

    if name.startswith("_"):  # a dunder or a hidden member is never a descriptor member to set
        from .._classes import _raise_missing

        _raise_missing(type(d), name)
    attr = getattr(d, name)  # raises MissingMember with the valid names
    if isinstance(attr, (ctypes.Structure, ctypes.Union)) and not isinstance(value, (ctypes.Structure, ctypes.Union)):
        if hasattr(type(attr), "_c_name_") and type(attr)._c_name_ == SEGFLAGS_TYPE:
            attr.Value = value  # the checked assignment refuses a float, a str or None
        elif "QuadPart" in type(attr)._rules_:
            attr.QuadPart = type(attr)._rules_["QuadPart"].as_signed(value)
        else:
            setattr(d, name, value)  # let the checked assignment explain
        return
    setattr(d, name, d._rules_[name].as_signed(value) if name in d._rules_ else value)


# ---- rules on adapters (the descriptor rules are in checks.py)

def check_adapter(adapter: Adapter) -> list:
    out = []
    t = adapter.target
    agp = []
    for i, d in enumerate(adapter.segments):
        out.extend(check_record(type_layout(type(d)._c_name_, t.abi, int(t.interface_version)), bytes(d),
                                where=f"segments[{i}]."))
        if adapter.has_flag(i + 1, SegmentFlag.Agp):
            agp.append(i + 1)
    if len(agp) > 1:
        out.append(finding("ADAPTER.ONE_AGP", f"segments[{agp[1] - 1}].Flags.Agp", 1,
                           f"segments {', '.join(map(str, agp))} all set Agp; only one AGP segment can exist"))
    return out
