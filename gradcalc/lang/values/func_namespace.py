"""The functions of the language's `func` namespace: PyTorch's `torch.func` transforms (LANGUAGE.md
section 9).

`func` is a predefined name whose value is a `Namespace` (namespace.py) of `MEMBERS`, loaded on first use;
`func.grad` is one of them, with torch.func's signature; `func.grad(f)` is a `Transformed` function, and
calling it runs gradcalc.func's transform (loaded then). Each checks its arguments and the function's results
in the language's words (transforms.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradcalc.func
from gradcalc import Tensor

from ..errors import GradcalcError
from .convert import describe, whole
from .transforms import Transformed, as_function, call_engine, checked, flag, function_name, primal


def _engine() -> Any:
    return gradcalc.func


# -- the arguments of the transforms -------------------------------------------------------------------------
def _argnums(value: Any, label: str) -> int | tuple[int, ...]:
    """`argnums=`: a whole number, or a tuple (or list) of them."""
    try:
        if isinstance(value, (tuple, list)):
            return tuple(whole(v, "argnums") for v in value)
        return whole(value, "argnums")
    except GradcalcError:
        raise GradcalcError(f"{label}: argnums must be a whole number or a tuple of them (which arguments "
                            f"to differentiate), not {describe(value)}") from None


def _dims(value: Any, label: str, name: str) -> Any:
    """`in_dims=`/`out_dims=`: a whole number, none, or a tuple (or list) of those (nested as the arguments)."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(_dims(v, label, name) for v in value)
    try:
        return whole(value, name)
    except GradcalcError:
        raise GradcalcError(f"{label}: {name} must be a dimension (a whole number), none (not mapped) or a tuple "
                            f"of those, not {describe(value)}") from None


def _primals_tuple(value: Any, label: str, name: str) -> tuple[Any, ...]:
    """func.jvp's primals and tangents: a tuple (or list) of tensors, as torch.func asks."""
    if not isinstance(value, (tuple, list)):
        raise GradcalcError(f"{label}: {name} must be a tuple of tensors (write ({name[0]},) for one), "
                            f"not {describe(value)}")
    return tuple(primal(v) for v in value)


def _check_tangents(primals: tuple[Any, ...], tangents: tuple[Any, ...], label: str) -> None:
    if len(primals) != len(tangents):
        raise GradcalcError(f"{label}: tangents must have one tensor per primal: {len(primals)} primal(s), "
                            f"{len(tangents)} tangent(s)")
    for i, (p, t) in enumerate(zip(primals, tangents, strict=True)):
        if isinstance(p, Tensor) and isinstance(t, Tensor) and tuple(p.shape) != tuple(t.shape):
            raise GradcalcError(f"{label}: tangent {i} has shape {tuple(t.shape)} but primal {i} has shape "
                                f"{tuple(p.shape)}; they must match")


# -- the transforms ------------------------------------------------------------------------------------------
def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Transformed:
    """A function computing the gradient of func (which returns a 0-d tensor) with respect to its argument
    argnums (a tuple of them gives a tuple): func.grad(f)(x). With has_aux=true, f returns (output, aux) and
    the result is (gradient, aux)."""
    return _gradient("grad", func, argnums, has_aux)


def grad_and_value(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Transformed:
    """Like func.grad, returning (gradient, value): func.grad_and_value(f)(x)."""
    return _gradient("grad_and_value", func, argnums, has_aux)


def _gradient(name: str, func: Any, argnums: Any, has_aux: Any) -> Transformed:
    label = f"func.{name}"
    f = as_function(func, label)
    aux = flag(has_aux, label, "has_aux")
    made = getattr(_engine(), name)(checked(f, label, "tensor", aux), _argnums(argnums, label), aux)
    return Transformed(f"{label}({function_name(f)})", made)


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), vjp_fn): vjp_fn(v) gives the vector-Jacobian product, a tuple with one entry per
    primal; v has the output's shape. With has_aux=true: (output, vjp_fn, aux)."""
    label = "func.vjp"
    f = as_function(func, label)
    aux = flag(has_aux, label, "has_aux")
    if not primals:
        raise GradcalcError(f"{label}: give the point to differentiate at: func.vjp(f, x)")
    result = call_engine(label, _engine().vjp, checked(f, label, "tensors", aux), *(primal(p) for p in primals),
                         has_aux=aux)
    return (result[0], Transformed("vjp_fn", result[1]), *result[2:])


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), J·tangents), by forward-mode differentiation: primals and tangents are tuples of
    tensors of the same shapes: func.jvp(f, (x,), (v,)). With has_aux=true: (output, jvp, aux)."""
    label = "func.jvp"
    f = as_function(func, label)
    aux = flag(has_aux, label, "has_aux")
    ps = _primals_tuple(primals, label, "primals")
    ts = _primals_tuple(tangents, label, "tangents")
    _check_tangents(ps, ts, label)
    return call_engine(label, _engine().jvp, checked(f, label, "tensors", aux), ps, ts,
                       strict=flag(strict, label, "strict"), has_aux=aux)


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Transformed]:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) gives the Jacobian-vector product at primals, by forward
    mode, without evaluating func again."""
    label = "func.linearize"
    f = as_function(func, label)
    result = call_engine(label, _engine().linearize, checked(f, label, "tensors"), *(primal(p) for p in primals))
    return result[0], Transformed("jvp_fn", result[1])


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False, chunk_size: Any = None) -> Transformed:
    """A function computing the Jacobian of func with respect to argument argnums by reverse mode (one
    gradient per output element): func.jacrev(f)(x) has shape output.shape + x.shape."""
    label = "func.jacrev"
    f = as_function(func, label)
    aux = flag(has_aux, label, "has_aux")
    size = None if chunk_size is None else whole(chunk_size, "chunk_size")
    made = call_engine(label, _engine().jacrev, checked(f, label, "tensors", aux), _argnums(argnums, label),
                       has_aux=aux, chunk_size=size)
    return Transformed(f"{label}({function_name(f)})", made)


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Transformed:
    """A function computing the Jacobian of func with respect to argument argnums by forward mode (one
    Jacobian-vector product per input element): func.jacfwd(f)(x), or func.jacfwd(func.jacrev(f))(x)."""
    label = "func.jacfwd"
    f = as_function(func, label)
    aux = flag(has_aux, label, "has_aux")
    made = call_engine(label, _engine().jacfwd, checked(f, label, "tensors", aux), _argnums(argnums, label), aux,
                       randomness=randomness)
    return Transformed(f"{label}({function_name(f)})", made)


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Transformed:
    """A function computing the Hessian of func (which returns a 0-d tensor) with respect to argument
    argnums: func.jacfwd(func.jacrev(f)), as torch.func.hessian."""
    label = "func.hessian"
    f = as_function(func, label)
    made = _engine().hessian(checked(f, label, "tensors"), _argnums(argnums, label))
    return Transformed(f"{label}({function_name(f)})", made)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: Any = None) -> Transformed:
    """func mapped over dimension in_dims of its arguments (a whole number for all, or a tuple with one entry
    per argument, none for one not mapped); the results are stacked along out_dims: func.vmap(f)(xs).
    gradcalc calls f once per index and stacks the results (the same values as PyTorch's batching)."""
    label = "func.vmap"
    f = as_function(func, label)
    size = None if chunk_size is None else whole(chunk_size, "chunk_size")
    made = call_engine(label, _engine().vmap, checked(f, label, "tensors"), _dims(in_dims, label, "in_dims"),
                       _dims(out_dims, label, "out_dims"), randomness, chunk_size=size)
    return Transformed(f"{label}({function_name(f)})", made)


MEMBERS: dict[str, Callable[..., Any]] = {
    "grad": grad, "grad_and_value": grad_and_value, "vjp": vjp, "jvp": jvp, "linearize": linearize,
    "jacrev": jacrev, "jacfwd": jacfwd, "hessian": hessian, "vmap": vmap,
}
