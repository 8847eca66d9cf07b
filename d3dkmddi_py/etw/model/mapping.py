"""The one mapping from event fields to mirror fields, with its evidence, and which rules apply to it.

``MAPPING`` says, for every field of the two templates, which member of the mirror structure it
fills and why; ``RULES_APPLY`` says, for every documented rule, whether it holds for the kernel's
view of these values, with the reason in ``REASONS``: derived from the leaves each rule's checks
read against the members MAPPING fills, so a new rule is never claimed for events silently.  ``Packer`` turns an event's fields into
the mirror's bytes at a target from these tables alone; everything else (checks, text, columns)
reads those bytes.
"""
from __future__ import annotations

from functools import lru_cache

from ..._records import dataclass
from ...errors import EtwInputError, bad_argument, choice_argument, integer_argument, mapping_argument
from ...semantics import RULES, flags_member
from ...span import _short
from ...target import as_target, target as make_target
from .registry import ENTRIES
from .registry import (ALLOCATION_TYPE, FLAG_VIEW, MIRROR_TYPES, PACKED_BY, SEGMENT, USAGE_TYPE, Mapping,  # noqa: F401
                       descriptor_type, on_change)
from .odd import RULES as ODD_RULES
from .schema import SHARED_FLAGS, AllocationFlag


# Every event's rows, in the catalog's order: kept in step with the registry (a list, changed in place).
MAPPING: list = []


def _mapping_changed() -> None:
    MAPPING[:] = [m for entry in ENTRIES.values() for m in entry.mapping]
    _rules_apply.cache_clear()
    carried.cache_clear()
    _packer.cache_clear()


# ---- rules: does each one hold for the kernel's view of the mapped values?
# Derived: a rule applies when every leaf its checks read (semantics.engine.leaves_read) is one the
# events fill (MAPPING), at every target; the reason names the first leaf they do not fill.
REASONS = {
    "carried": "reads only members the event fills",
    "effective": "the kernel logs the segment sets it uses (the effective sets), not the words the driver wrote; "
                 "a read set that differs from the write set in the log is the kernel's own state",
    "kernel-bits": "reads reserved flag bits; the event's bits 14-19 are unnamed and bits 20-31 are the kernel's "
                   "own state (CrossAdapter..ManagedPrimary), never the driver's DXGK_ALLOCATIONINFOFLAGS bits, so "
                   "they are not written to the mirror",
    "no-high-flags": "reads HistoryBuffer, AccessedPhysically or ExplicitResidencyNotification (bits 14-16), "
                     "which the AllocationFlags bit map does not carry: unknown",
    "no-pitch": "reads PitchAlignedSize, which the event does not carry: unknown",
    "no-flags2": "reads Flags2, which the event does not carry: unknown",
    "no-bank-table": "reads pBankRangeTable, which ReportSegment does not carry: unknown",
    "no-reserved": "reads DXGK_SEGMENTDESCRIPTOR3.Reserved, which ReportSegment does not carry: unknown",
    "unmapped": "reads a member no event field fills: unknown",
    "not-on-events": "no check of a type the events fill states what it reads",
    "event": "checked by an event's own entry against the trace's state (etw.catalog: a committed placement "
             "against the allocation's segment sets)",
    "trace": "checked by the readers on every DxgKrnl event against its template (a payload shorter or longer, a "
             "version without a template, a Boolean not 0 or 1)",
}
APPLYING = ("carried", "event", "trace")  # the reasons a rule applies for
# the one judgement no field list shows: the rule reads carried members whose logged meaning differs
KERNEL_VIEW = {"ALLOCINFO.READ_SET_IGNORED": "effective"}
# rules checked outside the registry (semantics.adapter, over every segment of an adapter): what they read
ADAPTER_READS = {"ADAPTER.ONE_AGP": ("Flags.Agp",)}
_FIELD_REASONS = {"PitchAlignedSize": "no-pitch", "pBankRangeTable": "no-bank-table", "Reserved": "no-reserved"}


def _carried(type_name: str, kind: str, abi: str, version: int) -> tuple:
    """(leaf paths the events fill in ``type_name`` at a target, all its leaf paths)."""
    from ...layout import record_leaves, typedef_layout

    leaves = tuple(record_leaves(typedef_layout(type_name, abi, version)))
    spans = [(leaf.offset, leaf.offset + leaf.size) for m in MAPPING if m.mirror_type == kind
             for leaf in leaves if leaf.path == m.mirror]
    out = {leaf.path for leaf in leaves
           if any(a <= leaf.offset and leaf.offset + leaf.size <= b for a, b in spans)}
    if kind == ALLOCATION_TYPE:  # the flag view in force: the bits the event's names carry
        member, _type = flags_member(version)
        out.update(f"{member}.{f.name}" for f in AllocationFlag if f & SHARED_FLAGS)
    return frozenset(out), frozenset(leaf.path for leaf in leaves)


def _reason(path: str, kind: str, version: int) -> str:
    if kind == ALLOCATION_TYPE:
        member, _type = flags_member(version)
        if path.startswith(member + "."):
            name = path[len(member) + 1:]
            return "kernel-bits" if name == "Value" or name.startswith("Reserved") else "no-high-flags"
        if path.startswith("Flags2."):
            return "no-flags2"
    return _FIELD_REASONS.get(path, "unmapped")


def rule_reasons(checks=None) -> dict:
    """Rule id -> the REASONS keys of what its checks read that the events do not fill, over every
    target (x86, x64 and every version).  ``checks``: (abi, version, type name, facts) -> checks,
    default the semantics registry."""
    from ...semantics.checks import CHECKS, AdapterFacts
    from ...semantics.engine import leaves_read
    from ..._spec.versions import INTERFACE_VERSIONS

    facts = AdapterFacts(2, 1, 1, 1, (True,) * 32, (2,) * 32)  # every adapter rule is built
    build = checks or (lambda abi, version, name, f: CHECKS[name](abi, version, f))
    out: dict = {}
    for abi in ("x86", "x64"):
        for version in sorted(int(v) for v in INTERFACE_VERSIONS.values()):
            for name, kind, f in ((ALLOCATION_TYPE, ALLOCATION_TYPE, facts), (descriptor_type(version), SEGMENT, None)):
                carried, present = _carried(name, kind, abi, version)
                reads = [(c.rule_id, leaves_read(c, present)) for c in build(abi, version, name, f)]
                if kind == SEGMENT:
                    reads += [(rule_id, frozenset(paths)) for rule_id, paths in ADAPTER_READS.items()]
                for rule_id, paths in reads:
                    out.setdefault(rule_id, set()).update(_reason(p, kind, version) for p in sorted(paths - carried))
    return out


def _applicability(reasons=None) -> dict:
    from ...semantics import RULES

    reasons = rule_reasons() if reasons is None else reasons
    order = list(REASONS)
    out = {}
    checked = {r for entry in ENTRIES.values() for r in entry.rules}
    for rule_id in RULES:
        why = KERNEL_VIEW.get(rule_id) or min(reasons.get(rule_id, ()), key=order.index, default=None)
        if why is None:
            why = "event" if rule_id in checked else "trace" if rule_id in ODD_RULES else \
                "carried" if rule_id in reasons else "not-on-events"
        out[rule_id] = (why in APPLYING, why)
    return out


@lru_cache(maxsize=None)
def _rules_apply() -> dict:
    return _applicability()


def __getattr__(name):  # RULES_APPLY (rule id -> (applies, key of REASONS)) is derived on first use (~0.2 s)
    if name == "RULES_APPLY":
        return _rules_apply()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=None)
def carried(mirror_type: str, version: int) -> tuple:
    """(leaf paths, record names) of a mirror type (SEGMENT or ALLOCATION_TYPE) that the events fill
    (MAPPING), for the meanings an event shows: a word such as ``HintedBank.Value`` carries its whole
    record, the flag word both flag views (the one not in force at ``version`` says so).  Another arm of a
    union over the same bytes (MinimumPageSize beside Alignment) is not carried: the event never said it.
    (The rules' applicability, ``rule_reasons``, goes by bytes instead: a rule reading those bytes reads
    what the event carried.)"""
    leaves, records = set(), set()
    for m in MAPPING:
        if m.mirror_type != mirror_type or not m.mirror:
            continue
        if m.mirror == FLAG_VIEW:  # the view in force, and the other one, whose meaning says it is not
            records.update(("Flags", "FlagsWddm2"))
        elif m.mirror.endswith((".Value", ".QuadPart")):
            records.add(m.mirror.rsplit(".", 1)[0])
        else:
            leaves.add(m.mirror)
    return frozenset(leaves), frozenset(records)


def applies(rule_id: str) -> bool:
    """Whether a rule holds for values read from these events; an id that is not a rule is refused."""
    table = _rules_apply()
    if not isinstance(rule_id, str) or rule_id not in table:
        raise EtwInputError(f"rule_id {_short(rule_id)} is not a rule id; semantics.RULES lists them")
    return table[rule_id][0]


def keep(findings) -> list:
    return [f for f in findings if applies(f.rule_id)]


# ---- packing event fields into mirror bytes
def _event() -> str:  # ``where()`` of fields given without their event
    return "event"


@dataclass(frozen=True)
class _Slot:
    field: str
    offset: int
    size: int
    path: str


class Packer:
    """The mirror bytes of an event's fields at one target, following MAPPING and nothing else.  ``record``
    checks the fields it is given; the readers pack each event's own fields (typed by its template) with the
    underscored methods, unchecked."""

    def __init__(self, tgt):
        self.target = tgt = as_target(tgt)  # every spelling target() takes; a bad one is the package's own error
        self.segment_type = descriptor_type(tgt.interface_version)
        self.flag_member, self.flag_type = flags_member(tgt.interface_version)
        self.classes = {SEGMENT: getattr(tgt, self.segment_type), ALLOCATION_TYPE: getattr(tgt, ALLOCATION_TYPE),
                        USAGE_TYPE: getattr(tgt, USAGE_TYPE)}
        self.slots = {key: [] for key in self.classes}
        for m in MAPPING:
            if m.mirror_type is None or m.mirror == FLAG_VIEW or m.event != PACKED_BY.get(m.mirror_type):
                continue
            by_path = {leaf.path: leaf for leaf in self.classes[m.mirror_type]._leaves_}
            leaf = by_path.get(m.mirror)
            if leaf is None:  # SystemMemoryEndAddress before WIN8
                continue
            self.slots[m.mirror_type].append(_Slot(m.field, leaf.offset, leaf.size, m.mirror))
        flags = {leaf.path: leaf for leaf in self.classes[ALLOCATION_TYPE]._leaves_
                 if leaf.path.startswith(self.flag_member + ".") and leaf.is_bitfield}
        self.flag_offset = flags[f"{self.flag_member}.{next(iter(AllocationFlag)).name}"].offset
        # event bit -> mirror bit, for the shared names the view in force has
        self.flag_bits = {}
        self.unmapped_flags = AllocationFlag(0)
        for member in AllocationFlag:
            if not member & SHARED_FLAGS:
                continue
            leaf = flags.get(f"{self.flag_member}.{member.name}")
            if leaf is None:
                self.unmapped_flags |= member
            else:
                self.flag_bits[member.value] = 1 << leaf.bit_offset
        self._flag_cache = {}
        # the event field whose named bits are the allocation's flags (its MAPPING row fills the flag view)
        self.flag_field = next((m.field for m in MAPPING if m.mirror == FLAG_VIEW
                                and m.event == PACKED_BY.get(ALLOCATION_TYPE)), None)

    @property
    def label(self) -> str:
        return self.target.label

    def _mirror_flags(self, event_flags: int) -> int:
        """The mirror's flag word for the event's Flags: shared bits by name, nothing else."""
        word = self._flag_cache.get(event_flags)
        if word is None:
            word = 0
            for bit, mirror_bit in self.flag_bits.items():
                if event_flags & bit:
                    word |= mirror_bit
            self._flag_cache[event_flags] = word
        return word

    def _pack(self, kind: str, fields: dict, where) -> bytearray:
        cls = self.classes[kind]
        out = bytearray(cls._layout_.size)
        for slot in self.slots[kind]:
            value = fields[slot.field]
            if value >> (8 * slot.size):
                raise EtwInputError(
                    f"{where()}: field {slot.field} = {value:#x} does not fit {cls._c_name_}.{slot.path} "
                    f"({slot.size} bytes at {self.label}, valid 0..{(1 << 8 * slot.size) - 1:#x}); "
                    f"check --abi", field=slot.field)
            out[slot.offset:slot.offset + slot.size] = value.to_bytes(slot.size, "little")
        return out

    def _segment(self, fields: dict, where=_event) -> bytes:
        return bytes(self._pack(SEGMENT, fields, where))

    def _allocation(self, fields: dict, where=_event) -> bytes:
        out = self._pack(ALLOCATION_TYPE, fields, where)
        word = self._mirror_flags(int(fields[self.flag_field])) if self.flag_field else 0
        out[self.flag_offset:self.flag_offset + 4] = word.to_bytes(4, "little")
        return bytes(out)

    def _usage(self, fields: dict, where=_event) -> bytes:
        return bytes(self._pack(USAGE_TYPE, fields, where))

    def _record(self, kind: str, fields: dict, where=_event) -> bytes:
        return self._PACK[kind](self, fields, where)

    _PACK = {SEGMENT: _segment, ALLOCATION_TYPE: _allocation, USAGE_TYPE: _usage}

    def pack(self, kind: str, event) -> bytes:
        """The mirror record of ``kind`` an Event's fields fill (the Event's own, typed by its reader or checked when
        it was built): what an entry's ``apply`` makes of its event."""
        from .events import Event

        if type(event) is not Event:  # noqa: E721
            raise bad_argument("Packer.pack: event", event, "an etw Event")
        pack = self._PACK.get(kind) if isinstance(kind, str) else None
        if pack is None:
            choice_argument(kind, "Packer.pack: kind", MIRROR_TYPES)
        try:
            return pack(self, event.fields, event.where)
        except KeyError as missing:  # an event of another kind, or one a reader found short
            raise bad_argument("Packer.pack: event", event, f"an Event whose fields fill {kind} (it lacks "
                                                            f"{missing.args[0]!r}: {kind} packs " +
                               ", ".join(dict.fromkeys(s.field for s in self.slots[kind])) + ")") from None

    def record(self, kind: str, fields, where=None) -> bytes:
        """The mirror record of ``kind`` (SEGMENT, ALLOCATION_TYPE or USAGE_TYPE) of an event's fields (a dict
        holding each field MAPPING packs into it, an integer); ``where()`` names the event in a message."""
        kind = choice_argument(kind, "Packer.record: kind", MIRROR_TYPES)
        fields = mapping_argument(fields, "Packer.record: fields", "a dict of event field -> value")
        if where is not None and not callable(where):
            raise bad_argument("Packer.record: where", where, "a function naming the event, or None")
        for slot in self.slots[kind]:  # the fields it packs (any other may be anything); too wide: _pack says so
            integer_argument(fields.get(slot.field), f"Packer.record: fields[{slot.field!r}]", 0)
        if kind == ALLOCATION_TYPE:  # the flag word is 32 bits: a wider one would lose its bits silently
            integer_argument(fields.get(self.flag_field), f"Packer.record: fields[{self.flag_field!r}]", 0, 0xFFFFFFFF)
        return self._record(kind, fields, where or _event)

    def _pack_columns(self, np, kind: str, columns: dict, count: int):
        """The mirror records of ``count`` events given as field columns (uint64 arrays), as bytes;
        None if a value does not fit its member (``_record`` names it)."""
        out = np.zeros((count, self.classes[kind]._layout_.size), dtype=np.uint8)
        for slot in self.slots[kind]:
            values = columns[slot.field]
            if slot.size < 8 and (values >> np.uint64(8 * slot.size)).any():
                return None
            out[:, slot.offset:slot.offset + slot.size] = \
                values.astype(f"<u{slot.size}").view(np.uint8).reshape(count, slot.size)
        if kind == ALLOCATION_TYPE:
            flags = columns[self.flag_field]
            word = np.zeros(count, dtype="<u4")
            for bit, mirror_bit in self.flag_bits.items():
                word |= np.where(flags & np.uint64(bit), np.uint32(mirror_bit), np.uint32(0)).astype("<u4")
            out[:, self.flag_offset:self.flag_offset + 4] = word.view(np.uint8).reshape(count, 4)
        return out.tobytes()

    def unknown_members(self, kind: str) -> tuple:
        """Members of the mirror type whose bytes no event field fills (union arms of a filled one count as filled)."""
        kind = choice_argument(kind, "Packer.unknown_members: kind", MIRROR_TYPES)
        filled = set()
        for s in self.slots[kind]:
            filled.update(range(s.offset, s.offset + s.size))
        if kind == ALLOCATION_TYPE:
            filled.update(range(self.flag_offset, self.flag_offset + 4))
        names = []
        for leaf in self.classes[kind]._leaves_:
            if filled.isdisjoint(range(leaf.offset, leaf.offset + leaf.size)):
                top = leaf.path.split(".")[0].split("[")[0]
                if top not in names:
                    names.append(top)
        return tuple(names)


def packer(abi: str, version) -> Packer:
    """The Packer of a target (``abi`` and ``version`` as ``target()`` takes them), made once."""
    tgt = make_target(abi, version)
    return _packer(tgt.abi, int(tgt.interface_version))


@lru_cache(maxsize=None)
def _packer(abi: str, version: int) -> Packer:
    return Packer(make_target(abi, version))


def mapping_table() -> str:
    """The mapping as text: event, field, mirror member, reason."""
    rows = []
    for m in MAPPING:
        mirror = "-" if m.mirror_type is None else f"{m.mirror_type}.{m.mirror}" if m.mirror != FLAG_VIEW else \
            "DXGK_ALLOCATIONINFO.Flags (before WDDM2_0) / FlagsWddm2 (from WDDM2_0), by bit name"
        rows.append(f"{m.event}.{m.field} -> {mirror}: {m.reason}")
    return "\n".join(rows)


_mapping_changed()
on_change(_mapping_changed)
