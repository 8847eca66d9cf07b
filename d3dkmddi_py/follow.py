"""Following pointers: a structure decoded from memory, with what its pointers point to, recursively.

What each pointer points to, and how many, is stated once beside the layouts (``_spec.POINTS_TO``, with
the page's sentences); handles and other pointers not followed are ``_spec.OPAQUE``, with the reason.
``follow`` reads through any memory of ``d3dkmddi_py.memory`` and records, never raises on, what cannot
be followed: a NULL pointer, a count of 0, a pointer into a gap, a cycle, a count no source states, an
array its flag says is unused.  It refuses a follow that would decode more than ``max_records`` records
or read more than ``max_bytes`` bytes in all (``follow_all``: in all for every record asked for), an
array whose stride is smaller than its element, and records a target's pointers cannot reach (an x86
record above 4 GB).

``render_follow`` prints the result as WinDbg's ``dx -r`` does, indented, each record with its address
(the record lines are the ``dt -r`` text of ``dttext``); ``follow_json`` gives one JSON object with the
package's JSON rules (``render_follow_lines`` and ``follow_json_pieces`` give the same text a piece at a
time, so a large follow is written as it is made); ``segments_adapter`` turns a followed DXGK_QUERYSEGMENTOUT* into the semantics
``Adapter`` its allocation infos are checked against.
"""
from __future__ import annotations

from functools import lru_cache

from . import _spec
from ._records import dataclass
from ._spec.base import POINTER_SIZE, SCALARS, scalar_size
from .errors import (DecodeError, InvalidArgument, MissingMember, NotAType, bad_argument, choice_argument, flag_argument,
                     integer_argument, items_argument, mapping_argument, name_argument, shown)
from .jsonvalue import hex_text, json_value
from .layout import Leaf, Nested, Scalar, TypeLayout, resolve_type_name, type_layout
from .memory import MemoryGap, UnreadableMemory, as_memory, parse_address, windbg_address
from .names import absent_type, type_guard
from .render import format_number, is_pointer
from .resolve import resolve_layout
from .wording import noun, plural

MAX_RECORDS = 65_536  # records one follow decodes in all
MAX_BYTES = 16 << 20  # bytes one follow reads in all: records and byte arrays
MAX_DEPTH = 32  # pointer levels followed below the first record (the table's chains are 2 deep)
BYTE = "BYTE"  # PointsTo.type of raw bytes

# Link.status values
STATUSES = FOLLOWED, NULL, EMPTY, UNREAD, CYCLE, UNKNOWN_COUNT, UNUSED, OPAQUE, TOO_DEEP = (
    "followed", "null", "empty", "unread", "cycle", "unknown count", "unused", "opaque", "too deep")


_ADDRESS_END = 1 << 64


def _address_argument(value, name: str) -> int:
    return integer_argument(value, name, 0, _ADDRESS_END - 1)


@dataclass(frozen=True, eq=False)
class Missing:
    """An element that was not decoded: ``why`` is "unread" (with the memory's message) or "cycle"."""

    address: int
    why: str
    message: str

    def __post_init__(self):
        _address_argument(self.address, "Missing: address")
        choice_argument(self.why, "Missing: why", (UNREAD, CYCLE))
        name_argument(self.message, "Missing: message", "a str saying why (not empty)")


@dataclass(frozen=True, eq=False)
class Link:
    """One pointer member of a record and what came of following it.

    ``items``: the records (``Node``), values (int) or, for bytes, one ``bytes``, with a ``Missing`` for
    each element that was not read; ``count`` and ``stride`` as the record states them (None where it
    does not); ``note`` says why a pointer was not followed or what was missing."""

    member: str
    pointer: int
    c_type: str
    points_to: object  # the _spec PointsTo, or None for an opaque member
    status: str
    count: int | None = None
    stride: int | None = None
    items: tuple = ()
    note: str = ""

    def __post_init__(self):
        name_argument(self.member, "Link: member", "the pointer member's path (a str)")
        _address_argument(self.pointer, "Link: pointer")
        name_argument(self.c_type, "Link: c_type", "the member's C type (a str)")
        if self.points_to is not None and not isinstance(self.points_to, _spec.PointsTo):
            raise bad_argument("Link: points_to", self.points_to, "a _spec.PointsTo or None")
        choice_argument(self.status, "Link: status", STATUSES)
        if self.count is not None:
            integer_argument(self.count, "Link: count", 0, _ADDRESS_END)
        if self.stride is not None:
            integer_argument(self.stride, "Link: stride", 1, _ADDRESS_END)
        entry = self.points_to
        kind, said = ((), "nothing (points_to is None)") if entry is None else \
            ((bytes,), "bytes") if entry.type == BYTE else \
            ((Node,), f"{entry.type} records (Node)") if entry.type in _spec.TYPEDEFS or entry.type in _spec.ALIASES \
            else ((int,), f"{entry.type} values (int)")
        items = items_argument(self.items, "Link: items", (*kind, Missing), f"a tuple of {said} or Missing items")
        if any(isinstance(i, int) for i in items) and self.stride is None:
            raise DecodeError("Link: values (ints) need stride, the size of each")
        object.__setattr__(self, "items", items)
        if not isinstance(self.note, str):
            raise bad_argument("Link: note", self.note, "a str")


@dataclass(frozen=True, eq=False)
class Node:
    """A record read from memory: its layout, address and bytes, and a Link per pointer member."""

    layout: TypeLayout
    address: int
    data: bytes
    links: tuple

    def __post_init__(self):
        if not isinstance(self.layout, TypeLayout) or self.layout.kind == "enum":
            raise bad_argument("Node: layout", self.layout, "a structure's TypeLayout (resolve_layout(type, target))")
        _address_argument(self.address, "Node: address")
        if not isinstance(self.data, (bytes, bytearray, memoryview)) or len(self.data) != self.layout.size:
            raise bad_argument("Node: data", self.data, f"the {self.layout.size} bytes of a {self.layout.c_name}")
        object.__setattr__(self, "data", bytes(self.data))
        links = items_argument(self.links, "Node: links", Link, "a tuple of Link")
        paths = {p.path for p in _pointer_members(self.layout)}
        for link in links:
            if link.member not in paths:
                raise DecodeError(f"Node: a link names {link.member!r}, not a pointer member of "
                                  f"{self.layout.c_name} ({', '.join(sorted(paths)) or 'it has none'})")
        object.__setattr__(self, "links", links)

    @property
    def values(self) -> dict:
        return self.layout.values(self.data)

    def link(self, member: str) -> Link:
        for link in self.links:
            if isinstance(member, str) and link.member == member:
                return link
        names = ", ".join(link.member for link in self.links) or "none"
        raise MissingMember(f"{self.layout.c_name} has no pointer member {shown(member, 40)} (its pointer members: "
                            f"{names})")


# ------------------------------------------------------------------ the pointer members of a layout
@dataclass(frozen=True)
class PointerMember:
    """A pointer leaf of a layout: its path, the typedef that declares it and its name there, and the
    path prefix of that typedef's members (where its count and stride members are)."""

    path: str
    c_type: str
    owner: str
    member: str
    prefix: str


def pointer_members(layout) -> tuple:
    """Every pointer or handle leaf of ``layout`` (a TypeLayout, or a type name or class at its default
    target) with the typedef that declares it (a member of a nested typedef is that typedef's), in leaf
    order."""
    return _pointer_members(layout if isinstance(layout, TypeLayout) else resolve_layout(layout))


@lru_cache(maxsize=None)
def _pointer_members(layout: TypeLayout) -> tuple:
    out = []
    if layout.kind == "enum":
        return ()

    def walk(rec, owner, rel, prefix, owner_prefix):
        for m in rec.members:
            if isinstance(m, Scalar) and is_pointer(m.ctype):
                out.append(PointerMember(prefix + m.name, m.ctype, owner, rel + m.name, owner_prefix))
            elif isinstance(m, Nested):
                sub = prefix if m.name is None else prefix + m.name + "."
                if m.type_name is not None:
                    walk(m.record, resolve_type_name(m.type_name), "", sub, sub)
                else:
                    walk(m.record, owner, rel if m.name is None else rel + m.name + ".", sub, owner_prefix)

    walk(layout.record, layout.c_name, "", "", "")
    return tuple(out)


# ------------------------------------------------------------------ following
class FollowLimit(DecodeError):
    """A follow that would decode more records or read more bytes than its limits allow."""


class _Budget:
    """What a follow may still decode: records and bytes, each refused past its limit."""

    def __init__(self, records: int, size: int):
        # past 2**64 a limit changes nothing (the address space holds no more bytes, so no more records)
        records = min(integer_argument(records, "max_records", 1), 1 << 64)
        size = min(integer_argument(size, "max_bytes", 1), 1 << 64)
        self.records, self.bytes = records, size
        self.limits = f"{plural(records, 'record')} and {plural(size, 'byte')}"

    def take(self, where: str, records: int, size: int, count: int, element: str) -> None:
        if records > self.records or size > self.bytes:
            raise FollowLimit(
                f"{where}: {count} {element} would take the follow past its limit of {self.limits} in "
                f"all ({plural(self.records, 'record')} and {plural(self.bytes, 'byte')} left); the count looks wrong (is the "
                f"structure at this address, and the target right?), or raise max_records= / max_bytes=")
        self.records -= records
        self.bytes -= size


def follow(type_, memory, address, *, target=None, counts=None, max_records: int = MAX_RECORDS,
           max_bytes: int = MAX_BYTES, table=None, opaque=None) -> Node:
    """The record of ``type_`` at ``address`` of ``memory`` with everything its pointers point to.

    ``memory``: any memory ``d3dkmddi_py.memory.as_memory`` takes (an object with ``read``, a Ranges,
    an ImageFile, a KernelDump).  ``counts``: element counts no source states, by ``"TYPE.member"``
    (``{"DXGK_QUERYSEGMENTOUT5.SegmentDescriptors": 4}``).  ``table``/``opaque`` replace the layout
    table's POINTS_TO/OPAQUE (to follow a structure of your own).  Unreadable first bytes raise the
    memory's error; everything below is recorded in the links.
    """
    return follow_all(type_, memory, address, 1, target=target, counts=counts, max_records=max_records,
                      max_bytes=max_bytes, table=table, opaque=opaque)[0]


def follow_all(type_, memory, address, count: int = 1, *, target=None, counts=None, max_records: int = MAX_RECORDS,
               max_bytes: int = MAX_BYTES, table=None, opaque=None) -> tuple:
    """``follow`` of ``count`` records one after another from ``address``, as a tuple of Nodes: the limits
    hold for all of them together (what the command line's ``--follow --count N`` decodes)."""
    layout = resolve_layout(type_, target)
    if layout.kind == "enum":
        raise DecodeError(f"{layout.c_name} is an enum, not a structure with pointers to follow")
    memory = as_memory(memory)
    address = parse_address(address)
    count = integer_argument(count, "count", 1, 1 << 64)
    budget = _Budget(max_records, max_bytes)
    counts = mapping_argument(counts, "counts", "a mapping of 'TYPE.member' to a count, or None")
    table = _spec.POINTS_TO if table is None else _points_to_table(table)
    opaque = _spec.OPAQUE if opaque is None else _opaque_table(opaque)
    check_target_address(layout, address, count)
    walker = _Walker(memory, budget, counts, table, opaque)
    nodes = []
    for i in range(count):
        at = address + i * layout.size
        budget.take(f"{layout.c_name} at {hex_text(at)}", 1, layout.size, 1, "record")
        data = memory.read(at, layout.size)
        nodes.append(walker.node(layout, at, data, ((layout.c_name, at),), 0))
    return tuple(nodes)


def check_target_address(layout: TypeLayout, address: int, count: int = 1) -> None:
    """Refuse ``count`` records of ``layout`` at ``address`` where its target's pointers cannot reach: an x86
    record above 4 GB is a 64-bit target's memory read at the wrong ABI (its text would show the address cut)."""
    if not isinstance(layout, TypeLayout):
        raise bad_argument("check_target_address: layout", layout, "a TypeLayout (type_layout(name, target))")
    address = integer_argument(address, "check_target_address: address", 0, (1 << 64) - 1)
    count = integer_argument(count, "check_target_address: count", 1, 1 << 64)
    bits = 8 * POINTER_SIZE[layout.abi]
    end = address + count * layout.size
    if end > 1 << bits:
        what = f"{layout.c_name} at {windbg_address(address)}" if count == 1 else \
            f"{count} {layout.c_name} records of {layout.size} bytes at {windbg_address(address)}"
        if bits == 64:
            raise DecodeError(f"{what} {'runs' if count == 1 else 'run'} past the end of the 64-bit address space: "
                              f"the address or the count is wrong")
        raise DecodeError(f"{what}: {layout.label} is a {bits}-bit target, whose addresses end at "
                          f"{hex_text((1 << bits) - 1)}, so this memory is a 64-bit target's (WinDbg shows its "
                          f"addresses with 16 digits); pass --abi x64 or arm64 (target= in Python)")


def _key(key, name: str) -> None:
    if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
        raise InvalidArgument(f"{name}: a key is {shown(key, 40)}, not a (TYPE, member) pair of strs")


def _points_to_table(value) -> dict:
    """A user's POINTS_TO: (TYPE, member) -> a _spec.PointsTo whose parts are of the kinds the table's are."""
    table = mapping_argument(value, "table", "a mapping like _spec.POINTS_TO: (TYPE, member) -> _spec.PointsTo")
    for key, entry in table.items():
        _key(key, "table")
        where = f"table[{key!r}]"
        if not isinstance(entry, _spec.PointsTo):
            raise bad_argument(where, entry, "a _spec.PointsTo")
        if not isinstance(entry.type, str) or not (entry.type == BYTE or entry.type in _spec.TYPEDEFS
                                                   or entry.type in _spec.ALIASES or entry.type in SCALARS):
            raise bad_argument(f"{where}.type", entry.type, "BYTE, a typedef or a scalar C type of the table")
        if entry.count is not None and not isinstance(entry.count, str):
            integer_argument(entry.count, f"{where}.count", 0)
        for part in ("stride", "when", "note"):
            if getattr(entry, part) is not None and not isinstance(getattr(entry, part), str):
                raise bad_argument(f"{where}.{part}", getattr(entry, part), "a str or None")
        items_argument(entry.quotes, f"{where}.quotes", str, "a tuple of strs")
    return table


def _opaque_table(value) -> dict:
    """A user's OPAQUE: (TYPE, member) -> the reason it is not followed (a str)."""
    table = mapping_argument(value, "opaque", "a mapping like _spec.OPAQUE: (TYPE, member) -> reason")
    for key, reason in table.items():
        _key(key, "opaque")
        name_argument(reason, f"opaque[{key!r}]", "the reason it is not followed (a str)")
    return table


def _member_value(values: dict, layout: TypeLayout, p, entry, part: str) -> int:
    """The value of the member a table entry's ``part`` (count, stride, when) names, in the record."""
    name = getattr(entry, part)
    value = values.get(p.prefix + name)
    if value is None:
        raise DecodeError(f"the entry for {p.owner}.{p.member} says its {part} is {name!r}, which {layout.c_name}"
                          f"{' (in ' + p.prefix.rstrip('.') + ')' if p.prefix else ''} does not have")
    return value


def _link(member, pointer, c_type, points_to, status, count=None, stride=None, items=(), note="") -> Link:
    """A Link the follow made from its own values: built unchecked, as Link's constructor checks a user's."""
    return Link._new(member, pointer, c_type, points_to, status, count, stride, items, note)


class _Walker:
    def __init__(self, memory, budget, counts, table, opaque):
        self.memory, self.budget, self.counts, self.table, self.opaque = memory, budget, counts, table, opaque

    def node(self, layout: TypeLayout, address: int, data: bytes, above: tuple, depth: int) -> Node:
        values = layout.values(data)
        links = tuple(self.link(layout, p, values, above, depth) for p in _pointer_members(layout))
        return Node._new(layout, address, data, links)

    def link(self, layout, p: PointerMember, values: dict, above: tuple, depth: int) -> Link:
        pointer = values[p.path]
        key = (p.owner, p.member)
        entry = self.table.get(key)
        if entry is None:
            reason = self.opaque.get(key, "no entry in POINTS_TO or OPAQUE says what it points to")
            return _link(p.path, pointer, p.c_type, None, OPAQUE, note=reason)
        if entry.when is not None and not _member_value(values, layout, p, entry, "when"):
            return _link(p.path, pointer, p.c_type, entry, UNUSED,
                        note=f"{entry.when} is 0, so the array does not exist" + _quoted(entry, "only if"))
        count = self._count(entry, p, values, layout)
        if count is None:
            return _link(p.path, pointer, p.c_type, entry, UNKNOWN_COUNT,
                        note=f"{entry.note}; pass counts={{'{p.owner}.{p.member}': N}} to follow it")
        if count == 0:
            return _link(p.path, pointer, p.c_type, entry, EMPTY, count)
        if pointer == 0:
            return _link(p.path, pointer, p.c_type, entry, NULL, count)
        if depth >= MAX_DEPTH:
            return _link(p.path, pointer, p.c_type, entry, TOO_DEEP, count,
                        note=f"more than {MAX_DEPTH} pointer levels below the first record")
        counted = isinstance(entry.count, str) and f"{p.owner}.{p.member}" not in self.counts
        where = (f"{layout.c_name}.{p.prefix}{entry.count} = {count}, the count of {p.path}" if counted
                 else f"{layout.c_name}.{p.path} ({count} {noun(count, 'element')})")
        if entry.type == BYTE:
            return self._bytes(where, p, pointer, entry, count, layout.abi)
        if entry.type not in _spec.TYPEDEFS and entry.type not in _spec.ALIASES:
            return self._scalars(where, p, pointer, entry, count, layout.abi)
        return self._records(where, layout, p, pointer, entry, count, values, above, depth)

    def _count(self, entry, p: PointerMember, values: dict, layout):
        override = self.counts.get(f"{p.owner}.{p.member}")
        if override is not None:
            return integer_argument(override, f"counts['{p.owner}.{p.member}']", 0)
        if isinstance(entry.count, int):
            return entry.count
        return None if entry.count is None else _member_value(values, layout, p, entry, "count")

    def _bytes(self, where, p, pointer, entry, count, abi) -> Link:
        _within_space(where, pointer, count, 1, 1, 8 * POINTER_SIZE[abi])
        self.budget.take(where, 0, count, count, "bytes")
        try:
            raw = self.memory.read(pointer, count)
        except UnreadableMemory as exc:
            return _link(p.path, pointer, p.c_type, entry, UNREAD, count, note=str(exc),
                        items=(Missing._new(pointer, UNREAD, str(exc)),))
        return _link(p.path, pointer, p.c_type, entry, FOLLOWED, count, items=(raw,))

    def _scalars(self, where, p, pointer, entry, count, abi) -> Link:
        size = scalar_size(entry.type, abi)
        _within_space(where, pointer, count, size, size, 8 * POINTER_SIZE[abi])
        self.budget.take(where, 0, count * size, count, f"{entry.type} values")
        items = tuple(block if isinstance(block, Missing) else int.from_bytes(block, "little")
                      for block in self._read_elements(pointer, count, size, size))
        return self._link(p, pointer, entry, count, size, items)

    def _records(self, where, layout, p, pointer, entry, count, values, above, depth) -> Link:
        guard = type_guard(entry.type)
        if guard is not None and not guard.holds(layout.abi, layout.version):
            raise DecodeError(f"{where} points to {entry.type}, which {layout.label} does not have: "
                              f"{absent_type(entry.type, layout.abi, layout.version)}")
        element = type_layout(resolve_type_name(entry.type), layout.abi, layout.version)
        stride = element.size if entry.stride is None else _member_value(values, layout, p, entry, "stride")
        if stride < element.size:
            raise DecodeError(f"{where}: {entry.stride} = {stride}, less than the {element.size} bytes of "
                              f"{element.c_name} at {layout.label}: the elements would overlap; decode with the "
                              f"interface version the driver was built for (--ddi)")
        _within_space(where, pointer, count, stride, element.size, 8 * POINTER_SIZE[layout.abi])
        self.budget.take(where, count, count * element.size, count, f"{element.c_name} records")
        blocks = self._read_elements(pointer, count, stride, element.size)
        items = []
        for i, block in enumerate(blocks):
            at = pointer + i * stride
            if isinstance(block, Missing):
                items.append(block)
            elif (element.c_name, at) in above:
                items.append(Missing._new(at, CYCLE, f"{element.c_name} at {hex_text(at)} is being decoded above: a "
                                                f"cycle, not followed again"))
            else:
                items.append(self.node(element, at, block, above + ((element.c_name, at),), depth + 1))
        return self._link(p, pointer, entry, count, stride, tuple(items))

    @staticmethod
    def _link(p, pointer, entry, count, stride, items: tuple) -> Link:
        """The link of an array read element by element: followed, or what kept elements out."""
        missing = [m for m in items if isinstance(m, Missing)]
        if not missing:
            return _link(p.path, pointer, p.c_type, entry, FOLLOWED, count, stride, items)
        status = CYCLE if all(m.why == CYCLE for m in missing) else UNREAD
        note = f"{len(missing)} of {count} not decoded: {missing[0].message}"
        return _link(p.path, pointer, p.c_type, entry, status, count, stride, items, note)

    def _read_elements(self, pointer: int, count: int, stride: int, size: int) -> list:
        """Each element's bytes, or a Missing where memory has none; one read when they are contiguous."""
        if stride == size:
            try:
                raw = self.memory.read(pointer, count * size)
                return [raw[i * size:(i + 1) * size] for i in range(count)]
            except MemoryGap:
                pass  # read them one by one below, to keep the ones that are there
            except UnreadableMemory as exc:
                return [Missing._new(pointer + i * stride, UNREAD, str(exc)) for i in range(count)]
        out = []
        for i in range(count):
            at = pointer + i * stride
            try:
                out.append(self.memory.read(at, size))
            except UnreadableMemory as exc:
                out.append(Missing._new(at, UNREAD, str(exc)))
        return out


def _within_space(where: str, pointer: int, count: int, stride: int, size: int, bits: int) -> None:
    """An array inside the ``bits``-bit address space of the target whose pointer points to it."""
    if pointer + (count - 1) * stride + size > 1 << bits:
        raise DecodeError(f"{where}: {count} elements of {size} bytes at {hex_text(pointer)} run past the "
                          f"end of the {bits}-bit address space: the pointer or the count is wrong")


def _quoted(entry, words: str) -> str:
    said = [q for q in entry.quotes if words in q]
    return f' (the page: "{said[0]}")' if said else ""


# ------------------------------------------------------------------ text: dx -r style
def _followed(node, what: str) -> Node:
    if not isinstance(node, Node):
        raise NotAType(f"{what} takes what follow() returned, not {type(node).__name__}")
    return node


def render_follow(node: Node, *, meanings: bool = True, findings: bool = True, adapter=None) -> str:
    """The followed record as indented text: each record's ``dt -r`` lines with its title and address, what
    each value means and every finding under the field it concerns (checked against ``adapter``, a
    semantics Adapter, where given), and under each pointer member what it points to."""
    return "\n".join(render_follow_lines(node, meanings=meanings, findings=findings, adapter=adapter))


def render_follow_lines(node: Node, *, meanings: bool = True, findings: bool = True, adapter=None):
    """``render_follow``'s lines one at a time (without line ends), each record's made when it is reached:
    what a follow of many records prints while holding one record's text."""
    _followed(node, "render_follow")
    notes = _Notes(flag_argument(meanings, "meanings"), flag_argument(findings, "findings"), adapter)
    return _node_lines(node, None, notes)


class _Notes:
    """What each followed record is printed with: its meanings and findings (against an adapter), or not."""

    def __init__(self, meanings: bool, findings: bool, adapter):
        from .semantics.adapter import as_adapter

        self.meanings, self.findings, self.adapter = meanings, findings, as_adapter(adapter)

    def of(self, node: Node) -> tuple:
        """(meanings, findings) of one record."""
        found, hits = {}, []
        if self.meanings:
            from .semantics.explain import meanings_of

            found = meanings_of(node.layout, node.data, self.adapter)
        if self.findings:
            from .semantics.checks import check_record

            hits = check_record(node.layout, node.data, self.adapter)
        return found, hits


def _node_lines(node: Node, index, notes: _Notes):
    """The record's lines, with what each pointer points to under the pointer's line (indented past it)."""
    from .dttext import record_title, render_record  # the text's modules: not on the path of follow() itself

    layout = node.layout
    found, hits = notes.of(node)
    title = (f"{'' if index is None else f'[{index}] '}"
             + record_title(layout.c_name, layout.label, size=layout.size)
             + f" at {_address(node.address, layout)}")
    depth = {line.path: line.depth for line in layout.lines}
    # each pointer's line is followed by a mark (NUL never is in a record's text), replaced by what it points to
    marks = {f"\0{k}\0": link for k, link in enumerate(node.links)}
    text = render_record(layout, node.values, meanings=found, findings=hits, title=title,
                         after={link.member: [mark] for mark, link in marks.items()})
    for line in text.split("\n"):
        link = marks.get(line)
        if link is None:
            yield line
        else:
            yield from _link_lines(link, layout, "   " * (depth[link.member] + 2), notes)


def _address(address: int, layout: TypeLayout) -> str:
    return format_number(address, 8 if layout.abi != "x86" else 4, "*")[2:]


def _link_lines(link: Link, layout: TypeLayout, pad: str, notes: _Notes):
    entry = link.points_to
    if entry is None:
        yield f"{pad}-> not followed: {link.note}"
        return
    what = "bytes" if entry.type == BYTE else entry.type
    counted = "" if not isinstance(entry.count, str) else f" ({entry.count} = {link.count})"
    head = {
        NULL: f"-> NULL, though {entry.count} = {link.count}" if isinstance(entry.count, str) else "-> NULL",
        EMPTY: f"-> no {what}{counted}",
        UNUSED: f"-> not used: {link.note}",
        UNKNOWN_COUNT: f"-> {what} of unknown count: {link.note}",
        TOO_DEEP: f"-> not followed: {link.note}",
    }.get(link.status)
    if head is not None:
        yield pad + head
        return
    stride = f", every {link.stride} bytes" if entry.stride is not None else ""
    yield (f"{pad}-> {link.count} {what}{counted}{stride} at {_address(link.pointer, layout)}"
           + (f"; {link.note}" if link.note else ""))
    if entry.type == BYTE:
        for item in link.items[:1]:  # an empty or missing pointee prints no bytes
            if isinstance(item, bytes):
                yield from _db_lines(item, link.pointer, layout, pad + "   ")
        return
    for i, item in enumerate(link.items):
        at = link.pointer + i * (link.stride or 0)
        if isinstance(item, Missing):
            yield f"{pad}   [{i}] at {_address(item.address, layout)}: {item.why}"
        elif isinstance(item, Node):
            yield from (pad + "   " + line for line in _node_lines(item, i, notes))
        else:
            shown = format_number(item, link.stride)
            yield f"{pad}   [{i}] at {_address(at, layout)} : {entry.type} {shown}"


def _db_lines(data: bytes, address: int, layout: TypeLayout, pad: str):
    """The bytes as WinDbg's ``db`` prints them: 16 a line, the address first."""
    for i in range(0, len(data), 16):
        yield (f"{pad}{_address(address + i, layout)}  "
               + " ".join(f"{b:02x}" for b in data[i:i + 8]) + ("-" if len(data) > i + 8 else "")
               + " ".join(f"{b:02x}" for b in data[i + 8:i + 16]))


# ------------------------------------------------------------------ JSON
def follow_json(node: Node, *, meanings: bool = True, findings: bool = True, adapter=None) -> dict:
    """The followed record as one JSON-safe dict: ``record_json``'s keys (meanings and findings against
    ``adapter`` included), and ``pointers``, member -> what it points to (the same keys every time;
    addresses and pointer-sized values as "0x..." strings)."""
    _followed(node, "follow_json")
    return _node_json(node, _Notes(flag_argument(meanings, "meanings"), flag_argument(findings, "findings"), adapter))


def follow_json_pieces(node: Node, *, meanings: bool = True, findings: bool = True, adapter=None):
    """``json.dumps(follow_json(node))`` in pieces, each record's made when it is reached: what a follow of
    many records writes while holding one record's JSON."""
    _followed(node, "follow_json")
    notes = _Notes(flag_argument(meanings, "meanings"), flag_argument(findings, "findings"), adapter)
    return _json_pieces(_node_json(node, notes, lazy=True))


class _Lazy:
    """A JSON array whose items are made as they are written."""

    def __init__(self, items):
        self.items = items


class _Streamed(dict):
    """A JSON object with a _Lazy array somewhere inside: written key by key."""


def _json_pieces(value):
    """``json.dumps(value)`` (its default separators) in pieces, _Lazy arrays made item by item."""
    import json  # the JSON's module: not on the path of follow() itself

    if isinstance(value, _Lazy):
        yield "["
        for i, item in enumerate(value.items):
            if i:
                yield ", "
            yield from _json_pieces(item)
        yield "]"
    elif isinstance(value, _Streamed):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield f"{', ' if i else ''}{json.dumps(key)}: "
            yield from _json_pieces(item)
        yield "}"
    else:
        yield json.dumps(value)


def _node_json(node: Node, notes: _Notes, lazy: bool = False) -> dict:
    from .jsonformat import record_json_of  # the JSON's module: not on the path of follow() itself

    found, hits = notes.of(node)
    out = record_json_of(node.layout, node.data, node.values, address=node.address, meanings=found, findings=hits)
    pointers = {link.member: _link_json(link, notes, lazy) for link in node.links}
    if not lazy:
        out["pointers"] = pointers
        return out
    out = _Streamed(out)
    out["pointers"] = _Streamed(pointers)
    return out


def _link_json(link: Link, notes: _Notes, lazy: bool = False) -> dict:
    entry = link.points_to
    items = _items_json(link, notes, lazy)
    raw = next((item.hex() for item in link.items if isinstance(item, bytes)), None)
    out = {"status": link.status, "pointer": hex_text(link.pointer),
           "points_to": None if entry is None else entry.type,
           "count": link.count, "count_from": None if entry is None or not isinstance(entry.count, str)
           else entry.count, "stride": link.stride, "items": _Lazy(items) if lazy else list(items), "bytes": raw,
           "note": link.note or None}
    return _Streamed(out) if lazy else out


def _items_json(link: Link, notes: _Notes, lazy: bool):
    entry = link.points_to
    for item in link.items:
        if isinstance(item, Node):
            yield _node_json(item, notes, lazy)
        elif isinstance(item, Missing):
            yield {"address": hex_text(item.address), "status": item.why, "message": item.message}
        elif not isinstance(item, bytes):
            size = link.stride
            yield json_value(Leaf("", 0, 0, size * 8, entry.type, size, False, False), item)


# ------------------------------------------------------------------ an adapter from memory
QUERY_TYPES = ("DXGK_QUERYSEGMENTOUT", "DXGK_QUERYSEGMENTOUT3", "DXGK_QUERYSEGMENTOUT4", "DXGK_QUERYSEGMENTOUT5")


def segments_adapter(node: Node):
    """The semantics ``Adapter`` of the segments a followed DXGK_QUERYSEGMENTOUT* describes (segment id
    n is descriptor n-1), so allocation infos are checked against what the driver reported in memory.
    Every descriptor must have been read: an adapter with a segment missing would check wrongly."""
    from .semantics.adapter import Adapter

    layout = _followed(node, "segments_adapter").layout
    if layout.c_name not in QUERY_TYPES:
        raise DecodeError(f"an adapter comes from a followed {' / '.join(QUERY_TYPES)}, not {layout.c_name}")
    link = next((link for link in node.links if link.points_to is not None), None)
    if link is None:
        raise DecodeError(f"{layout.c_name}: no link to its segment descriptors (was the node made by follow()?)")
    if link.status not in (FOLLOWED, EMPTY):
        raise DecodeError(f"{layout.c_name}.{link.member}: the segment descriptors were not read ({link.status}"
                          f"{': ' + link.note if link.note else ''}), so there is no adapter to check against")
    if any(not isinstance(item, Node) for item in link.items):
        raise DecodeError(f"{layout.c_name}.{link.member}: not every segment descriptor was read")
    records = [item.data for item in link.items]
    return Adapter.from_bytes(link.points_to.type, records, target=layout.target)


__all__ = ["follow", "follow_all", "render_follow", "render_follow_lines", "follow_json", "follow_json_pieces",
           "segments_adapter", "check_target_address", "pointer_members", "Node", "Link", "Missing", "FollowLimit",
           "MAX_RECORDS", "MAX_BYTES", "MAX_DEPTH"]
