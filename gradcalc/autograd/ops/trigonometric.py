"""Trigonometric and hyperbolic functions: `sin cos tan asin acos atan sinh cosh tanh`, each a `unary(...)` row
(ops/unary.py), and tanh's gradient as one differentiable node (TanhBackwardBackward0, PyTorch's `tanh_backward`).

A family loaded at first use (ops/lazy.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..temporaries import times
from ..tensor import Tensor
from .binary import add_scalar, mul_scalar
from .core import needs
from .logarithms import rsqrt
from .unary import backward_of, unary

sin = unary("sin", forward=np.sin, node="SinBackward0", saves="self", formula="grad * self.cos()",
            factor=lambda x, y: cos(x))
cos = unary("cos", forward=np.cos, node="CosBackward0", saves="self", formula="grad * -self.sin()",
            factor=lambda x, y: -sin(x))
tan = unary("tan", forward=np.tan, node="TanBackward0", saves="result", formula="grad * (1 + result.pow(2))",
            factor=lambda x, y: add_scalar(y**2.0, 1.0))
asin = unary("asin", forward=np.arcsin, node="AsinBackward0", saves="self",
             formula="grad * (-self * self + 1).rsqrt()", factor=lambda x, y: rsqrt(add_scalar(-x * x, 1.0)),
             domain=spec.UNIT)
acos = unary("acos", forward=np.arccos, node="AcosBackward0", saves="self",
             formula="grad * -(-self * self + 1).rsqrt()",
             backward=lambda g, x, y: g * -rsqrt(add_scalar(-x * x, 1.0)), domain=spec.UNIT)
atan = unary("atan", forward=np.arctan, node="AtanBackward0", saves="self", formula="grad / (self * self + 1)",
             backward=lambda g, x, y: g / add_scalar(x * x, 1.0))
sinh = unary("sinh", forward=np.sinh, node="SinhBackward0", saves="self", formula="grad * self.cosh()",
             factor=lambda x, y: cosh(x))
cosh = unary("cosh", forward=np.cosh, node="CoshBackward0", saves="self", formula="grad * self.sinh()",
             factor=lambda x, y: sinh(x))
tanh = unary("tanh", forward=np.tanh, node="TanhBackward0", saves="result", formula="tanh_backward(grad, result)",
             backward=lambda g, x, y: tanh_backward(g, y), raw_factor=lambda x, y: 1.0 - y * y)


# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (sin, cos, tan, asin, acos, atan, sinh, cosh, tanh):
    _row.__module__ = __name__


# -- tanh's backward, itself one differentiable node -----------------------------------------------------------
# As PyTorch's tanh_backward: under create_graph the gradient is ONE node with edges to the incoming gradient and
# to tanh's output, whose derivatives are those of derivatives.yaml.
def _tanh_backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # derivatives.yaml: tanh_backward(grad_output_t, output_p) + output_t * (-2 * output_p * grad_output_p)
    (g, y), (tg, ty) = inputs, tangents
    first = None if tg is None else tanh_backward(tg, y)
    second = None if ty is None else ty * (mul_scalar(y, -2.0) * g)
    return first if second is None else (second if first is None else first + second)


@spec.node(
    formula={"grad_output": "tanh_backward(grad, output)", "output": "-2 * output * grad_output * grad"},
    saved={"grad_output": SV.tensor(0), "output": SV.tensor(1)},
    jvp=_tanh_backward_jvp,
    tangent="tanh_backward(grad_output_t, output_p) + output_t * (-2 * output_p * grad_output_p)",
)
class TanhBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        d_g = tanh_backward(gg, y) if needs(self, 0) else None
        d_y = gg * (mul_scalar(y, -2.0) * g) if needs(self, 1) else None
        return (d_g, d_y)


def tanh_backward(g: Any, y: Any) -> Any:
    """g (1 - y²): tanh's gradient from its output `y`."""
    if type(g) is not Tensor:
        f = 1.0 - y * y
        return times(f, g)
    return backward_of(TanhBackwardBackward0, g, y, g._data * (1.0 - y._data * y._data))
