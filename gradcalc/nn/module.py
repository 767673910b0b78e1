"""`Module`: the base class of layers and networks, PyTorch's `nn.Module` reduced to what gradcalc runs.

A module owns parameters, buffers and submodules, registered by assigning them to attributes (kept in
insertion order in `_parameters`, `_buffers`, `_modules`, as PyTorch keeps them), so that `parameters()`,
`state_dict()` and `repr()` list them in the order they were defined. Calling a module runs `forward`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ..autograd.grad_mode import STAMP, no_grad
from ..autograd.interrupts import GUARD
from ..autograd.meta import is_meta, meta_array
from ..autograd.provenance import worded
from ..autograd.tensor import DType, Tensor
from .parameter import Parameter


class _IncompatibleKeys(NamedTuple):
    """What `load_state_dict` did not match: keys the module has that the dict lacks, and the reverse."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (PyTorch's helper for nested reprs)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


class Module:
    """The base class of all layers and networks: subclass it, assign layers and parameters to attributes
    in `__init__`, and write `forward`."""

    training: bool
    _parameters: dict[str, Tensor | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", {})
        setter(self, "_buffers", {})
        setter(self, "_non_persistent_buffers_set", set())
        setter(self, "_modules", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module (every subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} has no forward method: define forward(self, ...) in it")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- registration --------------------------------------------------------------------------------
    def _ready(self, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {what} before Module.__init__() is called: call super().__init__() first "
                f"in {type(self).__name__}.__init__"
            )

    def _check_name(self, name: Any, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"a {what} name must be a string, not {type(name).__name__}")
        if not name:
            raise KeyError(f'a {what} name cannot be empty ""')
        if "." in name:
            raise KeyError(f'a {what} name cannot contain ".", got {name!r}')

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Add a parameter (or None, a declared but absent one) under `name`."""
        self._ready("parameters")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute {name!r} already exists: choose another name for the parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot register a {type(param).__name__} as parameter {name!r}: wrap it in nn.Parameter(...)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (saved in `state_dict` when `persistent`)."""
        self._ready("buffers")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a submodule under `name`."""
        self._ready("modules")
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module: only modules (or None) can be added")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute {name!r} already exists: choose another name for the module")
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            found = d.get(store)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _forget(self, name: str, *stores: str) -> None:
        self.__dict__.pop(name, None)
        for store in stores:
            self.__dict__[store].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            self._ready("parameters")
            self._forget(name, "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as parameter {name!r}: assign nn.Parameter(...) or None"
                )
            params[name] = None
        elif isinstance(value, Module):
            self._ready("modules")
            self._forget(name, "_parameters", "_buffers")
            self._modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as submodule {name!r}: assign a Module or None"
                )
            d["_modules"][name] = None
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} as buffer {name!r}: assign a tensor or None")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # -- walking the tree ---------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
                      ) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every module below it, depth first; this one is named ''."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every module below it."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the immediate submodules."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The immediate submodules."""
        for _, module in self.named_children():
            yield module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` (`"0"`, `"encoder.layer"`); "" is this module."""
        module: Module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Tensor:
        """The parameter at dotted path `target` (`"0.weight"`)."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._parameters:
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return module._parameters[name]  # type: ignore[return-value]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return module._buffers[name]  # type: ignore[return-value]

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool
                       ) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
                         ) -> Iterator[tuple[str, Tensor]]:
        """(name, parameter) for every parameter, named as in `state_dict` (`0.weight`); each once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every parameter of this module and (with `recurse`) of its submodules, each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        """(name, buffer) for every buffer."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module and (with `recurse`) of its submodules."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every submodule (children first) and then on this module; returns this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (True) or evaluation mode (False) here and below; returns this module."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean (True or False), not {mode!r}")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (`train(False)`); returns this module."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set `requires_grad` of every parameter (False freezes the module); returns this module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (the default), or to zeros."""
        GUARD.changing = STAMP.origin  # all or nothing under an interrupt (autograd/interrupts.py)
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                with no_grad():
                    g.zero_()

    # -- dtype and device --------------------------------------------------------------------------
    def _tensors(self) -> list[Tensor]:
        return list(self.parameters()) + list(self.buffers())

    def _cast(self, dtype: np.dtype) -> Module:
        """Floating parameters and buffers (and their gradients) converted to `dtype` in place: the same
        tensor objects, with new data (as PyTorch's `param.data = ...`)."""
        for t in self._tensors():
            d = t._data
            if d.dtype.kind == "f" and d.dtype != dtype:
                t._data = meta_array(d.shape, dtype) if is_meta(d) else d.astype(dtype)
                if t._grad is not None:
                    g = t._grad._data
                    t._grad = Tensor._make(meta_array(g.shape, dtype) if is_meta(g) else g.astype(dtype), False,
                                           None)
        return self

    def _to_meta(self) -> None:
        for t in self._tensors():
            if not is_meta(t._data):
                t._data = meta_array(t._data.shape, t._data.dtype)
                if t._grad is not None:
                    t._grad = Tensor._make(meta_array(t._grad._data.shape, t._grad._data.dtype), False, None)

    def double(self) -> Module:
        """Convert floating parameters and buffers to float64 in place; returns this module."""
        return self._cast(np.dtype(np.float64))

    def float(self) -> Module:
        """Convert floating parameters and buffers to float32 in place; returns this module."""
        return self._cast(np.dtype(np.float32))

    def half(self) -> Module:
        """PyTorch's conversion to float16, which gradcalc does not compute in (an error)."""
        raise NotImplementedError("half(): gradcalc computes in float32 and float64 only, not float16; use "
                                  ".float() or .double()")

    def bfloat16(self) -> Module:
        """PyTorch's conversion to bfloat16, which gradcalc does not compute in (an error)."""
        raise NotImplementedError("bfloat16(): gradcalc computes in float32 and float64 only, not bfloat16; use "
                                  ".float() or .double()")

    def type(self, dst_type: Any) -> Module:
        """Convert the parameters and buffers to `dst_type` (a floating dtype) in place; returns this module."""
        return self._cast(_floating_dtype(dst_type))

    def cpu(self) -> Module:
        """The module itself: gradcalc computes on the CPU (returns this module)."""
        return self.to("cpu")

    def to(self, *args: Any, device: Any = None, dtype: Any = None, non_blocking: bool = False,
           memory_format: Any = None, **others: Any) -> Module:
        """Move and/or convert the parameters and buffers in place, as PyTorch's overloads allow:
        `to("cpu")`, `to(device="cpu")`, `to(float64)`, `to(dtype=float64)`, `to("cpu", float64)`, `to(t)` (t's
        dtype and device); `to("meta")` makes them meta tensors (a shape, no data), for `func.functional_call`
        to replace. Returns this module."""
        where, dtype = _parse_to(args, device, dtype, others)
        if dtype is not None:
            self._cast(_floating_dtype(dtype))
        if where is not None:
            if where.type == "meta":
                self._to_meta()
            elif any(is_meta(t._data) for t in self._tensors()):
                raise NotImplementedError(
                    "Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of "
                    "torch.nn.Module.to() when moving module from meta to a different device."
                )
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give every parameter and buffer new memory on `device` (the CPU), uninitialised in PyTorch (zeros
        here): how a module made of meta tensors gets real ones. Returns this module."""
        from ..autograd.ops.device import check_device

        check_device(device)
        for t in self._tensors():
            if is_meta(t._data):
                t._data = np.zeros(t._data.shape, dtype=t._data.dtype)
        return self

    # -- state ---------------------------------------------------------------------------------------
    def state_dict(self, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Every parameter and persistent buffer by name (`0.weight`, ...), in order; detached unless
        `keep_vars`."""
        out: OrderedDict = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(out, prefix + name + ".", keep_vars)
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy values from `state_dict` into the parameters and buffers of the same names. With `strict`,
        a missing or unexpected key is an error; shapes must agree."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"load_state_dict: expected a dict of tensors, not {type(state_dict).__name__}")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:  # PyTorch's order: missing keys, unexpected keys, then the per-key errors
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        todo = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
            elif value._data.shape != target._data.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, the "
                    f"shape in current model is {target.shape}."
                )
            else:
                todo.append((target, value))
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        with no_grad():
            for target, value in todo:
                target.copy_(value)
        return _IncompatibleKeys(missing, unexpected)

    # -- printing --------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module's own settings, shown inside its repr's parentheses (subclasses override it)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _floating_dtype(dtype: Any) -> np.dtype:
    from ..autograd.ops.creation import np_dtype

    try:
        target = np_dtype(dtype)
    except (TypeError, ValueError):  # not a dtype at all (NumPy says which way it failed)
        target = None
    if target is None or target.kind != "f":
        shown = target.name if target is not None else "that"
        raise worded(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}",
                     f"a module's parameters take a floating dtype (float32 or float64), not {shown}", TypeError)
    if target not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise NotImplementedError(f"gradcalc computes in float32 and float64 only, not {target.name}")
    return target


def _parse_to(args: tuple, where: Any, dtype: Any, others: dict) -> tuple[Any, Any]:
    """(device or None, dtype or None) from the arguments of `Module.to`, read as PyTorch's `_parse_to` does."""
    from ..autograd.ops.device import _device_of, device

    if len(args) > 4 or set(others) - {"copy"}:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in others.items()])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of: "
                        "to(device=None, dtype=None, non_blocking=False), to(dtype, non_blocking=False), "
                        "to(tensor, non_blocking=False)")
    for i, a in enumerate(args):
        if isinstance(a, bool) or a is None:
            continue  # non_blocking, copy: nothing to do on the CPU
        if isinstance(a, Tensor):
            where, dtype = _device_of(a), a.dtype
        elif isinstance(a, DType) or (i > 0 and not isinstance(a, (str, device))):
            dtype = a
        else:
            where = a
    return (None if where is None else device(where)), dtype
