"""Matrix products against PyTorch: `matmul`/`@` in every case of dimensions (the graph PyTorch records,
node by node), `mm`, `mv`, `dot`, `bmm`, `outer`; values, gradients of first and second order, the
gradients of broadcast batch dimensions summed back; errors; random shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc
from tests.engine.ops_oracle import arrays_for, check, name_of, same_outcome, torch

MATMUL_SHAPES = {
    "1@1": ((4,), (4,)),
    "2@1": ((3, 4), (4,)),
    "1@2": ((4,), (4, 5)),
    "2@2": ((3, 4), (4, 5)),
    "3@2": ((2, 3, 4), (4, 5)),
    "2@3": ((3, 4), (2, 4, 5)),
    "3@3": ((2, 3, 4), (2, 4, 5)),
    "3@1": ((2, 3, 4), (4,)),
    "1@3": ((4,), (2, 4, 5)),
    "4@3_broadcast": ((2, 1, 3, 4), (5, 4, 6)),
    "1x3@3_batch_of_one": ((1, 3, 4), (2, 4, 5)),
    "3@1x3_batch_of_one": ((2, 3, 4), (1, 4, 5)),
    "4@4": ((2, 2, 3, 4), (2, 2, 4, 5)),
    "4@2": ((2, 2, 3, 4), (4, 5)),
    "4@1": ((2, 2, 3, 4), (4,)),
    "1@4": ((4,), (2, 2, 4, 5)),
    "2@4": ((3, 4), (2, 2, 4, 5)),
    "empty_inner": ((3, 0), (0, 2)),
    "empty_batch": ((0, 3, 4), (4, 2)),
}
# which operands require grad changes PyTorch's dispatch (and so the graph): both, the left, the right
GRADS = {"both": (True, True), "left": (True, False), "right": (False, True)}


def operand(t, wanted: bool):  # noqa: ANN001, ANN201
    return t if wanted else t.detach()


@pytest.mark.parametrize("which", sorted(GRADS))
@pytest.mark.parametrize("case", sorted(MATMUL_SHAPES))
def test_matmul_against_torch(case: str, which: str) -> None:
    ga, gb = GRADS[which]
    check(lambda L, a, b: operand(a, ga) @ operand(b, gb), arrays_for(*MATMUL_SHAPES[case]))


def graph(fn: object) -> list:
    """The recorded graph below a node, depth first, as names."""
    if fn is None:
        return [None]
    name = name_of(fn)
    if name == "AccumulateGrad":
        return [name]
    return [name, [graph(n) for n, _ in fn.next_functions]]


@pytest.mark.parametrize("which", sorted(GRADS))
@pytest.mark.parametrize("case", sorted(MATMUL_SHAPES))
def test_matmul_records_torchs_graph(case: str, which: str) -> None:
    ga, gb = GRADS[which]
    shapes = MATMUL_SHAPES[case]
    graphs, versions = [], []
    for lib in (torch, gradcalc):
        a, b = (lib.zeros(*s, requires_grad=True) for s in shapes)
        out = lib.matmul(operand(a, ga), operand(b, gb))
        graphs.append(graph(out.grad_fn))
        versions.append(out._version)
    assert graphs[1] == graphs[0]
    assert versions[1] == versions[0]  # 1-d @ 2-d squeezes its result in place: version 1


FUNCTIONS = {
    "mm": (lambda L, a, b: L.mm(a, b), [(3, 4), (4, 2)]),
    "mm_method": (lambda L, a, b: a.mm(b), [(3, 4), (4, 2)]),
    "mm_self": (lambda L, a: a.mm(a.t()), [(3, 4)]),
    "mv": (lambda L, a, b: L.mv(a, b), [(3, 4), (4,)]),
    "mv_method": (lambda L, a, b: a.mv(b), [(3, 4), (4,)]),
    "dot": (lambda L, a, b: L.dot(a, b), [(4,), (4,)]),
    "dot_self": (lambda L, a: a.dot(a), [(4,)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "bmm_method": (lambda L, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 5)]),
    "outer": (lambda L, a, b: L.outer(a, b), [(3,), (4,)]),
    "ger": (lambda L, a, b: a.ger(b), [(3,), (4,)]),
    "matmul_fn": (lambda L, a, b: L.matmul(a, b), [(3, 4), (4, 2)]),
    "matmul_method": (lambda L, a, b: a.matmul(b), [(2, 3, 4), (4,)]),
    "mlp_layer": (lambda L, x, w, b: L.tanh(x @ w + b), [(5, 4), (4, 3), (3,)]),
    "quadratic_form": (lambda L, x, m: x @ m @ x, [(3,), (3, 3)]),
    "transposed_operands": (lambda L, a, b: a.t() @ b.t(), [(4, 3), (2, 4)]),
    "sliced_operands": (lambda L, a, b: a[:, ::2] @ b[1:], [(3, 6), (4, 2)]),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_products_against_torch(case: str) -> None:
    scenario, shapes = FUNCTIONS[case]
    check(scenario, arrays_for(*shapes))


def test_integer_products() -> None:
    same_outcome(lambda L: L.arange(3) @ L.arange(3))
    same_outcome(lambda L: L.arange(6).reshape(2, 3) @ L.arange(3))
    same_outcome(lambda L: L.arange(6).reshape(2, 3) @ L.arange(6).reshape(3, 2))


def test_float32_stays_float32() -> None:
    same_outcome(lambda L: L.ones(2, 3, dtype=L.float32) @ L.ones(3, dtype=L.float32))


def test_rmatmul() -> None:
    a = gradcalc.ones(2, 3)
    assert gradcalc.Tensor.__rmatmul__(a, gradcalc.ones(4, 2)).shape == (4, 3)
    with pytest.raises(TypeError):
        [[1.0, 2.0]] @ a  # noqa: B018 - a list is not an operand, as in PyTorch
    with pytest.raises(TypeError):
        a @ 2  # noqa: B018


ERRORS = {
    "inner_mismatch": lambda L: L.zeros(2, 3) @ L.zeros(4, 5),
    "vector_lengths": lambda L: L.zeros(3) @ L.zeros(4),
    "zero_dim": lambda L: L.tensor(1.0) @ L.zeros(3),
    "dtypes": lambda L: L.zeros(3, dtype=L.float32) @ L.zeros(3),
    "dtypes_mm": lambda L: L.mm(L.zeros(2, 3, dtype=L.float32), L.zeros(3, 2)),
    "int_float": lambda L: L.arange(3.0) @ L.arange(3),
    "mm_vector": lambda L: L.mm(L.zeros(3), L.zeros(3, 3)),
    "mv_matrix": lambda L: L.mv(L.zeros(3, 3), L.zeros(3, 1)),
    "dot_matrix": lambda L: L.dot(L.zeros(3, 1), L.zeros(3, 1)),
    "bmm_batches": lambda L: L.bmm(L.zeros(2, 3, 4), L.zeros(3, 4, 5)),
    "batch_broadcast": lambda L: L.zeros(2, 3, 4) @ L.zeros(3, 4, 5),
    "batch_inner": lambda L: L.zeros(2, 3, 4) @ L.zeros(2, 5, 5),
    "number": lambda L: L.zeros(3) @ 2,
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    same_outcome(ERRORS[case])


def test_mm_saves_only_what_backward_uses() -> None:
    """The input of a first layer needs no gradient: mm keeps the input (for the weight's gradient) and
    not the weight; and the plain backward runs on bare arrays (one BLAS call per gradient)."""
    x, w = gradcalc.ones(5, 4), gradcalc.ones(4, 3, requires_grad=True)
    node = (x @ w).grad_fn
    assert node.raw_ok and node._saved[0] is x and node._saved[1] is None
    (x @ w).sum().backward()
    assert w.grad.tolist() == [[5.0] * 3] * 4


def test_batched_gradient_is_summed_over_broadcast() -> None:
    for lib in (torch, gradcalc):
        a = lib.ones(2, 3, 4, requires_grad=True)
        w = lib.ones(1, 4, 5, requires_grad=True)
        (a @ w).sum().backward()
        assert w.grad.shape == (1, 4, 5) and w.grad.tolist() == [[[6.0] * 5] * 4]


# -- random shapes -------------------------------------------------------------------------------------------
@st.composite
def matmul_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    left = [b if draw(st.booleans()) else 1 for b in batch][draw(st.integers(0, len(batch))):]
    right = [b if draw(st.booleans()) else 1 for b in batch][draw(st.integers(0, len(batch))):]
    a = tuple(left) + ((n, k) if draw(st.booleans()) or left else (k,))
    b = tuple(right) + ((k, m) if draw(st.booleans()) or right else (k,))
    return a, b


@settings(max_examples=40, deadline=None)
@given(matmul_shapes(), st.sampled_from(sorted(GRADS)))
def test_random_matmul(shapes: tuple, which: str) -> None:
    ga, gb = GRADS[which]
    check(lambda L, a, b: operand(a, ga) @ operand(b, gb), arrays_for(*shapes, seed=sum(map(len, shapes))))


def test_harness_catches_a_wrong_product() -> None:
    with pytest.raises(AssertionError):
        check(lambda L, a, b: a @ b if L is torch else (a @ b) * 1.0000001, arrays_for((3, 4), (4, 2)))


def test_values_are_numpys() -> None:
    a, b = arrays_for((3, 4), (4, 2))
    np.testing.assert_allclose((gradcalc.tensor(a) @ gradcalc.tensor(b)).numpy(), a @ b, rtol=1e-15)


@pytest.mark.parametrize("shapes", [((1,), (1, 1)), ((3, 1), (1, 1)), ((1, 1), (1, 3)), ((2, 3), (3, 1))])
def test_mm_gradient_graph_follows_operand_layout(shapes: tuple) -> None:
    """PyTorch computes the gradient of a column-major operand as a transposed product (TBackward0)."""
    check(lambda L, a, b: a @ b, arrays_for(*shapes))
    check(lambda L, a, b: a.t() @ b.t(), arrays_for(*(tuple(reversed(s)) for s in shapes)))
