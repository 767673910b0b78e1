"""What expressions do with values at run time, outside the closures themselves: literal data, indices,
size checks before large operations, and the attributes and methods of values that are not tensors.

A value that is not a tensor answers `o.name` and `o.name(...)` by one of two protocols, tried in this order
after the built-in kinds (graph nodes, and `func`'s Namespace, whose attributes are its functions):

- the language's own small values (hook handles in hooks.py, a node's `saved` values in saved.py, which the
  compiler reads for `.saved` and `._saved_NAME`): their
  class defines `language_attribute(self, name, loc)` and `language_method(self, name, args, kwargs, loc)`,
  each returning the value or raising a GradcalcError of its own;
- modules and optimizers, which are the engine's objects (gradcalc.nn, gradcalc.optim) and so carry no
  method of the language: objects.py declares a `Surface` per class, found by `surface_of(o)`, which also
  answers assignment (`net.weight = ...`, `opt.lr = ...`, `net[0] = ...`), how `:vars` and messages
  describe the value, and how it is called (`OBJECT_CALLS`). That module, and the engine's nn and optim
  packages, load only once a program has made one.

They stay two because the first kind is the language's own classes (a method on the class is the simplest
hook) while the second must not touch the engine's classes and needs more than reads and calls."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import GradcalcError, Loc, close_matches
from ..limits import check_size
from .builtins import (
    ATTRIBUTES,
    METHODS,
    NODE_ATTRIBUTES,
    NODE_HOOK_METHODS,
    NODE_METHODS,
    TENSOR_HOOK_METHODS,
)
from .convert import describe
from .engine import ENGINE as _T
from .functions import BoundMethod, invoke_method
from .namespace import Namespace
from .surfaces import surface_of

if TYPE_CHECKING:
    from gradcalc import Tensor


def index_value(v: object) -> object:
    """`x[n]` where n = 1 (a float64 tensor): a whole 0-d tensor indexes as an int."""
    if type(v) is _T.Tensor and v.ndim == 0 and v.dtype.is_floating_point:
        x = v.item()
        if x == int(x):
            return int(x)
    return v


def all_whole(data: object) -> bool:
    if isinstance(data, list):
        return all(all_whole(d) for d in data)
    return float(data).is_integer()


def ints(data: object) -> object:
    if isinstance(data, list):
        return [ints(d) for d in data]
    return int(data)


def rectangular(data: list[object]) -> bool:
    """True when nested lists have one length per depth (a tensor's shape)."""
    level = data
    while True:
        kinds = {isinstance(v, list) for v in level}
        if len(kinds) > 1:
            return False
        if not level or kinds == {False}:
            return True
        lengths = {len(v) for v in level}
        if len(lengths) > 1:
            return False
        level = [x for v in level for x in v]


def floats(data: object) -> object:
    if isinstance(data, list):
        return [floats(d) for d in data]
    return float(data)


def check_result_size(sym: str, a: Tensor, b: Tensor, loc: Loc) -> None:
    """Before an operation of two large tensors: would its result exceed the element limit?"""
    sa, sb = tuple(a.shape), tuple(b.shape)
    try:
        if sym == "@":
            if len(sa) >= 2 and len(sb) >= 2:
                batch = np.broadcast_shapes(sa[:-2], sb[:-2])
                shape = (*batch, sa[-2], sb[-1])
            else:
                shape = sa[:-1] + sb[:-2] + sb[-1:] if sb else sa[:-1]
        else:
            shape = np.broadcast_shapes(sa, sb)
    except ValueError:
        return  # shapes that do not broadcast: the engine says so
    n = 1
    for d in shape:
        n *= d
    try:
        check_size(n, f"the result of '{sym}'")
    except GradcalcError as exc:
        exc.loc = loc
        raise


def _is_node(o: object) -> bool:
    return isinstance(o, _T.Node)


def _located(exc: GradcalcError, loc: Loc) -> GradcalcError:
    if exc.loc is None:
        exc.loc = loc
    return exc


def other_attribute(o: object, name: str, loc: Loc) -> object:
    """Attributes of values that are not tensors (and unknown tensor attributes)."""
    if type(o) is not _T.Tensor and isinstance(o, _T.Tensor):  # a batched tensor, inside func.vmap: a tensor
        engine_name = ATTRIBUTES.get(name)
        if engine_name is not None:
            return getattr(o, engine_name)
        if name == "grad":
            return o.grad
    if isinstance(o, _T.Tensor):
        b = METHODS.get(name)
        if b is not None:
            return BoundMethod(o, b)
        close = close_matches(name, list(ATTRIBUTES) + list(METHODS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise GradcalcError(f"a tensor has no attribute '{name}'{hint}", loc)
    if type(o) is Namespace:
        return o.member(name, loc)
    if _is_node(o):
        if name in NODE_ATTRIBUTES:
            v = getattr(o, name, None)
            if isinstance(v, weakref.ref):
                v = v()
            return v
        if name in NODE_METHODS:
            raise GradcalcError(f"'{name}' is a method of a graph node: write .{name}()", loc)
    fields = getattr(type(o), "__match_args__", None) if isinstance(o, tuple) else None
    if fields:  # PyTorch's named tuples (`torch.return_types.max`: .values, .indices)
        if name in fields:
            return o[fields.index(name)]
        raise GradcalcError(f"{describe(o)} has no attribute '{name}' (it has {', '.join('.' + f for f in fields)})",
                            loc)
    language_attribute = getattr(type(o), "language_attribute", None)  # values of the language (saved, hooks)
    if language_attribute is not None:
        return language_attribute(o, name, loc)
    surface = surface_of(o)
    if surface is not None:
        try:
            return surface.attribute(o, name)
        except GradcalcError as exc:
            raise _located(exc, loc) from None
    raise GradcalcError(f"{describe(o)} has no attribute '{name}'", loc)


def other_method(o: object, name: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc) -> object:
    """Methods of values that are not tensors, and the message when there is none."""
    if type(o) is not _T.Tensor and isinstance(o, _T.Tensor) and name in METHODS:  # batched, inside func.vmap
        return invoke_method(METHODS[name], o, args, kwargs)
    if isinstance(o, _T.Tensor):
        if name in TENSOR_HOOK_METHODS:
            from . import hooks  # (hooks load when a program registers one, not on a cold start)

            return hooks.register_on_tensor(o, name, args, kwargs, loc)
        if name in ATTRIBUTES:
            raise GradcalcError(f"'{name}' is an attribute, not a method: write x.{name} without ()", loc)
        other_attribute(o, name, loc)  # raises: no such attribute
    if type(o) is Namespace:  # func.grad(f), nn.Linear(1, 1)
        try:
            return o.call(name, args, kwargs, loc)
        except GradcalcError as exc:
            if exc.loc is None:
                exc.loc = loc
            raise
    if _is_node(o) and name in NODE_HOOK_METHODS:
        from . import hooks  # (hooks load when a program registers one, not on a cold start)

        return hooks.register_on_node(o, name, args, kwargs, loc)
    if _is_node(o) and name in NODE_METHODS and not args and not kwargs:
        return getattr(o, name)()
    if _is_node(o) and name in NODE_ATTRIBUTES:
        raise GradcalcError(f"'{name}' is an attribute, not a method: write .{name} without ()", loc)
    language_method = getattr(type(o), "language_method", None)
    if language_method is not None:
        return language_method(o, name, args, kwargs, loc)
    surface = surface_of(o)
    if surface is not None:
        try:
            return surface.method(o, name, args, kwargs)
        except GradcalcError as exc:
            raise _located(exc, loc) from None
    raise GradcalcError(f"{describe(o)} has no method '{name}'", loc)


def assign_other_attribute(o: object, name: str, value: object, loc: Loc) -> bool:
    """`o.name = value` for a module or optimizer (False: `o` is neither, the caller says what is wrong)."""
    surface = surface_of(o)
    if surface is None:
        return False
    try:
        surface.assign(o, name, value)
    except GradcalcError as exc:
        raise _located(exc, loc) from None
    return True


def assign_other_item(o: object, index: object, value: object, loc: Loc) -> None:
    """`o[i] = value` where o is not a tensor: a Sequential's layer; anything else is an error."""
    surface = surface_of(o)
    if surface is not None and hasattr(surface, "assign_item"):
        try:
            surface.assign_item(o, index, value)
        except GradcalcError as exc:
            raise _located(exc, loc) from None
        return
    hint = "; to change an optimizer's learning rate, write opt.lr = value" if isinstance(o, dict) else ""
    raise GradcalcError(f"only tensors can be assigned into by index, not {describe(o)}{hint}", loc)


