"""Exponentials, logarithms and roots: `exp`, `sigmoid` (the logistic function), exp and log in other bases and
near zero (`exp2 expm1 log2 log10 log1p`), `sqrt` and `rsqrt`, each a `unary(...)` row (ops/unary.py), with
sigmoid's gradient as one differentiable node (SigmoidBackwardBackward0, PyTorch's `sigmoid_backward`). `log`
itself is unary.py's (arithmetic's formulas use it at start-up).

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
from .unary import _sigmoid, backward_of, unary

_LN2, _LN10 = 0.6931471805599453, 2.3025850929940456  # derivatives.yaml's constants, exactly

expm1 = unary("expm1", forward=np.expm1, node="Expm1Backward0", saves="result", formula="grad * (result + 1)",
              factor=lambda x, y: add_scalar(y, 1.0))
log2 = unary("log2", forward=np.log2, node="Log2Backward0", saves="self", formula="grad / (self * ln 2)",
             backward=lambda g, x, y: g / mul_scalar(x, _LN2), domain=spec.POSITIVE)
log10 = unary("log10", forward=np.log10, node="Log10Backward0", saves="self", formula="grad / (self * ln 10)",
              backward=lambda g, x, y: g / mul_scalar(x, _LN10), domain=spec.POSITIVE)
log1p = unary("log1p", forward=np.log1p, node="Log1PBackward0", saves="self", formula="grad / (self + 1)",
              backward=lambda g, x, y: g / add_scalar(x, 1.0), domain=spec.POSITIVE)
exp2 = unary("exp2", forward=np.exp2, node="Exp2Backward0", saves="result", formula="grad * result * ln 2",
             backward=lambda g, x, y: mul_scalar(g * y, _LN2))
exp = unary("exp", forward=np.exp, node="ExpBackward0", saves="result", formula="grad * result",
            factor=lambda x, y: y)
# at 0 the gradient is inf, as PyTorch's grad / (2 * result)
sqrt = unary("sqrt", forward=np.sqrt, node="SqrtBackward0", saves="result", formula="grad / (2 * result)",
             backward=lambda g, x, y: g / mul_scalar(y, 2.0), domain=spec.POSITIVE)
rsqrt = unary("rsqrt", forward=lambda a: 1 / np.sqrt(a), node="RsqrtBackward0", saves="result",
              formula="-0.5 * grad * result.pow(3)", backward=lambda g, x, y: mul_scalar(g, -0.5) * y**3.0,
              raw_factor=lambda x, y: y**3.0 * -0.5, domain=spec.POSITIVE)
sigmoid = unary("sigmoid", forward=_sigmoid, node="SigmoidBackward0", saves="result",
                formula="sigmoid_backward(grad, result)", backward=lambda g, x, y: sigmoid_backward(g, y),
                raw_factor=lambda x, y: y * (1.0 - y))

# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (exp, sqrt, rsqrt, sigmoid, expm1, log2, log10, log1p, exp2):
    _row.__module__ = __name__


# -- sigmoid's backward, itself one differentiable node --------------------------------------------------------
# As PyTorch's sigmoid_backward: under create_graph the gradient is ONE node with edges to the incoming gradient
# and to sigmoid's output, whose derivatives are those of derivatives.yaml.
def _sigmoid_backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # derivatives.yaml: sigmoid_backward(grad_output_t, output_p) + output_t * grad_output_p * (1 - 2 output_p)
    (g, y), (tg, ty) = inputs, tangents
    first = None if tg is None else sigmoid_backward(tg, y)
    second = None if ty is None else ty * g * add_scalar(mul_scalar(y, -2.0), 1.0)
    return first if second is None else (second if first is None else first + second)


@spec.node(
    formula={"grad_output": "sigmoid_backward(grad, output)",
             "output": "grad * grad_output * (-2 * output + 1)"},
    saved={"grad_output": SV.tensor(0), "output": SV.tensor(1)},
    jvp=_sigmoid_backward_jvp,
    tangent="sigmoid_backward(grad_output_t, output_p) + output_t * grad_output_p * (-2 * output_p + 1)",
)
class SigmoidBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        d_g = sigmoid_backward(gg, y) if needs(self, 0) else None
        d_y = gg * g * add_scalar(mul_scalar(y, -2.0), 1.0) if needs(self, 1) else None
        return (d_g, d_y)


def sigmoid_backward(g: Any, y: Any) -> Any:
    """g y (1 - y): sigmoid's gradient from its output `y`."""
    if type(g) is not Tensor:
        f = y * (1.0 - y)
        return times(f, g)
    return backward_of(SigmoidBackwardBackward0, g, y, g._data * (y._data * (1.0 - y._data)))
