"""Elementwise functions of one tensor: each is one `unary(...)` row, the simplest case of an operation's spec.

A row names the NumPy forward, PyTorch's node name, what backward keeps (`"self"` the input, `"result"` the
output, saved without a reference cycle), the derivative (a `factor(x, y)` times the gradient, or a whole
`backward(g, x, y)`), written with the engine's own operations so that create_graph differentiates it again,
and the formula as derivatives.yaml writes it. From the row come the node class (`SinBackward0`) with its
spec, the function `sin(x)` with its op spec (`gradcalc.sin`, `Tensor.sin`, `Tensor.sin_`, the language's
`sin`), its forward rule (an elementwise derivative is its own transpose: the tangent goes through the
backward formula in the gradient's place, as PyTorch's `auto_element_wise`), its batched backward and its
batching rule.

The backward formulas run on tensors (recorded, under create_graph) and on bare NumPy arrays (a plain backward,
where the engine hands nodes with `raw_ok` their gradients as arrays): every function here passes a bare array
straight to NumPy.

The rows here are the two that start-up needs (log and reciprocal: arithmetic's formulas and `number / tensor` use
them); the others are in families loaded at first use (ops/lazy.py): logarithms.py (exp, sqrt, sigmoid...),
rounding.py (abs, sign...), trigonometric.py, activations.py (relu) and special.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import grad_mode, spec
from .. import saved as SV
from ..defaults import default_float
from ..grad_mode import ALTERED, state
from ..node import SEQ, STAMP, Node, SavedOutput
from ..temporaries import REUSE_MIN_SIZE, spare_times, temporary_argument, times
from ..tensor import Tensor
from .core import record, result

T = Tensor
_new = object.__new__
_erf_object = np.frompyfunc(math.erf, 1, 1)


# -- forwards that NumPy does not have as one ufunc --------------------------------------------------------
def _erf(a: np.ndarray) -> np.ndarray:
    # math.erf is correctly rounded; NumPy has no erf, and a vectorised approximation would not be
    return np.asarray(_erf_object(a), dtype=a.dtype if a.dtype.kind == "f" else np.float64)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    # exact enough everywhere: where exp(-a) overflows to inf the result is 0, as the true value rounds to
    r = np.exp(-a)
    r += 1.0
    return np.divide(1.0, r, out=r) if type(r) is np.ndarray else 1.0 / r


def _zeros_like(g: Any) -> Any:
    """A constant zero gradient (PyTorch's `zeros_like(grad)`: it never requires grad)."""
    if type(g) is not Tensor:
        return np.zeros(np.shape(g), dtype=getattr(g, "dtype", np.float64))
    return Tensor._make(np.zeros(g._data.shape, g._data.dtype), False, None)


def _const(a: Any) -> Tensor:
    """A constant (a mask, a count) as a tensor that requires no grad."""
    return Tensor._make(np.asarray(a), False, None)


# What a row does with a bool or integer tensor, where NumPy and PyTorch differ. PyTorch computes the
# functions with non-integer values in the default dtype (defaults.py; NumPy gives float16 for bool); it
# refuses bool tensors for these rows, and frac for integer ones too (kinds as NumPy's `dtype.kind`).
REFUSES: dict[str, str] = {n: "b" for n in ("abs", "relu", "round", "floor", "ceil", "trunc")} | {"frac": "biu"}
INTEGRAL_KEPT = frozenset(REFUSES) | {"sign", "sgn"}  # these keep an integral dtype (sign keeps bool too)


def integral_input(name: str, d: np.ndarray) -> np.ndarray:
    """The array a row `name` computes on, for a bool or integer tensor's array `d` (PyTorch's rules)."""
    kind = d.dtype.kind
    if kind in REFUSES.get(name, ""):
        if name == "relu":
            raise RuntimeError("Boolean inputs not supported for relu")
        raise NotImplementedError(
            f"{name} is not implemented for {d.dtype.name} tensors: convert the tensor first, e.g. x.double()"
        )
    if name not in INTEGRAL_KEPT:
        return d.astype(default_float())  # the default dtype, as PyTorch's promotion of integral inputs
    return d


# -- the rows ----------------------------------------------------------------------------------------------
@spec.base
class UnaryNode(Node):
    """The node of a row: the saved (x, y) and the row's formula, or its factor."""

    __slots__ = ()
    raw_ok = True
    backward_formula: Callable[[T, T, T], T] | None = None
    factor: Callable[[T, T], T] | None = None

    def apply(self, g: Tensor) -> tuple:
        x, y = self.unpack_saved(type(g) is not Tensor) or (None, None)
        factor = type(self).factor
        if factor is None:
            return (type(self).backward_formula(g, x, y),)
        f = factor(x, y)
        x = y = None  # the saved values: let go, so that `f` may be all that holds its array
        return (times(f, g),)


class UnaryRow:
    """One row, as `unary` registered it: its function and node class, and what they were made from."""

    __slots__ = ("name", "function", "node", "forward", "saves", "factor", "backward", "domain", "public")

    def __init__(self, name: str, function: Callable[[Tensor], Tensor], node: type[UnaryNode],
                 forward: Callable[..., Any], saves: str, factor: Callable[[Any, Any], Any] | None,
                 backward: Callable[[Any, Any, Any], Any] | None, domain: spec.Domain, public: bool) -> None:
        self.name, self.function, self.node, self.forward, self.saves = name, function, node, forward, saves
        self.factor, self.backward, self.domain = factor, backward, domain
        self.public = public  # a function of gradcalc and a method (False: a node for other formulas, as sgn)


ROWS: dict[str, UnaryRow] = {}


def unary(
    name: str,
    *,
    forward: Callable[..., Any],
    node: str,
    saves: str,
    formula: str,
    factor: Callable[[Any, Any], Any] | None = None,
    backward: Callable[[Any, Any, Any], Any] | None = None,
    raw_factor: Callable[[Any, Any], Any] | None = None,
    jvp: spec.JvpRule | None = None,
    domain: spec.Domain = spec.REAL,
    public: bool = True,
) -> Callable[[Tensor], Tensor]:
    """Register an elementwise function of one tensor, and return it.

    `forward` computes it with NumPy; `node` is PyTorch's node name; `saves` what backward needs: "self" (the
    input), "result" (the output), both ("self result") or nothing (""). The derivative is `factor(x, y)` times
    the gradient, or `backward(g, x, y)` (x the input, y the output), in PyTorch's operand order; `formula` is it
    as derivatives.yaml writes it (`grad * result`). `raw_factor(x, y)`: the factor on bare arrays of a
    `backward` that is a product (for the batched backward). `jvp`: a forward rule of its own, when the
    backward formula will not do. `domain`: where tests draw its input. `public`: a function of gradcalc and a
    method of tensors (False: a node for other formulas only, as `sgn`)."""
    if (factor is None) == (backward is None):
        raise TypeError(f"unary {name}: give the derivative as factor= or as backward=")
    save_x, save_y = "self" in saves, "result" in saves
    names = {"self": SV.tensor(0)} if save_x else {}
    if save_y:
        names["result"] = SV.tensor(1)
    if jvp is None:  # the tangent through the backward formula in the gradient's place
        if factor is not None:
            jvp = lambda node, inputs, out, tangents: tangents[0] * factor(inputs[0], out)  # noqa: E731
        else:
            jvp = lambda node, inputs, out, tangents: backward(tangents[0], inputs[0], out)  # noqa: E731
    batch_factor = factor or raw_factor
    if batch_factor is None:
        batched = spec.BROADCASTS
    else:  # the factor once for all rows, and the product written into `g` when the walk gave it as spare

        def batched(self: Node, g: Any) -> tuple:
            x, y = self.unpack_saved(True) or (None, None)
            return (spare_times(batch_factor(x, y), g),)

    body = {"__slots__": (), "factor": staticmethod(factor) if factor is not None else None,
            "backward_formula": staticmethod(backward) if backward is not None else None}
    cls = type(node, (UnaryNode,), body)
    spec.install_node(cls, spec.NodeSpec(cls, {"self": formula}, names, jvp, None,
                                         formula.replace("grad", "self_t"), batched))
    op = _make_unary(name, forward, cls, save_x, save_y)
    ROWS[name] = UnaryRow(name, op, cls, forward, saves, factor, backward, domain, public)
    if public:
        sample = spec.Sample(((5,),), lambda L, a: getattr(L, name)(a), domain)
        spec.add_op(spec.OpSpec(name, op, (), True, True, True, (cls,), spec.rule("pointwise_unary", name), sample))
    return op


def _make_unary(name: str, forward: Callable, cls: type[UnaryNode], save_x: bool, save_y: bool) -> Callable:
    # the result may overwrite a dying input only when backward does not need the input (and NumPy
    # computes it in one ufunc call, or the forward takes `out=` as one does: relu)
    in_place = (isinstance(forward, np.ufunc) or getattr(forward, "writes_out", False)) and not save_x

    def op(x: Tensor) -> Tensor:
        if type(x) is not Tensor:
            if isinstance(x, np.ndarray | np.generic):  # a bare array, inside a backward formula: compute
                return forward(x)
            if isinstance(x, Tensor):  # a batched tensor (vmap): its batching rule
                return spec.DISPATCH(spec.OPS[name], (x,), {})
            raise TypeError(f"{name}() takes a tensor, not {type(x).__name__}: wrap it in tensor(...)")
        # (no local name for x._data: a temporary's array is told by who else holds it)
        if x._data.dtype.kind != "f":  # bool and integers: PyTorch's dtype rules, not NumPy's
            data = forward(integral_input(name, x._data))
        elif in_place and x._data.size >= REUSE_MIN_SIZE and temporary_argument(x):
            data = forward(x._data, out=x._data)  # a temporary's array, reused as NumPy's elision would
        else:
            data = forward(x._data)
        if type(data) is not np.ndarray:  # NumPy gives scalars for 0-d inputs
            data = np.asarray(data)
        if not (x._requires_grad and (not ALTERED or state.grad_enabled)):
            if grad_mode.forward_seen:
                return grad_mode.forward_ad.unary(cls, x, Tensor._make(data, False, None))
            return Tensor._make(data, False, None)
        # `record` and `Node.save` inlined (node.make_node is the reference, slot by slot): these are the
        # hottest operations after arithmetic
        node = cls()
        node._next = (x.grad_fn or x._accumulator or x._accumulate_node(),)
        node._nrs = (x._output_nr,) if x._output_nr else None
        node._extras = None
        node._seq = SEQ[0] = SEQ[0] + 1  # the creation number (node.SEQ)
        node._versions = None
        out = _new(Tensor)  # Tensor._make inlined (the reference, field by field)
        out._data = data
        out._requires_grad = True
        out._grad = None
        out.grad_fn = node
        out._output_nr = 0
        out._vc = None
        out._accumulator = None
        out._retains_grad = False
        out._inference = grad_mode.inference_seen and state.inference
        if save_y:
            node.save(x if save_x else None, SavedOutput(out))
        elif save_x:
            if x._vc is not None or x._inference:
                node.save(x, None)  # the checked path: a version to remember, or an inference tensor
            else:
                node._saved = (x, None)
        else:
            node._saved = None
        if STAMP.on:  # anomaly mode, an origin or saved-tensor hooks were ever used: see node.STAMP
            if STAMP.simple:  # only the front end's origin (the language running): stamp() inlined
                node._trace = STAMP.origin
            else:
                STAMP.stamp(node)
        return grad_mode.forward_ad.unary(cls, x, out) if grad_mode.forward_seen else out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}; its node is {cls.__name__}."
    return op


log = unary("log", forward=np.log, node="LogBackward0", saves="self", formula="grad / self",
            backward=lambda g, x, y: g / x, domain=spec.POSITIVE)
reciprocal = unary("reciprocal", forward=lambda a: 1 / a, node="ReciprocalBackward0", saves="result",
                   formula="-grad * (result * result)", backward=lambda g, x, y: -g * (y * y), domain=spec.POSITIVE)


def backward_of(cls: type[Node], g: Tensor, y: Tensor, data: Any) -> Tensor:
    """The result `data` of a backward formula of `g` and an output `y`, recorded as ONE node `cls` that
    saves both (tanh's, sigmoid's, softmax's gradients under create_graph)."""
    node = record(cls, g, y)
    if node is not None:
        node.save(g, y)
    return result(data, node)
