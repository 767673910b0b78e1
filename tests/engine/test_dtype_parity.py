"""Bool and integer tensors through the elementwise functions and subtraction, against PyTorch: the result
dtype and values, or an error where PyTorch refuses (with PyTorch's meaning), out of place and in place."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd.ops.unary import ROWS

UNARY = [name for name, row in ROWS.items() if row.public]

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)  # gradcalc's default dtype: integral inputs promote to it

INPUTS = {"bool": [True, False, True], "int64": [-2, 0, 3], "float32": [-1.5, 0.0, 2.0]}


def outcome(fn: Any, lib: Any) -> tuple:
    """("ok", dtype name, values) or ("error", exception class) of `fn(lib)`."""
    try:
        r = fn(lib)
    except RuntimeError as exc:  # NotImplementedError is one too, as in PyTorch
        return ("error", NotImplementedError if isinstance(exc, NotImplementedError) else RuntimeError, str(exc))
    return ("ok", str(r.dtype).removeprefix("torch."), np.asarray(r.tolist(), dtype=float))


def same(ours: tuple, theirs: tuple) -> None:
    assert ours[:2] == theirs[:2], (ours, theirs)
    if ours[0] == "ok":
        rtol = 1e-6 if ours[1] == "float32" else 1e-12  # float32: within an ulp or two of PyTorch's kernels
        np.testing.assert_allclose(ours[2], theirs[2], rtol=rtol, atol=1e-7 * (rtol > 1e-12), equal_nan=True)


def make(lib: Any, kind: str) -> Any:
    return lib.tensor(INPUTS[kind], dtype=getattr(lib, kind))


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_every_elementwise_function_of_a_bool_or_integer_tensor_is_pytorchs(name: str, kind: str) -> None:
    theirs = outcome(lambda lib: getattr(lib, name)(make(lib, kind)), torch)
    ours = outcome(lambda lib: getattr(lib, name)(make(lib, kind)), gradcalc)
    same(ours, theirs)
    if ours[0] == "error":  # PyTorch's meaning, in our words: which function, which dtype
        assert name in ours[2] and ("Boolean" in ours[2] or kind in ours[2]), ours[2]


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_every_in_place_elementwise_function_refuses_a_result_it_cannot_hold(name: str, kind: str) -> None:
    def run(lib: Any) -> Any:
        t = make(lib, kind)
        r = getattr(t, name + "_")()
        assert r is t
        return t

    ours, theirs = outcome(run, gradcalc), outcome(run, torch)
    same(ours, theirs)
    if ours[0] == "error" and "cast" in theirs[2]:  # float into int64 or bool: both dtypes named
        assert f"{name}_" in ours[2] and kind in ours[2] and "can't be cast" in ours[2], ours[2]


def test_relu_and_abs_of_a_bool_tensor_are_refused_as_in_pytorch() -> None:
    b = gradcalc.tensor([True, False])
    with pytest.raises(RuntimeError, match="^Boolean inputs not supported for relu$"):
        gradcalc.relu(b)
    with pytest.raises(NotImplementedError, match="abs is not implemented for bool tensors"):
        b.abs()


IN_PLACE_ARITHMETIC = {
    "int.add_(1.5)": lambda lib: lib.tensor([1, 2]).add_(1.5),
    "int += 1.5": lambda lib: lib.tensor([1, 2]).__iadd__(1.5),
    "bool.add_(1)": lambda lib: lib.tensor([True]).add_(1),
    "bool.mul_(bool)": lambda lib: lib.tensor([True, False]).mul_(lib.tensor([True, True])),
    "int.mul_(float)": lambda lib: lib.tensor([1]).mul_(lib.tensor([1.5])),
    "int.div_(2)": lambda lib: lib.tensor([1]).div_(2),
    "int.mul_(2)": lambda lib: lib.tensor([1, 3]).mul_(2),
    "float32.add_(float64)": lambda lib: lib.tensor([1.0], dtype=lib.float32).add_(lib.tensor([1.5])),
    "int.clamp_(0.5)": lambda lib: lib.tensor([1]).clamp_(0.5),
    "int.fill_(1.5)": lambda lib: lib.tensor([1]).fill_(1.5),
    "int.copy_(float)": lambda lib: lib.tensor([1]).copy_(lib.tensor([1.5])),
}


@pytest.mark.parametrize("case", IN_PLACE_ARITHMETIC)
def test_in_place_arithmetic_keeps_pytorchs_casting_rule(case: str) -> None:
    same(outcome(IN_PLACE_ARITHMETIC[case], gradcalc), outcome(IN_PLACE_ARITHMETIC[case], torch))


def test_a_refused_in_place_change_changes_nothing() -> None:
    t = gradcalc.tensor([1, 2])
    with pytest.raises(RuntimeError):
        t.sin_()
    assert t.tolist() == [1, 2] and t._version == 0


# -- subtraction with a bool operand ------------------------------------------------------------------------
SUBTRACTIONS = {
    "bool - 1": lambda lib: lib.tensor([True, False]) - 1,
    "bool - 1.5": lambda lib: lib.tensor([True, False]) - 1.5,
    "bool - True": lambda lib: lib.tensor([True, False]) - True,
    "1 - bool": lambda lib: 1 - lib.tensor([True, False]),
    "1.5 - bool": lambda lib: 1.5 - lib.tensor([True, False]),
    "True - bool": lambda lib: True - lib.tensor([True, False]),
    "bool - bool": lambda lib: lib.tensor([True, False]) - lib.tensor([True, True]),
    "bool - int": lambda lib: lib.tensor([True, False]) - lib.tensor([1, 2]),
    "int - bool": lambda lib: lib.tensor([1, 2]) - lib.tensor([True, False]),
    "float - bool": lambda lib: lib.tensor([1.0, 2.0]) - lib.tensor([True, False]),
    "0-d bool - float": lambda lib: lib.tensor(True) - lib.tensor([1.0, 2.0]),
    "float - True": lambda lib: lib.tensor([1.0, 2.0]) - True,
    "sub(bool, 1)": lambda lib: lib.sub(lib.tensor([True, False]), 1),
    "sub(bool, 1, alpha=2)": lambda lib: lib.sub(lib.tensor([True, False]), 1, alpha=2),
    "sub(float, bool, alpha=2)": lambda lib: lib.sub(lib.tensor([1.0, 2.0]), lib.tensor([True, False]), alpha=2),
    "sub(bool, bool, alpha=0)": lambda lib: lib.tensor([True]).sub(lib.tensor([True]), alpha=0),
    "bool.sub(1)": lambda lib: lib.tensor([True, False]).sub(1),
    "bool.sub_(1)": lambda lib: lib.tensor([True, False]).sub_(1),
    "bool.sub_(bool)": lambda lib: lib.tensor([True, False]).sub_(lib.tensor([True, False])),
    "float.sub_(bool)": lambda lib: lib.tensor([1.0, 2.0]).sub_(lib.tensor([True, False])),
    "int -= bool": lambda lib: lib.tensor([1, 2]).__isub__(lib.tensor([True, False])),
    "bool -= 1": lambda lib: lib.tensor([True, False]).__isub__(1),
    "big temporary bool - 1": lambda lib: (lib.zeros(5000) > 0) - 1,  # the operator's temporary path
    "bool + 1": lambda lib: lib.tensor([True, False]) + 1,
    "int - 1": lambda lib: lib.tensor([3, 1]) - 1,
}


@pytest.mark.parametrize("case", SUBTRACTIONS)
def test_subtraction_with_a_bool_operand_is_refused_with_pytorchs_message(case: str) -> None:
    ours, theirs = outcome(SUBTRACTIONS[case], gradcalc), outcome(SUBTRACTIONS[case], torch)
    same(ours, theirs)
    if theirs[0] == "error":
        assert ours[2] == theirs[2]  # PyTorch's message says it in the user's terms (`~`, `^`) already


def test_a_refused_sub_in_place_changes_nothing() -> None:
    t = gradcalc.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction"):
        t.sub_(1)
    assert t.tolist() == [True, False] and t._version == 0
