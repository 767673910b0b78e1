"""Arithmetic on integral (and bool) tensors that yields floating values has PyTorch's default dtype, under either
default: an int tensor divided by a number or by another int tensor, times or plus a Python float, a float to
the power of it, ... NumPy would make float64 of all of these; PyTorch makes the default dtype (float32 unless set).
Floating operands keep deciding the result as before (a float32 tensor stays float32, a float64 0-d tensor beside
an int tensor gives float64)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import gradcalc as gc

torch = pytest.importorskip("torch")

CASES = {
    "int / int": lambda L: L.tensor([1, 2, 3]) / 2,
    "int * float": lambda L: L.tensor([1, 2, 3]) * 1.5,
    "float * int": lambda L: 1.5 * L.tensor([1, 2]),
    "int + float": lambda L: L.tensor([1, 2]) + 0.5,
    "int - float": lambda L: L.tensor([1, 2]) - 0.5,
    "float - int": lambda L: 0.5 - L.tensor([1, 2]),
    "int ** float": lambda L: L.tensor([1, 2]) ** 0.5,
    "float ** int": lambda L: 2.0 ** L.tensor([1, 2]),
    "int / int tensor": lambda L: L.tensor([1, 2]) / L.tensor([2, 3]),
    "int / 0-d int tensor": lambda L: L.tensor([1, 2, 3]) / L.tensor(2),
    "0-d int / int": lambda L: L.tensor(3) / 2,
    "int.div(int)": lambda L: L.tensor([1, 2]).div(2),
    "int.mul(float)": lambda L: L.tensor([1, 2]).mul(2.5),
    "add(int, float, alpha)": lambda L: L.add(L.tensor([1, 2]), 0.5, alpha=2),
    "bool * float": lambda L: L.tensor([True, False]) * 1.5,
    "int // float": lambda L: L.tensor([1, 2]) // 2.5,
    "int % float": lambda L: L.tensor([1, 2]) % 2.5,
    "int / float": lambda L: L.tensor([4, 2]) / 2.0,
    "number / int": lambda L: 2 / L.tensor([1, 2, 4]),
    # what floating operands decide stays theirs
    "int * 0-d float tensor": lambda L: L.tensor([1, 2]) * L.tensor(2.5),
    "int * 0-d float64 tensor": lambda L: L.tensor([1, 2]) * L.tensor(2.5, dtype=L.float64),
    "int ** 0-d float tensor": lambda L: L.tensor([1, 2]) ** L.tensor(0.5),
    "float32 * int": lambda L: L.tensor([1.0, 2.0], dtype=L.float32) * 2,
    "float32 / int tensor": lambda L: L.tensor([1.0, 2.0], dtype=L.float32) / L.tensor([2, 4]),
    "float64 / int": lambda L: L.tensor([1, 2], dtype=L.float64) / 2,
    "int * int": lambda L: L.tensor([1, 2]) * 2,
    "int + bool": lambda L: L.tensor([1, 2]) + True,
}


@pytest.fixture(params=["float32", "float64"])
def default(request: pytest.FixtureRequest) -> Iterator[str]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, request.param))
    gc.set_default_dtype(getattr(gc, request.param))
    yield request.param
    torch.set_default_dtype(previous)


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_dtype_and_values_are_pytorchs(name: str, default: str) -> None:
    ours, theirs = CASES[name](gc), CASES[name](torch)
    assert str(ours.dtype) == str(theirs.dtype), f"{name} under {default}: {ours.dtype} vs {theirs.dtype}"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6 if "32" in str(theirs.dtype) else 1e-15)


@pytest.mark.parametrize("name", ["int * float", "int / int"])
def test_the_language_keeps_float64(name: str, default: str) -> None:
    """The language's sessions run under a float64 default of their own thread: the same division is float64."""
    from gradcalc.autograd.defaults import default_dtype

    with default_dtype(np.dtype("float64")):
        assert CASES[name](gc).dtype == gc.float64


def test_a_gradient_through_an_integral_operand_keeps_the_float_dtype(default: str) -> None:
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    for lib, t in ((gc, x), (torch, tx)):
        y = (t * (lib.tensor([3, 4]) / 2)).sum()
        y.backward()
    assert str(x.grad.dtype) == str(tx.grad.dtype)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


