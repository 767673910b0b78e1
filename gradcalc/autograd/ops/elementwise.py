"""Elementwise functions: a TABLE of functions of one tensor, then clamp, maximum/minimum and where.

Each row of `UNARY` gives the forward (NumPy), PyTorch's node name, what backward keeps alive ("x" the
input, "y" the output, saved without a reference cycle), and the derivative written with the engine's
own operations from the input `x` and/or the output `y`. Each row becomes a node class (`SinBackward0`,
...) and a function `sin(x)`.

The backward formulas run on tensors (recorded, under create_graph) and on bare NumPy arrays (a plain
backward, where the engine hands nodes with `raw_ok` their gradients as arrays): every function of this
module passes a bare array straight to NumPy, and `_select(mask, g)` is the masked gradient of both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import forward_ad, grad_mode
from .. import saved as SV
from ..defaults import default_float
from ..grad_mode import state
from ..node import SEQ, STAMP, Node, SavedOutput
from ..temporaries import REUSE_MIN_SIZE, spare_times, temporary_argument, times
from ..tensor import Tensor
from . import arithmetic as A
from .core import _CATEGORY, binary_operands, broadcast_error, needs, record, result

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


def _sign(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "b":  # PyTorch's sign of a bool tensor is itself; NumPy has none
        return a.copy()
    r = np.sign(a)
    if a.dtype.kind == "f":  # PyTorch's sign(nan) is 0, NumPy's is nan
        r = np.asarray(r)
        r[np.isnan(r)] = 0
    return r


def _relu(a: np.ndarray) -> np.ndarray:
    # the bound first: NumPy then keeps the input where they are equal, so relu(-0.) is -0. as in PyTorch
    return np.maximum(0.0 if a.dtype.kind == "f" else 0, a)  # a float 0 is NumPy's fast path for floats


def _frac(a: np.ndarray) -> np.ndarray:
    # the fractional part with the sign of a, as PyTorch's x - trunc(x)
    return a - np.trunc(a)


def _zeros_like(g: Any) -> Any:
    """A constant zero gradient (PyTorch's `zeros_like(grad)`: it never requires grad)."""
    if type(g) is not Tensor:
        return np.zeros(np.shape(g), dtype=getattr(g, "dtype", np.float64))
    return Tensor._make(np.zeros(g._data.shape, g._data.dtype), False, None)


def _const(a: Any) -> Tensor:
    """A constant (a mask, a count) as a tensor that requires no grad."""
    return Tensor._make(np.asarray(a), False, None)


def _select(mask: Any, g: Any) -> Any:
    """`g` where `mask` holds, else 0 (PyTorch's `where(mask, grad, 0)`): differentiable in `g`."""
    if type(g) is not Tensor:
        return np.where(mask, g, 0.0)
    return where(_const(mask), g, 0.0)


# -- the table -------------------------------------------------------------------------------------------
class Times:
    """A derivative of the form `factor(x, y) * g`, as a row of the table gives it."""

    __slots__ = ("factor",)

    def __init__(self, factor: Callable[[T, T], T]) -> None:
        self.factor = factor


# name: (forward, node name, saves, backward(g, x, y)[, jvp(x, y, tangent)]). The forward-mode rule is
# derived from the backward formula (`forward_rule`) unless a row gives a 5th column. Most derivatives are a
# factor times g, written `Times(factor(x, y))`: a plain backward then writes the product into the factor
# when nothing else holds it (a fresh intermediate, or a saved value let go), and skips it when g is a sum's
# constant 1.
UNARY: dict[str, tuple[Any, ...]] = {
    "exp": (np.exp, "ExpBackward0", "y", Times(lambda x, y: y)),
    "expm1": (np.expm1, "Expm1Backward0", "y", Times(lambda x, y: A.add_scalar(y, 1.0))),
    "log": (np.log, "LogBackward0", "x", lambda g, x, y: g / x),
    "log2": (np.log2, "Log2Backward0", "x", lambda g, x, y: g / (x * math.log(2.0))),
    "log10": (np.log10, "Log10Backward0", "x", lambda g, x, y: g / (x * math.log(10.0))),
    "log1p": (np.log1p, "Log1PBackward0", "x", lambda g, x, y: g / (x + 1.0)),
    "sin": (np.sin, "SinBackward0", "x", Times(lambda x, y: cos(x))),
    "cos": (np.cos, "CosBackward0", "x", Times(lambda x, y: -sin(x))),
    "tan": (np.tan, "TanBackward0", "y", Times(lambda x, y: y * y + 1.0)),
    "asin": (np.arcsin, "AsinBackward0", "x", Times(lambda x, y: rsqrt(1.0 - x * x))),
    "acos": (np.arccos, "AcosBackward0", "x", lambda g, x, y: g * -rsqrt(A.add_scalar(-x * x, 1.0))),
    "atan": (np.arctan, "AtanBackward0", "x", lambda g, x, y: g / A.add_scalar(x * x, 1.0)),
    "sinh": (np.sinh, "SinhBackward0", "x", Times(lambda x, y: cosh(x))),
    "cosh": (np.cosh, "CoshBackward0", "x", Times(lambda x, y: sinh(x))),
    "tanh": (np.tanh, "TanhBackward0", "y", lambda g, x, y: tanh_backward(g, y)),
    # at 0 the gradient is inf, as PyTorch's grad / (2 * result)
    "sqrt": (np.sqrt, "SqrtBackward0", "y", lambda g, x, y: g / (y * 2.0)),
    "rsqrt": (lambda a: 1 / np.sqrt(a), "RsqrtBackward0", "y", Times(lambda x, y: y**3.0 * -0.5)),
    "reciprocal": (lambda a: 1 / a, "ReciprocalBackward0", "y", lambda g, x, y: -g * (y * y)),
    # sign(0) = 0: abs has gradient 0 at 0, as PyTorch's grad * sgn(x)
    "abs": (np.abs, "AbsBackward0", "x", Times(lambda x, y: sgn(x))),
    "sign": (_sign, "SignBackward0", "", lambda g, x, y: _zeros_like(g)),
    # gradient 0 at 0 (and passed through at nan), as PyTorch's threshold_backward(grad, result, 0)
    "relu": (_relu, "ReluBackward0", "y", lambda g, x, y: threshold_backward(g, y)),
    "sigmoid": (_sigmoid, "SigmoidBackward0", "y", lambda g, x, y: sigmoid_backward(g, y)),
    "erf": (_erf, "ErfBackward0", "x", lambda g, x, y: A.mul_scalar(exp(-(x**2.0)), 2.0 / math.sqrt(math.pi)) * g),
    "exp2": (np.exp2, "Exp2Backward0", "y", lambda g, x, y: A.mul_scalar(g * y, math.log(2.0))),
    # rounding: piecewise constant, so PyTorch's gradient is zeros_like(grad) (0 at the jumps too); frac(x) =
    # x - trunc(x) passes the gradient through unchanged, as PyTorch's `self: grad`
    "round": (np.round, "RoundBackward0", "", lambda g, x, y: _zeros_like(g)),
    "floor": (np.floor, "FloorBackward0", "", lambda g, x, y: _zeros_like(g)),
    "ceil": (np.ceil, "CeilBackward0", "", lambda g, x, y: _zeros_like(g)),
    "trunc": (np.trunc, "TruncBackward0", "", lambda g, x, y: _zeros_like(g)),
    "frac": (_frac, "FracBackward0", "", lambda g, x, y: g),
}


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


class UnaryNode(Node):
    """The node of a row of `UNARY`: the saved (x, y) and the row's formula, or its factor."""

    __slots__ = ()
    batchable = True
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

    def apply_batched(self, g: Any) -> tuple:
        # the factor once for all rows, and the product written into `g` when the walk gave it as spare;
        # tanh's and sigmoid's formulas are the products of `_RAW_FACTORS` on bare arrays
        factor = type(self).factor or _RAW_FACTORS.get(type(self).__name__)
        if factor is None:
            return self.apply(g)
        x, y = self.unpack_saved(True) or (None, None)
        return (spare_times(factor(x, y), g),)


def forward_rule(backward: Any) -> Callable[[T, T, T], T]:
    """A row's forward-mode rule `jvp(x, y, tangent)`: an elementwise derivative is its own transpose, so
    the tangent goes through the backward formula in the gradient's place (`factor(x, y) * tangent`), as
    PyTorch's `auto_element_wise`."""
    if isinstance(backward, Times):
        factor = backward.factor
        return lambda x, y, t: t * factor(x, y)
    return lambda x, y, t: backward(t, x, y)


def _make_unary(name: str, forward: Callable, node_name: str, saves: str, backward: Any, *jvp_column: Any) -> Callable:
    formula = {"factor": staticmethod(backward.factor)} if isinstance(backward, Times) else {
        "backward_formula": staticmethod(backward)}
    names = {"self": SV.tensor(0)} if "x" in saves else {}
    names.update({"result": SV.tensor(1)} if "y" in saves else {})
    # the optional 5th column: a forward-mode rule of the row's own, when the backward formula won't do
    jvp = jvp_column[0] if jvp_column else forward_rule(backward)
    body = {"__slots__": (), "saved_names": names, **formula, "jvp_rule": staticmethod(jvp)}
    cls = type(node_name, (UnaryNode,), body)
    save_x, save_y = "x" in saves, "y" in saves

    # the result may overwrite a dying input only when backward does not need the input (and NumPy
    # computes it in one ufunc call)
    in_place = isinstance(forward, np.ufunc) and "x" not in saves

    def op(x: Tensor) -> Tensor:
        if type(x) is not Tensor:
            if isinstance(x, np.ndarray | np.generic):  # a bare array, inside a backward formula: compute
                return forward(x)
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
        if not (x._requires_grad and state.grad_enabled):
            if grad_mode.forward_seen:
                return forward_ad.unary(jvp, x, Tensor._make(data, False, None))
            return Tensor._make(data, False, None)
        # `record` and `Node.save` inlined: these are the hottest operations after arithmetic
        node = _new(cls)
        node._next = (x.grad_fn or x._accumulate_node(),)
        node._nrs = (x._output_nr,) if x._output_nr else None
        node._extras = None
        node._seq = SEQ[0] = SEQ[0] + 1  # the creation number (node.SEQ)
        node._versions = None
        out = Tensor._make(data, True, node)
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
        return forward_ad.unary(jvp, x, out) if grad_mode.forward_seen else out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}; its node is {node_name}."
    return op


_ops = {name: _make_unary(name, *row) for name, row in UNARY.items()}
exp, expm1, log, log2, log10, log1p = (_ops[n] for n in ("exp", "expm1", "log", "log2", "log10", "log1p"))
sin, cos, tan, asin, acos, atan = (_ops[n] for n in ("sin", "cos", "tan", "asin", "acos", "atan"))
sinh, cosh, tanh, sqrt, rsqrt = (_ops[n] for n in ("sinh", "cosh", "tanh", "sqrt", "rsqrt"))
reciprocal, abs, sign, relu = (_ops[n] for n in ("reciprocal", "abs", "sign", "relu"))
sigmoid, erf = _ops["sigmoid"], _ops["erf"]
# abs's derivative, as PyTorch writes it (`grad * self.sgn()`): sign under its own node name; not a public op
sgn = _make_unary("sgn", _sign, "SgnBackward0", "", lambda g, x, y: _zeros_like(g))


# -- relu's backward, itself differentiable ----------------------------------------------------------------
class ThresholdBackwardBackward0(Node):
    """The node of relu's gradient under create_graph: linear in the gradient, constant in the output."""

    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        (y,) = self.saved_tensors
        return (threshold_backward(gg, y) if needs(self, 0) else None, _zeros_like(gg) if needs(self, 1) else None)


def threshold_backward(g: Any, y: Any) -> Any:
    """`g` where `y > 0` (and where `y` is nan), else 0: relu's gradient from its output `y`."""
    if type(g) is not Tensor and type(y) is not Tensor:
        return np.where(y <= 0, 0.0, g)
    gd = g._data if type(g) is Tensor else np.asarray(g)
    node = record(ThresholdBackwardBackward0, g, y)
    if node is not None:
        node.save(y)
    return result(np.where(y._data <= 0, 0.0, gd), node)


# The factors of tanh's and sigmoid's gradients on bare arrays, exactly as `tanh_backward` and
# `sigmoid_backward` compute them there (for `UnaryNode.apply_batched`).
_RAW_FACTORS: dict[str, Callable[[Any, Any], Any]] = {
    "TanhBackward0": lambda x, y: 1.0 - y * y,
    "SigmoidBackward0": lambda x, y: y * (1.0 - y),
}


# -- tanh's and sigmoid's backward, each itself one differentiable node --------------------------------------
# As PyTorch's tanh_backward and sigmoid_backward: under create_graph the gradient is ONE node with edges to
# the incoming gradient and to the function's output, whose derivatives are those of derivatives.yaml.
class TanhBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        d_g = tanh_backward(gg, y) if needs(self, 0) else None
        d_y = gg * (A.mul_scalar(y, -2.0) * g) if needs(self, 1) else None
        return (d_g, d_y)


class SigmoidBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        d_g = sigmoid_backward(gg, y) if needs(self, 0) else None
        d_y = gg * g * A.add_scalar(A.mul_scalar(y, -2.0), 1.0) if needs(self, 1) else None
        return (d_g, d_y)


def tanh_backward(g: Any, y: Any) -> Any:
    """g (1 - y²): tanh's gradient from its output `y`."""
    if type(g) is not Tensor:
        f = 1.0 - y * y
        return times(f, g)
    return backward_of(TanhBackwardBackward0, g, y, g._data * (1.0 - y._data * y._data))


def sigmoid_backward(g: Any, y: Any) -> Any:
    """g y (1 - y): sigmoid's gradient from its output `y`."""
    if type(g) is not Tensor:
        f = y * (1.0 - y)
        return times(f, g)
    return backward_of(SigmoidBackwardBackward0, g, y, g._data * (y._data * (1.0 - y._data)))


def backward_of(cls: type[Node], g: Tensor, y: Tensor, data: Any) -> Tensor:
    """The result `data` of a backward formula of `g` and an output `y`, recorded as ONE node `cls` that
    saves both (tanh's, sigmoid's, softmax's gradients under create_graph)."""
    node = record(cls, g, y)
    if node is not None:
        node.save(g, y)
    return result(data, node)


# -- softplus ----------------------------------------------------------------------------------------------
class SoftplusBackward0(Node):
    __slots__ = ("beta", "threshold")

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        return (softplus_backward(g, x, self.beta, self.threshold),)


class SoftplusBackwardBackward0(Node):
    """The node of softplus's gradient under create_graph, with PyTorch's softplus_double_backward: its
    derivative in x is zero from beta x >= threshold on (the first order switches at > threshold)."""

    __slots__ = ("beta", "threshold")

    def apply(self, gg: Tensor) -> tuple:
        g, x = self.saved_tensors
        beta, threshold = self.beta, self.threshold
        gg_g = gg if needs(self, 0) else None
        gx = None
        if needs(self, 1):
            s = sigmoid(x * beta)
            below = _const((x._data * beta) < threshold)
            gx = gg * g * (s * (1.0 - s)) * below * beta
        return (softplus_backward(gg, x, beta, threshold) if gg_g is not None else None, gx)


def softplus_backward(g: Tensor, x: Tensor, beta: float, threshold: float) -> Tensor:
    """softplus's gradient: g where beta x > threshold, else g sigmoid(beta x)."""
    bx = x._data * beta
    data = np.where(bx > threshold, g._data, g._data * _sigmoid(bx))
    node = record(SoftplusBackwardBackward0, g, x)
    if node is not None:
        node.beta, node.threshold = beta, threshold
        node.save(g, x)
    return result(data, node)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's `softplus`)."""
    d = x._data
    bx = d * beta if beta != 1 else d
    data = np.where(bx > threshold, d, np.logaddexp(0, bx) / beta if beta != 1 else np.logaddexp(0, bx))
    node = record(SoftplusBackward0, x)
    if node is not None:
        node.beta, node.threshold = beta, threshold
        node.save(x)
    return result(data, node)


# -- clamp -------------------------------------------------------------------------------------------------
class ClampBackward1(Node):
    """clamp with number bounds: the gradient passes where min <= x <= max (bounds included)."""

    __slots__ = ("lo", "hi")
    batchable = True
    saved_names = {"max": SV.field("hi"), "min": SV.field("lo"), "self": SV.tensor(0)}
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        return (_select(_inside(x, self.lo, self.hi), g),)


class ClampMinBackward0(ClampBackward1):
    __slots__ = ()
    saved_names = {"min": SV.field("lo"), "self": SV.tensor(0)}


class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()
    saved_names = {"max": SV.field("hi"), "self": SV.tensor(0)}


def _data(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


def _inside(x: Any, lo: Any, hi: Any) -> np.ndarray:
    """The mask min <= x <= max, on arrays or numbers (a missing bound is no constraint)."""
    xd = _data(x)
    if lo is None:
        return xd <= _data(hi)
    if hi is None:
        return xd >= _data(lo)
    return (xd >= _data(lo)) & (xd <= _data(hi))


class ClampBackward0(Node):
    """clamp with tensor bounds: gradients to x and to each bound, as PyTorch's clamp_backward_min_max."""

    __slots__ = ("shapes",)
    saved_names = {"max": SV.tensor(2), "min": SV.tensor(1), "self": SV.tensor(0)}

    def apply(self, g: Tensor) -> tuple:
        x, lo, hi = self.saved_tensors
        xd, lod, hid = x._data, _data(lo), _data(hi)
        gx = A.sum_to(_select(_inside(x, lo, hi), g), self.shapes[0]) if needs(self, 0) else None
        glo = ghi = None
        if needs(self, 1):
            mask = xd < lod if hi is None else (xd < lod) & (lod < hid)
            glo = A.sum_to(_select(mask, g), self.shapes[1])
        if needs(self, 2):
            mask = xd > hid if lo is None else (xd > hid) | (hid < lod)
            ghi = A.sum_to(_select(mask, g), self.shapes[2])
        return (gx, glo, ghi)


class ClampMinBackward1(ClampBackward0):
    __slots__ = ()


class ClampMaxBackward1(ClampBackward0):
    __slots__ = ()


def _bound(v: Any) -> Any:
    """A bound of the number form of clamp: a number, or a 0-d tensor that does not require grad."""
    if isinstance(v, Tensor):
        if v._data.ndim or v._requires_grad:
            raise TypeError(
                "clamp: give both bounds as tensors, or both as numbers (a number bound and a tensor "
                f"bound{' that requires grad' if v._requires_grad else ' with dimensions'} cannot be mixed)"
            )
        return v._data.item()
    if v is not None and not isinstance(v, (int, float, np.number)):
        raise TypeError(f"clamp: a bound must be a number or a tensor, not {type(v).__name__}")
    return v


def _clamp_data(d: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    # the bound first: NumPy then keeps x where they are equal, so signed zeros come out as in PyTorch
    r = d if lo is None else np.asarray(np.maximum(lo, d))
    if hi is not None:
        # into the first result when that is ours and a number bound changes neither its dtype nor shape
        fits = r is not d and type(hi) is not np.ndarray and np.result_type(r, hi) == r.dtype
        r = np.minimum(hi, r, out=r) if fits else np.minimum(hi, r)
    return r if type(r) is np.ndarray else np.asarray(r)


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Limit the values of `x` to [min, max]; either bound may be None, a number, or a tensor."""
    return _clamp(x, min, max, ClampBackward1, ClampBackward0)


def _clamp(x: Tensor, lo: Any, hi: Any, scalar_node: type[Node], tensor_node: type[Node]) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"clamp() takes a tensor, not {type(x).__name__}")
    if lo is None and hi is None:
        raise RuntimeError("clamp: give at least one of min and max")
    lo_t, hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    # PyTorch has two forms: tensor bounds (each a tensor or None), and number bounds
    if not ((lo_t or hi_t) and (lo_t or lo is None) and (hi_t or hi is None)):
        lo, hi = _bound(lo), _bound(hi)
        data = _clamp_data(x._data, lo, hi)
        node = record(scalar_node, x)
        if node is not None:
            node.lo, node.hi = lo, hi
            node.save(x)
        return result(data, node)
    # tensor bounds: PyTorch's type promotion over the three, then broadcasting
    dtype = promoted(*(t._data for t in (x, lo, hi) if t is not None))
    xd, lod, hid = (None if t is None else t._data.astype(dtype, copy=False) for t in (x, lo, hi))
    try:
        data = _clamp_data(xd, lod, hid)
    except ValueError as exc:
        raise broadcast_error(exc, *(t for t in (x, lo, hi) if t is not None)) from None
    node = record(tensor_node, x, lo, hi)
    if node is not None:
        node.shapes = (xd.shape, None if lo is None else lod.shape, None if hi is None else hid.shape)
        node.save(x, lo, hi)
    return result(data, node)


def promoted(*arrays: np.ndarray) -> np.dtype:
    """PyTorch's result dtype over several tensors: the dimensioned ones decide, unless a 0-d one is of a
    higher category (bool < int < float)."""
    dims = [a.dtype for a in arrays if a.ndim]
    zero = [a.dtype for a in arrays if not a.ndim]
    if not dims or not zero:
        return functools.reduce(np.promote_types, dims or zero)
    dtype, z = functools.reduce(np.promote_types, dims), functools.reduce(np.promote_types, zero)
    return z if _CATEGORY[z.kind] > _CATEGORY[dtype.kind] else dtype


def clamp_min(x: Tensor, min: Any) -> Tensor:  # noqa: A002
    """max(x, min) elementwise (`clamp(x, min=min)`, with its own node names)."""
    return _clamp(x, min, None, ClampMinBackward0, ClampMinBackward1)


def clamp_max(x: Tensor, max: Any) -> Tensor:  # noqa: A002
    """min(x, max) elementwise (`clamp(x, max=max)`, with its own node names)."""
    return _clamp(x, None, max, ClampMaxBackward0, ClampMaxBackward1)


# -- maximum, minimum --------------------------------------------------------------------------------------
class MaximumBackward0(A._Binary):
    """Where the two are equal each gets half the gradient; nan passes the gradient to both."""

    __slots__ = ()
    batchable = True
    saved_names = {"other": SV.tensor(1), "self": SV.tensor(0)}
    raw_ok = True
    keep = np.less  # the input masked out where keep(self, other): the smaller one, for maximum
    wins = np.greater  # where the first input is the result, for the forward rule

    @classmethod
    def jvp(cls, a: Tensor, b: Tensor, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        # PyTorch's other_t + where(a == b, 0.5, a > b) * (self_t - other_t): half of each where equal
        ad, bd = a._data, b._data
        w = np.where(ad == bd, 0.5, cls.wins(ad, bd).astype(out._data.dtype))
        first = None if ta is None else ta * _const(w)
        second = None if tb is None else tb * _const(1.0 - w)
        return A.plus(first, second)

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        ad, bd = (a, b) if raw else (a._data, b._data)
        half = np.where(ad == bd, g * 0.5, g) if raw else where(_const(ad == bd), g * 0.5, g)
        keep = type(self).keep  # PyTorch's where(a == b, grad / 2, grad).masked_fill_(a < b, 0), for maximum
        ga = masked_fill(half, keep(ad, bd), 0.0) if needs(self, 0) else None
        gb = masked_fill(half, keep(bd, ad), 0.0) if needs(self, 1) else None
        return self.grads(ga, gb)


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()
    keep = np.greater
    wins = np.less


def _pairwise(a: Any, b: Any, ufunc: np.ufunc, cls: type[A._Binary], name: str) -> Tensor:
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError(f"{name}() takes two tensors: for a number bound use clamp (or wrap it in tensor())")
    ad, bd = binary_operands(a, b)
    # the second operand first: NumPy then keeps the first where they are equal (signed zeros as PyTorch)
    try:
        data = ufunc(bd, ad)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return A._binary(cls, a, b, data, (a, b), None)


def maximum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise maximum of two tensors (nan wins)."""
    return _pairwise(a, b, np.maximum, MaximumBackward0, "maximum")


def minimum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise minimum of two tensors (nan wins)."""
    return _pairwise(a, b, np.minimum, MinimumBackward0, "minimum")


# -- where -------------------------------------------------------------------------------------------------
class WhereBackward0(Node):
    """Edges to the two branches; the condition is saved (version-checked, freed), as PyTorch's."""

    __slots__ = ("shapes",)
    batchable = True
    saved_names = {"condition": SV.tensor(0)}
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (c,) = self.unpack_saved(True)  # the condition as a bool array, whatever the gradients are
        sa, sb = self.shapes
        ga = A.sum_to(_select(c, g), sa) if needs(self, 0) else None
        gb = A.sum_to(_select(~c, g), sb) if needs(self, 1) else None
        return (ga, gb)


class MaskedFillBackward0(Node):
    """The gradient passes where the mask does not hold; the mask is saved, as PyTorch's."""

    __slots__ = ()
    batchable = True
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (mask,) = self.unpack_saved(True)
        return (masked_fill(g, mask, 0.0),)


def masked_fill(x: Any, mask: np.ndarray, value: float) -> Any:
    """`x` with `value` where `mask` holds (PyTorch's masked_fill, used by backward formulas)."""
    if type(x) is not Tensor:
        return np.where(mask, value, x)
    node = record(MaskedFillBackward0, x)
    if node is not None:
        node.save(Tensor._make(np.asarray(mask), False, None))
    return result(np.where(mask, value, x._data).astype(x._data.dtype, copy=False), node)


class MaskedFillBackward1(Node):
    """Zeros filled with a 0-d tensor `value` where the mask holds: the value's gradient is the sum of the
    incoming gradient there. Edges to the zeros (none) and to the value, as PyTorch's masked_fill.Tensor."""

    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (mask,) = self.unpack_saved(True)
        if type(g) is not Tensor:
            return (None, np.sum(np.where(mask, g, 0.0)))
        return (None, masked_fill(g, ~mask, 0.0).sum())


def filled_where(mask: np.ndarray, value: Any) -> Any:
    """Zeros of the mask's shape, with the 0-d `value` where it holds (PyTorch's
    `zeros.masked_fill_(mask, value)`, used by backward formulas)."""
    if type(value) is not Tensor:
        return np.where(mask, value, 0.0)
    node = record(MaskedFillBackward1, None, value)
    if node is not None:
        node.save(Tensor._make(np.asarray(mask), False, None))
    return result(np.where(mask, value._data, 0.0).astype(value._data.dtype, copy=False), node)


def where(cond: Any, a: Any, b: Any) -> Tensor:
    """Elements of `a` where `cond` holds, else of `b` (either may be a number)."""
    c = cond._data if isinstance(cond, Tensor) else np.asarray(cond)
    if c.dtype != np.bool_:
        c = c.astype(bool)
    ad, bd = binary_operands(a, b)
    try:
        data = np.where(c, ad, bd)
    except ValueError as exc:
        raise broadcast_error(exc, c, a, b) from None
    node = record(WhereBackward0, a, b)
    if node is not None:
        node.save(cond if isinstance(cond, Tensor) and cond._data is c else Tensor._make(c, False, None))
        node.shapes = (A._shape(a), A._shape(b))
    return result(data, node)


ELEMENTWISE: dict[str, Callable] = {
    **_ops, "softplus": softplus, "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "maximum": maximum, "minimum": minimum,
}
METHODS: dict[str, Callable] = {**ELEMENTWISE, "__abs__": abs, "where": lambda x, cond, other: where(cond, x, other)}
FUNCTIONS: dict[str, Callable] = {**ELEMENTWISE, "where": where}
