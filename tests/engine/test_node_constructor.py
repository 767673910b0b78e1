"""One node constructor (node.make_node, which core.record uses) as the reference, and the paths that write its
slots inline for speed (arithmetic's `binary._binary`, the elementwise rows' functions, which also make their
result as Tensor._make does) or build tangent-only nodes (forward_ad.record): every node kind, made by every
path, under every stamping state (none, a front end's origin, anomaly mode, saved-tensor hooks) and from every
kind of input (a fresh leaf, a leaf with its AccumulateGrad, an output other than a node's first, a tensor with
a version counter), has every slot as the reference makes it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pytest

import gradcalc as gc
from gradcalc.autograd import forward_ad
from gradcalc.autograd.forward_ad import FORWARD_EDGE
from gradcalc.autograd.graph import saved_tensors_hooks
from gradcalc.autograd.node import NOTHING, Node, make_node, set_origin
from gradcalc.autograd.ops import binary, elementwise
from gradcalc.autograd.ops.core import record
from gradcalc.autograd.ops.unary import ROWS
from gradcalc.autograd.plan import implied_gradient
from gradcalc.autograd.tensor import Tensor

UNSET = object()
# what the constructor sets, and what only later steps may (saving, freeing, hooks, tangents)
SLOTS = ("_next", "_nrs", "_extras", "_versions", "_trace", "_fwd", "_empty")


def _slot(node: Node, name: str) -> Any:
    return getattr(node, name, UNSET)


def _inputs(kind: str) -> list[Any]:
    """Two tensors that require grad, of the kind asked for."""
    a, b = gc.tensor([0.5, 1.5, 2.0], requires_grad=True), gc.tensor([1.25, 0.75, 3.0], requires_grad=True)
    if kind == "accumulated":  # leaves whose AccumulateGrad exists already
        (a * b).sum().backward()
    elif kind == "outputs":  # second outputs of a node (output_nr 1)
        a = gc.stack([a, a]).unbind(0)[1]
        b = gc.stack([b, b]).split(1)[1].reshape(3)
    elif kind == "versioned":  # tensors with a version counter
        a, b = a * 1.0, b * 1.0
        a.add_(0.0)
        b.mul_(1.0)
    return [a, b]


@contextmanager
def _stamping(state: str) -> Iterator[None]:
    if state == "origin":
        previous = set_origin("statement 7")
        try:
            yield
        finally:
            set_origin(previous)
    elif state == "anomaly":
        with gc.autograd.detect_anomaly(check_nan=False):
            yield
    elif state == "hooks":
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            yield
    else:
        yield


def _compare_output(out: Tensor) -> None:
    """An operation's result, made inline by a hot path, against Tensor._make's: every slot."""
    reference = Tensor._make(out._data, True, out.grad_fn)
    saved = out.grad_fn._saved or ()
    if any(getattr(s, "_vc", None) is out._vc is not None for s in saved):  # saved as the node's own output
        reference._vc = out._vc
    for name in Tensor.__slots__:
        if name not in ("__weakref__", "_data"):
            assert _slot(out, name) is _slot(reference, name) or _slot(out, name) == _slot(reference, name), name


def _compare(node: Node, edge_inputs: list[Any], state: str) -> None:
    """`node` against the reference: a node of its class recorded for `edge_inputs` (a tensor or None per edge),
    then saving what `node` saved."""
    reference = record(type(node), *edge_inputs)
    assert reference is not None and type(reference) is type(node)
    saved = node._saved
    if saved is not None and saved is not NOTHING:
        reference.save(*saved)
    else:
        reference._saved = saved
    for name in SLOTS:
        ours, theirs = _slot(node, name), _slot(reference, name)
        if name == "_trace" and state == "anomaly":  # the forward traceback: where each was made
            assert type(ours) is type(theirs), name
        elif name == "_next":
            assert len(ours) == len(theirs) and all(x is y for x, y in zip(ours, theirs, strict=True)), name
        else:
            assert ours == theirs, f"{type(node).__name__}.{name}: {ours!r}, the reference's {theirs!r}"
    assert isinstance(node._seq, int) and node._seq < reference._seq
    assert _slot(node, "_saved") is saved and (saved is None or saved is NOTHING or all(
        x is y for x, y in zip(saved, reference._saved, strict=True)))


# the binary nodes, each by the operations that make it: (kind, operation, the inputs by edge)
BINARY: list[tuple[str, Callable[[Any, Any], Any], Callable[[Any, Any], list]]] = [
    ("AddBackward0", lambda a, b: a + b, lambda a, b: [a, b]),
    ("AddBackward0 number", lambda a, b: a + 2.0, lambda a, b: [a, None]),
    ("AddBackward0 alpha", lambda a, b: gc.add(a, b, alpha=2.0), lambda a, b: [a, b]),
    ("AddBackward1", lambda a, b: binary.add_scalar(a, 2.0), lambda a, b: [a]),
    ("SubBackward1", lambda a, b: binary.sub_scalar(a, 2.0), lambda a, b: [a]),
    ("SubBackward0", lambda a, b: a - b, lambda a, b: [a, b]),
    ("RsubBackward1", lambda a, b: 2.0 - a, lambda a, b: [a]),
    ("MulBackward0", lambda a, b: a * b, lambda a, b: [a, b]),
    ("MulBackward0 number", lambda a, b: 2.0 * a, lambda a, b: [a, None]),
    ("MulBackward0 constant", lambda a, b: a * b.detach(), lambda a, b: [a, None]),
    ("MulBackward1", lambda a, b: binary.mul_scalar(a, 2.0), lambda a, b: [a]),
    ("DivBackward0", lambda a, b: a / b, lambda a, b: [a, b]),
    ("DivBackward0 number", lambda a, b: a / 2.0, lambda a, b: [a, None]),
    ("DivBackward1", lambda a, b: binary.div_scalar(a, 2.0), lambda a, b: [a]),
    ("PowBackward0", lambda a, b: a**2.0, lambda a, b: [a]),
    ("PowBackward1", lambda a, b: a**b, lambda a, b: [a, b]),
    ("RemainderBackward0", lambda a, b: a % 2.0, lambda a, b: [a]),
    ("RemainderBackward1", lambda a, b: a % b, lambda a, b: [a, b]),
    ("MaximumBackward0", lambda a, b: elementwise.maximum(a, b), lambda a, b: [a, b]),
    ("MinimumBackward0", lambda a, b: elementwise.minimum(a, b), lambda a, b: [a, b]),
    ("AddBackward0 broadcast", lambda a, b: a + b, lambda a, b: [a, b]),  # b of shape (1,): see BROADCAST
]
BROADCAST = {"AddBackward0 broadcast"}
KINDS = ["fresh", "accumulated", "outputs", "versioned"]
STATES = ["plain", "origin", "anomaly", "hooks"]


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", BINARY, ids=[c[0] for c in BINARY])
def test_the_binary_path_makes_the_reference_node(case: tuple, kind: str, state: str) -> None:
    name, op, edges = case
    a, b = _inputs(kind)
    if name in BROADCAST:
        b = b[:1]
    with _stamping(state):
        out = op(a, b)
        _compare_output(out)
        node = out.grad_fn
        assert type(node).__name__ == name.split()[0] and type(node).__module__.endswith((".binary", ".arithmetic",
                                                                                         ".elementwise"))
        _compare(node, edges(a, b), state)


# results that record nothing, which `_binary` and `_binary_number` make inline as Tensor._make does: tensor and
# tensor, tensor and number, and the Scalar overloads backward formulas call
UNRECORDED: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("tensor * tensor", lambda a, b: a * b),
    ("tensor + tensor", lambda a, b: a + b),
    ("tensor * number", lambda a, b: a * 2.0),
    ("tensor ** number", lambda a, b: a**3),
    ("mul_scalar", lambda a, b: binary.mul_scalar(a, 2.0)),
    ("implied gradient", lambda a, b: implied_gradient(a.sum())),  # grad()'s ones, written inline too
]


@pytest.mark.parametrize("mode", ["constants", "no_grad", "inference_mode"])
@pytest.mark.parametrize("case", UNRECORDED, ids=[c[0] for c in UNRECORDED])
def test_a_result_that_records_nothing_is_the_reference(case: tuple, mode: str) -> None:
    _, op = case
    a, b = _inputs("fresh")
    if mode == "constants":
        a, b = a.detach(), b.detach()
    with gc.no_grad() if mode == "no_grad" else gc.inference_mode() if mode == "inference_mode" else nullcontext():
        out = op(a, b)
        reference = Tensor._make(out._data, False, None)  # made in the same mode: an inference tensor in one
    assert out.grad_fn is None and not out.requires_grad and out.is_inference() == (mode == "inference_mode")
    for name in Tensor.__slots__:
        if name not in ("__weakref__", "_data"):
            assert _slot(out, name) == _slot(reference, name), name


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("row", sorted(ROWS))
def test_the_elementwise_rows_make_the_reference_node(row: str, kind: str, state: str) -> None:
    a, _ = _inputs(kind)
    with _stamping(state):
        out = ROWS[row].function(a)
        _compare_output(out)
        node = out.grad_fn
        assert type(node) is ROWS[row].node
        _compare(node, [a], state)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_tangent_only_node_is_the_reference_with_forward_edges(kind: str, state: str) -> None:
    """forward_ad.record's node for an operation nothing requires grad of: the reference's slots, edges to the
    inputs that carry a tangent, and what it notes for the tangent (`_fwd`)."""
    a, b = (t.detach() for t in _inputs(kind))
    with _stamping(state), forward_ad.dual_level():
        dual = forward_ad.make_dual(a, gc.ones(3))
        for out in (gc.sum(dual), dual.reshape(3, 1), gc.stack([dual, b])):
            node = out._fw.node  # the node of the pending tangent
            reference = make_node(type(node), tuple(FORWARD_EDGE if n is not None else None for n in node._next), None)
            for name in ("_next", "_nrs", "_extras", "_versions"):
                assert _slot(node, name) == _slot(reference, name), name
            assert (_slot(node, "_trace") is UNSET) == (_slot(reference, "_trace") is UNSET)
            assert node._fwd[2] is True and not out.requires_grad


def test_every_node_kind_a_path_inlines_is_covered() -> None:
    """The binary path's node classes and the rows are all above; the other paths are core.record itself."""
    binary_kinds = {c[0].split()[0] for c in BINARY}
    inlined = {cls.__name__ for cls in _subclasses(binary._Binary) if cls.spec is not None}
    assert inlined - binary_kinds == {"PowBackward2"}  # made by core.record, as number ** tensor
    node = (2.0 ** gc.tensor([1.0], requires_grad=True)).grad_fn
    assert type(node).__name__ == "PowBackward2"


def _subclasses(cls: type) -> set[type]:
    out, stack = set(), [cls]
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            out.add(s)
            stack.append(s)
    return out


def test_recorded_node_classes_are_made_without_an_init() -> None:
    """make_node and the inlined paths make a node by `cls()`: only the nodes made elsewhere (a leaf's
    AccumulateGrad, a custom Function's node) may have a constructor of their own; any other would run (or
    fail) on every recorded operation."""
    from gradcalc.autograd.function import BackwardCFunction
    from gradcalc.autograd.node import AccumulateGrad, Node

    own = {c for c in _subclasses(Node) if "__init__" in vars(c) or "__new__" in vars(c)}
    made_elsewhere = {AccumulateGrad, BackwardCFunction}
    assert {c for c in own if not any(issubclass(c, m) for m in made_elsewhere)} == set()
    assert "__init__" not in vars(Node) and "__new__" not in vars(Node)
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    for y in (x * 2.0, x * x, x.exp(), x.sum(), x[0]):
        assert y.grad_fn._seq > 0 and type(y.grad_fn._next) is tuple


def test_no_node_is_made_by_calling_its_class_outside_the_recording_paths() -> None:
    """A node class called bare (`X()`) gets no field at all (Node has no __init__): every node outside the
    recording paths is made by make_node (or has a constructor of its own, as AccumulateGrad)."""
    import re
    from pathlib import Path

    from gradcalc.autograd.node import Node

    bare = {c.__name__ for c in _subclasses(Node) if not any("__init__" in vars(k) for k in c.__mro__[:-2])}
    names = "|".join(sorted(bare))
    called = re.compile(rf"\b({names})\(\)")
    root = Path(gc.__file__).parent
    found = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if called.search(line)]
    assert found == []
