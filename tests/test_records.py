"""``ppo_doctor.records.record`` behaves as ``@dataclass`` does (issue 26).

Every class below is built twice, once with ``@dataclass(...)`` and once with ``@record(...)``,
from the same body; each behaviour a caller can see is compared: construction (positional,
keyword, defaults, factories, ``init=False`` fields, ``__post_init__``), the error a bad call
raises and its message, ``repr``, equality, hashing, frozen assignment and deletion, the
``dataclasses`` functions, pickling and copying.  Then every record of the package is checked
to be a dataclass whose constructor takes exactly its init fields.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

import ppo_doctor
from ppo_doctor.records import record


def _pair(body: dict[str, Any], annotations: dict[str, str], **params: Any) -> tuple[type, type]:
    """The same class built by ``@dataclass(**params)`` and by ``@record(**params)``; both are
    named ``Sample`` (reprs and error messages name the class) and live in this module (pickle)."""
    out = []
    for deco in (dataclass, record):
        ns = {"__annotations__": dict(annotations), "__module__": __name__, "__qualname__": "Sample", "__doc__": "A sample."}
        ns.update({k: (copy.copy(v) if isinstance(v, dataclasses.Field) else v) for k, v in body.items()})
        cls = type("Sample", (), ns)
        out.append(deco(**params)(cls))
    return out[0], out[1]


PLAIN = (
    {"c": 3, "d": field(default_factory=list), "e": field(default=5, repr=False), "f": field(default=0, compare=False)},
    {"a": "int", "b": "str", "c": "int", "d": "list[int]", "e": "int", "f": "int"},
)
CALLS = [
    ((1, "x"), {}),
    ((1,), {"b": "y", "c": 4}),
    ((), {"a": 2, "b": "z", "d": [1, 2], "e": 9, "f": 7}),
    ((1, "x", 3, [4], 5, 6), {}),
]
BAD_CALLS = [
    ((), {}),  # two missing
    ((1,), {}),  # one missing
    ((1, "x", 3, [4], 5, 6, 7), {}),  # too many
    ((1, "x"), {"zz": 1}),  # unexpected
    ((1, "x"), {"a": 1}),  # twice
]


def _reset(cls: type) -> type:
    """Pickle finds a class by module and name: point ``Sample`` at the class under test."""
    globals()["Sample"] = cls
    return cls


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("eq", [True, False])
def test_construction_repr_equality_and_hash_match_dataclass(frozen, eq):
    dc, rec = _pair(*PLAIN, frozen=frozen, eq=eq)
    assert dataclasses.is_dataclass(rec)
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(dc)]
    assert rec.__match_args__ == dc.__match_args__
    for args, kwargs in CALLS:
        a, b = dc(*args, **kwargs), rec(*args, **kwargs)
        assert vars(a) == vars(b)
        assert repr(a) == repr(b)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.astuple(a) == dataclasses.astuple(b)
        same_dc, same_rec = dc(*args, **kwargs), rec(*args, **kwargs)
        assert (a == same_dc) == (b == same_rec)
        assert (a != same_dc) == (b != same_rec)
        assert (a == dc(9, "other")) == (b == rec(9, "other"))
        assert (b == a) is False  # another class: NotImplemented both ways, then identity
        changed = dataclasses.replace(b, c=11)
        assert type(changed) is rec and changed.c == 11 and changed.a == b.a
        if a.__hash__ is None:
            assert b.__hash__ is None
        else:
            assert b.__hash__ is not None
    # a list field makes a frozen instance unhashable in both
    if eq and frozen:
        with pytest.raises(TypeError):
            hash(dc(1, "x"))
        with pytest.raises(TypeError):
            hash(rec(1, "x"))


def test_a_frozen_record_hashes_its_compared_fields_as_dataclass_does():
    body = {"b": field(default=0, compare=False), "c": field(default=0, hash=False), "d": field(default=0, compare=False, hash=True)}
    dc, rec = _pair(body, {"a": "int", "b": "int", "c": "int", "d": "int"}, frozen=True)
    for cls in (dc, rec):
        assert hash(cls(1)) == hash(cls(1, b=5)) != hash(cls(1, d=5))
        assert hash(cls(1)) == hash(cls(1, c=5)) and cls(1) != cls(1, c=5)
    assert hash(dc(1, 2, 3, 4)) == hash(rec(1, 2, 3, 4))


@pytest.mark.parametrize("frozen", [False, True])
def test_a_bad_call_raises_what_dataclass_raises(frozen):
    dc, rec = _pair(*PLAIN, frozen=frozen)
    for args, kwargs in BAD_CALLS:
        with pytest.raises(TypeError) as want:
            dc(*args, **kwargs)
        with pytest.raises(TypeError) as got:
            rec(*args, **kwargs)
        assert str(got.value) == str(want.value)


def test_three_missing_arguments_are_listed_as_python_lists_them():
    body, ann = {}, {"a": "int", "b": "int", "c": "int"}
    dc, rec = _pair(body, ann)
    for cls in (dc, rec):
        with pytest.raises(TypeError) as err:
            cls()
        assert str(err.value).endswith("missing 3 required positional arguments: 'a', 'b', and 'c'")


def test_frozen_assignment_and_deletion_raise_as_dataclass_does():
    dc, rec = _pair(*PLAIN, frozen=True)
    for cls in (dc, rec):
        obj = cls(1, "x")
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
            obj.a = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'a'"):
            del obj.a
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.new_attribute = 1


def test_mutable_records_assign_and_hash_as_dataclass_does():
    dc, rec = _pair(*PLAIN)
    for cls in (dc, rec):
        obj = cls(1, "x")
        obj.a = 5
        obj.extra = "kept"
        assert obj.a == 5 and obj.extra == "kept"
        with pytest.raises(TypeError):
            hash(obj)


def test_init_false_fields_post_init_and_class_variables():
    def post_init(self: Any) -> None:
        object.__setattr__(self, "total", self.a + self.b)

    body = {"total": field(init=False, default=0), "log": field(init=False, default_factory=list), "KIND": "sample", "__post_init__": post_init}
    ann = {"a": "int", "b": "int", "total": "int", "log": "list[str]", "KIND": "ClassVar[str]"}
    for frozen in (False, True):
        dc, rec = _pair(body, ann, frozen=frozen)
        a, b = dc(1, 2), rec(1, 2)
        assert vars(a) == vars(b) == {"a": 1, "b": 2, "total": 3, "log": []}
        assert repr(a) == repr(b)
        assert [f.name for f in dataclasses.fields(rec)] == ["a", "b", "total", "log"]
        assert b.KIND == "sample"
        with pytest.raises(TypeError):
            rec(1, 2, 3)
        with pytest.raises(TypeError):
            rec(1, 2, total=3)
        assert b.log is not rec(1, 2).log  # a fresh factory value per instance


def test_methods_the_class_writes_itself_are_kept():
    def own_repr(self: Any) -> str:
        return "<own>"

    def own_eq(self: Any, other: Any) -> bool:
        return True

    body = {"__repr__": own_repr, "__eq__": own_eq, "__hash__": lambda self: 7}
    ann = {"a": "int"}
    for frozen in (False, True):
        dc, rec = _pair(body, ann, frozen=frozen)
        for cls in (dc, rec):
            obj = cls(1)
            assert repr(obj) == "<own>" and obj == object() and hash(obj) == 7


def test_a_frozen_record_may_not_write_its_own_assignment():
    for deco in (dataclass(frozen=True), record(frozen=True)):
        with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
            deco(type("Sample", (), {"__annotations__": {"a": "int"}, "__setattr__": lambda self, k, v: None}))


def test_unsupported_features_are_refused_at_class_creation():
    with pytest.raises(TypeError, match="kw_only"):
        record(type("Sample", (), {"__annotations__": {"a": "int"}, "a": field(kw_only=True)}))
    with pytest.raises(TypeError, match="InitVar"):
        record(type("Sample", (), {"__annotations__": {"a": "InitVar[int]"}}))


@pytest.mark.parametrize("frozen", [False, True])
def test_pickle_and_copies_round_trip(frozen):
    _, rec = _pair(*PLAIN, frozen=frozen)
    _reset(rec)
    obj = rec(1, "x", d=[1, 2])
    for clone in (pickle.loads(pickle.dumps(obj)), copy.copy(obj), copy.deepcopy(obj)):
        assert type(clone) is rec and vars(clone) == vars(obj)
    assert copy.deepcopy(obj).d is not obj.d


def test_a_record_refers_to_itself_in_its_repr_without_recursing():
    dc, rec = _pair({"child": None}, {"a": "int", "child": "Any"})
    for cls in (dc, rec):
        obj = cls(1)
        obj.child = obj
        assert repr(obj) == "Sample(a=1, child=...)"


def _records() -> list[type]:
    """Every class of the package whose constructor is the one ``record`` builds (they share
    its code object)."""
    from ppo_doctor.results import Finding

    shared = Finding.__init__.__code__
    found = []
    for mod in pkgutil.walk_packages(ppo_doctor.__path__, "ppo_doctor."):
        if mod.name.startswith(("ppo_doctor.reference", "ppo_doctor.integrations")) or mod.name.endswith("__main__"):
            continue  # torch / transformers: optional extras
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == mod.name and getattr(obj.__init__, "__code__", None) is shared:
                found.append(obj)
    return found


def test_the_package_records_are_dataclasses_on_the_check_path():
    """The records of the package: the run and its series, the results, the settings, the
    rule context, discovery's and the pipeline's records (what a ``check`` imports)."""
    names = {f"{c.__module__}.{c.__qualname__}" for c in _records()}
    assert {"ppo_doctor.results.Finding", "ppo_doctor.frame.RawRun", "ppo_doctor.run.Run", "ppo_doctor.settings.Config"} <= names
    for cls in _records():
        assert dataclasses.is_dataclass(cls), cls
        assert cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("), f"{cls.__qualname__} needs a docstring"


def test_a_mutable_record_that_writes_its_own_setattr_gets_each_field_through_it():
    def spy(self: Any, name: str, value: Any) -> None:
        object.__setattr__(self, "seen", [*getattr(self, "seen", []), name])
        object.__setattr__(self, name, value)

    dc, rec = _pair({"b": 2, "__setattr__": spy}, {"a": "int", "b": "int"})
    assert dc(1).seen == rec(1).seen == ["a", "b"]
