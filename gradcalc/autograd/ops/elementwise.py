"""Elementwise functions of one tensor, as a table: forward (NumPy), PyTorch's node name, and the
derivative written with the engine's own operations, from the input `x` and/or the output `y`.

Each row becomes a node class (`SinBackward0`, ...) and a function `sin(x)`; the `saves` column says
what backward keeps alive: "x" the input, "y" the output (saved without a reference cycle), or both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import arithmetic as A
from .core import record, result

T = Tensor


def _erf(a: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[a.dtype])(a) if a.size else a.copy()


def _sigmoid(a: np.ndarray) -> np.ndarray:
    # exp of a negative argument only, so neither branch overflows
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(a: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, a)


# name: (forward, node name, saves, backward(g, x, y)). The formulas use Python operators and the
# functions of this table only: they run on tensors (recorded under create_graph) and on bare NumPy
# arrays (a plain backward), since every function here passes a bare array straight to NumPy.
UNARY: dict[str, tuple[Callable[[np.ndarray], Any], str, str, Callable[[T, T, T], T]]] = {
    "exp": (np.exp, "ExpBackward0", "y", lambda g, x, y: g * y),
    "expm1": (np.expm1, "Expm1Backward0", "y", lambda g, x, y: g * (y + 1.0)),
    "log": (np.log, "LogBackward0", "x", lambda g, x, y: g / x),
    "log2": (np.log2, "Log2Backward0", "x", lambda g, x, y: g / (x * math.log(2.0))),
    "log10": (np.log10, "Log10Backward0", "x", lambda g, x, y: g / (x * math.log(10.0))),
    "log1p": (np.log1p, "Log1PBackward0", "x", lambda g, x, y: g / (x + 1.0)),
    "sin": (np.sin, "SinBackward0", "x", lambda g, x, y: g * cos(x)),
    "cos": (np.cos, "CosBackward0", "x", lambda g, x, y: g * -sin(x)),
    "tan": (np.tan, "TanBackward0", "y", lambda g, x, y: g * (y * y + 1.0)),
    "asin": (np.arcsin, "AsinBackward0", "x", lambda g, x, y: g * rsqrt(1.0 - x * x)),
    "acos": (np.arccos, "AcosBackward0", "x", lambda g, x, y: -(g * rsqrt(1.0 - x * x))),
    "atan": (np.arctan, "AtanBackward0", "x", lambda g, x, y: g / (x * x + 1.0)),
    "sinh": (np.sinh, "SinhBackward0", "x", lambda g, x, y: g * cosh(x)),
    "cosh": (np.cosh, "CoshBackward0", "x", lambda g, x, y: g * sinh(x)),
    "tanh": (np.tanh, "TanhBackward0", "y", lambda g, x, y: g * (1.0 - y * y)),
    "sqrt": (np.sqrt, "SqrtBackward0", "y", lambda g, x, y: g / (y * 2.0)),
    "rsqrt": (lambda a: 1 / np.sqrt(a), "RsqrtBackward0", "y", lambda g, x, y: g * (y**3.0 * -0.5)),
    "reciprocal": (lambda a: 1 / a, "ReciprocalBackward0", "y", lambda g, x, y: g * -(y * y)),
    "abs": (np.abs, "AbsBackward0", "x", lambda g, x, y: g * sign(x)),
    "sign": (np.sign, "SignBackward0", "", lambda g, x, y: g * 0.0),
    # a comparison is a constant bool mask (no derivative), promoted to float by the product
    "relu": (lambda a: np.maximum(a, 0), "ReluBackward0", "y", lambda g, x, y: g * (y > 0)),
    "sigmoid": (_sigmoid, "SigmoidBackward0", "y", lambda g, x, y: g * (y * (1.0 - y))),
    "softplus": (_softplus, "SoftplusBackward0", "x", lambda g, x, y: g * sigmoid(x)),
    "erf": (_erf, "ErfBackward0", "x", lambda g, x, y: g * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi)))),
}


class UnaryNode(Node):
    __slots__ = ()
    raw_ok = True
    backward_formula: Callable[[T, T, T], T]

    def apply(self, g: Tensor) -> tuple:
        x, y = self.unpack_saved(type(g) is not Tensor) or (None, None)
        return (type(self).backward_formula(g, x, y),)


def _make_unary(name: str, forward: Callable, node_name: str, saves: str, backward: Callable) -> Callable:
    cls = type(node_name, (UnaryNode,), {"__slots__": (), "backward_formula": staticmethod(backward)})

    def op(x: Tensor) -> Tensor:
        if type(x) is not Tensor:  # a bare array, inside a backward formula: just compute
            return forward(x)
        data = forward(x._data)
        node = record(cls, x)
        out = result(data, node)
        if node is not None and saves:
            node.save(x if "x" in saves else None, SavedOutput(out) if "y" in saves else None)
        return out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}; its node is {node_name}."
    return op


_ops = {name: _make_unary(name, *row) for name, row in UNARY.items()}
exp, expm1, log, log2, log10, log1p = (_ops[n] for n in ("exp", "expm1", "log", "log2", "log10", "log1p"))
sin, cos, tan, asin, acos, atan = (_ops[n] for n in ("sin", "cos", "tan", "asin", "acos", "atan"))
sinh, cosh, tanh, sqrt, rsqrt = (_ops[n] for n in ("sinh", "cosh", "tanh", "sqrt", "rsqrt"))
reciprocal, abs, sign, relu = (_ops[n] for n in ("reciprocal", "abs", "sign", "relu"))
sigmoid, softplus, erf = (_ops[n] for n in ("sigmoid", "softplus", "erf"))


# -- functions of several tensors -------------------------------------------------------------------------
class WhereBackward0(Node):
    __slots__ = ("cond", "shapes")

    def apply(self, g: Tensor) -> tuple:
        zero = A.mul(g, 0.0)
        c = Tensor._make(self.cond, False, None)
        ga = A.sum_to(where(c, g, zero), self.shapes[1]) if self.next_functions[1][0] else None
        gb = A.sum_to(where(c, zero, g), self.shapes[2]) if self.next_functions[2][0] else None
        return (None, ga, gb)


def where(cond: Any, a: Any, b: Any) -> Tensor:
    """Elements of `a` where `cond` holds, else of `b`."""
    from .core import binary_operands

    c = cond._data if isinstance(cond, Tensor) else np.asarray(cond)
    ad, bd = binary_operands(a, b)
    data = np.where(c.astype(bool), ad, bd)
    node = record(WhereBackward0, None, a, b)
    if node is not None:
        node.cond = c.astype(bool)
        node.shapes = ((), A._shape(a), A._shape(b))
    return result(data, node)


METHODS: dict[str, Callable] = dict(_ops)
METHODS["__abs__"] = abs
FUNCTIONS: dict[str, Callable] = dict(_ops)
FUNCTIONS["where"] = where
