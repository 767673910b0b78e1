"""Shapes that do not fit: the engine raises what PyTorch raises, with PyTorch's message (not NumPy's), for
every operation that broadcasts and for the matrix products."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import gradcalc

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda L, a, b: a + b, "sub": lambda L, a, b: a - b, "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b, "pow": lambda L, a, b: a**b, "floor_divide": lambda L, a, b: a // b,
    "remainder": lambda L, a, b: a % b, "eq": lambda L, a, b: a == b, "lt": lambda L, a, b: a < b,
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=2), "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=2),
    "maximum": lambda L, a, b: L.maximum(a, b), "minimum": lambda L, a, b: L.minimum(a, b),
    "where": lambda L, a, b: L.where(a > 0, a, b), "where_cond": lambda L, a, b: L.where(b > 0, a, a),
    "clamp": lambda L, a, b: L.clamp(a, min=b), "logical_or": lambda L, a, b: L.logical_or(a, b),
    "allclose": lambda L, a, b: L.allclose(a, b), "add_": lambda L, a, b: a.detach().clone().add_(b),
    "copy_": lambda L, a, b: a.detach().clone().copy_(b),
}
SHAPES = [((3,), (2,)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 1)), ((2, 2), (3,))]


def raised(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception's type and text are what is compared
        return type(e).__name__, str(e)
    return "no error", ""


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("sa, sb", SHAPES)
@pytest.mark.parametrize("grad", [False, True])
def test_broadcasting_failures_are_pytorch_s(name: str, sa: tuple, sb: tuple, grad: bool) -> None:
    def scenario(L: Any) -> Callable[[], Any]:
        a = L.ones(sa, dtype=L.float64, requires_grad=grad)
        return lambda: BINARY[name](L, a, L.ones(sb, dtype=L.float64))

    assert raised(scenario(gradcalc)) == raised(scenario(torch))


MATMUL = [
    ((2, 3), (2, 3)), ((2, 3), (4,)), ((3,), (4, 2)), ((3,), (4,)), ((2, 3, 4), (5,)), ((5,), (2, 3, 4)),
    ((2, 3, 4), (5, 6)), ((3, 4), (2, 5, 6)), ((2, 2, 3), (2, 2, 3)), ((2, 3, 4), (3, 4, 5)),
    ((2, 2, 3, 4), (3, 4, 5)),
]


@pytest.mark.parametrize("sa, sb", MATMUL)
@pytest.mark.parametrize("grad", [False, True])
def test_matmul_failures_are_pytorch_s(sa: tuple, sb: tuple, grad: bool) -> None:
    def scenario(L: Any) -> Callable[[], Any]:
        a = L.ones(sa, dtype=L.float64, requires_grad=grad)
        return lambda: a @ L.ones(sb, dtype=L.float64)

    assert raised(scenario(gradcalc)) == raised(scenario(torch))


PRODUCTS: dict[str, Callable[[Any], Any]] = {
    "mm": lambda L: L.mm(L.ones(2, 3), L.ones(4, 5)),
    "mv": lambda L: L.mv(L.ones(2, 3), L.ones(4)),
    "dot": lambda L: L.dot(L.ones(3), L.ones(2)),
    "bmm_batch": lambda L: L.bmm(L.ones(2, 3, 4), L.ones(3, 4, 5)),
    "bmm_inner": lambda L: L.bmm(L.ones(2, 3, 4), L.ones(2, 5, 5)),
    "addmm": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(4, 2)),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_product_failures_are_pytorch_s(name: str) -> None:
    assert raised(lambda: PRODUCTS[name](gradcalc)) == raised(lambda: PRODUCTS[name](torch))


@pytest.mark.parametrize(
    "scenario",
    [
        lambda L: -L.tensor([True, False]),
        lambda L: L.tensor([True, False]) - L.tensor([True, True]),
        lambda L: 1 - L.tensor([True, False]),
    ],
)
def test_minus_of_bool_tensors_is_pytorch_s_error(scenario: Callable[[Any], Any]) -> None:
    assert raised(lambda: scenario(gradcalc)) == raised(lambda: scenario(torch))
