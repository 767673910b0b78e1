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
    ("PowBackward1", "result"),
    *(("MmBackward0", n) for n in ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
    *(("AddmmBackward0", n) for n in ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
}


# values that differ, by program (none now: norm() over all dims keeps None, as PyTorch)
DIFFERENT: dict[str, set[str]] = {}


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


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_after_backward_each_saved_name_reads_as_pytorchs_none_or_error(kind: str) -> None:
    """A freed node: a tensor slot it left empty reads None (as PyTorch's undefined saved tensor), a saved
    tensor (or a number operand PyTorch wraps as one) is the freed error, anything else its value; `saved`
    and `details` (the language's `graph`) show the same."""
    from gradcalc.autograd.saved import details

    def after(lib: Any) -> Any:
        y = PROGRAMS[kind](*leaves(lib), lib)
        y.sum().backward()
        return y.grad_fn

    ours, theirs = after(gradcalc), after(torch)
    shown = {d.name: d.value for d in details(ours)}
    for name in names(theirs, "_saved_") - {n for k, n in NOT_KEPT if k == theirs.name()} - DIFFERENT.get(kind, set()):
        try:
            expected = "none" if getattr(theirs, "_saved_" + name) is None else "value"
        except RuntimeError as exc:
            assert "backward through the graph a second time" in str(exc)
            expected = "freed"
        if expected == "freed":
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                getattr(ours, "_saved_" + name)
            assert ours.saved[name] is FREED_VALUE and shown[name] is FREED_VALUE, name
        else:
            value = getattr(ours, "_saved_" + name)
            assert (value is None) == (expected == "none"), name
            if expected == "none":
                assert ours.saved[name] is None and shown[name] is None, name


def test_a_saved_tensor_given_a_version_counter_after_saving_fails_before_the_walk() -> None:
    """`a` has no version counter when sin saves it; the in-place change gives it one. The check before the
    walk must still see it: the failed backward changes no .grad and frees nothing (PyTorch fails the same
    way, with its own message, but only midway: it has already run the other branch, accumulated w.grad and
    freed MulBackward0's values, which gradcalc's "a failed statement changes nothing" rules out)."""
    from gradcalc.autograd.saved import details

    messages = []
    for lib in (torch, gradcalc):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        a = x * 1
        b = a.sin()
        c = x * w
        a.add_(1)
        with pytest.raises(RuntimeError, match="(?i)modified by an inplace operation|changed in place") as err:
            (b.sum() + c.sum()).backward()
        messages.append(str(err.value))
    assert x.grad is None and w.grad is None
    # nothing freed (`details` reads without the version check)
    assert c.grad_fn._saved_self is x and details(b.grad_fn)[0].value is a
    # the message is the one the walk would raise on unpacking (the node, its saved index, both versions)
    with pytest.raises(RuntimeError) as unpacked:
        b.grad_fn.saved_tensors  # noqa: B018
    assert messages[1] == str(unpacked.value)
    assert "SinBackward0" in messages[1] and "version 1" in messages[1] and "version 0" in messages[1]
    # the same through grad(), and after the tensor got its counter from a view instead of an in-place change
    with pytest.raises(RuntimeError, match="changed in place"):
        gradcalc.autograd.grad(b.sum(), [x])
    y = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    p = y * 1
    q = p.exp() * p.cos()
    p[0:1].mul_(2)  # through a view: p's counter is made by the view, and bumped through it
    with pytest.raises(RuntimeError, match="changed in place"):
        q.sum().backward()
    assert y.grad is None


@pytest.mark.parametrize("base", [0, 0.0, 2.0, 0.5])
@pytest.mark.parametrize("create_graph", [False, True])
def test_number_to_a_tensor_power_differentiates_as_pytorch(base: float, create_graph: bool) -> None:
    """`base ** t` (PowBackward2): the exponent saved as PyTorch saves it, and for a base of 0 the gradient 0
    where the exponent is >= 0 (PyTorch's limit; 0 * log(0) would be nan), -inf where it is negative."""
    got = []
    for L in (torch, gradcalc):
        t = L.tensor([0.5, 0.0, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        y = base**t
        exponent = y.grad_fn._saved_exponent.detach().numpy()  # (read before grad frees it)
        (g,) = L.autograd.grad((y * L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64)).sum(), t,
                               create_graph=create_graph)
        got.append((y.detach().numpy(), g.detach().numpy(), exponent,
                    type(g.grad_fn).__name__ if create_graph else None))
    (ty, tg, te, tn), (gy, gg, ge, gn) = got
    np.testing.assert_array_equal(gy, ty)
    np.testing.assert_allclose(gg, tg, rtol=1e-15)
    np.testing.assert_array_equal(ge, te)
    assert gn == tn
