"""In-place operations: `x.add_(1)`, `x += 1`, `x[i] = v`, `x.zero_()`, ...

Each is its out-of-place operation written back into the tensor's own array. The version counter goes
up (so a node that saved the old value notices at backward), and when the operation was recorded the
tensor takes the new node as its `grad_fn`: the graph is rewritten so gradients stay correct.

Views (tensors registered by `core.register_view`) are PyTorch's: an in-place change through a view
rewrites its base's graph (CopySlices: the new values replace the old ones at the view's elements), and
after any in-place change of a base or of a view, every live view of that base takes a grad_fn derived
from the base's new graph (AsStridedBackward0). A view of a leaf that requires grad cannot be changed in
place outside `no_grad`, like the leaf itself.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import grad_mode, provenance, spec
from .. import saved as SV
from ..grad_mode import state
from ..hooks import move_retained
from ..interrupts import GUARD
from ..node import STAMP, Node
from ..provenance import failure
from ..reasons import worded
from ..tensor import Tensor, version_of
from . import arithmetic as A
from .core import _CATEGORY, broadcast_message, needs, record, result
from .sums import sum, sum_to


def check_inplace(t: Tensor, what: str) -> None:
    """The in-place changes PyTorch refuses (the error carries the tensor, for a front end to explain)."""
    if state.grad_enabled:
        if t._requires_grad and t.grad_fn is None:
            raise failure(
                f"{what}: this tensor is a leaf that requires grad, and changing it in place would lose how "
                "its gradient flows; do it inside `with no_grad:` (as an optimizer step does), or change a "
                ".clone() of it",
                "leaf_inplace", "a leaf Variable that requires grad is being used in an in-place operation.",
                tensor=t, what=what,
            )
        root = getattr(t, "_view_of", None)
        if root is not None and root._requires_grad:
            if root.grad_fn is None:
                raise failure(
                    f"{what}: this tensor is a view of a leaf that requires grad, and changing it in place "
                    "would change the leaf; do it inside `with no_grad:` (as an optimizer step does), or "
                    "change a .clone() of it",
                    "leaf_inplace", "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.", tensor=root, view=t, what=what,
                )
            if not t._requires_grad:
                raise RuntimeError(
                    f"{what}: this view was made inside `with no_grad:` from a tensor that requires grad, so "
                    "changing it in place with grad mode on cannot be recorded; make the view outside "
                    "no_grad, or make the change inside `with no_grad:` too"
                )
    if t._inference and not state.inference:
        raise failure(
            f"{what}: this is an inference tensor (made inside `with inference_mode:`), which cannot be "
            "changed in place outside inference mode; change a .clone() of it instead",
            "inference_inplace", "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.", tensor=t, what=what,
        )


try:  # NumPy 2's place for it; NumPy 1.26 (the oldest we take) has it at the top
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # pragma: no cover
    byte_bounds = np.byte_bounds  # type: ignore[attr-defined]

OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.")


def check_overlap(out: np.ndarray, source: Any, what: str, full: bool = False) -> None:
    """PyTorch's `assert_no_partial_overlap` for an in-place change: a tensor it reads may be the very one it
    writes (`x += x`, same elements in the same layout), or share no memory with it, but not share only some
    of it (`x += x[0]`, `x[1:] += x[:-1]`), where the result would depend on the order of the writes. With
    `full`, PyTorch's `assert_no_overlap` (a write at integer indices, `x[[0]] = v`): no memory shared at all.
    As PyTorch's test: only tensors that are dense in memory are compared (others are "too hard": let through)."""
    if not isinstance(source, Tensor):
        return
    data = source._data
    if data is out and not full:
        return
    base, other_base = out.base, data.base  # (NumPy gives a view of a view the first array as its base)
    if (out if base is None else base) is not (data if other_base is None else other_base):
        return
    if not out.size or not data.size:
        return
    low, high = byte_bounds(out)
    other_low, other_high = byte_bounds(data)
    if high - low != out.nbytes or other_high - other_low != data.nbytes:
        return
    if not full and low == other_low and high == other_high and out.strides == data.strides:
        return
    if low < other_high and other_low < high:
        raise worded(OVERLAP, f"{what}: a tensor it reads shares some of its memory with the tensor it writes "
                     "(views of the same values), so what it reads would change as it is written; read from a "
                     ".clone() of it")


def _alias(t: Tensor) -> Tensor:
    """The tensor as it is before the change: same place in the graph, its own copy of the values (and
    its tangents, under forward mode)."""
    a = Tensor._make(t._data.copy(), t._requires_grad, t.grad_fn)
    a._output_nr = t._output_nr
    if grad_mode.forward_seen and grad_mode.forward_ad.carries(t):
        a._fw = grad_mode.forward_ad._forced(t)
    return a


def apply_inplace(
    t: Tensor, compute: Callable[[Tensor], Tensor], what: str, *others: Any, cast_check: bool = False,
    overlap: bool = True,
) -> Tensor:
    """Run `compute` out of place and write its result into `t`. With `cast_check` (an operation whose
    result dtype follows its operands, as `add_` or `sin_`), a result of a higher kind than `t`'s dtype
    (float into an integer or bool tensor, integer into bool) is refused, as PyTorch refuses it. With
    `overlap`, a tensor among `others` that shares only part of `t`'s memory is refused (`check_overlap`;
    a caller that writes only part of `t`, as `x[i] = v`, checks that part itself)."""
    check_inplace(t, what)
    if overlap:
        for o in others:
            if isinstance(o, Tensor):
                check_overlap(t._data, o, what)
    if grad_mode.forward_seen and grad_mode.forward_ad._pending:  # tangents read values this change overwrites
        grad_mode.forward_ad.force_pending()
    recording = state.grad_enabled and (
        t._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    )
    fw = grad_mode.forward_ad  # (None until forward AD is first used)
    dual = grad_mode.forward_seen and (fw.carries(t) or any(fw.carries(o) for o in others))
    new = compute(_alias(t) if recording or dual else t)
    # the new tangents, computed before the values they derive from are overwritten
    tangents = fw._forced(new) if dual else None
    data = t._data
    if cast_check and _CATEGORY[new._data.dtype.kind] > _CATEGORY[data.dtype.kind]:
        raise RuntimeError(
            f"{what}: result type {new._data.dtype.name} can't be cast to the desired output type "
            f"{data.dtype.name}: write the result into a new tensor, or convert this one first (e.g. x.double())"
        )
    if not data.flags.writeable:
        raise RuntimeError(
            f"{what}: this tensor is an expanded view whose elements share memory; change a .clone() of it"
        )
    if new._data.shape != data.shape:
        raise RuntimeError(
            f"{what}: the result has shape {tuple(new._data.shape)}, which cannot be written into a tensor "
            f"of shape {tuple(data.shape)}"
        )
    GUARD.changing = STAMP.origin  # from here the change runs to its end (interrupts.py)
    np.copyto(data, new._data, casting="unsafe")
    counter = version_of(t)
    counter.value += 1
    if STAMP.origin is not None:  # a front end keeps who changed what (provenance.py)
        provenance.changed(counter)
    if dual:
        t._fw = tangents or None
        views_root = getattr(t, "_view_of", None)
        if views_root is not None or getattr(t, "_views", None):
            # views share their base's tangent: write the view's new tangent into the base's, and re-read
            # every other live view's from it
            fw.share_with_views(views_root if views_root is not None else t, t)
    node = new.grad_fn
    if recording and node is not None:
        _rebind_saved_output(node, new._data, data, counter)
        root = getattr(t, "_view_of", None)
        if root is None:
            set_grad_fn(t, node, new._output_nr)
            _refresh_views(t)
        else:  # through a view: the base's graph is rewritten, and the views re-derived from it
            _write_through(root, t, new)
            _refresh_views(root)
    return t


def set_grad_fn(t: Tensor, node: Node, nr: int) -> None:
    """Give `t` a new place in the graph (after an in-place change); a `retain_grad` moves with it, since
    PyTorch keeps the gradient of the tensor's latest value."""
    old, old_nr = t.grad_fn, t._output_nr
    t.grad_fn, t._output_nr, t._requires_grad = node, nr, True
    if t._retains_grad:
        move_retained(old, old_nr, node, nr, t)


def _rebind_saved_output(node: Node, computed: np.ndarray, data: np.ndarray, counter: Any) -> None:
    """A node that saved its own output (exp_, sigmoid_, ...) saved the out-of-place result; the output is
    really `t`, so point the saved value at `t`'s array and version counter, at its new version: a later
    in-place change of `t` must be caught at backward, as in PyTorch."""
    saved = node._saved
    if not saved:
        return
    for i, s in enumerate(saved):
        if s is not None and type(s) is not Tensor and getattr(s, "_data", None) is computed:
            s._data, s._vc = data, counter
            versions = node._versions if node._versions is not None else [None] * len(saved)
            versions[i] = counter.value
            node._versions = versions


def inplace_method(op: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """`Tensor.<name>_`, the in-place form of the operation `op` whose spec asks for one (`inplace=True`): its
    result written into the tensor, with `op`'s parameters."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return apply_inplace(self, lambda t: op(t, *args, **kwargs), f"{name}_", *args, *kwargs.values(),
                             cast_check=True)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place {name}: writes the result into this tensor."
    method.__wrapped__ = op  # type: ignore[attr-defined]  # inspect.signature reads op's (on demand, not here)
    return method


def _method(op: Callable[..., Tensor], name: str, ufunc: np.ufunc | None = None) -> Callable[..., Tensor]:
    """`x.add_(other)` (and `alpha=` for add_ and sub_, as PyTorch's): the operation written into `x`."""
    if op is A.add_scaled or op is A.sub_scaled:

        def method(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
            if ufunc is not None and alpha == 1 and _in_numpy(self, other):
                check_inplace(self, name)
                check_overlap(self._data, other, name)
                GUARD.changing = STAMP.origin
                ufunc(self._data, other._data if type(other) is Tensor else other, out=self._data)
                counter = version_of(self)
                counter.value += 1
                if STAMP.origin is not None:
                    provenance.changed(counter)
                return self
            return apply_inplace(self, lambda t: op(t, other, alpha), name, other, cast_check=True)

    else:

        def method(self: Tensor, other: Any) -> Tensor:  # type: ignore[misc]
            if ufunc is not None and _in_numpy(self, other):
                check_inplace(self, name)
                check_overlap(self._data, other, name)
                GUARD.changing = STAMP.origin
                ufunc(self._data, other._data if type(other) is Tensor else other, out=self._data)
                counter = version_of(self)
                counter.value += 1
                if STAMP.origin is not None:
                    provenance.changed(counter)
                return self
            return apply_inplace(self, lambda t: op(t, other), name, other, cast_check=True)

    method.__name__ = name
    method.__doc__ = f"In-place {name.rstrip('_')}: writes the result into this tensor."
    return method


def _in_numpy(t: Tensor, other: Any) -> bool:
    """Whether an in-place arithmetic change can be NumPy's own in-place operation (as an optimizer step
    under no_grad is): nothing to record, and the result keeps the tensor's shape and dtype."""
    if state.grad_enabled and (t._requires_grad or (type(other) is Tensor and other._requires_grad)):
        return False
    if grad_mode.forward_seen:
        fw = grad_mode.forward_ad
        if fw.carries(t) or fw.carries(other) or fw._pending:
            return False
    d = t._data
    if d.dtype.kind != "f" or not d.flags.writeable:
        return False
    if type(other) is Tensor:
        o = other._data
        return o.dtype == d.dtype and o.shape == d.shape
    return type(other) in (float, int)


def _zeros_like(g: Tensor) -> Tensor:
    """The gradient of values an in-place write replaced: zeros, not connected to any graph (PyTorch's
    `zeros_like(grad)`: under create_graph it does not require grad)."""
    return Tensor._make(np.zeros_like(g._data), False, None)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to `value` (a number, or a one-element tensor whose gradient is the sum)."""
    cls = FillBackward3 if isinstance(value, Tensor) else FillBackward2
    v = value._data if isinstance(value, Tensor) else value

    def compute(t: Tensor) -> Tensor:
        node = record(cls, t, value) if cls is FillBackward3 else record(cls, t)  # a number has no edge
        return result(np.full_like(t._data, v), node)

    return apply_inplace(self, compute, "fill_", value, overlap=False)  # (a value is one number, read first)


@spec.node(formula={"self": "zeros_like(grad)"}, jvp=lambda node, inputs, out, tangents: None,
           tangent="self_t.fill_(0)")
class FillBackward2(Node):
    """fill_ with a number: nothing of the old values survives."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (_zeros_like(g),)


@spec.node(
    formula={"self": "zeros_like(grad)", "value": "grad.sum()"},
    jvp=lambda node, inputs, out, tangents: tangents[1], tangent="self_t.fill_(value_t)",
)
class FillBackward3(Node):
    """fill_ with a one-element tensor: every element is that value, so its gradient is the sum."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (_zeros_like(g) if needs(self, 0) else None, sum(g) if needs(self, 1) else None)


def zero_(self: Tensor) -> Tensor:
    """Set every element to 0."""

    def compute(t: Tensor) -> Tensor:
        node = record(ZeroBackward0, t)
        return result(np.zeros_like(t._data), node)

    return apply_inplace(self, compute, "zero_")


@spec.node(formula={"self": "zeros_like(grad)"}, jvp=lambda node, inputs, out, tangents: None,
           tangent="self_t.zero_()")
class ZeroBackward0(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (_zeros_like(g),)


def copy_(self: Tensor, src: Any) -> Tensor:
    """Copy `src`'s values (broadcast) into this tensor."""

    def compute(t: Tensor) -> Tensor:
        s = src if isinstance(src, Tensor) else Tensor._make(np.asarray(src, dtype=t._data.dtype), False, None)
        node = record(CopyBackwards, t, s)
        if node is not None:
            node.src_shape = s._data.shape
        try:
            data = np.array(np.broadcast_to(s._data, t._data.shape), dtype=t._data.dtype)
        except ValueError:  # NumPy's words for it speak of "remapped shapes": PyTorch's
            message = broadcast_message([t._data.shape, s._data.shape]) or (
                f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
                f"{list(np.broadcast_shapes(t._data.shape, s._data.shape))}"
            )
            raise RuntimeError(message) from None
        return result(data, node)

    return apply_inplace(self, compute, "copy_", src)


@spec.node(
    formula={"self": "zeros_like(grad)", "src": "grad.sum_to(src.sizes())"},
    jvp=lambda node, inputs, out, tangents: tangents[1], tangent="self_t.copy_(src_t)",
)
class CopyBackwards(Node):
    __slots__ = ("src_shape",)

    def apply(self, g: Tensor) -> tuple:
        ga = _zeros_like(g) if needs(self, 0) else None
        gs = sum_to(g, self.src_shape) if needs(self, 1) else None
        return (ga, gs)


# -- writing through views ---------------------------------------------------------------------------------
_THROUGH_VIEWS = ("the tangent of a write through a view is the base's and its views' (forward_ad.share_with_views), "
                  "computed with the write; this node makes no output of its own")


@spec.base
class _IndexPut(Node):
    """Backward of writing `value` over the elements `index` of a tensor: the overwritten elements pass no
    gradient to the old tensor; `value` gets the gradient of the elements it was written to."""

    __slots__ = ("index", "keep", "value_shape")

    def apply(self, g: Tensor) -> tuple:
        ga = A.mul(g, self.keep) if needs(self, 0) else None
        gv = sum_to(take(g, self.index), self.value_shape) if needs(self, 1) else None
        return (ga, gv)


@spec.node(formula={"self": "grad * (1 - written)", "src": "grad[written].sum_to(src.sizes())"},
           no_jvp=_THROUGH_VIEWS)
class CopySlices(_IndexPut):
    """A base tensor's node after an in-place change through one of its views (PyTorch's name)."""

    __slots__ = ()


def _tensors(index: Any) -> tuple:
    """An index as PyTorch's saved `indices`: a tensor per indexed dimension."""
    return tuple(Tensor._make(np.asarray(i), False, None) for i in index)


def _geometry(node: Node) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """A view's size, stride and offset in its base's elements, from where its elements sit (a dim of one
    element shows the stride a contiguous view would have)."""
    index = node.index
    flat = np.ravel_multi_index(index, node.shape or (1,)) if index[0].size else np.zeros(index[0].shape, int)
    size = flat.shape
    first = int(flat.flat[0]) if flat.size else 0
    stride, step = [], 1
    for k in range(len(size) - 1, -1, -1):
        if size[k] > 1:
            step = int(np.take(flat, 1, axis=k).flat[0]) - first
        stride.append(step)
        step *= max(size[k], 1)
    return size, tuple(reversed(stride)), first


@spec.node(formula={"self": "as_strided_backward(grad, self_geometry, size, stride, storage_offset)"},
           saved={"size": SV.Spec(lambda n: _geometry(n)[0], False), "storage_offset": SV.Spec(
               lambda n: _geometry(n)[2], False), "stride": SV.Spec(lambda n: _geometry(n)[1], False)},
           no_jvp=_THROUGH_VIEWS)
class AsStridedBackward0(Node):
    """A view's node re-derived from its base's graph after an in-place change (PyTorch's name): the view's
    gradient is put back into the base's shape at the view's elements."""

    __slots__ = ("index", "shape")

    def apply(self, g: Tensor) -> tuple:
        return (put(g, self.index, self.shape),)


def positions(view: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, ...]:
    """Where each element of `view` (a NumPy view into `base`'s memory) sits in `base`: an index of `base`
    (a tuple of integer arrays of the view's shape), found from the elements' memory addresses, so that
    any view (slices, transposes, reshapes, their compositions) is understood the same way."""
    def addresses(a: np.ndarray) -> np.ndarray:
        start = a.__array_interface__["data"][0]
        grid = np.indices(a.shape, sparse=True) if a.ndim else ()
        return np.asarray(start + builtins.sum(i * s for i, s in zip(grid, a.strides, strict=True)), dtype=np.int64)

    flat_base = np.broadcast_to(addresses(base), base.shape).ravel()
    order = np.argsort(flat_base, kind="stable")
    at = np.broadcast_to(addresses(view), view.shape)
    found = order[np.clip(np.searchsorted(flat_base[order], at), 0, max(base.size - 1, 0))]
    if not np.array_equal(flat_base[found], at):
        raise RuntimeError("an in-place change through a view that does not lie inside its base's memory")
    # a 0-d base has no dims to index by: its positions index its one-element 1-d form (see _indexable)
    return np.unravel_index(found, base.shape) if base.ndim else (found,)


def _indexable(a: np.ndarray) -> np.ndarray:
    """`a` itself, or for a 0-d array its one-element 1-d view (same memory), which `positions`' index
    addresses: a 0-d base can have views of any shape (`y.view(1)`, `y.expand(3)`)."""
    return a.reshape(1) if a.ndim == 0 else a


def _write_through(root: Tensor, view: Tensor, new: Tensor) -> None:
    """After an in-place change of `view` (computed, recorded, as `new`): the root's values changed at the
    view's elements, so its graph becomes CopySlices(its old graph, the new values' graph)."""
    index = positions(view._data, root._data)
    before = Tensor._make(root._data, root._requires_grad, root.grad_fn)  # the root's place in the graph
    before._output_nr = root._output_nr
    node = record(CopySlices, before, new)
    if node is None:
        return
    keep = np.ones_like(root._data)
    _indexable(keep)[index] = 0
    node.index, node.keep, node.value_shape = index, Tensor._make(keep, False, None), view._data.shape
    set_grad_fn(root, node, 0)


def _refresh_views(root: Tensor) -> None:
    """Every live view of `root` now reads its gradient path from the root's new graph."""
    refs = getattr(root, "_views", None)
    if not refs or not root._requires_grad:
        return
    alive = []
    for ref in refs:
        v = ref()
        if v is None:
            continue
        alive.append(ref)
        node = record(AsStridedBackward0, root)
        if node is not None:
            node.index, node.shape = positions(v._data, root._data), root._data.shape
            set_grad_fn(v, node, 0)
    refs[:] = alive


@spec.node(
    formula={"self": "index_backward(grad.new_zeros(self.sizes()), indices, grad)"},
    saved={"indices": SV.Spec(lambda n: _tensors(n.index), False), "self_sym_sizes": SV.field("shape", tuple)},
    jvp=lambda node, inputs, out, tangents: take(tangents[0], node.index), tangent="self_t[indices]",
)
class IndexBackward0(Node):
    """`take`'s backward: the gradient put back in place into zeros (repeated indices add up)."""

    __slots__ = ("index", "shape")

    def apply(self, g: Tensor) -> tuple:
        return (put(g, self.index, self.shape),)


@spec.node(
    formula={"values": "grad[indices]"},
    saved={"accumulate": SV.const(True), "indices": SV.Spec(lambda n: _tensors(n.index), False)},
    jvp=lambda node, inputs, out, tangents: put(tangents[0], node.index, out._data.shape),
    tangent="zeros.index_put_(indices, values_t, accumulate=true)",
)
class _PutBackward(Node):
    __slots__ = ("index",)

    @classmethod
    def name(cls) -> str:
        return "IndexPutBackward0"

    def apply(self, g: Tensor) -> tuple:
        return (take(g, self.index),)


def take(x: Tensor, index: Any) -> Tensor:
    """`x[index]` as a copy, differentiable to any order (setitem's backward needs it)."""
    node = record(IndexBackward0, x)
    if node is not None:
        node.index, node.shape = index, x._data.shape
    return result(np.array(_indexable(x._data)[index]), node)


def put(g: Tensor, index: Any, shape: tuple[int, ...]) -> Tensor:
    """Zeros of `shape` with `g` added at `index`: `take`'s adjoint."""
    data = np.zeros(shape, dtype=g._data.dtype)
    np.add.at(_indexable(data), index, g._data)
    node = record(_PutBackward, g)
    if node is not None:
        node.index = index
    return result(data, node)


# in-place arithmetic: each runs NumPy's own in-place operation when nothing is recorded (an optimizer step)
METHODS: dict[str, Callable] = {
    "add_": _method(A.add_scaled, "add_", np.add),
    "sub_": _method(A.sub_scaled, "sub_", np.subtract),
    "mul_": _method(A.mul, "mul_", np.multiply),
    "div_": _method(A.div, "div_", np.true_divide),
    "pow_": _method(A.pow, "pow_", np.power),
    "__iadd__": _method(A.add, "add_", np.add),
    "__isub__": _method(A.sub, "sub_", np.subtract),
    "__imul__": _method(A.mul, "mul_", np.multiply),
    "__itruediv__": _method(A.div, "div_", np.true_divide),
    "__ipow__": _method(A.pow, "pow_", np.power),
    "fill_": fill_,
    "zero_": zero_,
    "copy_": copy_,
}  # and the in-place form of every operation whose spec asks for one (`sin_`, `clamp_`...: ops/__init__.py)
