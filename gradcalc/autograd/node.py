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

FREED = ()  # `_saved` after backward released it: distinct from "saved nothing" (None)


class Node:
    """One operation's backward: `apply(grad)` returns one gradient (or None) per input."""

    __slots__ = ("next_functions", "_saved", "_versions", "_retained", "_trace", "__weakref__")
    num_outputs = 1

    def __init__(self) -> None:
        self._saved: tuple | None = None
        self._retained: dict[int, weakref.ref] | None = None
        self._trace: str | None = traceback_of_forward() if state.anomaly else None

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
        for t in tensors:
            if t is not None and t._inference and not state.inference:
                raise RuntimeError(
                    "an inference tensor (made inside `with inference_mode:`) cannot be saved for backward; "
                    "make a normal tensor from it first with .clone() outside inference mode"
                )
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version.value for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The saved tensors, checked: freed by an earlier backward, or changed in place since, is an error."""
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(
                f"trying to backward through the graph a second time: the values {self.name()} saved were "
                "freed by the first backward or grad(); pass retain_graph to the first one to keep them"
            )
        if saved is None:
            return ()
        out = []
        for i, (t, v) in enumerate(zip(saved, self._versions, strict=True)):
            if t is None:
                out.append(None)
                continue
            if t._version.value != v:
                raise RuntimeError(version_mismatch(t, self, i, v))
            out.append(t.unpack(self) if type(t) is SavedOutput else t)
        return tuple(out)

    def release(self) -> None:
        """Free the saved values (backward without retain_graph)."""
        if self._saved is not None:  # a node that saved nothing can run again, as in PyTorch
            self._saved = FREED

    @property
    def metadata(self) -> dict:
        return {}


def version_mismatch(t: Any, node: Node, index: int, saved_version: int) -> str:
    shape = "[" + ", ".join(str(n) for n in t._data.shape) + "]"
    dtype = {"float64": "DoubleTensor", "float32": "FloatTensor", "int64": "LongTensor", "bool": "BoolTensor"}
    kind = dtype.get(str(t._data.dtype), str(t._data.dtype))
    return (
        f"a tensor {node.name()} saved for backward was changed in place: the {kind} of shape {shape} "
        f"(saved tensor {index} of {node.name()}) is at version {t._version.value}, but {saved_version} was "
        "saved; compute with a .clone() of it, or do the in-place change after backward"
    )


class SavedOutput:
    """An operation's own output, saved without a reference to the output tensor (which would be a cycle).

    On unpack it becomes a fresh tensor on the same data, whose grad_fn is the node itself, so that a
    backward recorded with create_graph differentiates through it correctly.
    """

    __slots__ = ("_data", "_version", "_inference")

    def __init__(self, t: Tensor) -> None:
        self._data = t._data
        self._version = t._version
        self._inference = t._inference

    def unpack(self, node: Node) -> Tensor:
        from .tensor import Tensor

        return Tensor._make(self._data, True, node, self._version)


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into `leaf.grad`."""

    __slots__ = ("variable", "lock")

    def __init__(self, leaf: Tensor) -> None:
        Node.__init__(self)
        self.next_functions = ()
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
    frames = [f for f in traceback.extract_stack()[:-3] if "gradcalc/autograd" not in f.filename.replace("\\", "/")]
    return "".join(traceback.format_list(frames[-4:]))


def set_anomaly_context(describe: Any) -> None:
    """Let a front end (the language) say where a forward operation comes from, for anomaly mode."""
    _anomaly_context.describe = describe
