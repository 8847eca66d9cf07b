"""Counting an .etl file's events per provider and id at the speed of walking its buffers.

Buffers are taken in batches of a few megabytes.  One Python loop per buffer only follows the
events' sizes; NumPy then reads every event's kind, provider, id and time at once from the offsets
it found.  A batch where any event does not check out (an unknown kind, a size shorter than its
header, the last event past the end, a TraceMessage record) is read again buffer by buffer by
``etlfile.walk`` and ``etlfile.record``, which name the exact damage: the counts are the same either
way, as a test checks against that slower reader on every real file and on damaged ones.
"""
from __future__ import annotations

import bisect
import uuid
from array import array

from ...errors import EtwInputError
from . import etlfile

_BATCH_BYTES = 4 << 20
MOST_KEYS = 1 << 16  # distinct (provider, id) pairs a summary counts: its memory, whatever the input
_SLACK = bytes(64)  # after a batch: a header field read past the last event stays inside the array
_SECOND = tuple(k in etlfile.SIZE_IN_SECOND_WORD for k in range(256))  # size in the second word, by kind byte
_SECOND_BY_WORD = _SECOND * 256  # by the marker's upper half-word (kind | flags << 8): entry w is _SECOND[w & 0xFF]
# Where the fields every kind shares are (etlfile's layouts: the same in each kind but TraceMessage's)
_EVENT = etlfile.EVENT_HEADER.offset
_KIND_AT, _MARKER_AT = _EVENT["HeaderType"], _EVENT["MarkerFlags"]
_SECOND_SIZE_AT = etlfile.SYSTEM_HEADER.offset["Size"]
_KERNEL_GUID = uuid.UUID(etlfile.KERNEL_LOGGER_GUID).bytes_le
CLASSIC_BIT = 1 << 16  # in a count's key: a classic header with a GUID, whose id is its Type (an opcode)
_CLASSIC_WITH_GUID = (etlfile.FULL32, etlfile.FULL64)
_NO_GUID = b""  # classic instance events: the provider is a registration handle


class Counts:
    """What the events of the buffers seen so far add up to."""

    def __init__(self, np=None):
        """``np``: NumPy for the column-wise count, or None to read every event one by one."""
        self.np = np
        self.keys: dict = {}  # provider index << 16 | id -> events
        self.guids: dict = {_NO_GUID: 0, _KERNEL_GUID: 1}  # GUID bytes (bytes_le) -> provider index
        self.kinds: dict = {}  # header kind -> events
        self.names: dict = {}  # GUID bytes -> TraceLogging provider name
        self.total = 0
        self.first = None
        self.last = None

    # ---- results, as the slow reader gives them
    def provider_counts(self) -> dict:
        """(provider GUID text or None, id, whether on a classic header) -> events."""
        text = {index: None if guid == _NO_GUID else str(uuid.UUID(bytes_le=guid))
                for guid, index in self.guids.items()}
        return {(text[key >> 17], key & 0xFFFF, bool(key & CLASSIC_BIT)): n for key, n in self.keys.items()}

    def kind_counts(self) -> dict:
        return dict(self.kinds)

    def provider_names(self) -> dict:
        return {str(uuid.UUID(bytes_le=g)): n for g, n in self.names.items()}

    # ---- buffers
    def count(self, etl, name: str) -> None:
        """Count every buffer of an ``etlfile.EtlFile``."""
        if self.np is None:
            for buffer in etl.buffers():
                self._slowly(buffer, name)
            return
        for run, buffers, starts in etl.runs(_BATCH_BYTES):
            if len(buffers) > 1 and self._batch(run, buffers, starts, name):
                continue
            for i, buffer in enumerate(buffers):  # one at a time: a damaged one is read exactly
                if buffer.data is None:
                    buffer.data = _data_of(run, starts[i], buffer)
                alone = bytearray(buffer.data)
                alone += bytes(-len(alone) & 7)
                if not self._batch(alone, [buffer], [0], name):
                    self._slowly(buffer, name)

    def _batch(self, run: bytearray, buffers: list, starts: list, name: str) -> bool:
        """Count buffers held in one bytearray column-wise; False (nothing counted) if any event does
        not check out."""
        np = self.np
        got = scan(np, run, buffers, starts)
        if got is None:
            return False
        if got.o is None:
            return True
        o, kind = got.o, got.kind
        guid_at = got.of_kind("provider")
        with_guid = guid_at >= 0
        provider = np.where(got.of_kind("classic"), 1, 0)  # the kernel logger's index, or 0: no GUID
        if with_guid.any():
            provider[with_guid] = self._providers(got.u64, o[with_guid], guid_at[with_guid])
        event_id = got.event_ids() | np.where(np.isin(kind, _CLASSIC_WITH_GUID), CLASSIC_BIT, 0)
        keys, counts = np.unique(provider << 17 | event_id, return_counts=True)
        tally = self.keys
        for key, n in zip(keys.tolist(), counts.tolist()):
            tally[key] = tally.get(key, 0) + n
        if len(tally) > MOST_KEYS:
            raise self._too_many(name)
        per_kind = np.bincount(kind, minlength=256)
        for k in np.flatnonzero(per_kind).tolist():
            self.kinds[k] = self.kinds.get(k, 0) + int(per_kind[k])
        self._times(int(got.times.min()), int(got.times.max()))
        self.total += len(o)
        named = got.extended[got.named]
        if len(named):
            self._names(run, buffers, starts, o[named], provider[named], name)
        return True

    def _providers(self, u64, o, guid_at):
        """Each event's provider index, from the GUID at ``guid_at`` of its header."""
        np = self.np
        low, high = u64[(o + guid_at) >> 3], u64[(o + guid_at + 8) >> 3]
        low_values, low_index = np.unique(low, return_inverse=True)
        high_values, high_index = np.unique(high, return_inverse=True)
        pairs, first, pair_index = np.unique(low_index * len(high_values) + high_index, return_index=True,
                                             return_inverse=True)
        index = np.empty(len(pairs), dtype=np.int64)
        for i, at in enumerate(first.tolist()):
            guid = int(low[at]).to_bytes(8, "little", signed=True) + int(high[at]).to_bytes(8, "little", signed=True)
            index[i] = self.guids.setdefault(guid, len(self.guids))
        return index[pair_index.ravel()]

    def _names(self, run: bytearray, buffers: list, starts: list, offsets, providers, name: str) -> None:
        """TraceLogging providers' names: the first name each provider not yet named gives, in file order."""
        by_index = {index: guid for guid, index in self.guids.items()}
        for p, index in zip(offsets.tolist(), providers.tolist()):
            guid = by_index[index]
            if guid in self.names:
                continue
            b = bisect.bisect_right(starts, p) - 1
            held = buffers[b]
            buffer = etlfile.Buffer(held.index, held.file_offset, held.size, held.processor, held.flags, held.type,
                                    held.timestamp, _data_of(run, starts[b], held), held.end)
            p -= starts[b]
            size = int.from_bytes(buffer.data[p + _EVENT["Size"]:p + _EVENT["Size"] + 2], "little")
            traits = etlfile.record(buffer, etlfile.EVENT64, p, size, name).traits
            if traits:
                self.names[guid] = traits

    def _times(self, low: int, high: int) -> None:
        if self.first is None or low < self.first:
            self.first = low
        if self.last is None or high > self.last:
            self.last = high

    def _slowly(self, buffer, name: str) -> None:
        prior = 0
        for kind, p, size in etlfile.walk(buffer, name):
            rec = etlfile.record(buffer, kind, p, size, name, prior)
            prior = rec.timestamp
            guid = _NO_GUID if rec.provider is None else uuid.UUID(rec.provider).bytes_le
            key = self.guids.setdefault(guid, len(self.guids)) << 17 | rec.event_id & 0xFFFF | \
                (CLASSIC_BIT if kind in _CLASSIC_WITH_GUID else 0)
            count = self.keys.get(key)
            if count is None and len(self.keys) == MOST_KEYS:
                raise self._too_many(name)
            self.keys[key] = (count or 0) + 1
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            if rec.traits and guid not in self.names:
                self.names[guid] = rec.traits
            self._times(rec.timestamp, rec.timestamp)
            self.total += 1

    @staticmethod
    def _too_many(name: str) -> EtwInputError:
        return EtwInputError(f"{name}: more than {MOST_KEYS:,} distinct (provider, event id) pairs, more than a "
                             f"summary lists (a trace a logger writes has hundreds): damaged, or not a trace")


def _data_of(run: bytearray, start: int, buffer) -> bytes:
    """A buffer's bytes (header and events) out of the run that holds it, for the event-by-event reader."""
    return bytes(run[start:start + buffer.end])


class Scan:
    """The events of buffers held in one bytearray, read column-wise: their offsets in it (``o``),
    header kinds, sizes, times, payload starts, and views of the bytes; ``o`` None when there are none."""

    __slots__ = ("np", "o", "kind", "size", "is_event", "times", "extended", "named", "payload", "u8", "u16", "u64",
                 "_by_kind")

    def of_kind(self, fact: str):
        """A fact of each event's header kind (``_tables``), from etlfile's layouts."""
        return _tables(self.np)[fact].take(self._by_kind)

    def event_ids(self):
        """Each event's id: the EVENT_DESCRIPTOR Id, the classic event's type, or the kernel event's HookId."""
        at = self.o + self.of_kind("event_id")
        return self.np.where(self.of_kind("event_id_width") == 2, self.u16[at >> 1], self.u8[at])


def scan(np, run: bytearray, buffers: list, starts: list):
    """A Scan of ``buffers`` (as ``etlfile.EtlFile.runs`` gives them), or None if any event does not
    check out (an unknown kind, a size shorter than its header, the last event past the end, an
    extended item past its event, a TraceMessage record): the exact reader then names what is there.
    Appends slack to ``run``."""
    ends = [start + buffer.end for start, buffer in zip(starts, buffers)]
    if any(buffer.end & 1 for buffer in buffers):
        return None
    run += _SLACK
    with memoryview(run) as view, view.cast("H") as words:
        offsets = _walk_sizes(words, starts, ends)
    if offsets is None:
        return None
    got = Scan()
    got.np, got.o = np, None
    if not len(offsets):
        return got
    u8 = np.frombuffer(run, dtype=np.uint8)
    u16, u64 = u8.view("<u2"), u8.view("<i8")
    o = np.frombuffer(offsets, dtype=np.int64) << 1  # the loop gave half-word indexes
    got.o, got.kind = o, u8[o + _KIND_AT]
    got._by_kind = got.kind.astype(np.intp)  # the index of every kind table, made once
    least = got.of_kind("length")
    size = u16[(o + got.of_kind("size")) >> 1].astype(np.int64)
    if not ((u8[o + _MARKER_AT] & 0xC0) == 0xC0).all() or not (least > 0).all() or not (size >= least).all():
        return None
    # an event past its buffer's end can only be the buffer's last
    end_array = np.array(ends, dtype=np.int64)
    last = np.searchsorted(o, end_array) - 1
    has_events = last >= np.searchsorted(o, np.array(starts, dtype=np.int64))
    if (o[last[has_events]] + size[last[has_events]] > end_array[has_events]).any():
        return None
    is_event = (got.kind == etlfile.EVENT32) | (got.kind == etlfile.EVENT64)
    extended = np.flatnonzero(is_event & ((u16[(o + _EVENT["Flags"]) >> 1] & etlfile.EXTENDED_INFO) != 0))
    items = _extended_items(np, u8, u16, o[extended], size[extended])
    if items is None:
        return None
    got.named, payload_of_extended = items
    got.payload = o + least
    got.payload[extended] = payload_of_extended
    got.times = u64[(o + got.of_kind("time")) >> 3]
    got.size, got.is_event, got.extended = size, is_event, extended
    got.u8, got.u16, got.u64 = u8, u16, u64
    return got


_ITEM = etlfile.EXTENDED_ITEM
_ITEM_TYPE, _ITEM_LINK, _ITEM_SIZE = _ITEM.offset["ExtType"], _ITEM.offset["Linkage"], _ITEM.offset["DataSize"]


def _extended_items(np, u8, u16, o, size):
    """(whether each event's chain of extended items holds a TraceLogging traits item that may carry
    a name, where its payload starts); None if an item runs past its event."""
    at, stop = o + etlfile.EVENT_HEADER.length, o + size
    named = np.zeros(len(o), dtype=bool)
    payload = np.zeros(len(o), dtype=np.int64)
    rows = np.arange(len(o))
    while len(at):
        if (at + _ITEM.length > stop).any():
            return None
        length = u16[(at + _ITEM_SIZE) >> 1].astype(np.int64)
        if (at + _ITEM.length + length > stop).any():
            return None
        traits = (u16[(at + _ITEM_TYPE) >> 1] == etlfile.EXT_TYPE_PROV_TRAITS) & (length > 2)
        named[rows[traits & (u8[at + etlfile.TRAITS_NAME] != 0)]] = True
        more = (u16[(at + _ITEM_LINK) >> 1] & 1) != 0
        at = at + ((_ITEM.length + length + 7) & ~7)
        payload[rows[~more]] = np.minimum(at, stop)[~more]  # as etlfile._extended: padding past the end is not there
        at, stop, rows = at[more], stop[more], rows[more]
    return named, payload


_KIND_TABLES: dict = {}


def _tables(np) -> dict:
    """By kind byte, from etlfile's layouts: header "length" (0: not a kind this reader knows), where
    its "size", "time", "event_id" and "provider" GUID are ("provider" -1: none), the "event_id_width",
    and whether it is a "classic" kernel header (a HookId, counted under the kernel logger)."""
    if not _KIND_TABLES:
        facts = ("length", "size", "time", "event_id", "event_id_width", "provider")
        columns = {name: np.zeros(256, dtype=np.int16) for name in facts}
        columns["provider"][:] = -1
        for kind, header in etlfile.HEADERS.items():
            if kind >= 256 or header.time is None:  # TraceMessage: read event by event
                continue
            columns["length"][kind] = header.length
            columns["size"][kind] = header.offset["Size"]
            columns["time"][kind] = header.offset[header.time]
            columns["event_id"][kind] = header.offset[header.event_id]
            columns["event_id_width"][kind] = header.width[header.event_id]
            if header.provider is not None:
                columns["provider"][kind] = header.offset[header.provider]
        columns["classic"] = np.isin(np.arange(256), list(etlfile.CLASSIC_KERNEL))
        _KIND_TABLES.update(columns)
    return _KIND_TABLES


def _walk_sizes(words, starts: list, ends: list):
    """Half-word index of each event of each buffer in ``words``, following sizes only; None where a
    size runs off the array (the exact reader then says what is there)."""
    second = _SECOND_BY_WORD
    kind_word, second_size_word = _KIND_AT >> 1, _SECOND_SIZE_AT >> 1  # the kind byte and the flags; the size
    offsets = array("q")  # 8 bytes an event, not a list's 36
    append = offsets.append
    try:
        for start, end in zip(starts, ends):
            q, stop = (start + etlfile.BUFFER_HEADER) >> 1, end >> 1
            while q < stop:
                w = words[q + kind_word]
                if w == 0xFFFF and words[q] == 0xFFFF:  # padding: the rest of the buffer is unused
                    break
                append(q)
                q += ((words[q + second_size_word] if second[w] else words[q]) + 7 >> 1) & ~3 or 4
    except IndexError:
        return None
    return offsets
