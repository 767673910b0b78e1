"""Rounding: `round floor ceil trunc frac`, each a `unary(...)` row (ops/unary.py). Piecewise constant, so their
gradient is PyTorch's zeros_like(grad) (0 at the jumps too); frac(x) = x - trunc(x) passes the gradient through
unchanged, as PyTorch's `self: grad`.

A family loaded at first use (ops/lazy.py).
"""

from __future__ import annotations

import numpy as np

from .unary import _zeros_like, unary


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

# ops/lazy.py files an operation under the module its function names: these rows' functions are made in unary.py
for _row in (round, floor, ceil, trunc, frac):
    _row.__module__ = __name__
