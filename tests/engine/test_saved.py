"""Saved values by PyTorch's names (`grad_fn._saved_self`, ...), against PyTorch, node kind by node kind."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd.saved import FREED_VALUE

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

def _method(name: str) -> Any:
    return lambda a, b, lib: getattr(a, name)()


# what each kind of node is made by; both libraries run the same lambda
PROGRAMS = {
    "add": lambda a, b, lib: a + b,
    "add_alpha": lambda a, b, lib: lib.add(a, b, alpha=2),
    "sub": lambda a, b, lib: a - b,
    "rsub": lambda a, b, lib: 2.0 - a,
    "mul": lambda a, b, lib: a * b,
    "mul_number": lambda a, b, lib: a * 2.0,
    "mul_constant_tensor": lambda a, b, lib: a * b.detach(),
    "div": lambda a, b, lib: a / b,
    "div_number": lambda a, b, lib: a / 2.0,
    "pow_number": lambda a, b, lib: a**2,
    "pow_float": lambda a, b, lib: a**2.5,
    "pow_tensor": lambda a, b, lib: a**b,
    "pow_number_base": lambda a, b, lib: 2.0**a,
    "sum": lambda a, b, lib: a.sum(),
    "sum_dim": lambda a, b, lib: a.sum(0),
    "sum_keepdim": lambda a, b, lib: a.sum(0, keepdim=True),
    "mean": lambda a, b, lib: a.mean(),
    "mean_dim": lambda a, b, lib: a.mean(0),
    "dot": lambda a, b, lib: a.dot(b),
    "mv": lambda a, b, lib: lib.stack([a, b]) @ b,
    "mm": lambda a, b, lib: lib.stack([a, b]) @ lib.stack([b, a]),
    "bmm": lambda a, b, lib: lib.bmm(lib.stack([a, b]).unsqueeze(0), lib.stack([b, a]).unsqueeze(0)),
    "view": lambda a, b, lib: lib.stack([a, b]).view(4),
    "transpose": lambda a, b, lib: lib.stack([a, b]).transpose(0, 1),
    "permute": lambda a, b, lib: lib.stack([a, b]).permute(1, 0),
    "expand": lambda a, b, lib: a.expand(3, 2),
    "unsqueeze": lambda a, b, lib: a.unsqueeze(0),
    "select": lambda a, b, lib: lib.stack([a, b])[1],
    "slice": lambda a, b, lib: lib.stack([a, b])[0:1],
    "cat": lambda a, b, lib: lib.cat([a, b]),
    "stack": lambda a, b, lib: lib.stack([a, b], 1),
    "unbind": lambda a, b, lib: lib.stack([a, b]).unbind(1)[0],
    "softmax": lambda a, b, lib: a.softmax(0),
    "log_softmax": lambda a, b, lib: a.log_softmax(0),
    "logsumexp": lambda a, b, lib: lib.stack([a, b]).logsumexp(1),
    "where": lambda a, b, lib: lib.where(a > 0.3, a, b),
    "remainder": lambda a, b, lib: a % b,
    "prod": lambda a, b, lib: a.prod(),
    "prod_dim": lambda a, b, lib: lib.stack([a, b]).prod(1),
    "max": lambda a, b, lib: a.max(),
    "min": lambda a, b, lib: a.min(),
    "max_dim": lambda a, b, lib: lib.stack([a, b]).max(1)[0],
    "min_dim": lambda a, b, lib: lib.stack([a, b]).min(0)[0],
    "clamp": lambda a, b, lib: a.clamp(0.3, 0.6),
    "clamp_min": lambda a, b, lib: a.clamp(min=0.3),
    "maximum": lambda a, b, lib: lib.maximum(a, b),
    "amax": lambda a, b, lib: lib.stack([a, b]).amax(0),
    "amin": lambda a, b, lib: lib.stack([a, b]).amin(1, keepdim=True),
    "var": lambda a, b, lib: a.var(),
    "var_dim": lambda a, b, lib: lib.stack([a, b]).var(0, keepdim=True),
    "std": lambda a, b, lib: a.std(),
    "std_dim": lambda a, b, lib: lib.stack([a, b]).std(1),
    "norm": lambda a, b, lib: a.norm(),
    "norm_dim": lambda a, b, lib: lib.stack([a, b]).norm(dim=0),
    "squeeze": lambda a, b, lib: a.unsqueeze(0).squeeze(0),
    "squeeze_all": lambda a, b, lib: a.unsqueeze(0).squeeze(),
    "split": lambda a, b, lib: lib.stack([a, b]).split(1)[0],
    "clamp_min_method": lambda a, b, lib: a.clamp_min(0.3),
    "clamp_max_method": lambda a, b, lib: a.clamp_max(0.3),
    "clamp_tensors": lambda a, b, lib: a.clamp(b * 0.5, b * 2),
    "minimum": lambda a, b, lib: lib.minimum(a, b),
    "addmm": lambda a, b, lib: lib.addmm(b, lib.stack([a, b]), lib.stack([b, a])),
    "linear": lambda a, b, lib: lib.nn.functional.linear(lib.stack([a, b]), lib.stack([b, a]), a),
    **{
        name: _method(name)
        for name in (
            "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh",
            "sqrt", "rsqrt", "reciprocal", "abs", "sign", "relu", "sigmoid", "erf", "neg",
        )
    },
}
# names PyTorch keeps that gradcalc's formulas do not need: (node name, saved name)
NOT_KEPT = {
    ("PowBackward1", "result"), ("PowBackward2", "exponent"),
    *(("MmBackward0", n) for n in ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
    *(("AddmmBackward0", n) for n in ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
}


# values that differ: norm() over all dims shows the dims gradcalc resolved, where PyTorch keeps None
DIFFERENT = {"norm": {"dim"}}


def leaves(lib: Any) -> tuple[Any, Any]:
    return (lib.tensor([0.5, 0.25], requires_grad=True), lib.tensor([0.75, 1.5], requires_grad=True))


def value(v: Any) -> Any:
    if isinstance(v, (torch.Tensor, gradcalc.Tensor)):
        d = v.detach().numpy() if isinstance(v, torch.Tensor) else np.asarray(v._data)
        return ("tensor", (d if d.dtype == bool else d.round(12)).tolist())
    if isinstance(v, tuple):
        return tuple(int(x) for x in v)
    return v


def names(node: Any, prefix: str) -> set[str]:
    return {n[len(prefix):] for n in dir(node) if n.startswith(prefix)}


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_saved_names_and_values_are_pytorchs(kind: str) -> None:
    ours = PROGRAMS[kind](*leaves(gradcalc), gradcalc).grad_fn
    theirs = PROGRAMS[kind](*leaves(torch), torch).grad_fn
    assert ours.name() == theirs.name()
    expected = names(theirs, "_saved_") - {n for k, n in NOT_KEPT if k == theirs.name()}
    assert names(ours, "_saved_") == expected
    for name in expected - DIFFERENT.get(kind, set()):
        assert value(getattr(ours, "_saved_" + name)) == value(getattr(theirs, "_saved_" + name)), name
    raw = names(theirs, "_raw_saved_") - {n for k, n in NOT_KEPT if k == theirs.name()}
    assert names(ours, "_raw_saved_") <= raw | {"exponent", "result"}
    assert set(ours.saved) == expected


def test_saved_tensors_after_backward_are_freed_with_pytorchs_error() -> None:
    for lib in (gradcalc, torch):
        a, b = leaves(lib)
        y = a * b
        y.sum().backward()
        with pytest.raises(RuntimeError, match="(?i)backward through the graph a second time"):
            y.grad_fn._saved_self  # noqa: B018
    a, b = leaves(gradcalc)
    y = a**2
    y.sum().backward()
    assert y.grad_fn.saved == {"self": FREED_VALUE, "exponent": 2}
    assert y.grad_fn._saved_exponent == 2  # not a tensor: never freed


def test_pack_order_is_pytorchs() -> None:
    """The declared order of the names is the order PyTorch packs them in (saved_tensors_hooks)."""
    a, b = leaves(torch)
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.detach().numpy().tolist()) or t,
                                                  lambda t: t):
        _ = a * b
    assert packed == [[0.75, 1.5], [0.5, 0.25]]  # other, then self
    assert list(gradcalc.tensor(1.0, requires_grad=True).mul(2.0).grad_fn.saved_names) == ["other", "self"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    y = leaves(gradcalc)[0] * 2
    with pytest.raises(AttributeError):
        y.grad_fn._saved_nothing  # noqa: B018
    assert not hasattr(y.grad_fn, "foo")
