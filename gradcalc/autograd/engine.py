"""The engine: in what order to run the backward graph (the nodes say what to compute).

One walk serves `Tensor.backward`, `autograd.backward` and `autograd.grad`:
1. find the nodes reachable from the roots and count, for each, the edges that lead into it;
2. run a node once every node that feeds it a gradient has run (its count reached zero), adding up the
   gradients arriving at each node in a buffer; release each node's saved values as the walk passes it
   unless `retain_graph`.
Both steps use explicit stacks: no recursion, so a chain of a million operations differentiates.

Whatever can make a call fail (an unused grad() input, freed saved values, an in-place change of a saved
tensor) is checked between the two steps, so that a failing call changes nothing. When user code can run
during the walk (hooks, a custom Function's backward, an observer, saved-tensor unpack hooks) or anomaly
mode is on, step 2 is the instrumented walk of ordered.py instead: PyTorch's order, hooks, observers, and an
undo log for failures. The plain walk below runs the same nodes in another (cheaper) order.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import grad_mode, hooks, listen, ordered, provenance, saved
from .grad_mode import state
from .node import FREED, LATE_COUNTER, STAMP, AccumulateGrad, AnomalyTrace, Node, release_saved
from .provenance import failure, worded
from .temporaries import sum_into
from .tensor import Tensor, version_of


class CopyBackwards(Node):
    """The first gradient accumulated into a leaf under create_graph is a copy of the incoming one."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (g,)


def _copy_for_grad(g: Tensor, create_graph: bool) -> Tensor:
    if create_graph and g._requires_grad:
        node = CopyBackwards()
        node.next_functions = (_edge_of(g),)
        return Tensor._make(g._data.copy(), True, node)
    return Tensor._make(np.array(g._data, copy=True), False, None)


def _check_roots(tensors: Sequence[Tensor], grads: Sequence[Any], what: str) -> list[tuple[Tensor, Tensor]]:
    roots = []
    for i, t in enumerate(tensors):
        g = grads[i]
        if type(t) is not Tensor and not isinstance(t, Tensor):
            raise TypeError(f"{what}: output {i} is a {type(t).__name__}, not a tensor")
        if not t._requires_grad:
            raise failure(
                f"{what}: the tensor does not require grad, so there is nothing to differentiate "
                "(it was computed from tensors without requires_grad, or under no_grad)",
                "no_grad_output", f"element {i} of tensors does not require grad and does not have a grad_fn",
                tensor=t, what=what,
            )
        if g is None:
            if t._data.size != 1:
                raise failure(
                    f"{what}: the output has shape {tuple(t._data.shape)}; a gradient can only be implied "
                    "for a single-element output: pass gradient= (or grad_outputs=) of the same shape",
                    "nonscalar", "grad can be implicitly created only for scalar outputs", tensor=t, what=what,
                )
            one = np.array(1, t._data.dtype)  # np.ones is a Python function: ten times the cost here
            g = Tensor._make(one if not t._data.ndim else one.reshape(t._data.shape), False, None)
        elif not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=t._data.dtype), False, None)
        if g._data.shape != t._data.shape:
            if g._data.size == t._data.size == 1:
                g = Tensor._make(g._data.reshape(t._data.shape), g._requires_grad, None)
            else:
                raise worded(
                    f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g._data.shape)}) and "
                    f"output[{i}] has a shape of torch.Size({list(t._data.shape)}).",
                    f"{what}: the gradient has shape {tuple(g._data.shape)} but the output has shape "
                    f"{tuple(t._data.shape)}: they must match",
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
    allow_unused: bool = True,
) -> list[Tensor | None] | None:
    """Run the walk. With `accumulate`, add gradients into leaves' `.grad` (only into `inputs` when given);
    otherwise return the gradients that reach `inputs` (None for an input no gradient reached)."""
    origin = STAMP.origin  # a front end running: it keeps a record of this call (provenance.py)
    if origin is not None:
        provenance.touched.clear()
    # -- 1. the graph: which nodes, and how many edges lead into each ----------------------------------
    deps: dict[Node, int] = {}
    buffers: dict[Node, Any] = {}  # the gradients arrived at each node so far
    stored: set[int] = set()  # arrays already handed out (the roots' gradients): copy, never share
    root_nodes: list[Node] = []
    root_edges: list[Node] = []
    for t, g in roots:
        node, nr = _edge_of(t)
        root_edges.append(node)
        if node not in deps:
            deps[node] = 0
            root_nodes.append(node)
        _add_to_buffer(buffers, node, nr, g, False)
        stored.add(id(g._data))
    # nodes whose saved values were freed or may have changed in place: checked before the walk starts
    suspects = [n for n in root_nodes if n._versions is not None or n._saved is FREED]
    stack = root_nodes.copy()
    while stack:
        for child in stack.pop()._next:
            if child is not None:
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    stack.append(child)
                    if child._versions is not None or child._saved is FREED:
                        suspects.append(child)
    late = LATE_COUNTER[0]
    if late:  # a counter was made for a tensor after nodes may have saved it: those nodes are suspects too
        # node.may_be_stale, inline: this runs for every node of every backward after an in-place change
        suspects.extend(n for n in deps if n._versions is None and n._saved and getattr(n, "_seq", 0) < late)

    # -- targets: where grad() reads gradients, and which nodes lead to them -------------------------
    capture: dict[Node, list[tuple[int, int]]] = {}  # target node -> (output_nr, index in inputs)
    wanted_leaves: set[Node] | None = None
    needed: set[Node] | None = None
    if inputs is not None:
        for k, t in enumerate(inputs):
            if type(t) is not Tensor and not isinstance(t, Tensor):
                raise TypeError(f"inputs: element {k} is a {type(t).__name__}, not a tensor")
            if not t._requires_grad:
                raise failure(f"inputs: element {k} does not require grad, so it has no gradient",
                              "input_no_grad", "One of the differentiated Tensors does not require grad", index=k,
                              tensor=t)
            node, nr = _edge_of(t)
            if accumulate and t.grad_fn is not None:
                t.retain_grad()  # as PyTorch: backward(inputs=[nonleaf]) fills (and keeps filling) its .grad
            capture.setdefault(node, []).append((nr, k))
        if accumulate:
            wanted_leaves = {n for n in capture if type(n) is AccumulateGrad}
        # Every recorded node leads to some leaf's AccumulateGrad; when all those leaves are targets (and
        # every target is a leaf), every node is needed, and the pruning pass can be skipped.
        if not _all_leaves_wanted(capture, deps):
            needed = _leading_to(set(capture), deps, root_nodes)
        if not allow_unused:
            for node, places in capture.items():
                if node not in deps:
                    k = places[0][1]
                    raise unused_error(k, inputs[k])

    # -- checks before the walk: whatever can fail is found before anything changes ---------------------
    for node in suspects:
        if needed is None or node in needed:
            if grad_mode.anomaly_seen and state.anomaly:
                try:
                    node.check_saved()
                except RuntimeError:
                    _anomaly_warning(node)  # PyTorch's: the node that failed, and where it was made
                    raise
            else:
                node.check_saved()

    # -- 2. the walk --------------------------------------------------------------------------------
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    anomaly = grad_mode.anomaly_seen and state.anomaly and state.check_nan
    # a single root has no edge into it; of several, those no other root leads to
    ready = root_nodes.copy() if len(root_nodes) == 1 else [node for node in root_nodes if deps[node] == 0]
    raw = not create_graph  # a plain backward runs formulas on bare arrays where the node allows it

    # user code may run during the walk (a hook, a custom Function, an observer), or anomaly mode may stop
    # it: then the instrumented walk, in PyTorch's order, which undoes what it did when it fails
    listener = listen.current() if listen.active else None
    instrumented = anomaly or (hooks.seen and (listener is not None or _runs_user_code(deps)))

    # every value is computed before the thread's state changes: the `try` below restores it on every path
    release = not retain_graph and not create_graph
    want = None if needed is None else needed | set(capture)
    recording, releasing, wanted = state.grad_enabled, state.releasing, state.wanted
    state.grad_enabled, state.releasing, state.wanted = bool(create_graph), release, want
    try:
        if instrumented:

            def finish() -> None:
                if inputs is not None and not allow_unused:
                    for k, g in enumerate(captured):
                        if g is None:
                            raise unused_error(k, inputs[k])

            ordered.walk(
                root_edges, deps, buffers, stored, capture, captured, wanted_leaves, needed,
                accumulate=accumulate, retain_graph=retain_graph, create_graph=create_graph, anomaly=anomaly,
                listener=listener, finish=finish,
            )
            ready = []
        while ready:
            node = ready.pop()
            nexts = node._next
            grads = buffers.pop(node, None)
            if grads is None:  # no gradient reached this node: it still counts as done for its inputs
                for child in nexts:
                    if child is not None:
                        left = deps[child] - 1
                        deps[child] = left
                        if left == 0:
                            ready.append(child)
                continue
            if node._extras is not None:
                _fill_retained(node, _tensors(grads), stored, create_graph)
            if capture and node in capture:
                for nr, k in capture[node]:
                    captured[k] = _tensors(grads) if node.num_outputs == 1 else _tensors(grads)[nr]
            if type(node) is AccumulateGrad:
                if accumulate and (wanted_leaves is None or node in wanted_leaves):
                    _accumulate(node, grads, stored, create_graph)
                continue
            if needed is not None and node not in needed:
                outs = ()
            elif raw and node.raw_ok:
                kind = type(grads)
                if kind is Tensor:  # a root's gradient; a 0-d one as a NumPy scalar, as saved values are
                    grads = grads._data if grads._data.ndim else grads._data[()]
                outs = node.apply(grads if kind is not list else _arrays(grads))
            else:
                outs = node.apply(_tensors(grads))
            grads = None  # hold no gradient into the next node's formula
            if anomaly:
                _check_nan(node, outs)
            if not retain_graph:
                saved = node._saved
                if saved:  # released; a node that saved nothing can run again, as in PyTorch
                    node._saved = FREED
                    for t in saved:  # inline: an empty slot (rare) is remembered by release_saved
                        if t is None:
                            release_saved(node, saved)
                            break
            nrs = node._nrs
            k = 0
            for child in nexts:
                if child is not None:
                    g = outs[k] if outs else None
                    if g is not None:
                        if child.num_outputs == 1:
                            old = buffers.get(child)
                            buffers[child] = g if old is None else _sum(old, g, raw, True)
                            old = None
                        else:
                            _add_to_buffer(buffers, child, nrs[k] if nrs else 0, g, raw)
                        g = None
                    left = deps[child] - 1
                    deps[child] = left
                    if left == 0:
                        ready.append(child)
                k += 1
            outs = None
    finally:
        state.grad_enabled, state.releasing = recording, releasing
        state.wanted = wanted
    if origin is not None:
        provenance.ran(origin, root_nodes, accumulate, retain_graph, create_graph, inputs)
    return captured if not accumulate else None


def _runs_user_code(deps: dict[Node, int]) -> bool:
    """Whether a node of the graph has a hook, a user-written backward or packed saved values: looked for
    among the watched nodes (hooks.watched) or among the graph's, whichever are fewer."""
    watched = hooks.watched
    candidates: Any = deps if len(watched) >= len(deps) else [n for n in list(watched) if n in deps]
    for node in candidates:
        if node.user_code:
            return True
        extras = node._extras
        if extras is not None and extras.has_hooks():
            return True
        if STAMP.packing and saved.is_packed(node):
            return True
    return False


def unused_error(k: int, t: Tensor) -> RuntimeError:
    """`unused_message` as the error, carrying the input (its position and the tensor)."""
    pytorch = (f"The differentiated Tensor at index {k} appears to not have been used in the graph. Set "
               "allow_unused=True if this is the desired behavior.")
    return failure(unused_message(k, t), "unused", pytorch, index=k, tensor=t)


def unused_message(k: int, t: Tensor) -> str:
    """The error of grad() for an input the outputs do not depend on."""
    return (
        f"grad: input {k} (shape {tuple(t._data.shape)}) was not used to compute the outputs, so it has no "
        "gradient; pass allow_unused=true to get None for it"
    )


def _all_leaves_wanted(capture: dict[Node, Any], deps: dict[Node, int]) -> bool:
    """Whether every target is a leaf and every leaf of the graph is a target."""
    for node in capture:
        if type(node) is not AccumulateGrad:
            return False
    for node in deps:
        if type(node) is AccumulateGrad and node not in capture:
            return False
    return True


def _leading_to(targets: set[Node], deps: dict[Node, int], roots: list[Node]) -> set[Node]:
    """The nodes that must run to bring gradients to the targets' inputs (those with a path to a target;
    a target itself runs only when it leads to another). Children are seen before parents by reversing a
    topological order of the graph (Kahn's, from the edge counts `deps`): no recursion, O(nodes + edges)."""
    left = dict(deps)
    order: list[Node] = []
    ready = [n for n in dict.fromkeys(roots) if left[n] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        for child in node._next:
            if child is not None:
                k = left[child] - 1
                left[child] = k
                if k == 0:
                    ready.append(child)
    needed: set[Node] = set()
    reaches = set(targets)  # targets, and nodes with a path to one
    for node in reversed(order):
        for c in node._next:
            if c is not None and c in reaches:
                needed.add(node)
                reaches.add(node)
                break
    return needed


def _sum(old: Any, g: Any, raw: bool, in_place: bool = False) -> Any:
    """Add a gradient to a buffer's: recorded tensors under create_graph; otherwise bare arrays, added in
    place into one of the two (`in_place`: called from the walk) when nobody else holds it, so that a leaf
    reached by many paths costs one array, not one per path."""
    if not raw:
        return old + g
    if in_place and (type(old) is np.ndarray or type(g) is np.ndarray):  # (0-d gradients are NumPy scalars)
        total = sum_into(old, g)  # None unless one of the two may take the sum
        if total is not None:
            return total
    return (old._data if type(old) is Tensor else old) + (g._data if type(g) is Tensor else g)


def _arrays(grads: Any) -> Any:
    """Gradients as bare arrays (a list for nodes with several outputs)."""
    if type(grads) is list:
        return [g._data if type(g) is Tensor else g for g in grads]
    return grads._data if type(grads) is Tensor else grads


def _tensors(grads: Any) -> Any:
    """Gradients as tensors (a list for nodes with several outputs)."""
    if type(grads) is list:
        return [g if g is None or type(g) is Tensor else Tensor._make(np.asarray(g), False, None) for g in grads]
    return grads if type(grads) is Tensor else Tensor._make(np.asarray(grads), False, None)


def _add_to_buffer(buffers: dict[Node, Any], node: Node, nr: int, g: Any, raw: bool) -> None:
    if node.num_outputs == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else _sum(old, g, raw)
    else:
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_outputs
        slots[nr] = g if slots[nr] is None else _sum(slots[nr], g, raw)


def _check_nan(node: Node, outs: Sequence[Tensor | None]) -> None:
    for i, g in enumerate(outs):
        d = g._data if type(g) is Tensor else g
        if g is not None and np.asarray(d).dtype.kind == "f" and np.isnan(d).any():
            trace = getattr(node, "_trace", None)  # unset on nodes made before any stamp was asked for
            # a front end's origin may give a longer form for this message (`located()`: file, line, column)
            if trace is not None and hasattr(trace, "located"):
                trace = trace.located()
            where = f"\n{trace}" if trace is not None else ""
            _anomaly_warning(node)
            raise failure(
                f"anomaly: {node.name()} returned NaN in its gradient {i}; the forward operation that made "
                f"this node was:{where}",
                "nan", f"Function '{node.name()}' returned nan values in its {_ordinal(i)} output.", node=node,
                index=i, grads=tuple(outs),
            )


def _anomaly_warning(node: Node) -> None:
    """Anomaly mode's warning as PyTorch's, naming the failing node and the forward call that made it (in plain
    Python only: a front end's origin says where in its own words)."""
    trace = getattr(node, "_trace", None)
    if isinstance(trace, AnomalyTrace):
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}",
                      UserWarning, stacklevel=3)


def _ordinal(i: int) -> str:
    """PyTorch's ordinal in its messages: 0th, 1th, 2th (as it writes them)."""
    return f"{i}th"


def _owned(g: Tensor, stored: set[int]) -> bool:
    """Whether `g` can become a `.grad` as it is: nobody else holds it, and its array is writable."""
    d = g._data
    return id(d) not in stored and d.base is None and d.flags.writeable and g.grad_fn is None


def _accumulate(node: AccumulateGrad, g: Tensor, stored: set[int], create_graph: bool) -> None:
    leaf = node._leaf()
    if leaf is None:
        return
    if STAMP.origin is not None:  # a front end keeps who wrote which .grad (provenance.py)
        provenance.touched.append(node)
    if type(g) is not Tensor:
        g = Tensor._make(g if type(g) is np.ndarray else np.asarray(g), False, None)
    with node.lock:
        old = leaf._grad
        if old is None:
            new = g if (not create_graph and _owned(g, stored)) else _copy_for_grad(g, create_graph)
            if new._data.dtype != leaf._data.dtype:
                new = Tensor._make(new._data.astype(leaf._data.dtype), False, None)
            stored.add(id(new._data))
            leaf._grad = new
        elif create_graph or not old._data.flags.writeable or old._data.shape != g._data.shape:
            leaf._grad = old + g  # recorded under create_graph: the sum is a graph member too
        else:
            # in place, as PyTorch accumulates when no graph is recorded (even into a .grad that has a
            # grad_fn from an earlier create_graph backward: it keeps that grad_fn)
            old._data += g._data
            counter = version_of(old)
            counter.value += 1
            if STAMP.origin is not None:
                provenance.changed(counter)


def _fill_retained(node: Node, grads: Any, stored: set[int], create_graph: bool) -> None:
    for nr, ref in list(node._extras.retained.items()):
        t = ref()
        if t is None:
            continue
        g = grads if node.num_outputs == 1 else grads[nr]
        if g is None:
            continue
        if STAMP.origin is not None:
            provenance.touched.append(weakref.ref(t))
        # PyTorch's retain_grad hook: a clone first, then out-of-place sums (never into the old .grad,
        # which the user may hold); both recorded under create_graph
        if t._grad is None:
            if create_graph and g._requires_grad:
                from .ops.basic import clone

                t._grad = clone(g)
            else:
                t._grad = _copy_for_grad(g, False)
            stored.add(id(t._grad._data))
        elif create_graph:
            t._grad = t._grad + g
        else:
            t._grad = Tensor._make(t._grad._data + g._data, False, None)


def warn_create_graph_cycle() -> None:
    warnings.warn(
        "backward with create_graph makes a reference cycle between each leaf and its .grad (which now "
        "remembers how it was computed); prefer grad(..., create_graph=true), or set the leaves' .grad to "
        "None after use (zero_grad) to break the cycle",
        UserWarning,
        stacklevel=3,
    )
