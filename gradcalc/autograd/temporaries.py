"""Reusing arrays nobody else holds, as NumPy's own temporary elision does.

A forward operator may write its result into a dying temporary operand (`ops/core.dying`), the backward
walk may add a gradient into a buffer's array in place (`engine._sum`), and a backward formula may write
`factor * grad` into its factor (`times`), when CPython's reference count proves that nothing else holds
the array. The counts are those of the CPython this was measured on
(3.11, the project's); other versions count stack references differently (3.14 borrows them), so there
the reuse is simply off: results are the same, only memory and time differ.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

REUSE_TEMPORARIES = sys.version_info[:2] == (3, 11)
# Below this many elements a new array costs less than proving that an old one may be reused.
REUSE_MIN_SIZE = 1024

# `sys.getrefcount(f)` taken as an argument of `times(f, g, ...)`, for an array the caller holds in one
# variable and nothing else holds: that variable, `times`'s own argument, and getrefcount's.
SOLE_ARGUMENT = 3


def times(f: Any, g: Any, refs: int) -> Any:
    """`g * f` for a backward formula (PyTorch's `grad * factor`), `refs` being `sys.getrefcount(f)` taken
    in the call.

    In a plain backward (bare arrays), when the count shows that only the caller's variable holds `f` (a
    fresh intermediate such as `cos(x)`, or a saved value its node has let go), the product is written into
    `f` instead of a new array; and when `g` is the constant 1 that a sum hands the nodes below it (a
    broadcast of 1: every stride 0), the product is `f` itself, with no pass over the data at all, or a
    copy of `f` when something else holds it (a copy costs less than a product)."""
    if (
        type(f) is np.ndarray
        and type(g) is np.ndarray
        and f.size >= REUSE_MIN_SIZE
        and f.shape == g.shape
        and f.dtype == g.dtype
    ):
        one = not any(g.strides) and g.flat[0] == 1
        if refs <= SOLE_ARGUMENT and REUSE_TEMPORARIES and f.base is None and f.flags.writeable:
            return f if one else np.multiply(g, f, out=f)
        if one:
            return f.copy()
    return g * f
