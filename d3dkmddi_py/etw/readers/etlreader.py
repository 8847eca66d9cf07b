"""DxgKrnl events out of an .etl file, and the summary of any .etl file.

A DxgKrnl event is a manifest event (an EVENT_HEADER): its payload holds its template's fields in
order, packed, with no names.  Pointers are 4 or 8 bytes by the event's own header flags, a
``win:Boolean`` is 4 bytes; a counted array (the template's last field) holds as many values as its
count field says.  A version this package has no template for is refused, naming the event, as is a
payload shorter or longer than its template.  The events then are the same ``Event`` values
the XML reader gives, in time order, numbered as tracerpt numbers them (every event counted).
"""
from __future__ import annotations

import struct

from ...errors import EtwInputError
from ..._numpy import numpy_module
from . import etlcount, etlfile
from ..model.providers import dxgkrnl_event_name, provider_name
from ..catalog import ARRAYS, BIT_MAPS, KINDS, TEMPLATES
from ..model.events import Event, _flag, new_event
from ..model.registry import on_change, payload_bytes
from ..model.schema import BOOLEAN, PROVIDER_GUID

DXGKRNL = PROVIDER_GUID.strip("{}")
_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


class _Layout:
    """One (event, version, pointer size)'s payload: one struct for the fields before a counted array,
    the names, where each field starts; and the counted array, if any: (name, element width, index of
    its count among the names)."""

    __slots__ = ("struct", "names", "types", "starts", "booleans", "bit_maps", "array")

    def __init__(self, event: str, fields: tuple, pointer_size: int):
        array = [(n, t) for n, t in fields if (event, n) in ARRAYS]
        fixed = [(n, t) for n, t in fields if (event, n) not in ARRAYS]
        widths = [payload_bytes(t, pointer_size) for _n, t in fixed]
        self.struct = struct.Struct("<" + "".join(_CODES[w] for w in widths))
        self.names = tuple(n for n, _t in fixed)
        self.types = tuple(t for _n, t in fixed)
        starts, at = [], 0
        for w in widths:
            starts.append(at)
            at += w
        self.starts = tuple(starts)
        self.booleans = tuple(n for n, t in fixed if t == BOOLEAN)
        self.bit_maps = tuple((n, BIT_MAPS[(event, n)]) for n, _t in fixed if (event, n) in BIT_MAPS)
        self.array = None
        if array:
            (name, in_type), = array
            self.array = (name, payload_bytes(in_type, pointer_size), self.names.index(ARRAYS[(event, name)]))

    def payload(self, values: tuple) -> int:
        """The payload's length, given the fixed fields' values."""
        if self.array is None:
            return self.struct.size
        return self.struct.size + self.array[1] * values[self.array[2]]


_LAYOUTS: dict = {}
on_change(_LAYOUTS.clear)


def layout(event: str, version: int, pointer_size: int) -> _Layout | None:
    key = (event, version, pointer_size)
    found = _LAYOUTS.get(key)
    if found is None:
        fields = TEMPLATES[event].get(version)
        if fields is None:
            return None
        found = _LAYOUTS[key] = _Layout(event, fields, pointer_size)
    return found


def _where(name: str, rec, kind) -> str:
    return f"{name}: event #{rec.number} ({kind.label}), {rec.buffer.where(rec.offset)}"


def decode(rec, kind, header, name: str) -> Event:
    """The Event of one DxgKrnl record; EtwInputError naming the event and field when it does not fit."""
    if rec.kind not in etlfile.EVENT_HEADERS:
        raise EtwInputError(f"{_where(name, rec, kind)}: {etlfile._a(etlfile.KIND_NAMES[rec.kind])} header, not the "
                            f"EVENT_HEADER a manifest event has", event=rec.number)
    lay = layout(kind.event, rec.version, rec.pointer_size)
    if lay is None:
        known = ", ".join(map(str, sorted(TEMPLATES[kind.event])))
        raise EtwInputError(f"{_where(name, rec, kind)}: version {rec.version} of event {kind.event_id}, which this "
                            f"package has no template for (it reads version {known}); the fields of another "
                            f"version cannot be placed", event=rec.number, field="Version")
    length = rec.offset + rec.size - rec.payload
    if length != lay.struct.size and (lay.array is None or length < lay.struct.size):
        raise _length_error(rec, kind, lay, length, name)
    values = lay.struct.unpack_from(rec.buffer.data, rec.payload)
    fields = dict(zip(lay.names, values))
    if lay.array is not None:
        array, width, _at = lay.array
        if length != lay.payload(values):
            raise _array_error(rec, kind, lay, length, values, name)
        count = (length - lay.struct.size) // width
        fields[array] = struct.unpack_from(f"<{count}{_CODES[width]}", rec.buffer.data, rec.payload + lay.struct.size)
    for field in lay.booleans:
        if fields[field] > 1:
            raise EtwInputError(f"{_where(name, rec, kind)}: field {field} (Boolean) = {fields[field]}, not 0 or 1",
                                event=rec.number, field=field)
    return new_event(rec.number, kind, rec.version, typed_fields(lay, fields), header.utc(rec.timestamp), rec.process_id,
                     rec.thread_id, {}, name)


def typed_fields(lay: _Layout, fields: dict) -> dict:
    """A payload's numbers as an Event holds them: Booleans as bool, bit-mapped words as their flag type
    (the Booleans already checked to be 0 or 1)."""
    for field in lay.booleans:
        fields[field] = bool(fields[field])
    for field, bit_map in lay.bit_maps:
        fields[field] = _flag(bit_map, fields[field])
    return fields


def _length_error(rec, kind, lay: _Layout, length: int, name: str) -> EtwInputError:
    where = _where(name, rec, kind)
    pointers = f"{rec.pointer_size}-byte pointers"
    if length < lay.struct.size:
        cut = _first_cut(lay, length)
        field = lay.names[cut]
        return EtwInputError(f"{where}: the payload has {length} bytes, {lay.struct.size - length} fewer than version "
                             f"{rec.version}'s {lay.struct.size} ({pointers}); it ends inside or before field {field} "
                             f"(byte {lay.starts[cut]})", event=rec.number, field=field)
    return EtwInputError(f"{where}: the payload has {length} bytes, {length - lay.struct.size} more than version "
                         f"{rec.version}'s {lay.struct.size} ({pointers}) after its last field {lay.names[-1]}",
                         event=rec.number, field=lay.names[-1])


def _array_error(rec, kind, lay: _Layout, length: int, values: tuple, name: str) -> EtwInputError:
    array, width, at = lay.array
    return EtwInputError(f"{_where(name, rec, kind)}: the payload has {length} bytes, but {lay.names[at]} = "
                         f"{values[at]} gives version {rec.version} {lay.payload(values)} ({lay.struct.size} before "
                         f"{array}, then {values[at]} values of {width} bytes)", event=rec.number, field=array)


def _first_cut(lay: _Layout, length: int) -> int:
    """The first field that does not fit in ``length`` bytes."""
    ends = list(lay.starts[1:]) + [lay.struct.size]
    return next(i for i, end in enumerate(ends) if end > length)


def events(reader, stream, head: bytes):
    """The DxgKrnl events of an .etl stream for ``reader`` (a TraceReader: its counts are kept)."""
    with etlfile.EtlFile(stream, reader.name, head, ordered=True) as etl:
        reader.etl_header = etl.header
        yield from events_of(reader, etl)


def events_of(reader, etl):
    header, name = etl.header, reader.name
    names: dict = {}
    for rec in etl.ordered():
        reader.total += 1
        if rec.provider != DXGKRNL:
            reader.other_providers += 1
            key = names.get(rec.provider)
            if key is None:
                key = rec.traits or provider_name(rec.provider) or \
                    (f"{{{rec.provider}}}" if rec.provider else f"{etlfile.KIND_NAMES[rec.kind]} events")
                if len(names) < 1024:
                    names[rec.provider] = key
            if key in reader.providers or len(reader.providers) < 64:
                reader.providers[key] = reader.providers.get(key, 0) + 1
            continue
        kind = KINDS.get(rec.event_id)
        if kind is None:
            reader.other_dxgkrnl += 1
            continue
        event = decode(rec, kind, header, name)
        reader.decoded += 1
        yield event


# ------------------------------------------------------------------ --summary
def summary(stream, name: str, head: bytes = b"", *, columns: bool = True) -> dict:
    """The log-file header's facts and the events per provider of an .etl stream, in file order.

    ``providers``: one entry per provider GUID (lowercase, no braces), most events first, each with
    its name where known (DxgKrnl, the kernel logger, a TraceLogging provider's own name) and its
    events per id.  Classic kernel events are counted under the kernel logger's GUID with their
    HookId (group << 8 | type) as the id; classic instance events carry no GUID (``null``).
    ``columns=False`` reads every event one by one (the column-wise count's oracle).
    """
    with etlfile.EtlFile(stream, name, head) as etl:
        counts = etlcount.Counts(numpy_module() if columns else None)
        counts.count(etl, name)
    return _summary_dict(etl, counts.provider_counts(), counts.provider_names(), counts.kind_counts(), counts.total,
                         counts.first, counts.last)


def _summary_dict(etl, counts: dict, names: dict, kinds: dict, total: int, first, last) -> dict:
    providers: dict = {}
    for (provider, event_id), n in counts.items():
        entry = providers.get(provider)
        if entry is None:
            entry = providers[provider] = {"guid": provider, "name": names.get(provider) or provider_name(provider),
                                           "events": 0, "ids": {}, "id_names": {}}
        entry["events"] += n
        entry["ids"][event_id] = entry["ids"].get(event_id, 0) + n
    ordered = sorted(providers.values(), key=lambda e: (-e["events"], e["guid"] or ""))
    for entry in ordered:
        entry["ids"] = {str(k): v for k, v in sorted(entry["ids"].items())}
        if entry["guid"] == DXGKRNL:
            entry["id_names"] = {k: name for k in entry["ids"] if (name := dxgkrnl_event_name(int(k))) is not None}
    header = etl.header
    facts = {k: v for k, v in header.as_dict().items() if k not in ("start_filetime", "header_time")}
    return {
        "format": "etl", "file": etl.name, **facts,
        "buffers": etl.buffers_seen, "buffers_with_events_lost": etl.events_lost_flags, "events": total,
        "first_event_ms": None if first is None else header.milliseconds(first),
        "last_event_ms": None if last is None else header.milliseconds(last),
        "header_kinds": _kind_totals(kinds),
        "dxgkrnl_events": providers.get(DXGKRNL, {}).get("events", 0),
        "providers": ordered,
    }


def _kind_totals(kinds: dict) -> dict:
    out: dict = {}
    for kind, n in sorted(kinds.items()):
        label = etlfile.KIND_NAMES[kind]
        out[label] = out.get(label, 0) + n
    return out
