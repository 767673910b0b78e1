"""`gradcheck` and `gradgradcheck`: a function's backward against central finite differences.

The analytic Jacobian is built row by row with `autograd.grad` (basis vectors as `grad_outputs`), the
numerical one column by column as `(f(x + eps e_k) - f(x - eps e_k)) / (2 eps)`, and the two must agree
within `atol + rtol * |numerical|` everywhere, as PyTorch's `gradcheck` requires.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .tensor import Tensor


def _grad(*args: Any, **kwargs: Any) -> Any:
    """autograd.grad (differentiate.py): gradcheck is loaded at start-up (PyTorch's `torch.autograd.gradcheck`),
    the engine at the first backward."""
    from .differentiate import grad  # (here: the engine stays off the start-up path)

    return grad(*args, **kwargs)

MAX_LISTED = 5  # mismatching entries named in the error message


class GradcheckError(RuntimeError):
    """A gradient check failed: the message names the mismatching entries."""


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _float_outputs(outputs: Any) -> tuple[Tensor, ...]:
    """The function's outputs that can have derivatives (floating-point tensors)."""
    outs = _as_tuple(outputs)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(f"gradcheck: the function must return tensors, but output {i} is a {type(o).__name__}")
    return tuple(o for o in outs if o._data.dtype.kind == "f")


def _analytic(outs: tuple[Tensor, ...], wrt: list[Tensor]) -> list[list[np.ndarray]]:
    """Per output and input, the Jacobian from backward as an (output size, input size) float64 array."""
    jac = [[np.zeros((o._data.size, t._data.size)) for t in wrt] for o in outs]
    for i, o in enumerate(outs):
        if not o._requires_grad:
            continue  # zeros: finite differences must then find no dependence either
        n = o._data.size
        for r in range(n):
            basis = np.zeros(n, dtype=o._data.dtype)
            basis[r] = 1
            e = Tensor._make(basis.reshape(o._data.shape), False, None)
            gs = _grad(o, wrt, grad_outputs=e, retain_graph=True, allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    jac[i][k][r] = g._data.reshape(-1)
    return jac


def _numerical(
    func: Callable[..., Any], inputs: tuple, checked: list[int], sizes: list[int], eps: float
) -> list[list[np.ndarray]]:
    """Per output (of `sizes` elements) and checked input, the central-difference Jacobian, in float64.

    Each evaluation gets fresh copies of the inputs (with their requires_grad), one element moved by eps:
    the caller's tensors are never changed."""

    def run(k: int, flat: int, delta: float) -> list[np.ndarray]:
        args = []
        for j, a in enumerate(inputs):
            if isinstance(a, Tensor):
                data = a._data.copy()
                if j == k:
                    data.reshape(-1)[flat] += delta
                a = Tensor._make(data, False, None).requires_grad_(a._requires_grad)
            args.append(a)
        return [o._data.astype(np.float64).reshape(-1) for o in _float_outputs(func(*args))]

    jac = [[np.zeros((n, inputs[k]._data.size)) for k in checked] for n in sizes]
    for c, k in enumerate(checked):
        for flat in range(inputs[k]._data.size):
            plus, minus = run(k, flat, eps), run(k, flat, -eps)
            for i, (p, m) in enumerate(zip(plus, minus, strict=True)):
                jac[i][c][:, flat] = (p - m) / (2 * eps)
    return jac


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def gradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check `func`'s derivatives against finite differences at `inputs` (a tensor or a tuple of arguments).

    Every tensor input that requires grad is checked, with respect to every floating-point output.
    Returns True; on a mismatch raises `GradcheckError` naming the output, input, elements and both values
    (or returns False with `raise_exception=False`). Inputs should be float64: float32 is too coarse for
    finite differences. A backward that gives different results for the same input (beyond `nondet_tol`)
    fails too. `fast_mode` is accepted for PyTorch compatibility (the full check is always made).

    As PyTorch's: `check_backward_ad` checks backward (the Jacobian by `autograd.grad`), `check_forward_ad`
    forward mode (the Jacobian by JVPs, `forward_ad`); `check_undefined_grad` checks that backward given
    zero output gradients gives zero input gradients; `check_batched_grad` (`check_batched_forward_grad`)
    that vector-Jacobian (Jacobian-vector) products mapped with `func.vmap` over a batch of vectors agree
    with the products computed one by one. `check_grad_dtypes` checks that each gradient has its input's
    dtype. `masked` is accepted for compatibility.
    """
    args = _as_tuple(inputs)
    checked = [k for k, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input requires grad, so there is nothing to check; "
                         "create the inputs with requires_grad=True")
    for k in checked:
        if args[k]._data.dtype != np.float64:
            warnings.warn(
                f"gradcheck: input {k} is {args[k]._data.dtype}, not float64: finite differences in that "
                "precision will likely disagree with backward; use .double() inputs",
                UserWarning,
                stacklevel=2,
            )
    wrt = [args[k] for k in checked]
    outs = _float_outputs(func(*args))
    numerical = _numerical(func, args, checked, [o._data.size for o in outs], eps)
    if check_forward_ad:
        forward = _forward_jacobian(func, args, checked, outs)
        if not _compare(forward, numerical, outs, args, checked, atol, rtol, raise_exception, "forward-mode JVP"):
            return False
        if check_batched_forward_grad and not _check_batched(func, args, checked, raise_exception, forward=True):
            return False
    if not check_backward_ad:
        return True
    analytic = _analytic(outs, wrt)
    if check_grad_dtypes:
        for o in outs:
            if o._requires_grad:
                gs = _grad(o, wrt, grad_outputs=Tensor._make(np.ones_like(o._data), False, None), retain_graph=True,
                          allow_unused=True)
                for k, g in zip(checked, gs, strict=True):
                    if g is not None and g._data.dtype != args[k]._data.dtype:
                        return _fail(f"gradcheck: the gradient of input {k} is {g._data.dtype}, but the input is "
                                     f"{args[k]._data.dtype}", raise_exception)
    if check_undefined_grad and not _check_undefined(outs, wrt, checked, raise_exception):
        return False
    if check_batched_grad and not _check_batched(func, args, checked, raise_exception, forward=False):
        return False
    again = _analytic(_float_outputs(func(*args)), wrt)
    for i, (rows_a, rows_b) in enumerate(zip(analytic, again, strict=True)):
        for c, (a, b) in enumerate(zip(rows_a, rows_b, strict=True)):
            if np.abs(a - b).max(initial=0.0) > nondet_tol:
                return _fail(
                    f"gradcheck: backward is not deterministic: two runs on the same input gave different "
                    f"gradients of output {i} with respect to input {checked[c]} (largest difference "
                    f"{np.abs(a - b).max():.6g}); raise nondet_tol if that is expected",
                    raise_exception,
                )
    return _compare(analytic, numerical, outs, args, checked, atol, rtol, raise_exception, "gradient")


def _compare(analytic: list, numerical: list, outs: tuple[Tensor, ...], args: tuple, checked: list[int],
             atol: float, rtol: float, raise_exception: bool, what: str) -> bool:
    """The Jacobians against the numerical ones, entry by entry; the error names the mismatches."""
    for i, o in enumerate(outs):
        for c, k in enumerate(checked):
            a, n = analytic[i][c], numerical[i][c]
            bad = np.argwhere(~(np.abs(a - n) <= atol + rtol * np.abs(n)))
            if len(bad) == 0:
                continue
            entries = "\n".join(
                f"  output element {_index(r, o._data.shape)}, input element {_index(e, args[k]._data.shape)}: "
                f"numerical {n[r, e]:.6g}, analytic {a[r, e]:.6g}"
                for r, e in bad[:MAX_LISTED]
            )
            more = f"\n  ... and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
            note = " (the output does not require grad, so backward gives zeros)" if not o._requires_grad and \
                what == "gradient" else ""
            return _fail(
                f"gradcheck: the {what} of output {i} with respect to input {k} disagrees with finite "
                f"differences{note} at {len(bad)} of {a.size} entries (atol={atol}, rtol={rtol}):\n"
                f"{entries}{more}\nnumerical Jacobian:\n{n}\nanalytic Jacobian:\n{a}",
                raise_exception,
            )
    return True


def _forward_jacobian(func: Callable[..., Any], args: tuple, checked: list[int],
                      outs: tuple[Tensor, ...]) -> list[list[np.ndarray]]:
    """Per output and checked input, the Jacobian by forward mode: one JVP per input element."""
    from . import forward_ad as fw  # (here: forward AD loads at its first use, off the start-up path)

    jac = [[np.zeros((o._data.size, args[k]._data.size)) for k in checked] for o in outs]
    for c, k in enumerate(checked):
        x = args[k]
        for e in range(x._data.size):
            basis = np.zeros(x._data.size, dtype=x._data.dtype)
            basis[e] = 1
            level = fw.enter_dual_level()
            try:
                call = list(args)
                call[k] = fw.make_dual(x, Tensor._make(basis.reshape(x._data.shape), False, None), level=level)
                for i, o in enumerate(_float_outputs(func(*call))):
                    t = fw.unpack_dual(o, level=level).tangent
                    if t is not None:
                        jac[i][c][:, e] = t._data.astype(np.float64).reshape(-1)
            finally:
                fw.exit_dual_level(level=level)
    return jac


def _check_undefined(outs: tuple[Tensor, ...], wrt: list[Tensor], checked: list[int], raise_exception: bool) -> bool:
    """Backward given zero output gradients (PyTorch's undefined ones) must give zero input gradients."""
    for i, o in enumerate(outs):
        if not o._requires_grad:
            continue
        zero = Tensor._make(np.zeros_like(o._data), False, None)
        gs = _grad(o, wrt, grad_outputs=zero, retain_graph=True, allow_unused=True)
        for k, g in zip(checked, gs, strict=True):
            if g is not None and np.any(g._data != 0):
                return _fail(f"gradcheck: given a zero gradient for output {i}, backward gave a nonzero gradient "
                             f"for input {k}; a backward must map zero gradients to zero", raise_exception)
    return True


def _check_batched(func: Callable[..., Any], args: tuple, checked: list[int], raise_exception: bool,
                   forward: bool) -> bool:
    """Products over a batch of random vectors by `func.vmap` against the same products one by one."""
    from ..func import jvp, vjp, vmap  # gradcalc.func loads on first use: off the start-up path

    rng = np.random.default_rng(0)
    wrt = [args[k] for k in checked]

    def call(*xs: Tensor) -> tuple[Tensor, ...]:
        full = list(args)
        for k, x in zip(checked, xs, strict=True):
            full[k] = x
        return _float_outputs(func(*full))

    if forward:
        def product(*vs: Tensor) -> tuple[Tensor, ...]:
            return jvp(call, tuple(wrt), vs)[1]
        shapes = [x._data.shape for x in wrt]
    else:
        outs, fn = vjp(call, *wrt)
        def product(*vs: Tensor) -> tuple[Tensor, ...]:
            return fn(vs)
        shapes = [o._data.shape for o in outs]
    batch = [Tensor._make(rng.standard_normal((2, *s)), False, None) for s in shapes]
    together = vmap(product)(*batch)
    for b in range(2):
        alone = product(*(Tensor._make(v._data[b], False, None) for v in batch))
        for i, (t, a) in enumerate(zip(together, alone, strict=True)):
            if not np.allclose(t._data[b], a._data, rtol=1e-10, atol=1e-12):
                kind = "Jacobian-vector" if forward else "vector-Jacobian"
                return _fail(f"gradcheck: batched {kind} products disagree with the products one by one (result "
                             f"{i}, batch element {b})", raise_exception)
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check second derivatives: `gradcheck` of the map (inputs, grad_outputs) -> gradients of `func`
    (computed with create_graph). Without `grad_outputs`, random ones (fixed seed) are used.
    `check_rev_over_rev` checks them by backward, `check_fwd_over_rev` by forward mode (the tangents of the
    gradients); the other flags are `gradcheck`'s."""
    args = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _float_outputs(func(*args))
        gouts = tuple(
            Tensor._make(np.asarray(rng.uniform(-1, 1, o._data.shape), dtype=o._data.dtype), False, None)
            .requires_grad_()
            for o in outs
        )
    else:
        gouts = _as_tuple(grad_outputs)
    m = len(gouts)
    diff = [k for k, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]

    def first_derivatives(*xs: Any) -> tuple[Tensor, ...]:
        ins, gs = xs[:-m], xs[-m:]
        # outputs that do not require grad contribute nothing (and grad() refuses them)
        pairs = [(o, g) for o, g in zip(_float_outputs(func(*ins)), gs, strict=True) if o._requires_grad]
        if not pairs:
            return ()
        grads = _grad([o for o, _ in pairs], [ins[k] for k in diff], grad_outputs=[g for _, g in pairs],
                     create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, args + gouts, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, fast_mode=fast_mode,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
