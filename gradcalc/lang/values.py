"""What expressions do with values at run time, outside the closures themselves: literal data, indices,
size checks before large operations, and the attributes and methods of values that are not tensors."""

from __future__ import annotations

import weakref
from typing import Any

from .builtins import (
    ATTRIBUTES,
    METHODS,
    NODE_ATTRIBUTES,
    NODE_HOOK_METHODS,
    NODE_METHODS,
    TENSOR_HOOK_METHODS,
    check_size,
    describe,
)
from .errors import GradcalcError, Loc, close_matches
from .runtime import ENGINE as _T
from .runtime import BoundMethod


def index_value(v: Any) -> Any:
    """`x[n]` where n = 1 (a float64 tensor): a whole 0-d tensor indexes as an int."""
    if type(v) is _T.Tensor and v.ndim == 0 and v.dtype.is_floating_point:
        x = v.item()
        if x == int(x):
            return int(x)
    return v


def all_whole(data: Any) -> bool:
    if isinstance(data, list):
        return all(all_whole(d) for d in data)
    return float(data).is_integer()


def ints(data: Any) -> Any:
    if isinstance(data, list):
        return [ints(d) for d in data]
    return int(data)


def rectangular(data: list) -> bool:
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


def floats(data: Any) -> Any:
    if isinstance(data, list):
        return [floats(d) for d in data]
    return float(data)


def check_result_size(sym: str, a: Any, b: Any, loc: Loc) -> None:
    """Before an operation of two large tensors: would its result exceed the element limit?"""
    import numpy as np

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


def _is_node(o: Any) -> bool:
    return isinstance(o, _T.Node)


def other_attribute(o: Any, name: str, loc: Loc) -> Any:
    """Attributes of values that are not tensors (and unknown tensor attributes)."""
    if type(o) is _T.Tensor:
        b = METHODS.get(name)
        if b is not None:
            return BoundMethod(o, b)
        close = close_matches(name, list(ATTRIBUTES) + list(METHODS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise GradcalcError(f"a tensor has no attribute '{name}'{hint}", loc)
    if _is_node(o):
        if name == "saved" or name.startswith("_saved_"):
            from . import saved

            return saved.SavedValues(o) if name == "saved" else saved.read(o, name[len("_saved_"):], loc)
        if name in NODE_ATTRIBUTES:
            v = getattr(o, name, None)
            if isinstance(v, weakref.ref):
                v = v()
            return v
        if name in NODE_METHODS:
            raise GradcalcError(f"'{name}' is a method of a graph node: write .{name}()", loc)
    language_attribute = getattr(type(o), "language_attribute", None)  # values of the language (saved, hooks)
    if language_attribute is not None:
        return language_attribute(o, name, loc)
    raise GradcalcError(f"{describe(o)} has no attribute '{name}'", loc)


def other_method(o: Any, name: str, args: Any, kwargs: dict, loc: Loc) -> Any:
    """Methods of values that are not tensors, and the message when there is none."""
    if type(o) is _T.Tensor:
        if name in TENSOR_HOOK_METHODS:
            from . import hooks

            return hooks.register_on_tensor(o, name, args, kwargs, loc)
        if name in ATTRIBUTES:
            raise GradcalcError(f"'{name}' is an attribute, not a method: write x.{name} without ()", loc)
        other_attribute(o, name, loc)  # raises: no such attribute
    if _is_node(o) and name in NODE_HOOK_METHODS:
        from . import hooks

        return hooks.register_on_node(o, name, args, kwargs, loc)
    if _is_node(o) and name in NODE_METHODS and not args and not kwargs:
        return getattr(o, name)()
    if _is_node(o) and name in NODE_ATTRIBUTES:
        raise GradcalcError(f"'{name}' is an attribute, not a method: write .{name} without ()", loc)
    language_method = getattr(type(o), "language_method", None)
    if language_method is not None:
        return language_method(o, name, args, kwargs, loc)
    raise GradcalcError(f"{describe(o)} has no method '{name}'", loc)


