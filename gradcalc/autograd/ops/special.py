"""Special and less common elementwise functions: `erf`, `lgamma`, `digamma`, `polygamma`, `erfinv`, `i0`, `sinc`,
`deg2rad`, `rad2deg`, `logit`, `copysign`, `signbit`, `float_power`, `true_divide`.

Loaded at first use (ops/lazy.py). The one-tensor functions are `unary(...)` rows (ops/unary.py) whose forwards
are NumPy or autograd/special_functions.py (the gamma family, erfinv and I1, which NumPy lacks); the others are
nodes with their specs as derivatives.yaml writes them. The backward formulas are written with the engine's
operations, so that create_graph differentiates them again (lgamma's is digamma, digamma's polygamma(1, ·), and
so on up the polygamma ladder; i0's is special_i1, whose own derivative is PyTorch's i1_backward).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from .. import special_functions as SF
from ..defaults import default_float
from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import arithmetic as A
from .binary import mul_scalar
from .core import needs, record, result
from .elementwise import masked_fill, promoted, where
from .inplace import apply_inplace
from .logarithms import exp
from .sums import sum_to
from .trigonometric import cos, sin
from .unary import _erf, reciprocal, unary

_SQRT_PI_HALF = 0.5 * math.sqrt(math.pi)
_DEG = math.pi / 180.0


def _in_dtype(kernel: Any) -> Any:
    """A float64 kernel of special_functions.py as a forward in the array's own dtype."""

    def forward(a: np.ndarray) -> np.ndarray:
        return np.asarray(kernel(a)).astype(a.dtype, copy=False)

    return forward


def _floats(x: Tensor) -> np.ndarray:
    """The tensor's values as floats: integers and booleans in the default dtype (PyTorch's promotion)."""
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(default_float())


def _tensor_argument(name: str, x: Any, what: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{what}' (position 1) must be Tensor, not {type(x).__name__}")
    return x


# -- the gamma family ---------------------------------------------------------------------------------------
def _polygamma_data(n: int, a: np.ndarray) -> np.ndarray:
    return np.asarray(SF.polygamma(n, a)).astype(a.dtype, copy=False)


@spec.node(
    formula={"self": "grad * polygamma(n + 1, self)"},
    saved={"n": SV.field("n"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: tangents[0] * polygamma(node.n + 1, inputs[0]),
    tangent="self_t * polygamma(n + 1, self_p)",
    batched=lambda node, g: (g * _polygamma_data(node.n + 1, node.unpack_saved(True)[0]),),
)
class PolygammaBackward0(Node):
    __slots__ = ("n",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        return (g * polygamma(self.n + 1, x),)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


def _polygamma_inplace(self: Tensor, n: int) -> Tensor:
    """`x.polygamma_(n)`: the tensor comes first in the method, second in the function."""
    return apply_inplace(self, lambda t: polygamma(n, t), "polygamma_", n, cast_check=True)


def _polygamma_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """vmap: elementwise in its tensor, which comes second."""
    return spec.RULES.bind("polygamma", *args, **params), dims[1]


@spec.op("polygamma", nodes=(PolygammaBackward0,), method=_polygamma_method, inplace=_polygamma_inplace,
         vmap=_polygamma_rule,
         sample=spec.Sample(((5,),), lambda L, a: L.polygamma(1, a) + a.polygamma(2) + L.polygamma(0, a * 2.0),
                            spec.POSITIVE))
def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma, elementwise: polygamma(0, x) is digamma(x), polygamma(1, x) trigamma."""
    if type(input) is not Tensor and isinstance(input, np.ndarray | np.generic):  # inside a backward formula
        return _polygamma_data(int(n), np.asarray(input))
    x = _tensor_argument("polygamma", input)
    if int(n) < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    data = _polygamma_data(int(n), _floats(x))
    node = record(PolygammaBackward0, x)
    if node is not None:
        node.n = int(n)
        node.save(x)
    return result(data, node)


lgamma = unary("lgamma", forward=_in_dtype(SF.lgamma), node="LgammaBackward0", saves="self",
               formula="grad * digamma(self)", factor=lambda x, y: digamma(x), domain=spec.POSITIVE)
digamma = unary("digamma", forward=_in_dtype(SF.digamma), node="DigammaBackward0", saves="self",
                formula="grad * polygamma(1, self)", factor=lambda x, y: polygamma(1, x), domain=spec.POSITIVE)
erfinv = unary("erfinv", forward=_in_dtype(SF.erfinv), node="ErfinvBackward0", saves="self",
               formula="0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad",
               backward=lambda g, x, y: mul_scalar(exp(erfinv(x) ** 2.0), _SQRT_PI_HALF) * g,
               raw_factor=lambda x, y: np.exp(erfinv(x) ** 2.0) * _SQRT_PI_HALF, domain=spec.UNIT)


# -- Bessel I0, and I1 for its derivative ---------------------------------------------------------------------
def _i1_backward(g: Any, x: Any, y: Any) -> Any:
    """PyTorch's i1_backward: g (i0(x) - i1(x) / x), and g / 2 where |x| is below the dtype's epsilon."""
    eps = float(np.finfo(x.dtype if type(x) is not Tensor else x._data.dtype).eps)
    xd = x._data if type(x) is Tensor else x
    not_tiny = np.abs(xd) > eps
    safe = where(not_tiny, x, eps) if type(x) is Tensor else np.where(not_tiny, x, eps)
    gradx = i0(safe) - y * reciprocal(safe) if type(x) is Tensor else np.i0(safe) - y / safe
    return g * (where(not_tiny, gradx, 0.5) if type(x) is Tensor else np.where(not_tiny, gradx, 0.5))


special_i1 = unary("special_i1", forward=_in_dtype(SF.i1), node="SpecialI1Backward0", saves="self result",
                   formula="i1_backward(grad, self, result)", backward=_i1_backward, public=False)
i0 = unary("i0", forward=np.i0, node="I0Backward0", saves="self", formula="grad * at::special_i1(self)",
           factor=lambda x, y: special_i1(x))


# -- sinc, deg2rad, rad2deg -----------------------------------------------------------------------------------
def _sinc(a: np.ndarray) -> np.ndarray:
    # PyTorch's: 1 at 0, else sin(pi x) / (pi x) with pi x rounded in the dtype (np.sinc rounds differently)
    px = a * a.dtype.type(math.pi)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a == 0, a.dtype.type(1), np.sin(px) / px)


def _sinc_backward(g: Any, x: Any, y: Any) -> Any:
    """PyTorch's sinc_backward: g (pi x cos(pi x) - sin(pi x)) / (pi x²), 0 where pi x² is 0."""
    px = mul_scalar(x, math.pi)
    pxx = mul_scalar(x * x, math.pi)
    out = g * ((px * cos(px) - sin(px)) / pxx)  # (PyTorch's graph: the quotient, then the product)
    zero = (pxx._data if type(pxx) is Tensor else pxx) == 0
    if type(out) is not Tensor:
        return np.where(zero, 0.0, out)
    return where(Tensor._make(zero, False, None), Tensor._make(np.zeros((), out._data.dtype), False, None), out)


sinc = unary("sinc", forward=_sinc, node="SincBackward0", saves="self", formula="sinc_backward(grad, self)",
             backward=_sinc_backward)
deg2rad = unary("deg2rad", forward=lambda a: a * a.dtype.type(_DEG), node="Deg2RadBackward0", saves="",
                formula="deg2rad_backward(grad)", backward=lambda g, x, y: mul_scalar(g, _DEG))
rad2deg = unary("rad2deg", forward=lambda a: a * a.dtype.type(180.0 / math.pi), node="Rad2DegBackward0", saves="",
                formula="rad2deg_backward(grad)", backward=lambda g, x, y: mul_scalar(g, 180.0 / math.pi))

erf = unary("erf", forward=_erf, node="ErfBackward0", saves="self", formula="2 / sqrt(pi) * exp(-self.pow(2)) * grad",
            backward=lambda g, x, y: mul_scalar(exp(-(x**2.0)), 2.0 / math.sqrt(math.pi)) * g)

# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (erf, lgamma, digamma, erfinv, special_i1, i0, sinc, deg2rad, rad2deg):
    _row.__module__ = __name__


# -- logit ---------------------------------------------------------------------------------------------------
def _logit_backward(node: Node, g: Any, x: Tensor) -> Any:
    """derivatives.yaml's logit_backward: g / (x (1 - x)) on [eps, 1 - eps] (on [0, 1] without eps), else 0
    (nan without eps)."""
    eps = node.eps
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = Tensor._make((x._data >= lo) & (x._data <= hi), False, None)
    outside = Tensor._make(np.full((), np.nan if eps is None else 0.0, x._data.dtype), False, None)
    one = Tensor._make(np.ones((), x._data.dtype), False, None)
    return where(inside, g / (x * A.sub(one, x)), outside)


@spec.node(
    formula={"self": "GradMode::is_enabled() ? infinitely_differentiable_logit_backward(grad, self, eps) : "
                     "logit_backward(grad, self, eps)"},
    saved={"eps": SV.field("eps"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _logit_backward(node, tangents[0], inputs[0]),
    tangent="logit_backward(self_t, self_p, eps)",
    batched=None,  # (its formula runs on tensors only)
)
class LogitBackward0(Node):
    __slots__ = ("eps",)

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        return (_logit_backward(self, g, x),)


@spec.op("logit", nodes=(LogitBackward0,), inplace=True, vmap=spec.rule("pointwise_unary", "logit"),
         sample=spec.Sample(((5,),), lambda L, a: L.logit(a) + a.logit(eps=0.2) + L.logit(a * 0.5, 1e-6),
                            spec.PROBABILITY))
def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(input / (1 - input)), elementwise; with `eps`, the input is clamped to [eps, 1 - eps] first."""
    x = _tensor_argument("logit", input)
    d = _floats(x)
    if eps is not None:  # PyTorch's clamp, in its order (eps > 0.5 gives lo > hi: hi wins above it, lo below)
        lo, hi = d.dtype.type(eps), d.dtype.type(1.0 - float(eps))
        d = np.where(d < lo, lo, np.where(d > hi, hi, d))
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.log(d / (d.dtype.type(1) - d))
    node = record(LogitBackward0, x)
    if node is not None:
        node.eps = None if eps is None else float(eps)
        node.save(x)
    return result(data, node)


# -- signbit, copysign ---------------------------------------------------------------------------------------
@spec.op("signbit", vmap=spec.rule("pointwise_unary", "signbit"),
         sample=spec.Sample(((2, 3),), lambda L, a: a * L.signbit(a) + a.signbit() * 2.0))
def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element's sign bit is set (True for -0.0 and negative numbers); no gradient."""
    x = _tensor_argument("signbit", input)
    return Tensor._make(np.signbit(x._data) if x._data.dtype.kind != "b" else np.zeros(x._data.shape, bool),
                        False, None)


def _copysign_backward(g: Any, x: Tensor, out: Tensor) -> Any:
    """copysign_tensor_self_backward: g * result / self, 0 where self is 0."""
    ratio = masked_fill(out / x, x._data == 0, 0.0)
    return g * ratio


@spec.node(
    formula={"self": "copysign_tensor_self_backward(grad, self, result)", "other": "zeros_like(other)"},
    saved={"result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: (
        None if tangents[0] is None else _copysign_backward(tangents[0], inputs[0], out)),
    tangent="copysign_tensor_self_backward(self_t, self_p, result)",
    batched=None,  # (its formula runs on tensors only)
)
class CopysignBackward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g: Tensor) -> tuple:
        x, out = self.saved_tensors
        gx = sum_to(_copysign_backward(g, x, out), self.shapes[0]) if needs(self, 0) else None
        other = Tensor._make(np.zeros(self.shapes[1], g._data.dtype), False, None) if needs(self, 1) else None
        return (gx, other)


@spec.node(
    formula={"self": "copysign_tensor_self_backward(grad, self, result)"},
    saved={"result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _copysign_backward(tangents[0], inputs[0], out),
    tangent="copysign_tensor_self_backward(self_t, self_p, result)",
    batched=None,  # (its formula runs on tensors only)
)
class CopysignBackward1(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        x, out = self.saved_tensors
        return (_copysign_backward(g, x, out),)


@spec.op("copysign", nodes=(CopysignBackward0, CopysignBackward1), inplace=True,
         vmap=spec.rule("pointwise_binary", "copysign"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.copysign(a, b) + a.copysign(-1.5) + a.copysign(a)))
def copysign(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The magnitudes of `input` with the signs of `other` (a tensor or a number), elementwise."""
    x = _tensor_argument("copysign", input)
    number = not isinstance(other, Tensor)
    if number and not isinstance(other, bool | int | float | np.number):
        raise TypeError(f"copysign(): argument 'other' must be Tensor or Number, not {type(other).__name__}")
    o = Tensor._make(np.asarray(other), False, None) if number else other
    dtype = promoted(x._data, o._data) if not number else x._data.dtype
    if dtype.kind != "f":
        dtype = np.dtype(default_float())
    try:
        data = np.copysign(x._data.astype(dtype, copy=False), o._data.astype(dtype, copy=False))
    except ValueError:
        from .core import broadcast_message  # (already loaded: core is at start-up)
        raise RuntimeError(broadcast_message([x._data.shape, o._data.shape])) from None
    if number:
        node = record(CopysignBackward1, x)
    else:
        node = record(CopysignBackward0, x, o)
        if node is not None:
            node.shapes = (x._data.shape, o._data.shape)
    out = result(np.asarray(data), node)
    if node is not None:
        node.save(x, SavedOutput(out))
    return out


# -- float_power, true_divide --------------------------------------------------------------------------------
def _to_double(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x if x._data.dtype == np.float64 else x.to(np.float64)
    return float(x)


def _float_power_inplace(self: Tensor, exponent: Any) -> Tensor:
    if self._data.dtype != np.float64:
        name = {"float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(
            self._data.dtype.name, self._data.dtype.name)
        raise RuntimeError(f"the base given to float_power_ has dtype {name} but the operation's result requires "
                           "dtype Double")
    return self.pow_(_to_double(exponent))


@spec.op("float_power", inplace=_float_power_inplace, vmap=spec.rule("pointwise_binary", "float_power"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.float_power(a, b) + a.float_power(2)
                            + L.float_power(2.0, b), spec.POSITIVE))
def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """input ** exponent computed in float64 (double precision), whatever the operands' dtypes."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return A.pow(_to_double(input), _to_double(exponent))


@spec.op("true_divide", inplace=True, vmap=spec.rule("pointwise_binary", "true_divide"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.true_divide(a, b) + a.true_divide(2.0),
                            spec.POSITIVE))
def true_divide(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """input / other with true division (an alias of div)."""
    return A.div(input, other)
