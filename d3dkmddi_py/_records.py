"""``dataclass``, ``field`` and ``replace`` for the package's record types, without the cost of
``dataclasses`` at start-up.

``dataclasses`` imports ``inspect`` (~6 ms) and compiles each class's methods from source text
(~0.5 ms a class); a one-word decode loads ~40 record classes, so that was a third of its start-up.
Here the methods are shared functions reading a per-class tuple of fields.  The classes stay
dataclasses to the standard library: ``dataclasses.fields``, ``asdict``, ``replace`` and
``is_dataclass`` see them through ``__dataclass_fields__``, computed by ``dataclasses`` itself the
first time anything asks (only then is ``dataclasses`` imported).

The subset the package uses: ``frozen``, ``eq``, defaults, ``field(default=, default_factory=,
compare=)``, ``__post_init__``, and fields inherited from a record base class.  ``cls._new(*values)`` builds
a record without ``__post_init__``: a record that checks what a user gives it is built unchecked from the
package's own values.
"""
from __future__ import annotations

_MISSING = object()


class FrozenInstanceError(AttributeError):
    """An attribute of a frozen record was assigned or deleted."""


class _Field:
    __slots__ = ("name", "default", "factory", "compare", "annotation")

    def __init__(self, default=_MISSING, factory=_MISSING, compare=True):
        self.name, self.default, self.factory, self.compare, self.annotation = None, default, factory, compare, None


def field(*, default=_MISSING, default_factory=_MISSING, compare: bool = True):
    """A field's default, default factory or ``compare=False`` (what ``dataclasses.field`` says)."""
    return _Field(default, default_factory, compare)


def _is_classvar(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.startswith(("ClassVar", "typing.ClassVar"))


class _DataclassFields:
    """``__dataclass_fields__``: the standard library's own Field objects, worked out on first use by
    running ``dataclasses.dataclass`` on a stand-in class with the same annotations and defaults."""

    def __set_name__(self, owner, name):
        self.cache = {}

    def __get__(self, obj, owner):
        found = self.cache.get(owner)
        if found is None:
            import dataclasses  # only when asked: dataclasses imports inspect

            namespace = {"__annotations__": {f.name: f.annotation for f in owner._record_fields_}}
            for f in owner._record_fields_:
                if f.factory is not _MISSING:
                    namespace[f.name] = dataclasses.field(default_factory=f.factory, compare=f.compare)
                elif f.default is not _MISSING or not f.compare:
                    kw = {} if f.default is _MISSING else {"default": f.default}
                    namespace[f.name] = dataclasses.field(compare=f.compare, **kw)
            stand_in = dataclasses.dataclass(type(owner.__name__, (), namespace))
            found = self.cache[owner] = stand_in.__dataclass_fields__
        return found


class _DataclassParams:
    def __init__(self, frozen: bool, eq: bool):
        self.init, self.repr, self.eq, self.order, self.unsafe_hash, self.frozen = True, True, eq, False, False, frozen


def _init(self, *args, **kwargs):
    fields = type(self)._record_fields_
    if len(args) > len(fields):
        raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments but {len(args)} were given")
    setter = object.__setattr__
    for f, value in zip(fields, args):
        setter(self, f.name, value)
    for f in fields[len(args):]:
        if f.name in kwargs:
            value = kwargs.pop(f.name)
        elif f.factory is not _MISSING:
            value = f.factory()
        elif f.default is not _MISSING:
            value = f.default
        else:
            raise TypeError(f"{type(self).__name__}() missing required argument {f.name!r}")
        setter(self, f.name, value)
    if kwargs:  # a name that is no field, or a positional one given again
        name = next(iter(kwargs))
        what = "multiple values for argument" if name in {f.name for f in fields} else "an unexpected keyword argument"
        raise TypeError(f"{type(self).__name__}() got {what} {name!r}")
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _new(cls, *values):
    """A record of every field's value, in order, without ``__post_init__``: what the package builds from values
    it made itself, where the public constructor checks what a user gives it."""
    self = object.__new__(cls)
    setter = object.__setattr__
    for f, value in zip(cls._record_fields_, values):
        setter(self, f.name, value)
    return self


def _repr(self):
    return f"{type(self).__qualname__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in self._record_fields_)})"


def _key(self) -> tuple:
    return tuple(getattr(self, f.name) for f in self._record_fields_ if f.compare)


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _key(self) == _key(other)


def _hash(self):
    return hash(_key(self))


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def dataclass(cls=None, *, frozen: bool = False, eq: bool = True):
    """``@dataclass``, ``@dataclass(frozen=True)``, ``@dataclass(frozen=True, eq=False)``."""
    def wrap(cls):
        fields = {f.name: f for base in reversed(cls.__mro__[1:]) for f in getattr(base, "_record_fields_", ())}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if _is_classvar(annotation):
                continue
            value = cls.__dict__.get(name, _MISSING)
            f = value if isinstance(value, _Field) else _Field(value)
            f.name, f.annotation = name, annotation
            if isinstance(value, _Field):
                if f.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, f.default)
            fields[name] = f
        cls._record_fields_ = tuple(fields.values())
        methods = {"__init__": _init, "__repr__": _repr, "_new": classmethod(_new)}
        if eq:
            methods["__eq__"] = _eq
        for name, method in methods.items():
            if name not in cls.__dict__:
                setattr(cls, name, method)
        own_hash = cls.__dict__.get("__hash__", _MISSING)  # a class body's __eq__ sets it to None
        if eq and (own_hash is _MISSING or (own_hash is None and "__eq__" in cls.__dict__)):
            cls.__hash__ = _hash if frozen else None  # dataclasses' rule: eq without frozen is unhashable
        if frozen:
            cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
        cls.__match_args__ = tuple(f.name for f in cls._record_fields_)
        cls.__dataclass_params__ = _DataclassParams(frozen, eq)
        descriptor = _DataclassFields()
        descriptor.__set_name__(cls, "__dataclass_fields__")
        cls.__dataclass_fields__ = descriptor
        if cls.__doc__ is None:
            cls.__doc__ = f"{cls.__name__}({', '.join(f'{f.name}: {f.annotation}' for f in cls._record_fields_)})"
        return cls

    return wrap if cls is None else wrap(cls)


def replace(obj, **changes):
    """A copy of a record with some fields changed (``dataclasses.replace``)."""
    values = {f.name: getattr(obj, f.name) for f in type(obj)._record_fields_}
    unknown = [k for k in changes if k not in values]
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {unknown[0]!r}")
    values.update(changes)
    return type(obj)(**values)
