"""AdapterAllocation's part of the picture: the live allocated bytes per process after each row, column-wise (a
module of the catalog's AdapterAllocation entry; its name starts with _, so it registers nothing itself)."""
from __future__ import annotations

from ..outputs import panels as draw
from ..outputs.panels import plain
from ._allocations import MOST_BYTES
from ..model.section import plural, process_text

_KEYS = ("ptr", "kind", "handle", "process", "size")  # a live allocation: adapter, identity's kind and handle, ...


def _empty_live(np) -> dict:
    return {k: np.zeros(0, dtype=bool if k == "kind" else np.uint64) for k in _KEYS}


def take(collector, np, cells, x, numbers, adapters) -> None:
    """Live bytes per process after each row: as the tables' and the text's live allocations keep them (one key:
    ``_allocations.key``, per adapter; a Start of a live one replaces it, a Stop removes the one it names), column-wise: a row's
    live allocation of the same key is the last row before it with that key when that row is no Stop
    (every row with the key takes it away, only a Start or DCStart puts it back).  The live allocations are kept
    between chunks as arrays (33 bytes each)."""
    totals_of = collector.state.setdefault("totals", {})  # (adapter, hProcessId) -> live bytes, for those drawn
    ptr = np.asarray(adapters, dtype=np.uint64)
    pointers, first = np.unique(ptr, return_index=True)
    kept = [p for p in pointers[np.argsort(first, kind="stable")].tolist() if collector.adapter(p) is not None]
    ok = np.isin(ptr, np.asarray(kept, dtype=np.uint64))  # rows of adapters past MAX_ADAPTERS are counted
    collector.dropped_events += int(len(ok) - ok.sum())
    stop = np.fromiter((o == "Stop" for o in plain(cells["opcode"])), dtype=bool, count=len(ptr))[ok]
    dxg = np.asarray(cells["hDxgGlobalAlloc"], dtype=np.uint64)[ok]
    kind = dxg != 0  # identity_of: hDxgGlobalAlloc when it is not 0, else hVidMmGlobalAlloc
    handle = np.where(kind, dxg, np.asarray(cells["hVidMmGlobalAlloc"], dtype=np.uint64)[ok])
    process = np.asarray(cells["hProcessId"], dtype=np.uint64)[ok]
    size = np.asarray(cells["Size"], dtype=np.uint64)[ok]
    x, numbers, ptr = x[ok], numbers[ok], ptr[ok]
    named = (handle != 0) | stop  # the one rule (_allocations.key): a Start of two 0 handles names nothing to keep
    if not named.all():
        stop, kind, handle, process, size, x, numbers, ptr = (v[named] for v in (stop, kind, handle, process, size, x,
                                                                                numbers, ptr))
    held = collector.state.get("live") or _empty_live(np)  # the live allocations the rows before left
    h = len(held["ptr"])
    a_ptr, a_kind, a_handle = (np.concatenate([held[k], v]) for k, v in
                               (("ptr", ptr), ("kind", kind), ("handle", handle)))
    a_process, a_size = np.concatenate([held["process"], process]), np.concatenate([held["size"], size])
    a_stop = np.concatenate([np.zeros(h, dtype=bool), stop])
    order = np.lexsort((np.arange(len(a_ptr)), a_handle, a_kind, a_ptr))  # by key, then in order
    same = (a_ptr[order][1:] == a_ptr[order][:-1]) & (a_kind[order][1:] == a_kind[order][:-1]) & \
        (a_handle[order][1:] == a_handle[order][:-1])
    before = np.full(len(a_ptr), -1, dtype=np.int64)
    before[order[1:][same]] = order[:-1][same]
    before = before[h:]  # each row's previous row of its key (-1: none)
    gone = before >= 0
    gone[gone] = ~a_stop[before[gone]]
    gone_process = np.where(gone, a_process[np.maximum(before, 0)], 0)
    gone_size = np.where(gone, a_size[np.maximum(before, 0)], 0)
    last = np.ones(len(a_ptr), dtype=bool)  # each key's last row: live after the chunk unless a Stop
    last[order[:-1][same]] = False
    live = last & ~a_stop
    collector.state["live"] = {"ptr": a_ptr[live], "kind": a_kind[live], "handle": a_handle[live],
                 "process": a_process[live], "size": a_size[live]}
    unmatched = stop & ~gone
    for p, n in zip(*(u.tolist() for u in np.unique(ptr[unmatched], return_counts=True))):
        notes = collector.adapters[p].notes
        notes["unmatched"] = notes.get("unmatched", 0) + n
    # the changes, in row order (a row's removal before its addition): a Start of a live allocation of the
    # same process is one change, one sample
    same_process = gone & (gone_process == process)
    out = gone & (stop | ~same_process)
    add = ~stop
    rows = np.concatenate([np.flatnonzero(out), np.flatnonzero(add)])
    if not len(rows):  # a chunk of Stops of allocations not seen starting changes no process's bytes
        return
    seq = np.argsort(np.concatenate([rows[:out.sum()] * 2, rows[out.sum():] * 2 + 1]), kind="stable")
    rows = rows[seq]
    owner = np.concatenate([gone_process[out], process[add]])[seq]
    taken = np.where(same_process, gone_size, 0)[add]
    positive = size[add]
    # the totals are exact in uint64 (wrapping as the deltas do) while they stay under 2**64; else as Python
    # ints, which Samples refuses past 2**64 as it always did
    exact = float(positive.sum(dtype=np.float64)) + float(sum(totals_of.values(), 0)) < 2.0 ** 63
    dtype = np.uint64 if exact else object
    delta = np.concatenate([(np.uint64(0) - gone_size[out]).astype(dtype) if exact else
                            -gone_size[out].astype(object), positive.astype(dtype) - taken.astype(dtype)])[seq]
    c_ptr = ptr[rows]
    firsts = {}
    for i, key in enumerate(zip(c_ptr.tolist(), owner.tolist())):
        firsts.setdefault(key, i)  # Python keys, in the order their first change comes
    group = np.lexsort((np.arange(len(rows)), owner, c_ptr))
    g_ptr, g_owner = c_ptr[group], owner[group]
    cuts = np.flatnonzero((g_ptr[1:] != g_ptr[:-1]) | (g_owner[1:] != g_owner[:-1])) + 1
    spans = {}
    for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(group)].tolist()):
        spans[(int(g_ptr[lo]), int(g_owner[lo]))] = group[lo:hi]
    for key in sorted(firsts, key=firsts.get):
        span = spans[key]
        a = collector.adapters[key[0]]
        if key not in totals_of and collector.series(a, "live", key[1], len(span)) is None:
            continue
        start = totals_of.get(key, 0)
        totals = np.cumsum(delta[span], dtype=dtype) + (np.uint64(start) if exact else start)
        totals_of[key] = int(totals[-1])
        if not exact and (totals > MOST_BYTES).any():  # drawn at what a byte count holds, and said
            collector.said["live bytes passed 2**64-1 and are drawn at 0xffffffffffffffff"] = \
                collector.said.get("live bytes passed 2**64-1 and are drawn at 0xffffffffffffffff", 0) + 1
            totals = np.minimum(totals, MOST_BYTES)
        a.series["live"][key[1]].extend(np, x[rows[span]], numbers[rows[span]], totals)


def panel(np, picture, a, ax, columns: int) -> None:
    """The live allocated bytes per process."""
    live = a.group("live")
    title = (f"adapter 0x{a.pointer:x}: live allocated bytes per process (AdapterAllocation Start and DCStart add "
             f"its Size, Stop takes it away)")
    if not live:
        return draw.empty(ax, title, f"no AdapterAllocation events for this adapter: {draw.record_hint((33, 34, 35))}")
    keys = draw.top(live, list(live))
    colors = draw.colors(keys)
    draw.axes(np, picture, ax, title, max(live[k].highest() for k in keys))
    draw.lines(np, picture, ax, [(process_text(k), live[k], colors[k]) for k in keys], columns)
    draw.marks(np, picture, a, ax, columns)
    unmatched = a.notes.get("unmatched", 0)
    if unmatched:
        ax.text(0.99, 0.97, f"{plural(unmatched, 'Stop')} of allocations not seen starting: nothing taken away",
                ha="right", va="top", transform=ax.transAxes, fontsize=7)
    draw.legend(ax, len(live) - len(keys), "process", "processes")


PANEL = draw.Panel("live", ("opcode", "hDxgGlobalAlloc", "hVidMmGlobalAlloc", "hProcessId", "Size"), take, panel,
                   order=30)
