"""Column-wise validation: the documented rules of ``d3dkmddi_py.semantics`` over whole columns.

``findings(columns)`` gives the same findings as ``semantics.check`` record by record (rule
id, severity, field, value; the table has no message text), as one table, computed with a
few boolean operations per rule instead of a Python loop per record.  Vectorized: the
segment flags, the bank and segment preferences, the allocation-info flag words and the
allocation info itself, with or without an Adapter.  Any other type (segment descriptors,
DXGK_QUERYSEGMENTIN) runs ``semantics.check`` per record, as do columns decoded without NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..semantics import RULES, check
from ..semantics._view import ever_named_bits, named_bits, write_leaf
from ..semantics.segments import SegmentFlag
from ..target import InterfaceVersion, target as make_target
from .columns import Columns, _need

SEGFLAGS = "DXGK_SEGMENTFLAGS"
BANKPREF = "DXGK_SEGMENTBANKPREFERENCE"
SEGPREF = "D3DDDI_SEGMENTPREFERENCE"
ALLOCFLAGS = "DXGK_ALLOCATIONINFOFLAGS"
ALLOCFLAGS_WDDM2 = "DXGK_ALLOCATIONINFOFLAGS_WDDM2_0"
ALLOCFLAGS2 = "DXGK_ALLOCATIONINFOFLAGS2"
ALLOCINFO = "DXGK_ALLOCATIONINFO"
VECTORIZED = (SEGFLAGS, BANKPREF, SEGPREF, ALLOCFLAGS, ALLOCFLAGS_WDDM2, ALLOCFLAGS2, ALLOCINFO)
FIELDS = ("record", "rule_id", "severity", "field", "value")


@dataclass(frozen=True)
class FindingsTable:
    """Findings as columns, sorted by record: ``record``, ``rule_id``, ``severity``, ``field``, ``value``.

    ``record`` is the record number within the decoded range (as ``Columns.index``).
    Arrays are NumPy arrays (strings as object arrays), or lists without NumPy.
    """

    type_name: str
    target_label: str
    record: object
    rule_id: object
    severity: object
    field: object
    value: object

    def __len__(self) -> int:
        return len(self.record)

    def rows(self):
        """(record, rule_id, severity, field, value) tuples as plain Python values."""
        return list(zip(*(_plain(getattr(self, name)) for name in FIELDS)))

    def by_record(self) -> dict:
        """record -> sorted [(rule_id, field, value)]: the shape to compare with ``semantics.check``."""
        out = {}
        for record, rule_id, _severity, field, value in self.rows():
            out.setdefault(record, []).append((rule_id, field, value))
        return {k: sorted(v) for k, v in out.items()}

    def counts(self) -> dict:
        """rule id -> number of findings."""
        out = {}
        for rule_id in _plain(self.rule_id):
            out[rule_id] = out.get(rule_id, 0) + 1
        return dict(sorted(out.items()))

    def to_pandas(self):
        pd = _need("pandas", "dataframe", "FindingsTable.to_pandas")
        return pd.DataFrame({name: getattr(self, name) for name in FIELDS})


def _plain(values):
    return values.tolist() if hasattr(values, "tolist") else list(values)


def findings(columns: Columns, *, adapter=None) -> FindingsTable:
    """The findings of every record of ``columns`` (the rules ``semantics.check`` runs, same ids)."""
    cls = columns.cls
    name = cls._c_name_
    abi, version = cls._target_
    if adapter is not None and name == ALLOCINFO and (adapter.abi != abi or int(adapter.interface_version) != version):
        from ..errors import UnsupportedTarget

        raise UnsupportedTarget(f"the adapter is {adapter.abi} {adapter.interface_version.name} but the "
                                f"DXGK_ALLOCATIONINFO columns are {cls._target_label_}; check them at the same target")
    np = _numpy_if_columns_use_it(columns)
    if np is None or name not in VECTORIZED:
        return _per_record(columns, adapter)
    out = _Out(np, columns.start)
    view = _Cols(np, columns, "", abi, version)
    if name == SEGFLAGS:
        _segment_flags(out, view)
    elif name == BANKPREF:
        _bank_preference(out, view)
    elif name == SEGPREF:
        _segment_preference(out, view)
    elif name in (ALLOCFLAGS, ALLOCFLAGS_WDDM2):
        _alloc_flags(out, view, name)
    elif name == ALLOCFLAGS2:
        _reserved(out, view, ALLOCFLAGS2, "ALLOCFLAGS2")
    else:
        _allocation_info(out, view, adapter)
    return out.table(name, cls._target_label_)


def validate_array(type, data, *, target=None, offset=0, count=None, adapter=None) -> FindingsTable:
    """``findings(decode_array(...))``: decode a byte range and validate every record."""
    from . import decode_array

    return findings(decode_array(type, data, target=target, offset=offset, count=count), adapter=adapter)


def _numpy_if_columns_use_it(columns: Columns):
    import sys

    np = sys.modules.get("numpy")
    first = next(iter(columns.values()), None)
    return np if np is not None and isinstance(first, np.ndarray) else None


# ---- the fallback: semantics.check on each record

def _per_record(columns: Columns, adapter) -> FindingsTable:
    cls = columns.cls
    leaves = cls._leaves_
    lists = [columns[leaf.path].tolist() for leaf in leaves]
    out = {name: [] for name in FIELDS}
    t = make_target(*cls._target_)
    for row, record in enumerate(columns.index):
        data = bytearray(cls._layout_.size)
        for leaf, values in zip(leaves, lists):  # every bit a rule can read is in some leaf
            write_leaf(data, leaf, values[row])
        for f in check(bytes(data), cls._c_name_, target=t, adapter=adapter):
            for name, value in zip(FIELDS, (record, f.rule_id, f.severity.value, f.field, f.value)):
                out[name].append(value)
    return FindingsTable(cls._c_name_, cls._target_label_, *(out[name] for name in FIELDS))


# ---- the vectorized rules

class _Out:
    """Collects (rule, field, which records, values) and builds the table once."""

    def __init__(self, np, start: int):
        self.np, self.start, self.parts = np, start, []

    def add(self, rule_id: str, field: str, where, value=1):
        np = self.np
        rows = np.flatnonzero(where)
        if not rows.size:
            return
        if np.isscalar(value) or np.ndim(value) == 0:
            values = np.full(rows.size, int(value), dtype=np.uint64)
        else:
            values = np.asarray(value)[rows].astype(np.uint64)
        self.parts.append((rule_id, field, rows, values))

    def table(self, type_name: str, label: str) -> FindingsTable:
        np = self.np
        if not self.parts:
            empty = np.empty(0, dtype=object)
            return FindingsTable(type_name, label, np.empty(0, dtype=np.int64), empty, empty.copy(), empty.copy(),
                                 np.empty(0, dtype=np.uint64))
        lengths = [p[2].size for p in self.parts]
        record = np.concatenate([p[2] for p in self.parts]).astype(np.int64) + self.start
        order = np.argsort(record, kind="stable")

        def repeat(values):
            return np.repeat(np.array(values, dtype=object), lengths)[order]

        return FindingsTable(type_name, label, record[order], repeat([p[0] for p in self.parts]),
                             repeat([RULES[p[0]].severity.value for p in self.parts]),
                             repeat([p[1] for p in self.parts]), np.concatenate([p[3] for p in self.parts])[order])


class _Cols:
    """The leaves under a path prefix, like semantics' View, but one column per leaf."""

    def __init__(self, np, columns: Columns, prefix: str, abi: str, version: int):
        self.np, self.columns, self.prefix, self.abi, self.version = np, columns, prefix, abi, version
        self.count = columns.count

    def sub(self, name: str) -> "_Cols":
        return _Cols(self.np, self.columns, f"{self.prefix}{name}.", self.abi, self.version)

    def has(self, name: str) -> bool:
        return self.prefix + name in self.columns

    def get(self, name: str):
        return self.columns[self.prefix + name]

    def bit(self, name: str):
        """A one-bit flag as booleans; all False when the flag does not exist at this version."""
        if not self.has(name):
            return self.np.zeros(self.count, dtype=bool)
        return self.get(name) != 0

    def where(self, name: str) -> str:
        return self.prefix + name

    def leaves(self):
        """(path under the prefix, leaf) in declaration order, as a View lists them."""
        n = len(self.prefix)
        return [(leaf.path[n:], leaf) for leaf in self.columns.cls._leaves_ if leaf.path.startswith(self.prefix)]


def _segment_flags(out: _Out, v: _Cols):
    word = v.get("Value")
    named, reserved = named_bits(SEGFLAGS, v.abi, v.version)
    b = v.bit
    aperture = b("Aperture") | b("Agp")
    standby, hibernate, partial = b("PreservedDuringStandby"), b("PreservedDuringHibernate"), \
        b("PartiallyPreservedDuringHibernate")
    out.add("SEGFLAGS.AGP_EXCLUSIVE", v.where("Agp"), b("Agp") & ((word & int(named & ~SegmentFlag.Agp)) != 0))
    out.add("SEGFLAGS.CACHECOHERENT_NEEDS_APERTURE", v.where("CacheCoherent"), b("CacheCoherent") & ~b("Aperture"))
    out.add("SEGFLAGS.CPUVISIBLE_ON_APERTURE", v.where("CpuVisible"), b("CpuVisible") & aperture)
    out.add("SEGFLAGS.POPULATED_ON_APERTURE", v.where("PopulatedFromSystemMemory"),
            b("PopulatedFromSystemMemory") & aperture)
    out.add("SEGFLAGS.HIBERNATE_NEEDS_STANDBY", v.where("PreservedDuringHibernate"), hibernate & ~standby)
    out.add("SEGFLAGS.PARTIAL_NEEDS_STANDBY", v.where("PartiallyPreservedDuringHibernate"), partial & ~standby)
    out.add("SEGFLAGS.HIBERNATE_PARTIAL_EXCLUSIVE", v.where("PartiallyPreservedDuringHibernate"), hibernate & partial)
    out.add("SEGFLAGS.PARTIAL_ON_APERTURE", v.where("PartiallyPreservedDuringHibernate"), partial & aperture)
    out.add("SEGFLAGS.HIBERNATE_ON_APERTURE", v.where("PreservedDuringHibernate"), hibernate & aperture)
    if v.version < InterfaceVersion.WIN8:
        for name, bits in (("PreservedDuringStandby", standby), ("PreservedDuringHibernate", hibernate),
                           ("PartiallyPreservedDuringHibernate", partial)):
            out.add("SEGFLAGS.POWER_FLAGS_BEFORE_WIN8", v.where(name), bits)
    out.add("SEGFLAGS.CPUHOSTAPERTURE_WITH_CPUVISIBLE", v.where("SupportsCpuHostAperture"),
            b("SupportsCpuHostAperture") & b("CpuVisible"))
    out.add("SEGFLAGS.CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", v.where("SupportsCachedCpuHostAperture"),
            b("SupportsCachedCpuHostAperture") & ~b("SupportsCpuHostAperture"))
    out.add("SEGFLAGS.RESERVEDSYSMEM_SET", v.where("ReservedSysMem"), b("ReservedSysMem"))
    out.add("SEGFLAGS.APPLICATIONTARGET_DEPRECATED", v.where("ApplicationTarget"), b("ApplicationTarget"))
    _reserved(out, v, SEGFLAGS, "SEGFLAGS")


def _reserved(out: _Out, v: _Cols, type_name: str, prefix: str):
    """{prefix}.UNDEFINED_AT_VERSION and {prefix}.RESERVED_NONZERO, each named by the reserved leaf
    that holds the lowest offending bit (as semantics does)."""
    np = v.np
    word = v.get("Value").astype(np.uint32)
    _named, reserved = named_bits(type_name, v.abi, v.version)
    ever = ever_named_bits(type_name, v.abi)
    for rule, mask in ((f"{prefix}.UNDEFINED_AT_VERSION", reserved & ever), (f"{prefix}.RESERVED_NONZERO",
                                                                              reserved & ~ever & 0xFFFFFFFF)):
        bits = word & np.uint32(mask)
        if not bits.any():
            continue
        low = bits & (~bits + np.uint32(1))  # the lowest set bit of each word
        unclaimed = bits != 0
        for path, leaf in v.leaves():
            if leaf.bit_width >= 32:
                continue
            hit = unclaimed & ((low & np.uint32(((1 << leaf.bit_width) - 1) << leaf.bit_offset)) != 0)
            out.add(rule, v.where(path), hit, bits)
            unclaimed &= ~hit
        out.add(rule, v.where("Value"), unclaimed, bits)


def _preference(out: _Out, v: _Cols, kind: str, id_name: str, slots: int, id_bits: int):
    np = v.np
    word = v.get("Value").astype(np.uint32)
    ended = np.zeros(v.count, dtype=bool)
    for i in range(slots):
        ident = (word >> np.uint32(i * (id_bits + 1))) & np.uint32((1 << id_bits) - 1)
        direction = (word >> np.uint32(i * (id_bits + 1) + id_bits)) & np.uint32(1)
        ended |= ident == 0
        out.add(f"{kind}.ID_AFTER_ZERO", v.where(f"{id_name}{i}"), ended & (ident != 0), ident)
        out.add(f"{kind}.DIRECTION_WITHOUT_ID", v.where(f"Direction{i}"), ended & (ident == 0) & (direction != 0))
    return word


def _bank_preference(out: _Out, v: _Cols):
    _preference(out, v, "BANKPREF", "Bank", 4, 7)


def _segment_preference(out: _Out, v: _Cols):
    word = _preference(out, v, "SEGPREF", "SegmentId", 5, 5)
    top = word >> v.np.uint32(30)
    out.add("SEGPREF.RESERVED_NONZERO", v.where("Reserved"), top != 0, top)


def _alloc_flags(out: _Out, v: _Cols, type_name: str):
    b = v.bit
    cpu = b("CpuVisible")
    out.add("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE", v.where("PermanentSysMem"), b("PermanentSysMem") & ~cpu)
    out.add("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE", v.where("Cached"), b("Cached") & ~cpu)
    backing = {n: b(n) for n in ("PermanentSysMem", "Protected", "ExistingSysMem", "ExistingKernelSysMem")}
    for name, rule in (("Protected", "ALLOCFLAGS.PROTECTED_EXCLUSIVE"),
                       ("ExistingSysMem", "ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE"),
                       ("ExistingKernelSysMem", "ALLOCFLAGS.EXISTINGKERNELSYSMEM_EXCLUSIVE")):
        others = v.np.zeros(v.count, dtype=bool)
        for other, bits in backing.items():
            if other != name:
                others |= bits
        out.add(rule, v.where(name), backing[name] & others)
    out.add("ALLOCFLAGS.HISTORYBUFFER_NEEDS_CPUVISIBLE", v.where("HistoryBuffer"), b("HistoryBuffer") & ~cpu)
    out.add("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY", v.where("ExplicitResidencyNotification"),
            b("ExplicitResidencyNotification") & ~b("AccessedPhysically"))
    _reserved(out, v, type_name, "ALLOCFLAGS")


def _set_mask(bits) -> int:
    return sum(1 << n for n in bits)


def _allocation_info(out: _Out, v: _Cols, adapter):
    np = v.np
    wddm2 = v.version >= InterfaceVersion.WDDM2_0
    member, ftype = ("FlagsWddm2", ALLOCFLAGS_WDDM2) if wddm2 else ("Flags", ALLOCFLAGS)
    _alloc_flags(out, v.sub(member), ftype)
    if v.has("Flags2.Value"):
        _reserved(out, v.sub("Flags2"), ALLOCFLAGS2, "ALLOCFLAGS2")
    _bank_preference(out, v.sub("HintedBank"))
    _segment_preference(out, v.sub("PreferredSegment"))

    priority = v.get("AllocationPriority")
    out.add("ALLOCINFO.PRIORITY_ZERO", v.where("AllocationPriority"), priority == 0, 0)
    size, pitch = v.get("Size"), v.get("PitchAlignedSize")
    out.add("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE", v.where("PitchAlignedSize"), (pitch != 0) & (pitch < size), pitch)
    out.add("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE", v.where("Size"), (size & 0xFFF) != 0, size)

    read = v.get("SupportedReadSegmentSet").astype(np.uint32)
    write = v.get("SupportedWriteSegmentSet").astype(np.uint32)
    effective = write if wddm2 else read | write
    system = ((effective >> np.uint32(31)) != 0) if wddm2 else np.zeros(v.count, dtype=bool)
    ended = np.zeros(v.count, dtype=bool)
    for i in range(5):
        ident = v.get(f"PreferredSegment.SegmentId{i}").astype(np.uint32)
        ended |= ident == 0
        live = ~ended
        bit = (effective >> np.where(live, ident - np.uint32(1), np.uint32(0))) & np.uint32(1)
        supported = (bit != 0) | ((ident == 31) & system)
        out.add("ALLOCINFO.PREFERRED_NOT_SUPPORTED", v.where(f"PreferredSegment.SegmentId{i}"), live & ~supported,
                ident)
    if InterfaceVersion.WDDM2_0 <= v.version < InterfaceVersion.WDDM3_2:
        out.add("ALLOCINFO.READ_SET_IGNORED", v.where("SupportedReadSegmentSet"), (read != 0) & (read != write), read)
    if adapter is not None:
        _against_adapter(out, v, adapter, wddm2, effective)


def _against_adapter(out: _Out, v: _Cols, adapter, wddm2: bool, effective):
    np = v.np
    count = adapter.segment_count
    top = 31 if wddm2 else 32  # set bits that name segment ids (bit 31 is system memory from WDDM2_0)

    def segments_where(test) -> int:
        """The set mask of the adapter's segments (ids 1..count) for which ``test(id)`` holds."""
        return _set_mask(i - 1 for i in range(1, min(count, top) + 1) if test(i))

    def any_of(word, mask: int):
        return (word & np.uint32(mask)) != 0

    unknown = _set_mask(range(count, top))
    for name in (["SupportedWriteSegmentSet"] if wddm2 else ["SupportedReadSegmentSet", "SupportedWriteSegmentSet"]) \
            + ["EvictionSegmentSet"]:
        word = v.get(name).astype(np.uint32)
        out.add("ALLOCINFO.SET_UNKNOWN_SEGMENT", v.where(name), any_of(word, unknown), word)
    eviction = v.get("EvictionSegmentSet").astype(np.uint32)
    bad = any_of(eviction, segments_where(lambda i: not adapter.is_aperture(i)))
    if wddm2:
        bad |= (eviction >> np.uint32(31)) != 0
    out.add("ALLOCINFO.EVICTION_APERTURE_ONLY", v.where("EvictionSegmentSet"), bad, eviction)
    pitched = segments_where(lambda i: adapter.has_flag(i, SegmentFlag.PitchAlignment))
    out.add("ALLOCINFO.EVICTION_PITCHALIGNED", v.where("EvictionSegmentSet"), any_of(eviction, pitched), eviction)
    if wddm2:
        big = segments_where(lambda i: adapter.has_flag(i, SegmentFlag.Use64KBPages))
        alignment = v.get("Alignment")
        out.add("ALLOCINFO.ALIGNMENT_64KB", v.where("Alignment"), any_of(effective, big) & ((alignment & 0xFFFF) != 0),
                alignment)
    pitch = v.get("PitchAlignedSize")
    can_pitch = any_of(effective, pitched)
    out.add("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED", v.where("PitchAlignedSize"), (pitch != 0) & ~can_pitch, pitch)
    out.add("ALLOCINFO.PITCHALIGNEDSIZE_MISSING", v.where("PitchAlignedSize"), (pitch == 0) & can_pitch, 0)

    hinted = v.get("HintedBank.Value")
    first = v.get("PreferredSegment.SegmentId0")
    banking = np.array([i != 0 and i <= count and adapter.has_flag(i, SegmentFlag.UseBanking) for i in range(32)])
    banks = np.array([(adapter.nb_of_banks(i) or 0) if banking[i] else 0 for i in range(32)], dtype=np.uint32)
    uses_banks = banking[first]
    out.add("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING", v.where("HintedBank.Value"), (hinted != 0) & ~uses_banks, hinted)
    limit = banks[first]
    checked = (hinted != 0) & uses_banks & (limit != 0)
    ended = np.zeros(v.count, dtype=bool)
    for i in range(4):
        bank = v.get(f"HintedBank.Bank{i}")
        ended |= bank == 0
        out.add("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE", v.where(f"HintedBank.Bank{i}"), checked & ~ended & (bank > limit),
                bank)
    if v.has("Flags2.ShareBackingStoreWithKmd"):
        not_aperture = any_of(effective, segments_where(lambda i: not adapter.is_aperture(i)))
        system = ((effective >> np.uint32(31)) != 0) if wddm2 else np.zeros(v.count, dtype=bool)
        out.add("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY", v.where("Flags2.ShareBackingStoreWithKmd"),
                v.bit("Flags2.ShareBackingStoreWithKmd") & (not_aperture | system))
