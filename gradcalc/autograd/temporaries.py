"""Reusing arrays nobody else holds, as NumPy's own temporary elision does.

Four helpers, each for one kind of call site, none of which passes a reference count:

- `temporary_operand(a)`: in a binary operator's method (`Tensor.__add__`), whether its left operand is a
  temporary that dies with the expression (`s * x` in `s * x + e`), so the result may go into its array;
- `temporary_argument(x)`: the same for a function's argument (`exp(x * 2.0)`);
- `times(f, g)`: `g * f` for a backward formula, written into the factor `f` when only the formula's
  variable holds it;
- `sum_into(old, g)`: the backward walk's sum of two gradients (`plan.sum_grads`), written into one that
  only the walk holds;
- `spare_times(f, g)`: `g * f` in a batched formula (`Node.apply_batched`), written into `g` when the
  batched walk found that nothing else holds it (`state.spare`, set by batched.py, which reads the count).

Each decides from CPython's reference counts, which differ between versions in how the interpreter's stack
and calls hold objects. So no count is written down here: at import, `_calibrate` calls each helper exactly
as its callers do, on a fresh object with no other holder and again with one more, and reads the counts
the helper sees. Reuse is on only when those counts are the same on every call and one more holder always
shows. It is off on other Pythons (PyPy, free-threaded builds, whose counts are split between threads) and
on CPython versions where it was not measured: 3.11, 3.12 and 3.13 see the same counts; 3.14 lets the
interpreter's stack borrow references, which no count shows, so it needs measuring before it is let in.
Off, results are the same: only memory and time differ.
"""

from __future__ import annotations

import opcode
import sys
from typing import Any

import numpy as np

from .grad_mode import state

# Below this many elements a new array costs less than proving that an old one may be reused.
REUSE_MIN_SIZE = 1024
# On by calibration (end of this file); tests and benchmarks may turn it off to compare.
REUSE_TEMPORARIES = False

# The counts each helper sees for an object that nothing but its callers' expected references hold; set by
# `_calibrate` (-1: never).
_OPERAND = _ARGUMENT = _OWN_DATA = _VARIABLE = _WALK = -1
# While calibrating, the counts the helpers saw, in order; None otherwise.
_seen: list[int] | None = None

_BINARY_OP = opcode.opmap["BINARY_OP"]


def temporary_operand(a: Any) -> bool:
    """Whether `a`, a tensor that a binary operator's method (`__add__`) received as its left operand, is
    a temporary about to die with the expression, whose array the operator may overwrite with its result.

    Call it as `temporary_operand(a)` from the method itself, `a` being its parameter. True only when
    nothing else holds the tensor or its array (see `_reusable`) and the method was called by the
    interpreter's binary operator: a direct call `t.__add__(b)` gives a named `t` the count that a
    temporary has under `+`."""
    refs = sys.getrefcount(a)
    data_refs = sys.getrefcount(a._data)
    if _seen is not None:
        _seen.extend((refs, data_refs))
    return (
        refs <= _OPERAND
        and data_refs <= _OWN_DATA
        and REUSE_TEMPORARIES
        and _reusable(a)
        and _in_binary_operator(sys._getframe(1).f_back)
    )


def temporary_argument(x: Any) -> bool:
    """Whether `x`, a tensor a function received as its argument (`exp(x * 2.0)`), is a temporary about to
    die with the call, whose array the function may overwrite with its result.

    Call it as `temporary_argument(x)` from the function itself, `x` being its parameter: nothing but that
    parameter may hold the tensor, nothing but the tensor its array (see `_reusable`)."""
    refs = sys.getrefcount(x)
    data_refs = sys.getrefcount(x._data)
    if _seen is not None:
        _seen.extend((refs, data_refs))
    return refs <= _ARGUMENT and data_refs <= _OWN_DATA and REUSE_TEMPORARIES and _reusable(x)


def _reusable(t: Any) -> bool:
    """Whether a tensor nobody else holds may give its array to a result: no view or detached alias shares
    the array (no version counter yet), it is not an inference tensor, and the array is a writable
    floating-point array of its own."""
    d = t._data
    return t._vc is None and not t._inference and d.base is None and d.dtype.kind == "f" and d.flags.writeable


def _in_binary_operator(frame: Any) -> bool:
    """Whether `frame`, the caller of an operator's method, is running a binary operator (`a + b`): only
    then is a count like a temporary's that of a temporary on the interpreter's stack. (Not proof against
    C code that adds, from within a `+` of its own, an object it holds: a NumPy object array of tensors,
    `objs + 1.0`, would pass for a temporary as it did before this check; NumPy's own elision inspects the
    C stack for this, which Python cannot.)"""
    return frame is not None and frame.f_code.co_code[frame.f_lasti] == _BINARY_OP


def times(f: Any, g: Any) -> Any:
    """`g * f` for a backward formula (PyTorch's `grad * factor`); call it as `times(f, g)` with the factor
    in one variable of the formula.

    In a plain backward (bare arrays), when nothing but that variable holds `f` (a fresh intermediate such
    as `cos(x)`, or a saved value its node has let go), the product is written into `f` instead of a new
    array; and when `g` is the constant 1 that a sum hands the nodes below it (a broadcast of 1: every
    stride 0), the product is `f` itself, with no pass over the data at all, or a copy of `f` when
    something else holds it (a copy costs less than a product)."""
    if (
        type(f) is np.ndarray
        and type(g) is np.ndarray
        and f.size >= REUSE_MIN_SIZE
        and f.shape == g.shape
        and f.dtype == g.dtype
    ):
        refs = sys.getrefcount(f)
        if _seen is not None:
            _seen.append(refs)
        one = not any(g.strides) and g.flat[0] == 1
        if refs <= _VARIABLE and REUSE_TEMPORARIES and f.base is None and f.flags.writeable:
            return f if one else np.multiply(g, f, out=f)
        if one:
            return f.copy()
    return g * f


def spare_times(f: Any, g: Any, last: bool = True) -> Any:
    """`g * f` in a batched formula (`Node.apply_batched`): written into `g` at the formula's `last` use of
    it when the batched walk handed it over as spare (nothing else holds it), else into an array of the
    walk's pool (`state.pool`), when the product has `g`'s shape and dtype. A batched gradient is `rows`
    times the size of its factor: a new array of that size costs page faults each time, and NumPy's product
    into one runs at a fraction of the speed of one in place, which stays in the cache."""
    if type(f) is np.ndarray:
        fits = f.dtype == g.dtype and f.ndim < g.ndim and all(
            a == b or a == 1 for a, b in zip(reversed(f.shape), reversed(g.shape), strict=False))
    else:  # a Python number keeps a float array's dtype; a NumPy scalar must have it
        fits = type(f) is float or type(f) is int or getattr(f, "dtype", None) == g.dtype
    if fits and g.dtype.kind == "f":
        if last and g is state.spare:
            state.spare = None  # once: a later product must not see this one's result as its `g`
            return np.multiply(g, f, out=g)
        out = take(g)
        if out is not None:
            return np.multiply(g, f, out=out)
    return g * f


def take(like: np.ndarray) -> np.ndarray | None:
    """An array of the batched walk's pool with the shape and dtype of `like`, taken out of it; None when
    there is none (or no batched walk is running)."""
    pool = state.pool
    if pool:
        for i, a in enumerate(pool):
            if a.shape == like.shape and a.dtype == like.dtype:
                return pool.pop(i)
    return None


def sum_into(old: Any, g: Any) -> Any:
    """`old + g` written into `old` or into `g`, for the backward walk's `plan.sum_grads`, or None when
    neither may take it; call it as `sum_into(old, g)` from the function the walk hands both gradients to.

    An array may take the sum when nothing holds it but the walk (a buffer, or the tuple a node returned,
    and one variable), so that a leaf reached by many paths costs one array, not one per path. Any other
    holder (a `.grad`, a saved value, a captured gradient, the same array passed on to two nodes, a view's
    link to its base) shows in the count, and the sum is then left to the caller, as a new array."""
    if type(old) is np.ndarray:
        refs = sys.getrefcount(old)
        if _seen is not None:
            _seen.append(refs)
        if refs <= _WALK and REUSE_TEMPORARIES and _takes(old, g):
            old += g
            return old
    if type(g) is np.ndarray:
        refs = sys.getrefcount(g)
        if _seen is not None:
            _seen.append(refs)
        if refs <= _WALK and REUSE_TEMPORARIES and _takes(g, old):
            g += old
            return g
    return None


def _takes(a: np.ndarray, b: Any) -> bool:
    """Whether `a += b` may write into `a` (which nobody else holds): the sum has `a`'s shape and dtype,
    and `a` owns its memory."""
    if type(b) is np.ndarray:  # the common case, without np.shape (a Python function)
        return a.base is None and a.flags.writeable and a.shape == b.shape and a.dtype == b.dtype
    return a.base is None and a.flags.writeable and a.shape == np.shape(b) and a.dtype == getattr(b, "dtype", None)


# -- calibration: each helper called as its callers call it ------------------------------------------------
class _Probe:
    """A stand-in for a tensor: what the forward helpers read of one. (Its array, and the walk's below, are
    `np.empty`: only counts are read of them, never values, and `np.zeros` cost the calibration a third of its
    time, at every start-up.)"""

    __slots__ = ("_data", "_inference", "_vc")

    def __init__(self) -> None:
        self._data = np.empty(REUSE_MIN_SIZE)
        self._vc = None
        self._inference = False

    def __add__(self, other: Any) -> bool:  # as ops/arithmetic.py's operators
        return temporary_operand(self)


def _argument_caller(x: Any) -> bool:  # as ops/elementwise.py's unary operations
    return temporary_argument(x)


def _formula(g: np.ndarray, other: Any) -> Any:  # as a backward formula: the factor in one variable
    f = np.zeros(REUSE_MIN_SIZE)
    held = f if other else None  # noqa: F841 (one more holder)
    return times(f, g)


def _engine_sum(old: Any, g: Any) -> Any:  # as plan.sum_grads, which the plain walk calls
    return sum_into(old, g)


def _walk(other: bool) -> Any:  # as the walk: each gradient in a container (buffer or tuple) and a variable
    buffers = {0: np.empty(REUSE_MIN_SIZE)}
    outs = (np.empty(REUSE_MIN_SIZE),)
    old = buffers.get(0)
    g = outs[0]
    held = (old, g) if other else None  # noqa: F841 (one more holder of each)
    return _engine_sum(old, g)


def _counts(other: bool) -> list[int]:
    """The counts the helpers see, in order: the operand and its array, the argument and its array, the
    factor, the walk's two gradients; with `other`, each object (tensor or array) has one more holder."""
    global _seen
    _seen = []
    try:
        if other:
            p = _Probe()  # named: one more holder of the tensor
            held = p._data  # and of its array
            p + 1.0
            q = _Probe()
            held = q._data
            _argument_caller(q)
            del held, p, q
        else:
            _Probe() + 1.0
            _argument_caller(_Probe())
        _formula(np.ones(REUSE_MIN_SIZE), other)
        _walk(other)
        return _seen
    finally:
        _seen = None


def _calibrate() -> None:
    """Read each helper's counts as its callers make them (several times: the interpreter specializes a call
    site after a few runs), and turn reuse on where one more holder always shows."""
    global _OPERAND, _ARGUMENT, _OWN_DATA, _VARIABLE, _WALK, REUSE_TEMPORARIES
    if (
        sys.implementation.name != "cpython"
        or not (3, 11) <= sys.version_info[:2] <= (3, 13)
        or not getattr(sys, "_is_gil_enabled", lambda: True)()  # a free-threaded build: counts are split
    ):
        return
    sole = {tuple(_counts(False)) for _ in range(8)}
    held = {tuple(_counts(True)) for _ in range(8)}
    if len(sole) != 1 or len(held) != 1:
        return
    (s,), (h,) = sole, held
    if len(s) != 7 or len(h) != 7 or any(b != a + 1 for a, b in zip(s, h, strict=True)):
        return
    if s[1] != s[3] or s[5] != s[6]:
        return
    _OPERAND, _OWN_DATA, _ARGUMENT, _VARIABLE, _WALK = s[0], s[1], s[2], s[4], s[5]
    REUSE_TEMPORARIES = True
    # the operator's other condition, end to end: a temporary through `+` is one, through a call it is not
    # (`_Probe().__add__(1.0)` has a temporary's count, but is a call, not an operator)
    if not (_Probe() + 1.0) or _Probe().__add__(1.0) or not _argument_caller(_Probe()):
        REUSE_TEMPORARIES = False


_calibrate()
