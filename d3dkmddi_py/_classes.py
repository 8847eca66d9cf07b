"""Building ctypes classes from a computed layout, with checked assignment.

Classes use natural ctypes layout where the host's ctypes agrees with the MSVC
layout computed in layout.py, and explicit padding with ``_pack_ = 1`` where it
does not (for example a 32-bit Linux host, where ctypes aligns 8-byte integers to
4).  Either way size and every offset are the target's.
"""
from __future__ import annotations

import ctypes
import operator
import sys

from .errors import InvalidArgument, InvalidFieldType, InvalidFieldValue, MissingMember
from .introspect import leaves
from .layout import BitField, RecordLayout, Scalar, record_leaves
from .wording import plural

_UNSIGNED = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_SIGNED = {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32, 8: ctypes.c_int64}


class FieldRule:
    """What one attribute of a class accepts."""

    __slots__ = ("owner", "name", "c_type", "lo", "hi", "bits", "record", "count", "halves")

    def __init__(self, owner, name, c_type, lo=0, hi=0, bits=0, record=None, count=None):
        self.owner, self.name, self.c_type = owner, name, c_type
        self.lo, self.hi, self.bits, self.record, self.count = lo, hi, bits, record, count
        self.halves = False  # True for LARGE_INTEGER.QuadPart: LowPart/HighPart take the two halves

    def check_int(self, value, where: str):
        if isinstance(value, bool):
            value = int(value)
        try:
            number = operator.index(value)
        except TypeError:
            raise InvalidFieldType(self.owner, where, value, self.valid(), f"is not an integer ({type(value).__name__})",
                                   f"{self.c_type} holds whole numbers: pass an int") from None
        if not self.lo <= number <= self.hi:
            fix = "pass a value in range, or mask it yourself if truncation is what you mean"
            if number < 0 and self.lo == 0:
                hint = f"is negative; {self.c_type} is unsigned"
            elif self.lo < 0 and self.hi < number < 1 << self.bits:
                # The unsigned spelling C code uses for a signed field (0xFFFFFFFE00000000 for an address).
                signed = _hex(number - (1 << self.bits))
                hint = f"does not fit: {self.c_type} is signed {self.bits}-bit; 0x{number:X} is {signed} as {self.c_type}"
                fix = f"assign {signed}" + (" (or use .LowPart/.HighPart)" if self.halves else "")
            else:
                hint = f"does not fit in {self.bits} bits"
            raise InvalidFieldValue(self.owner, where, value, self.valid(), hint, fix)
        return number

    def as_signed(self, value):
        """``value`` read as C reads an unsigned constant stored in this signed field (its two's
        complement); any other value unchanged, for the checked assignment to judge."""
        if (self.lo < 0 and not isinstance(value, bool) and isinstance(value, int)
                and self.hi < value < 1 << self.bits):
            return value - (1 << self.bits)
        return value

    def valid(self) -> str:
        if self.record is not None:
            return f"an instance of {self.record.__name__} from the same target"
        return f"{self.lo}..{self.hi}" if self.lo else f"0..{self.hi}, 0x{self.hi:X}"


def _hex(number: int) -> str:
    return f"-0x{-number:X}" if number < 0 else f"0x{number:X}"


def _check_assignment(self, name, value):
    cls = type(self)
    rule = cls._rules_.get(name)
    if rule is None:
        if name.startswith("_"):
            return value
        _raise_missing(cls, name)
    if rule.record is not None:
        if type(value) is not rule.record:
            what = "an integer" if isinstance(value, int) else type(value).__name__
            fix = ("assign to its .Value (or .QuadPart for a LARGE_INTEGER) instead" if isinstance(value, int)
                   else f"build it with this target's {rule.record.__name__}")
            label = getattr(type(value), "_target_label_", None)
            if label is not None and type(value)._path_ == rule.record._path_:  # same C type, another target
                hint = (f"is a {type(value).__name__} of {label}, not of {cls._target_label_}" if label != cls._target_label_
                        else f"is a {type(value).__name__} of another Target object for {label} (Target() builds new "
                             f"classes; target() returns the shared ones)")
                if ctypes.sizeof(value) == ctypes.sizeof(rule.record):
                    fix += f", or copy its bytes: {rule.record.__name__}.from_buffer_copy(value)"
                raise InvalidFieldType(cls._c_name_, name, value, rule.valid(), hint, fix)
            raise InvalidFieldType(cls._c_name_, name, value, rule.valid(), f"is {what}, not a {rule.record.__name__}", fix)
        return value
    if rule.count is not None:
        try:
            values = list(value)
        except TypeError:
            raise InvalidFieldType(cls._c_name_, name, value, f"{rule.count} items of {rule.valid()}",
                                   f"is not a sequence ({type(value).__name__})",
                                   f"give a list of {rule.count} integers") from None
        if len(values) != rule.count:
            raise InvalidFieldValue(cls._c_name_, name, value, f"{rule.count} items of {rule.valid()}",
                                    f"has {plural(len(values), 'item')}", f"give exactly {rule.count}")
        checked = [rule.check_int(v, f"{name}[{i}]") for i, v in enumerate(values)]
        return type(getattr(self, name))(*checked)  # ctypes stores an array field only from an array
    return rule.check_int(value, name)


def _raise_missing(cls, name):
    note = cls._absent_.get(name)
    if note:
        raise MissingMember(f"{cls._c_name_} has no member {name!r} at {cls._target_label_}: {note}")
    raise MissingMember(f"{cls._c_name_} has no member {name!r} at {cls._target_label_} "
                        f"(members: {', '.join(n for n in cls._rules_ if not n.startswith('_'))})")


class _Checked:
    """Behaviour shared by the Structure and Union classes of every target."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        if args:
            # ctypes would hand positional values to hidden anonymous members (_u0 ...).
            raise InvalidArgument(f"{type(self)._c_name_} takes keyword arguments only, e.g. "
                                  f"{type(self)._c_name_}(Value=...) or {type(self)._c_name_}.from_buffer_copy(data)")
        super().__init__(**kwargs)

    def __setattr__(self, name, value):
        super().__setattr__(name, _check_assignment(self, name, value))

    def __getattr__(self, name):  # only called when normal lookup fails
        if name.startswith("__"):
            raise AttributeError(name)
        _raise_missing(type(self), name)

    # Pickle and copy: the class by (abi, version, path), the bytes verbatim (reserved bits and padding too).
    def __reduce__(self):
        cls = type(self)
        return cls._rebuild_, (*cls._target_, cls._path_, bytes(self))

    def __copy__(self):
        return type(self).from_buffer_copy(self)

    def __deepcopy__(self, memo):
        return type(self).from_buffer_copy(self)

    def __repr__(self):
        values = ((leaf.path, _read(self, leaf.path)) for leaf in leaves(type(self)))
        shown = ", ".join(f"{path}={value:#x}" for path, value in values if value)
        return f"{type(self).__name__}[{type(self)._target_label_}]({shown})"


def _read(obj, path):
    for part in path.replace("[", ".[").split("."):
        obj = obj[int(part[1:-1])] if part.startswith("[") else getattr(obj, part)
    return obj


# Little-endian on any host.  LittleEndianUnion exists from Python 3.11; before that,
# plain Union is little-endian exactly on the little-endian hosts.
_LE_UNION = getattr(ctypes, "LittleEndianUnion", ctypes.Union if sys.byteorder == "little" else None)
if _LE_UNION is None:  # pragma: no cover - big-endian host on Python < 3.11
    raise ImportError("d3dkmddi_py needs Python 3.11 or later on a big-endian host (ctypes.LittleEndianUnion)")


class CheckedStructure(_Checked, ctypes.LittleEndianStructure):
    __slots__ = ()


class CheckedUnion(_Checked, _LE_UNION):
    __slots__ = ()


def _checked_array(element, count, rule, target, path, rebuild):
    def __setitem__(self, index, value):
        if isinstance(index, slice):
            positions = range(*index.indices(count))
            values = [rule.check_int(v, f"{rule.name}[{i}]") for i, v in zip(positions, value)]
            ctypes.Array.__setitem__(self, index, values)
        else:
            ctypes.Array.__setitem__(self, index, rule.check_int(value, f"{rule.name}[{index}]"))

    return type(f"{rule.c_type}_Array_{count}", (ctypes.Array,),
                {"_type_": element, "_length_": count, "__setitem__": __setitem__, "_target_": target,
                 "_rebuild_": staticmethod(rebuild), "_path_": path, "__reduce__": _Checked.__reduce__,
                 "__copy__": _Checked.__copy__, "__deepcopy__": _Checked.__deepcopy__})


class Builder:
    """Builds every class of one target; typedef classes are shared within it."""

    def __init__(self, abi: str, version: int, label: str, absent_members, force_padding=False, *, rebuild=None):
        self.abi, self.version, self.label = abi, version, label
        self.rebuild = rebuild  # (abi, version, path, bytes) -> instance: what an instance pickles to
        self.absent_members = absent_members  # (c_name, member) -> note
        self.force_padding = force_padding
        self.typedef_classes = {}

    def typedef_class(self, name: str, rec: RecordLayout):
        cls = self.typedef_classes.get(name)
        if cls is None:
            cls = self.typedef_classes[name] = self.record_class(rec, name, name)
        return cls

    def record_class(self, rec: RecordLayout, class_name: str, c_name: str):
        fields, anonymous, rules = [], [], {}
        counters = {"union": 0, "struct": 0}
        for m in rec.members:
            if isinstance(m, BitField):
                fields.append((m.name, _UNSIGNED[m.size], m.width))
                rules[m.name] = FieldRule(c_name, m.name, m.ctype, 0, (1 << m.width) - 1, m.width)
            elif isinstance(m, Scalar):
                table = _SIGNED if m.signed else _UNSIGNED
                bits = m.size * 8
                lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if m.signed else (0, (1 << bits) - 1)
                rule = FieldRule(c_name, m.name, m.ctype, lo, hi, bits, count=m.count)
                ctype = (table[m.size] if m.count is None else
                         _checked_array(table[m.size], m.count, rule, (self.abi, self.version),
                                        f"{class_name}.{m.name}", self.rebuild))
                fields.append((m.name, ctype))
                rules[m.name] = rule
            else:
                if m.type_name is not None:
                    sub = self.typedef_class(m.record.c_name, m.record)
                    fields.append((m.name, sub))
                    rules[m.name] = FieldRule(c_name, m.name, m.type_name, record=sub)
                    continue
                if m.name is None:
                    attr = f"_{m.record.kind[0]}{counters[m.record.kind]}"
                    counters[m.record.kind] += 1
                    anonymous.append(attr)
                else:
                    attr = m.name
                sub = self.record_class(m.record, f"{class_name}.{attr}", c_name)
                fields.append((attr, sub))
                rules[attr] = FieldRule(c_name, attr, m.record.kind, record=sub)
                if m.name is None:
                    rules.update(sub._rules_)
        if "LowPart" in rules and "HighPart" in rules and "QuadPart" in rules:
            rules["QuadPart"].halves = True
        return self._make(rec, class_name, c_name, fields, anonymous, rules)

    def _make(self, rec, class_name, c_name, fields, anonymous, rules):
        base = CheckedUnion if rec.kind == "union" else CheckedStructure
        namespace = {
            "__slots__": (),
            "_c_name_": c_name,
            "_target_label_": self.label,
            "_target_": (self.abi, self.version),
            "_rebuild_": staticmethod(self.rebuild),
            "_path_": class_name,  # C name, then member names for an inner record: how pickle finds it
            "_layout_": rec,
            "_leaves_": tuple(record_leaves(rec)),
            "_rules_": rules,
            "_absent_": self.absent_members.get(c_name, {}),
            "__module__": f"d3dkmddi_py[{self.label}]",
        }
        if anonymous:
            namespace["_anonymous_"] = tuple(anonymous)
        if not self.force_padding:
            cls = type(class_name, (base,), dict(namespace, _fields_=fields))
            if _matches(cls, rec, fields):
                return cls
        return type(class_name, (base,), dict(namespace, _pack_=1, _fields_=_padded(rec, fields)))


def _matches(cls, rec: RecordLayout, fields) -> bool:
    if ctypes.sizeof(cls) != rec.size or ctypes.alignment(cls) != rec.align:
        return False
    for m, f in zip(rec.members, fields):
        descriptor = getattr(cls, f[0])
        if descriptor.offset != m.offset:
            return False
    return True


def _padded(rec: RecordLayout, fields):
    """The same members with explicit padding: exact under ``_pack_ = 1`` on any host."""
    out, end, pad = [], 0, 0
    for m, f in zip(rec.members, fields):
        if rec.kind == "struct" and m.offset > end:
            out.append((f"_pad{pad}", ctypes.c_uint8 * (m.offset - end)))
            pad += 1
        out.append(f)
        size = m.size if isinstance(m, BitField) else _member_size(m)
        end = max(end, m.offset + size)
    if rec.size > end or rec.kind == "union":
        if rec.kind == "union":
            out.append((f"_pad{pad}", ctypes.c_uint8 * rec.size))
        else:
            out.append((f"_pad{pad}", ctypes.c_uint8 * (rec.size - end)))
    return out


def _member_size(m) -> int:
    if isinstance(m, Scalar):
        return m.size * (m.count or 1)
    return m.record.size
