"""Whole derivatives of a function, as PyTorch's `torch.autograd.functional`: the products `vjp`, `jvp`,
`vhp`, `hvp` (functional_products.py) and `jacobian`, `hessian` (here).

`jacobian` is built on `autograd.grad`, one row at a time (or on forward mode, one column at a time, with
`strategy="forward-mode"`): row j of the Jacobian of an output is the gradient of
that output against the j-th basis vector as `grad_outputs`. Shapes and nesting are PyTorch's: the
Jacobian of an output of shape `O` with respect to an input of shape `I` has shape `O + I`; a tuple of
inputs (or of outputs) gives a tuple of such tensors (a tuple of tuples, outputs outside, for both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import batched, forward_ad, grad_mode
from .differentiate import grad
from .functional_products import Inputs, as_tuple, hvp, jvp, vhp, vjp
from .grad_mode import enable_grad
from .ops.shape import reshape
from .tensor import Tensor, version_of

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate with respect to. Under create_graph an input that requires grad
    stays connected to its graph (through a reshape to its own shape), so the result can be differentiated
    with respect to the caller's tensors; otherwise each is a detached leaf that requires grad."""
    out = []
    for t in inputs:
        if create_graph and t._requires_grad:
            out.append(reshape(t, t._data.shape))
        else:
            leaf = Tensor._make(t._data, False, None, version_of(t)).requires_grad_(True)
            if grad_mode.forward_seen and forward_ad.carries(t):  # keep its tangents (forward-over-reverse)
                leaf._fw = forward_ad._forced(t)
            out.append(leaf)
    return tuple(out)


def _assemble(rows: list[Tensor], shape: tuple[int, ...], create_graph: bool) -> Tensor:
    """Stack the rows (one per output element) into a tensor of `shape`.

    Under create_graph the rows are graph members and the stacking must be differentiable: it is written
    as the sum of each row placed by a constant one-hot column (a product that broadcasts), which needs
    only multiplication, addition and reshape."""
    carrying = grad_mode.forward_seen and any(forward_ad.carries(r) for r in rows)
    if not carrying and (not create_graph or not any(r._requires_grad for r in rows)):
        data = np.stack([r._data for r in rows]) if rows else np.zeros((0,))
        return Tensor._make(data.reshape(shape), False, None)
    n = len(rows)
    total: Tensor | None = None
    for j, r in enumerate(rows):
        onehot = np.zeros((n,) + (1,) * r._data.ndim, dtype=r._data.dtype)
        onehot[j] = 1
        placed = reshape(r, (1, *r._data.shape)) * Tensor._make(onehot, False, None)
        total = placed if total is None else total + placed
    assert total is not None
    return reshape(total, shape)


def jacobian(
    func: Callable[..., Any],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`.

    One input, one output: a tensor of shape `output.shape + input.shape`. A tuple of inputs gives a tuple
    (one per input); a tuple of outputs a tuple (one per output) of those. `create_graph` records the
    computation so the Jacobian can be differentiated; `strict` makes an output independent of an input an
    error (instead of zeros). `strategy="forward-mode"` (with `vectorize=True`, as PyTorch asks) computes it
    a column at a time by forward-mode AD; `vectorize` alone computes all rows in one batched reverse pass
    where every operation of the graph allows it (autograd/batched.py), else one by one: the same values.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'jacobian: strategy must be "reverse-mode" or "forward-mode", not {strategy!r}')
    if strict and vectorize:
        raise RuntimeError("jacobian: strict=True and vectorize=True cannot be used together; drop one")
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('jacobian: strategy="forward-mode" does not support create_graph=True')
        if not vectorize:
            raise NotImplementedError('jacobian: strategy="forward-mode" is only implemented with vectorize=True '
                                      "(as in PyTorch)")
        return _forward_jacobian(func, inputs)
    with enable_grad():
        is_inputs_tuple, ins = as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph)
        outputs = func(*ins)
        is_outputs_tuple, outs = as_tuple(outputs, "outputs of the function", "jacobian")
        if strict:
            for i, o in enumerate(outs):
                if not o._requires_grad:
                    raise RuntimeError(
                        f"jacobian (strict): output {i} does not require grad, so it was not computed "
                        "differentiably from the inputs; compute it from them, or drop strict"
                    )
        result = []
        for i, o in enumerate(outs):
            if vectorize and not create_graph and not forward_ad._active:  # PyTorch's vmap: one batched pass
                blocks = batched.rows(o, list(ins))
                if blocks is not None:
                    result.append(tuple(Tensor._make(b, False, None) for b in blocks))
                    continue
            rows = _rows(o, i, ins, create_graph, strict)
            result.append(tuple(_block(r, o, t, create_graph) for r, t in zip(rows, ins, strict=True)))
    per_output = tuple(r if is_inputs_tuple else r[0] for r in result)
    return per_output if is_outputs_tuple else per_output[0]


def _rows(out: Tensor, i: int, ins: tuple[Tensor, ...], create_graph: bool, strict: bool) -> list[list[Tensor]]:
    """Per input, the rows of d out / d input: one gradient per element of `out`."""
    rows: list[list[Tensor]] = [[] for _ in ins]
    n = out._data.size
    for j in range(n):
        if out._requires_grad:
            basis = np.zeros(n, dtype=out._data.dtype)
            basis[j] = 1
            e = Tensor._make(basis.reshape(out._data.shape), False, None)
            gs = grad(out, ins, grad_outputs=e, retain_graph=True, create_graph=create_graph, allow_unused=True)
        else:
            gs = (None,) * len(ins)
        for k, (g, t) in enumerate(zip(gs, ins, strict=True)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"jacobian (strict): output {i} does not depend on input {k}; drop strict to get zeros"
                    )
                g = Tensor._make(np.zeros_like(t._data), False, None)
            elif strict and create_graph and not g._requires_grad:
                raise RuntimeError(
                    f"jacobian (strict): the Jacobian of output {i} does not depend on the inputs (input {k}), "
                    "so with create_graph it cannot be differentiated; drop strict"
                )
            rows[k].append(g)
    return rows


def _block(rows: list[Tensor], out: Tensor, inp: Tensor, create_graph: bool) -> Tensor:
    shape = out._data.shape + inp._data.shape
    if not rows:  # an output with no elements
        return Tensor._make(np.zeros(shape, dtype=inp._data.dtype), False, None)
    return _assemble(rows, shape, create_graph)


def hessian(
    func: Callable[..., Any],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function that returns one element, at `inputs`.

    One input of shape `I`: a tensor of shape `I + I`. A tuple of inputs: a tuple of tuples, entry
    `[i][j]` of shape `input_i.shape + input_j.shape`.
    """
    is_inputs_tuple, ins = as_tuple(inputs, "inputs", "hessian")

    def single_output(*args: Tensor) -> Tensor:
        out = func(*args)
        if not isinstance(out, Tensor):
            raise RuntimeError(
                f"hessian: the function must return a single tensor, not a {type(out).__name__}"
            )
        if strict and not out._requires_grad:
            raise RuntimeError(
                "hessian (strict): the function's output does not require grad, so it was not computed "
                "differentiably from the inputs; drop strict"
            )
        if out._data.size != 1:
            raise RuntimeError(
                f"hessian: the function must return a single element, but its output has shape "
                f"{tuple(out._data.shape)}; reduce it (for example with .sum())"
            )
        return reshape(out, ())

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        jac = jacobian(single_output, args, create_graph=True)
        if strict:
            for i, g in enumerate(jac):
                if not g._requires_grad:
                    raise RuntimeError(
                        f"hessian (strict): the gradient with respect to input {i} does not depend on the "
                        "inputs (the function is linear in them); drop strict"
                    )
        return jac

    result = jacobian(gradient, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    if not is_inputs_tuple:
        return result[0][0]
    return result


def _forward_jacobian(func: Callable[..., Any], inputs: Inputs) -> Any:
    """The Jacobian by forward mode: one JVP per input element, along its basis vector."""
    is_inputs_tuple, ins = as_tuple(inputs, "inputs", "jacobian")
    columns: list[list[list[Tensor]]] = []  # per input, per element: the tangent of each output
    outs: tuple[Tensor, ...] = ()
    is_outputs_tuple = False
    for k, x in enumerate(ins):
        per_element = []
        for j in range(x._data.size):
            level = forward_ad.enter_dual_level()
            try:
                duals = []
                for i, y in enumerate(ins):
                    t = np.zeros_like(y._data)
                    if i == k:
                        t.reshape(-1)[j] = 1
                    duals.append(forward_ad.make_dual(y.detach(), Tensor._make(t, False, None), level=level))
                result = func(*duals)
                is_outputs_tuple, outs = as_tuple(result, "outputs of the function", "jacobian")
                per_element.append([_tangent_or_zeros(o, level) for o in outs])
            finally:
                forward_ad.exit_dual_level(level=level)
        columns.append(per_element)
    if not outs:  # every input is empty: the outputs come from one plain call
        is_outputs_tuple, outs = as_tuple(func(*ins), "outputs of the function", "jacobian")
    result = []
    for i, o in enumerate(outs):
        blocks = []
        for k, x in enumerate(ins):
            shape = o._data.shape + x._data.shape
            if not columns[k]:
                blocks.append(Tensor._make(np.zeros(shape, dtype=x._data.dtype), False, None))
                continue
            stacked = np.stack([c[i]._data.reshape(-1) for c in columns[k]], axis=-1)
            blocks.append(Tensor._make(stacked.reshape(shape), False, None))
        result.append(tuple(blocks))
    per_output = tuple(r if is_inputs_tuple else r[0] for r in result)
    return per_output if is_outputs_tuple else per_output[0]


def _tangent_or_zeros(o: Tensor, level: int) -> Tensor:
    t = forward_ad.unpack_dual(o, level=level).tangent
    return Tensor._make(np.zeros_like(o._data), False, None) if t is None else t

