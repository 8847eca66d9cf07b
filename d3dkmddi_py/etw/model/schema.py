"""What the Microsoft-Windows-DxgKrnl provider's manifest says about any event read here: the provider,
the opcodes, the in-types and the AllocationFlags and UsageFlags bit maps.  Each event's own template
is stated in its entry (``etw.catalog``).  The package never reads the manifest at run time.

The two flag types are built from the mirror's own layout where the names are shared:
``AllocationFlag`` bits 0-13 are the DXGK_ALLOCATIONINFOFLAGS bits of those positions in its
non-WDDM2_0 view (the manifest uses their names), bits 20-31 are the kernel's own state;
``UsageFlag`` is the flag word of DXGK_ALLOCATIONUSAGEINFO1 (same names, same bits).
"""
from __future__ import annotations

from ..._records import dataclass
from ..._enums import NamedIntFlag
from ...errors import EtwInputError, choice_argument, integer_argument, name_argument, text_argument
from ...introspect import leaves
from ...span import _short
from ...target import target as make_target

PROVIDER = "Microsoft-Windows-DxgKrnl"
PROVIDER_GUID = "{802ec45a-1e99-4b83-9920-87c98277ba9d}"
EVENT_NAMESPACE = "http://schemas.microsoft.com/win/2004/08/events/event"

# Opcodes of the Windows event schema (winmeta.xml): win:Info 0, win:Start 1, win:Stop 2, win:DCStart 3.
OPCODES = {"Info": 0, "Start": 1, "Stop": 2, "DCStart": 3}

REPORT_SEGMENT = "ReportSegment"
ADAPTER_ALLOCATION = "AdapterAllocation"


@dataclass(frozen=True)
class EventKind:
    """One event of the manifest: its id, the name and opcode it is reported under, its task."""

    event_id: int
    event: str  # the task's name (ReportSegment, AdapterAllocation, ...)
    opcode: str  # Info, Start, Stop or DCStart
    task: int
    version: int  # the manifest copy's version; other builds log others (fields are matched by name)
    template: str
    adapter: str | None = None  # the field that names the adapter (its entry's), if any

    def __post_init__(self):  # built once per event id when its entry registers; an Event compares its kind
        integer_argument(self.event_id, "EventKind: event_id", 0, 0xFFFF)
        name_argument(self.event, "EventKind: event", "the event task name (a str)")
        choice_argument(self.opcode, "EventKind: opcode", OPCODES)
        integer_argument(self.task, "EventKind: task", 0, 0xFFFF)
        integer_argument(self.version, "EventKind: version", 0, 0xFF)
        name_argument(self.template, "EventKind: template", "the template's name (a str)")
        text_argument(self.adapter, "EventKind: adapter", "the name of the field naming the adapter (a str), or None")

    @property
    def label(self) -> str:
        return f"{self.event} {self.opcode}, EventID {self.event_id}"


# in-types of the manifest, with the range each one holds
UINT8, UINT16, UINT32, UINT64, POINTER, BOOLEAN = "UInt8", "UInt16", "UInt32", "UInt64", "Pointer", "Boolean"
IN_TYPE_MAX = {UINT8: 0xFF, UINT16: 0xFFFF, UINT32: 0xFFFFFFFF, UINT64: (1 << 64) - 1, POINTER: (1 << 64) - 1}
# Bytes per in-type in a payload; a Pointer's is the event's pointer size.
IN_TYPE_BYTES = {UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, BOOLEAN: 4}

# The manifest's Stop template maps Format to the D3DFormat value map; its names are kept as text.
FORMAT_NAME_PREFIX = "D3DDDIFMT_"

# ---- the AllocationFlags bit map
SHARED_FLAG_BITS = range(0, 14)  # named like DXGK_ALLOCATIONINFOFLAGS bits 0-13 (non-WDDM2_0 view)
# The view whose names the manifest uses: DXGK_ALLOCATIONINFOFLAGS before WDDM2_0 (from WDDM2_0 the
# same type gains names at bits 15-18, which the bit map does not carry).
SHARED_FLAG_VIEW = ("x64", "WDDM1_3", "DXGK_ALLOCATIONINFOFLAGS")
# Bits 20-31: the kernel's own state of the allocation, not a driver flag (AllocationFlags bit map).
KERNEL_FLAG_BITS = (
    ("CrossAdapter", 20), ("SwapChainBackBuffer", 21), ("SectionSupplied", 22), ("CddCached", 23),
    ("CddWriteCombined", 24), ("DoDPrimary", 25), ("CddBitmap", 26), ("PinnedBackingStore", 27),
    ("PagingBuffer", 28), ("Shareable", 29), ("Primary", 30), ("ManagedPrimary", 31),
)
USAGE_FLAG_TYPE = "DXGK_ALLOCATIONUSAGEINFO1"


def _one_bit_leaves(type_name: str, abi: str, version: str, prefix: str = "") -> dict:
    cls = getattr(make_target(abi, version), type_name)
    return {leaf.path[len(prefix):]: leaf.bit_offset for leaf in leaves(cls)
            if leaf.is_bitfield and leaf.bit_width == 1 and leaf.path.startswith(prefix)}


def _shared_flag_members() -> list:
    abi, version, type_name = SHARED_FLAG_VIEW
    bits = _one_bit_leaves(type_name, abi, version)
    return sorted(((name, 1 << bit) for name, bit in bits.items() if bit in SHARED_FLAG_BITS), key=lambda m: m[1])


AllocationFlag = NamedIntFlag("AllocationFlag", _shared_flag_members()
                              + [(name, 1 << bit) for name, bit in KERNEL_FLAG_BITS], module=__name__)
AllocationFlag.__doc__ = ("The Flags word of the AdapterAllocation events (bit map AllocationFlags): bits 0-13 "
                          "named like DXGK_ALLOCATIONINFOFLAGS, bits 20-31 the kernel's own state.")
SHARED_FLAGS = AllocationFlag(sum(1 << bit for bit in SHARED_FLAG_BITS))
KERNEL_FLAGS = AllocationFlag(sum(1 << bit for _name, bit in KERNEL_FLAG_BITS))

UsageFlag = NamedIntFlag("UsageFlag", sorted(
    ((name, 1 << bit) for name, bit in _one_bit_leaves(USAGE_FLAG_TYPE, "x64", "WDDM2_0", "Flags.").items()),
    key=lambda m: m[1]), module=__name__)
UsageFlag.__doc__ = "The UsageFlags word of the AdapterAllocation events: DXGK_ALLOCATIONUSAGEINFO1.Flags."

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
