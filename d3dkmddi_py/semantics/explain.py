"""explain and field_meanings: what each leaf of a value means, in words a person reads."""
from __future__ import annotations

from functools import lru_cache

from .._numpy import numpy_module
from ..coltext import by_value, object_array

from ..layout import Leaf, record_leaves, typedef_layout
from ..errors import InvalidArgument
from ..names import ENUM_CLASSES, InterfaceVersion, known_names
from ..span import _short
from ._rules import (ALLOCINFO, BANKPREF, QUERYSEGMENTIN, READING, RULES, SEGFLAGS, SEGPREF, SUPPORTED_FROM,
                     SourceKind, dated_text, quoted, reading)
from ._view import View, coerce_layout, describe_flags, flag_names, is_reserved_name
from .adapter import Adapter, as_adapter, check_adapter
from .allocation import (ALLOCINFO_TYPE, FLAGS2_TYPE, FLAGS_TYPE, FLAGS_WDDM2_TYPE, _effective, effective_size,
                         flags_member)
from ._effective import in_force_text
from .checks import DESCRIPTOR_TYPES, check_record, reserved_sentence
from .pagewords import FLAG_WORDS, MEMBER_WORDS, said
from .preferences import (BANK_SLOTS, BANK_TYPE, SEG_SLOTS, SEGPREF_TYPES, decode_bank_preference,
                          decode_segment_preference, describe_preferences)
from .priority import decode_priority
from .segments import (DXGK_SEGMENT_ID_SYSTEMMEMORY, PAGE_SIZE, SEGFLAGS_TYPE, SEGMENT_FLAG_DESCRIPTIONS,
                       SEGMENT_FLAG_MEANINGS,
                       SegmentFlag, describe_segment_flags, describe_segment_set, power_behaviour, segment_set,
                       system_memory_reading)
from ..wording import noun, plural

# What explain() prints beside a set allocation flag: its own flag word's page's words (pagewords.FLAG_WORDS)
ALLOC_FLAG_MEANINGS = {name: FLAG_WORDS[name] for name in (FLAGS_TYPE, FLAGS_WDDM2_TYPE, FLAGS2_TYPE)}


def _size_text(n: int) -> str:
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} {noun(n, 'byte')}"


class _Meanings:
    """Collects path -> meaning for one value."""

    def __init__(self):
        self.out = {}

    def put(self, view: View, path: str, text: str):
        if view.has(path):
            self.out[view.where(path)] = text


@lru_cache(maxsize=None)
def _flag_table(type_name: str, abi: str, version: int) -> tuple:
    """((mask, flag name), ...) and the Reserved* leaf paths of a flag union at a version."""
    reserved = tuple(leaf.path for leaf in record_leaves(typedef_layout(type_name, abi, version))
                     if is_reserved_name(leaf.path))
    return tuple(flag_names(type_name, abi, version).items()), reserved


def _flag_word(word, type_name: str, abi: str, version: int, notes: dict, reserved_of, describe,
               reserved_said=None) -> dict:
    """Path -> meaning of a flag word, in the order a record's meanings come: a note per set flag (with the
    page's date where the version is before it), one per reserved leaf that is not zero, and the word's
    ``Value``.

    ``word`` is one word (an int) or a column of words (the record is the flag union itself); then
    each flag's entry is (set column, note) and the others per-row texts (None where none).
    ``reserved_of(path)``: a reserved leaf's value (or column), None where the view has no such leaf;
    ``reserved_said(path)``: what a reserved leaf's meaning quotes (default: its page's sentence).
    """
    names, reserved = _flag_table(type_name, abi, version)
    said = reserved_said or (lambda path: reserved_sentence(type_name, path))
    column = getattr(word, "ndim", 0)
    out = {}
    for mask, name in names:
        note = notes.get(name, "set") + _date_note(type_name, name, version)
        if column:
            out[name] = ((word & mask) != 0, note)
        elif word & mask:
            out[name] = note
    for path in reserved:
        value = reserved_of(path)
        if value is None:
            continue
        if column:
            out[path] = by_value(numpy_module(), value, lambda v, t=said(path): _reserved_text(v, t) if v else None)
        elif value:
            out[path] = _reserved_text(value, said(path))
    out["Value"] = describe(word, abi, version)
    return out


def _date_note(type_name: str, flag: str, version: int) -> str:
    """"; <the page's date>" for a flag set before the version its page gives (``SUPPORTED_FROM``), else ""."""
    dated = SUPPORTED_FROM.get((type_name, flag))
    return "" if dated is None or version >= InterfaceVersion[dated[0]] else "; " + dated_text(type_name, flag)


def _view_flag_word(m: _Meanings, view: View, type_name: str, notes: dict, describe, reserved_said=None) -> None:
    found = _flag_word(view.word(), type_name, view.abi, view.version, notes,
                       lambda path: view[path] if view.has(path) else None, describe, reserved_said)
    for path, text in found.items():
        m.put(view, path, text)


def _column_flag_word(layout, columns, notes: dict, describe) -> dict:
    return _flag_word(columns["Value"], layout.c_name, layout.abi, layout.version, notes,
                      lambda path: columns[path] if path in layout.by_path else None, describe)


def _reserved_text(value: int, sentence: str) -> str:
    """A reserved member that is not 0, and what its page says of it (the sentence its rule quotes)."""
    return f"reserved bits set ({value:#x}): {sentence}"


def _segflags_value(word, abi: str, version: int):
    """The meaning of a segment flag word's Value (of every row for a column): its flags, then its power
    behaviour from the version the page gives the power flags (below it the table says nothing)."""
    text = describe_segment_flags(word, abi, version)
    if not power_flags_supported(version):
        return text
    power = _power_text(word)
    return [t + p for t, p in zip(text, power)] if getattr(word, "ndim", 0) else text + power


def power_flags_supported(version: int) -> bool:
    """Whether the page's power table speaks of a flag word at this version ("Supported starting with Windows 8")."""
    return int(version) >= InterfaceVersion[SUPPORTED_FROM[(SEGFLAGS_TYPE, "PreservedDuringStandby")][0]]


def _power_text(word):
    """The power behaviour of a segment flag word (of every row for a column: by its three power bits)."""
    if getattr(word, "ndim", 0):
        np = numpy_module()
        bits = (int(SegmentFlag.PreservedDuringStandby), int(SegmentFlag.PreservedDuringHibernate),
                int(SegmentFlag.PartiallyPreservedDuringHibernate))
        combos = [sum(bit for k, bit in enumerate(bits) if i >> k & 1) for i in range(8)]
        index = sum(((word & bit) != 0).astype(np.intp) << k for k, bit in enumerate(bits))
        return object_array(np, [_power_text(w) for w in combos])[index].tolist()
    p = power_behaviour(word)
    return f"; power: {p.description}; hybrid sleep: {p.hybrid_sleep}"


def _alloc_value(type_name: str):
    """The meaning of an allocation flag word's Value: its flags' names (per row for a column)."""
    return lambda word, abi, version: describe_flags(type_name, word, abi, version, "no flags", reserved=False)


def _segflags(m: _Meanings, view: View):
    _view_flag_word(m, view, SEGFLAGS_TYPE, SEGMENT_FLAG_MEANINGS, _segflags_value)


# DXGK_QUERYSEGMENTIN.AgpFlags is [in]: the OS fills it with "properties for the available AGP aperture", so
# its meanings are what each flag is, without what the DXGK_SEGMENTFLAGS page asks of a driver.
AGP_FLAGS = quoted(QUERYSEGMENTIN, "properties for the available AGP aperture in bit-field flags")
RESERVED_MEMBER = quoted(SEGFLAGS, "This member is reserved")


def _querysegmentin(m: _Meanings, view: View):
    _member_words(m, view)
    flags = view.sub("AgpFlags", SEGFLAGS_TYPE)
    _view_flag_word(m, flags, SEGFLAGS_TYPE, SEGMENT_FLAG_DESCRIPTIONS,
                    lambda word, abi, version: f"{AGP_FLAGS}: {describe_flags(SEGFLAGS_TYPE, word, abi, version, 'none')}",
                    lambda path: RESERVED_MEMBER)


# Which of Flags and FlagsWddm2 a driver uses, in the DXGK_ALLOCATIONINFO page's words
SHOULD_USE = {"FlagsWddm2": quoted(ALLOCINFO, "Drivers that target any WDDM version >= WDDM 2.0 should use FlagsWddm2"),
              "Flags": quoted(ALLOCINFO, "drivers that target any WDDM version earlier than WDDM 2.0 should use Flags")}


def _allocflags(m: _Meanings, view: View, type_name: str, in_force: bool = True):
    if not in_force:
        member, _ = flags_member(view.version)
        m.put(view, "Value", f"{InterfaceVersion(view.version).name}: {SHOULD_USE[member]}")
        return
    _view_flag_word(m, view, type_name, ALLOC_FLAG_MEANINGS[type_name], _alloc_value(type_name))


def _segment_kind(adapter: Adapter | None, segment_id: int) -> str:
    if adapter is None or adapter.descriptor(segment_id) is None:
        return ""
    word = adapter.flags(segment_id)
    if word & SegmentFlag.Agp:
        kind = "AGP aperture"
    elif word & SegmentFlag.Aperture:
        kind = "aperture"
    else:
        kind = "memory"
    extra = [n for n, f in (("CPU visible", SegmentFlag.CpuVisible), ("banks", SegmentFlag.UseBanking),
                            ("pitch aligned", SegmentFlag.PitchAlignment), ("64 KB pages", SegmentFlag.Use64KBPages))
             if word & f]
    return " (" + ", ".join([kind] + extra) + ")"


def _segment_id_text(view: View, ident: int, adapter) -> str:
    if ident == DXGK_SEGMENT_ID_SYSTEMMEMORY and view.version >= InterfaceVersion.WDDM2_0:
        return f"segment 31 (DXGK_SEGMENT_ID_SYSTEMMEMORY; {reading('system memory from WDDM v2')})"
    bit31 = system_memory_reading(view.version) if ident == DXGK_SEGMENT_ID_SYSTEMMEMORY else ""
    if adapter is not None and adapter.descriptor(ident) is None:
        return f"segment {ident} (the adapter has no such segment" + (f"; {bit31})" if bit31 else ")")
    return f"segment {ident}{_segment_kind(adapter, ident)}" + (f" ({bit31})" if bit31 else "")


def _slot_meanings(m: _Meanings, view: View, slots: int, id_field: str, *, used, directions, no_id: str):
    """Meanings of the id and direction of every slot of a bank or segment preference word: an id is a
    preference of its slot's priority (also below a zero id, which the pages neither use nor rule out);
    ``directions(i)``: the two texts of Direction i."""
    zero = None
    for i in range(slots):
        ident, direction = view[f"{id_field}{i}"], view[f"Direction{i}"]
        if ident:
            after = "" if zero is None else f" (below {id_field}{zero} = 0)"
            m.put(view, f"{id_field}{i}", f"{used(ident)}, priority {i + 1}{after}")
            m.put(view, f"Direction{i}", directions(i)[direction])
            continue
        if zero is None:
            zero = i
            m.put(view, f"{id_field}{i}", no_id)
        if direction:
            m.put(view, f"Direction{i}", f"1, for {id_field}{i} = 0 ({no_id})")


def _after_zero(prefs, id_field: str) -> str:
    """The slots from the first zero id on that hold bits, as "; from the first zero id on: Bank2 = 3"."""
    shown = [f"{id_field}{s.index} = {s.id}" + (f", Direction{s.index} = 1" if s.direction else "")
             for s in prefs.after_end]
    return "; from the first zero id on: " + ", ".join(shown) if shown else ""


# DXGK_SEGMENTBANKPREFERENCE.DirectionN (0, 1) and D3DDDI_SEGMENTPREFERENCE.DirectionN (0 per slot;
# the page describes no other value), in the pages' words
BANK_DIRECTIONS = (quoted(BANKPREF, "a bottom-up search (that is, low address to high address)"),
                   quoted(BANKPREF, "a top-bottom search (that is, high address to low address)"))
NO_BANK = quoted(BANKPREF, "no preference")
SEGMENT_DIRECTIONS = tuple((quoted(SEGPREF, f"VidMm chooses which end of SegmentId{i} to do the allocation from"),
                            "1 (the page describes only 0)") for i in range(SEG_SLOTS))
NO_SEGMENT = quoted(SEGPREF, "no preferred segment")


def _bankpref(m: _Meanings, view: View, banks_of: str = "", note: str = ""):
    prefs = decode_bank_preference(view.word())
    _slot_meanings(m, view, BANK_SLOTS, "Bank", used=lambda bank: f"bank {bank}{banks_of}",
                   directions=lambda i: BANK_DIRECTIONS, no_id=NO_BANK)
    m.put(view, "Value", describe_preferences(prefs, "bank") + _after_zero(prefs, "Bank") + note)


def _segpref(m: _Meanings, view: View, adapter=None):
    prefs = decode_segment_preference(view.word())
    _slot_meanings(m, view, SEG_SLOTS, "SegmentId", used=lambda ident: _segment_id_text(view, ident, adapter),
                   directions=lambda i: SEGMENT_DIRECTIONS[i], no_id=NO_SEGMENT)
    if view.get("Reserved", 0):
        m.put(view, "Reserved", _reserved_text(view["Reserved"], RULES["SEGPREF.RESERVED_NONZERO"].sentence))
    parts = [f"{_segment_id_text(view, e.segment_id, adapter)}"
             + (", Direction 1" if e.direction else "") for e in prefs.entries]
    m.put(view, "Value", ("; ".join(parts) if parts else "no segment preference") + _after_zero(prefs, "SegmentId"))


def _set_text(view: View, mask: int, adapter) -> str:
    s = segment_set(mask, target=(view.abi, view.version))
    bit31 = system_memory_reading(view.version) if mask >> 31 & 1 else ""
    if adapter is None or not s.ids:
        return describe_segment_set(s) + (f" ({bit31})" if bit31 else "")
    named = ", ".join(f"{i}{_segment_kind(adapter, i)}" if adapter.descriptor(i) is not None else f"{i} (no such segment)"
                      for i in s.ids)
    text = f"{noun(len(s.ids), 'segment')} {named}"
    return text + (" (+ system memory)" if s.system_memory else "") + (f" ({bit31})" if bit31 else "")


# Descriptor members in their own pages' words (a page's words for another descriptor would say what that
# page does not); DXGK_SEGMENTDESCRIPTOR5 has no page, so DXGK_SEGMENTDESCRIPTOR4's words are only a reading of it.
_ONE_AND_THREE = ("DXGK_SEGMENTDESCRIPTOR", "DXGK_SEGMENTDESCRIPTOR3")
DESCRIPTOR_WORDS = {
    **{name: {
        "agp size": said(name, "the video memory manager allocates as much aperture space as possible, so this "
                               "member is ignored"),
        "commit aperture": said(name, "The maximum number of bytes that can be committed to the segment"),
        "commit memory": said(name, "For a memory segment, the commit limit is always the same as the size of the "
                                    "segment"),
        "banks": said(name, "The number of banks in the segment, if banking is used"),
        "bank table": said(name, "An array of values that indicates the ranges that delimit each bank in the segment"),
        "bank table only": said(name, "The driver specifies this array only if it also sets the UseBanking bit-field "
                                      "flag in the Flags member"),
    } for name in _ONE_AND_THREE},
    "DXGK_SEGMENTDESCRIPTOR4": {
        "commit aperture": said("DXGK_SEGMENTDESCRIPTOR4", "The maximum number of bytes that can be committed to this "
                                                           "segment"),
        "commit memory": said("DXGK_SEGMENTDESCRIPTOR4", "This value applies to the aperture segment only"),
        "host off": said("DXGK_SEGMENTDESCRIPTOR4", "If Flags.SupportsCpuHostAperture==FALSE and the segment is CPU "
                                                    "visible, this will be the CPU physical base address of the "
                                                    "segment"),
        "host on": said("DXGK_SEGMENTDESCRIPTOR4", "If Flags.SupportsCpuHostAperture==TRUE, this will have the CPU "
                                                   "address and size of the CPUHostAperture"),
        "no vpr limit": said("DXGK_SEGMENTDESCRIPTOR4", "A value of zero indicates support for an infinite number"),
        "no reserve": said("DXGK_SEGMENTDESCRIPTOR4", "A value of zero indicates no reserve"),
    },
}
PURGED = {"DXGK_SEGMENTDESCRIPTOR3": said("DXGK_SEGMENTDESCRIPTOR3", "For segments that are partially composed of "
                                                                   "system memory, all allocations that begin after "
                                                                   "this address are purged in a transition to a "
                                                                   "hibernate state"),
          "DXGK_SEGMENTDESCRIPTOR4": said("DXGK_SEGMENTDESCRIPTOR4", "For segments that are partially composed of "
                                                                   "system memory, all allocations ending after this "
                                                                   "address are purged during hibernate")}


def _descriptor4_words(view: View, text: str) -> str:
    """The DXGK_SEGMENTDESCRIPTOR4 page's words, labelled as a reading for DXGK_SEGMENTDESCRIPTOR5 (no page)."""
    return text if view.type_name == "DXGK_SEGMENTDESCRIPTOR4" else reading(f"as DXGK_SEGMENTDESCRIPTOR4: {text}")


def _descriptor(m: _Meanings, view: View):
    _segflags(m, view.sub("Flags", SEGFLAGS_TYPE))
    name = view.type_name
    words = DESCRIPTOR_WORDS.get(name if name != "DXGK_SEGMENTDESCRIPTOR5" else "DXGK_SEGMENTDESCRIPTOR4")
    size = view.get("Size", 0)
    agp = bool(view.get("Flags.Agp", 0))
    aperture = bool(view.get("Flags.Aperture", 0)) or agp
    m.put(view, "Size", _size_text(size) + (f"; AGP: {words['agp size']}" if agp and "agp size" in words else ""))
    if view.has("CommitLimit"):
        said_here = words["commit aperture" if aperture else "commit memory"]
        m.put(view, "CommitLimit", f"{_size_text(view['CommitLimit'])}: {said_here}")
    if view.has("NbOfBanks"):
        if view.get("Flags.UseBanking", 0):
            banks = view["NbOfBanks"]
            m.put(view, "NbOfBanks", f"{plural(banks, 'bank')}, ids 1..{banks}: {words['banks']}")
            m.put(view, "pBankRangeTable", words["bank table"])
        else:
            m.put(view, "NbOfBanks", f"UseBanking is not set; {words['banks']}")
            m.put(view, "pBankRangeTable", f"UseBanking is not set; {words['bank table only']}")
    if view.get("SystemMemoryEndAddress", 0):
        end = view["SystemMemoryEndAddress"]
        m.put(view, "SystemMemoryEndAddress", f"{end:#x}: {PURGED.get(name) or _descriptor4_words(view, PURGED['DXGK_SEGMENTDESCRIPTOR4'])}")
    if view.get("Reserved", 0):
        m.put(view, "Reserved", _reserved_text(view["Reserved"], RULES["DESC.RESERVED_NONZERO"].sentence))
    if view.has("SegmentType"):
        m.put(view, "SegmentType", _enum_name("DXGK_SEGMENTTYPE", view["SegmentType"]))
    if view.has("SlabSize"):
        m.put(view, "SlabSize", _enum_name("DXGK_PAGESIZE", view["SlabSize"]))
    if view.has("CpuHostAperture.PhysicalAddress"):  # one union: the arm the flag says is in force
        if view.get("Flags.SupportsCpuHostAperture", 0):
            m.put(view, "CpuHostAperture.PhysicalAddress", _descriptor4_words(
                view, f"{words['host on']}; {MEMBER_WORDS['DXGK_CPUHOSTAPERTURE']['PhysicalAddress']}"))
            m.put(view, "CpuHostAperture.SizeInPages", _descriptor4_words(
                view, f"{view['CpuHostAperture.SizeInPages']} {MEMBER_WORDS['DXGK_CPUHOSTAPERTURE']['SizeInPages']}"))
        else:
            m.put(view, "CpuTranslatedAddress.QuadPart", _descriptor4_words(view, words["host off"]))
        for member, key in (("NumVprSupported", "no vpr limit"), ("VprReserveSize", "no reserve")):
            if view.has(member) and not view[member]:
                m.put(view, member, _descriptor4_words(view, words[key]))
        for member, text in MEMBER_WORDS["DXGK_SEGMENTDESCRIPTOR4"].items():
            if view.has(member) and view.where(member) not in m.out:
                m.put(view, member, _descriptor4_words(view, text))
    _member_words(m, view)


def _member_words(m: _Meanings, view: View, type_name: str | None = None):
    """The page's words of the members of a record (``pagewords.MEMBER_WORDS``) that have no other meaning yet."""
    for member, text in MEMBER_WORDS.get(type_name or view.type_name, {}).items():
        if view.has(member) and view.where(member) not in m.out:
            m.put(view, member, text)


def _enum_name(enum_name: str, value: int) -> str:
    try:
        return ENUM_CLASSES[enum_name](value).name
    except ValueError:
        return f"{value} (not a {enum_name} value)"


# One UINT, two names: the page dates both from WDDM v2, the kit has the union at every version.
BOTH_FROM_WDDM2 = quoted(ALLOCINFO, "Support for this member started with Windows 10 and the WDDM v2.")
RENAMING_OR_INDEX = {
    name: (f"{said_first}; one UINT with {other} (the kit's union, at every version); the page dates both from "
           f"WDDM v2: \"{BOTH_FROM_WDDM2}\"; neither source says which one a driver means")
    for name, other, said_first in (
        ("MaximumRenamingListLength", "PhysicalAdapterIndex",
         quoted(ALLOCINFO, "The maximum length of the renaming list for the allocation")),
        ("PhysicalAdapterIndex", "MaximumRenamingListLength", quoted(ALLOCINFO, "The index of the physical adapter")))}
# The read and write sets from WDDM v2, in the page's words (during surface creation, not at every use)
READ_SET_IGNORED = quoted(ALLOCINFO, "During surface creation the video memory manager will ignore the "
                                     "SupportedReadSegmentSet value")
WRITE_SET_USED = quoted(ALLOCINFO, "use only the segment set provide by SupportedWriteSegmentSet")
SETS_FOR = {name: quoted(ALLOCINFO, f"Segment identifiers that the display miniport driver can set in the "
                                    f"PreferredSegment member for {what} operations")
            for name, what in (("SupportedReadSegmentSet", "read"), ("SupportedWriteSegmentSet", "write"))}
NO_EVICTION = quoted(ALLOCINFO, "If the driver specifies 0, the video memory manager calls the driver to transfer "
                                "the content of an allocation directly to paged-locked system memory")


def _allocinfo(m: _Meanings, view: View, adapter):
    member, ftype = flags_member(view.version)
    other = "Flags" if member == "FlagsWddm2" else "FlagsWddm2"
    _allocflags(m, view.sub(member, ftype), ftype)
    if any(p.startswith(other + ".") for p in view.leaves):
        _allocflags(m, view.sub(other, FLAGS_TYPE if other == "Flags" else FLAGS_WDDM2_TYPE),
                    FLAGS_TYPE if other == "Flags" else FLAGS_WDDM2_TYPE, in_force=False)
    if view.has("Flags2.Value"):
        _allocflags(m, view.sub("Flags2", FLAGS2_TYPE), FLAGS2_TYPE)
    first = view["PreferredSegment.SegmentId0"]
    banks_of, note = "", ""
    if adapter is not None and adapter.descriptor(first) is not None:
        n = adapter.nb_of_banks(first)
        banks_of = f" of segment {first}" + (f" ({n} {noun(n, 'bank')})" if n else "")
    if view["HintedBank.Value"] and adapter is not None and not adapter.has_flag(first, SegmentFlag.UseBanking):
        whose = (f"segment {first}, which does not use banking" if adapter.descriptor(first) is not None else
                 "PreferredSegment.SegmentId0 = 0" if not first else f"segment {first}, which the adapter does not have")
        note = f"; the video memory manager uses the banking information of the most preferred segment: {whose}"
    _bankpref(m, view.sub("HintedBank", BANK_TYPE), banks_of, note)
    _segpref(m, view.sub("PreferredSegment", SEGPREF_TYPES[0]), adapter)
    size = view["Size"]
    eff = effective_size(size, view.abi)
    m.put(view, "Size", f"{_size_text(size)}" + ("" if eff == size else
                                                 f"; expanded to {eff:#x}, a multiple of the native host page size"))
    pitch = view["PitchAlignedSize"]
    m.put(view, "PitchAlignedSize", "0: what the driver should set if the allocation is not supported in a "
                                    "pitch-aligned segment" if not pitch else
          f"{_size_text(pitch)} when it is located in a pitch-aligned segment")
    align = view["Alignment"]
    if align:  # the page gives 0 no meaning
        m.put(view, "Alignment", f"{_size_text(align)} alignment")
    if "DXGK_PAGESIZE" in known_names(view.abi, view.version):  # the page-size arm's codes exist from here on
        for name in ("MinimumPageSize", "RecommendedPageSize"):
            m.put(view, name, f"as a DXGK_PAGESIZE code: {_enum_name('DXGK_PAGESIZE', view.get(name, 0))} "
                              f"(same bytes as Alignment)")
    wddm2 = view.version >= InterfaceVersion.WDDM2_0
    read, write = view["SupportedReadSegmentSet"], view["SupportedWriteSegmentSet"]
    m.put(view, "SupportedReadSegmentSet", _set_text(view, read, adapter) +
          (f"; from WDDM v2: {READ_SET_IGNORED}" if wddm2 else f"; {SETS_FOR['SupportedReadSegmentSet']}"))
    m.put(view, "MmuSet", "the same word as SupportedReadSegmentSet (the 26100 kit's union, with no version guard)")
    m.put(view, "SupportedWriteSegmentSet", _set_text(view, write, adapter) +
          (f"; from WDDM v2, during surface creation the video memory manager will {WRITE_SET_USED}" if wddm2 else
           f"; {SETS_FOR['SupportedWriteSegmentSet']}"))
    m.put(view, "EvictionSegmentSet", _set_text(view, view["EvictionSegmentSet"], adapter) +
          ("" if view["EvictionSegmentSet"] else f": {NO_EVICTION}"))
    for name, text in RENAMING_OR_INDEX.items():
        m.put(view, name, text)
    m.put(view, "AllocationPriority", str(decode_priority(view["AllocationPriority"])))
    _member_words(m, view)


# The other documented records, in their pages' words; a word that depends on the value is chosen by it
USAGE_RESERVED = said("DXGK_ALLOCATIONUSAGEINFO1", "This member is reserved and should be set to zero")
USAGE_FORMAT = {False: said("DXGK_ALLOCATIONUSAGEINFO1", "indicates the pixel format of the allocation"),
                True: said("DXGK_ALLOCATIONUSAGEINFO1", "A private format value for the allocation")}
LIST_WORDS = {
    "written": said("DXGK_ALLOCATIONLIST", "the allocation can be written to anywhere in the DMA buffer"),
    "segment": said("DXGK_ALLOCATIONLIST", "the identifier of a segment that the allocation was last paged in at"),
    "no segment": said("DXGK_ALLOCATIONLIST", "no pre-patching information is available"),
    "reserved": said("DXGK_ALLOCATIONLIST", "Reserved. This member should be set to 0."),
    "address": said("DXGK_ALLOCATIONLIST", "indicates the physical address, within the segment that SegmentId "
                                           "specifies, where the allocation was last paged-in at"),
    "no address": said("DXGK_ALLOCATIONLIST", "This member is set to zero if no pre-patching information is "
                                              "available"),
}
NON_LDA = said("DXGK_QUERYSEGMENTIN4", "Zero for non-LDA configurations")
PAGING_WORDS = {name: {
    "segment": said(name, "The identifier of the segment that the video memory manager should allocate the paging "
                          "buffer from"),
    "no segment": said(name, "as a contiguous write-combined memory block (if PagingBufferSegmentId is set to 0)"),
    "no private data": said(name, "If the driver specifies zero for PagingBufferPrivateDataSize, no memory is "
                                  "allocated for the private data structure"),
} for name in ("DXGK_QUERYSEGMENTOUT", "DXGK_QUERYSEGMENTOUT3")}


def _usageinfo1(m: _Meanings, view: View):
    words = FLAG_WORDS["DXGK_ALLOCATIONUSAGEINFO1"]
    set_flags = [name for name in words if view.get(f"Flags.{name}", 0)]
    for name in set_flags:
        m.put(view, f"Flags.{name}", words[name])
    if view.get("Flags.Reserved", 0):
        m.put(view, "Flags.Reserved", _reserved_text(view["Flags.Reserved"], USAGE_RESERVED))
    m.put(view, "Flags.Value", " | ".join(set_flags) or "no flags")
    private = bool(view.get("Flags.PrivateFormat", 0))  # which arm of the Format union the flag says is in force
    m.put(view, "PrivateFormat" if private else "Format", USAGE_FORMAT[private])
    _member_words(m, view, "DXGK_ALLOCATIONUSAGEINFO1")


def _usagehint(m: _Meanings, view: View):
    _member_words(m, view)
    _usageinfo1(m, view.sub("v1", "DXGK_ALLOCATIONUSAGEINFO1"))


def _allocationlist(m: _Meanings, view: View):
    if view["WriteOperation"]:
        m.put(view, "WriteOperation", LIST_WORDS["written"])
    m.put(view, "SegmentId", LIST_WORDS["segment" if view["SegmentId"] else "no segment"])
    if view["Reserved"]:
        m.put(view, "Reserved", _reserved_text(view["Reserved"], LIST_WORDS["reserved"]))
    m.put(view, "PhysicalAddress.QuadPart", LIST_WORDS["address" if view["PhysicalAddress.QuadPart"] else "no address"])
    _member_words(m, view)


def _querysegment(m: _Meanings, view: View):
    if view.type_name in PAGING_WORDS:
        words = PAGING_WORDS[view.type_name]
        m.put(view, "PagingBufferSegmentId", words["segment" if view["PagingBufferSegmentId"] else "no segment"])
        if not view["PagingBufferPrivateDataSize"]:
            m.put(view, "PagingBufferPrivateDataSize", words["no private data"])
    if view.type_name == "DXGK_CPUHOSTAPERTURE":
        m.put(view, "SizeInPages", f"{view['SizeInPages']} {MEMBER_WORDS['DXGK_CPUHOSTAPERTURE']['SizeInPages']}")
    if view.type_name == "DXGK_QUERYSEGMENTIN4" and not view["PhysicalAdapterIndex"]:
        m.put(view, "PhysicalAdapterIndex", f"{MEMBER_WORDS['DXGK_QUERYSEGMENTIN4']['PhysicalAdapterIndex']}; {NON_LDA}")
    _member_words(m, view)


# C type name -> the function that puts the meanings of one record of it (no dispatch ladder)
MEANINGS = {
    SEGFLAGS_TYPE: lambda m, view, adapter: _segflags(m, view),
    **{name: (lambda m, view, adapter: _descriptor(m, view)) for name in DESCRIPTOR_TYPES},
    BANK_TYPE: lambda m, view, adapter: _bankpref(m, view),
    SEGPREF_TYPES[0]: _segpref,
    **{name: (lambda m, view, adapter, n=name: _allocflags(m, view, n))
       for name in (FLAGS_TYPE, FLAGS_WDDM2_TYPE, FLAGS2_TYPE)},
    ALLOCINFO_TYPE: _allocinfo,
    "DXGK_QUERYSEGMENTIN": lambda m, view, adapter: _querysegmentin(m, view),
    "DXGK_ALLOCATIONUSAGEINFO1": lambda m, view, adapter: _usageinfo1(m, view),
    "DXGK_ALLOCATIONUSAGEHINT": lambda m, view, adapter: _usagehint(m, view),
    "DXGK_ALLOCATIONLIST": lambda m, view, adapter: _allocationlist(m, view),
    **{name: (lambda m, view, adapter: _querysegment(m, view))
       for name in ("DXGK_CPUHOSTAPERTURE", "DXGK_QUERYSEGMENTIN4", "DXGK_QUERYSEGMENTOUT", "DXGK_QUERYSEGMENTOUT3",
                    "DXGK_QUERYSEGMENTOUT4")},
    "DXGK_QUERYSEGMENTMEMORYSTATE": lambda m, view, adapter: _member_words(m, view),
}


def _meanings(view: View, adapter) -> dict:
    as_adapter(adapter)
    m = _Meanings()
    put = MEANINGS.get(view.type_name)
    if put is not None:
        put(m, view, adapter)
    return {k: v for k, v in m.out.items() if v}


def meanings_of(layout, data: bytes, adapter=None) -> dict:
    """Leaf path -> meaning for one record given as its TypeLayout and bytes."""
    if layout.c_name not in MEANINGS:
        return {}
    return _meanings(View.of(layout, data), adapter)


def column_meanings(layout, columns, np, adapter=None) -> dict | None:
    """``meanings_of`` of every row at once, in the order a record's meanings come: leaf path -> per
    row its meaning or None, or (bool column, text) for a meaning that is the same wherever it is
    given; None for a type whose meanings are worked out record by record.

    A flag word's meanings are per set bit (one note each), per reserved value and per word (the
    set flags' names, by 256-entry tables of a byte's flags), so no row is read on its own.
    """
    put = _COLUMN_MEANINGS.get(layout.c_name)
    return None if put is None else put(layout, columns, np)


def _segflags_columns(layout, columns, np) -> dict:
    return _column_flag_word(layout, columns, SEGMENT_FLAG_MEANINGS, _segflags_value)


def _allocflags_columns(layout, columns, np) -> dict:
    return _column_flag_word(layout, columns, ALLOC_FLAG_MEANINGS[layout.c_name], _alloc_value(layout.c_name))


# C type name -> the column form of its MEANINGS entry, where there is one (flag words)
_COLUMN_MEANINGS = {
    SEGFLAGS_TYPE: _segflags_columns,
    **{name: _allocflags_columns for name in (FLAGS_TYPE, FLAGS_WDDM2_TYPE, FLAGS2_TYPE)},
}


def field_meanings(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None) -> dict:
    """Leaf dotted path -> short meaning, for the leaves that have one (same arguments as ``check``)."""
    layout, data = coerce_layout(value, type_name, target)
    return _meanings(View.of(layout, data), adapter)


def _hidden(leaf: Leaf, view: View, value: int) -> bool:
    """Leaves explain() folds away: zero one-bit flags and the halves of a LARGE_INTEGER."""
    last = leaf.path.rsplit(".", 1)[-1]
    if leaf.is_bitfield and leaf.bit_width == 1 and value == 0:
        return True
    return last in ("LowPart", "HighPart")


def explain(value, type_name: str | None = None, *, target=None, adapter: Adapter | None = None) -> str:
    """Every field with its value and meaning, then every finding with the sentence it enforces.

    One-bit flags that are 0 and the LowPart/HighPart halves of LARGE_INTEGERs are folded away
    (each flag word's Value line names the flags that are set; QuadPart shows the address).
    """
    if isinstance(value, Adapter):
        return _explain_adapter(value)
    layout, data = coerce_layout(value, type_name, target)
    view = View.of(layout, data)
    meanings = _meanings(view, adapter)
    findings = check_record(layout, data, adapter)
    lines = [f"{layout.c_name} at {layout.label}, {plural(len(data), 'byte')}"]
    width = max((len(leaf.path) for leaf in layout.leaves), default=0)
    for leaf in layout.leaves:
        v = view[leaf.path]
        if _hidden(leaf, view, v):
            continue
        shown = f"{v:#x}" if v >= 0 else f"{v} ({v & ((1 << leaf.bit_width) - 1):#x})"
        if v > 9:
            shown += f" ({v})"
        text = meanings.get(leaf.path)
        if layout.kind == "enum":  # the one leaf of an enum is the enum itself: name its enumerator
            text = _enum_name(layout.c_name, v)
        lines.append(f"  {leaf.path or layout.c_name:<{width}} = {shown}" + (f"  {text}" if text else ""))
    if layout.c_name == ALLOCINFO_TYPE:
        lines.extend(_allocinfo_notes(view))
    lines.append(_findings_text(findings))
    return "\n".join(lines)


def _allocinfo_notes(view: View) -> list:
    """What the layout alone does not show: which flag view and which set are in force, and Flags2."""
    member, ftype = flags_member(view.version)
    eff = _effective(view)
    notes = [f"  note: {member} ({ftype}) is read at {InterfaceVersion(view.version).name}: {SHOULD_USE[member]}",
             f"  note: the supported set in force is {in_force_text(view.version)}"
             + ("" if view.version < InterfaceVersion.WDDM2_0 else f"; {eff.note}")]
    if not view.has("Flags2.Value"):
        where = "before WDDM3_0" if view.version < InterfaceVersion.WDDM3_0 else "on 32-bit targets"
        notes.append(f"  note: no Flags2 here: it exists only from WDDM3_0 on 64-bit targets (none {where})")
    return notes


def _findings_text(findings) -> str:
    if not findings:
        return "No findings."
    out = [f"Findings ({len(findings)}):"]
    for f in findings:
        out.append(f"  {f.severity.value.upper()} {f.rule_id} at {f.field} = {f.value:#x}: {f.message}")
        out.append(f"    \"{f.reference.sentence}\"")
        rule = RULES.get(f.rule_id)
        out.append(f"    {_where(rule.source) if rule is not None else f.reference.page}")
    return "\n".join(out)


def _where(source) -> str:
    """A source's citation, with its note when it is not the current page (an earlier copy's says it)."""
    if source.kind is SourceKind.EARLIER_PAGE:
        return source.citation
    return source.where + (f" ({source.note})" if source.note else "")


def _explain_adapter(adapter: Adapter) -> str:
    lines = [f"Adapter at {adapter.target.label}, {plural(adapter.segment_count, 'segment')}"]
    for i, d in zip(adapter.segment_ids, adapter.segments):
        word = adapter.flags(i)
        version = int(adapter.interface_version)
        power = f"; power: {power_behaviour(word).description}" if power_flags_supported(version) else ""
        lines.append(f"  segment {i}: {type(d)._c_name_}, {_size_text(d.Size)}, Flags = {word:#010x} "
                     f"({describe_segment_flags(word, adapter.abi, version)}){power}")
    lines.append(_findings_text(check_adapter(adapter)))
    return "\n".join(lines)


def rule_text(rule_id: str) -> str:
    """One rule as a person reads it: id, severity, predicate, sentence and page."""
    r = RULES.get(rule_id) if isinstance(rule_id, str) else None
    if r is None:
        raise InvalidArgument(f"rule_id {_short(rule_id)} is not a rule id; semantics.RULES lists them "
                              f"(e.g. {next(iter(RULES))})")
    lines = [f"{r.rule_id} ({r.severity.value}): {r.summary}", f"  \"{r.sentence}\"", f"  {_where(r.source)}"]
    if r.reading:
        lines.append(f"  {READING} {r.reading}")
    for label, quotes in (("also", r.also), ("a warning because", (r.softened_by,) if r.softened_by else ())):
        for q in quotes:
            lines += [f"  {label}: \"{q.text}\"", f"    {_where(q.source)}"]
    return "\n".join(lines)


__all__ = ["explain", "field_meanings", "rule_text", "ALLOC_FLAG_MEANINGS", "PAGE_SIZE"]
