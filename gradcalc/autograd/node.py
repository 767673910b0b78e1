"""Nodes of the backward graph: what to compute, as PyTorch's `Node`/`grad_fn` objects do.

A node is made by an operation that records (grad mode on, some input requires grad). It holds
- `next_functions`: per input, `(node, output_nr)` of where that input's gradient goes next, or `(None, 0)`
  for an input that needs none. A leaf that requires grad is reached through its `AccumulateGrad` node.
- the tensors its backward formula needs, saved with their version so that a later in-place change is caught.

Nothing here refers from a node to the tensor it produced, so recording makes no reference cycle: the
cyclic garbage collector finds nothing to do, and a graph dies as soon as its root is dropped.
"""

from __future__ import annotations

import threading
import traceback
import weakref
from typing import TYPE_CHECKING, Any

from .grad_mode import state

if TYPE_CHECKING:
    from .tensor import Tensor

class _Freed(tuple):
    """The marker `_saved` holds once backward released a node's saved values."""


FREED = _Freed()  # an empty tuple of its own: told apart by identity from a node that saved nothing
NOTHING = (None, None)  # what a binary node saves when its formula needs only a constant: marks it freeable


class Node:
    """One operation's backward: `apply(grad)` returns one gradient (or None) per input."""

    # `_next` holds, per input, the node its gradient goes to (or None); `_nrs` the output numbers on those
    # nodes, or None when all are 0. Two flat fields rather than PyTorch's tuple of pairs: fewer objects per
    # recorded operation for the cyclic garbage collector to walk. `next_functions` shows PyTorch's form.
    # `_fwd` (set only while forward-mode AD is in use) holds the inputs whose tangents the node's `jvp` needs
    __slots__ = ("_next", "_nrs", "_saved", "_versions", "_retained", "_trace", "_fwd", "__weakref__")
    num_outputs = 1
    # A node whose `apply` is written with Python operators and `ops.dual` functions only can run on bare
    # NumPy arrays when backward records nothing (no create_graph): no Tensor per intermediate gradient.
    raw_ok = False

    def __init__(self) -> None:
        self._next: tuple[Node | None, ...] = ()
        self._nrs: tuple[int, ...] | None = None
        self._saved: tuple | None = None
        self._retained: dict[int, weakref.ref] | None = None
        self._trace: str | None = traceback_of_forward() if state.anomaly else None

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

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    # -- saved tensors ---------------------------------------------------------------------------
    def save(self, *tensors: Tensor | SavedOutput | None) -> None:
        """Keep what backward needs, with versions to detect in-place changes made before backward."""
        versions = []
        for t in tensors:
            if t is None:
                versions.append(None)
                continue
            if t._inference and not state.inference:
                raise RuntimeError(
                    "an inference tensor (made inside `with inference_mode:`) cannot be saved for backward; "
                    "make a normal tensor from it first with .clone() outside inference mode"
                )
            v = t._vc
            versions.append(None if v is None else v.value)
        self._saved = tensors
        # None when no saved tensor has a version counter yet (the common case): one object less per node
        self._versions = versions if any(v is not None for v in versions) else None

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The saved tensors, checked: freed by an earlier backward, or changed in place since, is an error."""
        return self.unpack_saved(False)

    def unpack_saved(self, raw: bool) -> tuple[Any, ...]:
        """The saved values, checked; as NumPy arrays when `raw` (a backward that records nothing)."""
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(
                f"trying to backward through the graph a second time: the values {self.name()} saved were "
                "freed by the first backward or grad(); pass retain_graph to the first one to keep them"
            )
        if saved is None:
            return ()
        if saved is NOTHING:
            return saved
        out = []
        versions = self._versions
        for i, t in enumerate(saved):
            if t is None:
                out.append(None)
                continue
            counter = t._vc
            if counter is not None or versions is not None:
                v = (versions[i] if versions is not None else None) or 0
                if (0 if counter is None else counter.value) != v:
                    raise RuntimeError(version_mismatch(t, self, i, v))
            if raw:
                # a 0-d array as a NumPy scalar: arithmetic on scalars costs a tenth of that on 0-d arrays
                d = t._data
                out.append(d if d.ndim else d[()])
            else:
                out.append(t.unpack(self) if type(t) is SavedOutput else t)
        if raw and state.releasing:
            self._saved = FREED
        return tuple(out)

    @property
    def metadata(self) -> dict:
        return {}


def version_mismatch(t: Any, node: Node, index: int, saved_version: int) -> str:
    """The error for a saved tensor changed in place before backward: its shape, the node, both versions."""
    now = 0 if t._vc is None else t._vc.value
    shape = "[" + ", ".join(str(n) for n in t._data.shape) + "]"
    kind = _KINDS.get(str(t._data.dtype), str(t._data.dtype))
    return (
        f"{node.name()} needs a value it saved for backward (its saved tensor {index}, a {kind} of shape "
        f"{shape}), but that tensor was changed in place since: it is now at version {now}, and "
        f"{node.name()} saved it at version {saved_version}. Compute with a .clone() of it, or make the "
        "in-place change after backward"
    )


_KINDS = {"float64": "DoubleTensor", "float32": "FloatTensor", "int64": "LongTensor", "bool": "BoolTensor"}


class SavedOutput:
    """An operation's own output, saved without a reference to the output tensor (which would be a cycle).

    On unpack it becomes a fresh tensor on the same data, whose grad_fn is the node itself, so that a
    backward recorded with create_graph differentiates through it correctly.
    """

    # `_fw`: the output's forward-AD tangents (set only when it has some), which the unpacked tensor carries
    __slots__ = ("_data", "_vc", "_inference", "_fw")

    def __init__(self, t: Tensor) -> None:
        from .tensor import version_of

        self._data = t._data
        self._vc = version_of(t)
        self._inference = t._inference
        fw = getattr(t, "_fw", None)
        if fw is not None:
            self._fw = fw

    def unpack(self, node: Node) -> Tensor:
        from .tensor import Tensor

        out = Tensor._make(self._data, True, node, self._vc)
        fw = getattr(self, "_fw", None)
        if fw is not None:
            out._fw = fw
        return out


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into `leaf.grad`."""

    __slots__ = ("variable", "lock")

    def __init__(self, leaf: Tensor) -> None:
        Node.__init__(self)
        self._next, self._nrs = (), None
        # weak: the leaf owns this node (leaf._accumulator), and the reverse would be a cycle
        self.variable = weakref.ref(leaf)
        self.lock = threading.Lock()

    def apply(self, grad: Tensor) -> tuple:
        return ()


_anomaly_context = threading.local()


def traceback_of_forward() -> str:
    """Where the recording operation was called: the language sets a description of the statement."""
    described = getattr(_anomaly_context, "describe", None)
    if described is not None:
        return described()
    # the user's frames only: however deep inside the engine the node was made
    frames = [f for f in traceback.extract_stack() if "gradcalc/autograd" not in f.filename.replace("\\", "/")]
    return "".join(traceback.format_list(frames[-4:]))


def set_anomaly_context(describe: Any) -> None:
    """Let a front end (the language) say where a forward operation comes from, for anomaly mode."""
    _anomaly_context.describe = describe
