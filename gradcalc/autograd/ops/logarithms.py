"""exp and log in other bases and near zero: `exp2 expm1 log2 log10 log1p`, each a `unary(...)` row (ops/unary.py).

A family loaded at first use (ops/lazy.py).
"""

from __future__ import annotations

import numpy as np

from .. import spec
from .binary import add_scalar, mul_scalar
from .unary import unary

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

# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (expm1, log2, log10, log1p, exp2):
    _row.__module__ = __name__
