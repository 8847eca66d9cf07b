"""Bank preferences (DXGK_SEGMENTBANKPREFERENCE) and segment preferences (D3DDDI_SEGMENTPREFERENCE).

Both are ordered lists packed into one UINT, the highest priority first; an identifier of zero is
no preference.  ``decode_*`` returns the slots up to the first zero identifier and, apart, whatever
the word holds after it (never dropped silently: the pages give fewer preferences as the lower
priority ones set to zero and do not say what a preference below a zero means); ``build_*`` packs a
list and refuses anything the word cannot mean.
"""
from __future__ import annotations

from .._records import dataclass
from .._enums import NamedIntEnum
from ..errors import InvalidArgument, InvalidFieldType, InvalidFieldValue, bad_argument, integer_argument, items_argument
from ._view import word_of
from .checks import preference_shape

BANK_TYPE = "DXGK_SEGMENTBANKPREFERENCE"
SEGPREF_TYPES = ("D3DDDI_SEGMENTPREFERENCE", "DXGK_SEGMENTPREFERENCE")
BANK_SLOTS, BANK_ID_BITS = preference_shape(BANK_TYPE, "Bank")  # Bank0..3: 7-bit id + 1-bit direction
SEG_SLOTS, SEG_ID_BITS = preference_shape(SEGPREF_TYPES[0], "SegmentId")  # 5 of 5 + 1 bits, 2 reserved
SEGPREF_RESERVED_MASK = (0xFFFFFFFF << (SEG_SLOTS * (SEG_ID_BITS + 1))) & 0xFFFFFFFF


class BankDirection(NamedIntEnum):
    """How a preferred bank is scanned for free memory (DXGK_SEGMENTBANKPREFERENCE.DirectionN): the page's
    "bottom-up search" and "top-bottom search"."""

    BOTTOM_UP = 0  # low address to high address
    TOP_DOWN = 1  # high address to low address


class SegmentDirection(NamedIntEnum):
    """D3DDDI_SEGMENTPREFERENCE.DirectionN.

    The page (current and earlier copy) describes only 0: the video memory manager chooses which end
    of the segment to allocate from.  ``TOP_DOWN`` is the package's name for 1, which no source at
    hand describes.
    """

    VIDMM_CHOOSES = 0
    TOP_DOWN = 1


@dataclass(frozen=True)
class BankPreferenceEntry:
    bank: int  # one-based bank id, 1..127
    direction: BankDirection = BankDirection.BOTTOM_UP

    def __post_init__(self):  # a user's entry; the decoder builds its own with _new
        integer_argument(self.bank, "BankPreferenceEntry: bank", 1, (1 << BANK_ID_BITS) - 1)
        integer_argument(self.direction, "BankPreferenceEntry: direction", 0, 1)

    def __str__(self) -> str:
        return f"bank {self.bank}, {'top-bottom' if self.direction else 'bottom-up'}"


@dataclass(frozen=True)
class SegmentPreferenceEntry:
    segment_id: int  # 1..31
    direction: SegmentDirection = SegmentDirection.VIDMM_CHOOSES

    def __post_init__(self):  # a user's entry; the decoder builds its own with _new
        integer_argument(self.segment_id, "SegmentPreferenceEntry: segment_id", 1, (1 << SEG_ID_BITS) - 1)
        integer_argument(self.direction, "SegmentPreferenceEntry: direction", 0, 1)

    def __str__(self) -> str:
        return f"segment {self.segment_id}, {'Direction 1' if self.direction else 'VidMm chooses the end'}"


@dataclass(frozen=True)
class Slot:
    """One raw slot of a preference word: its index and the id and direction bits it holds."""

    index: int
    id: int
    direction: int

    def __post_init__(self):  # a user's slot; the decoder builds its own with _new
        integer_argument(self.index, "Slot: index", 0, max(BANK_SLOTS, SEG_SLOTS) - 1)
        integer_argument(self.id, "Slot: id", 0, (1 << max(BANK_ID_BITS, SEG_ID_BITS)) - 1)
        integer_argument(self.direction, "Slot: direction", 0, 1)


@dataclass(frozen=True)
class Preferences:
    """A decoded preference word.

    ``entries`` is the slots before the first zero id (the pages give fewer preferences as the lower
    priority ones set to zero); ``after_end`` lists the slots past that point that still hold bits
    (id or direction), which the pages neither use nor rule out;
    ``reserved`` is the reserved bits of a segment preference (0 for bank preferences).
    """

    value: int
    entries: tuple
    after_end: tuple = ()
    reserved: int = 0

    def __post_init__(self):
        """A user's Preferences must be what one of the decoders gives for its value (the decoders build theirs
        with _new)."""
        value = integer_argument(self.value, "Preferences: value", 0, 0xFFFFFFFF)
        for name, kind, accepted in (("entries", (BankPreferenceEntry, SegmentPreferenceEntry),
                                      "a tuple of BankPreferenceEntry or of SegmentPreferenceEntry"),
                                     ("after_end", Slot, "a tuple of Slot")):
            if not isinstance(getattr(self, name), tuple):
                raise bad_argument(f"Preferences: {name}", getattr(self, name), accepted)
            items_argument(getattr(self, name), f"Preferences: {name}", kind, accepted)
        integer_argument(self.reserved, "Preferences: reserved", 0, 0xFFFFFFFF)
        bank, segment = decode_bank_preference(value), decode_segment_preference(value)
        if self not in (bank, segment):
            raise InvalidArgument(f"Preferences: {value:#x} is ({describe_preferences(bank, 'bank')}) as a bank "
                                  f"preference and ({describe_preferences(segment, 'segment')}) as a segment "
                                  f"preference, not ({describe_preferences(self, 'given')}) (its slots after the first "
                                  f"zero id and reserved bits as decoded too): decode_bank_preference or "
                                  f"decode_segment_preference gives them")

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index):
        return self.entries[index]


def _slots(value: int, count: int, id_bits: int):
    stride = id_bits + 1
    for i in range(count):
        word = value >> (i * stride)
        yield Slot._new(i, word & ((1 << id_bits) - 1), (word >> id_bits) & 1)


def _decode(value: int, count: int, id_bits: int, make, reserved: int) -> Preferences:
    entries, after_end, ended = [], [], False
    for slot in _slots(value, count, id_bits):
        if slot.id == 0:
            ended = True
        if ended:
            if slot.id or slot.direction:
                after_end.append(slot)
        else:
            entries.append(make(slot))
    return Preferences._new(value, tuple(entries), tuple(after_end), reserved)


def decode_bank_preference(value) -> Preferences:
    """HintedBank as (bank, direction) entries, highest priority first, up to the first zero id."""
    word = word_of(value, (BANK_TYPE,))
    return _decode(word, BANK_SLOTS, BANK_ID_BITS,
                   lambda s: BankPreferenceEntry._new(s.id, BankDirection(s.direction)), 0)


def decode_segment_preference(value) -> Preferences:
    """PreferredSegment as (segment id, direction) entries, highest priority first, up to the first 0."""
    word = word_of(value, SEGPREF_TYPES)
    return _decode(word, SEG_SLOTS, SEG_ID_BITS,
                   lambda s: SegmentPreferenceEntry._new(s.id, SegmentDirection(s.direction)),
                   word & SEGPREF_RESERVED_MASK)


def _entry_pair(item, entry_cls, id_attr):
    if isinstance(item, entry_cls):
        return getattr(item, id_attr), int(item.direction)
    if isinstance(item, tuple) and len(item) == 2:
        return item
    return item, 0


def _build(entries, *, type_name, id_field, max_slots, id_bits, entry_cls, id_attr, what) -> int:
    if isinstance(entries, (str, bytes, dict)) or not hasattr(entries, "__iter__"):
        raise InvalidFieldType(type_name, "entries", entries, f"a list of at most {max_slots} {what} ids or "
                               f"(id, direction) pairs", f"is a {type(entries).__name__}")
    items = list(entries)
    if len(items) > max_slots:
        raise InvalidFieldValue(type_name, f"{id_field}{max_slots}", items, f"at most {max_slots} entries",
                                f"has {len(items)} entries; {type_name} holds {max_slots}: drop the lowest priority ones")
    top = (1 << id_bits) - 1
    value = 0
    for i, item in enumerate(items):
        ident, direction = _entry_pair(item, entry_cls, id_attr)
        for name, got in ((f"{id_field}{i}", ident), (f"Direction{i}", direction)):
            if isinstance(got, bool) or not isinstance(got, int):
                raise InvalidFieldType(type_name, name, got, "an int", f"is a {type(got).__name__}")
        if not 1 <= ident <= top:
            hint = ("is 0 (no preference): give only the preferences, highest priority first" if ident == 0
                    else f"is not a {what} id")
            raise InvalidFieldValue(type_name, f"{id_field}{i}", ident, f"1..{top} (0 means no preference)", hint)
        if direction not in (0, 1):
            raise InvalidFieldValue(type_name, f"Direction{i}", direction, "0 or 1", "is not a direction")
        value |= (ident | direction << id_bits) << (i * (id_bits + 1))
    return value


def build_bank_preference(entries) -> int:
    """Pack up to 4 bank preferences (BankPreferenceEntry, (bank, direction) or bare bank ids 1..127)."""
    return _build(entries, type_name=BANK_TYPE, id_field="Bank", max_slots=BANK_SLOTS, id_bits=BANK_ID_BITS,
                  entry_cls=BankPreferenceEntry, id_attr="bank", what="bank")


def build_segment_preference(entries) -> int:
    """Pack up to 5 segment preferences (SegmentPreferenceEntry, (id, direction) or bare ids 1..31)."""
    return _build(entries, type_name=SEGPREF_TYPES[0], id_field="SegmentId", max_slots=SEG_SLOTS,
                  id_bits=SEG_ID_BITS, entry_cls=SegmentPreferenceEntry, id_attr="segment_id", what="segment")


def describe_preferences(prefs: Preferences, what: str) -> str:
    if not prefs.entries:
        return f"no {what} preference"
    return "; ".join(str(e) for e in prefs.entries)
