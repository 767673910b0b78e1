"""Nodes of the backward graph: what to compute, as PyTorch's `Node`/`grad_fn` objects do.

A node is made by an operation that records (grad mode on, some input requires grad). It holds
- `next_functions`: per input, `(node, output_nr)` of where that input's gradient goes next, or `(None, 0)`
  for an input that needs none. A leaf that requires grad is reached through its `AccumulateGrad` node.
- the tensors its backward formula needs, saved with their version so that a later in-place change is caught.

Nothing here refers from a node to the tensor it produced, so recording makes no reference cycle: the
cyclic garbage collector finds nothing to do, and a graph dies as soon as its root is dropped.
"""

from __future__ import annotations

import types
import weakref
from _thread import allocate_lock  # what threading.Lock is (`threading` itself is kept off the start-up path)
from typing import Any

from . import hooks
from . import saved as saved_module
from .counters import LATE_COUNTER, SEQ, Version, next_seq
from .grad_mode import STAMP, AnomalyTrace, set_anomaly_context, state, traceback_of_forward
from .reasons import failure
from .saved import (
    FREED,
    NOTHING,
    PYTORCH_INFERENCE_SAVED,
    freed_error,
    freed_message,
    version_error,
    version_mismatch,
)
from .tensor import Tensor

# Names this module held before they moved below it, where the operations still import them from.
__all__ = [
    "ACCUMULATE_SEQ", "FREED", "LATE_COUNTER", "NOTHING", "SEQ", "STAMP", "AccumulateGrad", "AnomalyTrace", "Node",
    "SavedOutput", "edge_of", "freed_error", "freed_message", "make_node", "may_be_stale", "next_seq", "one_class_copy",
    "release_saved", "set_anomaly_context",
    "set_origin", "traceback_of_forward", "version_error", "version_mismatch",
]


def may_be_stale(node: Node, late: int) -> bool:
    """Whether `node` saved values that `check_saved` must look into although its `_versions` is None: it
    saved some, and it is older than the latest counter made late (`LATE_COUNTER[0]`, given as `late`)."""
    return node._versions is None and bool(node._saved) and getattr(node, "_seq", 0) < late


# PyTorch's AccumulateGrad has the largest sequence number there is: it runs before any other ready node.
ACCUMULATE_SEQ = 2**64 - 1


def make_node(cls: type[Node], nexts: tuple, nrs: tuple[int, ...] | None) -> Node:
    """The one constructor of a recorded node: edges `nexts` (a node or None per input) with their output
    numbers `nrs` (None when all are 0), nothing saved yet, the next creation number, and the front end's
    stamp when one was ever used (an unset `_trace` reads as None). `core.record` builds every node with it;
    the hottest operations (arithmetic's `_binary`, the elementwise rows) write the same slots inline, and
    tests/engine/test_node_constructor.py checks that every path leaves every slot as this one does."""
    node = cls()  # (no __init__ on recorded nodes: see Node)
    node._next = nexts
    node._nrs = nrs
    node._extras = None
    node._versions = None
    node._saved = None
    node._seq = SEQ[0] = SEQ[0] + 1
    if STAMP.on:
        node._trace = traceback_of_forward() if state.anomaly else STAMP.origin
    return node




def one_class_copy(fn: Any) -> Any:
    """A copy of `fn` with inline caches of its own, for a call site that always passes nodes of the same class.
    CPython specialises an attribute load or store for ONE type per instruction: code shared by nodes of many
    classes (ops/binary.py's `_binary` and `_binary_number`, which write ten slots of the node they make;
    `Node.unpack_saved`, inherited by every class) falls back to the generic lookup at each (about 170
    instructions more a slot, measured). The hottest sites get their own copy, which stays specialised: the
    same code and behaviour (tests/engine/test_node_constructor.py checks the recording paths slot by slot)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def edge_of(t: Tensor) -> Node:
    """Where the gradient of `t`, a tensor that requires grad, goes: its grad_fn, or its leaf's AccumulateGrad."""
    return t.grad_fn or t._accumulator or t._accumulate_node()


class Node:
    """One operation's backward: `apply(grad)` returns one gradient (or None) per input."""

    # `_next` holds, per input, the node its gradient goes to (or None); `_nrs` the output numbers on those
    # nodes, or None when all are 0. Two flat fields rather than PyTorch's tuple of pairs: fewer objects per
    # recorded operation for the cyclic garbage collector to walk. `next_functions` shows PyTorch's form.
    # `_extras` is None unless a hook or retain_grad was registered on the node (hooks.Extras): the walk
    # checks it once per node. `_trace` is the front end's origin (or, under anomaly mode without one, the
    # forward traceback); `_seq` the creation number. `_fwd` (set only while forward-mode AD is in use) holds
    # the inputs whose tangents the node's `jvp` needs.
    # `_empty` (set only when backward freed a node that had empty saved slots) is the bitmask of those slots:
    # PyTorch reads an empty slot as None after freeing too (saved.py).
    __slots__ = ("_next", "_nrs", "_saved", "_versions", "_extras", "_trace", "_seq", "_fwd", "_empty", "__weakref__")
    num_outputs = 1
    # A node whose `apply` is written with Python operators and `ops.dual` functions only can run on bare
    # NumPy arrays when backward records nothing (no create_graph): no Tensor per intermediate gradient.
    raw_ok = False
    # Whether backward runs user code (a custom Function's): the engine keeps an undo log for such graphs.
    user_code = False
    # PyTorch's names of what this node saved (`_saved_self`...), in PyTorch's pack order: see saved.py
    saved_names: dict[str, Any] = {}
    # Whether `apply_batched` can run this node's backward on bare arrays that carry one leading batch dim
    # (a row per cotangent: gradcalc.func's batched backward, one pass for a whole Jacobian). Set from the
    # class's spec (`batched=`); any node without makes that backward fall back to one pass per row.
    batchable = False
    # The class's spec (spec.py): formula, saved names, forward rule, batched backward. None for the engine's
    # own nodes and a custom Function's, whose rules are their own.
    spec: Any = None
    jvp_rule: Any = None  # the spec's forward rule, copied here for forward_ad's lookup

    # No `__init__`: a class without one is made by `cls()` straight in C (type_call, object_new), a third
    # cheaper than `object.__new__(cls)` and far cheaper than a Python `__init__`; the recording paths fill
    # the slots themselves (make_node). Nodes made outside a recording path call `_init_fields`.
    def _init_fields(self) -> None:
        self._next: tuple[Node | None, ...] = ()
        self._nrs: tuple[int, ...] | None = None
        self._saved: tuple | None = None
        self._versions: list | None = None
        self._extras: Any = None
        self._trace: Any = traceback_of_forward() if state.anomaly else STAMP.origin
        self._seq = next_seq()

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """Per input, `(node, output_nr)` where its gradient goes next, as PyTorch shows it."""
        nrs = self._nrs or (0,) * len(self._next)
        return tuple(zip(self._next, nrs, strict=True))

    @next_functions.setter
    def next_functions(self, edges: tuple[tuple[Node | None, int], ...]) -> None:
        self._next = tuple(n for n, _ in edges)
        nrs = tuple(nr for _, nr in edges)
        self._nrs = nrs if any(nrs) else None

    @classmethod
    def name(cls) -> str:
        """PyTorch's class name for this node, e.g. `MulBackward0`."""
        return cls.__name__

    def _sequence_nr(self) -> int:
        """The creation number (PyTorch's `sequence_nr`): among ready nodes, backward runs the largest first."""
        return self._seq

    @property
    def origin(self) -> Any:
        """What the front end was running when this node was made (see `set_origin`); None from plain Python."""
        trace = getattr(self, "_trace", None)
        return None if type(trace) is AnomalyTrace else trace

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    def apply_batched(self, grad: Any) -> tuple[Any, ...]:
        """`apply` on a gradient array with a leading batch dim (see `batchable`), giving gradients with it
        too. By default `apply` itself: right for formulas that broadcast over a leading dim (elementwise
        ones, and `sum_to`, which keeps the batch dim under `state.batch`); others override it."""
        return self.apply(grad)

    # -- saved tensors ---------------------------------------------------------------------------
    def save(self, *tensors: Tensor | SavedOutput | None) -> None:
        """Keep what backward needs, with versions to detect in-place changes made before backward."""
        versions = []
        for t in tensors:
            if t is None:
                versions.append(None)
                continue
            if t._inference and not state.inference:
                raise failure(
                    "an inference tensor (made inside `with inference_mode:`) cannot be saved for backward; "
                    "make a normal tensor from it first with .clone() outside inference mode",
                    "inference_saved", PYTORCH_INFERENCE_SAVED, tensor=t, node=self,
                )
            v = t._vc
            versions.append(None if v is None else v.value)
        self._saved = tensors
        # None when no saved tensor has a version counter yet (the common case): one object less per node
        self._versions = versions if any(v is not None for v in versions) else None
        if STAMP.packing:
            saved_module.pack_saved(self)

    def check_saved(self) -> None:
        """Raise the error `unpack_saved` would, without unpacking: the engine checks every node it will run
        before the walk starts, so that a failing backward changes nothing."""
        saved = self._saved
        if saved is FREED:
            raise freed_error(self)
        if not saved:
            return
        # without `_versions` every saved value was saved at version 0 (it had no counter then)
        versions = self._versions or (None,) * len(saved)
        for i, t in enumerate(saved):
            if t is not None:
                counter = t._vc
                v = versions[i] or 0
                if (0 if counter is None else counter.value) != v:
                    raise version_error(t, self, i, v)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The saved tensors, checked: freed by an earlier backward, or changed in place since, is an error."""
        return self.unpack_saved(False)

    def unpack_saved(self, raw: bool) -> tuple[Any, ...]:
        """The saved values, checked; as NumPy arrays when `raw` (a backward that records nothing)."""
        saved = self._saved
        if saved is FREED:
            raise freed_error(self)
        if saved is None:
            return ()
        if saved is NOTHING:
            return saved
        versions = self._versions
        if not raw and versions is None:  # the tensors themselves, when none was ever changed in place
            for t in saved:
                if t is not None and (t._vc is not None or type(t) is not Tensor):
                    break
            else:
                return saved
        out = []
        empty = 0  # the empty slots, kept when freeing
        for i, t in enumerate(saved):
            if t is None:
                out.append(None)
                empty |= 1 << i
                continue
            counter = t._vc
            if counter is not None or versions is not None:
                v = (versions[i] if versions is not None else None) or 0
                if (0 if counter is None else counter.value) != v:
                    raise version_error(t, self, i, v)
            if raw:
                # a 0-d array as a NumPy scalar: arithmetic on scalars costs a tenth of that on 0-d arrays
                d = t._data
                out.append(d if d.ndim else d[()])
            else:  # a saved output, or a value packed by saved_tensors_hooks: unpacked as a tensor
                out.append(t if type(t) is Tensor else t.unpack(self))
        if raw and state.releasing:
            self._saved = FREED
            if empty:
                self._empty = empty
        return tuple(out)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # `_saved_<name>` / `_raw_saved_<name>` as properties of the class (saved.py). Not a `__getattr__`:
        # a class with one loses CPython's specialised attribute loads, on every field, in every walk.
        super().__init_subclass__(**kwargs)
        saved_module.declare(cls)

    def __dir__(self) -> list[str]:
        return saved_module.visible(self, list(super().__dir__()))

    @property
    def saved(self) -> Any:
        """What this node saved for backward, by PyTorch's names: a read-only mapping name -> value, where a
        tensor that backward released shows as `autograd.graph.FREED`."""
        return saved_module.saved_mapping(self)

    @property
    def metadata(self) -> dict:
        """A dict of the user's, kept with the node (PyTorch's `Node.metadata`)."""
        extras = hooks.extras_of(self)
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    def register_hook(self, fn: Any) -> hooks.RemovableHandle:
        """Run `fn(grad_inputs, grad_outputs)` after this node computed its gradients during backward; a
        tuple it returns replaces grad_inputs. Returns a handle whose `.remove()` takes the hook away."""
        return hooks.register_node_hook(self, fn)

    def register_prehook(self, fn: Any) -> hooks.RemovableHandle:
        """Run `fn(grad_outputs)` before this node computes during backward; a tuple it returns replaces
        grad_outputs. Returns a handle whose `.remove()` takes the hook away."""
        return hooks.register_node_prehook(self, fn)


def release_saved(node: Node, saved: tuple | None = None) -> None:
    """Free what `node` saved (a backward without retain_graph), keeping which slots were empty (`saved`:
    what it had saved, when the caller already took it away)."""
    if saved is None:
        saved = node._saved
    node._saved = FREED
    if saved is NOTHING:  # a product by a number (deep chains are made of them): both slots empty, at once
        node._empty = 3
        return
    empty = 0
    for i, t in enumerate(saved):
        if t is None:
            empty |= 1 << i
    if empty:  # the same tuple gives the same mask: a node freed again (after an undo) keeps it right
        node._empty = empty


class SavedOutput:
    """An operation's own output, saved without a reference to the output tensor (which would be a cycle).

    On unpack it becomes a fresh tensor on the same data, whose grad_fn is the node itself, so that a
    backward recorded with create_graph differentiates through it correctly.
    """

    # `_fw`: the output's forward-AD tangents (set only when it has some), which the unpacked tensor carries
    __slots__ = ("_data", "_vc", "_inference", "_fw")

    def __init__(self, t: Tensor) -> None:
        self._data = t._data
        v = t._vc
        if v is None:  # `t` is the node's fresh output: no older node saved it, so not version_of's late counter
            v = t._vc = Version()
        self._vc = v
        self._inference = t._inference
        fw = getattr(t, "_fw", None)
        if fw is not None:
            self._fw = fw

    def unpack(self, node: Node) -> Tensor:
        fwd = getattr(node, "_fwd", None)
        if fwd is not None and fwd[2]:  # a node made for tangents only: its output is not differentiable
            out = Tensor._make(self._data, False, None, self._vc)
        else:
            out = Tensor._make(self._data, True, node, self._vc)
        fw = getattr(self, "_fw", None)
        if fw is not None:
            out._fw = fw
        return out


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into `leaf.grad`."""

    # `log`: set only while a front end keeps who wrote the leaf's .grad (provenance.py); unset costs nothing
    __slots__ = ("_leaf", "lock", "log")

    def __init__(self, leaf: Tensor) -> None:
        Node._init_fields(self)
        self._next, self._nrs = (), None
        self._seq = ACCUMULATE_SEQ
        # weak: the leaf owns this node (leaf._accumulator), and the reverse would be a cycle
        self._leaf = weakref.ref(leaf)
        self.lock = allocate_lock()

    @property
    def variable(self) -> Tensor | None:
        """The leaf this node accumulates into (None once it died), as PyTorch's `AccumulateGrad.variable`."""
        return self._leaf()

    def apply(self, grad: Tensor) -> tuple:
        return ()


def set_origin(origin: Any) -> Any:
    """Stamp every node made from now on with `origin` (None: stop); returns the previous origin, so that
    a front end can restore it. See `autograd.graph.origin` for the context-manager form."""
    previous, STAMP.origin = STAMP.origin, origin
    STAMP.on = True
    return previous


Tensor._sink = AccumulateGrad  # what `Tensor._accumulate_node` makes (tensor.py cannot import this module)
