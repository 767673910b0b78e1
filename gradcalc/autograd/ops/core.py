"""What every operation shares: recording a node, wrapping NumPy results, type promotion.

An operation is written as two halves side by side (see `arithmetic.py`), each with its spec (spec.py):
- the function computes its result with NumPy and, when `record` returns a node, saves what backward needs;
- the node's `apply(grad)` states the derivative with the engine's own differentiable operations, so a
  backward recorded under `create_graph` can be differentiated again, to any order.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import grad_mode
from ..grad_mode import ALTERED, state
from ..node import Node, make_node
from ..tensor import Tensor, version_of

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def record(cls: type[Node], *inputs: Any) -> Any:
    """A new node of `cls` when this operation is to be recorded (grad mode on and an input requires grad)."""
    if ALTERED and not state.grad_enabled:
        return grad_mode.forward_ad.record(cls, inputs, None) if grad_mode.forward_seen else None
    for t in inputs:
        if type(t) is Tensor and t._requires_grad:
            break
    else:
        return grad_mode.forward_ad.record(cls, inputs, None) if grad_mode.forward_seen else None
    nexts, nrs = [], []
    for t in inputs:
        if type(t) is Tensor and t._requires_grad:
            nexts.append(t.grad_fn or t._accumulator or t._accumulate_node())
            nrs.append(t._output_nr)
        else:
            nexts.append(None)
            nrs.append(0)
    node = make_node(cls, tuple(nexts), tuple(nrs) if any(nrs) else None)
    return grad_mode.forward_ad.record(cls, inputs, node) if grad_mode.forward_seen else node


def result(data: Any, node: Node | None) -> Tensor:
    """The output tensor of an operation; it requires grad exactly when the operation was recorded."""
    if node is not None and grad_mode.forward_seen:  # the node may be one for tangents only
        return grad_mode.forward_ad.output(data if type(data) is np.ndarray else np.asarray(data), node)
    return Tensor._make(data if type(data) is np.ndarray else np.asarray(data), node is not None, node)


def register_view(view: Tensor, base: Tensor) -> None:
    """Make `view` (whose array is a NumPy view into `base`'s) a view of `base` in PyTorch's sense: it shares
    the version counter, and it is remembered by its root base (the tensor owning the memory), so that
    - an in-place change through the view rewrites the root's graph (PyTorch's CopySlices), and
    - an in-place change of the root, or of another view of it, re-derives this view's grad_fn from the
      root's new graph (PyTorch's AsStridedBackward0).
    Every operation that returns a view must call this."""
    view._vc = version_of(base)
    root = getattr(base, "_view_of", None)
    if root is None:
        root = base
    view._view_of = root
    views = getattr(root, "_views", None)
    if views is None:
        views = root._views = []
    elif len(views) >= 32 and len(views) & (len(views) - 1) == 0:  # now and then, forget dead views
        views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(view))


def needs(node: Node, i: int) -> bool:
    """Whether input `i` of `node` wants a gradient (PyTorch's `needs_input_grad`): it has an edge, and,
    inside grad(outputs, inputs), that edge leads to one of the inputs."""
    n = node._next[i]
    return n is not None and (not ALTERED or state.wanted is None or n in state.wanted)


def operand(x: Any) -> Any:
    """The NumPy side of an operand: a tensor's array, or a Python number left as it is so that NumPy's
    weak scalar promotion matches PyTorch's (a float32 tensor times 2.0 stays float32)."""
    if type(x) is Tensor:
        return x._data
    if isinstance(x, (int, float, bool)):
        return x
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, np.ndarray | np.generic):
        return x
    raise TypeError(f"expected a tensor or a number, got {type(x).__name__}")


def broadcast_message(shapes: list[tuple[int, ...]]) -> str | None:
    """PyTorch's message for shapes that do not broadcast together: the first pair that fails, at the
    dimension (counted from the left of the longer shape) where their sizes differ; None if they do."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1 :]:
            n = max(len(a), len(b))
            for k in range(1, n + 1):
                sa = a[-k] if k <= len(a) else 1
                sb = b[-k] if k <= len(b) else 1
                if sa != sb and sa != 1 and sb != 1:
                    return (
                        f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton "
                        f"dimension {n - k}"
                    )
    return None


def broadcast_error(exc: ValueError, *operands: Any) -> Exception:
    """NumPy's ValueError for operands that do not broadcast together, as PyTorch's RuntimeError (any other
    ValueError is returned as it was). Called only on the way out of a failed operation."""
    if not str(exc).startswith("operands could not be broadcast"):
        return exc
    message = broadcast_message([tuple(np.shape(o._data if isinstance(o, Tensor) else o)) for o in operands])
    return RuntimeError(message) if message is not None else exc


def binary_operands(a: Any, b: Any) -> tuple[Any, Any]:
    """NumPy operands for a binary operation, cast to PyTorch's result dtype when two tensors differ.

    A 0-d array is given as a NumPy scalar: NumPy promotes the two alike, and arithmetic on scalars costs a
    fraction of that on 0-d arrays (the operation wraps the result back into an array)."""
    ad = a._data if type(a) is Tensor else operand(a)
    if type(b) is not Tensor:
        bd = operand(b)
    else:
        bd = b._data
        if type(ad) is np.ndarray and ad.dtype is not bd.dtype and ad.dtype != bd.dtype:
            dtype = result_dtype(ad, bd)
            ad, bd = ad.astype(dtype, copy=False), bd.astype(dtype, copy=False)
    if type(ad) is np.ndarray and not ad.ndim:
        ad = ad[()]
    if type(bd) is np.ndarray and not bd.ndim:
        bd = bd[()]
    return ad, bd


def result_dtype(a: np.ndarray, b: np.ndarray) -> np.dtype:
    """PyTorch's promotion: the higher category (bool < int < float) wins; within a category a
    dimensioned tensor's dtype wins over a 0-d tensor's."""
    ka, kb = _CATEGORY[a.dtype.kind], _CATEGORY[b.dtype.kind]
    if ka != kb:
        return a.dtype if ka > kb else b.dtype
    if (a.ndim == 0) != (b.ndim == 0):
        return b.dtype if a.ndim == 0 else a.dtype
    return np.promote_types(a.dtype, b.dtype)
