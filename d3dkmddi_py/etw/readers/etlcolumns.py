"""The DxgKrnl events of an .etl file as columns, in the event-by-event reader's order and numbering.

Each processor's buffers are read in runs (``etlcount.scan``); its DxgKrnl payloads are decoded with
one NumPy record type per (event, version, pointer size) into a matrix of field values.  The
processors are merged as ``etlfile.EtlFile.ordered`` merges them (``heapq.merge`` of their events by
(time, buffer offset, event offset)): a greedy merge of per-processor streams, which equals a sort by
each event's running maximum key within its processor, then its place there.  Chunks are merged up
to the smallest last key any unfinished processor has loaded, so memory holds one run per processor.

A row the matrix does not hold exactly (an event no entry reads, a template the matrix cannot hold, a version
without a template, a payload of another length, a Boolean not 0 or 1) keeps its payload's bytes and is read
by ``etlreader.read_payload``, the event-by-event reader's own reading, when it becomes an Event.  Anything
else this path does not read as ``etlreader.decode`` would (damage, a DxgKrnl GUID on a classic header, a
trace without DxgKrnl events) raises NeedExact: the caller starts again on the event-by-event reader, which
names it.
"""
from __future__ import annotations

import uuid

from ..._numpy import numpy_module
from ...errors import EtwInputError
from . import etlcount, etlfile, etlreader
from ..model.registry import ENTRY_OF, KINDS, TEMPLATES
from .etlreader import DXGKRNL, plan_of, read_payload
from ..model.events import Event, _flag, new_event
from ..model.registry import on_change, unknown_kind
from ..model.templates import IN_TYPES

_GUID = uuid.UUID(DXGKRNL).bytes_le
_EVENT = etlfile.EVENT_HEADER.offset
_RUN_BYTES = 4 << 20  # read per merge step, over all processors
_LEAST_RUN = 1 << 16  # per processor
# Columns cost up to 3 times the buffers they come from (keys of 16-byte events); a file whose
# processors' buffers add up to more is read event by event, which holds the buffers alone.
COLUMN_HELD_BYTES = 64 << 20


class NeedExact(Exception):
    """Something only the event-by-event reader reads (and names) exactly."""


_POSITIONS: dict = {}  # event -> {field: its matrix column}


def positions(event: str) -> dict:
    """Each field of an event's versions (but its counted arrays) -> its column in a batch's matrix: the
    fields in the order of its versions, so a row's columns are its own event's (the matrix is as wide as
    the widest event, not as all of them)."""
    found = _POSITIONS.get(event)
    if found is None:
        names = dict.fromkeys(n for version in TEMPLATES[event].values() for n, _t in version)
        found = _POSITIONS[event] = {name: i for i, name in enumerate(names)}
    return found


def width() -> int:
    return max([len(positions(event)) for event in TEMPLATES], default=0)


on_change(_POSITIONS.clear)
class DxgBatch:
    """DxgKrnl events in trace order: numbers, raw times, process and thread ids, event ids,
    versions, a matrix of field values (row i's columns are its event's ``positions``; 0 where a
    version lacks a field), and the rows the matrix does not hold (``exact``: an object array, a row's
    (payload bytes, pointer size, opcode) where it is one, None elsewhere; None when no row is)."""

    __slots__ = ("numbers", "times", "pids", "tids", "ids", "versions", "matrix", "exact")

    def __init__(self, numbers, times, pids, tids, ids, versions, matrix, exact=None):
        self.numbers, self.times, self.pids, self.tids = numbers, times, pids, tids
        self.ids, self.versions, self.matrix, self.exact = ids, versions, matrix, exact

    def in_matrix(self, np):
        """Whether each row's fields are the matrix's (not read from its payload when it becomes an Event)."""
        if self.exact is None:
            return np.ones(len(self.ids), dtype=bool)
        return np.fromiter((e is None for e in self.exact), dtype=bool, count=len(self.exact))

    def __len__(self):
        return len(self.times)

    def column(self, event: str, name: str):
        """The values of ``event``'s field ``name``, in the rows of that event."""
        return self.matrix[:, positions(event)[name]]

    def event(self, i: int, time: str | None, source: str) -> Event:
        """Row ``i`` as the Event ``etlreader.decode`` gives."""
        return self.events([i], [time], source)[0]

    def events(self, rows, times, source: str) -> list:
        """``event`` of each of ``rows`` (row numbers), its time text in ``times``: the columns read at once."""
        rows = list(rows)
        out = []
        for i, event_id, version, number, pid, tid, row, time in zip(
                rows, self.ids[rows].tolist(), self.versions[rows].tolist(), self.numbers[rows].tolist(),
                self.pids[rows].tolist(), self.tids[rows].tolist(), self.matrix[rows].tolist(), times):
            exact = None if self.exact is None else self.exact[i]
            if exact is not None:  # read as the event-by-event reader reads it
                data, pointer_size, opcode = exact
                kind = KINDS.get(event_id) or unknown_kind(event_id, version, opcode)
                fields, odd = read_payload(kind, version, pointer_size, data, 0, len(data))
                out.append(new_event(number, kind, version, fields, time, pid, tid, {}, source, odd))
                continue
            kind = KINDS[event_id]
            plan, bit_maps = plan_of(event_id, version, 8)  # the names and types: the same at either pointer size
            at = positions(kind.event)
            fields = {name: row[at[name]] for name in plan.head_names}
            for name in plan.head_booleans:  # 0 or 1: a row with another value is read from its payload
                fields[name] = fields[name] == 1
            for name, bit_map in bit_maps:
                fields[name] = _flag(bit_map, fields[name])
            out.append(new_event(number, kind, version, fields, time, pid, tid, {}, source))
        return out

    def rows(self, index) -> "DxgBatch":
        """The rows ``index`` selects (a slice, or an array of row numbers), numbers included."""
        return DxgBatch(None if self.numbers is None else self.numbers[index], self.times[index], self.pids[index],
                        self.tids[index], self.ids[index], self.versions[index], self.matrix[index],
                        None if self.exact is None else self.exact[index])


_MATRIX_KINDS = ("int", "bool", "pointer")


class _Decoder:
    """NumPy record types of the templates the matrix holds, per (event id, version, pointer size): an entry's
    event whose template is unsigned numbers of fixed width (None for any other: its rows keep their payloads)."""

    def __init__(self, np):
        self.np = np
        self.types: dict = {}

    def of(self, event_id: int, version: int, pointer_size: int):
        key = (event_id, version, pointer_size)
        found = self.types.get(key, False)
        if found is False:
            found = None
            planned = plan_of(event_id, version, pointer_size) if event_id in ENTRY_OF else None
            if planned is not None and planned[0].fixed and all(
                    IN_TYPES[f.in_type].kind in _MATRIX_KINDS and not IN_TYPES[f.in_type].signed
                    for f in planned[0].fields):
                plan = planned[0]
                widths = [pointer_size if IN_TYPES[f.in_type].kind == "pointer" else IN_TYPES[f.in_type].width
                          for f in plan.fields]
                offsets = [sum(widths[:i]) for i in range(len(widths))]
                found = (self.np.dtype({"names": list(plan.head_names), "formats": [f"<u{w}" for w in widths],
                                        "offsets": offsets, "itemsize": plan.size}), plan)
            self.types[key] = found
        return found


def _load(np, decoder: _Decoder, run: bytearray, buffers: list, starts: list) -> dict:
    """One processor's run of buffers: every event's key, and its DxgKrnl events decoded."""
    got = etlcount.scan(np, run, buffers, starts)
    if got is None:
        raise NeedExact("a buffer the column-wise scan does not read")
    if got.o is None:
        return None
    o, u8, u16, u64 = got.o, got.u8, got.u16, got.u64
    start_array = np.array(starts, dtype=np.int64)
    which = np.searchsorted(start_array, o, side="right") - 1
    at = np.array([b.file_offset for b in buffers], dtype=np.int64)[which]
    p = o - start_array[which]
    low, high = np.frombuffer(_GUID, dtype="<i8")
    guid_at = np.maximum(got.of_kind("provider"), 0)
    ours = (got.of_kind("provider") >= 0) & (u64[(o + guid_at) >> 3] == low) & (u64[(o + guid_at + 8) >> 3] == high)
    if (ours & ~got.is_event).any():
        raise NeedExact("a DxgKrnl GUID on a classic header")
    rows = np.flatnonzero(ours)
    ids = u16[(o + _EVENT["Id"]) >> 1]
    out = {"ts": got.times, "at": at, "p": p, "dxg": np.full(len(o), -1, dtype=np.int64),
           "events": len(o), "other_dxgkrnl": int((ours & ~np.isin(ids, list(ENTRY_OF))).sum()),
           "other_providers": int((~ours).sum())}
    out["dxg"][rows] = np.arange(len(rows))
    e = o[rows]
    flags = u16[(e + _EVENT["Flags"]) >> 1]
    is32 = got.kind[rows] == etlfile.EVENT32
    pointer = np.where((flags & etlfile.HEADER_32_BIT) != 0, 4,
                       np.where((flags & etlfile.HEADER_64_BIT) != 0, 8, np.where(is32, 4, 8)))
    version = u8[e + _EVENT["Version"]]
    event_ids = ids[rows]
    payload = got.payload[rows]
    length = e + got.size[rows] - payload
    matrix = np.zeros((len(rows), width()), dtype=np.uint64)
    exact = np.zeros(len(rows), dtype=bool)  # rows read from their payloads
    if len(rows):
        combos = np.unique(np.stack([event_ids.astype(np.int64), version.astype(np.int64), pointer]), axis=1)
        for event_id, ver, psize in combos.T.tolist():
            sel = np.flatnonzero((event_ids == event_id) & (version == ver) & (pointer == psize))
            found = decoder.of(event_id, ver, psize)
            if found is None:
                exact[sel] = True
                continue
            dtype, plan = found
            fits = length[sel] == dtype.itemsize
            exact[sel[~fits]] = True
            sel = sel[fits]
            raw = u8[payload[sel][:, None] + np.arange(dtype.itemsize)]
            values = raw.view(dtype).ravel()
            odd = np.zeros(len(sel), dtype=bool)
            for name in plan.head_booleans:
                odd |= values[name] > 1
            at_ = positions(KINDS[event_id].event)
            keep = sel[~odd]
            exact[sel[odd]] = True
            for name in plan.head_names:
                matrix[keep, at_[name]] = values[name][~odd]
    held = None
    if exact.any():
        held = np.full(len(rows), None, dtype=object)
        opcodes = u8[e + _EVENT["Opcode"]]
        for i in np.flatnonzero(exact).tolist():
            a = int(payload[i])
            held[i] = (bytes(u8[a:a + int(length[i])]), int(pointer[i]), int(opcodes[i]))
    u32 = u8.view("<u4")
    out["batch"] = DxgBatch(None, got.times[rows], u32[(e + _EVENT["ProcessId"]) >> 2].astype(np.int64),
                            u32[(e + _EVENT["ThreadId"]) >> 2].astype(np.int64), event_ids.astype(np.int64),
                            version.astype(np.int64), matrix, held)
    return out


def _running_max(np, ts, at, p, carry):
    """Each event's running maximum key (time, buffer offset, event offset) within its processor."""
    top_ts = np.maximum.accumulate(ts)
    if carry is not None:
        top_ts = np.maximum(top_ts, carry[0])
    holder = np.where(ts == top_ts, np.arange(len(ts)), -1)
    last = np.maximum.accumulate(holder)
    if carry is None:
        return top_ts, at[last], p[last]
    return (top_ts, np.where(last >= 0, at[np.maximum(last, 0)], carry[1]),
            np.where(last >= 0, p[np.maximum(last, 0)], carry[2]))


class _Stream:
    """One processor's events, loaded a run at a time."""

    def __init__(self, np, decoder, etl, reader, offsets, limit):
        self.np, self.decoder, self.etl, self.reader, self.limit = np, decoder, etl, reader, limit
        self.buffers = etlfile.pairs(offsets)
        self.done = False
        self.carry = None
        self.pending = None  # dict of arrays, or None when empty

    def load(self, counts: dict) -> None:
        """Read runs until some events are pending or the processor has no more buffers."""
        np = self.np
        while self.pending is None and not self.done:
            run, buffers, starts = bytearray(), [], []
            for index, at in self.buffers:
                self.etl.seek_buffer(self.reader, index, at)
                starts.append(len(run))
                buffers.append(self.reader.next_buffer(run))
                if len(run) >= self.limit:
                    break
            else:
                self.done = True
            if not buffers:
                return
            chunk = _load(np, self.decoder, run, buffers, starts)
            if chunk is None:
                continue
            for key in ("events", "other_dxgkrnl", "other_providers"):
                counts[key] += chunk[key]
            pm = _running_max(np, chunk["ts"], chunk["at"], chunk["p"], self.carry)
            self.carry = (pm[0][-1], pm[1][-1], pm[2][-1])
            self.pending = {"ts": pm[0], "at": pm[1], "p": pm[2], "dxg": chunk["dxg"], "batch": chunk["batch"]}

    def last_key(self) -> tuple:
        return tuple(int(self.pending[k][-1]) for k in ("ts", "at", "p"))

    def take(self, horizon):
        """The pending events whose key is at most ``horizon`` (a prefix): (keys, dxg rows, batch part)."""
        np = self.np
        pend = self.pending
        if horizon is None:
            n = len(pend["ts"])
        else:
            h_ts, h_at, h_p = horizon
            ts, at, p = pend["ts"], pend["at"], pend["p"]
            below = (ts < h_ts) | ((ts == h_ts) & ((at < h_at) | ((at == h_at) & (p <= h_p))))
            n = int(below.sum())
        keys = (pend["ts"][:n], pend["at"][:n], pend["p"][:n])
        dxg = pend["dxg"][:n]
        d = int((dxg >= 0).sum())
        batch = pend["batch"]
        part = _slice(batch, 0, d)
        if n == len(pend["ts"]):
            self.pending = None
        else:
            rest = pend["dxg"][n:]
            self.pending = {"ts": pend["ts"][n:], "at": pend["at"][n:], "p": pend["p"][n:],
                            "dxg": np.where(rest >= 0, rest - d, -1), "batch": _slice(batch, d, len(batch))}
        return keys, dxg, part


def _slice(batch: DxgBatch, a: int, b: int) -> DxgBatch:
    return batch.rows(slice(a, b))


def batches(np, etl, counts: dict):
    """DxgBatch after DxgBatch of an EtlFile opened with ``ordered=True``, in time order; ``counts``
    gets "events", "decoded", "other_dxgkrnl" and "other_providers"."""
    decoder = _Decoder(np)
    per = etl.processor_buffers()
    if etl.held > COLUMN_HELD_BYTES:
        raise NeedExact("buffers too large to hold as columns: the event-by-event reader holds them as they are")
    limit = max(_LEAST_RUN, _RUN_BYTES // max(1, len(per)))
    streams = [_Stream(np, decoder, etl, etl.buffer_reader(), offsets, limit) for offsets in per.values()]
    numbered = 0
    while True:
        for s in streams:
            if s.pending is None:
                s.load(counts)
        live = [s for s in streams if s.pending is not None]
        if not live:
            break
        waiting = [s.last_key() for s in live if not s.done]  # a finished processor holds nothing back
        horizon = min(waiting) if waiting else None
        parts = [s.take(horizon) for s in live]
        ts = np.concatenate([k[0] for k, _d, _b in parts])
        at = np.concatenate([k[1] for k, _d, _b in parts])
        p = np.concatenate([k[2] for k, _d, _b in parts])
        dxg = []
        base = 0
        for _k, d, b in parts:
            dxg.append(np.where(d >= 0, d + base, -1))
            base += len(b)
        order = np.lexsort((p, at, ts))  # stable: a processor's ties keep their order
        dxg = np.concatenate(dxg)[order]
        mine = np.flatnonzero(dxg >= 0)
        if len(mine):
            exact = None
            if any(b.exact is not None for _k, _d, b in parts):
                exact = np.concatenate([b.exact if b.exact is not None else np.full(len(b), None, dtype=object)
                                        for _k, _d, b in parts])
            merged = DxgBatch(None, *(np.concatenate([getattr(b, f) for _k, _d, b in parts])
                                      for f in ("times", "pids", "tids", "ids", "versions", "matrix")), exact)
            out = merged.rows(dxg[mine])
            out.numbers = numbered + 1 + mine
            counts["decoded"] += len(out)
            yield out
        numbered += len(order)
    if not counts["decoded"]:
        raise NeedExact("no DxgKrnl event: the exact reader says what the trace holds")


RESTART = "restart"  # column_events: what came before is void; the events follow from the start


def column_events(reader, stream, head: bytes):
    """DxgBatch after DxgBatch of an .etl stream, for a reader of columns; where the
    column-wise path cannot read the file exactly, RESTART and then every Event from the start.

    Damage is always named by the event-by-event reader: this path reads buffers ahead of it (a run
    per processor), so the first damage it meets may not be the first that reader meets; it starts
    again instead, and the two give one answer by construction."""
    with etlfile.EtlFile(stream, reader.name, head, ordered=True) as etl:
        reader.etl_header = etl.header
        counts = dict.fromkeys(("events", "decoded", "other_dxgkrnl", "other_providers"), 0)
        try:
            yield from batches(numpy_module(), etl, counts)
        except (NeedExact, EtwInputError):
            yield RESTART
            yield from etlreader.events_of(reader, etl)
            return
    reader.total += counts["events"]
    reader.decoded += counts["decoded"]
    reader.other_dxgkrnl += counts["other_dxgkrnl"]
    reader.other_providers += counts["other_providers"]
