"""vmap's API against PyTorch's (issue 22): the examples of torch.func.vmap's and torch.func.grad's docstrings,
randomness modes and their errors, in-place operations, `.backward()` inside a transform, chunk_size, in_dims and
out_dims trees and their errors, the fallback's warning, which operations have rules, and the grad_fn names of
batched results. Every expectation is PyTorch's (run beside), or mathematics.

Errors are compared by type and by their first line: gradcalc's engine errors give PyTorch's text first and
its own explanation on the next line (autograd/reasons.py's `worded`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import spec

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _torch_float64() -> None:
    torch.set_default_dtype(torch.float64)


def outcome(fn: Callable[[Any], Any], L: Any) -> Any:
    """What `fn(L)` gives: nested structures of arrays (and plain values), or (error type, first line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _plain(fn(L))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return (type(exc).__name__, str(exc).split("\n")[0])


def _plain(x: Any) -> Any:
    if isinstance(x, (gc.Tensor, torch.Tensor)):
        return ("tensor", x.detach().numpy().copy(), str(x.dtype).removeprefix("torch."))
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, torch.Size):
        return tuple(x)
    return x


def assert_same(ours: Any, theirs: Any, where: str = "") -> None:
    if isinstance(theirs, tuple) and len(theirs) == 3 and theirs[0] == "tensor":
        assert isinstance(ours, tuple) and ours[0] == "tensor", f"{where}: {ours!r} against a tensor"
        assert ours[2] == theirs[2], f"{where}: dtype {ours[2]} against {theirs[2]}"
        assert ours[1].shape == theirs[1].shape, f"{where}: shape {ours[1].shape} against {theirs[1].shape}"
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12, err_msg=where)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), f"{where}: {ours!r} against {theirs!r}"
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(a, b, f"{where}[{k}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), f"{where}: {ours!r} against {theirs!r}"
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    else:
        assert ours == theirs, f"{where}: {ours!r} against {theirs!r}"


def same_as_torch(fn: Callable[[Any], Any]) -> None:
    assert_same(outcome(fn, gc), outcome(fn, torch), fn.__name__)


def data(L: Any, *shape: int, seed: int = 0, **kw: Any) -> Any:
    """The same random values on both libraries."""
    return L.tensor(np.random.default_rng(seed).standard_normal(shape), **kw)


# -- torch.func.vmap's docstring ------------------------------------------------------------------------------
def batched_dot(L: Any) -> Any:
    return L.func.vmap(L.dot)(data(L, 2, 5), data(L, 2, 5, seed=1))


def simple_model(L: Any) -> Any:
    weights = data(L, 5, seed=2, requires_grad=True)

    def model(feature_vec: Any) -> Any:
        return feature_vec.dot(weights).relu()

    return L.vmap(model)(data(L, 3, 5))


def jacobian_by_autograd_grad(L: Any) -> Any:
    """y = f(x) built once, then vmap over autograd.grad with batched grad_outputs (the issue's first case)."""
    x = data(L, 5, requires_grad=True)
    y = x**2
    sequential = L.stack([L.autograd.grad(y, x, v, retain_graph=True)[0] for v in L.eye(5).unbind()])
    vectorized = L.vmap(lambda v: L.autograd.grad(y, x, v))(L.eye(5))
    return sequential, vectorized


def nested_dot(L: Any) -> Any:
    return L.vmap(L.vmap(L.dot))(data(L, 2, 3, 5), data(L, 2, 3, 5, seed=1))


def dot_in_dims_1(L: Any) -> Any:
    return L.vmap(L.dot, in_dims=1)(data(L, 2, 5), data(L, 2, 5, seed=1))


def dot_in_dims_none(L: Any) -> Any:
    return L.vmap(L.dot, in_dims=(0, None))(data(L, 2, 5), data(L, 5, seed=1))


def dict_in_dims(L: Any) -> Any:
    inputs = {"x": data(L, 2, 5), "y": data(L, 5, seed=1)}
    return L.vmap(lambda d: L.dot(d["x"], d["y"]), in_dims=({"x": 0, "y": None},))(inputs)


def out_dims_1(L: Any) -> Any:
    return L.vmap(lambda x: x**2, out_dims=1)(data(L, 2, 5))


def keyword_arguments(L: Any) -> Any:
    def fn(x: Any, scale: Any = 4.0) -> Any:
        return x * scale

    x = data(L, 2, 5)
    return L.vmap(fn)(x), L.vmap(fn)(x, scale=x)


DOCSTRING_VMAP = [batched_dot, simple_model, jacobian_by_autograd_grad, nested_dot, dot_in_dims_1, dot_in_dims_none,
                  dict_in_dims, out_dims_1, keyword_arguments]


@pytest.mark.parametrize("example", DOCSTRING_VMAP, ids=lambda f: f.__name__)
def test_vmap_docstring_examples(example: Callable[[Any], Any]) -> None:
    same_as_torch(example)


def test_the_docstring_jacobian_is_the_diagonal_of_2x() -> None:
    x = gc.tensor([1.0, -2.0, 0.5], requires_grad=True)
    y = x**2
    (jac,) = gc.vmap(lambda v: gc.autograd.grad(y, x, v))(gc.eye(3))
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, -4.0, 1.0]))


# -- torch.func.grad's docstring ------------------------------------------------------------------------------
def grad_of_sin(L: Any) -> Any:
    x = data(L)
    return L.func.grad(lambda x: L.sin(x))(x), x.cos(), L.func.grad(L.func.grad(lambda x: L.sin(x)))(x), -x.sin()


def per_example_grads(L: Any) -> Any:
    def model(weights: Any, feature_vec: Any) -> Any:
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    def compute_loss(weights: Any, example: Any, target: Any) -> Any:
        y = model(weights, example)
        return ((y - target) ** 2).mean()

    inputs = (data(L, 5, requires_grad=True), data(L, 3, 5, seed=1), data(L, 3, seed=2))
    return L.func.vmap(L.func.grad(compute_loss), in_dims=(None, 0, 0))(*inputs)


def grad_has_aux_argnums(L: Any) -> Any:
    def my_loss_func(y: Any, y_pred: Any) -> Any:
        loss_per_sample = (0.5 * y_pred - y) ** 2
        return loss_per_sample.mean(), (y_pred, loss_per_sample)

    fn = L.func.grad(my_loss_func, argnums=(0, 1), has_aux=True)
    return fn(data(L, 4).abs(), data(L, 4, seed=1, requires_grad=True))


def grad_with_no_grad_inside(L: Any) -> Any:
    def f(x: Any) -> Any:
        with L.no_grad():
            c = x**2
        return x - c

    x = data(L)
    with L.no_grad():
        outer = L.func.grad(f)(x)
    return L.func.grad(f)(x), outer


DOCSTRING_GRAD = [grad_of_sin, per_example_grads, grad_has_aux_argnums, grad_with_no_grad_inside]


@pytest.mark.parametrize("example", DOCSTRING_GRAD, ids=lambda f: f.__name__)
def test_grad_docstring_examples(example: Callable[[Any], Any]) -> None:
    same_as_torch(example)


def test_grad_of_sin_is_cos() -> None:
    x = gc.tensor(0.3)
    assert abs(gc.func.grad(gc.sin)(x).item() - np.cos(0.3)) < 1e-15
    assert abs(gc.func.grad(gc.func.grad(gc.sin))(x).item() + np.sin(0.3)) < 1e-15


# -- randomness ---------------------------------------------------------------------------------------------------
def _rand_in(mode: str, draw: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def case(L: Any) -> Any:
        return tuple(L.func.vmap(lambda x: draw(L, x), randomness=mode)(L.zeros(3, 2)).shape)

    case.__name__ = f"{mode}"
    return case


DRAWS: dict[str, Callable[[Any, Any], Any]] = {
    "rand": lambda L, x: x + L.rand(x.shape[0]),
    "randn_like": lambda L, x: L.randn_like(x),
    "normal_": lambda L, x: x.clone().normal_(),
    "uniform_ unbatched": lambda L, x: L.ones(2).uniform_() + x,
    "bernoulli": lambda L, x: L.bernoulli(L.full_like(x, 0.5)),
    "bernoulli mapped": lambda L, x: L.bernoulli(x.sigmoid()),
    "randint": lambda L, x: L.randint(0, 1000, (x.shape[0],)) + x,
}


@pytest.mark.parametrize("mode", ["error", "different", "same", "bogus"])
@pytest.mark.parametrize("draw", list(DRAWS))
def test_randomness_modes_and_errors_as_torch(mode: str, draw: str) -> None:
    same_as_torch(_rand_in(mode, DRAWS[draw]))


@pytest.mark.parametrize("draw", ["rand", "randn_like", "normal_", "randint"])
def test_same_draws_one_value_for_all_samples_and_different_one_each(draw: str) -> None:
    gc.manual_seed(0)
    same = gc.func.vmap(lambda x: DRAWS[draw](gc, x), randomness="same")(gc.zeros(4, 50)).numpy()
    different = gc.func.vmap(lambda x: DRAWS[draw](gc, x), randomness="different")(gc.zeros(4, 50)).numpy()
    assert all(np.array_equal(same[0], row) for row in same)
    assert not all(np.array_equal(different[0], row) for row in different)


def test_random_outside_the_mapped_function_is_free() -> None:
    x = gc.func.vmap(lambda x: x * 2)(gc.rand(3, 2))
    assert tuple(x.shape) == (3, 2)


# -- in-place operations, backward, reading values -----------------------------------------------------------------
def add_into_unbatched(L: Any) -> Any:
    x = L.zeros(3)
    return L.func.vmap(lambda v: x.add_(v))(L.ones(2, 3))


def mul_into_unbatched(L: Any) -> Any:
    x = L.zeros(3)
    return L.func.vmap(lambda v: x.mul_(v))(L.ones(2, 3))


def setitem_into_unbatched(L: Any) -> Any:
    def f(v: Any) -> Any:
        x = L.zeros(3)
        x[0] = v[1]
        return x

    return L.func.vmap(f)(data(L, 2, 3))


def inplace_on_batched(L: Any) -> Any:
    x = data(L, 2, 3)
    out = L.func.vmap(lambda v: v.mul_(2).add_(1).clamp_(-1, 1))(x)
    return out, x  # the batch was written in place


def inplace_on_batched_with_unbatched_operand(L: Any) -> Any:
    w = data(L, 3, seed=1)
    return L.func.vmap(lambda v: v.clone().sub_(w).div_(2.0).pow_(2))(data(L, 2, 3), )


def inplace_broadcast_rank(L: Any) -> Any:
    return L.func.vmap(lambda v: v.add_(L.ones(2, 3)))(L.ones(4, 3))


def backward_inside_vmap(L: Any) -> Any:
    return L.func.vmap(lambda x: (x * 2).sum().backward())(L.ones(3, 2, requires_grad=True))


def backward_inside_grad(L: Any) -> Any:
    x = L.ones(2, requires_grad=True)
    return L.func.grad(lambda y: ((x * y).sum().backward(), y.sum())[1])(L.ones(2))


def item_inside(L: Any) -> Any:
    return L.func.vmap(lambda x: x.sum().item())(L.ones(2, 3))


def control_flow(L: Any) -> Any:
    return L.func.vmap(lambda x: x if x.sum() > 0 else -x)(L.ones(2, 3))


def mask_indexing(L: Any) -> Any:
    return L.func.vmap(lambda x: x[x > 0])(L.ones(2, 3))


def equal_inside(L: Any) -> Any:
    return L.func.vmap(lambda x: L.tensor(L.equal(x, x)))(L.ones(2, 3))


def allclose_inside(L: Any) -> Any:
    return L.func.vmap(lambda x: L.tensor(L.allclose(x, x)))(L.ones(2, 3))


def data_inside(L: Any) -> Any:
    return L.func.vmap(lambda x: x.data)(L.ones(2))


BEHAVIOUR = [add_into_unbatched, mul_into_unbatched, setitem_into_unbatched, inplace_on_batched,
             inplace_on_batched_with_unbatched_operand, inplace_broadcast_rank, backward_inside_vmap,
             backward_inside_grad, item_inside, control_flow, mask_indexing, equal_inside, allclose_inside,
             data_inside]


@pytest.mark.parametrize("case", BEHAVIOUR, ids=lambda f: f.__name__)
def test_behaviour_and_errors_as_torch(case: Callable[[Any], Any]) -> None:
    same_as_torch(case)


# -- in_dims, out_dims, chunk_size ---------------------------------------------------------------------------------
def _calls() -> list[Callable[[Any], Any]]:
    def mk(name: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        fn.__name__ = name
        return fn

    return [
        mk("chunk_size 2", lambda L: L.func.vmap(lambda x: x.sin() * x.sum(), chunk_size=2)(data(L, 5, 3))),
        mk("chunk_size 1 nested", lambda L: L.func.vmap(L.func.vmap(L.outer, chunk_size=1), chunk_size=3)(
            data(L, 4, 2, 3), data(L, 4, 2, 2, seed=1))),
        mk("chunk_size 0", lambda L: L.func.vmap(lambda x: x, chunk_size=0)(data(L, 5))),
        mk("out_dims tree", lambda L: L.func.vmap(lambda x: (x, {"a": x * 2, "b": x.sum()}),
                                                  out_dims=(1, {"a": 0, "b": 0}))(data(L, 2, 3))),
        mk("out_dims None", lambda L: L.func.vmap(lambda x: (x * 2, L.ones(2)), out_dims=(0, None))(data(L, 2, 3))),
        mk("out_dims negative", lambda L: L.func.vmap(lambda x: x.outer(x), out_dims=-2)(data(L, 4, 3))),
        mk("out_dims out of range", lambda L: L.func.vmap(lambda x: x, out_dims=3)(data(L, 2, 3))),
        mk("out_dims None on batched", lambda L: L.func.vmap(lambda x: x, out_dims=None)(data(L, 2, 3))),
        mk("out_dims structure", lambda L: L.func.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(data(L, 2, 3))),
        mk("unbatched output", lambda L: L.func.vmap(lambda x: L.ones(3))(data(L, 2, 3))),
        mk("in_dims nested tree", lambda L: L.func.vmap(lambda p, q: p[0] * p[1]["w"] + q,
                                                        in_dims=((None, {"w": 1}), -1))(
            (data(L, 3), {"w": data(L, 3, 4, seed=1)}), data(L, 3, 4, seed=2))),
        mk("in_dims structure", lambda L: L.func.vmap(lambda x: x, in_dims=(0, 0))(data(L, 2, 3))),
        mk("in_dims out of range", lambda L: L.func.vmap(lambda x: x, in_dims=2)(data(L, 2, 3))),
        mk("sizes differ", lambda L: L.func.vmap(lambda x, y: x + y)(data(L, 2, 3), data(L, 3, 3))),
        mk("nothing mapped", lambda L: L.func.vmap(lambda x: x, in_dims=None)(data(L, 2, 3))),
        mk("a scalar mapped", lambda L: L.func.vmap(lambda x: x)(data(L))),
        mk("a number mapped", lambda L: L.func.vmap(lambda x: x)(5)),
        mk("returns a number", lambda L: L.func.vmap(lambda x: 3)(data(L, 2, 3))),
        mk("in_dims float", lambda L: L.func.vmap(lambda x: x, in_dims=0.5)(data(L, 2, 3))),
        mk("size 0 batch", lambda L: L.func.vmap(lambda x: x * 2)(data(L, 0, 3))),
    ]


CALLS = _calls()


@pytest.mark.parametrize("case", CALLS, ids=lambda f: f.__name__)
def test_dims_and_chunks_as_torch(case: Callable[[Any], Any]) -> None:
    same_as_torch(case)


# -- the per-sample fallback --------------------------------------------------------------------------------------
def test_an_operation_without_a_rule_runs_per_sample_with_pytorchs_warning_once() -> None:
    """PyTorch warns (once per operation) when an operation has no batching rule and runs per sample: its
    histc has none. A gradcalc operation without one (registered here) warns in PyTorch's words."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.vmap(lambda t: torch.histc(t, bins=4))(torch.tensor(x))
    calls: list[tuple[int, ...]] = []

    def histc(t: Any, bins: int = 4) -> Any:
        calls.append(tuple(t.shape))
        return t.sin() * bins

    op = spec.public("histc", histc)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        out = gc.func.vmap(lambda t: op(t, bins=2) + 1.0)(gc.tensor(x))
        gc.func.vmap(op)(gc.tensor(x))
    expected = str(theirs[0].message).split(" (Triggered internally")[0]
    assert [str(w.message) for w in ours if "performance" in str(w.message)] == [expected]
    assert ours[0].filename == __file__  # the line that called the operation
    assert calls[:3] == [(4,), (4,), (4,)]  # once per sample, each one sample
    np.testing.assert_allclose(out.numpy(), np.sin(x) * 2 + 1.0)


# -- which operations have rules -----------------------------------------------------------------------------------
TABLES = {  # the op tables of the issue: every operation of theirs has a rule
    "elementwise": {"abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "exp", "exp2", "expm1", "floor",
                    "frac", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign",
                    "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "add", "sub", "mul", "div", "pow", "remainder",
                    "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "where", "relu", "gelu", "silu",
                    "softplus"},
    "reduction": {"sum", "mean", "prod", "amax", "amin", "max", "min", "logsumexp", "norm", "std", "var", "softmax",
                  "log_softmax", "sort"},
    "shape": {"reshape", "view", "view_as", "reshape_as", "flatten", "squeeze", "unsqueeze", "expand", "expand_as",
              "permute", "transpose", "t", "movedim", "narrow", "select", "cat", "stack", "split", "chunk",
              "unbind", "clone"},
    "indexing": {"__getitem__", "index_add"},
    "matrix": {"matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "diag"},
    "nn": {"linear", "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"},
}


def test_every_operation_of_the_tables_has_a_batching_rule() -> None:
    with_rule = {name for name, op in spec.OPS.items() if op.vmap is not None}
    for table, names in TABLES.items():
        assert names <= set(spec.OPS), f"{table}: not operations: {names - set(spec.OPS)}"
        assert names <= with_rule, f"{table}: without a rule: {names - with_rule}"


def test_which_operations_have_rules() -> None:
    """The list, as it is: every registered operation has one (none runs the per-sample loop)."""
    without = {name for name, op in spec.OPS.items() if op.vmap is None}
    assert without == set(), without
    assert set().union(*TABLES.values()) <= set(spec.OPS)


# -- grad_fn names ---------------------------------------------------------------------------------------------
SAMPLED = sorted(name for name, op in spec.OPS.items() if op.sample is not None)


def _name(fn: Any) -> str | None:
    if fn is None:
        return None
    return fn.name() if isinstance(fn, gc.autograd.Node) else type(fn).__name__


def _grad_fn_names(L: Any, op: spec.OpSpec, outside: bool) -> Any:
    rng = np.random.default_rng(0)
    arrays = [op.sample.domain.draw(rng, s) for s in op.sample.shapes]
    first = L.tensor(np.stack([arrays[0], arrays[0] * 0.5 + 0.1 * np.sign(arrays[0])]), requires_grad=not outside)
    rest = [L.tensor(a, requires_grad=outside) for a in arrays[1:]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = L.func.vmap(lambda x: op.sample.call(L, x, *rest))(first)
    except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
        return type(exc).__name__
    return [_name(o.grad_fn) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", SAMPLED)
@pytest.mark.parametrize("outside", [True, False], ids=["outside tensors require grad", "the mapped one does"])
def test_grad_fn_names_of_batched_results_as_torch(name: str, outside: bool) -> None:
    op = spec.OPS[name]
    if outside and len(op.sample.shapes) == 1:
        pytest.skip("one input: the mapped one")
    assert _grad_fn_names(gc, op, outside) == _grad_fn_names(torch, op, outside)


def test_grad_fn_of_a_result_tied_to_an_outside_tensor_is_the_ops_node() -> None:
    w = gc.ones(3, requires_grad=True)
    out = gc.func.vmap(lambda v: (v * w).sin())(gc.ones(2, 3))
    assert out.grad_fn.name() == "SinBackward0"
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.cos(1.0) * np.ones(3))
