"""The Tensor: a NumPy array with PyTorch's autograd attributes.

Operations live in `ops/`; each module there lists the methods and operators it adds to `Tensor`
(`METHODS`), so this file holds only what a tensor *is*: data, leaf status, gradient, version counter.
"""

from __future__ import annotations

import warnings
import weakref as _weakref
from _thread import allocate_lock  # what threading.Lock is (`threading` itself is kept off the start-up path)
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import grad_mode
from .counters import Version, version_of
from .grad_mode import STAMP, state
from .hooks import register_post_accumulate_grad_hook, register_tensor_hook, retain
from .interrupts import GUARD, unsafe
from .reasons import worded

if TYPE_CHECKING:
    from .node import AccumulateGrad, Node

__all__ = ["DType", "Size", "Tensor", "Version", "is_parameter", "mark_parameter", "version_of"]

float64 = np.dtype("float64")
float32 = np.dtype("float32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")
FLOATING = (float64, float32)


_new = object.__new__
_accumulator_lock = allocate_lock()


class Size(tuple):
    """A tensor's shape: a tuple that prints as PyTorch's `torch.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


class Tensor:
    """A multi-dimensional array that records the operations made on it, for reverse-mode differentiation."""

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad",
        "grad_fn",
        "_output_nr",
        "_vc",
        "_accumulator",
        "_retains_grad",
        "_inference",
        # Set on views only, never by `_make` (an unset slot costs nothing): `_view_of` is the tensor whose
        # memory a view shows (PyTorch's `_base`), `_views` a root's weak references to its live views.
        # An in-place change through a view rewrites its base's graph (ops/inplace.py).
        "_view_of",
        "_views",
        # Set only on tensors that carry forward-AD tangents (autograd/forward_ad.py): a dict level ->
        # tangent, or a pending computation of it; unset costs nothing
        "_fw",
        "__weakref__",
    )
    # Two classes' functions this module needs but cannot import, since their modules are above it (they
    # import Tensor): each sets its own here when loaded. `_sink` is node.AccumulateGrad, a leaf's gradient
    # sink (a node saves tensors and makes them; a tensor knows its grad_fn only as an object);
    # `_tangent_repr` is forward_ad.tangent_repr, for a tensor that carries tangents (only forward_ad
    # gives a tensor any).
    _sink: type[AccumulateGrad]
    # `_legacy_new` is ops/creation.legacy_new (the legacy constructor's meaning), set by that module: the
    # operations stand on Tensor, not the other way round
    _legacy_new: Callable[[np.dtype | None, str, tuple, dict], Tensor]
    _tangent_repr: Callable[[Tensor, str], str]

    # -- construction --------------------------------------------------------------------------------
    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        """PyTorch's legacy constructor: `Tensor(2, 3)` (sizes: a tensor of that shape, of the default dtype),
        `Tensor([1, 2])` (data, converted to the default dtype), `Tensor()` (empty). Use `tensor(...)` for
        data of its own dtype."""
        return Tensor._legacy_new(None, "Tensor", args, kwargs)

    @staticmethod
    def _make(data: np.ndarray, requires_grad: bool, grad_fn: Node | None, version: Version | None = None) -> Tensor:
        """Fast constructor for operation results: `data` must already be an ndarray."""
        t = _new(Tensor)
        t._data = data
        t._requires_grad = requires_grad
        t._grad = None
        t.grad_fn = grad_fn
        t._output_nr = 0
        t._vc = version  # made on first need (see version_of): most results are never changed
        t._accumulator = None
        t._retains_grad = False
        t._inference = grad_mode.inference_seen and state.inference
        return t

    # -- data ----------------------------------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's data that does not require grad (as PyTorch's `.data`)."""
        return Tensor._make(self._data, False, None)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):  # as PyTorch: an array of anything else is no tensor's data
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied); an error when the tensor requires grad while grad mode
        is on, as in PyTorch (so a custom Function's forward, which runs with grad mode off, may call it)."""
        if self._requires_grad and state.grad_enabled:
            raise worded("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                    "instead.", "can't call numpy() on a tensor that requires grad: use "
                                    ".detach().numpy()")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype)

    # -- autograd attributes -----------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self.grad_fn is not None:
            raise worded(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                "requires_grad can only be changed on a leaf tensor; this one was computed "
                f"(grad_fn={self.grad_fn.name()}): use .detach() to get a leaf",
            )
        if flag and self._data.dtype not in FLOATING:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients "
                f"(this one is {self._data.dtype})"
            )
        if flag and self._inference and not state.inference:
            raise RuntimeError("setting requires_grad on an inference tensor outside inference_mode is not allowed")
        GUARD.changing = STAMP.origin  # a host lets the statement that changes this finish (interrupts.py)
        self._requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place on a leaf; returns self. On a computed tensor (which already requires
        grad) asking for True changes nothing, as in PyTorch; asking for False is an error."""
        if self.grad_fn is not None and requires_grad:
            return self
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors that do not require grad, and for those the user created that do."""
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Ask backward to fill `.grad` on this non-leaf tensor too."""
        if not self._requires_grad:
            raise worded("can't retain_grad on Tensor that has requires_grad=False",
                                    "can't retain_grad on a tensor that doesn't require grad")
        if self.grad_fn is None or self._retains_grad:
            return
        GUARD.changing = STAMP.origin
        self._retains_grad = True
        retain(self.grad_fn, self._output_nr, self)

    def register_hook(self, hook: Any) -> Any:
        """Run `hook(grad)` each time the gradient of this tensor is computed; a tensor it returns is used
        instead of the gradient. Returns a handle whose `.remove()` takes the hook away."""
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """On a leaf: run `hook(tensor)` after backward added into its `.grad`. Returns a removable handle."""
        return register_post_accumulate_grad_hook(self, hook)

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "reading .grad of a non-leaf tensor: backward fills .grad only on leaves, so this is None. "
                "Call retain_grad() on it before backward to keep its gradient, or read .grad of the leaf "
                "it was computed from",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad must be a tensor or None, not {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise worded(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size",
                    f"assigned grad has shape {tuple(value._data.shape)}, but the tensor has shape "
                    f"{tuple(self._data.shape)}",
                )
        origin = GUARD.changing = STAMP.origin
        self._grad = value
        if origin is not None:  # a front end keeps who set it (provenance.py)
            _provenance().grad_set(self, origin, value is None)

    @property
    def _base(self) -> Tensor | None:
        """The tensor this one is a view of (None for a tensor that owns its memory)."""
        return getattr(self, "_view_of", None)

    def _is_view(self) -> bool:
        return getattr(self, "_view_of", None) is not None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        """The in-place version counter: how many in-place changes this tensor's data has had (shared with
        the tensors that alias it: `.detach()`, views). The counter object itself is `_vc`, made lazily."""
        if self._inference:
            raise RuntimeError(
                "inference tensors (made inside `with inference_mode:`) have no version counter; "
                "read it from a .clone() made outside inference mode"
            )
        return 0 if self._vc is None else self._vc.value

    version = _version  # the language's name for it

    def is_inference(self) -> bool:
        """True for tensors made inside `inference_mode`."""
        return self._inference

    def _accumulate_node(self) -> AccumulateGrad:
        acc = self._accumulator
        if acc is None:
            # one node per leaf even when threads record with it at once: its lock guards `.grad`
            with _accumulator_lock:
                acc = self._accumulator
                if acc is None:
                    acc = self._accumulator = self._sink(self)
        return acc

    # -- shape and type ------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        return Size(self._data.shape) if dim is None else self._data.shape[dim]

    @property
    def dtype(self) -> np.dtype:
        return DType.of(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def item(self) -> float | int | bool:
        """The single value as a Python number."""
        if self._data.size != 1:
            raise worded(f"a Tensor with {self._data.size} elements cannot be converted to Scalar",
                                    f"item() needs a tensor with one element, this one has {self._data.size}")
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise worded(
                "Boolean value of Tensor with more than one value is ambiguous",
                f"the truth value of a tensor with {self._data.size} elements is ambiguous: use .any() or .all()",
            )
        return bool(self._data)

    __hash__ = object.__hash__

    def __iter__(self):  # type: ignore[no-untyped-def]
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: one UnbindBackward0 node for all the rows

    # -- printing ------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        from .printing import tensor_repr  # loaded on the first repr: off the start-up path

        name = self.grad_fn.name() if self.grad_fn is not None else None
        text = tensor_repr(self._data, requires_grad=self._requires_grad, grad_fn=name)
        if getattr(self, "_fw", None) is not None and grad_mode.forward_seen:
            text = Tensor._tangent_repr(self, text)
        return "Parameter containing:\n" + text if is_parameter(self) else text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self._data.item(), spec)
        return repr(self)




class DType:
    """A dtype that prints as PyTorch's (`torch.float64`) and compares equal to NumPy's."""

    __slots__ = ("np", "name")
    _cache: dict[np.dtype, DType] = {}

    def __init__(self, np_dtype: np.dtype) -> None:
        self.np = np.dtype(np_dtype)
        self.name = {"bool": "bool"}.get(self.np.name, self.np.name)

    @classmethod
    def of(cls, np_dtype: np.dtype) -> DType:
        d = cls._cache.get(np_dtype)
        if d is None:
            d = cls._cache[np_dtype] = DType(np_dtype)
        return d

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __str__(self) -> str:
        return repr(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.np == other.np
        try:
            return self.np == np.dtype(other)  # type: ignore[arg-type]
        except (TypeError, ValueError):  # not a dtype, nor anything NumPy reads as one (a tensor, a tuple)
            return False

    def __hash__(self) -> int:
        return hash(self.np)

    @property
    def is_floating_point(self) -> bool:
        return self.np.kind == "f"


# The tensors gradcalc.nn.Parameter made, by id, each with a weak reference that forgets it when the tensor
# dies: they print as PyTorch's parameters. A registry rather than a slot, so that every other tensor keeps
# its size (a slot more would move each tensor up a size class of the allocator).
_PARAMETERS: dict[int, Any] = {}


def mark_parameter(t: Tensor) -> None:
    """Make `t` a parameter (as `gradcalc.nn.Parameter` does)."""
    key = id(t)
    _PARAMETERS[key] = _weakref.ref(t, lambda _ref, key=key: _forget_parameter(key))


@unsafe  # a weak reference's callback: an exception raised in it would be printed and lost
def _forget_parameter(key: int) -> None:
    _PARAMETERS.pop(key, None)


def is_parameter(t: Any) -> bool:
    """Whether `t` is a tensor made by `gradcalc.nn.Parameter`."""
    ref = _PARAMETERS.get(id(t))
    return ref is not None and ref() is t


_PROVENANCE: list[Any] = []


def _provenance() -> Any:
    """provenance.py, imported when a front end that stamps origins first sets a `.grad` (it is off the start-up
    path: a program without a front end never needs it), then kept here."""
    if not _PROVENANCE:
        from . import provenance  # (here: off the start-up path, see above)

        _PROVENANCE.append(provenance)
    return _PROVENANCE[0]
