"""The language's built-ins come from the engine: every operation the engine has is reachable, by the
engine's own name, with the engine's signature in `:help`."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from gclang_testing import run

import gradcalc
from gradcalc.autograd.ops import FUNCTIONS as ENGINE_FUNCTIONS
from gradcalc.autograd.ops.unary import ROWS
from gradcalc.autograd.tensor import Tensor
from gradcalc.lang.tell.help import ALIASES, TOPICS
from gradcalc.lang.values.builtins import FUNCTIONS, NOT_BUILT_INS

UNARY = [name for name, row in ROWS.items() if row.public]

ENGINE_NAMES = sorted(n for n in ENGINE_FUNCTIONS if not n.startswith("_") and n not in NOT_BUILT_INS)
METHOD_NAMES = sorted(
    n for n in dir(Tensor)
    if not n.startswith("_") and n not in NOT_BUILT_INS and callable(inspect.getattr_static(Tensor, n))
)


def test_there_is_something_to_check() -> None:
    assert len(ENGINE_NAMES) > 60 and "sin" in ENGINE_NAMES and "sum" in ENGINE_NAMES
    assert len(METHOD_NAMES) > 60 and "backward" in METHOD_NAMES


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_engine_function_is_a_built_in_with_help(name: str) -> None:
    r = run(f"{name}\n:help {name}")
    assert r.ok, r.err
    shown, page = r.out.split("\n", 1)
    assert shown == f"<built-in function {name}>"
    if name in TOPICS or name in ALIASES:  # a topic's page comes first; the built-in's line is the same text
        page = FUNCTIONS[name].doc
    params = [p for p in inspect.signature(ENGINE_FUNCTIONS[name]).parameters.values()]
    assert page.startswith(f"{name}("), page
    for p in params:  # the signature shown is the engine's
        assert p.name in page.split(")")[0], (p.name, page)


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_every_tensor_method_is_reachable(name: str) -> None:
    r = run(f"x = [1, 2]\nx.{name}")
    assert r.ok, r.err
    assert r.out.strip() == f"<method {name} of a tensor>"


@pytest.mark.parametrize("name", sorted(UNARY))
def test_every_elementwise_row_computes_in_the_language(name: str) -> None:
    """A row of the engine's table is a function of the language, with the engine's value and gradient."""
    value = 0.25
    r = run(f"x = {value} requires_grad\ny = {name}(x)\nbackward y\nprint float(y), float(x.grad), y.grad_fn")
    assert r.ok, r.err
    y, g, node = r.out.split()
    x = gradcalc.tensor(value, requires_grad=True)
    expected = getattr(gradcalc, name)(x)
    expected.backward()
    assert math.isclose(float(y), expected.item(), rel_tol=1e-15)
    assert np.isclose(float(g), x.grad.item(), rtol=1e-15)
    assert node == f"<{expected.grad_fn.name()}>"
