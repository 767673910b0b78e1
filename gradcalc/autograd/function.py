"""Custom autograd functions: PyTorch's `torch.autograd.Function`.

A user subclasses `Function` with two static methods, `forward(ctx, *args)` (plain computation, run with
recording off) and `backward(ctx, *grad_outputs)` (one gradient per forward argument), and calls
`MyFn.apply(*args)`. As in PyTorch, `ctx` IS the backward node: each subclass gets its own node class
named `<Name>Backward`, an instance of which is made per call, handed to forward as `ctx`, and put in the
graph as the outputs' `grad_fn` when the call is recorded.

The node differs from the built-in ones in two ways: it has a `__dict__` (so `ctx.k = 3` works), and the
user's backward runs under whatever grad mode the engine sets, so a backward written with differentiable
operations has derivatives of any order under `create_graph`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import forward_ad, grad_mode, provenance
from .grad_mode import set_recording, state
from .hooks import watch
from .node import STAMP, Node, make_node
from .ops import basic, sums
from .tensor import Tensor, version_of


class FunctionCtx:
    """What `forward` sees as `ctx`: where it leaves what `backward` needs.

    Standalone (calling `MyFn.forward(FunctionCtx(), ...)` directly) it only records what it is told;
    the backward node made by `Function.apply` inherits these methods and acts on them.
    """

    materialize_grads = True  # backward gets zeros (not None) for outputs that received no gradient

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for backward (read them as `ctx.saved_tensors`); checked there for in-place changes."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward keeps tensors (or None) only, but argument {i} is a {type(t).__name__}; "
                    "store other values as attributes of ctx (ctx.name = value)"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for `jvp` (forward mode): there `ctx.saved_tensors` gives these."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward keeps tensors (or None) only, but argument {i} is a "
                                f"{type(t).__name__}; store other values as attributes of ctx")
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that forward changed in place (and returns as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient (indices, masks): they will not require grad."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (instead of zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class _SavedFunctionOutput:
    """One of the function's own outputs, saved without a reference to it (that would be a cycle:
    output -> node -> saved output). Carries what `Node.save` checks: data, version counter, inference."""

    __slots__ = ("_data", "_vc", "_inference", "nr")

    def __init__(self, t: Tensor, nr: int) -> None:
        self._data = t._data
        self._vc = version_of(t)
        self._inference = t._inference
        self.nr = nr

    def unpack(self, node: Node) -> Tensor:
        out = Tensor._make(self._data, True, node, self._vc)
        out._output_nr = self.nr
        return out


_NO_CONTEXT = contextlib.nullcontext()


class BackwardCFunction(FunctionCtx, Node):
    """The backward node of a custom Function (PyTorch's class of the same name); also its `ctx`.

    No `__slots__`: a custom function's ctx takes arbitrary attributes. Per-call fields:
    `needs_input_grad` (per forward argument), `num_outputs`, `_slots` (per forward argument, its index
    among the tensor inputs, or -1), `_inputs` and `_outputs` ((shape, dtype) per tensor input / output,
    None for a non-tensor output) to check and materialize gradients.
    """

    _forward_cls: type[Function]
    user_code = True  # its backward is the user's: a failure mid-walk must be undone (engine)

    def __init__(self) -> None:
        Node._init_fields(self)
        watch(self)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:  # type: ignore[override]
        """The tensors given to `save_for_backward`, checked: freed by an earlier backward, or changed in
        place since, is an error."""
        during_jvp = self.__dict__.get("_jvp_saved")
        if during_jvp is not None:  # inside `jvp`: what save_for_forward kept
            return during_jvp
        return tuple(
            s.unpack(self) if type(s) is _SavedFunctionOutput else s for s in self.unpack_saved(False)
        )

    def apply(self, grads: Any) -> tuple[Tensor | None, ...]:
        """Run the user's backward on the outputs' gradients; check and route what it returns."""
        grads = [grads] if self.num_outputs == 1 else list(grads)
        if self.materialize_grads:
            for i, (g, meta) in enumerate(zip(grads, self._outputs, strict=True)):
                if g is None and meta is not None:
                    grads[i] = Tensor._make(np.zeros(meta[0], dtype=meta[1]), False, None)
        fn = self._forward_cls
        result = fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._slots)
        if len(result) != n:
            # extra trailing Nones are allowed (a backward written for optional arguments left out)
            if len(result) < n or any(r is not None for r in result[n:]):
                raise RuntimeError(
                    f"{self.name()}: backward returned {len(result)} gradients, but forward took {n} "
                    f"arguments; return one gradient per forward argument (None for those that need none)"
                )
            result = result[:n]
        out: list[Tensor | None] = [None] * len(self._next)
        for i, (g, slot) in enumerate(zip(result, self._slots, strict=True)):
            if g is None:
                continue
            if slot < 0:
                raise RuntimeError(
                    f"{self.name()}: backward returned a gradient for argument {i}, which is not a tensor; "
                    "return None in that position"
                )
            if not isinstance(g, Tensor):
                raise RuntimeError(
                    f"{self.name()}: backward must return tensors or None, but gradient {i} is a "
                    f"{type(g).__name__}"
                )
            if self._next[slot] is None:
                continue  # that input does not require grad: PyTorch drops its gradient too
            out[slot] = self._fit(g, i, *self._inputs[slot])
        return tuple(out)

    def _fit(self, g: Tensor, i: int, shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
        """A returned gradient in its input's shape (a broadcast one summed back) and dtype."""
        if g._data.shape != shape:
            try:  # a gradient the input broadcast to is summed back, as PyTorch does
                fits = np.broadcast_shapes(g._data.shape, shape) == g._data.shape
            except ValueError:
                fits = False
            if not fits:
                raise RuntimeError(
                    f"{self.name()}: backward returned a gradient of shape {list(g._data.shape)} for argument "
                    f"{i}, whose shape is {list(shape)}; the gradient must have the argument's shape"
                )
            g = sums.sum_to(g, shape)
        if g._data.dtype != dtype:
            g = basic.to_dtype(g, dtype)
        return g


def _no_backward(ctx: Any, *grad_outputs: Any) -> Any:
    raise NotImplementedError(
        f"{type(ctx).name()}: the custom function defines no backward, so it cannot be differentiated; "
        "add a @staticmethod backward(ctx, *grad_outputs)"
    )


class Function:
    """Base class of custom differentiable operations (PyTorch's `torch.autograd.Function`).

    Subclass it with `@staticmethod forward(ctx, *args)` and `@staticmethod backward(ctx, *grads)` and
    call `Subclass.apply(*args)`. Alternatively forward may take no ctx and a `setup_context(ctx, inputs,
    output)` static method fills ctx afterwards.
    """

    _backward_cls: type[BackwardCFunction] = BackwardCFunction

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the node class PyTorch makes per Function: its name is what `grad_fn` prints
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,), {"_forward_cls": cls})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self).__name__} is a custom autograd Function, whose methods are all static: do not "
            f"instantiate it, call {type(self).__name__}.apply(...) instead",
            DeprecationWarning,
            stacklevel=2,
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """The computation, run with recording off; returns a tensor or a tuple of outputs."""
        raise NotImplementedError("a custom Function must define @staticmethod forward")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Optional: fill ctx from the inputs and output when forward takes no ctx."""
        raise NotImplementedError

    backward = staticmethod(_no_backward)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward and, when grad mode is on and a tensor argument requires grad, record the call."""
        setup = cls.setup_context is not Function.setup_context
        if setup:  # setup_context sees every argument positionally, defaults filled in
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        # keyword arguments count as arguments after the positional ones (for needs_input_grad, and for
        # the gradients backward returns), as in PyTorch
        every = args + tuple(kwargs.values()) if kwargs else args
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in every)
        ctx.needs_input_grad = needs
        recording = state.grad_enabled and any(needs)
        # tangents of the arguments: forward runs on the primals only, and `jvp` gives the outputs' tangents
        dual = grad_mode.forward_seen and any(forward_ad.carries(a) for a in every)
        previous = state.grad_enabled
        set_recording(False)
        try:
            with forward_ad.suspended_all() if dual else _NO_CONTEXT:
                if setup:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            set_recording(previous)
        wrapped = _wrap_outputs(ctx, every, output, recording)
        if dual:
            forward_ad.function_outputs(cls, ctx, every, wrapped)
        return wrapped

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Optional: the outputs' tangents from the inputs' (`None` for an input without one), for
        forward-mode AD; `ctx` is what forward (or setup_context) filled."""
        raise NotImplementedError(
            "this custom Function has no jvp: define @staticmethod jvp(ctx, *tangents) to use it with "
            "forward-mode AD"
        )


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, output: Any, recording: bool) -> Any:
    """Connect forward's outputs to the node and save what forward asked to save."""
    d = ctx.__dict__
    dirty = {id(t) for t in d.pop("dirty_tensors", ())}
    non_diff = {id(t) for t in d.pop("non_differentiable", ())}
    to_save = d.pop("to_save", None)  # popped: the node must not refer to its outputs (a cycle)

    # edges: one per tensor argument, as PyTorch's next_functions
    slots, nexts, nrs, inputs = [], [], [], []
    for a in args:
        if isinstance(a, Tensor):
            slots.append(len(nexts))
            inputs.append((a._data.shape, a._data.dtype))
            if a._requires_grad:
                nexts.append(a.grad_fn if a.grad_fn is not None else a._accumulate_node())
                nrs.append(a._output_nr)
            else:
                nexts.append(None)
                nrs.append(0)
        else:
            slots.append(-1)
    ctx._slots, ctx._inputs = slots, inputs
    ctx._next, ctx._nrs = tuple(nexts), (tuple(nrs) if any(nrs) else None)

    is_tuple = type(output) is tuple
    outs = output if is_tuple else (output,)
    ctx.num_outputs = len(outs)
    metas: list[tuple | None] = []
    wrapped: list[Any] = []
    saved_as_output: dict[int, int] = {}  # id of an output tensor -> its output number
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            metas.append(None)
            wrapped.append(o)
            continue
        metas.append((o._data.shape, o._data.dtype))
        t = o
        if id(o) in dirty:
            if recording and o._requires_grad and o.grad_fn is None:
                raise RuntimeError(
                    f"{ctx.name()}: forward changed in place a leaf that requires grad; do it inside "
                    "`with no_grad:`, or let forward change a .clone() of it"
                )
            counter = version_of(o)
            counter.value += 1
            if STAMP.origin is not None:  # a front end keeps who changed what (provenance.py)
                provenance.changed(counter)
        elif o._requires_grad or any(o is a for a in args):
            # an input (or another graph member) returned as it is: the output is a new tensor on the same
            # data, as PyTorch's view, so the original keeps its own place in the graph
            t = Tensor._make(o._data, False, None, version_of(o))
        if recording and id(o) not in non_diff and o._data.dtype.kind == "f":
            t.grad_fn, t._output_nr, t._requires_grad = ctx, nr, True
            if t is o:
                saved_as_output[id(o)] = nr
        wrapped.append(t)
    ctx._outputs = metas

    if to_save is not None:
        ctx.save(*(
            _SavedFunctionOutput(t, saved_as_output[id(t)]) if id(t) in saved_as_output else t
            for t in to_save
        ))
    return tuple(wrapped) if is_tuple else wrapped[0]


class DelayedError(Node):
    """The node behind outputs of a `once_differentiable` backward: differentiating them is an error."""

    __slots__ = ()

    def apply(self, grad: Any) -> tuple:
        raise RuntimeError(
            "this gradient came from a custom backward marked @once_differentiable, which cannot be "
            "differentiated again; drop create_graph, or write that backward with differentiable operations"
        )


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a custom backward that is not differentiable itself: it runs with recording off, and a
    later attempt to differentiate its result is an error instead of a silently wrong derivative."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        previous = state.grad_enabled
        set_recording(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            set_recording(previous)
        if not (previous and any(isinstance(a, Tensor) and a._requires_grad for a in args)):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        wrapped = tuple(
            Tensor._make(o._data, True, make_node(DelayedError, (), None))
            if isinstance(o, Tensor) and o._data.dtype.kind == "f"
            else o
            for o in (outputs if is_tuple else (outputs,))
        )
        return wrapped if is_tuple else wrapped[0]

    return wrapper


def make_function(
    name: str,
    forward: Callable[..., Any],
    backward: Callable[..., Any],
    setup_context: Callable[..., Any] | None = None,
) -> type[Function]:
    """A `Function` subclass called `name` from plain callables (for front ends such as the language's
    `function NAME(args): forward: ... backward(grad_output): ...` blocks); use `.apply(...)` on it."""
    body: dict[str, Any] = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if setup_context is not None:
        body["setup_context"] = staticmethod(setup_context)
    return type(name, (Function,), body)
