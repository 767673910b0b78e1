"""Saved values by PyTorch's names: `grad_fn._saved_self`, `_saved_other`, `_saved_result`, `_saved_exponent`...

Each node class's spec (spec.py, `saved=`) declares what it saved, kept on the class as `saved_names`: PyTorch's
name (without the `_saved_` prefix) -> how to read it, in PyTorch's pack order (the order `saved_tensors_hooks`
sees):
- `tensor(i)`: the tensor at position i of the node's `_saved` tuple (None when nothing was saved there);
  `tensor(i, number="other")` falls back to the node's number attribute, as a tensor (PyTorch wraps a
  Python number operand: `(x * 2.0).grad_fn._saved_other` is `tensor(2.)`);
- `field("attr")`: a value that is not a tensor (an exponent, dims, sizes): never freed;
- `const(v)`: a value PyTorch keeps that gradcalc's formula never needs (an alpha of 1).
- `array("attr")`: an array the node keeps in an attribute, shown as a tensor; `Spec(read, is_tensor)` for
  anything else (the losses' weights, which may be None).
`declare` (run for every node class as its spec is installed) makes them readable as `_saved_<name>`.
"""

from __future__ import annotations

from _thread import _local  # what threading.local is (`threading` itself is kept off the start-up path)
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .grad_mode import STAMP
from .hooks import watch
from .reasons import failure
from .tensor import Tensor

if TYPE_CHECKING:
    from .node import Node


# -- a node's saved values, freed, and the errors of reading them -------------------------------------------
class _Freed(tuple):
    """The marker `_saved` holds once backward released a node's saved values."""


FREED = _Freed()  # an empty tuple of its own: told apart by identity from a node that saved nothing
NOTHING = (None, None)  # what a binary node saves when its formula needs only a constant: marks it freeable


# PyTorch's texts (what code and tests match on; gradcalc's explanation follows them: reasons.worded)
PYTORCH_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)
PYTORCH_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)


def freed_message(node: Node) -> str:
    """The error for reading values a node saved after a backward freed them."""
    return (
        f"trying to backward through the graph a second time (or to read saved values after they were "
        f"freed): the values {node.name()} saved were freed by the first backward or grad(); pass "
        "retain_graph=true to the first one to keep them"
    )


def freed_error(node: Node) -> RuntimeError:
    """The error of `freed_message`, carrying the node (for a front end to explain)."""
    return failure(freed_message(node), "freed", PYTORCH_FREED, node=node)


def version_error(t: Any, node: Node, index: int, saved_version: int) -> RuntimeError:
    """The error of `version_mismatch`, carrying the tensor, the node, the saved index and both versions."""
    now = 0 if t._vc is None else t._vc.value
    kind = _KINDS.get(str(t._data.dtype), str(t._data.dtype))
    fn = getattr(t, "grad_fn", None)
    # PyTorch names the operation without "Backward0" (`output 0 of Add`; of a custom Function, its class)
    which = f", which is output {t._output_nr} of {fn.name().split('Backward')[0]}," if fn is not None else ""
    pytorch = (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{kind} [{', '.join(str(n) for n in t._data.shape)}]]{which} is at version {now}; expected "
        f"version {saved_version} instead."
    )
    return failure(version_mismatch(t, node, index, saved_version), "version", pytorch, tensor=t, node=node,
                   index=index, saved_version=saved_version, version=now)


def version_mismatch(t: Any, node: Node, index: int, saved_version: int) -> str:
    """The error for a saved tensor changed in place before backward: its shape, the node, both versions."""
    now = 0 if t._vc is None else t._vc.value
    shape = "[" + ", ".join(str(n) for n in t._data.shape) + "]"
    kind = _KINDS.get(str(t._data.dtype), str(t._data.dtype))
    return (
        f"{node.name()} needs a value it saved for backward (its saved tensor {index}, a {kind} of shape "
        f"{shape}), but that tensor was changed in place since: it is now at version {now}, and "
        f"{node.name()} saved it at version {saved_version}. Compute with a .clone() of it, or make the "
        "in-place change after backward"
    )


_KINDS = {"float64": "DoubleTensor", "float32": "FloatTensor", "int64": "LongTensor", "bool": "BoolTensor"}


class Spec:
    """How to read one saved value of a node (see the module docstring)."""

    __slots__ = ("read", "is_tensor", "index", "number")

    def __init__(self, read: Callable[[Node], Any], is_tensor: bool, index: int | None = None,
                 number: str | None = None) -> None:
        self.read = read
        self.is_tensor = is_tensor
        self.index = index  # the position in the node's `_saved` of a saved tensor
        self.number = number  # the node's attribute holding a number operand shown in its place

    def empty_when_freed(self, node: Node) -> bool:
        """Whether this tensor's slot of a freed node was empty: PyTorch reads it as None after freeing too
        (an undefined tensor is never freed), where a saved tensor, or a number operand PyTorch wraps as
        one, is an error."""
        i = self.index
        if i is None or not (getattr(node, "_empty", 0) >> i) & 1:
            return False
        return self.number is None or getattr(node, self.number, None) is None


def tensor(i: int, number: str | None = None) -> Spec:
    """The tensor saved at position `i` (or the number attribute `number`, as a tensor)."""

    def read(node: Node) -> Any:
        saved = node._saved
        if saved and i < len(saved) and saved[i] is not None:
            return node.unpack_saved(False)[i]
        if number is not None:
            value = getattr(node, number, None)
            if value is not None:
                return Tensor._make(np.asarray(value, dtype=np.float64 if type(value) is float else None),
                                    False, None)
        return None

    return Spec(read, True, i, number)


def array(attr: str) -> Spec:
    """An array the node keeps in its attribute `attr` (not in `_saved`), shown as a tensor."""

    def read(node: Node) -> Any:
        return Tensor._make(np.asarray(getattr(node, attr)), False, None)

    return Spec(read, True)


def field(attr: str, convert: Callable[[Any], Any] | None = None) -> Spec:
    """A value that is not a tensor, read from the node's attribute `attr`."""

    def read(node: Node) -> Any:
        value = getattr(node, attr)
        return convert(value) if convert is not None else value

    return Spec(read, False)


def _correction(node: Node) -> Any:
    # PyTorch's var()/std() without dim (its `unbiased` overload) keeps None for the default correction
    corr = node.correction
    if node.dims is None and corr == 1:
        return None
    return int(corr) if float(corr).is_integer() else corr


correction = Spec(_correction, False)
"""var's and std's `correction`, as PyTorch shows it."""


def maybe_tuple(value: Any) -> tuple | None:
    """dims as PyTorch shows them: None for "all dims", else a tuple."""
    return None if value is None else tuple(value)


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


def declare(cls: type) -> None:
    """Make `_saved_<name>` readable on the nodes of `cls` for each name of its own `saved_names`, and
    `_raw_saved_<name>` for a tensor. Reading a tensor backward freed is PyTorch's error. Names a parent class
    declared that this class does not are hidden (an AttributeError, and left out of `dir`).

    Each name is one property, made the first time a class declares it and kept on the root node class (Node):
    it reads the node's class's `saved_names`, so it serves every class that saves under that name (a property
    per class and name was some 430 properties and their readers made at every start-up, for 49 names)."""
    own = cls.__dict__.get("saved_names")
    if not own:
        return
    root = next(k for k in reversed(cls.__mro__) if "saved_names" in k.__dict__)
    for name, spec in own.items():
        if f"_saved_{name}" not in root.__dict__:
            setattr(root, f"_saved_{name}", property(_reader(name), doc=f"The saved value `{name}`."))
        if spec.is_tensor and f"_raw_saved_{name}" not in root.__dict__:
            setattr(root, f"_raw_saved_{name}", property(_raw_reader(name)))


def visible(node: Node, names: list[str]) -> list[str]:
    """`dir(node)` without the saved names that the node's class does not keep."""
    own = type(node).saved_names
    keep = {f"_saved_{n}" for n in own} | {f"_raw_saved_{n}" for n, s in own.items() if s.is_tensor}
    return [n for n in names if not (n.startswith(("_saved_", "_raw_saved_")) and n not in keep)]


def _absent(node: Node, attr: str) -> AttributeError:
    return AttributeError(f"'{node.name()}' object has no attribute '{attr}'")


def _reader(name: str) -> Callable[[Node], Any]:
    def read(node: Node) -> Any:
        spec = type(node).saved_names.get(name)
        if spec is None:  # a name other node classes save under (a parent, say): this one keeps none
            raise _absent(node, f"_saved_{name}")
        if spec.is_tensor and node._saved is FREED:
            if spec.empty_when_freed(node):
                return None
            raise freed_error(node)
        return spec.read(node)

    read.__name__ = f"_saved_{name}"
    return read


def _raw_reader(name: str) -> Callable[[Node], Any]:
    def read(node: Node) -> SavedTensor:
        spec = type(node).saved_names.get(name)
        if spec is None or not spec.is_tensor:
            raise _absent(node, f"_raw_saved_{name}")
        return SavedTensor(node, name)

    read.__name__ = f"_raw_saved_{name}"
    return read


def saved_mapping(node: Node) -> Mapping[str, Any]:
    """`Node.saved`: name -> value, or FREED_VALUE for a tensor backward released (None for a slot left
    empty, as PyTorch reads it)."""
    freed = node._saved is FREED
    out = {}
    for name, spec in type(node).saved_names.items():
        if freed and spec.is_tensor:
            out[name] = None if spec.empty_when_freed(node) else FREED_VALUE
        else:
            out[name] = spec.read(node)
    return MappingProxyType(out)


class SavedDetail:
    """One value a node saved, as a display (the language's `graph`) shows it: read without checks and
    without running unpack hooks, so that showing a graph never fails nor runs user code."""

    # a plain class rather than a NamedTuple: making one of those compiles code, at every start-up
    __slots__ = ("name", "value", "is_tensor", "saved_version", "version", "packed")

    def __init__(self, name: str, value: Any, is_tensor: bool, saved_version: int | None, version: int | None,
                 packed: bool = False) -> None:
        self.name = name  # PyTorch's name (`self`, `other`, `result`...), or `saved_tensors[i]` for a custom Function
        self.value = value  # the tensor as saved, a value that is not a tensor, None, or FREED_VALUE once freed
        self.is_tensor = is_tensor
        self.saved_version = saved_version  # the tensor's version when it was saved (None: not a tensor, freed, packed)
        self.version = version  # the tensor's version now
        self.packed = packed  # kept by saved_tensors_hooks: `value` is None (reading it runs the unpack hook)

    def __repr__(self) -> str:
        return f"SavedDetail({self.name!r}, {self.value!r}, saved_version={self.saved_version}, version={self.version})"


def details(node: Node) -> list[SavedDetail]:
    """What `node` saved, by PyTorch's names, with the versions at saving and now (see SavedDetail)."""
    saved = node._saved
    freed = saved is FREED
    specs = type(node).saved_names
    if not specs:  # a custom Function's node: its saved tensors by position (how many is lost once freed)
        if freed:
            return [SavedDetail("saved_tensors", FREED_VALUE, True, None, None)]
        specs = {f"saved_tensors[{i}]": tensor(i) for i in range(len(saved) if saved else 0)}
    out = []
    for name, spec in specs.items():
        if not spec.is_tensor:
            out.append(SavedDetail(name, spec.read(node), False, None, None))
            continue
        if freed:
            out.append(SavedDetail(name, None if spec.empty_when_freed(node) else FREED_VALUE, True, None, None))
            continue
        i = spec.index
        raw = saved[i] if saved and i is not None and i < len(saved) else None
        if raw is None:  # nothing saved there: a number operand, a constant, or None
            out.append(SavedDetail(name, spec.read(node), True, None, None))
            continue
        versions = node._versions
        then = (versions[i] if versions is not None else None) or 0
        now = 0 if raw._vc is None else raw._vc.value
        if type(raw) is Packed:
            out.append(SavedDetail(name, None, True, then, now, packed=True))
            continue
        value = raw if type(raw) is Tensor else raw.unpack(node)
        out.append(SavedDetail(name, value, True, then, now))
    return out


# -- saved_tensors_hooks -------------------------------------------------------------------------------------
_hooks = _local()  # the thread's stack of (pack_hook, unpack_hook) pairs


def active_pair() -> tuple[Callable, Callable, bool] | None:
    """The innermost (pack_hook, unpack_hook) of this thread, or None."""
    stack = getattr(_hooks, "stack", None)
    return stack[-1] if stack else None


def push_pair(pack_hook: Callable, unpack_hook: Callable, checked: bool = True) -> None:
    """Enter a saved_tensors_hooks block; `checked`: whether an in-place change of a saved tensor is still
    an error at backward (not under allow_mutation_on_saved_tensors, whose pack hook keeps a copy)."""
    STAMP.pack = pack_saved  # nodes made from now on are packed as they are stamped (grad_mode.STAMP)
    STAMP.on = STAMP.packing = True
    STAMP.simple = False
    stack = getattr(_hooks, "stack", None)
    if stack is None:
        stack = _hooks.stack = []
    stack.append((pack_hook, unpack_hook, checked))


def pop_pair() -> None:
    _hooks.stack.pop()


class Packed:
    """A saved tensor as a pack hook returned it; `unpack(node)` runs the unpack hook (each time, as
    PyTorch). It carries the original's version counter, so an in-place change is still caught."""

    __slots__ = ("packed", "unpack_hook", "_vc", "_inference", "output")

    def __init__(self, packed: Any, unpack_hook: Callable, t: Any, output: bool, checked: bool) -> None:
        self.packed, self.unpack_hook, self.output = packed, unpack_hook, output
        self._vc = t._vc if checked else None
        self._inference = t._inference

    def unpack(self, node: Node) -> Any:
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError(
                f"the unpack hook of saved_tensors_hooks returned a {type(t).__name__}; it must return a tensor"
            )
        if self.output:  # a node's own output: backward through it must reach the node again
            return Tensor._make(t._data, True, node, self._vc)
        return t

    @property
    def _data(self) -> Any:  # the raw path of unpack_saved reads arrays
        return self.unpack(None)._data  # type: ignore[arg-type]


def pack_saved(node: Node) -> None:
    """Replace what `node` saved by what the thread's pack hook makes of it, in PyTorch's pack order."""
    pair = active_pair()
    saved = node._saved
    if pair is None or not saved or saved is NOTHING:
        return
    pack, unpack, checked = pair
    out = list(saved)
    for i in _order(node, len(saved)):
        t = out[i]
        if t is None or type(t) is Packed:
            continue
        output = type(t) is not Tensor  # a SavedOutput (or a custom Function's saved output)
        tensor = t.unpack(node) if output else t
        out[i] = Packed(pack(tensor), unpack, t, output, checked)
        if not checked and node._versions is not None:
            node._versions[i] = None
    node._saved = tuple(out)
    watch(node)  # unpack hooks are user code: backward through packed values takes the undoing walk


def _order(node: Node, n: int) -> list[int]:
    """The positions of `node`'s saved tensors in PyTorch's pack (and unpack) order."""
    order = [s.index for s in type(node).saved_names.values() if s.index is not None and s.index < n]
    return order + [i for i in range(n) if i not in order]


def unpack_all(node: Node, saved: tuple) -> tuple:
    """`saved` with every packed value unpacked (in PyTorch's order); each unpacked tensor keeps the version
    counter of the tensor that was packed, so an in-place change since is still caught."""
    if not any(type(t) is Packed for t in saved):
        return saved
    out = list(saved)
    for i in _order(node, len(saved)):
        p = out[i]
        if type(p) is Packed:
            t = p.unpack(node)
            if t._vc is not p._vc:
                nr = t._output_nr
                t = Tensor._make(t._data, t._requires_grad, t.grad_fn, p._vc)
                t._output_nr = nr
            out[i] = t
    return tuple(out)


def is_packed(node: Node) -> bool:
    """Whether a value `node` saved was packed by saved_tensors_hooks (its unpack hook runs at backward)."""
    saved = node._saved
    return bool(saved) and any(type(t) is Packed for t in saved)
