"""PyTorch's named tuples (ops/return_types.py, `gradcalc.return_types`) against PyTorch's own, for every type
gradcalc makes: field names, repr, reading by field, the AttributeError of a field that is another type's,
construction and its errors, read-only fields, pickling (in this process and in a new one, before the family
loads), `match`, vmap's results, and the deferred families' types loading at first read."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd.ops import lazy
from gradcalc.autograd.ops.return_types import DEFERRED_TYPES, named_tuple, return_types

torch = pytest.importorskip("torch")

# each type gradcalc makes -> a call returning one (x: a square float64 matrix of distinct values)
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "max": lambda L, x: L.max(x, 1),
    "min": lambda L, x: x.min(0, keepdim=True),
    "sort": lambda L, x: L.sort(x, 1, descending=True),
    "topk": lambda L, x: x.topk(2),
    "cummax": lambda L, x: L.cummax(x, 1),
    "cummin": lambda L, x: x.cummin(0),
    "median": lambda L, x: L.median(x, 1),
    "kthvalue": lambda L, x: L.kthvalue(x, 2, 0),
    "mode": lambda L, x: L.mode(x, 0),
    "aminmax": lambda L, x: L.aminmax(x, dim=0),
    "slogdet": lambda L, x: L.slogdet(x),
    "linalg_slogdet": lambda L, x: L.linalg.slogdet(x),
}
SEEDS = range(4)


@pytest.fixture(autouse=True)
def _float64() -> Any:
    """Both libraries print float64 without a dtype (tests/conftest.py sets gradcalc's default)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def _matrix(seed: int) -> np.ndarray:
    """A square matrix (2 to 4) of distinct values, some negative: no ties for the selecting reductions."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    return ((rng.permutation(n * n) + rng.uniform(0.1, 0.9, n * n)) / 3.0 - n).reshape(n, n)


def _both(name: str, seed: int = 0) -> tuple[Any, Any]:
    """(gradcalc's result, PyTorch's) of CASES[name] on the same matrix."""
    a = _matrix(seed)
    return CASES[name](gc, gc.tensor(a)), CASES[name](torch, torch.tensor(a))


def _same_items(ours: tuple, theirs: tuple) -> None:
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.dtype.__repr__().replace("gradcalc", "torch") == repr(t.dtype)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_every_type_gradcalc_makes_is_tested() -> None:
    """(tests/conftest.py loads every family first, so this is every type the engine makes.)"""
    made = {n for n, v in vars(return_types).items() if isinstance(v, type)}
    assert made == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_type_is_pytorchs(name: str) -> None:
    ours, theirs = _both(name)
    mine, its = type(ours), type(theirs)
    assert mine is getattr(gc.return_types, name)
    assert its is getattr(torch.return_types, name)
    assert mine.__name__ == its.__name__ == name
    assert mine.__match_args__ == its.__match_args__
    assert (mine.n_fields, mine.n_sequence_fields, mine.n_unnamed_fields) == (
        its.n_fields, its.n_sequence_fields, its.n_unnamed_fields)
    assert repr(mine) == repr(its).replace("torch", "gradcalc")
    assert isinstance(ours, tuple) and mine.__mro__[1:] == (tuple, object)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_and_read_as_pytorch(name: str, seed: int) -> None:
    ours, theirs = _both(name, seed)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    _same_items(ours, theirs)
    for i, field in enumerate(type(theirs).__match_args__):
        assert getattr(ours, field) is ours[i]
    first, second = ours
    assert (first, second) == tuple(ours) == ours
    assert type(ours[:1]) is type(ours + ()) is tuple  # slices and sums are plain tuples, as PyTorch's


ALL_FIELDS = sorted({f for name in CASES for f in getattr(torch.return_types, name).__match_args__})


@pytest.mark.parametrize("name", sorted(CASES))
def test_another_types_field_is_an_attribute_error(name: str) -> None:
    """slogdet has no .values (its type once inherited max's): the message is PyTorch's."""
    ours, theirs = _both(name)
    others = [f for f in [*ALL_FIELDS, "value", "shape"] if f not in type(theirs).__match_args__]
    assert others
    for field in others:
        with pytest.raises(AttributeError) as mine:
            getattr(ours, field)
        with pytest.raises(AttributeError) as its:
            getattr(theirs, field)
        assert str(mine.value) == str(its.value)
        assert not hasattr(ours, field)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fields_are_read_only_as_pytorchs(name: str) -> None:
    ours, theirs = _both(name)
    for attempt in ("setattr(r, FIELD, 1)", "delattr(r, FIELD)", "setattr(r, 'other', 1)", "delattr(r, 'other')"):
        texts = []
        for r in (ours, theirs):
            with pytest.raises(AttributeError) as info:
                eval(attempt, {"r": r, "FIELD": type(theirs).__match_args__[0]})  # noqa: S307 - our own text
            texts.append(str(info.value))
        assert texts[0] == texts[1], attempt


@pytest.mark.parametrize("name", sorted(CASES))
def test_made_from_one_sequence_as_pytorchs(name: str) -> None:
    ours, theirs = _both(name)
    mine, its = type(ours), type(theirs)
    assert repr(mine(list(ours))) == repr(its(list(theirs)))
    assert repr(mine(iter(ours), {})) == repr(its(iter(theirs), {}))
    for args in [(), (5,), ((1,),), ((1, 2, 3),), ((1, 2, 3, 4),)]:
        texts = []
        for cls in (mine, its):
            with pytest.raises(TypeError) as info:
                cls(*args)
            texts.append(str(info.value))
        assert texts[0] == texts[1], args


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))  # (a tensor needs 2 or later here)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pickled_and_copied(name: str, protocol: int) -> None:
    ours, theirs = _both(name)
    for back in (pickle.loads(pickle.dumps(ours, protocol)), copy.copy(ours), copy.deepcopy(ours)):
        assert type(back) is type(ours)
        _same_items(back, theirs)
        assert repr(back) == repr(theirs)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_type_pickles_with_every_protocol(name: str, protocol: int) -> None:
    """(Protocols 0 to 3 reach a class whose __qualname__ is dotted through its namespace.)"""
    cls = getattr(gc.return_types, name)
    its = getattr(torch.return_types, name)
    assert pickle.loads(pickle.dumps(cls, protocol)) is cls
    back = pickle.loads(pickle.dumps(cls((1, "a")), protocol))
    assert type(back) is cls
    assert repr(back) == repr(its((1, "a")))


def test_unpickled_in_a_new_process_before_its_family_loads() -> None:
    """pickle finds the class as `gradcalc.return_types.median`: reading it loads the statistics family."""
    ours, theirs = _both("median")
    code = ("import pickle, sys\nimport gradcalc\ngradcalc.set_default_dtype(gradcalc.float64)\n"
            "print('gradcalc.autograd.ops.statistics' in sys.modules)\n"
            "print(repr(pickle.loads(sys.stdin.buffer.read())))")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(ours), capture_output=True, check=True)
    assert out.stdout.decode() == f"False\n{theirs!r}\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_match_by_position_and_by_field(name: str) -> None:
    ours, _ = _both(name)
    cls = type(ours)
    match ours:
        case cls(a, b):
            assert (a, b) == tuple(ours)
        case _:
            pytest.fail("no match by position")
    match ours:  # by field: each kind of fields once
        case gc.return_types.aminmax(min=lo, max=hi) | gc.return_types.slogdet(sign=lo, logabsdet=hi):
            assert (lo, hi) == tuple(ours) and name in ("aminmax", "slogdet")
        case gc.return_types.max(values=lo, indices=hi):
            assert (lo, hi) == tuple(ours) and name == "max"
        case gc.return_types.linalg_slogdet(values=_):
            pytest.fail("matched a field that is not linalg_slogdet's")


@pytest.mark.parametrize("name", ["max", "sort", "cummin", "median", "aminmax", "linalg_slogdet"])
def test_vmap_returns_the_named_tuple(name: str) -> None:
    """vmap rebuilds the named tuple from its batched items (it raised TypeError here once)."""
    a = np.stack([_matrix(s)[:2, :2] for s in (3, 4, 5)])
    ours = gc.func.vmap(lambda x: CASES[name](gc, x))(gc.tensor(a))
    theirs = torch.func.vmap(lambda x: CASES[name](torch, x))(torch.tensor(a))
    assert type(ours) is getattr(gc.return_types, name)
    assert repr(ours) == repr(theirs)


def test_the_factory_makes_each_type_once() -> None:
    assert named_tuple("max", ("values", "indices")) is gc.return_types.max
    with pytest.raises(ValueError, match="has fields"):
        named_tuple("max", ("sign", "logabsdet"))


def test_an_unknown_type_is_pytorchs_attribute_error() -> None:
    with pytest.raises(AttributeError) as mine:
        gc.return_types.foo  # noqa: B018
    with pytest.raises(AttributeError) as its:
        torch.return_types.foo  # noqa: B018
    assert str(mine.value) == str(its.value).replace("torch", "gradcalc")


COLD = """
import json, sys, importlib
import gradcalc
from gradcalc.autograd.ops import lazy
from gradcalc.autograd.ops.return_types import DEFERRED_TYPES, return_types
made = lambda: sorted(n for n, v in vars(return_types).items() if isinstance(v, type))
report = {"at_start": made(), "listed": sorted(n for n in dir(gradcalc.return_types) if not n.startswith("_"))}
report["loaded"] = [m for m in lazy.DEFERRED if f"gradcalc.autograd.ops.{m}" in sys.modules]
report["read"] = gradcalc.return_types.cummin.__qualname__
report["cumulative_loaded"] = "gradcalc.autograd.ops.cumulative" in sys.modules
report["by_family"] = {}
for name, family in DEFERRED_TYPES.items():
    importlib.import_module(f"gradcalc.autograd.ops.{family}")
    report["by_family"][name] = name in vars(return_types)
lazy.load_all()
report["all"] = made()
print(json.dumps(report))
"""


def test_deferred_families_types_load_at_first_read() -> None:
    """Start-up makes the types of the families it loads; DEFERRED_TYPES names each other one's family, and
    reading one loads its family (a cold process; DEFERRED_TYPES is checked against what the families make)."""
    import json

    out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["loaded"] == []
    assert set(report["at_start"]).isdisjoint(DEFERRED_TYPES)
    assert report["listed"] == sorted(CASES)
    assert report["read"] == "return_types.cummin" and report["cumulative_loaded"]
    assert all(report["by_family"].values()), report["by_family"]
    assert set(report["all"]) == set(report["at_start"]) | set(DEFERRED_TYPES) == set(CASES)
    assert set(DEFERRED_TYPES.values()) <= set(lazy.DEFERRED)
