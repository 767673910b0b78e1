"""Neural-network layers as functions: `addmm`, `linear`, and the activations `gelu` and `silu`
(`relu`, `tanh`, `sigmoid`, `softplus` are in elementwise.py).

`linear` records what PyTorch's `F.linear` records, case by case (AddmmBackward0 for a 2-d input with a
bias, the flattened form `ViewBackward0(AddmmBackward0(...))` for other contiguous inputs with a 1-d bias,
`matmul` then an in-place add otherwise). Each backward is PyTorch's formula (derivatives.yaml), written
with the engine's own operations so that a gradient taken with create_graph is differentiable again; in a
plain backward the formulas run on bare NumPy arrays (`raw_ok`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor, is_parameter, mark_parameter
from . import linalg as L
from . import shape as S
from .arithmetic import rsub, sub
from .binary import add_scalar, mul_scalar, plus
from .core import needs, record, result
from .inplace import apply_inplace
from .logarithms import exp, sigmoid
from .sums import sum_to
from .trigonometric import cosh, tanh
from .unary import _erf, _sigmoid, reciprocal


def _tensor_arg(x: Any, fn: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): {name} must be a tensor, not {type(x).__name__}; wrap it in tensor(...)")
    return x


def _const(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a), False, None)


# -- addmm ---------------------------------------------------------------------------------------------------
def _addmm_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """beta * t_input + alpha * (t_mat1 @ mat2 + mat1 @ t_mat2) (the inputs, not what backward saved)."""
    (_, a, b), (ti, ta, tb) = inputs, tangents
    product = plus(None if ta is None else L.mm(ta, b), None if tb is None else L.mm(a, tb))
    if product is not None and node.alpha != 1:
        product = mul_scalar(product, node.alpha)
    if ti is None or node.beta == 0:
        return product
    ti = ti if node.beta == 1 else mul_scalar(ti, node.beta)
    return ti if product is None else product + ti


@spec.node(
    formula={"self": "maybe_multiply(grad, beta)", "mat1": "mm_mat1_backward(grad, mat2, alpha)",
             "mat2": "mm_mat2_backward(grad, mat1, alpha)"},
    # PyTorch's names, in its pack order (mat2 is in mat1's formula first); its sym_sizes/strides are not kept
    saved={"mat2": SV.tensor(1), "mat1": SV.tensor(0), "alpha": SV.field("alpha"), "beta": SV.field("beta")},
    jvp=_addmm_jvp, tangent="maybe_multiply(self_t, beta) + maybe_multiply(mat1_t.mm(mat2_p), alpha) + "
    "maybe_multiply(mat1_p.mm(mat2_t), alpha)",
)
class AddmmBackward0(Node):
    """beta * input + alpha * (mat1 @ mat2): PyTorch's formulas, the layout rule of MmBackward0 included."""

    __slots__ = ("in_shape", "column_major", "alpha", "beta")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        alpha, beta = self.alpha, self.beta
        gi = ga = gb = None
        if needs(self, 0):
            gi = sum_to(g if beta == 1 else mul_scalar(g, beta), self.in_shape)
        ca, cb = self.column_major
        if raw:  # the layout rule on arrays too: a column-major operand (a layer's w.t()) gets its gradient
            # column-major, so that the weight's .grad is contiguous, as PyTorch's is (and the optimizer reads it
            # in order)
            if needs(self, 1):
                ga = (b @ g.T).T if ca else g @ b.T
                ga = ga if alpha == 1 else ga * alpha
            if needs(self, 2):
                gb = (g.T @ a).T if cb else a.T @ g
                gb = gb if alpha == 1 else gb * alpha
            return (gi, ga, gb)
        if needs(self, 1):
            ga = S.t(L.mm(b, S.t(g))) if ca else L.mm(g, S.t(b))
            ga = ga if alpha == 1 else mul_scalar(ga, alpha)
        if needs(self, 2):
            gb = S.t(L.mm(S.t(g), a)) if cb else L.mm(S.t(a), g)
            gb = gb if alpha == 1 else mul_scalar(gb, alpha)
        return (gi, ga, gb)


@spec.op("addmm", vmap=spec.rule("addmm_rule"), nodes=(AddmmBackward0,),
         sample=spec.Sample(((3,), (2, 4), (4, 3)), lambda L, b, x, w: L.addmm(b, x, w) + L.addmm(
             b, x, w, beta=0.5, alpha=2.0) + b.addmm(x, w)))
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), with `input` broadcast to the product's shape (one node)."""
    if type(input) is not Tensor or type(mat1) is not Tensor or type(mat2) is not Tensor:
        for name, x in (("input", input), ("mat1", mat1), ("mat2", mat2)):
            _tensor_arg(x, "addmm", name)
    ad, bd, cd = mat1._data, mat2._data, input._data
    if ad.ndim != 2 or bd.ndim != 2:
        raise RuntimeError(f"addmm: mat1 and mat2 must be matrices, not {ad.ndim}-d and {bd.ndim}-d tensors")
    if ad.shape[1] != bd.shape[0]:
        raise L._mismatch("addmm", mat1, mat2)
    if not (ad.dtype is bd.dtype is cd.dtype or ad.dtype == bd.dtype == cd.dtype):
        raise RuntimeError(
            f"addmm: input, mat1 and mat2 must have one dtype, here {cd.dtype}, {ad.dtype} and {bd.dtype}; "
            "convert them with .double() or .float()"
        )
    out_shape = (ad.shape[0], bd.shape[1])
    if cd.shape != out_shape and cd.shape != out_shape[1:]:  # a layer's bias (the common case) needs no test
        try:
            np.broadcast_shapes(cd.shape, out_shape)
        except ValueError:
            raise RuntimeError(
                f"addmm: input of shape {list(cd.shape)} does not broadcast to the product's shape "
                f"{list(out_shape)}"
            ) from None
    data = ad @ bd
    if alpha != 1:
        data *= alpha
    if beta != 0:
        data += cd if beta == 1 else cd * beta  # into the fresh product: no array more
    node = record(AddmmBackward0, input, mat1, mat2)
    if node is not None:
        node.save(mat1 if mat2._requires_grad else None, mat2 if mat1._requires_grad else None)
        node.in_shape, node.alpha, node.beta = cd.shape, alpha, beta
        node.column_major = (L._column_major(ad), L._column_major(bd))
    return result(data, node)


# -- linear --------------------------------------------------------------------------------------------------
@spec.op("linear", vmap=spec.rule("linear_rule"), top_level=False, method=False,
         sample=spec.Sample(((2, 3), (4, 3), (4,)), lambda L, x, w, b: L.nn.functional.linear(x, w, b)
                            + L.nn.functional.linear(x, w).sum() + L.nn.functional.linear(x.unsqueeze(0), w, b)[0]))
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """input @ weight.T + bias: the layer `y = x Wᵀ + b` over the last dimension of `input`."""
    x = _tensor_arg(input, "linear", "input")
    w = _tensor_arg(weight, "linear", "weight")
    if bias is not None:
        _tensor_arg(bias, "linear", "bias")
    xd, wd = x._data, w._data
    if wd.ndim not in (1, 2):
        raise RuntimeError(f"linear: weight must be a matrix (out_features, in_features), not {wd.ndim}-d")
    if xd.ndim == 0:
        raise RuntimeError("linear: input must have at least 1 dimension (its last is in_features)")
    if xd.shape[-1] != wd.shape[-1]:
        raise RuntimeError(
            f"linear: input's last dimension is {xd.shape[-1]} but weight expects in_features = {wd.shape[-1]} "
            f"(input shape {list(xd.shape)}, weight shape {list(wd.shape)})"
        )
    if bias is not None and wd.ndim == 2:
        if xd.ndim == 2:
            return addmm(bias, x, S.t(w))  # PyTorch's fused case
        if xd.flags.c_contiguous and (xd.ndim == 3 or bias._data.ndim == 1):
            # PyTorch's _flatten_nd_linear: rows folded into one addmm, and the result viewed back
            rows = math.prod(xd.shape[:-1])
            out = addmm(bias, S.reshape(x, (rows, xd.shape[-1])), S.t(w))
            return S.view(out, (*xd.shape[:-1], out._data.shape[1]))
    out = L.matmul(x, S.t(w))
    if bias is not None:
        out.add_(bias)  # in place, as PyTorch does here
    return out


# -- gelu ----------------------------------------------------------------------------------------------------
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)  # PyTorch's M_2_SQRTPI * M_SQRT1_2 * 0.5
_TANH_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5  # sqrt(2 / pi)
_KAPPA = 0.044715
_APPROXIMATIONS = ("none", "tanh")


def _gelu_np(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        inner = _TANH_BETA * (x + _KAPPA * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(inner))
    return x * 0.5 * (1.0 + _erf(x * _SQRT1_2))


def _gelu_grad_np(x: np.ndarray, approximate: str) -> np.ndarray:
    """d gelu / dx, on arrays (PyTorch's GeluBackward kernels)."""
    if approximate == "tanh":
        x_sq = x * x
        inner = _TANH_BETA * (x + _KAPPA * x_sq * x)
        th = np.tanh(inner)
        left_derivative = 0.5 * (1.0 + th)
        right_derivative = 0.5 * x * (1.0 - th * th) * _TANH_BETA * (1.0 + 3.0 * _KAPPA * x_sq)
        return left_derivative + right_derivative
    cdf = 0.5 * (1.0 + _erf(x * _SQRT1_2))
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return cdf + x * pdf


@spec.node(
    formula={"self": "gelu_backward(grad, self, approximate)"},
    saved={"approximate": SV.field("approximate"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: gelu_backward(tangents[0], inputs[0], node.approximate),
    tangent="gelu_backward(self_t, self_p, approximate)",
)
class GeluBackward0(Node):
    __slots__ = ("approximate",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (g * _gelu_grad_np(np.asarray(x), self.approximate),)
        return (gelu_backward(g, x, self.approximate),)


def _gelu_backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (g, x), (tg, tx) = inputs, tangents
    first = None if tg is None else gelu_backward(tg, x, node.approximate)
    return plus(first, None if tx is None else tx * g * _gelu_second(x, node.approximate))


@spec.node(
    formula={"grad_output": "gelu_backward(grad, self, approximate)",
             "self": "gelu_double_backward(grad, grad_output, self, approximate)"},
    saved={"approximate": SV.field("approximate"), "grad_output": SV.tensor(0), "self": SV.tensor(1)},
    jvp=_gelu_backward_jvp, tangent="gelu_backward(grad_output_t, self_p, approximate) + "
    "gelu_double_backward(self_t, grad_output_p, self_p, approximate)",
)
class GeluBackwardBackward0(Node):
    """The node of gelu's gradient under create_graph: edges to the incoming gradient and to x, with
    PyTorch's gelu_double_backward for x."""

    __slots__ = ("approximate",)

    def apply(self, gg: Tensor) -> tuple:
        g, x = self.saved_tensors
        d_g = gelu_backward(gg, x, self.approximate) if needs(self, 0) else None
        d_x = gg * g * _gelu_second(x, self.approximate) if needs(self, 1) else None
        return (d_g, d_x)


def _gelu_second(x: Tensor, approximate: str) -> Tensor:
    """d² gelu / dx², written with differentiable operations (PyTorch's gelu_double_backward)."""
    if approximate == "tanh":
        inner = mul_scalar(x + mul_scalar(x**3.0, _KAPPA), _TANH_BETA)
        th = tanh(inner)
        sech = reciprocal(cosh(inner))
        f = mul_scalar(x, 0.5)
        gg = rsub(th * th, 1.0)
        h = mul_scalar(add_scalar(mul_scalar(x * x, 3.0 * _KAPPA), 1.0), _TANH_BETA)
        f_prime_gh = mul_scalar(gg, 0.5) * h
        g_prime = mul_scalar(sech, 2.0) * (-sech * th) * h
        g_prime_fh = f * h * g_prime
        h_prime = mul_scalar(x, 6.0 * _KAPPA * _TANH_BETA)
        h_prime_fg = f * gg * h_prime
        return f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg
    x_sq = x * x
    pdf = mul_scalar(exp(mul_scalar(x_sq, -0.5)), _INV_SQRT_2PI)
    return mul_scalar(pdf, 2.0) - x_sq * pdf


def gelu_backward(g: Tensor, x: Tensor, approximate: str) -> Tensor:
    """gelu's gradient `g * gelu'(x)`, recorded as ONE node (GeluBackwardBackward0) when it records."""
    data = g._data * _gelu_grad_np(x._data, approximate)
    node = record(GeluBackwardBackward0, g, x)
    if node is not None:
        node.approximate = approximate
        node.save(g, x)
    return result(np.asarray(data, dtype=x._data.dtype), node)


@spec.op("gelu", vmap=spec.rule("pointwise_unary", "gelu"), nodes=(GeluBackward0,), top_level=False, method=False,
         sample=spec.Sample(((5,),), lambda L, a: L.nn.functional.gelu(a)
                            + L.nn.functional.gelu(a, approximate="tanh")))
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """The Gaussian error linear unit x·Φ(x); approximate='tanh' uses PyTorch's tanh approximation."""
    x = _tensor_arg(input, "gelu", "input")
    if approximate not in _APPROXIMATIONS:
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"gelu needs a floating-point tensor, not {x._data.dtype}: convert it with .double()")
    data = np.asarray(_gelu_np(x._data, approximate), dtype=x._data.dtype)
    node = record(GeluBackward0, x)
    if node is not None:
        node.approximate = approximate
        node.save(x)
    return result(data, node)


# -- silu ----------------------------------------------------------------------------------------------------
def _silu_derivative(x: Tensor) -> Tensor:
    """d silu / dx = s (1 + x (1 - s)), s = sigmoid(x), with differentiable operations."""
    s = sigmoid(x)
    one = _const(np.ones((), dtype=x._data.dtype))
    return s * add_scalar(x * sub(one, s), 1.0)


@spec.node(
    formula={"self": "grad * sigmoid(self) * (1 + self * (1 - sigmoid(self)))"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: tangents[0] * _silu_derivative(inputs[0]),
    tangent="self_t * sigmoid(self_p) * (1 + self_p * (1 - sigmoid(self_p)))",
)
class SiluBackward0(Node):
    """x·sigmoid(x). A plain backward runs PyTorch's silu_backward kernel on arrays; under create_graph the
    gradient is its infinitely differentiable form, made of elementary operations as in PyTorch."""

    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            s = _sigmoid(np.asarray(x))
            return (g * s * (1.0 + x * (1.0 - s)),)
        s = sigmoid(x)
        one = _const(np.ones((), dtype=x._data.dtype))
        return (g * s * add_scalar(x * sub(one, s), 1.0),)


@spec.op("silu", vmap=spec.rule("pointwise_unary", "silu"), nodes=(SiluBackward0,), top_level=False, method=False,
         sample=spec.Sample(((5,),), lambda L, a: L.nn.functional.silu(a)))
def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """The sigmoid linear unit x·sigmoid(x) (also called swish)."""
    x = _tensor_arg(input, "silu", "input")
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"silu needs a floating-point tensor, not {x._data.dtype}: convert it with .double()")
    if inplace:
        return apply_inplace(x, silu, "silu_")
    data = x._data * _sigmoid(x._data)
    node = record(SiluBackward0, x)
    if node is not None:
        node.save(x)
    return result(np.asarray(data, dtype=x._data.dtype), node)


# -- deepcopy ------------------------------------------------------------------------------------------------
def deepcopy_tensor(self: Tensor, memo: dict) -> Tensor:
    """`copy.deepcopy(t)` of a leaf, as PyTorch's: a new leaf with a copy of the data, the same requires_grad,
    a deep copy of `.grad`, and still a Parameter if it was one (so `copy.deepcopy(net)` copies a network)."""
    if self.grad_fn is not None:
        raise RuntimeError(
            "only leaf tensors (made directly, not computed) can be deep-copied; deep-copy t.detach() instead"
        )
    found = memo.get(id(self))
    if found is not None:
        return found
    new = Tensor._make(self._data.copy(), self._requires_grad, None)
    if is_parameter(self):
        mark_parameter(new)
    memo[id(self)] = new
    if self._grad is not None:
        new._grad = deepcopy_tensor(self._grad, memo)
    return new


# gelu, silu and linear are not in PyTorch's top-level namespace: gradcalc.nn.functional has them
METHODS = {"__deepcopy__": deepcopy_tensor}
