"""``@record``: a dataclass whose ``__init__``, ``__repr__``, ``__eq__`` and ``__hash__`` are
shared functions instead of code compiled for each class.

Why: on Python 3.11 ``@dataclass`` writes the source of every method it adds and ``exec``-s it,
one compilation per method: 0.4 ms for a plain class, 0.75 ms for a frozen one (six methods).
The records a ``check`` imports (the run, its series, findings, causes, the report, the
configuration) are some thirty classes: about 12 ms of a 160 ms process, the largest part of
what a one-file ``check`` costs beyond the peer tool it is measured against
(benchmarks/RESULTS.md, "One small check", issue 26).  Python 3.13 compiles a class's methods
in one go (``dataclasses._FuncBuilder``) for the same reason.

What a record is: a real dataclass (``dataclasses.fields``, ``replace``, ``asdict`` and
``is_dataclass`` work, and type checkers read it as one through ``dataclass_transform``, PEP 681)
built with ``init=False, repr=False, eq=False``, to which this module attaches methods that
behave as the generated ones do: positional and keyword arguments in field order, defaults and
``default_factory``, ``field(init=False)``, ``__post_init__``; the ``repr`` of the fields with
``repr=True``; equality of the fields with ``compare=True`` between instances of the same class;
for ``frozen=True``, ``FrozenInstanceError`` on assignment and deletion and a hash of the
compared fields (``field(hash=...)`` honoured).  tests/test_records.py checks each against
``@dataclass`` on the same classes.  Not supported (a ``TypeError`` at class creation, so that
nothing silently differs): ``kw_only`` fields, ``InitVar``, ``order`` and ``slots``.  Methods the
class writes itself are kept, as ``@dataclass`` keeps them.

The constructor is a loop over the fields instead of straight-line code: about 0.6 us more for
a four-field record made positionally (0.9 against 0.3 us), and faster for a large frozen one
made by keyword (a ``Finding``: 2.7 against 4.0 us, one ``__dict__`` update instead of sixteen
``object.__setattr__`` calls).  Records made per logged point stay ``@dataclass`` or named
tuples.  ``inspect.signature`` of a record shows ``(*args, **kwargs)``; type checkers and
``dataclasses.fields`` give the fields.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

if TYPE_CHECKING:  # typeshed has it for every Python the package supports
    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: only type checkers read the marker

        def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
            return lambda f: f


T = TypeVar("T", bound=type)


def _init(cls: type, fields: tuple[dataclasses.Field, ...], frozen: bool) -> Callable[..., None]:
    """``__init__(self, *args, **kwargs)`` binding the arguments to ``fields`` as the generated
    one would, with its error messages.

    The values are gathered in field order and stored with one ``__dict__`` update: what
    ``object.__setattr__`` (frozen) or plain assignment does to a field of a class that does
    not write its own ``__setattr__``.  A class that does gets each value through it."""
    params = tuple(f for f in fields if f.init)
    names = tuple(f.name for f in params)
    allowed = frozenset(names)
    # the value of a field the caller left out: (name, default, factory), in field order
    fallback = tuple(
        (f.name, f.default, None if f.default_factory is dataclasses.MISSING else f.default_factory) for f in params
    )
    hidden = tuple(
        (f.name, f.default, None if f.default_factory is dataclasses.MISSING else f.default_factory) for f in fields if not f.init
    )
    has_post_init = hasattr(cls, "__post_init__")
    through_setattr = not frozen and cls.__setattr__ is not object.__setattr__
    qualname = cls.__qualname__
    missing_marker = dataclasses.MISSING

    def bad_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
        """The error Python raises for a generated ``__init__`` called this way."""
        least = sum(1 for _, default, factory in fallback if default is missing_marker and factory is None)
        if len(args) > len(names):
            takes = f"from {least + 1} to {len(names) + 1}" if least < len(names) else str(len(names) + 1)
            return TypeError(f"{qualname}.__init__() takes {takes} positional argument{'s' if len(names) else ''} but {len(args) + 1} were given")
        for key in kwargs:
            if key not in allowed:
                return TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            if key in names[: len(args)]:
                return TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
        given = set(names[: len(args)]) | set(kwargs)
        quoted = [repr(n) for n, default, factory in fallback if default is missing_marker and factory is None and n not in given]
        # Python's own wording (Python/ceval.c, format_missing)
        listed = quoted[0] if len(quoted) == 1 else " and ".join(quoted) if len(quoted) == 2 else ", ".join(quoted[:-1]) + ", and " + quoted[-1]
        return TypeError(f"{qualname}.__init__() missing {len(quoted)} required positional argument{'s' if len(quoted) > 1 else ''}: {listed}")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        n = len(args)
        if n > len(names) or (kwargs and not (kwargs.keys() <= allowed and kwargs.keys().isdisjoint(names[:n]))):
            raise bad_call(args, kwargs)
        values = dict(zip(names, args))
        for name, default, factory in fallback[n:]:
            if name in kwargs:
                values[name] = kwargs[name]
            elif default is not missing_marker:
                values[name] = default
            elif factory is not None:
                values[name] = factory()
            else:
                raise bad_call(args, kwargs)
        for name, default, factory in hidden:
            if default is not missing_marker:
                values[name] = default
            elif factory is not None:
                values[name] = factory()
        if through_setattr:
            for name, value in values.items():
                setattr(self, name, value)
        else:
            self.__dict__.update(values)
        if has_post_init:
            self.__post_init__()

    return __init__


def _attach(cls: T, frozen: bool, eq: bool) -> T:
    own = cls.__dict__
    # what the class writes itself is kept, as @dataclass keeps it (dataclasses._set_new_attribute,
    # _hash_action); a frozen class may not write its own assignment
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in class {cls.__name__}")
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    keep = {name for name in ("__init__", "__repr__", "__eq__") if name in own}
    built: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    for name, f in built.__dataclass_fields__.items():
        if "InitVar" in str(f.type):
            raise TypeError(f"{cls.__qualname__}.{name}: @record does not support InitVar")
    fields = dataclasses.fields(built)
    for f in fields:
        if f.kw_only:
            raise TypeError(f"{cls.__qualname__}.{f.name}: @record does not support kw_only fields")
    names = tuple(f.name for f in fields)
    shown = tuple(f.name for f in fields if f.repr)
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.hash if f.hash is not None else f.compare))

    if "__init__" not in keep:
        built.__init__ = _init(built, fields, frozen)
        built.__init__.__qualname__ = f"{cls.__qualname__}.__init__"

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    if "__repr__" not in keep:
        built.__repr__ = __repr__
    if eq and "__eq__" not in keep:

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
            return NotImplemented

        built.__eq__ = __eq__
    if eq and not explicit_hash:
        if frozen:
            built.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in hashed))
        else:
            built.__hash__ = None  # as @dataclass(eq=True): a mutable record is unhashable
    if frozen:

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is built or name in names:
                raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
            super(built, self).__setattr__(name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is built or name in names:
                raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
            super(built, self).__delattr__(name)

        built.__setattr__ = __setattr__
        built.__delattr__ = __delattr__
    return built


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, frozen: bool = False, eq: bool = True) -> Callable[[T], T]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: T | None = None, /, *, frozen: bool = False, eq: bool = True) -> T | Callable[[T], T]:
    """``@record`` / ``@record(frozen=True)``: ``@dataclass`` / ``@dataclass(frozen=True)`` at a
    fraction of the import cost (module docstring)."""
    if cls is None:
        return lambda c: _attach(c, frozen, eq)
    return _attach(cls, frozen, eq)


__all__ = ["record"]
