"""The user's entry points to the engine: `Tensor.backward`, `autograd.backward`, `autograd.grad`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import grad_mode, spec
from .engine import run_backward, run_plan, warn_create_graph_cycle
from .grad_mode import BACKWARD_IN_TRANSFORM, state
from .node import STAMP
from .plan import implied_gradient, plan_one, roots_of, unused_error
from .reasons import worded
from .tensor import Tensor


def _flag(value: Any, name: str, what: str) -> Any:
    """A True/False argument (None stays None): a bool, an int, or a one-element integer or bool tensor, as
    PyTorch takes them; anything else is a TypeError before anything changes."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, Tensor) and value._data.size == 1 and value._data.dtype.kind in "biu":
        return bool(value._data.reshape(()))
    raise TypeError(f"{what}: {name} must be True or False, not {type(value).__name__}")


def _as_list(x: Any) -> list:
    if type(x) is Tensor or isinstance(x, Tensor):
        return [x]
    if x is None:
        return []
    return list(x)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Tensor | Sequence[Tensor | None] | None = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Add the gradients of `tensors` into the `.grad` of the leaves they were computed from.

    The parameters are PyTorch's, in PyTorch's order (`grad_variables` is its old name of `grad_tensors`).

    `grad_tensors` is needed for outputs with more than one element; `retain_graph` (default: the value
    of `create_graph`) keeps saved values for another backward; `create_graph` records the backward
    itself so the gradients can be differentiated again; `inputs` limits which leaves accumulate.
    """
    if retain_graph is not None and type(retain_graph) is not bool:  # checked only when not plainly a flag
        retain_graph = _flag(retain_graph, "retain_graph", "backward")
    if type(create_graph) is not bool:
        create_graph = _flag(create_graph, "create_graph", "backward")
    outs = _as_list(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"backward: {len(outs)} outputs but {len(grads)} gradients")
    if state.transforms:
        raise worded(BACKWARD_IN_TRANSFORM, "backward inside a function transform (func.grad, func.vmap, ...) is "
                     "not allowed: the transform differentiates; use func.grad or func.vjp, or call backward outside "
                     "the transform")
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warn_create_graph_cycle()
    if grad_mode.forward_seen and grad_mode.forward_ad._pending:  # tangents first: backward may free what they need
        grad_mode.forward_ad.force_pending()
    roots = roots_of(outs, grads, "backward")
    wanted = _as_list(inputs) if inputs is not None else None
    if wanted is not None and not wanted:
        raise worded("`inputs` argument to `backward()` cannot be empty.", "backward: inputs= was given but is empty")
    run_backward(roots, retain_graph=retain_graph, create_graph=create_graph, inputs=wanted, accumulate=True)


def tensor_backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Tensor] | None = None,
) -> None:
    """Compute the gradient of this tensor with respect to graph leaves (see `autograd.backward`)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


# Tensor.backward: until this module loads (at the first backward, off the start-up path) a lazy.Deferred stands
# there (ops/__init__.py)
Tensor.backward = tensor_backward  # type: ignore[attr-defined]


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...] | dict[str, Tensor | None]:
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated into `.grad`).

    Returns a tuple with one entry per input (a dict with the same keys when `inputs` is a dict). An input
    the outputs do not depend on is an error unless `allow_unused` (then its entry is None, or zeros with
    `materialize_grads`). The parameters are PyTorch's, in PyTorch's order; `only_inputs` is ignored, as
    in PyTorch; `is_grads_batched` takes the first dim of every grad_output as a batch of cotangents (one batched
    pass, as PyTorch's vmap over them).
    """
    if (type(outputs) is Tensor and type(inputs) is Tensor and grad_outputs is None and type(create_graph) is bool
            and (retain_graph is None or type(retain_graph) is bool) and (allow_unused is None or type(allow_unused)
            is bool) and not (is_grads_batched or materialize_grads) and STAMP.origin is None
            and outputs._requires_grad and outputs._data.size == 1):
        # one output with an implied gradient, one input: the commonest call (a second derivative makes two),
        # planned by plan_one, with none of the lists and checks below
        if grad_mode.forward_seen and grad_mode.forward_ad._pending:
            grad_mode.forward_ad.force_pending()
        found = run_plan(plan_one(outputs, implied_gradient(outputs), inputs, allow_unused is True),
                         create_graph if retain_graph is None else retain_graph, create_graph, False)[0]  # type: ignore[index]
        if found is None:
            if not allow_unused:  # reached, but no gradient arrived
                raise unused_error(0, inputs)
        elif not create_graph and found._requires_grad:
            found = found.detach()
        return (found,)
    if isinstance(inputs, dict):
        found = grad(outputs, list(inputs.values()), grad_outputs, retain_graph, create_graph,
                     allow_unused=allow_unused, materialize_grads=materialize_grads)
        return dict(zip(inputs.keys(), found, strict=True))
    if not (type(create_graph) is bool and type(materialize_grads) is bool  # the common call: no checks more
            and (retain_graph is None or type(retain_graph) is bool)
            and (allow_unused is None or type(allow_unused) is bool)):
        retain_graph = _flag(retain_graph, "retain_graph", "grad")
        create_graph = _flag(create_graph, "create_graph", "grad")
        allow_unused = _flag(allow_unused, "allow_unused", "grad")
        materialize_grads = _flag(materialize_grads, "materialize_grads", "grad")
    # a tensor each, the commonest call (a second derivative makes two): its lists without _as_list's calls
    outs = [outputs] if type(outputs) is Tensor else _as_list(outputs)
    ins = [inputs] if type(inputs) is Tensor else _as_list(inputs)
    if not ins:
        raise RuntimeError("grad: inputs is empty; name the tensors to differentiate with respect to")
    grads = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad: {len(outs)} outputs but {len(grads)} grad_outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched or (spec.VMAP[0] and any(type(g) is not Tensor and g is not None for g in grads)):
        # batched grad_outputs (vmap's, or a batch dim of their own): rows of cotangents, one batched pass
        from . import batched_ad  # (loaded only for batched cotangents: off the start-up path)

        return batched_ad.grad(outs, ins, grads, retain_graph, create_graph, bool(allow_unused),
                               bool(materialize_grads), bool(is_grads_batched))
    if grad_mode.forward_seen and grad_mode.forward_ad._pending:
        grad_mode.forward_ad.force_pending()
    roots = roots_of(outs, grads, "grad")
    found = run_backward(
        roots, retain_graph=retain_graph, create_graph=create_graph, inputs=ins, accumulate=False,
        allow_unused=bool(allow_unused),
    )
    assert found is not None
    result: list[Tensor | None] = []
    for k, (t, g) in enumerate(zip(ins, found, strict=True)):
        if g is None:
            if not allow_unused:  # reached, but no gradient arrived (the walk checks what it can before)
                raise unused_error(k, t)
            if materialize_grads:
                g = Tensor._make(np.zeros_like(t._data), False, None)
        elif not create_graph and g._requires_grad:
            g = g.detach()
        result.append(g)
    return tuple(result)
