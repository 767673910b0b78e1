"""Every backward formula gives the same gradients in both of its modes.

A node's `apply` runs on bare NumPy arrays in a plain `backward()` (nodes with `raw_ok`) and on recorded
tensors under `create_graph=True`. For every operation in the engine's own tables (ops.FUNCTIONS, the
`Tensor` methods and properties the ops modules install, the `unary` rows), each case below is run twice on
the same inputs: a plain `backward()`, and `autograd.grad(..., create_graph=True)`; the gradients must agree
(values to 1e-12, and which are None). The same is done one order up, on the create_graph gradients, which
brings in the nodes only a backward records (tanh's TanhBackwardBackward0, ...). Every formula is watched: a
`raw_ok` node must have been handed arrays in the plain backward and tensors under create_graph, and every
kind of node the engine defines must have run in both modes somewhere below.

An operation added to the tables without a recipe here, and not listed as not differentiable, fails
`test_every_operation_has_a_recipe`; a node kind no recipe reaches fails `test_every_node_kind_ran_in_both_modes`.
"""

from __future__ import annotations

import functools
import importlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import ops, spec
from gradcalc.autograd.node import Node
from gradcalc.autograd.ops.unary import ROWS
from gradcalc.autograd.tensor import Tensor

UNARY = [name for name, row in ROWS.items() if row.public]

# backward(create_graph=True) warns of the leaf/.grad cycle it makes, as PyTorch does; here that is wanted
pytestmark = pytest.mark.filterwarnings("ignore:backward with create_graph:UserWarning")


# -- the engine's tables ----------------------------------------------------------------------------------
def engine_operations() -> dict[str, tuple[str, ...]]:
    """Each operation name, with how it is reached: "function" (gradcalc.<name>), "method", "property"."""
    kinds: dict[str, list[str]] = {}
    for name in ops.FUNCTIONS:
        kinds.setdefault(name, []).append("function")
    for name in UNARY:
        kinds.setdefault(name, [])
    for op in spec.OPS.values():  # every operation's names, as its spec installs them
        for name in op.names:
            if op.method:
                kinds.setdefault(name, []).append("method")
        if op.inplace:
            kinds.setdefault(f"{op.name}_", []).append("method")
    deferred = (importlib.import_module(f"{ops.__name__}.{m}") for m in ops.lazy.DEFERRED)  # (their tables too)
    for module in (*ops.MODULES, *deferred):
        for name in getattr(module, "METHODS", {}):
            kinds.setdefault(name, []).append("method")
        for name in getattr(module, "PROPERTIES", {}):
            kinds.setdefault(name, []).append("property")
    return {name: tuple(dict.fromkeys(k)) for name, k in kinds.items()}


def node_classes() -> dict[str, type[Node]]:
    """Every node class the engine defines, by module and name (two modules may define classes of one
    PyTorch name)."""
    found: dict[str, type[Node]] = {}
    stack = [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("gradcalc."):
            found[f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"] = cls
    return found


def node_kinds() -> set[str]:
    """The node classes no other derives from: the kinds of node the engine makes (a base class with
    subclasses, such as UnaryNode, is reached through them)."""
    return {name for name, cls in node_classes().items() if not cls.__subclasses__()}


# -- recipes: the inputs and arguments of each operation -----------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One call: `inputs` are the differentiable arguments (a shape: random float64 values in [lo, hi]; an
    array: those values), each a leaf that requires grad; `args` and `kwargs` follow them. `call(op, *inputs)`
    replaces `op(*inputs, *args, **kwargs)` where the arguments are arranged otherwise. `inplace`: the op
    changes its first input, which is then `leaf * 1.0` rather than the leaf, and is the result."""

    inputs: tuple
    args: tuple = ()
    kwargs: tuple = ()  # (name, value) pairs
    lo: float = 0.2
    hi: float = 0.9
    call: Callable | None = None
    inplace: bool = False
    rtol: float = 1e-12
    raises: bool = False  # backward raises a RuntimeError (an operation with no derivative)


def C(*inputs: Any, args: tuple = (), lo: float = 0.2, hi: float = 0.9, call: Callable | None = None,
      inplace: bool = False, rtol: float = 1e-12, raises: bool = False, **kwargs: Any) -> Case:
    return Case(tuple(inputs), tuple(args), tuple(kwargs.items()), lo, hi, call, inplace, rtol, raises)


SHAPES = ((), (3,), (2, 3))


def unary(lo: float = 0.2, hi: float = 0.9, args: tuple = (), inplace: bool = False) -> list[Case]:
    return [C(s, lo=lo, hi=hi, args=args, inplace=inplace) for s in SHAPES]


def binary(number: float | None = 1.5, lo: float = 0.2, hi: float = 0.9, inplace: bool = False) -> list[Case]:
    """Same shapes, broadcasting both ways, a 0-d operand, and (unless None) a number operand."""
    pairs = [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2,)), ((2, 1), (1, 3))]
    if inplace:  # the result keeps the first operand's shape
        pairs = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), ()), ((), ())]
    cases = [C(a, b, lo=lo, hi=hi, inplace=inplace) for a, b in pairs]
    if number is not None:
        cases += [C((2, 3), args=(number,), lo=lo, hi=hi, inplace=inplace), C((), args=(number,), lo=lo, hi=hi,
                                                                            inplace=inplace)]
    return cases


def reduction(dims: bool = True) -> list[Case]:
    cases = [C((2, 3)), C(()), C((4,))]
    if dims:
        cases += [C((2, 3), args=(1,)), C((2, 3), args=(0, True)), C((2, 3, 2), args=((0, 2),)), C((), args=(0,))]
    return cases


def with_ties(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


TIES = with_ties([1.0, 2.0, 2.0], [3.0, 3.0, 0.5])
ZEROS = with_ties([0.5, 0.0, 2.0], [1.5, 0.0, 0.0])
PRODUCTS = [*reduction()[:5], C((), args=(0,)), C(ZEROS), C(ZEROS, args=(1,)), C(ZEROS[0]),
            C(ZEROS[0][:, None], args=(0,))]


def on_view(f: Callable, x: Tensor, *rest: Tensor) -> Tensor:
    """`f` applied in place to a view of `x` (a row): the base's graph then runs through the write."""
    base = x * 1.0
    f(base[0], *rest)
    return base


def through_view(f: Callable, x: Tensor, *rest: Tensor) -> Tensor:
    """A view taken before an in-place change of its base: its graph is re-derived (AsStridedBackward0)."""
    base = x * 1.0
    view = base[1]
    f(base, *rest)
    return view * 1.0


CLAMPS = [C((2, 3), args=(0.3, 0.7)), C((2, 3), min=0.4), C((2, 3), max=0.5), C((2, 3), (2, 3), (3,)),
          C((3,), (3,), call=lambda f, x, lo: f(x, lo)), C((3,), (3,), call=lambda f, x, hi: f(x, None, hi))]
CATS = [C((2, 3), (1, 3), call=lambda f, a, b: f([a, b])), C((2, 3), (2, 1), call=lambda f, a, b: f([a, b], 1)),
        C((2,), (3,), call=lambda f, a, b: f((a, b), 0))]
MATMULS = [C((2, 3), (3, 4)), C((3,), (3,)), C((2, 3), (3,)), C((3,), (3, 4)), C((2, 2, 3), (3, 4)),
           C((2, 2, 3), (2, 3, 4)), C((1, 2, 3), (2, 3, 2))]
SPLITS = [C((5, 2), args=(2,)), C((5, 2), args=([2, 3],)), C((2, 5), args=(2, 1)), C((2, 5), args=([1, 4], 1))]
TRANSPOSES = [C((2, 3, 4), args=(0, 2)), C((2, 3), args=(1, 0)), C((3,), args=(0, 0))]
NORMS = [C((2, 3)), C((2, 3), args=(2, 1)), C((3,), args=(1,)), C((2, 3), args=("fro",)),
         C((3,), args=(float("inf"),)), C((2, 3), args=(3, 0, True)), C((), args=(2,))]
STATISTICS = [C((2, 3)), C((2, 3), args=(1,)), C((2, 3), correction=0), C((2, 3), args=(0, False, True)),
              C((4,), unbiased=False)]
INDICES = [C((4, 3), args=(1,)), C((4, 3), args=(slice(1, 3),)), C((4, 3), args=((Ellipsis, 0),)),
           C((4, 3), args=(np.array([0, 2, 2]),)), C((4, 3), args=(np.array([True, False, True, False]),)),
           C((4, 3), args=((slice(None), [0, 0, 2]),)), C((4, 3), args=((None, 1),)), C((), args=((),))]
SETS = [C((4, 3), (3,), call=lambda f, x, v: f(x, 1, v), inplace=True),
        C((4, 3), (2, 3), call=lambda f, x, v: f(x, slice(0, 2), v), inplace=True),
        C((4, 3), call=lambda f, x: f(x, (0, 1), 0.5), inplace=True),
        C((4, 3), (2, 3), call=lambda f, x, v: f(x, np.array([0, 2]), v), inplace=True),
        C((4, 3), (), call=lambda f, x, v: f(x, np.array([True, False, True, False]), v), inplace=True)]

def _index(*values: Any) -> Tensor:
    return gradcalc.tensor(np.array(values, dtype=np.int64))


def _moving_recipes() -> dict[str, list[Case]]:
    """gather, scatter, the rearrangements and the running sums and products (ops/scatter.py, rearrange.py,
    cumulative.py, reorder.py's topk)."""
    gather = [C((3, 4), call=lambda f, x: f(x, 1, _index([0, 3, 0], [2, 2, 1], [1, 1, 1]))),
              C((3,), call=lambda f, x: f(x, 0, _index(2, 2, 0, 1)))]
    scatters = [C((3, 4), (2, 3), call=lambda f, x, s: f(x, 1, _index([0, 3, 1], [2, 0, 1]), s)),
                C((3,), (2,), call=lambda f, x, s: f(x, 0, _index(2, 0), s))]
    adds = [C((3, 4), (2, 3), call=lambda f, x, s: f(x, 1, _index([0, 3, 0], [2, 2, 1]), s)),
            C((3,), (4,), call=lambda f, x, s: f(x, 0, _index(2, 2, 0, 2), s))]
    fills = [C((2, 3), call=lambda f, x: f(x, x > 0.5, 0.25)), C((2, 3), (), call=lambda f, x, v: f(x, x > 0.5, v)),
             C((3,), (), call=lambda f, x, v: f(x, gradcalc.tensor([[True, False, True], [False, False, True]]), v))]
    cumulative = [C((2, 3), args=(1,)), C((2, 3), args=(0,)), C((), args=(0,)), C((4,), args=(-1,))]
    products = cumulative + [C(ZEROS, args=(1,)), C(ZEROS, args=(0,)), C(ZEROS[0], args=(0,))]
    return {
        "gather": gather,
        "scatter": scatters + [C((3, 4), call=lambda f, x: f(x, 1, _index([0], [2]), 1.5))],
        "scatter_": [C((3, 4), (2, 3), call=lambda f, x, s: f(x, 1, _index([0, 3, 1], [2, 0, 1]), s), inplace=True)],
        "scatter_add": adds,
        "scatter_add_": [C((3,), (4,), call=lambda f, x, s: f(x, 0, _index(2, 2, 0, 2), s), inplace=True)],
        "index_select": [C((3, 4), call=lambda f, x: f(x, 0, _index(2, 0, 2))),
                         C((3, 4), call=lambda f, x: f(x, -1, _index(3, 3))),
                         C((), call=lambda f, x: f(x, 0, _index(0)))],
        "take": [C((3, 4), call=lambda f, x: f(x, _index([0, 11], [5, -1]))),
                 C((), call=lambda f, x: f(x, _index(0, 0)))],
        "masked_fill": fills,
        "masked_fill_": [C((2, 3), (), call=lambda f, x, v: f(x, x > 0.5, v), inplace=True)],
        "flip": [C((2, 3), args=((0,),)), C((2, 3), args=((0, -1),)), C((), args=((),))],
        "fliplr": [C((2, 3))], "flipud": [C((2, 3)), C((3,))],
        "roll": [C((2, 3), args=(1,)), C((2, 3), args=((1, -2), (0, 1))), C((3,), args=(-4, 0))],
        "repeat": [C((2, 3), args=(2, 1, 3)), C((2, 3), args=(1, 1)), C((), args=(3,)), C((2, 3), args=(0, 1))],
        "tile": [C((2, 3), args=((2,),)), C((2, 3), args=((2, 1, 1),))],
        "repeat_interleave": [C((2, 3), args=(2,)), C((2, 3), args=(3,), dim=0),
                              C((2, 3), call=lambda f, x: f(x, _index(1, 0, 2), dim=1))],
        "tril": [C((3, 4)), C((3, 4), args=(-1,)), C((2, 3, 3), args=(1,))],
        "triu": [C((3, 4)), C((3, 4), args=(1,)), C((2, 3, 3), args=(-1,))],
        "tril_": [C((3, 4), args=(-1,), inplace=True)], "triu_": [C((3, 4), args=(1,), inplace=True)],
        "trace": [C((3, 4)), C((3, 3))],
        "broadcast_to": [C((3, 1), args=((2, 3, 4),)), C((), args=((2,),))],
        "hstack": [C((2, 3), (2, 1), call=lambda f, a, b: f([a, b])), C((3,), (), call=lambda f, a, b: f((a, b)))],
        "vstack": [C((2, 3), (3,), call=lambda f, a, b: f([a, b]))],
        "meshgrid": [C((3,), (2,), call=lambda f, a, b: f(a, b, indexing="ij")[0] * f(a, b, indexing="ij")[1]),
                     C((3,), (2,), call=lambda f, a, b: f([a, b], indexing="xy")[1])],
        "cumsum": cumulative, "cumsum_": [C((2, 3), args=(1,), inplace=True)],
        "cumprod": products, "cumprod_": [C((2, 3), args=(0,), inplace=True), C(ZEROS, args=(1,), inplace=True)],
        "diff": [C((2, 4)), C((2, 4), args=(2, 0)), C((3,), (2,), call=lambda f, x, p: f(x, prepend=p, append=p))],
        "topk": [C((3, 4), args=(2,)), C((3, 4), args=(2, 0, False)), C((), args=(1,))],
        **_selection_recipes(),
    }


def _selection_recipes() -> dict[str, list[Case]]:
    """ops/selection.py, scatter_reduce.py, blocks.py and integrals.py."""
    reduce_index = _index([0, 3, 0], [2, 2, 1])
    reduces = [C((3, 4), (2, 3), call=lambda f, x, s, r=r, i=i: f(x, 1, reduce_index, s, r, include_self=i))
               for r in ("sum", "prod", "mean", "amax", "amin") for i in (True, False)]
    reduces.append(C(ZEROS, (1, 3), call=lambda f, x, s: f(x, 0, _index([1, 0, 1]), s, "prod")))
    return {
        "masked_select": [C((2, 3), call=lambda f, x: f(x, x > 0.5)),
                          C((3,), call=lambda f, x: f(x, gradcalc.tensor([[True, False, True], [False, True, True]])))],
        "take_along_dim": [C((3, 4), call=lambda f, x: f(x, _index([0, 3], [2, 2], [1, 0]), 1)),
                           C((3, 4), call=lambda f, x: f(x, _index([2, 0, 0, 1]), dim=-2)),
                           C((3, 4), call=lambda f, x: f(x, _index(11, 0, 0)))],
        "index_put": [C((3, 4), (2, 4), call=lambda f, x, v: f(x, (_index(2, 0),), v)),
                      C((3, 4), (2,), call=lambda f, x, v: f(x, (_index(1, 1), _index(0, 0)), v, accumulate=True)),
                      C((3, 4), (), call=lambda f, x, v: f(x, (x > 0.5,), v))],
        "index_put_": [C((3, 4), (2,), call=lambda f, x, v: f(x, (_index(1, 1), _index(3, 3)), v, True),
                         inplace=True)],
        "put": [C((3, 4), (3,), call=lambda f, x, s: f(x, _index(0, 11, 5), s)),
                C((3, 4), (3,), call=lambda f, x, s: f(x, _index(1, 1, -1), s, accumulate=True))],
        "put_": [C((3, 4), (3,), call=lambda f, x, s: f(x, _index(4, 4, 2), s, accumulate=True), inplace=True)],
        "scatter_reduce": reduces,
        "scatter_reduce_": [C((3, 4), (2, 3), call=lambda f, x, s: f(x, 1, reduce_index, s, "amax"), inplace=True)],
        "unflatten": [C((3, 4), args=(1, (2, 2))), C((4,), args=(0, (-1, 2)))],
        "rot90": [C((3, 4)), C((2, 3, 4), args=(-1, (2, 0))), C((3, 4), args=(2, (1, 0)))],
        "block_diag": [C((2, 3), (3,), (), call=lambda f, a, b, c: f(a, b, c))],
        "cartesian_prod": [C((3,), (2,), call=lambda f, a, b: f(a, b)), C((3,), call=lambda f, a: f(a))],
        "vander": [C((3,)), C((3,), args=(4, True))],
        "trapezoid": [C((3, 4)), C((3, 4), (4,), call=lambda f, y, x: f(y, x)), C((3, 4), dx=0.5, dim=0)],
        "trapz": [C((3, 4)), C((3, 4), (3, 1), call=lambda f, y, x: f(y, x, dim=0))],
        "cumulative_trapezoid": [C((3, 4)), C((3, 4), (4,), call=lambda f, y, x: f(y, x)),
                                 C((3, 4), dx=2.0, dim=0)],
    }


RECIPES: dict[str, list[Case]] = {
    # elementwise: every row of UNARY on a domain where all are defined, the signed ones on both signs
    **{name: unary() for name in UNARY},
    **{name: unary(-0.9, 0.9) for name in ("abs", "__abs__", "sign", "relu", "sin", "tanh", "atan", "erf",
                                           "sigmoid", "neg", "__neg__", "__pos__")},
    "softplus": [*unary(-2.0, 2.0), C((3,), args=(2.0, 1.0), lo=-2.0, hi=2.0)],
    "selu": unary(-2.0, 2.0),
    "clamp": CLAMPS, "clip": CLAMPS,
    "clamp_min": [C((2, 3), args=(0.5,)), C((2, 3), (3,)), C((), args=(0.5,))],
    "clamp_max": [C((2, 3), args=(0.5,)), C((2, 3), (3,)), C((), args=(0.5,))],
    "maximum": binary(None) + [C(TIES, TIES[::-1].copy())], "minimum": binary(None) + [C(TIES, TIES[::-1].copy())],
    "where": [C((2, 3), (2, 3), call=lambda f, x, y: f(x > 0.5, x, y)),
              C((2, 3), (3,), call=lambda f, x, y: f(y > 0.5, x, y)),
              C((2, 3), call=lambda f, x: f(x > 0.5, x, 0.0)), C((2, 3), call=lambda f, x: f(x > 0.5, 1.0, x)),
              C((2, 3), (), call=lambda f, x, v: f(x > 0.5, v, x))],
    "Tensor.where": [C((2, 3), (2, 3), call=lambda f, x, y: f(x, x > 0.5, y)),
                     C((2, 3), call=lambda f, x: f(x, x > 0.5, 0.0))],
    # arithmetic
    **{name: binary() for name in ("add", "sub", "mul", "div", "__add__", "__sub__", "__mul__", "__truediv__",
                                   "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "remainder", "__mod__",
                                   "__rmod__")},
    # recorded, as PyTorch records them, but with no derivative: backward raises, in both modes alike
    **{name: [C((2, 3), (3,), raises=True), C((2, 3), args=(1.5,), raises=True)]
       for name in ("floor_divide", "__floordiv__", "__rfloordiv__")},
    "pow": [*binary(2.0), C((3,), args=(0.0,)), C((3,), args=(-0.5,)), C((3,), args=(3,))],
    "__pow__": binary(2.0), "__rpow__": binary(2.0),
    # reductions
    "sum": reduction(), "mean": reduction(), "prod": PRODUCTS,
    "amax": [*reduction(), C(TIES), C(TIES, args=(1,))], "amin": [*reduction(), C(TIES), C(TIES, args=(1,))],
    "max": [C((2, 3)), C(TIES), C((2, 3), args=(1,)), C(TIES, args=(1, True)),
            C((2, 3), (2, 3), call=lambda f, x, y: f(x, other=y))],
    "min": [C((2, 3)), C(TIES), C((2, 3), args=(1,)), C(TIES, args=(1, True)),
            C((2, 3), (2, 3), call=lambda f, x, y: f(x, other=y))],
    "logsumexp": [C((2, 3), args=(1,)), C((2, 3), args=((0, 1),)), C((2, 3), args=(0, True)), C((), args=(0,))],
    "softmax": [C((2, 3), args=(1,)), C((2, 3), args=(0,)), C((3,), args=(0,)), C((), args=(0,))],
    "log_softmax": [C((2, 3), args=(1,)), C((2, 3), args=(0,)), C((3,), args=(0,)), C((), args=(0,))],
    "norm": NORMS, "std": STATISTICS, "var": STATISTICS,
    # shapes
    "reshape": [C((2, 3), args=(3, 2)), C((2, 3), args=((6,),)), C((), args=(1,)), C((2, 3), args=(-1,))],
    "view": [C((2, 3), args=(3, 2)), C((2, 3), args=((6,),)), C((), args=(1,))],
    "reshape_as": [C((2, 3), (3, 2))], "view_as": [C((2, 3), (6,))], "expand_as": [C((3, 1), (3, 4))],
    "expand": [C((3, 1), args=(3, 4)), C((), args=(2,)), C((3,), args=(2, -1))],
    "flatten": [C((2, 3, 2)), C((2, 3, 2), args=(1,)), C(())],
    "narrow": [C((4, 3), args=(0, 1, 2)), C((4, 3), args=(1, 0, 1))],
    "permute": [C((2, 3, 4), args=(2, 0, 1)), C((2, 3), args=((1, 0),))],
    "select": [C((2, 3), args=(1, 2)), C((2, 3), args=(0, -1))],
    "split": SPLITS, "chunk": [C((5, 2), args=(2,)), C((2, 5), args=(3, 1))],
    "squeeze": [C((2, 1, 3)), C((2, 1, 3), args=(1,)), C((1,), args=(0,)), C((2, 1, 1), args=((1, 2),)),
                C((2, 3), args=(0,))],
    "swapaxes": TRANSPOSES, "swapdims": TRANSPOSES, "transpose": TRANSPOSES,
    "t": [C((2, 3)), C((3,)), C(())],
    "unbind": [C((2, 3)), C((2, 3), args=(1,))],
    "unsqueeze": [C((2, 3), args=(1,)), C((), args=(0,)), C((3,), args=(-1,))],
    "cat": CATS, "concat": CATS, "concatenate": CATS,
    "stack": [C((2, 3), (2, 3), call=lambda f, a, b: f([a, b])), C((3,), (3,), call=lambda f, a, b: f((a, b), 1))],
    "T": [C((2, 3))], "mT": [C((2, 3)), C((2, 3, 4))], "H": [C((2, 3))], "mH": [C((2, 3, 4))],
    # linear algebra
    "matmul": MATMULS, "__matmul__": MATMULS, "__rmatmul__": [C((3, 4), (2, 3)), C((3,), (3,))],
    "mm": [C((2, 3), (3, 4))], "bmm": [C((2, 2, 3), (2, 3, 4))], "mv": [C((2, 3), (3,))],
    "dot": [C((3,), (3,))], "outer": [C((3,), (4,))], "ger": [C((3,), (4,))],
    # indexing
    "__getitem__": INDICES, "__setitem__": SETS,
    # copies and conversions
    "clone": unary(), "contiguous": unary(), "double": unary(), "as_tensor": unary(), "square": unary(-0.9, 0.9),
    "type_as": [C((2, 3), call=lambda f, x: f(x, x.double()))],
    "float": [C((2, 3), rtol=1e-6)],
    "to": [C((2, 3), args=(gradcalc.float32,), rtol=1e-6), C((3,), args=(gradcalc.float64,))],
    "type": [C((2, 3), args=(gradcalc.float32,), rtol=1e-6)],
    # in place, on a non-leaf (and through views: CopySlices, AsStridedBackward0)
    **{name: binary(inplace=True) for name in ("add_", "sub_", "mul_", "div_", "__iadd__", "__isub__", "__imul__",
                                               "__itruediv__")},
    "pow_": binary(2.0, inplace=True), "__ipow__": binary(2.0, inplace=True),
    "exp_": unary(inplace=True), "relu_": unary(-0.9, 0.9, inplace=True), "sigmoid_": unary(inplace=True),
    "clamp_": [C((2, 3), args=(0.3, 0.7), inplace=True), C((2, 3), min=0.4, inplace=True)],
    "fill_": [C((2, 3), args=(0.5,), inplace=True), C((2, 3), (), inplace=True)],
    "zero_": unary(inplace=True),
    "copy_": [C((2, 3), (2, 3), inplace=True), C((2, 3), (3,), inplace=True), C((), (), inplace=True)],
}
# the in-place form of every elementwise row, on a non-leaf (the ones with a domain of their own on it)
RECIPES.update({f"{name}_": unary(inplace=True) for name in UNARY if f"{name}_" not in RECIPES})
RECIPES.update({f"{name}_": unary(-0.9, 0.9, inplace=True) for name in ("abs", "sign", "sin", "tanh", "atan", "erf")})
RECIPES.update({
    # ops/pointwise.py, ops/predicates.py, ops/inverses.py
    "addcmul": [C((2, 3), (3,), (2, 1), value=0.5), C((2, 3), (2, 3), (2, 3))],
    "addcdiv": [C((2, 3), (3,), (2, 1), value=-1.5, lo=0.5, hi=2.0), C((3,), (3,), (3,), lo=0.5, hi=2.0)],
    "lerp": [C((2, 3), (3,), args=(0.3,)), C((2, 3), (3,), (2, 1)), C((3,), (3,), args=(0.8,))],
    **{name: [C((2, 3), (3,)), C((3,), (3,)), C((), ())] for name in ("atan2", "arctan2", "hypot", "logaddexp")},
    "fmod": [C((2, 3), (3,), lo=0.5, hi=2.0), C((2, 3), args=(0.7,))],
    "heaviside": [C((2, 3), (3,), raises=True)],
    "nan_to_num": [C((2, 3)), C((2, 3), nan=1.0)],
    "det": [C((3, 3)), C((2, 3, 3))], "inverse": [C((3, 3)), C((2, 3, 3))],
    # products.py and decompositions.py
    "cross": [C((4, 3), (4, 3), dim=1)], "kron": [C((2, 3), (3, 2))], "tensordot": [C((2, 3, 4), (3, 4, 2))],
    "inner": [C((2, 3), (4, 3)), C((3,), (3,))], "dist": [C((2, 3), (3,)), C((4,), (4,), args=(3,))],
    "cdist": [C((4, 3), (5, 3)), C((4, 3), (5, 3), p=1.0)], "addmv": [C((2,), (2, 3), (3,), alpha=2.0)],
    "addr": [C((2, 3), (2,), (3,), beta=0.5)], "baddbmm": [C((2, 2, 4), (2, 2, 3), (2, 3, 4))],
    "addbmm": [C((2, 4), (3, 2, 3), (3, 3, 4))], "vdot": [C((4,), (4,))],
    "matrix_power": [C((3, 3), args=(3,)), C((3, 3), args=(5,))],
    "logdet": [C((3, 3), call=lambda f, a: f(a @ a.mT + 3.0 * gradcalc.eye(3))),
               C((3, 3), call=lambda f, a: gradcalc.linalg.cholesky(a @ a.mT + 3.0 * gradcalc.eye(3)))],
    "slogdet": [C((3, 3), call=lambda f, a: f(a + 3.0 * gradcalc.eye(3))[1]),
                C((3, 3), call=lambda f, a: gradcalc.linalg.solve(a + 3.0 * gradcalc.eye(3), a[0]))],
    "addcmul_": [C((2, 3), (3,), (2, 3), inplace=True)],
    "addcdiv_": [C((2, 3), (3,), (2, 3), inplace=True, lo=0.5, hi=2.0)],
    "lerp_": [C((2, 3), (3,), args=(0.3,), inplace=True)],
    **{f"{name}_": [C((2, 3), (3,), inplace=True, lo=0.5, hi=2.0)] for name in ("atan2", "hypot", "fmod")},
    "heaviside_": [C((2, 3), (3,), inplace=True, raises=True)],
    "nan_to_num_": [C((2, 3), inplace=True)],
    "diag": [C((3,)), C((3, 3)), C((3,), args=(1,)), C((3, 4), args=(-1,))],
    "movedim": [C((2, 3, 4), args=(0, 2)), C((2, 3, 4), args=((0, 1), (2, 0)))],
    "moveaxis": [C((2, 3, 4), args=(0, 2))],
    "sort": [C((2, 3)), C((2, 3), args=(0,)), C((4,), descending=True)],
    "index_add": [C((4, 3), (2, 3), call=lambda f, x, v: f(x, 0, gradcalc.tensor([0, 2]), v))],
    "index_add_": [C((4, 3), (2, 3), call=lambda f, x, v: f(x, 0, gradcalc.tensor([0, 2]), v), inplace=True)],
    "cpu": unary(),
    **_moving_recipes(),
    "addmm": [C((3,), (2, 4), (4, 3)), C((2, 3), (2, 4), (4, 3))],
    "binary_cross_entropy_with_logits": [
        C((4,), (4,), call=lambda f, a, t: f(a, t * 0.5)),
        C((2, 3), (2, 3), call=lambda f, a, t: f(a, t * 0.5, reduction="sum")),
    ],
    "layer_norm": [C((2, 3), args=([3],)), C((2, 3, 4), args=([3, 4],)),
                   C((2, 3), (3,), (3,), call=lambda f, x, w, b: f(x, [3], w, b)),
                   C((4, 2), (2,), call=lambda f, x, w: f(x, [2], w, eps=0.1))],
    "xlogy": [*binary(1.5), C((3,), call=lambda f, y: f(2.5, y))], "Tensor.xlogy": binary(1.5),
    "xlogy_": binary(1.5, inplace=True),
    "feature_dropout": [C((2, 3, 4), args=(1.0, True)), C((2, 3), args=(0.5, False))],
    "native_dropout": [C((2, 3), call=lambda f, x: f(x, 0.0, True)[0]), C((3,), call=lambda f, x: f(x, 0.4, False)[0]),
                       C((2, 2), call=lambda f, x: f(x, 1.0, True)[0])],
})
# convolution, pooling, padding and einsum (ops/conv.py, pooling.py, einsum.py; compared with PyTorch in
# test_conv.py, test_pooling.py, test_einsum.py): small inputs, so that second order stays quick
RECIPES.update({
    "conv1d": [C((1, 2, 5), (3, 2, 2)), C((2, 5), (3, 2, 2), (3,)), C((1, 2, 6), (2, 1, 3), stride=2, groups=2)],
    "conv2d": [C((1, 2, 4, 4), (3, 2, 2, 2)), C((1, 2, 3, 3), (2, 2, 2, 2), (2,), padding=1),
               C((1, 2, 5, 5), (2, 2, 3, 3), stride=2, dilation=1, padding="valid")],
    "conv_transpose1d": [C((1, 2, 4), (2, 3, 2)), C((1, 2, 3), (2, 1, 2), (1,), stride=2)],
    "conv_transpose2d": [C((1, 2, 3, 3), (2, 3, 2, 2)), C((1, 2, 2, 2), (2, 1, 2, 2), (1,), stride=2, padding=1)],
    "convolution": [C((1, 2, 4), (3, 2, 2), (3,), args=((1,), (0,), (1,), False, (0,), 1))],
    "constant_pad_nd": [C((2, 3), args=([1, 1],)), C((2, 3, 4), args=([1, 0, 2, 1], 0.5))],
    "max_pool1d": [C((1, 2, 6), args=(2,)), C((2, 5), args=(3,), stride=2, padding=1)],
    "max_pool2d": [C((1, 2, 4, 4), args=(2,)), C((2, 5, 5), args=(3,), stride=2, padding=1),
                   C(np.array([[[1.0, 1.0], [0.5, 1.0]]]), args=(2,))],
    "avg_pool1d": [C((1, 2, 6), args=(2,)), C((2, 5), args=(3,), stride=2, padding=1)],
    "adaptive_avg_pool1d": [C((1, 2, 6), args=(3,)), C((2, 5), args=(1,))],
    "diagonal": [C((3, 3)), C((3, 4), args=(1,)), C((2, 3, 4), args=(0, 0, 2))],
    "einsum": [C((2, 3), (3, 4), call=lambda f, a, b: f("ij,jk->ik", a, b)), C((3, 3), call=lambda f, a: f("ii->i", a)),
               C((2, 3), call=lambda f, a: f("ij->", a)), C((3,), (2,), call=lambda f, a, b: f("i,j->ij", a, b))],
})
# special functions (ops/special.py), statistics (ops/statistics.py), quantiles and running extremes
NANS = with_ties([0.5, np.nan, 2.0], [np.nan, 1.5, 0.3])
RECIPES.update({
    "logit": [*unary(0.2, 0.9), C((2, 3), args=(0.3,), lo=0.05, hi=0.95), C((3,), eps=1e-6)],
    "logit_": [C((2, 3), args=(0.3,), inplace=True), C((3,), inplace=True)],
    "polygamma": [C(s, call=lambda f, x, n=n: f(n, x + 0.5)) for s in SHAPES for n in (0, 1, 3)],
    "polygamma_": [C((2, 3), args=(1,), inplace=True), C((), args=(2,), inplace=True)],
    "Tensor.polygamma": [C((2, 3), args=(1,)), C((3,), args=(0,)), C((), args=(2,))],
    "copysign": [*binary(-1.5, lo=-0.9, hi=0.9)], "copysign_": binary(-1.5, lo=-0.9, hi=0.9, inplace=True),
    "float_power": [*binary(2.5), C((3,), call=lambda f, y: f(2.0, y))], "Tensor.float_power": binary(2.5),
    "float_power_": [C((2, 3), args=(2.0,), inplace=True), C((2, 3), (3,), inplace=True)],
    "true_divide": binary(), "true_divide_": binary(inplace=True),
    "nansum": [*reduction(), C(NANS), C(NANS, args=(1,))],
    "nanmean": [*reduction(), C(NANS), C(NANS, args=(0, True))],
    "median": [C((2, 3)), C(TIES), C((2, 3), args=(1,)), C(TIES, args=(1, True)), C((), args=(0,))],
    "kthvalue": [C((2, 3), args=(2,)), C(TIES, args=(2, 0)), C((), args=(1,))],
    "mode": [C(TIES), C(TIES, args=(0, True)), C((2, 3))],
    "aminmax": [C((2, 3)), C(TIES), C(TIES, call=lambda f, x: f(x, dim=1)), C((2, 3), call=lambda f, x: f(x, dim=0,
                                                                                                  keepdim=True))],
    "var_mean": STATISTICS, "std_mean": STATISTICS,
    "quantile": [C((2, 3), args=(0.3,)), C((2, 3), call=lambda f, x: f(x, gradcalc.tensor([0.2, 0.7]), 1)),
                 C((4,), args=(0.5, 0, True), interpolation="midpoint"), C((2, 3), args=(0.6,), interpolation="lower")],
    "nanquantile": [C((2, 3), args=(0.3,)), C(NANS, args=(0.5, 1))],
    "logcumsumexp": [C((2, 3), args=(1,)), C((2, 3), args=(0,)), C((), args=(0,))],
    "cummax": [C((2, 3), args=(1,)), C(TIES, args=(1,)), C((), args=(0,))],
    "cummin": [C((2, 3), args=(0,)), C(TIES, args=(1,))],
})
# the in-place methods again, through a view of their input and on a base under a view
RECIPES["mul_"] += [C((2, 3), call=lambda f, x: on_view(f, x, 2.0)),
                    C((2, 3), call=lambda f, x: through_view(f, x, 2.0))]
RECIPES["copy_"] += [C((2, 3), (3,), call=lambda f, x, v: on_view(f, x, v))]
RECIPES["exp_"] += [C((2, 3), call=lambda f, x: through_view(f, x))]

# Operations whose results never require grad (constructors, comparisons, indices, detaching).
NOT_DIFFERENTIABLE = {
    "arange", "empty", "eye", "full", "full_like", "linspace", "ones", "ones_like", "rand", "randn", "tensor",
    "zeros", "zeros_like", "manual_seed", "argmax", "argmin", "eq", "ne", "lt", "le", "gt", "ge", "isnan",
    "logical_and", "logical_or", "logical_not", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__and__", "__or__", "__invert__", "all", "any", "detach", "detach_", "allclose", "equal", "device",
    "is_cpu", "is_cuda", "is_meta", "__deepcopy__", "isinf", "isfinite", "isposinf", "isneginf", "isclose",
    "argsort", "nonzero", "signbit", "count_nonzero",
    "unique", "unique_consecutive", "bincount", "histc", "bucketize", "searchsorted",
    # random draws (test_random.py): the factories make leaves, the fills write constants as copy_ does
    "bool", "long", "int", "half", "element_size", "is_floating_point", "ndimension", "nelement", "numel",
    "empty_like", "logspace",
    "new_empty", "new_full", "new_ones", "new_tensor", "new_zeros",
    "randint", "normal", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli", "multinomial",
    "uniform_", "normal_", "bernoulli_", "exponential_", "random_",
}

# Operations whose gradient has no derivative in PyTorch (its error: test_ops_products.py)
NO_SECOND_ORDER = {"cdist"}

NN_FUNCTIONAL = "made by gradcalc.nn.functional, outside the op tables (test_nn_functional.py, against torch)"
# Node kinds no operation of the tables makes, each with where it is tested instead.
NOT_MADE_BY_OPERATIONS = {
    "node.AccumulateGrad": "the leaves' node: no formula, the walk adds into .grad (test_semantics.py)",
    "function.BackwardCFunction": "autograd.Function's node (test_function.py)",
    "function.DelayedError": "once_differentiable's error node (test_function.py)",
    "arithmetic.NotImplemented_": "`//` on tensors records a node whose backward is an error, as PyTorch's",
    "products.CdistBackwardBackward0": "cdist's gradient's node: its backward is PyTorch's error",
    **{f"counting.{n}": "unique's values: a node whose backward is PyTorch's error (test_ops_counting.py)"
       for n in ("Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")},
    "scatter_reduce.ScatterReduceDoubleBackwardError": "PyTorch's Error node (test_ops_selection.py)",
    "classification.NllLoss2DBackward0": NN_FUNCTIONAL,
    "classification.NllLoss2DBackwardBackward0": NN_FUNCTIONAL,
    "losses.BinaryCrossEntropyBackward0": NN_FUNCTIONAL,
    "losses.BinaryCrossEntropyBackwardBackward0": NN_FUNCTIONAL,
    "losses.MseLossBackward0": NN_FUNCTIONAL,
    "losses.MseLossBackwardBackward0": NN_FUNCTIONAL,
    "binary.DivBackward1": NN_FUNCTIONAL,
    "nn.GeluBackward0": NN_FUNCTIONAL,
    "nn.GeluBackwardBackward0": NN_FUNCTIONAL,
    "nn.SiluBackward0": NN_FUNCTIONAL,
    **dict.fromkeys(("activations.LeakyReluBackward0", "activations.LeakyReluBackward1",
                     "activations.LeakyReluBackwardBackward0", "activations.EluBackward1",
                     "activations.HardtanhBackward0", "activations.HardtanhBackwardBackward0",
                     "activations.HardswishBackward0", "activations.HardswishBackwardBackward0",
                     "activations.HardsigmoidBackward0", "smooth_activations.LogSigmoidBackward0",
                     "smooth_activations.LogSigmoidBackwardBackward0", "smooth_activations.MishBackward0",
                     "smooth_activations.GluBackward0", "smooth_activations.GluBackwardBackward0",
                     "batch_norm.NativeBatchNormBackward0", "batch_norm.NativeBatchNormBackwardBackward0",
                     "embedding.EmbeddingBackward0", "embedding.EmbeddingDenseBackwardBackward0",
                     "smooth_losses.SmoothL1LossBackward0", "smooth_losses.SmoothL1LossBackwardBackward0",
                     "smooth_losses.HuberLossBackward0", "smooth_losses.HuberLossBackwardBackward0"),
                    "made by gradcalc.nn.functional, outside the op tables (both modes: test_nn_extra_both_modes.py)"),
    "forward_ad._ForwardEdge": "forward mode's marker edge: never run by backward (test_forward_ad.py)",
}


def case_ids() -> list[tuple[str, str, int]]:
    """(operation, how reached, case number) for every operation of the tables that has a recipe."""
    out = []
    for name, kinds in sorted(engine_operations().items()):
        for kind in kinds or ("function",):
            cases = recipe(name, kind)
            for k in range(len(cases or ())):
                out.append((name, kind, k))
    return out


def recipe(name: str, kind: str) -> list[Case] | None:
    if kind != "function" and f"Tensor.{name}" in RECIPES:
        return RECIPES[f"Tensor.{name}"]
    return RECIPES.get(name)


# -- running a case -------------------------------------------------------------------------------------
@dataclass
class Applied:
    """What the watched formulas were handed: per node kind, whether arrays and whether tensors."""

    arrays: set[str] = field(default_factory=set)
    tensors: set[str] = field(default_factory=set)


WATCH: list[Applied] = []  # the innermost is recording


def _kind_of(node: Node) -> str:
    cls = type(node)
    return f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"


@pytest.fixture(scope="module", autouse=True)
def watched_formulas() -> Any:
    """Wrap every `apply` the engine defines, to note what each node kind is handed."""
    originals = {}
    stack = [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if "apply" in cls.__dict__ and cls.__module__.startswith("gradcalc."):
            originals[cls] = cls.__dict__["apply"]

    def watch(apply: Callable) -> Callable:
        @functools.wraps(apply)
        def watched(self: Node, grads: Any) -> Any:
            if WATCH:
                items = grads if type(grads) is list else [grads]
                given = [g for g in items if g is not None]
                record = WATCH[-1]
                if any(type(g) is not Tensor for g in given):
                    record.arrays.add(_kind_of(self))
                if any(type(g) is Tensor for g in given):
                    record.tensors.add(_kind_of(self))
            return apply(self, grads)

        return watched

    for cls, apply in originals.items():
        cls.apply = watch(apply)
    yield
    for cls, apply in originals.items():
        cls.apply = apply


def _leaves(case: Case, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.array(s, dtype=np.float64) if isinstance(s, np.ndarray) else rng.uniform(case.lo, case.hi, s)
            for s in case.inputs]


def _operation(name: str, kind: str) -> Callable:
    if kind == "function":
        return ops.FUNCTIONS[name]
    if kind == "property":
        return lambda t: getattr(t, name)
    return lambda t, *args, **kwargs: getattr(t, name)(*args, **kwargs)


def _outputs(out: Any) -> list[Tensor]:
    """The differentiable tensors among an operation's results."""
    if isinstance(out, Tensor):
        return [out] if out.requires_grad and out.detach().numpy().dtype.kind == "f" else []
    if isinstance(out, tuple | list):
        return [t for o in out for t in _outputs(o)]
    return []


def _weighted(tensors: list[Tensor], seed: int) -> Tensor | None:
    """Σ (t · t · w).sum() with fixed uneven weights: a wrong formula cannot hide behind a gradient of ones,
    and the gradient each operation receives depends on the inputs, so that under create_graph even a linear
    operation's formula records its own backward (SelectBackwardBackward0, ...)."""
    rng = np.random.default_rng(seed)
    total = None
    for t in tensors:
        w = gradcalc.tensor(rng.uniform(0.5, 1.5, tuple(t.shape)), dtype=t.dtype)
        term = (t * t * w).sum()
        total = term if total is None else total + term
    return total


def gradients(name: str, kind: str, number: int, create_graph: bool, order: int) -> tuple[list, Applied] | None:
    """The gradients of the case's weighted outputs (for `order` 2, of its weighted create_graph gradients)
    with respect to its leaves, by a plain backward or by grad(create_graph=True); and what the formulas
    were handed meanwhile. None when the case has nothing to differentiate at that order."""
    case = recipe(name, kind)[number]
    seed = zlib.crc32(f"{name}/{kind}/{number}".encode())
    leaves = [gradcalc.tensor(a, requires_grad=True) for a in _leaves(case, seed)]
    inputs: list[Any] = list(leaves)
    if case.inplace:
        inputs[0] = inputs[0] * 1.0
    op = _operation(name, kind)
    out = case.call(op, *inputs) if case.call else op(*inputs, *case.args, **dict(case.kwargs))
    if case.inplace:
        out = inputs[0]
    loss = _weighted(_outputs(out), seed + 1)
    if loss is None:
        return None
    if order == 2:
        if case.raises or name in NO_SECOND_ORDER:
            return None
        loss.backward(create_graph=True)  # (rather than grad(): a leaf's .grad is then a CopyBackwards)
        firsts = [x.grad for x in leaves]
        for x in leaves:
            x.grad = None
        loss = _weighted([g for g in firsts if g is not None and g.requires_grad], seed + 2)
        if loss is None:
            return None
    applied = Applied()
    WATCH.append(applied)
    try:
        if create_graph:
            grads = list(gradcalc.autograd.grad(loss, leaves, create_graph=True, allow_unused=True))
        else:
            loss.backward()
            grads = [x.grad for x in leaves]
    except RuntimeError as e:
        if not case.raises:
            raise
        return [str(e)], applied
    finally:
        WATCH.pop()
    assert not case.raises, "backward was expected to raise"
    return [None if g is None else g.detach().numpy().copy() for g in grads], applied


@functools.cache
def both_modes(name: str, kind: str, number: int, order: int) -> tuple[Any, Any]:
    return (gradients(name, kind, number, False, order), gradients(name, kind, number, True, order))


# -- the tests --------------------------------------------------------------------------------------------
def test_every_operation_has_a_recipe() -> None:
    """A new operation in the tables gets a recipe here or a place in NOT_DIFFERENTIABLE; and neither
    table names an operation that is gone."""
    operations = engine_operations()
    missing = sorted(n for n in operations if n not in NOT_DIFFERENTIABLE and not any(
        recipe(n, k) for k in operations[n] or ("function",)))
    assert not missing, f"operations with no recipe in test_both_modes.RECIPES: {missing}"
    stale = sorted({k.removeprefix("Tensor.") for k in RECIPES} - set(operations))
    stale += sorted(NOT_DIFFERENTIABLE - set(operations))
    assert not stale, f"recipes for operations the engine no longer has: {stale}"
    both = sorted(NOT_DIFFERENTIABLE & {k.removeprefix("Tensor.") for k in RECIPES})
    assert not both, f"listed as not differentiable, yet with a recipe: {both}"


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize(("name", "kind", "number"), case_ids())
def test_plain_backward_agrees_with_create_graph(name: str, kind: str, number: int, order: int) -> None:
    plain, recorded = both_modes(name, kind, number, order)
    if order == 1:
        assert plain is not None, "the case has nothing to differentiate: fix its recipe"
    if plain is None:
        assert recorded is None
        return
    (p, p_applied), (r, r_applied) = plain, recorded
    rtol = recipe(name, kind)[number].rtol
    if recipe(name, kind)[number].raises:
        assert p == r  # the same error message
    assert [g is None for g in p] == [g is None for g in r], "which inputs got a gradient differs"
    for k, (a, b) in enumerate(zip(p, r, strict=True)):
        if a is not None and not isinstance(a, str):
            assert a.shape == b.shape and a.dtype == b.dtype, f"input {k}"
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"input {k}")
    # the plain backward handed raw_ok formulas arrays, and only those; create_graph only tensors
    classes = node_classes()
    raw = {k for k in p_applied.tensors | p_applied.arrays if classes[k].raw_ok}
    assert raw <= p_applied.arrays, f"raw_ok formulas given tensors in a plain backward: {raw - p_applied.arrays}"
    assert not (p_applied.arrays - raw), f"formulas without raw_ok given arrays: {p_applied.arrays - raw}"
    assert not r_applied.arrays, f"formulas given arrays under create_graph: {r_applied.arrays}"


def test_every_node_kind_ran_in_both_modes() -> None:
    """Every node kind the engine defines ran in a plain backward and under create_graph in some case above
    (or is listed in NOT_MADE_BY_OPERATIONS, with where it is tested)."""
    plain: set[str] = set()
    recorded: set[str] = set()
    for name, kind, number in case_ids():
        for order in (1, 2):
            try:
                p, r = both_modes(name, kind, number, order)
            except Exception:  # noqa: BLE001 - that case's own test reports it
                continue
            if p is not None and r is not None:
                plain |= p[1].arrays | p[1].tensors
                recorded |= r[1].tensors
    kinds = node_kinds()
    unlisted = set(NOT_MADE_BY_OPERATIONS) - kinds
    assert not unlisted, f"NOT_MADE_BY_OPERATIONS names node kinds that are gone: {sorted(unlisted)}"
    expected = kinds - set(NOT_MADE_BY_OPERATIONS)
    assert not expected - plain, f"never ran in a plain backward: {sorted(expected - plain)}"
    assert not expected - recorded, f"never ran under create_graph: {sorted(expected - recorded)}"
