"""The nn.functional operations outside the op tables (batch_norm, embedding, smooth_l1_loss, huber_loss, kl_div,
dropout, the activations of ops/activations.py) give the same gradients in both modes of their formulas, as
test_both_modes.py checks the tables': a plain `backward()` (the raw_ok nodes on bare arrays) and
`autograd.grad(..., create_graph=True)` (on recorded tensors), to 1e-12; and one order up, on the create_graph
gradients (their BackwardBackward nodes). Each is checked against PyTorch in its own test module."""

from __future__ import annotations

import numpy as np
import pytest

import gradcalc as gc

F = gc.nn.functional

CASES = {
    "batch_norm train": (((4, 3, 2), (3,), (3,)), lambda x, w, b: F.batch_norm(x, gc.zeros(3), gc.ones(3), w, b, True)),
    "batch_norm eval": (((4, 3), (3,), (3,)), lambda x, w, b: F.batch_norm(x, gc.zeros(3) + 0.2, gc.ones(3) * 1.5, w,
                                                                           b, False)),
    "batch_norm no affine": (((5, 2, 2),), lambda x: F.batch_norm(x, None, None, training=True)),
    "embedding": (((5, 3),), lambda w: F.embedding(gc.tensor([[1, 2, 1], [4, 0, 1]]), w, padding_idx=0)),
    "embedding by frequency": (((5, 3),), lambda w: F.embedding(gc.tensor([4, 4, 1]), w, scale_grad_by_freq=True)),
    "smooth_l1": (((2, 3), (2, 3)), lambda a, b: F.smooth_l1_loss(a * 3, b, beta=0.5)),
    "smooth_l1 none": (((2, 3), (2, 3)), lambda a, b: F.smooth_l1_loss(a * 3, b, reduction="none")),
    "huber": (((2, 3), (2, 3)), lambda a, b: F.huber_loss(a * 3, b, reduction="sum", delta=0.7)),
    "kl_div": (((2, 3), (2, 3)), lambda a, b: F.kl_div(a, b, reduction="batchmean")),
    "dropout p=1": (((2, 3),), lambda a: F.dropout(a, 1.0)),
    # the activations, on both sides of their kinks (the leaves are drawn in (0.2, 0.9))
    "leaky_relu": (((2, 3),), lambda a: F.leaky_relu(a * 4 - 2, 0.2)),
    "leaky_relu_": (((2, 3),), lambda a: F.leaky_relu_(a * 4 - 2, 0.2)),
    "elu": (((2, 3),), lambda a: F.elu(a * 4 - 2, 0.7)),
    "elu_": (((2, 3),), lambda a: F.elu_(a * 4 - 2, 0.7)),
    "hardtanh": (((2, 3),), lambda a: F.hardtanh(a * 4 - 2, -1.0, 1.2)),
    "hardswish": (((2, 4),), lambda a: F.hardswish(a * 10 - 5)),
    "hardsigmoid": (((2, 4),), lambda a: F.hardsigmoid(a * 10 - 5)),
    "logsigmoid x8": (((2, 3),), lambda a: F.logsigmoid(a * 8 - 4)),
    "mish": (((2, 3),), lambda a: F.mish(a * 6 - 3)),
    "glu": (((2, 4),), lambda a: F.glu(a * 4 - 2)),
}
# PyTorch has no derivative of hardsigmoid's gradient (NotImplemented): no second order
FIRST_ORDER_ONLY = {"hardsigmoid"}


def _grads(name: str, create_graph: bool, order: int) -> list:
    shapes, call = CASES[name]
    rng = np.random.default_rng(0)
    leaves = [gc.tensor(rng.uniform(0.2, 0.9, s), requires_grad=True) for s in shapes]
    y = call(*leaves)
    w = gc.tensor(rng.uniform(0.5, 1.5, tuple(y.shape)))
    loss = (y * y * w).sum()
    if order == 2:
        firsts = gc.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
        loss = sum((g * g).sum() for g in firsts if g is not None and g.requires_grad)
    if create_graph:
        grads = gc.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    else:
        loss.backward()
        grads = [x.grad for x in leaves]
    return [None if g is None else g.detach().numpy() for g in grads]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_backward_agrees_with_create_graph(name: str, order: int) -> None:
    if order == 2 and name in FIRST_ORDER_ONLY:
        pytest.skip("no second derivative in PyTorch")
    plain, recorded = _grads(name, False, order), _grads(name, True, order)
    assert [g is None for g in plain] == [g is None for g in recorded]
    for a, b in zip(plain, recorded, strict=True):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


