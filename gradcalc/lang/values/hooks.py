"""Hooks written in the language, as PyTorch's: the engine runs them during backward.

    h = y.register_hook(f)                      f(grad): a tensor it returns replaces y's gradient
    x.register_post_accumulate_grad_hook(f)     f(x) after backward added into x.grad (returns nothing)
    y.grad_fn.register_hook(f)                  f(grad_inputs, grad_outputs): may return new grad_inputs
    y.grad_fn.register_prehook(f)               f(grad_outputs): may return new grad_outputs
    h.remove()

The engine calls a hook with tensors (a node's hooks with tuples of tensors and none). `Hook` wraps the
user's function: what it returns is checked as PyTorch checks it (one gradient per position, the same shape
and dtype) with messages in the language's words, before the engine sees it. An error inside the function's
body comes out as it is, located in the body; the engine then undoes what the backward had done (no `.grad`
changed, nothing freed), as for any failed backward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import GradcalcError, Loc
from .convert import as_tensor, describe
from .engine import ENGINE

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd import Node
    from gradcalc.autograd.graph import RemovableHandle

# what each kind of hook is given, in words (for messages and the handle's text)
_GIVEN = {
    "tensor": ("the gradient", 1),
    "post_accumulate": ("the leaf tensor", 1),
    "node": ("grad_inputs, grad_outputs", 2),
    "prehook": ("grad_outputs", 1),
}


def _name(fn: object) -> str:
    return str(getattr(fn, "name", None) or "the function")


class Hook:
    """A language function registered as a hook: called by the engine, its result checked and converted."""

    __slots__ = ("fn", "kind", "node_name", "__weakref__")

    def __init__(self, fn: Callable[..., object], kind: str, node_name: str = "") -> None:
        self.fn, self.kind, self.node_name = fn, kind, node_name

    @property
    def name(self) -> str:
        """The user's name for the function (what the narration of a backward shows)."""
        return _name(self.fn)

    def __call__(self, *args: object) -> object:
        interp = getattr(self.fn, "interp", None)
        where = interp.current if interp is not None else None
        try:
            result = self.fn(*args)
        finally:
            if interp is not None:  # warnings after the hook point at the backward again, not into the hook
                interp.current = where
        kind = self.kind
        if kind == "tensor":
            return None if result is None else self._gradient(result, args[0], "")
        if kind == "post_accumulate":
            if result is not None:
                raise GradcalcError(
                    f"the hook {self.name} returned {describe(result)}; a post-accumulate-grad hook returns "
                    "nothing (it may read or change the leaf's .grad)"
                )
            return None
        given = args[0]  # grad_inputs of a node hook, grad_outputs of a prehook
        return None if result is None else self._gradients(result, given)

    def _gradient(self, value: object, old: Tensor | None, where: str) -> Tensor:
        """One replacement gradient: a tensor of the old one's shape and dtype (any tensor for no old one)."""
        value = as_tensor(value)
        if not isinstance(value, ENGINE.Tensor):
            raise GradcalcError(
                f"the hook {self.name} returned {describe(value)}{where}; a hook returns a gradient (a tensor "
                "of the same shape as the one it was given), or none to keep it"
            )
        if old is None:
            return value
        if tuple(value.shape) != tuple(old.shape):
            raise GradcalcError(
                f"the hook {self.name} returned a gradient of shape {tuple(value.shape)}{where} for one of "
                f"shape {tuple(old.shape)}; a hook must keep the gradient's shape"
            )
        if value.dtype != old.dtype:
            raise GradcalcError(
                f"the hook {self.name} changed a gradient's dtype from {old.dtype.name} to {value.dtype.name}"
                f"{where}; a hook must keep the gradient's dtype"
            )
        return value

    def _gradients(self, result: object, given: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]:
        """A node hook's or prehook's result: a tuple of gradients, one per position of `given`."""
        what = "grad_inputs" if self.kind == "node" else "grad_outputs"
        n = len(given)
        if not isinstance(result, tuple):
            raise GradcalcError(
                f"the hook {self.name} returned {describe(result)}; a hook on {self.node_name} returns a tuple "
                f"of {n} gradient{'s' * (n != 1)} (its new {what}, none where there is none), or none to keep "
                "them"
            )
        if len(result) != n:
            raise GradcalcError(
                f"the hook {self.name} returned {len(result)} gradient{'s' * (len(result) != 1)} where "
                f"{self.node_name} has {n} {what}; return a tuple of {n} (none where there is none), or none "
                "to keep them"
            )
        out = []
        for i, (new, old) in enumerate(zip(result, given, strict=True)):
            out.append(None if new is None else self._gradient(new, old, f" at position {i}"))
        return tuple(out)

    def __repr__(self) -> str:
        return f"<hook {self.name}>"


class HookHandle:
    """What registering a hook returns: `h.remove()` takes the hook away (removing twice does nothing)."""

    __slots__ = ("handle", "text")
    described_as = "a hook handle"

    def __init__(self, handle: RemovableHandle, text: str) -> None:
        self.handle, self.text = handle, text

    @property
    def removed(self) -> bool:
        hooks = self.handle.hooks_dict_ref()
        return hooks is None or self.handle.id not in hooks

    def language_attribute(self, name: str, loc: Loc) -> object:
        if name == "removed":
            return self.removed
        raise GradcalcError(f"a hook handle has no attribute '{name}' (it has .removed and .remove())", loc)

    def language_method(self, name: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc) -> None:
        if name != "remove":
            raise GradcalcError(f"a hook handle has no method '{name}' (it has .remove())", loc)
        if args or kwargs:
            raise GradcalcError("h.remove() takes no arguments", loc)
        self.handle.remove()
        return None

    def __repr__(self) -> str:
        return f"<{self.text}{', removed' if self.removed else ''}>"


def _the_function(
    example: str, method: str, args: Sequence[object], kwargs: dict[str, object], keyword: str, loc: Loc
) -> Callable[..., object]:
    """The one function argument of a register call."""
    given = list(args) + [v for k, v in kwargs.items() if k == keyword]
    unknown = [k for k in kwargs if k != keyword]
    if unknown or len(given) != 1:
        raise GradcalcError(f"{method} takes one argument, the hook function: {example}.{method}(f)", loc)
    fn = given[0]
    if not callable(fn) or isinstance(fn, ENGINE.Tensor):
        raise GradcalcError(
            f"{method} needs a function (one made with def), not {describe(fn)}: {example}.{method}(f)", loc
        )
    return fn


def _check_arity(fn: object, kind: str, loc: Loc) -> None:
    """A `def` that can't take what the engine will give it is an error now, not in the middle of backward."""
    params = getattr(fn, "params", None)
    defaults = getattr(fn, "defaults", None)
    if params is None or defaults is None:
        return
    what, n = _GIVEN[kind]
    if not len(params) - len(defaults) <= n <= len(params):
        raise GradcalcError(
            f"the hook {_name(fn)} must take {n} argument{'s' * (n != 1)} ({what}); it takes "
            f"{len(params)} ({', '.join(params) or 'none'})",
            loc,
        )


def register_on_tensor(
    t: Tensor, method: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc
) -> HookHandle:
    """`t.register_hook(f)` or `t.register_post_accumulate_grad_hook(f)`."""
    fn = _the_function("y" if t.grad_fn is not None else "x", method, args, kwargs, "hook", loc)
    if not t.requires_grad:
        raise GradcalcError(
            "can't register a hook on a tensor that does not require grad: no gradient is ever computed for "
            "it. Make it require grad first (x.requires_grad_(), or x = ... requires_grad)",
            loc,
        )
    shape = tuple(t.shape)
    if method == "register_post_accumulate_grad_hook":
        if t.grad_fn is not None:
            raise GradcalcError(
                f"register_post_accumulate_grad_hook needs a leaf; this tensor is made by {t.grad_fn.name()}"
                " and gets no .grad: use register_hook to see its gradient",
                loc,
            )
        kind, text = "post_accumulate", f"post-accumulate-grad hook {_name(fn)} on a leaf of shape {shape}"
    else:
        kind, text = "tensor", f"hook {_name(fn)} on the gradient of a tensor of shape {shape}"
    _check_arity(fn, kind, loc)
    hook = Hook(fn, kind)
    handle = getattr(t, method)(hook)
    return HookHandle(handle, text)


def register_on_node(
    node: Node, method: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc
) -> HookHandle:
    """`y.grad_fn.register_hook(f)` or `y.grad_fn.register_prehook(f)`."""
    fn = _the_function("y.grad_fn", method, args, kwargs, "fn", loc)
    kind = "node" if method == "register_hook" else "prehook"
    _check_arity(fn, kind, loc)
    hook = Hook(fn, kind, node.name())
    handle = getattr(node, method)(hook)
    word = "hook" if kind == "node" else "prehook"
    return HookHandle(handle, f"{word} {_name(fn)} on {node.name()}")
