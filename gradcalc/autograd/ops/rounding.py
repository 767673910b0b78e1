"""Rounding and signs: `round floor ceil trunc frac`, and `abs`, `sign` and `sgn`, each a `unary(...)` row
(ops/unary.py). Rounding is piecewise constant, so its gradient is PyTorch's zeros_like(grad) (0 at the jumps too);
frac(x) = x - trunc(x) passes the gradient through unchanged, as PyTorch's `self: grad`. abs's gradient is
grad * sgn(x), 0 at 0.

A family loaded at first use (ops/lazy.py).
"""

from __future__ import annotations

import numpy as np

from .unary import _zeros_like, unary


def _sign(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "b":  # PyTorch's sign of a bool tensor is itself; NumPy has none
        return a.copy()
    r = np.sign(a)
    if a.dtype.kind == "f":  # PyTorch's sign(nan) is 0, NumPy's is nan
        r = np.asarray(r)
        r[np.isnan(r)] = 0
    return r


def _frac(a: np.ndarray) -> np.ndarray:
    # the fractional part with the sign of a, as PyTorch's x - trunc(x)
    return a - np.trunc(a)


round = unary("round", forward=np.round, node="RoundBackward0", saves="", formula="zeros_like(grad)",  # noqa: A001
              backward=lambda g, x, y: _zeros_like(g))
floor = unary("floor", forward=np.floor, node="FloorBackward0", saves="", formula="zeros_like(grad)",
              backward=lambda g, x, y: _zeros_like(g))
ceil = unary("ceil", forward=np.ceil, node="CeilBackward0", saves="", formula="zeros_like(grad)",
             backward=lambda g, x, y: _zeros_like(g))
trunc = unary("trunc", forward=np.trunc, node="TruncBackward0", saves="", formula="zeros_like(grad)",
              backward=lambda g, x, y: _zeros_like(g))
frac = unary("frac", forward=_frac, node="FracBackward0", saves="", formula="grad", backward=lambda g, x, y: g)

# sign(0) = 0: abs has gradient 0 at 0, as PyTorch's grad * sgn(x)
abs = unary("abs", forward=np.abs, node="AbsBackward0", saves="self", formula="grad * self.sgn()",  # noqa: A001
            factor=lambda x, y: sgn(x))
sign = unary("sign", forward=_sign, node="SignBackward0", saves="", formula="zeros_like(grad)",
             backward=lambda g, x, y: _zeros_like(g))
# abs's derivative, as PyTorch writes it (`grad * self.sgn()`): sign under its own node name (for real tensors
# sgn is sign; PyTorch's sgn_backward is zero there)
sgn = unary("sgn", forward=_sign, node="SgnBackward0", saves="self result", formula="sgn_backward(self, grad, result)",
            backward=lambda g, x, y: _zeros_like(g))

# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (round, floor, ceil, trunc, frac, abs, sign, sgn):
    _row.__module__ = __name__
