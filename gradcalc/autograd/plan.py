"""The plan of one backward pass, shared by the engine's three walks, and what every walk does at a node.

`Tensor.backward`, `autograd.backward` and `autograd.grad` are planned before anything changes:
1. the roots (`roots_of`): each output with the gradient it starts from, entering the graph at its node
   (`edge_of`: the node that made it, or a leaf's AccumulateGrad);
2. reachability and dependencies (`reach`): the nodes below the roots and, for each, how many edges lead
   into it (a walk runs a node once that count reached zero), and the nodes whose saved values must be
   checked (freed, or perhaps changed in place since they were saved);
3. the targets: where grad() reads its gradients, which leaves backward(inputs=) accumulates
   into, and which nodes must run to bring gradients there (the others are skipped);
4. the checks: whatever can make the call fail (an input the outputs do not depend on, freed saved values,
   an in-place change of a saved tensor) is raised here, so that a failing call changes nothing.

Then a walk runs the plan, in one of three orders (strategies): engine.py's plain walk (the fast one),
ordered.py's instrumented walk (PyTorch's order, hooks, observers, an undo log) and batched.py's walk of
rows of cotangents (a Jacobian in one pass). Each uses the same steps at a node, defined here: add up the
gradients arriving at a node (`add_to_buffer`, `sum_grads`), free what the node saved (`free`), add a
leaf's gradient into its `.grad` (`accumulate_grad`), fill retained gradients (`fill_retained`), check for NaN
under anomaly mode (`check_nan`). The plain walk writes the commonest of them inline, and says so.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import grad_mode, provenance
from .grad_mode import state
from .node import FREED, LATE_COUNTER, STAMP, AccumulateGrad, AnomalyTrace, Node, make_node, release_saved
from .reasons import failure, worded
from .temporaries import sum_into
from .tensor import Tensor, version_of


# -- 1. the roots -------------------------------------------------------------------------------------------
def roots_of(tensors: Sequence[Tensor], grads: Sequence[Any], what: str) -> list[tuple[Tensor, Tensor]]:
    """Each output with the gradient it starts from (one is implied for a single-element output), checked:
    `what` ("backward", "grad") names the call in the messages."""
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
            roots.append((t, implied_gradient(t)))  # of the output's shape: nothing to check
            continue
        if not isinstance(g, Tensor):
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


def implied_gradient(t: Tensor) -> Tensor:
    """The gradient a single-element output starts from when none is given: ones of its shape."""
    d = t._data
    one = _array(1, d.dtype)  # np.ones is a Python function: ten times the cost here
    # Tensor._make inlined (the reference, field by field; tests/engine/test_node_constructor.py compares every
    # slot): grad() pays it on every call
    g = _new(Tensor)
    g._data = one if not d.ndim else one.reshape(d.shape)
    g._requires_grad = False
    g._grad = None
    g.grad_fn = None
    g._output_nr = 0
    g._vc = None
    g._accumulator = None
    g._retains_grad = False
    g._inference = grad_mode.inference_seen and state.inference
    return g


# NumPy's module has a `__getattr__`, so CPython never specialises a load of its attributes: a global is
# ten times cheaper on the paths every grad() takes
_array = np.array


def edge_of(t: Tensor) -> tuple[Node, int]:
    """Where a gradient for `t` enters the graph: (its node, its output number there)."""
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    return t._accumulate_node(), 0


# -- 2. reachability and dependencies -----------------------------------------------------------------------
def reach(roots: list[Node], deps: dict[Node, int]) -> list[Node]:
    """Add to `deps` (which holds the roots, at 0) every node below `roots`, with the number of edges that
    lead into it; return the nodes whose saved values must be checked before a walk (`Node.check_saved`).
    An explicit stack: no recursion, so a chain of a million operations differentiates."""
    # nodes whose saved values were freed or may have changed in place (a loop: a comprehension is a call)
    suspects = []
    # Once a counter was made for a tensor after nodes may have saved it (LATE_COUNTER), the nodes older than
    # that are suspects too (node.may_be_stale, inline): tested as each node is first met, and kept after the
    # others in the order they were met, as a scan of `deps` would. Every backward after any in-place
    # change (an optimizer's step) passes here: a second pass over the graph cost it 6% of a small grad().
    late = LATE_COUNTER[0]
    stale: Any = [] if late else ()  # (appended to only when late)
    for n in roots:
        if n._versions is not None or n._saved is FREED:
            suspects.append(n)
        elif late and n._saved and getattr(n, "_seq", 0) < late:
            stale.append(n)
    stack = roots.copy()
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
                    elif late and child._saved and getattr(child, "_seq", 0) < late:
                        stale.append(child)
    if stale:
        suspects.extend(stale)
    return suspects


def check(suspects: list[Node], needed: set[Node] | None) -> None:
    """Raise now the error a walk would meet in the saved values (freed, changed in place) of a node among
    `suspects` (`reach`'s) that will run (`needed`: None for all)."""
    warn = grad_mode.anomaly_seen and state.anomaly
    for node in suspects:
        if needed is None or node in needed:
            if warn:
                try:
                    node.check_saved()
                except RuntimeError:
                    anomaly_warning(node)  # PyTorch's: the node that failed, and where it was made
                    raise
            else:
                node.check_saved()


class Plan:
    """One backward or grad() call, planned (see the module docstring): the fields every walk reads.

    - `root_edges`: per root, its node; `root_nodes`: the distinct ones, in order;
    - `deps`: per node below the roots, how many edges lead into it (a walk counts them down);
    - `buffers`: per node, the gradients arrived so far (one, or a list per output for several outputs);
    - `stored`: ids of arrays handed out (the roots' gradients, `.grad`s made): copied, never shared;
    - `capture`: per node where grad() reads a gradient, (output number, index in `inputs`);
      `captured`: what was read, per input;
    - `wanted_leaves`: the leaves' nodes backward(inputs=) accumulates into (None: every leaf's);
    - `needed`: the nodes that must run to bring gradients to the targets (None: all of them).
    """

    __slots__ = ("root_edges", "root_nodes", "deps", "buffers", "stored", "suspects", "inputs", "capture",
                 "captured", "wanted_leaves", "needed", "allow_unused")
    # No __init__: `plan_pass` and `plan_one` fill a `Plan()`, which is then made in C (type_call). One
    # class for every plan, so that the walks' reads of its fields stay specialised.

    def check_unused(self) -> None:
        """After the walk: grad() without allow_unused fails for an input no gradient reached."""
        inputs = self.inputs
        if inputs is not None and not self.allow_unused:
            for k, g in enumerate(self.captured):
                if g is None:
                    raise unused_error(k, inputs[k])

    def wanted(self) -> set[Node] | None:
        """The nodes whose inputs' gradients will be read (a formula may skip the others); None: all."""
        needed = self.needed
        return None if needed is None else needed | set(self.capture)


def plan_pass(roots: list[tuple[Tensor, Tensor]], inputs: Sequence[Tensor] | None = None,
              accumulate: bool = True, allow_unused: bool = True) -> Plan:
    """Plan the pass from `roots` (`roots_of`'s), aimed at `inputs` when given: grad()'s (read, not
    accumulated) or backward(inputs=)'s (the only leaves accumulated into; a non-leaf among them
    retains its gradient). Raises, before anything changed, whatever error the walk would meet."""
    self = Plan()
    # One call for the four steps: grad() of a small graph (a second derivative) spends a good part of
    # its time here, and each call more costs it. `edge_of` and `add_to_buffer` are written inline.
    # -- 1. the roots
    deps: dict[Node, int] = {}
    buffers: dict[Node, Any] = {}
    stored: set[int] = set()
    root_nodes: list[Node] = []
    root_edges: list[Node] = []
    for t, g in roots:
        node = t.grad_fn
        nr = t._output_nr if node is not None else 0
        if node is None:
            node = t._accumulate_node()
        root_edges.append(node)
        if node not in deps:
            deps[node] = 0
            root_nodes.append(node)
        if node.num_outputs == 1 and node not in buffers:
            buffers[node] = g
        else:
            add_to_buffer(buffers, node, nr, g, False)
        stored.add(id(g._data))
    self.root_edges, self.root_nodes, self.deps, self.buffers, self.stored = (
        root_edges, root_nodes, deps, buffers, stored)
    # -- 2. reachability and dependencies
    suspects = self.suspects = reach(root_nodes, deps)
    # -- 3. the targets
    capture: dict[Node, list[tuple[int, int]]] = {}
    self.capture, self.inputs, self.allow_unused = capture, inputs, allow_unused
    self.wanted_leaves: set[Node] | None = None
    needed: set[Node] | None = None
    if inputs is None:
        self.captured: list[Tensor | None] = []
    else:
        for k, t in enumerate(inputs):
            if type(t) is not Tensor and not isinstance(t, Tensor):
                raise TypeError(f"inputs: element {k} is a {type(t).__name__}, not a tensor")
            if not t._requires_grad:
                raise failure(f"inputs: element {k} does not require grad, so it has no gradient",
                              "input_no_grad", "One of the differentiated Tensors does not require grad",
                              index=k, tensor=t)
            node = t.grad_fn
            if node is None:
                node, nr = t._accumulate_node(), 0
            else:
                nr = t._output_nr
                if accumulate:
                    t.retain_grad()  # as PyTorch: backward(inputs=[nonleaf]) fills (and keeps filling) .grad
            places = capture.get(node)
            if places is None:
                capture[node] = [(nr, k)]
            else:
                places.append((nr, k))
        if accumulate:
            self.wanted_leaves = {n for n in capture if type(n) is AccumulateGrad}
        # Every recorded node leads to some leaf's AccumulateGrad; when all those leaves are targets (and
        # every target is a leaf), every node is needed, and the pruning pass can be skipped.
        if not _all_leaves_wanted(capture, deps):
            needed = _leading_to(set(capture), deps, root_nodes)
        if not allow_unused:
            for node, places in capture.items():
                if node not in deps:
                    k = places[0][1]
                    raise unused_error(k, inputs[k])
        self.captured = [None] * len(inputs)
    self.needed = needed
    # -- 4. the checks
    if suspects:
        check(suspects, needed)
    return self


def plan_one(out: Tensor, g: Tensor, inp: Tensor, allow_unused: bool) -> Plan:
    """`plan_pass([(out, g)], [inp], accumulate=False, allow_unused)` for grad() of one output with respect to one
    input, the commonest call (a second derivative makes two): the same fields in fewer steps, without the
    loops over roots and inputs. `out` requires grad (roots_of's check); anything rarer than one output of a
    node with one output, and an input that does not require grad (its error), takes plan_pass's steps.
    tests/engine/test_plan.py compares every field with Plan's over many graphs."""
    node = out.grad_fn
    if node is None:
        node = out._accumulate_node()
    if node.num_outputs != 1 or not inp._requires_grad:
        return plan_pass([(out, g)], [inp], False, allow_unused)
    deps = {node: 0}
    roots = [node]  # the root edges, the root nodes and reach's start alike: nobody changes it
    suspects = reach(roots, deps)
    target = inp.grad_fn
    if target is None:
        target, nr = inp._accumulator or inp._accumulate_node(), 0
    else:
        nr = inp._output_nr
    capture = {target: [(nr, 0)]}
    # _all_leaves_wanted for one target: it is a leaf, and the graph has no other leaf
    needed = None
    if type(target) is AccumulateGrad:
        for n in deps:
            if type(n) is AccumulateGrad and n is not target:
                needed = _leading_to({target}, deps, roots)
                break
    else:
        needed = _leading_to({target}, deps, roots)
    if not allow_unused and target not in deps:
        raise unused_error(0, inp)
    # one store a field (an assignment of more than three names at once packs and unpacks a tuple)
    plan = Plan()
    plan.root_edges = plan.root_nodes = roots
    plan.deps = deps
    plan.buffers = {node: g}
    plan.stored = {id(g._data)}
    plan.suspects = suspects
    plan.inputs = [inp]
    plan.allow_unused = allow_unused
    plan.wanted_leaves = None
    plan.needed = needed
    plan.capture = capture
    plan.captured = [None]
    if suspects:
        check(suspects, needed)
    return plan


_new = object.__new__


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


# -- what a walk does at a node -----------------------------------------------------------------------------
def sum_grads(old: Any, g: Any, raw: bool, in_place: bool = False) -> Any:
    """Add a gradient to a buffer's: recorded tensors under create_graph; otherwise bare arrays, added in
    place into one of the two (`in_place`: called from the plain walk) when nobody else holds it, so that a
    leaf reached by many paths costs one array, not one per path (temporaries.sum_into reads the counts
    this call makes: the walk holds each in a container and one variable)."""
    if not raw:
        return old + g
    if in_place and (type(old) is np.ndarray or type(g) is np.ndarray):  # (0-d gradients are NumPy scalars)
        total = sum_into(old, g)  # None unless one of the two may take the sum
        if total is not None:
            return total
    return (old._data if type(old) is Tensor else old) + (g._data if type(g) is Tensor else g)


def add_to_buffer(buffers: dict[Node, Any], node: Node, nr: int, g: Any, raw: bool) -> None:
    """Add `g`, a gradient for output `nr` of `node`, to what arrived there before."""
    if node.num_outputs == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else sum_grads(old, g, raw)
    else:
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_outputs
        slots[nr] = g if slots[nr] is None else sum_grads(slots[nr], g, raw)


def arrays(grads: Any) -> Any:
    """Gradients as bare arrays (a list for nodes with several outputs)."""
    if type(grads) is list:
        return [g._data if type(g) is Tensor else g for g in grads]
    return grads._data if type(grads) is Tensor else grads


def tensors(grads: Any) -> Any:
    """Gradients as tensors (a list for nodes with several outputs)."""
    if type(grads) is list:
        return [g if g is None or type(g) is Tensor else Tensor._make(np.asarray(g), False, None) for g in grads]
    return grads if type(grads) is Tensor else Tensor._make(np.asarray(grads), False, None)


def free(node: Node) -> bool:
    """Release what `node` saved, after its formula ran in a backward without retain_graph; whether there
    was anything to release (a node that saved nothing can run again, as in PyTorch)."""
    if node._saved:
        release_saved(node)
        return True
    return False


def check_nan(node: Node, outs: Sequence[Any]) -> None:
    """Anomaly mode: a NaN in a gradient the node computed is an error naming where the node was made."""
    for i, g in enumerate(outs):
        d = g._data if type(g) is Tensor else g
        if g is not None and np.asarray(d).dtype.kind == "f" and np.isnan(d).any():
            trace = getattr(node, "_trace", None)  # unset on nodes made before any stamp was asked for
            # a front end's origin may give a longer form for this message (`located()`: file, line, column)
            if trace is not None and hasattr(trace, "located"):
                trace = trace.located()
            where = f"\n{trace}" if trace is not None else ""
            anomaly_warning(node)
            raise failure(
                f"anomaly: {node.name()} returned NaN in its gradient {i}; the forward operation that made "
                f"this node was:{where}",
                "nan", f"Function '{node.name()}' returned nan values in its {i}th output.", node=node,
                index=i, grads=tuple(outs),
            )


def anomaly_warning(node: Node) -> None:
    """Anomaly mode's warning as PyTorch's, naming the failing node and the forward call that made it (in plain
    Python only: a front end's origin says where in its own words). PyTorch writes its ordinals `0th`, `1th`."""
    trace = getattr(node, "_trace", None)
    if isinstance(trace, AnomalyTrace):
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}",
                      UserWarning, stacklevel=3)


class CopyBackwards(Node):
    """The first gradient accumulated into a leaf under create_graph is a copy of the incoming one."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (g,)


def _copy_for_grad(g: Tensor, create_graph: bool) -> Tensor:
    if create_graph and g._requires_grad:
        node = make_node(CopyBackwards, (), None)
        node.next_functions = (edge_of(g),)
        return Tensor._make(g._data.copy(), True, node)
    return Tensor._make(np.array(g._data, copy=True), False, None)


def _owned(g: Tensor, stored: set[int]) -> bool:
    """Whether `g` can become a `.grad` as it is: nobody else holds it, and its array is writable."""
    d = g._data
    return id(d) not in stored and d.base is None and d.flags.writeable and g.grad_fn is None


def accumulate_grad(node: AccumulateGrad, g: Any, stored: set[int], create_graph: bool) -> None:
    """Add `g` into the `.grad` of the leaf of `node`, as PyTorch's AccumulateGrad does."""
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


def fill_retained(node: Node, grads: Any, stored: set[int], create_graph: bool) -> None:
    """Fill the `.grad` of the tensors made by `node` that retain their gradient (`retain_grad`)."""
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
                t._grad = g.clone()
            else:
                t._grad = _copy_for_grad(g, False)
            stored.add(id(t._grad._data))
        elif create_graph:
            t._grad = t._grad + g
        else:
            t._grad = Tensor._make(t._grad._data + g._data, False, None)
