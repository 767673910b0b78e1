"""`Optimizer`: the base of gradcalc's optimizers, with PyTorch's parameter groups, per-parameter state,
`zero_grad`, `step(closure)` and `state_dict`/`load_state_dict`.

Steps run under no_grad and change the parameters in place (their version counters go up, as PyTorch's
in-place updates make them), with PyTorch's single-tensor ("for-loop") arithmetic, operation for
operation, on the parameters' arrays.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.interrupts import GUARD
from ..autograd.node import STAMP
from ..autograd.tensor import Tensor, version_of


class _RequiredParameter:
    """The default of an option every parameter group must give (PyTorch's `required`)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def bump(t: Tensor) -> None:
    """Record one in-place change of `t` (its version counter goes up, as each in-place op's does)."""
    version_of(t).value += 1


def zeros_state(p: Tensor) -> Tensor:
    """A state buffer of zeros shaped and typed as the parameter `p` (a moving average, a momentum buffer)."""
    return Tensor._make(np.zeros_like(p._data), False, None)


def step_tensor() -> Tensor:
    """A parameter's step count, a 0-d tensor as PyTorch keeps it (float64 under a float64 default, else
    float32: PyTorch's `_get_scalar_dtype`)."""
    from ..autograd.defaults import FLOAT64, default_float

    return Tensor._make(np.zeros((), dtype=FLOAT64 if default_float() == FLOAT64 else np.float32), False, None)


def fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c rounded once, as the fused multiply-add PyTorch's CPU kernels compute `c.add_(a, alpha=b)`
    with (NumPy rounds the product and the sum apart). float32: exact in float64, rounded once more; float64:
    Dekker's product and Knuth's sum recover both roundings' errors."""
    c = np.asarray(c)
    if c.dtype == np.float32:  # (a number is the kernel's float32 scalar first)
        b = np.asarray(b, np.float32).astype(np.float64)
        return (np.asarray(a, np.float64) * b + c.astype(np.float64)).astype(np.float32)
    a, b = np.asarray(a, np.float64), np.float64(b) if np.ndim(b) == 0 else np.asarray(b, np.float64)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    e = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)
    return s + (t + e)


def lerp_into(m: np.ndarray, end: np.ndarray, weight: float) -> None:
    """m ← lerp(m, end, weight) in place, as PyTorch's lerp computes it: from whichever end is nearer, fused
    (its vectorized kernel: fma(weight, end - m, m), or fma(weight - 1, end - m, end), in m's dtype)."""
    w = m.dtype.type(weight)
    if abs(w) < 0.5:
        m[...] = fma(end - m, w, m)
    else:
        m[...] = fma(end - m, w - m.dtype.type(1), end)


def scalar(value: Any, name: str) -> float:
    """An option as a Python number (a 1-element tensor is read once, as PyTorch's `_to_scalar`)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{name} given as a tensor must have 1 element, not {value.numel()}")
        return float(value.item())
    return value


class Optimizer:
    """The base class of optimizers: holds `param_groups` (dicts of options with their `params`) and
    `state` (per parameter); subclasses write `step`."""

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params given to the optimizer should be an iterable of tensors or dicts, but got a tensor: "
                "pass a list, e.g. [t], or net.parameters()"
            )
        if defaults.get("differentiable"):
            raise NotImplementedError("differentiable=True is not supported by gradcalc's optimizers; leave it False")
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list: pass the tensors to optimize (net.parameters())")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the others taken from the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, not {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters must be in an ordered collection (a set's order changes between runs): "
                "use a list"
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with names, or all without: some names are missing")
            param_group["param_names"] = names
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize tensors, but one of the params is a {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError(
                    "can't optimize a non-leaf Tensor: an optimizer updates leaves in place; optimize the "
                    "leaf it was computed from, or a .detach().requires_grad_() copy"
                )
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error",
                UserWarning,
                stacklevel=3,
            )
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized tensor: to None (the default), or to zeros."""
        GUARD.changing = STAMP.origin  # all or nothing under an interrupt (autograd/interrupts.py)
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                with no_grad():
                    g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One optimization step; `closure` (re-evaluating the loss, with grad mode on) is called first and
        its result returned."""
        self._opt_called = True  # (for the learning-rate schedules' check of the order of steps)
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        GUARD.changing = STAMP.origin  # every parameter or none under an interrupt (autograd/interrupts.py)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None:
                        self._update(p, p._grad._data, group, self.state[p])
        return loss

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: per-parameter state}, 'param_groups': [options with 'params' as indices]}."""
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load what `state_dict` returned (of an optimizer over the same parameters, in the same groups)."""
        groups = self.param_groups
        saved = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        ids = dict(zip(chain.from_iterable(s["params"] for s in saved),
                       chain.from_iterable(g["params"] for g in groups), strict=True))

        def cast(param: Tensor, value: Any, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                if key != "step" and param._data.dtype.kind == "f" and value._data.dtype != param._data.dtype:
                    return Tensor._make(value._data.astype(param._data.dtype), False, None)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)  # type: ignore[call-arg]
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in ids:
                state[ids[k]] = cast(ids[k], v)
            else:
                state[k] = v
        for group, new in zip(groups, saved, strict=True):
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved})
