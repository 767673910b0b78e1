"""PyTorch's spellings and small semantics that tutorial code relies on, against torch: `axis=`/`keepdims=`,
indexing with a range, dtype conversions by name, `nelement`, the `new_*` constructors; a post-accumulate-grad
hook that returns its in-place result (PyTorch's optimizer-in-backward example); the grad_fn of
`autograd.functional.jvp`'s tangents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch


def X(L: Any) -> Any:  # noqa: N802 - the tables' one input
    return L.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])


SPELLINGS: dict[str, Callable[[Any], Any]] = {
 "range_index": lambda L: X(L)[range(2)],
 "range_index_col": lambda L: X(L)[:, range(1, 3)],
 "range_setitem": lambda L: (lambda x: (x.__setitem__(range(1), 0.), x)[1])(X(L)),
 "keepdims_sum": lambda L: X(L).sum(1, keepdims=True),
 "keepdims_mean": lambda L: X(L).mean(dim=0, keepdims=True),
 "keepdims_fn": lambda L: L.sum(X(L), 1, keepdims=True),
 "keepdims_max": lambda L: X(L).max(1, keepdims=True),
 "keepdims_amax": lambda L: X(L).amax(1, keepdims=True),
 "keepdims_std": lambda L: X(L).std(1, keepdims=True),
 "keepdims_logsumexp": lambda L: X(L).logsumexp(1, keepdims=True),
 "keepdims_argmax": lambda L: X(L).argmax(1, keepdims=True),
 "keepdims_prod": lambda L: X(L).prod(1, keepdims=True),
 "axis_argmax": lambda L: X(L).argmax(axis=1),
 "axis_argmin": lambda L: L.argmin(X(L), axis=0),
 "axis_sum": lambda L: X(L).sum(axis=1),
 "axis_mean": lambda L: X(L).mean(axis=0),
 "axis_max": lambda L: X(L).max(axis=1),
 "axis_cat": lambda L: L.cat([X(L), X(L)], axis=1),
 "axis_stack": lambda L: L.stack([X(L), X(L)], axis=0),
 "axis_softmax": lambda L: X(L).softmax(axis=1),
 "axis_squeeze": lambda L: X(L)[None].squeeze(axis=0),
 "axis_unsqueeze": lambda L: X(L).unsqueeze(axis=0).shape,
 "axis_var": lambda L: X(L).var(axis=1),
 "axis_std": lambda L: X(L).std(axis=1),
 "axis_any": lambda L: (X(L) > 2).any(axis=1),
 "axis_all": lambda L: (X(L) > 2).all(axis=1),
 "axis_norm": lambda L: X(L).norm(dim=1),
 "axis_amax": lambda L: X(L).amax(axis=1),
 "axis_logsumexp": lambda L: X(L).logsumexp(axis=1),
 "axis_prod": lambda L: X(L).prod(axis=1),
 "axis_min": lambda L: X(L).min(axis=1),
 "axis_sort": lambda L: X(L).sort(axis=1),
 "nelement": lambda L: X(L).nelement(),
 "long": lambda L: X(L).long(),
 "int": lambda L: X(L).int(),
 "bool": lambda L: X(L).bool(),
 "type_str": lambda L: X(L).type(),
 "type_dtype": lambda L: X(L).type(L.float64).dtype,
 "type_name": lambda L: X(L).type('torch.DoubleTensor').dtype,
 "new_zeros": lambda L: X(L).new_zeros(2, 3),
 "new_ones": lambda L: X(L).new_ones((2,)),
 "new_tensor": lambda L: X(L).new_tensor([1, 2]),
 "new_full": lambda L: X(L).new_full((2,), 3.),
 "new_empty": lambda L: X(L).new_empty(2).shape,
 "element_size": lambda L: X(L).element_size(),
 "is_floating_point": lambda L: X(L).is_floating_point(),
 "dim": lambda L: X(L).dim(),
 "ndimension": lambda L: X(L).ndimension(),
 "size_dim": lambda L: X(L).size(-1),
 "numpy_T": lambda L: X(L).mT.shape,
 "float_int_index": lambda L: X(L)[L.tensor(1)],
 "list_index": lambda L: X(L)[[0, 1], [1, 2]],
 "view_as": lambda L: X(L).view_as(L.zeros(3, 2)).shape,
 "reshape_as": lambda L: X(L).reshape_as(L.zeros(3, 2)).shape,
 "expand_as": lambda L: L.ones(1, 3).expand_as(X(L)).shape,
 "type_as": lambda L: X(L).type_as(L.tensor([1])).dtype,
 "item_int": lambda L: L.tensor(3).item(),
 "tolist": lambda L: X(L).tolist(),
 "square": lambda L: X(L).square(),
 "numel_fn": lambda L: L.numel(X(L)),
 "clamp_min": lambda L: X(L).clamp_min(2),
 "t_method": lambda L: X(L).t().shape,
 "permute_varargs": lambda L: X(L).permute(1, 0).shape,
 "zero_dim_index": lambda L: X(L)[0, 1],
 "ellipsis": lambda L: X(L)[..., 1],
 "none_index": lambda L: X(L)[None, :, 1].shape,
 "argmax_keepdim": lambda L: X(L).argmax(dim=1, keepdim=True),
 "cpu_numpy": lambda L: X(L).cpu().detach().numpy().tolist(),
 "device_str": lambda L: str(X(L).device),
 "shape_index": lambda L: X(L).shape[-1],
 "size_tuple": lambda L: tuple(X(L).size()),
}

def _outcome(make: Callable[[Any], Any], L: Any) -> tuple[str, str]:
    try:
        return "OK", str(make(L)).replace("gradcalc", "torch")
    except Exception as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_spellings_as_torch(name: str) -> None:
    assert _outcome(SPELLINGS[name], gradcalc) == _outcome(SPELLINGS[name], torch)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "logsumexp", "argmax", "std", "prod"])
def test_axis_and_keepdims_name_the_same_parameters(name: str) -> None:
    x = gradcalc.tensor(np.arange(6.0).reshape(2, 3))
    spelled = getattr(x, name)(axis=1, keepdims=True)
    plain = getattr(x, name)(dim=1, keepdim=True)
    np.testing.assert_array_equal(spelled.numpy(), plain.numpy())
    with pytest.raises(TypeError, match="multiple values"):
        getattr(x, name)(1, dim=1, axis=1)


def test_post_accumulate_grad_hook_returning_its_in_place_result() -> None:
    """PyTorch's documentation example: the optimizer step in a post-accumulate-grad hook."""
    results = []
    for L in (gradcalc, torch):
        L.manual_seed(0)
        w = L.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        b = L.tensor([0.1, -0.2], requires_grad=True)
        for p in (w, b):
            p.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.05))
        x = L.tensor([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])
        for _ in range(5):
            for p in (w, b):
                p.grad = None
            (L.tanh(x @ w + b) ** 2).sum().backward()
        results.append([w.detach().numpy().copy(), b.detach().numpy().copy(), w._version])
    for ours, theirs in zip(results[0][:2], results[1][:2], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert results[0][2] == results[1][2]


def test_post_accumulate_grad_hook_returning_another_tensor_is_refused_as_torch() -> None:
    for L in (gradcalc, torch):
        p = L.tensor([1.0, 2.0], requires_grad=True)
        p.register_post_accumulate_grad_hook(lambda p: p * 2)
        with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
            (p * p).sum().backward()


JVP_FUNCTIONS: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "sum": lambda L: lambda x: x.sum(), "dot": lambda L: lambda x: x @ x, "norm": lambda L: lambda x: x.norm(),
    "prod": lambda L: lambda x: x.prod(), "square_sum": lambda L: lambda x: (x**2).sum(),
    "logsumexp": lambda L: lambda x: x.logsumexp(0), "exp_sum": lambda L: lambda x: x.exp().sum(),
    "var": lambda L: lambda x: x.var(), "tanh_sum": lambda L: lambda x: x.tanh().sum(),
    "sin": lambda L: lambda x: x.sin(), "matrix": lambda L: lambda x: (L.outer(x, x) ** 2).sum(1),
}


@pytest.mark.parametrize("name", sorted(JVP_FUNCTIONS))
def test_jvp_tangent_grad_fn_as_torch(name: str) -> None:
    found = []
    for L in (gradcalc, torch):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out, tangent = L.autograd.functional.jvp(JVP_FUNCTIONS[name](L), x, L.tensor([1.0, 0.0, 2.0]),
                                                 create_graph=True)
        found.append((None if tangent.grad_fn is None else tangent.grad_fn.name(), tangent.detach().numpy()))
    assert found[0][0] == found[1][0]
    np.testing.assert_allclose(found[0][1], found[1][1], rtol=1e-12)
