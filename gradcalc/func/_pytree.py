"""Nested containers of tensors ("pytrees", as torch.func calls them): tuples, lists and dicts of tensors
and of each other. A transform flattens its arguments to a list of leaves, works on the tensors, and
rebuilds the same structure for its results."""

from __future__ import annotations

from typing import Any

from ..autograd.tensor import Tensor

Spec = Any  # ("leaf",) | (type, [child specs]) | ("dict", keys, [child specs])


def flatten(tree: Any) -> tuple[list[Any], Spec]:
    """The leaves of `tree` in order, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> Spec:
    if isinstance(tree, (tuple, list)) and not _is_namedtuple(tree):
        return (type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        return ("dict", list(tree), [_flatten(tree[k], leaves) for k in tree])
    leaves.append(tree)
    return ("leaf",)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def unflatten(leaves: list[Any], spec: Spec) -> Any:
    """The structure `spec` with `leaves` in place of its leaves."""
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it: Any, spec: Spec) -> Any:
    if spec[0] == "leaf":
        return next(it)
    if spec[0] == "dict":
        return {k: _unflatten(it, s) for k, s in zip(spec[1], spec[2], strict=True)}
    kind, children = spec
    return kind(_unflatten(it, s) for s in children)


def tensors_of(tree: Any, what: str) -> tuple[list[Tensor], Spec]:
    """The leaves of `tree`, which must all be tensors (`what` names the argument in the error)."""
    leaves, spec = flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise TypeError(f"{what} must be a tensor or a tuple/list/dict of tensors, but it holds a "
                            f"{type(x).__name__}")
    return leaves, spec


def same_structure(a: Spec, b: Spec) -> bool:
    return a == b
