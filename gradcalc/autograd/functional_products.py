"""The products of `torch.autograd.functional`: `vjp`, `jvp`, `vhp`, `hvp`, each returning
`(func(inputs), product)`, written as PyTorch's are (so results, and their grad_fn under create_graph,
agree): `jvp` and `hvp` use the double-vjp trick (the transpose of a vjp, by a second backward) rather
than forward mode.

Inputs are prepared as PyTorch's `_grad_preprocess` does: under create_graph an input that requires grad
stays connected to its graph (`view_as` itself), any other becomes a detached leaf that requires grad.
Without create_graph the results are detached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .differentiate import grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .ops.shape import view_as
from .tensor import Tensor

__all__ = ["hvp", "jvp", "vhp", "vjp"]

Inputs = Tensor | tuple[Tensor, ...]


def as_tuple(value: Any, what: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """(was it a tuple, its tensors): a single tensor is treated as a tuple of one."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"element {i} is" if is_tuple else "it is"
            raise TypeError(f"{fn}: the {what} must be a tensor or a tuple of tensors, but {where} a "
                            f"{type(t).__name__}")
    return is_tuple, items


def _preprocess(items: tuple[Tensor, ...], create_graph: bool, need_graph: bool) -> tuple[Tensor, ...]:
    out = []
    for t in items:
        if create_graph and t._requires_grad:
            out.append(view_as(t, t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _postprocess(items: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    return items if create_graph else tuple(t.detach() for t in items)


def _unpack(items: tuple[Tensor, ...], was_tuple: bool) -> Any:
    return items if was_tuple else items[0]


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], fn: str, what: str) -> None:
    if len(v) != len(other):
        raise RuntimeError(f"{fn}: v has {len(v)} tensors but the {what} has {len(other)}: give one per {what[:-1]}")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if a._data.shape != b._data.shape:
            raise RuntimeError(
                f"{fn}: v[{i}] has shape {tuple(a._data.shape)} but the {what[:-1]} it goes with has shape "
                f"{tuple(b._data.shape)}; they must match"
            )


def _check_requires_grad(items: tuple[Any, ...], what: str, strict: bool, fn: str) -> None:
    if not strict:
        return
    for i, t in enumerate(items):
        if t is None or not t._requires_grad:
            detail = {
                "outputs": f"output {i} of the function does not require grad (it does not depend on the inputs)",
                "grad_inputs": f"the gradient of the outputs with respect to input {i} is independent of the "
                               "outputs' gradients (the function is not differentiable there)",
                "jacobian": f"the gradient with respect to input {i} does not depend on the inputs "
                            "(the function is linear in them)",
                "hessian": f"the Hessian with respect to input {i} is independent of the inputs",
            }[what]
            raise RuntimeError(f"{fn} (strict): {detail}; drop strict to get zeros")


def _grad(outputs: tuple[Tensor | None, ...], inputs: tuple[Tensor, ...], grad_outputs: Any = None,
          create_graph: bool = False) -> tuple[Tensor | None, ...]:
    """PyTorch's `_autograd_grad`: only outputs that require grad; None for every input when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o is not None and o._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    found = grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                 create_graph=create_graph, allow_unused=True)
    return tuple(found)


def _fill_in_zeros(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool,
                   create_graph: bool, fn: str) -> tuple[Tensor, ...]:
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(f"{fn} (strict): the result for position {i} is independent of the inputs; "
                                   "drop strict to get zeros")
            g = Tensor._make(np.zeros_like(ref._data), False, None)
        elif strict and create_graph and not g._requires_grad:
            raise RuntimeError(f"{fn} (strict): the result for position {i} does not depend on the inputs, so "
                               "with create_graph it cannot be differentiated; drop strict")
        out.append(g)
    return tuple(out)


def _single_element_v(items: tuple[Tensor, ...], fn: str, what: str) -> None:
    if len(items) != 1 or items[0]._data.size != 1:
        raise RuntimeError(f"{fn}: v can only be left out when the {what} is a single tensor with a single "
                           "element; pass v")


def vjp(func: Callable[..., Any], inputs: Inputs, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Jacobian product v^T J of `func` at `inputs`: returns `(func(inputs), vjp)`.

    `v` has the outputs' shapes (may be left out for a single-element output); the product has the inputs'.
    """
    with enable_grad():
        is_inputs_tuple, ins = as_tuple(inputs, "inputs", "vjp")
        ins = _preprocess(ins, create_graph, True)
        is_outputs_tuple, outs = as_tuple(func(*ins), "outputs of the function", "vjp")
        _check_requires_grad(outs, "outputs", strict, "vjp")
        if v is not None:
            _, vs = as_tuple(v, "v", "vjp")
            vs = _preprocess(vs, create_graph, False)
            _validate_v(vs, outs, "vjp", "outputs")
        else:
            vs = None
            _single_element_v(outs, "vjp", "function's output")
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            found = _grad(outs, ins, vs, create_graph)
            product = _fill_in_zeros(found, ins, strict, create_graph, "vjp")
    return (_unpack(_postprocess(outs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(product, create_graph), is_inputs_tuple))


def jvp(func: Callable[..., Any], inputs: Inputs, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Jacobian-vector product J v of `func` at `inputs`: returns `(func(inputs), jvp)`.

    `v` has the inputs' shapes (may be left out for a single-element input); the product has the outputs'.
    Computed as PyTorch's is, by the double-vjp trick (for forward mode see `gradcalc.func.jvp`)."""
    with enable_grad():
        is_inputs_tuple, ins = as_tuple(inputs, "inputs", "jvp")
        ins = _preprocess(ins, create_graph, True)
        if v is not None:
            _, vs = as_tuple(v, "v", "jvp")
            vs = _preprocess(vs, create_graph, False)
            _validate_v(vs, ins, "jvp", "inputs")
        else:
            vs = None
            _single_element_v(ins, "jvp", "input")
        is_outputs_tuple, outs = as_tuple(func(*ins), "outputs of the function", "jvp")
        _check_requires_grad(outs, "outputs", strict, "jvp")
        grad_outputs = tuple(Tensor._make(np.zeros_like(o._data), False, None).requires_grad_(True) for o in outs)
        grad_inputs = _grad(outs, ins, grad_outputs, True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict, "jvp")
        with set_grad_enabled(True) if create_graph else enable_grad():
            found = _grad(grad_inputs, grad_outputs, vs, create_graph)
            product = _fill_in_zeros(found, outs, strict, create_graph, "jvp")
    return (_unpack(_postprocess(outs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(product, create_graph), is_outputs_tuple))


def _scalar_output(func: Callable[..., Any], ins: tuple[Tensor, ...], fn: str, strict: bool) -> Tensor:
    result = func(*ins)
    is_outputs_tuple, outs = as_tuple(result, "outputs of the function", fn)
    _check_requires_grad(outs, "outputs", strict, fn)
    if is_outputs_tuple:
        raise RuntimeError(f"{fn}: the function must return a single tensor, not a tuple")
    if outs[0]._data.size != 1:
        raise RuntimeError(f"{fn}: the function's output must have a single element, but it has shape "
                           f"{tuple(outs[0]._data.shape)}; reduce it (for example with .sum())")
    return outs[0]


def vhp(func: Callable[..., Any], inputs: Inputs, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Hessian product v^T H of a function returning one element: `(func(inputs), vhp)`."""
    with enable_grad():
        is_inputs_tuple, ins = as_tuple(inputs, "inputs", "vhp")
        ins = _preprocess(ins, create_graph, True)
        vs = _products_v(v, ins, create_graph, "vhp")
        out = _scalar_output(func, ins, "vhp", strict)
        jac = _grad((out,), ins, None, True)
        _check_requires_grad(jac, "jacobian", strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(jac, ins, vs, create_graph)
        product = _fill_in_zeros(found, ins, strict, create_graph, "vhp")
    return (_postprocess((out,), create_graph)[0], _unpack(_postprocess(product, create_graph), is_inputs_tuple))


def hvp(func: Callable[..., Any], inputs: Inputs, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Hessian-vector product H v of a function returning one element: `(func(inputs), hvp)`, by the
    double-vjp trick as in PyTorch (for a symmetric Hessian it equals `vhp`)."""
    with enable_grad():
        is_inputs_tuple, ins = as_tuple(inputs, "inputs", "hvp")
        ins = _preprocess(ins, create_graph, True)
        vs = _products_v(v, ins, create_graph, "hvp")
        out = _scalar_output(func, ins, "hvp", strict)
        jac = _grad((out,), ins, None, True)
        _check_requires_grad(jac, "jacobian", strict, "hvp")
        grad_jac = tuple(Tensor._make(np.zeros_like(t._data), False, None).requires_grad_(True) for t in ins)
        double_back = _grad(jac, ins, grad_jac, True)
        _check_requires_grad(jac, "hessian", strict, "hvp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(double_back, grad_jac, vs, create_graph)
        product = _fill_in_zeros(found, ins, strict, create_graph, "hvp")
    return (_postprocess((out,), create_graph)[0], _unpack(_postprocess(product, create_graph), is_inputs_tuple))


def _products_v(v: Any, ins: tuple[Tensor, ...], create_graph: bool, fn: str) -> tuple[Tensor, ...] | None:
    if v is None:
        _single_element_v(ins, fn, "input")
        return None
    _, vs = as_tuple(v, "v", fn)
    vs = _preprocess(vs, create_graph, False)
    _validate_v(vs, ins, fn, "inputs")
    return vs
