"""The engine: in what order to run the backward graph (the nodes say what to compute).

One walk serves `Tensor.backward`, `autograd.backward` and `autograd.grad`:
1. find the nodes reachable from the roots and count, for each, the edges that lead into it;
2. run a node once every node that feeds it a gradient has run (its count reached zero), adding up the
   gradients arriving at each node in a buffer; release each node's saved values as the walk passes it
   unless `retain_graph`.
Both steps use explicit stacks: no recursion, so a chain of a million operations differentiates.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .grad_mode import set_grad_enabled, state
from .node import AccumulateGrad, Node
from .tensor import Tensor


class CopyBackwards(Node):
    """The first gradient accumulated into a leaf under create_graph is a copy of the incoming one."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (g,)


def _copy_for_grad(g: Tensor, create_graph: bool) -> Tensor:
    if create_graph and g._requires_grad:
        node = CopyBackwards()
        node.next_functions = ((g.grad_fn, g._output_nr) if g.grad_fn else (g._accumulate_node(), 0),)
        return Tensor._make(g._data.copy(), True, node)
    return Tensor._make(np.array(g._data, copy=True), False, None)


def _check_roots(tensors: Sequence[Tensor], grads: Sequence[Any], what: str) -> list[tuple[Tensor, Tensor]]:
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grads, strict=True)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: output {i} is a {type(t).__name__}, not a tensor")
        if not t._requires_grad:
            raise RuntimeError(
                f"{what}: the tensor does not require grad, so there is nothing to differentiate "
                "(it was computed from tensors without requires_grad, or under no_grad)"
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError(
                    f"{what}: the output has shape {tuple(t._data.shape)}; a gradient can only be implied "
                    "for a single-element output: pass gradient= (or grad_outputs=) of the same shape"
                )
            g = Tensor._make(np.ones_like(t._data), False, None)
        elif not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=t._data.dtype), False, None)
        if g._data.shape != t._data.shape:
            if g._data.size == t._data.size == 1:
                g = Tensor._make(g._data.reshape(t._data.shape), g._requires_grad, None)
            else:
                raise RuntimeError(
                    f"{what}: the gradient has shape {tuple(g._data.shape)} but the output has shape "
                    f"{tuple(t._data.shape)}: they must match"
                )
        roots.append((t, g))
    return roots


def _edge_of(t: Tensor) -> tuple[Node, int]:
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    return t._accumulate_node(), 0


def run_backward(
    roots: list[tuple[Tensor, Tensor]],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None] | None:
    """Run the walk. With `accumulate`, add gradients into leaves' `.grad` (only into `inputs` when given);
    otherwise return the gradients that reach `inputs` (None for an input no gradient reached)."""
    # -- 1. the graph: which nodes, and how many edges lead into each ----------------------------------
    root_edges = [_edge_of(t) for t, _ in roots]
    deps: dict[Node, int] = {}
    order: list[Node] = []  # children before parents (post-order), for the "needed" pass
    stack: list[tuple[Node, int]] = []
    for node, _ in root_edges:
        if node not in deps:
            deps[node] = 0
            stack.append((node, 0))
    while stack:
        node, i = stack.pop()
        nexts = node.next_functions
        if i < len(nexts):
            stack.append((node, i + 1))
            child = nexts[i][0]
            if child is not None:
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    stack.append((child, 0))
        else:
            order.append(node)

    # -- targets: where grad() reads gradients, and which nodes lead to them -------------------------
    capture: dict[tuple[Node, int], int] = {}
    wanted_leaves: set[AccumulateGrad] | None = None
    needed: set[Node] | None = None
    if inputs is not None:
        targets: set[Node] = set()
        for k, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"inputs: element {k} is a {type(t).__name__}, not a tensor")
            if not t._requires_grad:
                raise RuntimeError(f"inputs: element {k} does not require grad, so it has no gradient")
            edge = _edge_of(t)
            capture.setdefault(edge, k)
            targets.add(edge[0])
        if accumulate:
            wanted_leaves = {e[0] for e in capture if isinstance(e[0], AccumulateGrad)}
        needed = set()
        for node in order:  # children first: a node is needed if it is a target or feeds a needed one
            if node in targets or any(c is not None and c in needed for c, _ in node.next_functions):
                needed.add(node)

    # -- 2. the walk --------------------------------------------------------------------------------
    buffers: dict[Node, Any] = {}
    for (node, nr), (_, g) in zip(root_edges, roots, strict=True):
        _add_to_buffer(buffers, node, nr, g)
    stored: set[int] = {id(g) for _, g in roots}  # gradients already handed out, to copy rather than share
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    anomaly = state.anomaly
    ready = [node for node, _ in root_edges if deps[node] == 0]
    seen_ready: set[Node] = set(ready)
    ready = list(dict.fromkeys(ready))

    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is not None:
                if node._retained is not None:
                    _fill_retained(node, grads, stored, create_graph)
                if capture:
                    _capture(node, grads, capture, captured, inputs)
                if type(node) is AccumulateGrad:
                    if accumulate and (wanted_leaves is None or node in wanted_leaves):
                        _accumulate(node, grads, stored, create_graph)
                elif needed is None or node in needed:
                    _run_node(node, grads, buffers, anomaly)
                    if not retain_graph:
                        node.release()
            for child, _ in node.next_functions:
                if child is not None:
                    left = deps[child] - 1
                    deps[child] = left
                    if left == 0 and child not in seen_ready:
                        seen_ready.add(child)
                        ready.append(child)
    return captured if not accumulate else None


def _add_to_buffer(buffers: dict[Node, Any], node: Node, nr: int, g: Tensor) -> None:
    if node.num_outputs == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else old + g
    else:
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_outputs
        slots[nr] = g if slots[nr] is None else slots[nr] + g


def _run_node(node: Node, grads: Any, buffers: dict[Node, Any], anomaly: bool) -> None:
    outs = node.apply(grads)
    if anomaly:
        _check_nan(node, outs)
    for (child, nr), g in zip(node.next_functions, outs, strict=False):
        if child is not None and g is not None:
            _add_to_buffer(buffers, child, nr, g)


def _check_nan(node: Node, outs: Sequence[Tensor | None]) -> None:
    for i, g in enumerate(outs):
        if g is not None and g._data.dtype.kind == "f" and np.isnan(g._data).any():
            where = f"\n{node._trace}" if node._trace else ""
            raise RuntimeError(
                f"anomaly: {node.name()} returned NaN in its gradient {i}; the forward operation that made "
                f"this node was:{where}"
            )


def _owned(g: Tensor, stored: set[int]) -> bool:
    """Whether `g` can become a `.grad` as it is: nobody else holds it, and its array is writable."""
    d = g._data
    return id(g) not in stored and d.base is None and d.flags.writeable and g.grad_fn is None


def _accumulate(node: AccumulateGrad, g: Tensor, stored: set[int], create_graph: bool) -> None:
    leaf = node.variable()
    if leaf is None:
        return
    with node.lock:
        old = leaf._grad
        if old is None:
            new = g if (not create_graph and _owned(g, stored)) else _copy_for_grad(g, create_graph)
            if new._data.dtype != leaf._data.dtype:
                new = Tensor._make(new._data.astype(leaf._data.dtype), False, None)
            stored.add(id(new))
            leaf._grad = new
        elif create_graph or old._requires_grad:
            leaf._grad = old + g
        else:
            old._data += g._data  # in place, as PyTorch accumulates when no graph is recorded
            old._version.value += 1


def _fill_retained(node: Node, grads: Any, stored: set[int], create_graph: bool) -> None:
    for nr, ref in list(node._retained.items()):  # type: ignore[union-attr]
        t = ref()
        if t is None:
            continue
        g = grads if node.num_outputs == 1 else grads[nr]
        if g is None:
            continue
        if t._grad is None:
            t._grad = _copy_for_grad(g, False) if not create_graph else g
            stored.add(id(t._grad))
        else:
            t._grad = Tensor._make(t._grad._data + g._data, False, None)


def _capture(node: Node, grads: Any, capture: dict, captured: list, inputs: Any) -> None:
    for nr in range(node.num_outputs):
        k = capture.get((node, nr))
        if k is None:
            continue
        g = grads if node.num_outputs == 1 else grads[nr]
        for j, t in enumerate(inputs):  # the same input may be listed twice
            if _edge_of(t) == (node, nr):
                captured[j] = g


def warn_create_graph_cycle() -> None:
    warnings.warn(
        "backward with create_graph makes a reference cycle between each leaf and its .grad (which now "
        "remembers how it was computed); prefer grad(..., create_graph=true), or set the leaves' .grad to "
        "None after use (zero_grad) to break the cycle",
        UserWarning,
        stacklevel=3,
    )
