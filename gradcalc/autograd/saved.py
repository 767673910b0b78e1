"""Saved values by PyTorch's names: `grad_fn._saved_self`, `_saved_other`, `_saved_result`, `_saved_exponent`...

Each node class declares what it saved in one class attribute, `saved_names`: PyTorch's name (without the
`_saved_` prefix) -> how to read it, in PyTorch's pack order (the order `saved_tensors_hooks` sees):
- `tensor(i)`: the tensor at position i of the node's `_saved` tuple (None when nothing was saved there);
  `tensor(i, number="other")` falls back to the node's number attribute, as a tensor (PyTorch wraps a
  Python number operand: `(x * 2.0).grad_fn._saved_other` is `tensor(2.)`);
- `field("attr")`: a value that is not a tensor (an exponent, dims, sizes): never freed;
- `const(v)`: a value PyTorch keeps that gradcalc's formula never needs (an alpha of 1).
`Node.__getattr__` (only reached when ordinary lookup fails: it costs the hot path nothing) reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .node import Node


class Spec:
    """How to read one saved value of a node (see the module docstring)."""

    __slots__ = ("read", "is_tensor")

    def __init__(self, read: Callable[[Node], Any], is_tensor: bool) -> None:
        self.read = read
        self.is_tensor = is_tensor


def tensor(i: int, number: str | None = None) -> Spec:
    """The tensor saved at position `i` (or the number attribute `number`, as a tensor)."""

    def read(node: Node) -> Any:
        saved = node._saved
        if saved and i < len(saved) and saved[i] is not None:
            return node.unpack_saved(False)[i]
        if number is not None:
            value = getattr(node, number, None)
            if value is not None:
                from .tensor import Tensor

                return Tensor._make(np.asarray(value, dtype=np.float64 if type(value) is float else None),
                                    False, None)
        return None

    return Spec(read, True)


def field(attr: str, convert: Callable[[Any], Any] | None = None) -> Spec:
    """A value that is not a tensor, read from the node's attribute `attr`."""

    def read(node: Node) -> Any:
        value = getattr(node, attr)
        return convert(value) if convert is not None else value

    return Spec(read, False)


def const(value: Any) -> Spec:
    """A value PyTorch saves that is the same for every node of the class."""
    return Spec(lambda node: value, False)


def numel(shape: tuple[int, ...]) -> int:
    """The number of elements of a shape."""
    n = 1
    for d in shape:
        n *= d
    return n


class _FreedValue:
    """What `Node.saved` shows for a tensor that backward freed."""

    def __repr__(self) -> str:
        return "<freed>"


FREED_VALUE = _FreedValue()


class SavedTensor:
    """`grad_fn._raw_saved_<name>`: a handle on one saved tensor (PyTorch's `torch._C._autograd.SavedTensor`)."""

    __slots__ = ("node", "name")

    def __init__(self, node: Node, name: str) -> None:
        self.node, self.name = node, name

    def register_hooks(self, pack_hook: Any, unpack_hook: Any) -> None:
        raise NotImplementedError(
            "register_hooks on one saved tensor is not supported by gradcalc; use "
            "autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook) around the forward instead"
        )

    def __repr__(self) -> str:
        return f"<SavedTensor {self.name} of {self.node.name()}>"


def lookup(node: Node, attr: str) -> Any:
    """`node._saved_<name>` or `node._raw_saved_<name>`; AttributeError for any other name."""
    names: Mapping[str, Spec] = type(node).saved_names
    if attr.startswith("_saved_"):
        spec = names.get(attr[7:])
        if spec is not None:
            if spec.is_tensor and node._saved is _freed():
                from .node import freed_message

                raise RuntimeError(freed_message(node))
            return spec.read(node)
    elif attr.startswith("_raw_saved_"):
        spec = names.get(attr[11:])
        if spec is not None and spec.is_tensor:
            return SavedTensor(node, attr[11:])
    raise AttributeError(f"'{node.name()}' object has no attribute '{attr}'")


def saved_mapping(node: Node) -> Mapping[str, Any]:
    """`Node.saved`: name -> value, or FREED_VALUE for a tensor backward released."""
    freed = node._saved is _freed()
    out = {}
    for name, spec in type(node).saved_names.items():
        out[name] = FREED_VALUE if freed and spec.is_tensor else spec.read(node)
    return MappingProxyType(out)


def saved_dir(node: Node) -> list[str]:
    """The `_saved_*` and `_raw_saved_*` names, for `dir(node)`."""
    names = type(node).saved_names
    return [f"_saved_{n}" for n in names] + [f"_raw_saved_{n}" for n, s in names.items() if s.is_tensor]


def _freed() -> Any:
    from .node import FREED

    return FREED
