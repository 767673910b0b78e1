"""Forward-mode differentiation, as PyTorch's `torch.autograd.forward_ad`.

Inside `with dual_level():`, `make_dual(x, t)` gives a tensor equal to `x` that carries the tangent `t`;
every operation on it computes, beside its result, the result's tangent (the Jacobian-vector product),
and `unpack_dual(y)` reads it back.

How tangents travel:
- a tensor carries its tangents in its `_fw` slot: a dict from level to tangent (set only on tensors that
  have one, so the slot costs nothing elsewhere);
- every node class's spec (spec.py) gives its forward rule, with one signature for all:
  `jvp(node, inputs, out, tangents)`. Elementwise and arithmetic operations compute the result's tangent at
  once with it; every other operation records a node as for backward (only for the tangent when nothing
  requires grad), and the result's tangent is computed with it when first read;
- `double_vjp` is a rule a spec may name where it is right: J t = d/du <J^T u, t> from the node's backward
  formula, exact since every backward formula is itself differentiable. A node whose spec gives no rule
  (`no_jvp`, with the reason) makes a tangent through it an error, as PyTorch's forward AD does.
Tangent formulas are written with the engine's own operations, so tangents can be differentiated
(reverse-over-forward) and a backward formula can carry tangents (forward-over-reverse).

Levels nest (the function transforms of `gradcalc.func` open one per `jvp`): while the tangent of level L
is computed, levels L and above are suspended, so a formula's own operations carry only the tangents of the
levels outside it. As in PyTorch, the public `dual_level` cannot be nested.

Nothing here costs anything until a level is first opened: operations check `grad_mode.forward_seen`.
"""

from __future__ import annotations

import itertools
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from . import grad_mode, spec
from .engine import run_backward
from .grad_mode import enable_grad
from .node import Node, SavedOutput, make_node
from .plan import roots_of
from .tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

_counter = itertools.count()
_open: list[int] = []  # the levels open now, outermost first
_active: tuple[int, ...] = ()  # the levels whose tangents operations propagate now (open and not suspended)
_public: list[int] = []  # the levels opened by the public `dual_level`


class _ForwardEdge(Node):
    """The edge a node records for an input that only carries a tangent: it makes the node's backward
    formula compute that input's term (`needs`), which `partials` and `double_vjp` read."""

    __slots__ = ()

    def apply(self, g: Any) -> tuple:
        return ()


FORWARD_EDGE = make_node(_ForwardEdge, (), None)


class _Pending:
    """The tangents of an operation's result, not yet computed: its node and inputs, and the levels open."""

    __slots__ = ("node", "inputs", "levels", "done")

    def __init__(self, node: Node, inputs: tuple, levels: tuple[int, ...]) -> None:
        self.node, self.inputs, self.levels = node, inputs, levels
        self.done: dict | None = None  # the tangents once computed (a saved output shares this object)


# -- levels ------------------------------------------------------------------------------------------------
_before: list[tuple[int, ...]] = []  # per open level, the active levels when it was opened


def enter_dual_level() -> int:
    """Open a new level of forward AD and return it (the function transforms nest these)."""
    global _active
    grad_mode.forward_seen = True
    level = next(_counter)
    _open.append(level)
    _before.append(_active)
    # the levels active now stay so (a level opened inside a suspension leaves the suspended ones out)
    _active = (*_active, level)
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level (or `level`, and all inside it): its tangents are forgotten."""
    global _active
    if not _open:
        raise RuntimeError("exit_dual_level: no forward AD level is open")
    if level is None:
        level = _open[-1]
    if level not in _open:
        raise RuntimeError(f"exit_dual_level: level {level} is not open")
    i = _open.index(level)
    _active = _before[i]
    del _open[i:], _before[i:]


class dual_level:
    """A block in which tensors may carry tangents (`make_dual`): on exit their tangents are forgotten.

    As PyTorch's `torch.autograd.forward_ad.dual_level`; levels of this kind cannot be nested."""

    def __enter__(self) -> int:
        if _public:
            raise RuntimeError("dual_level: nested forward AD levels are not supported (as in PyTorch); "
                               "close the open `dual_level` block first")
        level = enter_dual_level()
        _public.append(level)
        return level

    def __exit__(self, *exc: object) -> None:
        level = _public.pop()
        if level in _open:
            exit_dual_level(level=level)


@contextmanager
def _suspended(level: int, levels: tuple[int, ...]) -> Iterator[None]:
    """Inside: only the levels of `levels` outside `level` propagate (a formula of level `level` runs)."""
    global _active
    before = _active
    _active = _outside(level, levels)
    try:
        yield
    finally:
        _active = before


def _outside(level: int, levels: tuple[int, ...]) -> tuple[int, ...]:
    """The levels of `levels` outside `level` that are still open: those a formula of level `level` carries."""
    if levels[0] == level:  # the outermost (the only one, most often): none
        return ()
    return tuple(lv for lv in levels if lv < level and lv in _open)


@contextmanager
def suspended_all() -> Iterator[None]:
    """Inside: no level propagates (a custom Function's forward, whose outputs' tangents its jvp gives)."""
    global _active
    before = _active
    _active = ()
    try:
        yield
    finally:
        _active = before


def _default_level(level: int | None, what: str) -> int:
    if level is not None:
        return level
    if not _open:
        raise RuntimeError(f"{what}: no forward AD level is open; call it inside `with forward_ad.dual_level():`")
    return _open[-1]


# -- reading and attaching tangents ------------------------------------------------------------------------
def tangent_of(t: Any, level: int) -> Tensor | None:
    """The tangent `t` carries at `level`, or None."""
    if type(t) is not Tensor and not isinstance(t, Tensor):
        return None
    fw = getattr(t, "_fw", None)
    if fw is None:
        return None
    if type(fw) is _Pending:
        fw = _force(t, fw)
    return fw.get(level)


def carries(t: Any) -> bool:
    """Whether `t` may carry a tangent of an active level (cheap: pending ones count)."""
    if not _active:
        return False
    fw = getattr(t, "_fw", None)
    if fw is None:
        return False
    if type(fw) is _Pending:
        return True
    for level in _active:
        if level in fw:
            return True
    return False


def _fit(tangent: Any, out: Tensor) -> Tensor | None:
    """A formula's tangent as the tangent of `out`: a tensor of its shape and dtype (a rule may give a
    number, or a tangent of an input's shape that broadcasts)."""
    if tangent is None:
        return None
    if type(tangent) is not Tensor:
        return Tensor._make(np.broadcast_to(np.asarray(tangent, out._data.dtype), out._data.shape).copy(), False, None)
    # operations by Tensor's methods: the operations' modules import this one (they propagate tangents)
    if tangent._data.shape != out._data.shape:
        tangent = tangent.expand(out._data.shape)
    if tangent._data.dtype != out._data.dtype:
        tangent = tangent.to(out._data.dtype)
    return tangent


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor equal to `tensor` (sharing its data) that carries `tangent` for forward-mode AD.

    `tangent` must have `tensor`'s shape. Differentiable in `tensor` (the result is a view of it)."""
    level = _default_level(level, "make_dual")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual: tensor must be a tensor, not {type(tensor).__name__}")
    if not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: tangent must be a tensor, not {type(tangent).__name__}")
    if tensor._data.dtype.kind != "f" or tangent._data.dtype.kind != "f":
        raise ValueError("make_dual: tensor and tangent must be floating-point tensors; convert with .double()")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            f"make_dual: the tangent has shape {tuple(tangent._data.shape)} but the tensor has shape "
            f"{tuple(tensor._data.shape)}: they must match"
        )
    with _suspended(level, _active):
        dual = tensor.view(tensor._data.shape)  # a view, as PyTorch's (ViewBackward0)
    if tangent._data.dtype != tensor._data.dtype:
        tangent = tangent.to(tensor._data.dtype)
    fw = _forced(dual)
    dual._fw = {**fw, level: tangent}
    return dual


def _forced(t: Tensor) -> dict:
    fw = getattr(t, "_fw", None)
    if fw is None:
        return {}
    return _force(t, fw) if type(fw) is _Pending else fw


def tangent_repr(t: Tensor, text: str) -> str:
    """`text` (the tensor's repr) with its tangent at the innermost open level, as PyTorch prints duals."""
    if not _open:
        return text
    tangent = tangent_of(t, _open[-1])
    if tangent is None:
        return text
    if not tangent._data.ndim:
        suffix = f"tangent={tangent._data.item()!r}"
    else:
        suffix = f"tangent={tangent!r}"  # its own lines keep their own indentation, as PyTorch prints them
    # PyTorch's rule for suffixes: on the last line when it fits in 80 columns, else on a line of its own
    head = text[:-1]
    last_line = len(head) - head.rfind("\n") + 1
    if last_line + len(suffix.split("\n")[0]) + 2 > 80:
        return f"{head},\n       {suffix})"
    return f"{head}, {suffix})"


Tensor._tangent_repr = tangent_repr  # Tensor.__repr__'s, for a tensor with tangents (tensor.py is below this)


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a view without the tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal of `tensor` (a view of it without this level's tangent) and its tangent (None if none)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: tensor must be a tensor, not {type(tensor).__name__}")
    if level is None:
        if not _open:
            return UnpackedDualTensor(tensor, None)
        level = _open[-1]
    tangent = tangent_of(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended(level, _active):
        primal = tensor[...]  # a new view of the whole tensor, as PyTorch's (AliasBackward0)
    rest = {k: v for k, v in _forced(tensor).items() if k < level}
    if rest:
        primal._fw = rest
    return UnpackedDualTensor(primal, tangent)


# -- the hooks operations call (only once forward_seen) ----------------------------------------------------
_new = object.__new__


def rule_of(cls: type) -> Callable[..., Any]:
    """The forward rule of node class `cls` (its spec's, kept on the class as `jvp_rule`), or the error PyTorch
    gives for an operation without."""
    rule = cls.jvp_rule
    if rule is None:
        spec = cls.spec
        why = "its node has no spec" if spec is None else spec.no_jvp
        raise NotImplementedError(
            f"Trying to use forward AD with {cls.name()} that does not support it: {why}"
        )
    return rule


def unary(cls: type, x: Tensor, out: Tensor) -> Tensor:
    """Attach to `out` = f(x), an operation of node class `cls`, its tangents: the class's rule per level."""
    global _active
    if not _active or not carries(x):
        return out
    rule = cls.jvp_rule or rule_of(cls)
    node = out.grad_fn if out.grad_fn is not None else _new(cls)  # an elementwise row's rule reads no field
    levels = _active
    # filled outermost level first, and visible on `out` meanwhile: an inner level's formula that uses the
    # output needs its outer tangents (nested forward mode)
    fw: dict = {}
    out._fw = fw
    saved = out.grad_fn._saved if out.grad_fn is not None else None
    if saved:  # the output, saved before its tangent was known, shares it
        for s in saved:
            if type(s) is SavedOutput:
                s._fw = fw
    for level in levels:
        t = tangent_of(x, level)
        if t is not None:
            _active = _outside(level, levels)  # `_suspended`, inlined: this runs for every elementwise op
            try:
                fw[level] = _fit(rule(node, (x,), out, (t,)), out)
            finally:
                _active = levels
    if not fw:
        out._fw = None
    return out


def binary(cls: type, a: Any, b: Any, out: Tensor, other: Any) -> Tensor:
    """Attach to `out` = a (op) b, recorded by node class `cls` with the number `other`, its tangents: the
    class's rule per level."""
    global _active
    if not _active or not (carries(a) or carries(b)):
        return out
    rule = cls.jvp_rule or rule_of(cls)
    node = out.grad_fn
    if node is None:  # nothing requires grad: a bare node for the rule's number operand
        node = _new(cls)
        node.other, node.shapes = other, None
    levels = _active
    fw: dict = {}
    out._fw = fw  # filled outermost level first, as in `unary`
    for level in levels:
        ta, tb = tangent_of(a, level), tangent_of(b, level)
        if ta is None and tb is None:
            continue
        _active = _outside(level, levels)  # `_suspended`, inlined: this runs for every arithmetic op
        try:
            fw[level] = _fit(rule(node, (a, b), out, (ta, tb)), out)
        finally:
            _active = levels
    if not fw:
        out._fw = None
    return out


def record(cls: type[Node], inputs: tuple, node: Node | None) -> Node | None:
    """For `core.record`: `node` (recorded for backward, or None) noted for tangents when an input carries
    one; when nothing is recorded for backward, a node made for the tangent alone."""
    if not _active:
        return node
    carrying = [carries(t) for t in inputs]
    if not any(carrying):
        return node
    if node is None:
        node = make_node(cls, tuple(FORWARD_EDGE if c else None for c in carrying), None)
        node._fwd = (inputs, _active, True)
    else:
        node._fwd = (inputs, _active, False)
    return node


def output(data: np.ndarray, node: Node, version: Any = None) -> Tensor:
    """The result of an operation whose node was noted by `record`: it requires grad only when the node
    was recorded for backward; its tangent is computed when first read."""
    fwd = getattr(node, "_fwd", None)
    if fwd is None:
        return Tensor._make(data, True, node, version)
    inputs, levels, forward_only = fwd
    out = Tensor._make(data, False, None, version) if forward_only else Tensor._make(data, True, node, version)
    out._fw = _Pending(node, inputs, levels)
    if len(_pending) >= 256 and len(_pending) & (len(_pending) - 1) == 0:  # now and then, forget the done
        _pending[:] = [r for r in _pending if type(getattr(r(), "_fw", None)) is _Pending]
    _pending.append(weakref.ref(out))
    return out


_pending: list[weakref.ref] = []  # results whose tangents are not computed yet


def force_pending() -> None:
    """Compute every pending tangent now: before a backward lets saved values go, and before an in-place
    change overwrites values a rule reads (PyTorch computes tangents with the operation)."""
    refs = _pending[:]
    _pending.clear()
    for r in refs:
        t = r()
        if t is not None:
            fw = getattr(t, "_fw", None)
            if type(fw) is _Pending:
                _force(t, fw)


def _force(out: Tensor, p: _Pending) -> dict:
    """Compute the pending tangents of `out` (output `out._output_nr` of `p.node`)."""
    if p.done is not None:
        out._fw = p.done
        return p.done
    fw: dict = {}
    out._fw = fw  # filled outermost level first: an inner level's formula may use the outer tangents
    node = p.node
    rule = type(node).jvp_rule or rule_of(type(node))
    for level in p.levels:
        tangents = tuple(tangent_of(t, level) for t in p.inputs)
        if all(t is None for t in tangents):
            continue
        with _suspended(level, p.levels):
            t = rule(node, p.inputs, out, tangents)
        t = _fit(t, out)
        if t is not None:
            fw[level] = t
    out._fw = p.done = fw
    return fw


@contextmanager
def _edges_for(node: Node, tangents: tuple) -> Iterator[None]:
    """Inside: `node` has an edge for every input that carries a tangent, so that its backward formula computes
    that input's term (`needs`), whether or not the input requires grad."""
    before = node._next
    pairs = zip(before, tangents, strict=True)
    node._next = tuple(FORWARD_EDGE if t is not None and n is None else n for n, t in pairs)
    try:
        yield
    finally:
        node._next = before


def partials(node: Node, tangents: tuple, grad: Tensor) -> tuple:
    """The node's backward formula applied to `grad`, with a term for every input that carries a tangent: for
    rules that read a derivative off the backward formula (a reduction's `d out / d input` is its formula
    applied to ones)."""
    with _edges_for(node, tangents):
        return node.apply(grad)


def double_vjp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Tensor | None:
    """The forward rule a spec may name where it is right: J t from the node's backward formula J^T u, as the
    gradient in u of <J^T u, t> (exact, since every backward formula is itself differentiable; it costs a
    backward formula and a backward pass through it)."""
    u = Tensor._make(np.zeros_like(out._data), False, None).requires_grad_(True)
    with _edges_for(node, tangents):
        with enable_grad():
            if node.num_outputs == 1:
                grads = node.apply(u)
            else:
                slots: list = [None] * node.num_outputs
                slots[out._output_nr] = u
                grads = node.apply(slots)
            total = None
            for g, t in zip(grads, tangents, strict=False):
                if g is None or t is None:
                    continue
                if type(g) is not Tensor:
                    g = Tensor._make(np.asarray(g), False, None)
                term = (g * t).sum()
                total = term if total is None else total + term
            if total is None or not total._requires_grad:
                return None
            # autograd.grad(total, u, create_graph=True, allow_unused=True), by the engine itself: the
            # module of `grad` is above this one (it forces pending tangents before a backward, as here)
            if _pending:
                force_pending()
            (r,) = run_backward(roots_of([total], [None], "grad"), retain_graph=True, create_graph=True,
                                inputs=[u], accumulate=False)
    if r is None:
        return None
    # the result hangs on u only through the formula: keep its graph only where the caller's tensors have one
    if not any(isinstance(x, Tensor) and x._requires_grad for x in (*inputs, *tangents)):
        r = r.detach()
    return r


def function_outputs(cls: Any, ctx: Any, args: tuple, outputs: Any) -> None:
    """Attach to a custom Function's outputs the tangents its `jvp(ctx, *tangents)` gives, per level."""
    outs = outputs if type(outputs) is tuple else (outputs,)
    levels = _active
    for level in levels:
        tangents = tuple(tangent_of(a, level) for a in args)
        if all(t is None for t in tangents):
            continue
        for_forward = ctx.__dict__.get("saved_for_forward")
        if for_forward is not None:
            ctx._jvp_saved = tuple(for_forward)
        try:
            with _suspended(level, levels):
                found = cls.jvp(ctx, *tangents)
        finally:
            ctx.__dict__.pop("_jvp_saved", None)
        found = found if type(found) is tuple else (found,)
        if len(found) != len(outs):
            raise RuntimeError(
                f"{cls.__name__}.jvp returned {len(found)} tangents, but forward returned {len(outs)} outputs; "
                "return one tangent per output"
            )
        for o, t in zip(outs, found, strict=True):
            if not isinstance(o, Tensor) or t is None:
                continue
            if not isinstance(t, Tensor) or t._data.shape != o._data.shape:
                shape = tuple(t._data.shape) if isinstance(t, Tensor) else type(t).__name__
                raise RuntimeError(
                    f"{cls.__name__}.jvp returned a tangent of shape {shape} for an output of shape "
                    f"{tuple(o._data.shape)}; they must match"
                )
            fw = _forced(o)
            o._fw = {**fw, level: t}


# -- in-place changes through views ------------------------------------------------------------------------
def _positions(view: np.ndarray, root: np.ndarray) -> np.ndarray | None:
    """For each element of `view` (a NumPy view into `root`'s C-contiguous array), its flat index in
    `root`; None when the layout does not allow the computation."""
    if not root.flags.c_contiguous or view.itemsize != root.itemsize:
        return None
    start = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start % root.itemsize:
        return None
    pos = np.full(view.shape, start // root.itemsize, dtype=np.int64)
    for k, (n, stride) in enumerate(zip(view.shape, view.strides, strict=True)):
        if stride % root.itemsize:
            return None
        shape = [1] * view.ndim
        shape[k] = n
        pos = pos + (np.arange(n) * (stride // root.itemsize)).reshape(shape)
    return pos


def share_with_views(root: Tensor, changed: Tensor) -> None:
    """After an in-place change of `changed` (the root or one of its views), make the tangents of the root
    and of its live views agree, as PyTorch's views share their base's tangent."""
    views = [r() for r in getattr(root, "_views", None) or ()]
    views = [v for v in views if v is not None]
    if changed is not root:
        pos = _positions(changed._data, root._data)
        if pos is None:
            return
        n = root._data.size
        flat = pos.reshape(-1)
        keep = np.ones(n, dtype=root._data.dtype)
        keep[flat] = 0
        fw = dict(_forced(root))
        for level, t in _forced(changed).items():
            old = fw.get(level)
            put = _scatter(t.reshape(-1), flat, n)
            kept = None if old is None else old.reshape(n) * Tensor._make(keep, False, None)
            fw[level] = (put if kept is None else kept + put).reshape(root._data.shape)
        root._fw = fw or None
    base = _forced(root)
    for v in views:
        if v is changed:
            continue
        pos = _positions(v._data, root._data)
        if pos is None:
            continue
        v._fw = {level: t.reshape(-1)[pos.reshape(-1)].reshape(v._data.shape) for level, t in base.items()} or None


def _scatter(src: Tensor, positions: np.ndarray, n: int) -> Tensor:
    """Zeros of `n` elements with `src` added at `positions` (repeats add up): PyTorch's `_index_put_impl_`
    with accumulate (IndexPutImplBackward0), the adjoint of the gather `x[positions]`. This module does not
    import the operations (they call into it, to carry tangents), so it is that gather's backward formula,
    called on `src` as it is (recorded when grad mode is on, as the operation would be)."""
    with enable_grad():
        gather = Tensor._make(np.zeros(n, src._data.dtype), True, None)[positions].grad_fn
    (out,) = gather.apply(src)
    return out


# This module is not loaded at start-up (the first use of forward AD loads it): the operations reach it through
# `grad_mode.forward_ad`, and the specs that name `spec.DOUBLE_VJP` get `double_vjp` itself
grad_mode.forward_ad = sys.modules[__name__]
spec.resolve_double_vjp(double_vjp)
