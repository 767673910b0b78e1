"""Every spec against PyTorch (autograd/spec.py): for every registered operation's sample call, in float64,

- the backward (gradients of a random weighting of the outputs) against PyTorch's;
- the forward rule (`func.jvp`) against `torch.func.jvp`;
- (the batched backward against `torch.func.jacrev` is in test_batched_jacobian.py, which runs before any
  saved-tensor hooks turn it off for the rest of the process);
- the saved values of every node of the graph, and of the graphs a create_graph gradient records (of the sum of
  squares, so that every node's own backward records its nodes), by PyTorch's names and values against the same
  node of PyTorch's graph (walked side by side);

and, over the node classes: each has its own spec (or is a base, or one of the engine's own nodes, listed), a
formula for every input, a forward rule or the reason there is none (listed here: adding one must be a decision),
and is reached by some sample, so that every node class is checked against PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import forward_ad, spec
from gradcalc.autograd.function import BackwardCFunction
from gradcalc.autograd.node import Node

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

RTOL, ATOL = 1e-9, 1e-11

# Node classes defined outside ops/ have no spec: the engine's own and a custom Function's
ENGINE_NODES = {
    "node.AccumulateGrad": "a leaf's node: the walk adds into .grad",
    "plan.CopyBackwards": "the first gradient a leaf accumulates under create_graph: a copy",
    "function.BackwardCFunction": "a custom Function's node: its backward and jvp are the user's",
    "function.DelayedError": "once_differentiable's node: differentiating it is the error",
    "forward_ad._ForwardEdge": "the edge of an input that only carries a tangent",
}
# The nodes without a forward rule, and why (a decision each: a new one must be added here)
NO_FORWARD_RULE = {
    "arithmetic.NotImplemented_": "floor_divide and scatter with reduce= have no derivative",
    "scatter_reduce.ScatterReduceDoubleBackwardError": "PyTorch's Error node",
    **{f"counting.{n}": "PyTorch has no derivative of unique's values"
       for n in ("Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")},
    "inplace.CopySlices": "a write through a view",
    "inplace.AsStridedBackward0": "a write through a view",
    "products.CdistBackward0": "_cdist_forward has no forward rule in PyTorch",
    "products.CdistBackwardBackward0": "_cdist_backward has no derivative in PyTorch",
}
# Samples whose forward mode is PyTorch's error (an operation it has no forward rule for): both libraries raise
NO_TANGENT = {"cdist": "_cdist_forward"}
# The nodes whose forward rule is the double-vjp, named in their spec where it is right
DOUBLE_VJP = {"reductions.ProdOthersBackward", "losses.BinaryCrossEntropyBackwardBackward0",
              "scatter_reduce.ScatterReduceBackward0",  # its gradient's transpose (PyTorch's rule is wrong for prod)
              # the three-output create_graph nodes of the normalizations: their own formulas' transpose
              "batch_norm.NativeBatchNormBackwardBackward0", "normalization.NativeLayerNormBackwardBackward0"}
# Nodes no sample reaches: the in-place ones are checked against PyTorch by IN_PLACE below; and why not the others
NOT_SAMPLED = {
    "arithmetic.NotImplemented_", "inplace.CopySlices", "inplace.AsStridedBackward0", "inplace.IndexBackward0",
    "inplace._PutBackward", "inplace.FillBackward2", "inplace.FillBackward3", "inplace.ZeroBackward0",
    "inplace.CopyBackwards", "indexing.CopySlices", "indexing.IndexPutBackward0", "reductions.ProdOthersBackward",
    "activations.LeakyReluBackward1", "activations.EluBackward1",
}
UNCHECKED = {
    "scatter_reduce.ScatterReduceDoubleBackwardError": "PyTorch's Error node of a 'prod' gradient where two zeros "
    "meet, which has no derivative (tests/engine/test_ops_selection.py checks it against PyTorch's)",
    **{f"counting.{n}": "unique's values, which PyTorch records without a derivative: no sample's backward can "
       "pass through them (tests/engine/test_ops_counting.py checks their names and errors against PyTorch's)"
       for n in ("Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")},
    "reductions.ProdOthersBackward": "gradcalc's own node for the create_graph gradient of a product over zeros, "
    "which PyTorch computes otherwise (its values: test_ops_reductions.py)",
}
# Saved values PyTorch keeps that gradcalc's formulas need not: (node name, saved name)
NOT_KEPT = {
    ("PowBackward1", "result"),
    *(("MmBackward0", n) for n in ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
    *(("AddmmBackward0", n) for n in ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")),
}
# Saved values whose value differs by design: every dim PyTorch keeps as given, a negative dim or an open slice
# end, which it shows as its int64 read back unsigned (2**64 - 1 for -1, 2**63 - 1 for "to the end"), where
# gradcalc keeps the dims it resolved (`_given`)
DIFFERENT_VALUE: set[tuple[str, str]] = set()
# Saved values that differ in one sample's graph, (sample, node, saved name): why
DIFFERENT_IN = {
    ("remainder", "MulBackward0", "self"): "the divisor's gradient -grad * (self // other): gradcalc detaches the "
    "floor division, so the product saves no factor for it; PyTorch keeps an edge to it",
    ("fmod", "MulBackward0", "self"): "the divisor's gradient -grad * trunc(self / other): as remainder's",
    ("diff", "SliceBackwardBackward0", "start"): "the two slices' gradients are added in the other order",
    ("diff", "SliceBackwardBackward0", "end"): "the two slices' gradients are added in the other order",
    **{(name, "SliceBackwardBackward0", saved): "the sample points' gradient: the two slices' (x[1:] - x[:-1]) are "
       "added in the other order" for name in ("trapezoid", "cumulative_trapezoid") for saved in ("start", "end")},
    ("masked_fill", "SumBackward0", "self_sym_sizes"): "the value's gradient: gradcalc sums the gradient with the "
    "places the mask does not hold zeroed (the input's shape), PyTorch the masked_select of it (one dim)",
}
# Where a graph part from PyTorch's, (sample, graph) -> the first nodes that differ, (gradcalc's, PyTorch's): the
# graphs a create_graph gradient records are PyTorch's in their node names up to these (then the walk stops there)
DIVERGE: dict[tuple[str, int], set[tuple[str, str]]] = {
    # PyTorch's reshape of a tensor it cannot view in place records _reshape_alias; gradcalc a view
    ("amin", 1): {("ViewBackward0", "ReshapeAliasBackward0")},
    ("matmul", 0): {("ViewBackward0", "ReshapeAliasBackward0")},
    ("matmul", 2): {("ViewBackward0", "ReshapeAliasBackward0")},
    ("einsum", 2): {("ViewBackward0", "ReshapeAliasBackward0")},  # (a view's gradient, reshaped back)
    ("einsum", 3): {("ViewBackward0", "ReshapeAliasBackward0")},
    ("matmul", 1): {("ViewBackward0", "ReshapeAliasBackward0"), ("ViewBackward0", "TransposeBackward0"),
                    ("TransposeBackward0", "ViewBackward0")},
    # the target's gradient: PyTorch's logit(self) and log_sigmoid, gradcalc's log(self) - log1p(-self), -softplus(-x)
    ("binary_cross_entropy", 2): {("SubBackward0", "LogitBackward0")},
    ("binary_cross_entropy_with_logits", 2): {("NegBackward0", "LogSigmoidBackward0")},
    # gradients put back with gradcalc's advanced indexing where PyTorch has diagonal, scatter, index_select
    ("diag", 1): {("IndexBackward0", "DiagonalBackward0"), ("IndexPutImplBackward0", "DiagonalBackwardBackward0")},
    ("index_add", 2): {("IndexBackward0", "ExpandBackward0")},
    ("max", 1): {("WhereBackward0", "ScatterBackward0")},
    ("min", 1): {("WhereBackward0", "ScatterBackward0")},
    # median, kthvalue and mode along a dim: max's node (value_selecting_reduction_backward), as max's above
    ("median", 1): {("WhereBackward0", "ScatterBackward0")},
    ("kthvalue", 1): {("WhereBackward0", "ScatterBackward0")},
    ("mode", 1): {("WhereBackward0", "ScatterBackward0")},
    ("aminmax", 1): {("ViewBackward0", "ReshapeAliasBackward0")},  # restore_reduced_dims' reshape, as matmul's
    # quantile of a 1-D q: PyTorch unsqueezes and transposes its result in place (UnsqueezeBackward1,
    # TransposeBackward1), gradcalc out of place
    ("quantile", 0): {("TransposeBackward0", "TransposeBackward1")},
    ("quantile", 1): {("IndexPutImplBackward0", "ScatterBackward0")},  # their gradients: sort's (("sort", 1))
    ("nanquantile", 1): {("IndexPutImplBackward0", "ScatterBackward0")},
    ("sort", 1): {("IndexPutImplBackward0", "ScatterBackward0")},
    ("topk", 1): {("IndexPutImplBackward0", "ScatterBackward0")},
    ("take", 1): {("IndexPutImplBackward0", "PutBackward0")},
    ("masked_fill", 2): {("MaskedFillBackward0", "MaskedSelectBackward0")},  # see DIFFERENT_IN
    ("masked_select", 1): {("IndexPutImplBackward0", "MaskedScatterBackward0")},
    # the gradients of cartesian_prod's columns reach the vectors through meshgrid's views (see meshgrid's)
    ("cartesian_prod", 1): {("ViewBackward0", "SliceBackwardBackward0"), ("SliceBackwardBackward0", "ViewBackward0"),
                            ("ViewBackward0", "ReshapeAliasBackward0")},
    ("cartesian_prod", 2): {("ViewBackward0", "ReshapeAliasBackward0")},
    # trapezoid's gradient of y: the sum's and the two ends' parts are added in the other order
    ("trapezoid", 1): {("ExpandBackward0", "SelectBackwardBackward0"), ("SelectBackwardBackward0", "ExpandBackward0")},
    ("trapz", 1): {("ExpandBackward0", "SelectBackwardBackward0"), ("SelectBackwardBackward0", "ExpandBackward0")},
    # the sample points' gradient: the two slices' parts added in the other order (see DIFFERENT_IN)
    ("trapezoid", 2): {("SumBackward1", "NegBackward0"), ("NegBackward0", "SumBackward1")},
    ("cumulative_trapezoid", 2): {("SumBackward1", "NegBackward0"), ("NegBackward0", "SumBackward1")},
    # a number's 1 x 1 block of block_diag's gradient: PyTorch's engine squeezes it, gradcalc's formula slices first
    ("block_diag", 2): {("SliceBackward0", "SqueezeBackward1")},
    # cumprod's gradient where the input holds a zero: gradcalc's products without each element, PyTorch's in-place
    # copies into slices
    ("cumprod", 1): {("PermuteBackward0", "CopySlices")},
    ("trace", 1): {("IndexPutImplBackward0", "ViewBackward0")},  # PyTorch's index_fill of a flattened view
    ("repeat_interleave", 1): {("ViewBackward0", "ReshapeAliasBackward0")},
    # the two slices' gradients of diff are added in the other order (see DIFFERENT_IN), so the graphs above differ
    ("diff", 1): {(a, b) for x in ("ExpandBackward0", "MulBackward0", "AddBackward0")
                  for a, b in ((x, "NegBackward0"), ("NegBackward0", x))},
    # the gradients of meshgrid's grids reach the vectors' slices in another order (their sum is the same)
    ("meshgrid", 1): {("SliceBackwardBackward0", "ViewBackward0"), ("ViewBackward0", "SliceBackwardBackward0")},
    ("remainder", 2): {("None", "DivBackward2")},  # see DIFFERENT_IN
    ("fmod", 2): {("None", "DivBackward2")},  # see DIFFERENT_IN
    # det's gradient: gradcalc multiplies by the inverse, PyTorch solves with the saved LU (linalg_solve)
    ("det", 1): {("MulBackward0", "LinalgSolveExBackward0")},
    ("det", 2): {("MulBackward0", "LinalgSolveExBackward0")},
    ("inverse", 2): {("ViewBackward0", "ReshapeAliasBackward0")},  # as matmul's
    **{(name, i): {("ViewBackward0", "ReshapeAliasBackward0")}  # as matmul's
       for name, i in (("inner", 0), ("inner", 1), ("inner", 2), ("linalg_multi_dot", 1), ("linalg_multi_dot", 2),
                       ("matrix_power", 2))},
    # the inverse's gradient: PyTorch's LAPACK result is column-major, so its mm's gradient is a transposed product
    ("matrix_power", 1): {("MmBackward0", "TBackward0")},
    ("logdet", 0): {("ViewBackward0", "ReshapeAliasBackward0")},  # (the gradient's broadcast, as matmul's)
    # slogdet's gradient: A^-H solved against gradcalc's diagonal_backward where PyTorch has diag_embed
    ("slogdet", 1): {("DiagonalBackwardBackward0", "TransposeBackward0")},
    ("linalg_slogdet", 1): {("DiagonalBackwardBackward0", "TransposeBackward0")},
    ("linalg_slogdet", 2): {("DiagonalBackwardBackward0", "TransposeBackward0")},
    ("logdet", 1): {("DiagonalBackwardBackward0", "TransposeBackward0")},
    ("logdet", 2): {("ViewBackward0", "TransposeBackward0"), ("TransposeBackward0", "ViewBackward0")},
    # cholesky's gradient: gradcalc masks phi's triangle with a product, PyTorch writes it in place (tril_, mul_)
    ("linalg_cholesky", 1): {("MulBackward1", "LinalgSolveTriangularBackward0")},
    # tensor ** tensor: PyTorch's where() for a zero exponent masks with a constant that needs no edge
    ("pow", 1): {("MulBackward0", "None")},
}


def _name(node: Any) -> str:
    return node.name().rsplit("::", 1)[-1]  # PyTorch's `torch::autograd::AccumulateGrad`


def _key(cls: type) -> str:
    return f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"


def node_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    stack = [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        custom = issubclass(cls, BackwardCFunction) and cls is not BackwardCFunction  # a user's Function's
        if cls is not Node and cls.__module__.startswith("gradcalc.") and not custom:
            found[_key(cls)] = cls
    return found


# -- the node classes' specs ------------------------------------------------------------------------------------
def test_every_node_class_has_its_own_spec() -> None:
    missing, stale = [], sorted(set(ENGINE_NODES) - set(node_classes()))
    for key, cls in node_classes().items():
        if key in ENGINE_NODES or cls in spec.BASES:
            continue
        own = cls.__dict__.get("spec")
        if not isinstance(own, spec.NodeSpec) or own.node is not cls or spec.NODES.get(cls) is not own:
            missing.append(key)
    assert not missing, f"node classes without a spec of their own: {missing}"
    assert not stale, f"listed engine nodes that are gone: {stale}"


def test_every_spec_has_a_formula_for_each_input() -> None:
    for cls, s in spec.NODES.items():
        assert s.formula and all(name.isidentifier() for name in s.formula), cls
        assert all(isinstance(text, str) and text.strip() for text in s.formula.values()), cls
        assert s.formula_text() and cls.__name__ in repr(s)


def test_the_nodes_without_a_forward_rule_are_decisions() -> None:
    without = {_key(cls): s.no_jvp for cls, s in spec.NODES.items() if s.jvp is None}
    assert set(without) == set(NO_FORWARD_RULE)
    for key, reason in without.items():
        assert reason and NO_FORWARD_RULE[key] in reason, key
    named = {_key(cls) for cls, s in spec.NODES.items() if s.jvp is forward_ad.double_vjp}
    assert named == DOUBLE_VJP
    # and a tangent through one is PyTorch's error, never a silent fallback
    with forward_ad.dual_level():
        x = forward_ad.make_dual(gc.tensor([1.5, 2.5]), gc.tensor([1.0, 1.0]))
        y = x // 2.0
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with NotImplemented"):
            forward_ad.unpack_dual(y)


def test_class_attributes_come_from_the_spec() -> None:
    for cls, s in spec.NODES.items():
        assert cls.saved_names is s.saved and cls.jvp_rule is s.jvp
        assert cls.batchable == (s.batched is not None)
        if s.batched is not None and s.batched is not spec.BROADCASTS:
            assert cls.apply_batched is s.batched


def test_every_operation_has_a_sample() -> None:
    # (those without a derivative: backward through their NotImplemented node is an error)
    assert {name for name, op in spec.OPS.items() if op.sample is None} == {"floor_divide", "heaviside"}


# -- the samples against PyTorch ----------------------------------------------------------------------------------
SAMPLED = sorted(name for name, op in spec.OPS.items() if op.sample is not None)


def _inputs(lib: Any, op: spec.OpSpec, seed: int, requires_grad: bool = True) -> list:
    rng = np.random.default_rng(seed)
    return [lib.tensor(op.sample.domain.draw(rng, s), requires_grad=requires_grad) for s in op.sample.shapes]


def _outputs(y: Any) -> list:
    return list(y) if isinstance(y, tuple) else [y]


def _np(t: Any) -> np.ndarray:
    # (force: PyTorch's zero gradients of sgn, a ZeroTensor, convert only so)
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _close(ours: Any, theirs: Any, what: str) -> None:
    a, b = (None if t is None else _np(t) for t in (ours, theirs))
    if a is None or b is None:  # a missing gradient or tangent is a zero one
        ref = a if a is not None else b
        if ref is not None:
            np.testing.assert_allclose(ref, 0.0, atol=ATOL, err_msg=what)
        return
    assert a.shape == b.shape, f"{what}: shape {a.shape} against {b.shape}"
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(b).max(initial=0))), err_msg=what)


@pytest.mark.parametrize("name", SAMPLED)
def test_backward_matches_torch(name: str) -> None:
    op = spec.OPS[name]
    got = []
    for lib in (gc, torch):
        xs = _inputs(lib, op, 1)
        ys = _outputs(op.sample.call(lib, *xs))
        rng = np.random.default_rng(2)
        total = sum((y * lib.tensor(rng.standard_normal(tuple(y.shape)))).sum() for y in ys)
        got.append(lib.autograd.grad(total, xs, allow_unused=True))
    for i, (o, t) in enumerate(zip(*got, strict=True)):
        _close(o, t, f"{name}: gradient of input {i}")


@pytest.mark.parametrize("name", SAMPLED)
def test_forward_rule_matches_torch_func_jvp(name: str) -> None:
    op = spec.OPS[name]
    got = []
    if name in NO_TANGENT:
        for lib in (gc, torch):
            xs, ts = _inputs(lib, op, 3, False), _inputs(lib, op, 4, False)
            why = f"forward AD with ({NO_TANGENT[name]}|Cdist)"
            with pytest.raises((NotImplementedError, RuntimeError), match=why):
                lib.func.jvp(lambda *a, lib=lib: op.sample.call(lib, *a), tuple(xs), tuple(ts))
        return
    for lib in (gc, torch):
        xs, ts = _inputs(lib, op, 3, False), _inputs(lib, op, 4, False)
        _, tangent = lib.func.jvp(lambda *a, lib=lib: op.sample.call(lib, *a), tuple(xs), tuple(ts))
        got.append(_outputs(tangent))
    assert len(got[0]) == len(got[1])
    for i, (o, t) in enumerate(zip(*got, strict=True)):
        _close(o, t, f"{name}: tangent of output {i}")


def _names(node: Any) -> set[str]:
    return {n[len("_saved_"):] for n in dir(node) if n.startswith("_saved_")}


def _value(v: Any) -> Any:
    if isinstance(v, (torch.Tensor, gc.Tensor)):
        d = _np(v)
        # (NaN as a string: saved values with NaN, nan_to_num's input, compare equal)
        values = (d if d.dtype == bool else np.round(d, 9)).tolist() if d.dtype == bool or not np.isnan(d).any() \
            else np.where(np.isnan(d), "nan", np.round(d, 9).astype(str)).tolist()
        return ("tensor", d.shape, values)
    if isinstance(v, tuple):
        return tuple(_value(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


REACHED: set[str] = set()  # the node classes compared with PyTorch's
WALKED: set[str] = set()  # the programs whose graphs were compared


def _given(v: Any) -> bool:
    """Whether PyTorch shows a value as the user gave it where gradcalc resolved it (see DIFFERENT_VALUE)."""
    if isinstance(v, tuple):
        return any(_given(x) for x in v)
    return isinstance(v, int) and v >= 2**63 - 1


def _compare_graphs(ours: Any, theirs: Any, where: str, sample: str = "") -> set[tuple[str, str]]:
    """Walk both graphs side by side from their roots: where the node names agree, the same saved names and
    values, and the same number of edges; returns where the names part, (gradcalc's, PyTorch's), not walked on."""
    pairs, seen, parted = [(ours, theirs)], set(), set()
    while pairs:
        o, t = pairs.pop()
        if o is None or t is None:
            if o is not None or t is not None:
                parted.add((o.name() if o is not None else "None", _name(t) if t is not None else "None"))
            continue
        if id(o) in seen:
            continue
        seen.add(id(o))
        name = _name(t)
        if o.name() != name:
            parted.add((o.name(), name))
            continue
        REACHED.add(_key(type(o)))
        if name != "AccumulateGrad":
            expected = _names(t) - {n for k, n in NOT_KEPT if k == name}
            assert _names(o) == expected, f"{where}: {name} saves {sorted(_names(o))}, PyTorch {sorted(expected)}"
            exempt = {s for k, s in DIFFERENT_VALUE if k == name} | {s for a, k, s in DIFFERENT_IN if (a, k) == (
                sample, name)}
            for n in expected - exempt:
                ours, theirs = getattr(o, "_saved_" + n), getattr(t, "_saved_" + n)
                if not _given(theirs):
                    assert _value(ours) == _value(theirs), f"{where}: {name}._saved_{n} is {ours}, PyTorch's {theirs}"
        assert len(o.next_functions) == len(t.next_functions), f"{where}: {o.name()}'s edges"
        pairs.extend((a, b) for (a, _), (b, _) in zip(o.next_functions, t.next_functions, strict=True))
    return parted


@pytest.mark.parametrize("name", SAMPLED)
def test_saved_names_and_values_are_pytorchs(name: str) -> None:
    WALKED.add(name)
    op = spec.OPS[name]
    graphs = []
    for lib in (gc, torch):
        xs = _inputs(lib, op, 6)
        ys = _outputs(op.sample.call(lib, *xs))
        rng = np.random.default_rng(7)
        # squares: the gradient reaching each node depends on the inputs, so that create_graph records every
        # node's own backward nodes (TanhBackwardBackward0, ...)
        total = sum((y * y * lib.tensor(rng.standard_normal(tuple(y.shape)))).sum() for y in ys if y.requires_grad)
        grads = lib.autograd.grad(total, xs, create_graph=True, allow_unused=True)
        graphs.append([y.grad_fn for y in ys] + [None if g is None else g.grad_fn for g in grads])
    for i, (o, t) in enumerate(zip(*graphs, strict=True)):
        assert _compare_graphs(o, t, f"{name} graph {i}", name) == DIVERGE.get((name, i), set()), (name, i)


def _written(lib: Any, a: Any, index: Any, value: Any) -> Any:
    y = a * 1.0
    y[index] = value
    return y


def _through_view(lib: Any, a: Any) -> Any:
    y = a * 1.0
    y[0].mul_(2.0)
    return y


def _view_after(lib: Any, a: Any) -> Any:
    y = a * 1.0
    v = y[:, 1]
    y.mul_(2.0)
    return v


def _view_after_twice(lib: Any, a: Any) -> Any:
    """The create_graph gradient of a view written through: CopySlices' own backward nodes."""
    y = a * 1.0
    y[0].mul_(a[1])
    (g,) = lib.autograd.grad((y * y).sum(), a, create_graph=True)
    return g


# The in-place nodes, made by in-place changes in both libraries: (program, where its gradient graph starts)
IN_PLACE = {
    "fill_": lambda L, a: (a * 1.0).fill_(2.0),
    "fill_ tensor": lambda L, a: (a * 1.0).fill_(L.tensor(2.0)),
    "zero_": lambda L, a: (a * 1.0).zero_(),
    "copy_": lambda L, a: (a * 1.0).copy_(a[0] * 2.0),
    "x[i] = v": lambda L, a: _written(L, a, (slice(0, 1),), a[1:2] * 3.0),
    "x[mask] = v": lambda L, a: _written(L, a, a[:, 0] > 0.5, a[0] * 3.0),
    "view written through": _through_view,
    "view after its base changed": _view_after,
    "view written through, create_graph": _view_after_twice,
    "floor_divide": lambda L, a: a // 0.3,
    "leaky_relu_": lambda L, a: L.nn.functional.leaky_relu_(a * 1.0, 0.2),
    "elu_": lambda L, a: L.nn.functional.elu_(a * 1.0, 1.5),
    "selu_": lambda L, a: L.nn.functional.selu_(a * 1.0),
}
# gradcalc's CopySlices has an edge to the graph of the values written (the view's change, recorded out of place),
# where PyTorch's holds that operation inside itself
IN_PLACE_DIVERGE = {
    "view written through": {("MulBackward0", "None")},
    # and its gradient: gradcalc takes and puts back the view's elements, PyTorch clones and writes through
    "view written through, create_graph": {("SelectBackward0", "CloneBackward0"), ("IndexBackward0", "CloneBackward0"),
                                           ("AddBackward0", "CopySlices")},
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_nodes_save_pytorchs_names(name: str) -> None:
    WALKED.add(name)
    roots = []
    for lib in (gc, torch):
        a = lib.tensor([[0.25, 0.75], [0.6, 0.2]], requires_grad=True)
        roots.append(IN_PLACE[name](lib, a).grad_fn)
    assert _compare_graphs(*roots, name, name) == IN_PLACE_DIVERGE.get(name, set())


def test_the_take_and_put_of_a_write_through_a_view_save_pytorchs_names() -> None:
    """The nodes of that gradient (gradcalc's own formula) against PyTorch's nodes of the same names."""
    from gradcalc.autograd.ops import inplace

    x = gc.tensor([[0.25, 0.75], [0.6, 0.2]], requires_grad=True)
    index = (np.array([0, 1]), np.array([1, 0]))
    taken = inplace.take(x, index)
    put = inplace.put(taken, index, (2, 2))
    t = torch.tensor([[0.25, 0.75], [0.6, 0.2]], requires_grad=True)
    theirs = {"IndexBackward0": t[[0, 1], [1, 0]].grad_fn,
              "IndexPutBackward0": _written(torch, t, t > 0.5, 1.0).grad_fn}
    for node in (taken.grad_fn, put.grad_fn):
        other = theirs[node.name()]
        assert _names(node) == _names(other), node.name()
        if node.name() == "IndexBackward0":
            assert _value(node._saved_indices) == _value(other._saved_indices)
        REACHED.add(_key(type(node)))


def test_every_node_class_is_reached_by_a_sample() -> None:
    for name in set(SAMPLED) - WALKED:  # (run alone, or with -k)
        test_saved_names_and_values_are_pytorchs(name)
    for name in set(IN_PLACE) - WALKED:
        test_in_place_nodes_save_pytorchs_names(name)
    test_the_take_and_put_of_a_write_through_a_view_save_pytorchs_names()
    expected = {key for key, cls in node_classes().items() if key not in ENGINE_NODES and cls not in spec.BASES}
    assert expected - REACHED == set(UNCHECKED), sorted(expected - REACHED)


def test_formula_of_a_node() -> None:
    """What a front end shows of a node: its formula per input, from the spec."""
    y = gc.tensor([1.0, 2.0], requires_grad=True) * gc.tensor([3.0, 4.0], requires_grad=True)
    assert spec.of(y.grad_fn).formula == {"self": "grad * other", "other": "grad * self"}
    assert spec.of((y.exp()).grad_fn).formula_text() == "self: grad * result"
    assert spec.of(gc.autograd.node.AccumulateGrad) is None

