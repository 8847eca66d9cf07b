"""DxgKrnl events out of an .etl file, and the summary of any .etl file.

A DxgKrnl event is a manifest event (an EVENT_HEADER): its payload holds its template's fields in order,
packed, with no names (``payload``).  Every DxgKrnl event is read: its template is its entry's for the
event's id and version (``registry.layout_of``), else the manifest's.  An event that is not what its template
says (a payload that ends early or goes on, a Boolean that is not 0 or 1, a version or an id without a
template, a DxgKrnl event on a classic header) is kept, with what could be read, and what is odd about it
on the Event (``Odd``) for its report; only damage to the container (a buffer, an event header past its
buffer) is refused.  The events are the same ``Event`` values the XML reader gives, in time order,
numbered as tracerpt numbers them (every event counted).
"""
from __future__ import annotations

from ..._numpy import numpy_module
from . import etlcount, etlfile, payload as payloads
from ..model.providers import dxgkrnl_event_name, provider_name
from ..model.events import Odd, _flag, new_event
from ..model.registry import ENTRY_OF, KINDS, classic_kind, layout_of, on_change, unknown_kind
from ..model.schema import PROVIDER_GUID

DXGKRNL = PROVIDER_GUID.strip("{}")

_PLANS: dict = {}  # (event id, version, pointer size) -> (payload.Plan, bit maps) or None
on_change(_PLANS.clear)


def plan_of(event_id: int, version: int, pointer_size: int):
    """(payload plan, ((field, flag type), ...)) of an event id and version at a pointer size, or None when
    neither its entry nor the manifest has a template for them."""
    key = (event_id, version, pointer_size)
    found = _PLANS.get(key, False)
    if found is False:
        fields = layout_of(event_id, version)
        entry = ENTRY_OF.get(event_id)
        found = None if fields is None else (payloads.plan(fields, pointer_size),
                                             tuple(entry.bit_maps.items()) if entry is not None else ())
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        _PLANS[key] = found
    return found


def read_payload(kind, version: int, pointer_size: int, data, start: int, end: int) -> tuple:
    """(fields, Odd or None) of one payload ``data[start:end]``: the one reading of a DxgKrnl payload, for the
    event-by-event reader and the column-wise one's odd rows alike."""
    found = plan_of(kind.event_id, version, pointer_size) if kind.symbol else None
    if found is None:
        return {}, Odd._new(payload=bytes(data[start:end]), why="version" if kind.symbol else "id")
    plan, bit_maps = found
    d = payloads.decode(plan, data, start, end)
    fields = d.fields
    for name, bit_map in bit_maps:
        if name in fields:
            fields[name] = _flag(bit_map, fields[name])
    if d.missing or d.extra or d.booleans or d.unread:
        return fields, Odd._new(missing=d.missing, cut_at=None if not d.missing else end - start,
                                extra_bytes=d.extra, booleans=d.booleans, unread=d.unread)
    return fields, None


def kind_of_record(rec):
    """The EventKind of a DxgKrnl record: its id's, or one made for an id the manifest does not have, or for a
    classic header (whose Type byte is no manifest id)."""
    if rec.kind not in etlfile.EVENT_HEADERS:
        return classic_kind(rec.event_id, rec.opcode)
    kind = KINDS.get(rec.event_id)
    return kind if kind is not None else unknown_kind(rec.event_id, rec.version, rec.opcode)


def decode(rec, kind, header, name: str):
    """The Event of one DxgKrnl record, whatever its payload holds (what does not fit is its ``odd``)."""
    end = rec.offset + rec.size
    if rec.kind not in etlfile.EVENT_HEADERS:  # a DxgKrnl GUID on a classic header: no template places its bytes
        fields, odd = {}, Odd._new(payload=bytes(rec.buffer.data[rec.payload:end]), why="header")
    else:
        fields, odd = read_payload(kind, rec.version, rec.pointer_size, rec.buffer.data, rec.payload, end)
    return new_event(rec.number, kind, rec.version, fields, header.utc(rec.timestamp), rec.process_id,
                     rec.thread_id, {}, name, odd)


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
        kind = kind_of_record(rec)
        event = decode(rec, kind, header, name)
        reader.decoded += 1
        if kind.event_id not in ENTRY_OF:
            reader.other_dxgkrnl += 1
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
    for (provider, event_id, classic), n in counts.items():
        entry = providers.get(provider)
        if entry is None:
            entry = providers[provider] = {"guid": provider, "name": names.get(provider) or provider_name(provider),
                                           "events": 0, "ids": {}, "id_names": {}}
        entry["events"] += n
        key = (classic and provider == DXGKRNL, event_id)  # DxgKrnl's classic Type is no manifest id
        entry["ids"][key] = entry["ids"].get(key, 0) + n
    ordered = sorted(providers.values(), key=lambda e: (-e["events"], e["guid"] or ""))
    for entry in ordered:
        entry["ids"] = {(f"classic {k}" if classic else str(k)): v for (classic, k), v in sorted(entry["ids"].items())}
        if entry["guid"] == DXGKRNL:  # its events by the manifest's symbols (an id it lacks: under its number)
            entry["id_names"] = {k: name for k in entry["ids"] if not k.startswith("classic") and
                                 (name := dxgkrnl_event_name(int(k))) is not None}
            entry["id_names"].update({k: f"classic Type {k.split()[1]}" for k in entry["ids"]
                                      if k.startswith("classic")})
            symbols: dict = {}
            for k, n in entry["ids"].items():
                name = entry["id_names"].get(k, f"EventID {k}")
                symbols[name] = symbols.get(name, 0) + n
            entry["symbols"] = symbols
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
