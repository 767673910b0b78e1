"""What a front end may read of the engine: nodes, tensors, backward passes and errors, read-only and typed.

The language's `explain`, `graph` and messages read the engine through this module and nothing else of its
insides (a test checks that the language reads no private name of the engine). Everything here only reads:
nothing changes a graph, a `.grad`, a version or a saved value, and nothing runs user code (saved-tensor
unpack hooks included).

- **Nodes**: `inputs` (per input of the operation, the `Edge` its gradient goes to), `num_outputs`,
  `saved` (what the node saved, by PyTorch's names, with versions then and now, freed or packed),
  `saved_names`, `is_freed`, `hooks`, `origin` (what the front end was running when the node was made),
  `formulas`/`formula` (the derivative as mathematics, from the operation's spec), `accumulates` (a leaf's
  AccumulateGrad), `leaf` (its tensor), `nodes_below`, `reaches`.
- **Tensors**: `state` (leaf, requires grad, `.grad`, version, view...), `grad_of` (`.grad` without the
  non-leaf warning), `edge_of` (where a gradient for the tensor enters the graph), `version_key` (shared
  by views and detached aliases), `snapshot`.
- **Backward passes as they run**: `observe(listener)` hears `NodeRan` and `GradWritten` records (with
  `HookFired` records inside), in PyTorch's order.
- **History** (kept while a front end's origin is set, see `graph.set_origin`): `call_history` (the last
  backward and grad() calls, `BackwardCall`), `in_place_changes` (`InPlaceChange`), `last_grad_set`
  (`GradSet`), `grad_writes`.
- **Errors**: `reason_of(exc)`: what an engine error is about, as one of the `ErrorReason` records.
- Messages: `broadcast_message` (PyTorch's words for shapes that do not broadcast).
(How a tensor prints is `printing.tensor_repr`, the engine's printer.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np

from . import events, provenance
from . import saved as saved_module
from .listen import observe_backward
from .node import AccumulateGrad, Node
from .ops.core import broadcast_message
from .reasons import REASONS
from .saved import FREED, FREED_VALUE
from .tensor import Tensor

__all__ = [
    "BackwardCall", "CALLS_KEPT", "CallHistory", "Edge", "ErrorReason", "Freed", "GradSet", "GradWritten",
    "HookFired", "InPlaceChange", "InferenceInPlace", "InferenceSaved", "InputNoGrad", "LeafInPlace", "NanGradient",
    "NoGradOutput", "NodeHooks", "NodeRan", "NonScalar", "SavedValue", "TensorState", "Unused", "VersionMismatch",
    "accumulates", "broadcast_message", "call_history", "edge_of", "formula", "formulas", "grad_of", "grad_writes",
    "hooks", "in_place_changes", "inputs", "is_freed", "last_grad_set", "leaf", "nodes_below", "num_outputs",
    "observe", "origin", "reaches", "reason_of", "saved", "saved_names", "snapshot", "state", "version_key",
]


# -- records ----------------------------------------------------------------------------------------------
class Record:
    """The base of this module's records: read-only objects whose fields are their `__slots__` (a
    subclass's after its parents'), made by position or by keyword (`_defaults` holds the optional ones),
    shown and compared by their fields. Not dataclasses: the language prints through this module, and
    making a dataclass costs every cold start about half a millisecond (twenty records: ten)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = cls._fields + tuple(cls.__dict__.get("__slots__", ()))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if not kwargs and len(args) == len(fields):  # every field by position: what a walk of a big graph makes
            setter = object.__setattr__
            for name, value in zip(fields, args, strict=True):
                setter(self, name, value)
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, not {len(args)}")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {name!r}")
            values[name] = value
        for name in fields:
            if name not in values:
                if name not in self._defaults:
                    raise TypeError(f"{type(self).__name__}: missing field {name!r}")
                values[name] = self._defaults[name]
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        shown = (f"{f}={getattr(self, f)!r}" for f in self._fields if not f.startswith("_"))
        return f"{type(self).__name__}({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        """Equal records: of one type, with the same objects (tensors, nodes) and equal plain values."""
        return type(other) is type(self) and all(
            _key(getattr(self, f)) == _key(getattr(other, f)) for f in self._fields if not f.startswith("_"))

    def __hash__(self) -> int:
        return hash((type(self), *(_key(getattr(self, f)) for f in self._fields if not f.startswith("_"))))


_PLAIN = (int, float, str, bool, type(None))


def _key(value: Any) -> Any:
    """What a record compares of a field: a plain value itself, any other object by identity."""
    if type(value) in _PLAIN:
        return value
    if type(value) is tuple:
        return tuple(_key(v) for v in value)
    return ("id", id(value))


# -- nodes ------------------------------------------------------------------------------------------------
class Edge(Record):
    """Where a gradient goes: output `output_nr` of `node` (PyTorch's `next_functions` pair)."""

    __slots__ = ("node", "output_nr")

    node: Node
    output_nr: int


def inputs(node: Node) -> tuple[Edge | None, ...]:
    """Per input of the node's operation, the edge its gradient goes to (None: it needs no gradient)."""
    nexts = node._next
    nrs = node._nrs or (0,) * len(nexts)
    return tuple(None if n is None else Edge(n, nr) for n, nr in zip(nexts, nrs, strict=True))


def num_outputs(node: Node) -> int:
    """How many outputs the node's operation has (each with its own gradient)."""
    return node.num_outputs


class SavedValue(Record):
    """One value a node saved for backward, read without checks and without unpack hooks.

    - `name`: PyTorch's (`self`, `other`, `result`, `exponent`...; `saved_tensors[i]` for a custom Function);
    - `value`: the tensor as saved (the very tensor, when it is one the front end holds), or a value that is
      not a tensor; None when freed, packed, or when nothing was saved there;
    - `index`: its position among the node's saved tensors (what a version error's `index` counts);
    - `saved_version` / `version`: a saved tensor's version when saved and now (None when not a tensor,
      freed or not kept)."""

    __slots__ = ("name", "value", "is_tensor", "freed", "packed", "index", "saved_version", "version")

    name: str
    value: Any
    is_tensor: bool
    freed: bool
    packed: bool
    index: int | None
    saved_version: int | None
    version: int | None


def saved(node: Node) -> tuple[SavedValue, ...]:
    """What `node` saved for backward, by PyTorch's names, in PyTorch's order (see `SavedValue`)."""
    specs = type(node).saved_names
    out = []
    for i, d in enumerate(saved_module.details(node)):
        spec = specs.get(d.name)
        index = spec.index if spec is not None else (i if d.name.startswith("saved_tensors[") else None)
        freed = d.value is FREED_VALUE
        out.append(SavedValue(d.name, None if freed else d.value, d.is_tensor, freed, d.packed, index,
                              d.saved_version, d.version))
    return tuple(out)


def saved_names(node: Node, tensors_only: bool = False) -> tuple[str, ...]:
    """PyTorch's names of what the node's class saves (`tensors_only`: of the saved tensors only)."""
    return tuple(n for n, spec in type(node).saved_names.items() if spec.is_tensor or not tensors_only)


def is_freed(node: Node) -> bool:
    """Whether a backward without retain_graph released the node's saved values."""
    return node._saved is FREED


class NodeHooks(Record):
    """What is registered on a node: tensor hooks per output number (`Tensor.register_hook` on the tensors
    it made; a leaf's on its AccumulateGrad), prehooks, hooks, a leaf's post-accumulate hooks, and the
    output numbers whose tensor retains its gradient."""

    __slots__ = ("tensor", "prehooks", "hooks", "post_accumulate", "retained")

    tensor: dict[int, tuple[Callable[..., Any], ...]]
    prehooks: tuple[Callable[..., Any], ...]
    hooks: tuple[Callable[..., Any], ...]
    post_accumulate: tuple[Callable[..., Any], ...]
    retained: tuple[int, ...]


def hooks(node: Node) -> NodeHooks:
    """The hooks registered on `node` (empty when none)."""
    extras = node._extras
    if extras is None:
        return NodeHooks({}, (), (), (), ())
    return NodeHooks(
        {nr: tuple(d.values()) for nr, d in extras.tensor_hooks.items() if d},
        tuple(extras.pre_hooks.values()), tuple(extras.post_hooks.values()),
        tuple(extras.post_accumulate.values()),
        tuple(nr for nr, ref in extras.retained.items() if ref() is not None),
    )


def origin(node: Node) -> Any:
    """What the front end was running when the node was made (`graph.set_origin`); None otherwise, and for
    a leaf's AccumulateGrad (made on the leaf's first use, by no statement of its own)."""
    return None if type(node) is AccumulateGrad else node.origin


def formulas(node: Node) -> tuple[tuple[str | None, str], ...]:
    """The node's derivative as mathematics, as PyTorch's derivatives.yaml writes it, from its operation's
    spec (the class's `formula`, or else its spec's): per input, `(PyTorch's argument name, formula)` in the
    spec's order (`(("self", "grad * other"), ("other", "grad * self"))`), or one `(None, formula)` for a
    formula written for the whole node. Empty where none is written (a leaf's AccumulateGrad, a custom
    Function's node, an operation without a spec)."""
    cls = type(node)
    written = getattr(cls, "formula", None)
    if written is None:
        written = getattr(getattr(cls, "spec", None), "formula", None)
    if isinstance(written, str):
        return ((None, written),) if written else ()
    if isinstance(written, Mapping):
        return tuple((str(name), text) for name, text in written.items() if isinstance(text, str) and text)
    return ()


def formula(node: Node) -> str | None:
    """`formulas(node)` on one line, as derivatives.yaml's lines read: `self: grad * other; other: grad * self`
    (a formula for the whole node as it is); None where none is written."""
    parts = formulas(node)
    if not parts:
        return None
    return "; ".join(text if name is None else f"{name}: {text}" for name, text in parts)


def accumulates(node: Node) -> bool:
    """Whether `node` is a leaf's AccumulateGrad (PyTorch's node that adds a gradient into a leaf's `.grad`
    and passes nothing on), alive or not."""
    return type(node) is AccumulateGrad


def leaf(node: Node) -> Tensor | None:
    """The tensor a leaf's AccumulateGrad node adds into (None for other nodes, or once it died)."""
    return node.variable if type(node) is AccumulateGrad else None


def nodes_below(roots: Sequence[Node | None]) -> Iterator[Node]:
    """Every node below `roots` (themselves included) once, depth first, inputs in order (an explicit
    stack: a chain of a million operations has no recursion limit)."""
    seen: set[int] = set()
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(n for n in reversed(node._next) if n is not None)


def reaches(roots: Sequence[Node], target: Node, limit: int = 1_000_000) -> bool:
    """Whether `target` is in the graph below `roots` (at most `limit` nodes looked at)."""
    return provenance.reaches(roots, target, limit)


# -- tensors ----------------------------------------------------------------------------------------------
class TensorState(Record):
    """What autograd knows of a tensor. `version` is None for an inference tensor (it has no counter);
    `base` is the tensor a view shows (None for one that owns its memory)."""

    __slots__ = ("requires_grad", "is_leaf", "grad", "retains_grad", "grad_fn", "output_nr", "version", "is_view",
                 "base", "is_inference")

    requires_grad: bool
    is_leaf: bool
    grad: Tensor | None
    retains_grad: bool
    grad_fn: Node | None
    output_nr: int
    version: int | None
    is_view: bool
    base: Tensor | None
    is_inference: bool


def state(t: Tensor) -> TensorState:
    """The tensor's autograd state, read without warnings (see `TensorState`)."""
    base = getattr(t, "_view_of", None)
    version = None if t._inference else (0 if t._vc is None else t._vc.value)
    return TensorState(t._requires_grad, t.grad_fn is None, t._grad, t._retains_grad, t.grad_fn, t._output_nr,
                       version, base is not None, base, t._inference)


def grad_of(t: Tensor) -> Tensor | None:
    """`t.grad`, without the warning PyTorch gives for a non-leaf's."""
    return t._grad


def edge_of(t: Tensor, create: bool = True) -> Edge | None:
    """Where a gradient for `t` enters the graph: its grad_fn and output number, or a leaf's AccumulateGrad
    node (made now unless `create` is False; then None when the leaf has none yet); None for a tensor that
    does not require grad."""
    if t.grad_fn is not None:
        return Edge(t.grad_fn, t._output_nr)
    if not t._requires_grad:
        return None
    acc = t._accumulate_node() if create else t._accumulator
    return None if acc is None else Edge(acc, 0)


def version_key(t: Tensor) -> object | None:
    """The identity of `t`'s version counter, shared with its views and detached aliases (None while it has
    none: it was never changed in place, viewed nor detached)."""
    return t._vc


def snapshot(t: Tensor | None) -> Tensor | None:
    """A copy of `t`'s values as they are now, with its requires_grad, grad_fn and output number, to show
    later (a later backward may change a `.grad` in place)."""
    if t is None:
        return None
    s = Tensor._make(np.array(t._data, copy=True), t._requires_grad, t.grad_fn)
    s._output_nr = t._output_nr
    return s


# -- backward passes, as they run -------------------------------------------------------------------------
class HookFired(Record):
    """A hook that ran: `kind` is "tensor" (Tensor.register_hook), "prehook" (Node.register_prehook), "hook"
    (Node.register_hook) or "post_accumulate_grad"; `replaced`: it returned a replacement gradient."""

    __slots__ = ("kind", "hook", "replaced")

    kind: str
    hook: Callable[..., Any]
    replaced: bool


class NodeRan(Record):
    """A node taking its turn in a backward pass.

    - `grad_outputs`: per output, the gradient it received (after the hooks), or None;
    - `grad_inputs`: per input edge, the gradient passed on (None: nothing goes that way);
    - `to`: per input edge, the node that gradient goes to (None: that input needs no gradient);
    - `hooks`: the hooks that ran at the node, in order; `freed`: PyTorch's names of the saved values
      released after it ran (empty with retain_graph);
    - `executed`: False for a node grad() only read a gradient at (it computes nothing further)."""

    __slots__ = ("node", "grad_outputs", "grad_inputs", "to", "hooks", "freed", "executed")

    kind: ClassVar[str] = "node_ran"
    node: Node
    grad_outputs: tuple[Tensor | None, ...]
    grad_inputs: tuple[Tensor | None, ...]
    to: tuple[Node | None, ...]
    hooks: tuple[HookFired, ...]
    freed: tuple[str, ...]
    executed: bool


class GradWritten(Record):
    """A `.grad` written by a backward pass: a leaf's (added into, `retained` False) or a non-leaf's that
    retains its gradient (`retained` True); `before` and `after` are copies (None: no .grad)."""

    __slots__ = ("tensor", "node", "grad", "before", "after", "retained")

    kind: ClassVar[str] = "grad_written"
    tensor: Tensor
    node: Node
    grad: Tensor
    before: Tensor | None
    after: Tensor | None
    retained: bool


BackwardEvent = NodeRan | GradWritten


def _typed(e: events.Event) -> BackwardEvent:
    if type(e) is events.NodeRun:
        fired = tuple(HookFired(h.kind, h.hook, h.replaced) for h in e.hooks)
        return NodeRan(e.node, e.grad_outputs, e.grad_inputs, e.to, fired, e.freed, e.executed)
    return GradWritten(e.tensor, e.node, e.grad, e.before, e.after, type(e) is events.GradRetained)


@contextmanager
def observe(listener: Callable[[BackwardEvent], None]) -> Iterator[None]:
    """Within the block, every backward or grad() run in this thread calls `listener` with a record per
    step, in PyTorch's order: a node's `GradWritten` records come before its `NodeRan`. Gradients are the
    engine's own tensors at that moment: a listener that keeps them should keep `snapshot`s."""
    with observe_backward(lambda e: listener(_typed(e))):
        yield


# -- history: what the front end's statements did ---------------------------------------------------------
CALLS_KEPT = provenance.KEPT  # how many backward/grad() calls the history keeps


class BackwardCall(Record):
    """A backward (`accumulate`) or grad() call that succeeded, numbered by `serial`, with the front end's
    `origin`, its flags, its root nodes still alive and its inputs (None for one that died)."""

    __slots__ = ("serial", "origin", "accumulate", "retain_graph", "create_graph", "roots", "inputs", "_call")

    serial: int
    origin: Any
    accumulate: bool
    retain_graph: bool
    create_graph: bool
    roots: tuple[Node, ...]
    inputs: tuple[Tensor | None, ...]
    _call: Any

    def wrote_into(self, t: Tensor) -> bool:
        """Whether this call wrote into `t.grad`."""
        return bool(self._call.wrote_into(t))


class CallHistory(Record):
    """The calls kept, oldest first; `full` when as many are kept as there is room for (older ones may
    have been dropped)."""

    __slots__ = ("calls", "full")

    calls: tuple[BackwardCall, ...]
    full: bool


def _call(c: provenance.Call) -> BackwardCall:
    return BackwardCall(c.serial, c.origin, c.accumulate, c.retain_graph, c.create_graph, tuple(c.root_nodes()),
                        tuple(c.input_tensors()), c)


def call_history() -> CallHistory:
    """The backward and grad() calls kept (the last `CALLS_KEPT`)."""
    calls = tuple(_call(c) for c in provenance.recent())
    return CallHistory(calls, len(calls) == CALLS_KEPT)


class InPlaceChange(Record):
    """`origin` (what the front end ran) changed a tensor in place, producing versions `first` to `last`."""

    __slots__ = ("origin", "first", "last")

    origin: Any
    first: int
    last: int


def in_place_changes(t: Tensor) -> list[InPlaceChange]:
    """The in-place changes kept for `t`'s data (shared with its views and detached aliases), oldest first."""
    return [InPlaceChange(o, a, b) for o, a, b in provenance.changes(t._vc)]


class GradSet(Record):
    """`t.grad = ...` (or zero_grad) ran in `origin`, after the call numbered `after_call`; `to_none`: it
    set None."""

    __slots__ = ("origin", "after_call", "to_none")

    origin: Any
    after_call: int
    to_none: bool


def last_grad_set(t: Tensor) -> GradSet | None:
    """The last time `t.grad` was set directly, if kept."""
    found = provenance.last_set(t)
    return None if found is None else GradSet(*found)


def grad_writes(t: Tensor) -> tuple[GradSet | None, list[BackwardCall]]:
    """What made `t.grad` what it is: its last direct set (or None) and the calls kept since that wrote
    into it."""
    cleared, calls = provenance.grad_writes(t)
    return (None if cleared is None else GradSet(*cleared)), [_call(c) for c in calls]


# -- errors -----------------------------------------------------------------------------------------------
class ErrorReason(Record):
    """What an engine error is about (its message says it in words): one subclass per reason."""

    __slots__ = ()

    reason: ClassVar[str] = ""


class Freed(ErrorReason):
    """A backward or a read needed values a node saved, which an earlier backward freed."""

    __slots__ = ("node",)

    reason: ClassVar[str] = "freed"
    node: Node


class VersionMismatch(ErrorReason):
    """A tensor the node saved (its saved tensor `index`) was changed in place since: its version was
    `saved_version` when saved and is `version` now."""

    __slots__ = ("tensor", "node", "index", "saved_version", "version")

    reason: ClassVar[str] = "version"
    tensor: Tensor
    node: Node
    index: int
    saved_version: int
    version: int


class LeafInPlace(ErrorReason):
    """`what` would change in place a leaf that requires grad (`tensor`), or a view of it (`view`)."""

    __slots__ = ("tensor", "what", "view")
    _defaults: ClassVar[dict[str, Any]] = {"view": None}

    reason: ClassVar[str] = "leaf_inplace"
    tensor: Tensor
    what: str
    view: Tensor | None


class InferenceInPlace(ErrorReason):
    """`what` would change an inference tensor in place outside inference mode."""

    __slots__ = ("tensor", "what")

    reason: ClassVar[str] = "inference_inplace"
    tensor: Tensor
    what: str


class InferenceSaved(ErrorReason):
    """An operation recording `node` would save an inference tensor for backward outside inference mode."""

    __slots__ = ("tensor", "node")

    reason: ClassVar[str] = "inference_saved"
    tensor: Tensor
    node: Node


class NoGradOutput(ErrorReason):
    """`what` ("backward", "grad") was asked to differentiate a tensor that does not require grad."""

    __slots__ = ("tensor", "what")

    reason: ClassVar[str] = "no_grad_output"
    tensor: Tensor
    what: str


class NonScalar(ErrorReason):
    """`what` got no gradient for an output of more than one element."""

    __slots__ = ("tensor", "what")

    reason: ClassVar[str] = "nonscalar"
    tensor: Tensor
    what: str


class InputNoGrad(ErrorReason):
    """Input `index` of grad() (or of backward's inputs=) does not require grad."""

    __slots__ = ("index", "tensor")

    reason: ClassVar[str] = "input_no_grad"
    index: int
    tensor: Tensor


class Unused(ErrorReason):
    """Input `index` of grad() was not used to compute the outputs (and allow_unused was not given)."""

    __slots__ = ("index", "tensor")

    reason: ClassVar[str] = "unused"
    index: int
    tensor: Tensor


class NanGradient(ErrorReason):
    """Anomaly mode: `node`'s formula returned NaN in its gradient `index` (of `grads`)."""

    __slots__ = ("node", "index", "grads")

    reason: ClassVar[str] = "nan"
    node: Node
    index: int
    grads: tuple[Any, ...]


REASON_RECORDS: dict[str, type[ErrorReason]] = {
    cls.reason: cls for cls in (Freed, VersionMismatch, LeafInPlace, InferenceInPlace, InferenceSaved, NoGradOutput,
                                NonScalar, InputNoGrad, Unused, NanGradient)
}
assert set(REASON_RECORDS) == set(REASONS), "every reason of reasons.py has its record here"


def reason_of(exc: BaseException | None, chained: bool = True) -> ErrorReason | None:
    """What an engine error is about (None for an error that does not say): the exception's own, or with
    `chained` the first found along its context (an error raised while handling it: a front end's)."""
    seen = 0
    while exc is not None and seen < 20:
        reason = getattr(exc, "autograd_reason", None)
        if reason is not None:
            cls = REASON_RECORDS.get(reason)
            info = getattr(exc, "autograd_info", {})
            return None if cls is None else cls(**info)
        if not chained:
            return None
        exc = exc.__context__
        seen += 1
    return None

