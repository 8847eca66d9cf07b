"""What any event read here is (``EventKind``), the opcodes and in-type names, and the AllocationFlags and
UsageFlags bit maps as flag types.  The templates, maps and every other fact of the provider's manifest are
``dxgkrnl_manifest`` (generated from it); the package never reads the manifest at run time.

The two flag types are the manifest's bit maps: ``AllocationFlag`` names bits 0-13 as DXGK_ALLOCATIONINFOFLAGS
names those bits in its non-WDDM2_0 view (tests/etw/test_manifest.py holds the two equal) and bits 20-31 the
kernel's own state; ``UsageFlag`` is the flag word of DXGK_ALLOCATIONUSAGEINFO1 (same names, same bits).
"""
from __future__ import annotations

from ..._records import dataclass
from ..._enums import NamedIntFlag
import re

from ...errors import EtwInputError, choice_argument, integer_argument, name_argument, text_argument
from ...introspect import leaves
from ...span import _short
from ...target import target as make_target
from .dxgkrnl_manifest import GUID as PROVIDER_GUID, MAPS, PROVIDER  # noqa: F401 - the provider, named here
from .templates import IN_TYPES
EVENT_NAMESPACE = "http://schemas.microsoft.com/win/2004/08/events/event"

# Opcodes of the Windows event schema (winmeta.xml): win:Info 0, win:Start 1, win:Stop 2, win:DCStart 3.
OPCODES = {"Info": 0, "Start": 1, "Stop": 2, "DCStart": 3}
_OTHER_OPCODE = re.compile(r"opcode [0-9]{1,3}")  # the opcode of an event id the manifest does not have



@dataclass(frozen=True)
class EventKind:
    """One event of the manifest: its id, the name and opcode it is reported under, its task."""

    event_id: int
    event: str  # its entry's name (ReportSegment, AdapterAllocation, ...), or its symbol where no entry reads it
    opcode: str  # Info, Start, Stop or DCStart
    task: int
    version: int  # the manifest copy's version; other builds log others (fields are matched by name)
    template: str | None  # the manifest's template id (None: the event has no payload)
    adapter: str | None = None  # the field that names the adapter (its entry's), if any
    symbol: str = ""  # the manifest's symbol (AdapterAllocationStart_V2)

    def __post_init__(self):  # built once per event id when its entry registers; an Event compares its kind
        integer_argument(self.event_id, "EventKind: event_id", 0, 0xFFFF)
        name_argument(self.event, "EventKind: event", "the event task name (a str)")
        if not (isinstance(self.opcode, str) and _OTHER_OPCODE.fullmatch(self.opcode)):  # an id the manifest lacks
            choice_argument(self.opcode, "EventKind: opcode", OPCODES)
        integer_argument(self.task, "EventKind: task", 0, 0xFFFF)
        integer_argument(self.version, "EventKind: version", 0, 0xFF)
        text_argument(self.template, "EventKind: template", "the template's name (a str), or None")
        text_argument(self.adapter, "EventKind: adapter", "the name of the field naming the adapter (a str), or None")
        text_argument(self.symbol, "EventKind: symbol", "the manifest's symbol (a str)")

    @property
    def label(self) -> str:
        return f"{self.event} {self.opcode}, EventID {self.event_id}"


# in-types of the manifest (templates.IN_TYPES holds them all), named where the catalog reads them
UINT8, UINT16, UINT32, UINT64, POINTER, BOOLEAN = "UInt8", "UInt16", "UInt32", "UInt64", "Pointer", "Boolean"


def in_type_range(in_type: str) -> tuple:
    """(lowest, highest) value of an in-type of numbers (a Pointer's: 64 bits, the widest an event holds)."""
    t = IN_TYPES[in_type]
    bits = 64 if t.kind == "pointer" else 1 if t.kind == "bool" else 8 * t.width
    return (-(1 << bits - 1), (1 << bits - 1) - 1) if t.signed else (0, (1 << bits) - 1)


IN_TYPE_MAX = {name: in_type_range(name)[1] for name, t in IN_TYPES.items() if t.kind in ("int", "pointer")}

# The manifest's Stop template maps Format to the D3DFormat value map; its names are kept as text.
FORMAT_NAME_PREFIX = "D3DDDIFMT_"

# ---- the AllocationFlags bit map
SHARED_FLAG_BITS = range(0, 14)  # named like DXGK_ALLOCATIONINFOFLAGS bits 0-13 (non-WDDM2_0 view)
# The view whose names the manifest uses: DXGK_ALLOCATIONINFOFLAGS before WDDM2_0 (from WDDM2_0 the
# same type gains names at bits 15-18, which the bit map does not carry).
SHARED_FLAG_VIEW = ("x64", "WDDM1_3", "DXGK_ALLOCATIONINFOFLAGS")
USAGE_FLAG_TYPE = "DXGK_ALLOCATIONUSAGEINFO1"


def one_bit_leaves(type_name: str, abi: str, version: str, prefix: str = "") -> dict:
    """name -> bit of the one-bit members of a mirror type at a target (under ``prefix``, which is cut)."""
    cls = getattr(make_target(abi, version), type_name)
    return {leaf.path[len(prefix):]: leaf.bit_offset for leaf in leaves(cls)
            if leaf.is_bitfield and leaf.bit_width == 1 and leaf.path.startswith(prefix)}


def _bit_map(name: str) -> list:
    """(name, value) of each bit of a bit map of the manifest."""
    kind, values = MAPS[name]
    return [(n, v) for v, n in values]


AllocationFlag = NamedIntFlag("AllocationFlag", _bit_map("AllocationFlags"), module=__name__)
AllocationFlag.__doc__ = ("The Flags word of the AdapterAllocation events (the manifest's bit map AllocationFlags): "
                          "bits 0-13 named like DXGK_ALLOCATIONINFOFLAGS, bits 20-31 the kernel's own state.")
SHARED_FLAGS = AllocationFlag(sum(v for _n, v in _bit_map("AllocationFlags") if v < 1 << 14))
KERNEL_FLAGS = AllocationFlag(sum(v for _n, v in _bit_map("AllocationFlags") if v >= 1 << 20))

UsageFlag = NamedIntFlag("UsageFlag", _bit_map("UsageFlags"), module=__name__)
UsageFlag.__doc__ = "The UsageFlags word of the AdapterAllocation events (the manifest's bit map UsageFlags)."

_FLAG_BITS: dict = {}  # flag type -> ((name, bit value) of each member, every named bit)


def flag_names(flag_type, value: int) -> str:
    """``CpuVisible|Primary``, unnamed bits as ``bit 15``; ``0`` when none is set."""
    if not (flag_type is AllocationFlag or flag_type is UsageFlag) or isinstance(value, bool) or not isinstance(value, int) \
            or not 0 <= value < 1 << 32:
        raise EtwInputError(f"flag_names takes AllocationFlag or UsageFlag and a 32-bit unsigned int, not "
                            f"{_short(flag_type)} and {_short(value)}")
    bits = _FLAG_BITS.get(flag_type)
    if bits is None:  # once per type: iterating a flag enum costs microseconds per member
        members = tuple((m.name, int(m.value)) for m in flag_type)
        bits = _FLAG_BITS[flag_type] = (members, sum(v for _name, v in members))
    members, named = bits
    value = int(value)
    parts = [name for name, v in members if value & v]
    rest = value & ~named
    if rest:
        parts += [f"bit {b}" for b in range(32) if rest >> b & 1]
    return "|".join(parts) or "0"
