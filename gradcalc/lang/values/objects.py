"""Modules and optimizers as values of the language, each with a declared public surface.

A module or an optimizer is the engine's own object, so `net(x)`, `Adam(net.parameters())` and `opt.step()`
run at the engine's speed; but the language reaches only what is declared here, whatever Python would allow:

- a module: its parameters, buffers and submodules by name (`lin.weight`, `net[0]`), the settings its
  constructor took (`lin.in_features`, `act.inplace`: the constructor's parameter names), `training`, and the
  methods in `MODULE_METHODS`; a module is called on tensors (`net(x)`);
- an optimizer: `param_groups`, its options by name (`opt.lr`, `opt.betas`, ...; `lr` may also be set), and
  the methods in `OPTIMIZER_METHODS`;
- a learning-rate schedule (`StepLR(opt, 10)`): `SCHEDULER_ATTRIBUTES`, the settings its constructor took
  (`step_size`, `gamma`), and `SCHEDULER_METHODS`;
- a random generator (`Generator()`): `GENERATOR_METHODS` (`g.manual_seed(0)`), and `device`.

Methods are called through `Checked` signatures (nn.py), so a wrong call names the method and what it takes;
iterators (`net.parameters()`) come back as lists. `surfaces.surface_of(o)` finds the surface of any value
that is not a tensor or a graph node, once this module has registered its finder: it loads (and with it the
engine's nn and optim packages) when a program first calls one of them (`language_callable`, below).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
from collections import Counter
from collections.abc import Callable, Iterator, MappingView, Sequence
from typing import Any, Generic, TypeVar

import gradcalc
from gradcalc import Generator, Tensor, nn, optim
from gradcalc.optim.lr_scheduler import LRScheduler

from ..errors import GradcalcError
from .convert import as_tensor, describe
from .failures import error_from
from .nn import HIDDEN, Checked, WrongArgument, _one_number, _whole, shown
from .spaces import NN_BUILTINS
from .surfaces import FINDERS, OBJECT_CALLS

MODULE_METHODS = (
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "zero_grad", "train", "eval", "requires_grad_", "state_dict", "load_state_dict", "forward",
    "double", "float", "to", "cpu", "append", "reset_parameters", "apply", "register_buffer",
    "extend", "insert", "pop", "keys", "values", "items",  # the containers' (ModuleList, ModuleDict...)
)
OPTIMIZER_METHODS = ("step", "zero_grad", "state_dict", "load_state_dict")
SCHEDULER_METHODS = ("step", "get_last_lr", "state_dict", "load_state_dict")
SCHEDULER_ATTRIBUTES = ("last_epoch", "base_lrs", "optimizer")
GENERATOR_METHODS = ("manual_seed", "seed", "initial_seed", "get_state", "set_state")
# A parameter group's entries that are not options a user reads (the tensors; how PyTorch runs the update).
NOT_OPTIONS = frozenset({"params", "param_names", "foreach", "capturable", "differentiable", "fused"})
SETTABLE_OPTIONS = ("lr",)


def article(name: str) -> str:
    """'a' or 'an' before a class name, read as it is said: an Adam, an SGD, an MSELoss, a Linear, a GELU."""
    acronym = len(name) > 1 and not name[1].islower()
    vowel = "AEIOU" + ("FHLMNRSX" if acronym else "")
    return "an" if name[0] in vowel else "a"


def one_line(o: object) -> str:
    text = repr(o)
    return text if "\n" not in text else f"{type(o).__name__}(...)"


def listed(result: object) -> object:
    """What a method returns, as a value of the language: an iterator (or a dict's keys, values, items) as a
    list."""
    return list(result) if isinstance(result, (Iterator, MappingView)) else result


@functools.cache
def _method(cls: type[object], name: str) -> Checked:
    return Checked(name, getattr(cls, name), method=True, prefix=f"{cls.__name__}.")


@functools.cache
def _settings(cls: type[object]) -> tuple[str, ...]:
    """The names of the constructor's parameters (`in_features`, `inplace`): a module's settings."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.name not in HIDDEN and p.kind is p.POSITIONAL_OR_KEYWORD)


O = TypeVar("O")  # the engine class whose objects a surface shows


class Surface(Generic[O]):
    """What the language may do with one kind of engine object."""

    kind = ""

    def owns(self, o: O) -> bool:
        """Whether `o` is a value of this kind."""
        raise NotImplementedError

    def methods(self, o: O) -> tuple[str, ...]:
        """The declared methods `o` has."""
        raise NotImplementedError

    def readable(self, o: O) -> list[str]:
        """The attributes of `o` that may be read (methods aside)."""
        raise NotImplementedError

    def attribute(self, o: O, name: str) -> object:
        """`o.name`: a declared attribute, or a method as a value."""
        raise NotImplementedError

    def call(self, o: O, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        """Run declared method `name` of `o`."""
        raise NotImplementedError

    def assign(self, o: O, name: str, value: object) -> None:
        """`o.name = value`, where PyTorch allows it; an error in the language's words elsewhere."""
        raise NotImplementedError

    def summary(self, o: O) -> str:
        """What `:vars` shows of `o`."""
        raise NotImplementedError

    def show(self, o: O) -> str:
        """How `o` prints: PyTorch's repr (a module's layers, an optimizer's groups), unless the kind says."""
        return repr(o)

    # shared -----------------------------------------------------------------------------------------
    def describe(self, o: O) -> str:
        name = type(o).__name__
        return f"{article(name)} {name} {self.kind}"

    def names(self, o: O) -> list[str]:
        """Every attribute and method (for completion)."""
        return sorted(set(self.readable(o)) | set(self.methods(o)))

    def missing(self, o: O, name: str, what: str = "attribute") -> GradcalcError:
        close = difflib.get_close_matches(name, self.names(o), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return GradcalcError(f"{self.describe(o)} has no {what} '{name}'{hint}")

    def method(self, o: O, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        """`o.name(...)`: a declared method, its arguments checked; an iterator comes back as a list."""
        if name not in self.methods(o):
            if name in self.readable(o):
                raise GradcalcError(f"'{name}' is an attribute, not a method: write .{name} without ()")
            raise self.missing(o, name, "method")
        return self.call(o, name, args, kwargs)

    def checked_call(self, o: O, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        checked = _method(type(o), name)
        try:
            return listed(checked.call_on(o, args, kwargs))
        except GradcalcError:
            raise
        except Exception as exc:
            raise error_from(exc, None) from None


class BoundObjectMethod(Generic[O]):
    """`net.parameters` without the call: a method of a module or optimizer as a value."""

    __slots__ = ("obj", "name", "surface")

    def __init__(self, obj: O, name: str, surface: Surface[O]) -> None:
        self.obj, self.name, self.surface = obj, name, surface

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.surface.call(self.obj, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"<method {self.name} of {self.surface.describe(self.obj)}>"


# ---------------------------------------------------------------------------------------------------
# Modules


class ModuleSurface(Surface[nn.Module]):
    kind = "module"

    def owns(self, o: nn.Module) -> bool:
        return isinstance(o, nn.Module)

    def methods(self, o: nn.Module) -> tuple[str, ...]:
        cls = type(o)
        return tuple(n for n in MODULE_METHODS if callable(getattr(cls, n, None)))

    @staticmethod
    def stores(o: nn.Module) -> tuple[dict[str, Tensor | None], dict[str, Tensor | None], dict[str, nn.Module | None]]:
        # the engine's registries, read here only: the language never reaches them by name
        d = vars(o)
        return d["_parameters"], d["_buffers"], d["_modules"]

    def settings(self, o: nn.Module) -> list[str]:
        d = vars(o)
        return [n for n in _settings(type(o)) if n in d]

    def readable(self, o: nn.Module) -> list[str]:
        names = [n for store in self.stores(o) for n in store if n.isidentifier()]
        return names + self.settings(o) + ["training"]

    def attribute(self, o: nn.Module, name: str) -> object:
        for store in self.stores(o):
            if name in store:
                return store[name]
        if name == "training" or name in self.settings(o):
            return vars(o)[name]
        if name in self.methods(o):
            return BoundObjectMethod(o, name, self)
        raise self.missing(o, name)

    def method(self, o: nn.Module, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        submodule = self.stores(o)[2].get(name)
        if submodule is not None and name not in self.methods(o):
            return call_module(submodule, args, kwargs)  # net.head(x), as PyTorch's self.head(x)
        return super().method(o, name, args, kwargs)

    def call(self, o: nn.Module, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        if name == "forward":
            return call_module(o, args, kwargs)
        return self.checked_call(o, name, args, kwargs)

    def assign(self, o: nn.Module, name: str, value: object) -> None:
        params, buffers, modules = self.stores(o)
        where = f"{describe(o)}'s {name}"
        if name in params:
            if value is not None and not isinstance(value, nn.Parameter):
                raise GradcalcError(
                    f"{where} is a parameter: assign Parameter(t) or none, not {shown(value)} (or change its "
                    f"values in place, under `with no_grad:`, with .{name}.copy_(t))"
                )
        elif name in modules:
            if value is not None and not isinstance(value, nn.Module):
                raise GradcalcError(f"{where} is a submodule: assign a module or none, not {shown(value)}")
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise GradcalcError(f"{where} is a buffer: assign a tensor or none, not {shown(value)}")
        elif name == "training":
            raise GradcalcError("set training mode with .train() and evaluation mode with .eval()")
        elif name in self.settings(o):
            raise GradcalcError(f"{where} is fixed when the {type(o).__name__} is made: make a new one")
        elif name in self.methods(o):
            raise GradcalcError(f"can't assign to .{name}: it is a method of {describe(o)}")
        elif not isinstance(value, nn.Parameter) and not isinstance(value, nn.Module):
            raise GradcalcError(
                f"{describe(o)} has no attribute '{name}'; a new one must be a parameter (Parameter(t)) or a "
                f"module, which it then registers, not {shown(value)}"
            )
        try:
            setattr(o, name, value)
        except Exception as exc:
            raise error_from(exc, None) from None

    def assign_item(self, o: nn.Module, index: object, value: object) -> None:
        """`net[i] = module` (a Sequential's layers, as PyTorch's __setitem__)."""
        if not isinstance(o, nn.Sequential):
            raise GradcalcError(f"can't assign into {describe(o)} by index")
        try:
            i = _whole(index)
        except WrongArgument:
            raise GradcalcError(f"a Sequential's index must be a whole number, not {shown(index)}") from None
        if not -len(o) <= i < len(o):
            raise GradcalcError(f"index {i} is out of range for a Sequential of {len(o)} modules")
        if not isinstance(value, nn.Module):
            raise GradcalcError(f"a Sequential holds modules: assign a module, not {shown(value)}")
        o[i] = value

    def summary(self, o: nn.Module) -> str:
        n = sum(p.numel() for p in o.parameters())
        return f"{type(o).__name__}  {n:,} parameter{'s' * (n != 1)}"


@functools.cache
def _forward(cls: type[nn.Module]) -> Checked:
    checked = Checked(cls.__name__, cls.forward, method=True)
    for name, (kind, optional) in checked.kinds.items():
        if kind == "any":  # Sequential's input: a module of the language takes tensors
            checked.kinds[name] = ("tensor", optional)
    params = ", ".join(checked.kinds)
    checked.text = f"{cls.__name__}(...)({params})"
    return checked


def call_module(m: nn.Module, args: Sequence[object], kwargs: dict[str, object]) -> object:
    """`net(x)`: a module called on its inputs (numbers and list literals become tensors)."""
    args = [as_tensor(a) for a in args]
    kwargs = {k: as_tensor(v) for k, v in kwargs.items()}
    return _call(m, args, kwargs, "")


def _call(m: nn.Module, args: list[Tensor], kwargs: dict[str, Tensor], at: str) -> object:
    checked = _forward(type(m))
    try:
        _, values = checked.bind(args, kwargs)
        if type(m) is nn.Sequential:
            x = values["input"]
            for i, layer in enumerate(m):
                x = _call(layer, [x], {}, f"{at}[{i}]")
            return x
        if type(m) is nn.Linear:
            _check_linear(m, values["input"])
        return m(**values)
    except GradcalcError as exc:
        if not at or exc.message.startswith("layer ["):
            raise
        raise GradcalcError(f"layer {at}, {exc.message}") from None
    except Exception as exc:
        message = error_from(exc, None).message
        raise GradcalcError(f"layer {at}, {one_line(m)}: {message}" if at else message) from None


def _check_linear(m: nn.Linear, x: Tensor) -> None:
    """PyTorch's `mat1 and mat2 shapes cannot be multiplied`, said of the layer and the input."""
    n_in, n_out = m.in_features, m.out_features
    shape = tuple(x.shape)
    if not shape:
        raise GradcalcError(f"{one_line(m)} needs an input with at least one dimension (the last of size "
                            f"in_features={n_in}), not a 0-d tensor")
    if shape[-1] != n_in:
        rows = 1
        for d in shape[:-1]:
            rows *= d
        raise GradcalcError(
            f"{one_line(m)} takes inputs whose last dimension is in_features={n_in}, not an input of shape "
            f"{shape}: {rows}x{shape[-1]} and {n_in}x{n_out} can't be multiplied"
        )


# ---------------------------------------------------------------------------------------------------
# Optimizers


class OptimizerSurface(Surface[optim.Optimizer]):
    kind = "optimizer"

    def owns(self, o: optim.Optimizer) -> bool:
        return isinstance(o, optim.Optimizer)

    def methods(self, o: optim.Optimizer) -> tuple[str, ...]:
        return OPTIMIZER_METHODS

    def options(self, o: optim.Optimizer) -> list[str]:
        return [k for k in o.param_groups[0] if k not in NOT_OPTIONS] if o.param_groups else []

    def readable(self, o: optim.Optimizer) -> list[str]:
        return ["param_groups", *self.options(o)]

    def attribute(self, o: optim.Optimizer, name: str) -> object:
        if name == "param_groups":
            return o.param_groups
        if name in self.options(o):
            return o.param_groups[0][name]
        if name in self.methods(o):
            return BoundObjectMethod(o, name, self)
        raise self.missing(o, name)

    def call(self, o: optim.Optimizer, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        if name == "load_state_dict":
            given = (args[0] if args else kwargs.get("state_dict"))
            if isinstance(given, dict) and not {"state", "param_groups"} <= set(given):
                raise GradcalcError(
                    f"{type(o).__name__}.load_state_dict(state_dict) takes what an optimizer's state_dict() "
                    "returns (with 'state' and 'param_groups'), not a module's"
                )
        return self.checked_call(o, name, args, kwargs)

    def assign(self, o: optim.Optimizer, name: str, value: object) -> None:
        if name not in SETTABLE_OPTIONS:
            if name in self.readable(o):
                raise GradcalcError(
                    f"can't assign to .{name}: of an optimizer's options only .lr can be set (the others are "
                    "fixed when it is made)"
                )
            raise self.missing(o, name)
        try:
            lr = _one_number(value)
        except WrongArgument:
            raise GradcalcError(f"the learning rate must be a number, not {shown(value)}") from None
        if not lr >= 0:
            raise GradcalcError(f"Invalid learning rate: {lr} (lr must be >= 0)")
        for group in o.param_groups:
            group[name] = lr

    def summary(self, o: optim.Optimizer) -> str:
        n = sum(len(g["params"]) for g in o.param_groups)
        lr = o.param_groups[0]["lr"] if o.param_groups else None
        return f"{type(o).__name__}  {n} tensor{'s' * (n != 1)}, lr={lr}"


# ---------------------------------------------------------------------------------------------------
# Learning-rate schedules and random generators


class SchedulerSurface(Surface[LRScheduler]):
    kind = "schedule"

    def owns(self, o: LRScheduler) -> bool:
        return isinstance(o, LRScheduler)

    def methods(self, o: LRScheduler) -> tuple[str, ...]:
        return SCHEDULER_METHODS

    def settings(self, o: LRScheduler) -> list[str]:
        d = vars(o)
        return [n for n in _settings(type(o)) if n in d and n not in SCHEDULER_ATTRIBUTES]

    def readable(self, o: LRScheduler) -> list[str]:
        # (ReduceLROnPlateau has no base_lrs: it scales the current rates)
        return [*(n for n in SCHEDULER_ATTRIBUTES if hasattr(o, n)), *self.settings(o)]

    def attribute(self, o: LRScheduler, name: str) -> object:
        if name in self.readable(o):
            value = getattr(o, name)
            return sorted(value.elements()) if name == "milestones" else value
        if name in self.methods(o):
            return BoundObjectMethod(o, name, self)
        raise self.missing(o, name)

    def call(self, o: LRScheduler, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        return self.checked_call(o, name, args, kwargs)

    def assign(self, o: LRScheduler, name: str, value: object) -> None:
        if name in self.readable(o) or name in self.methods(o):
            raise GradcalcError(f"can't assign to .{name} of {describe(o)}: a schedule changes by .step() "
                                "(or load_state_dict)")
        raise self.missing(o, name)

    def summary(self, o: LRScheduler) -> str:
        return f"{type(o).__name__}  epoch {o.last_epoch}, lr={o.get_last_lr()}"

    def show(self, o: LRScheduler) -> str:
        settings = ", ".join(f"{n}={_setting(getattr(o, n))}" for n in self.settings(o) if n != "lr_lambda")
        return f"{type(o).__name__}({settings}{', ' if settings else ''}last_epoch={o.last_epoch})"


class GeneratorSurface(Surface[Generator]):
    kind = "random generator"

    def owns(self, o: Generator) -> bool:
        return isinstance(o, Generator)

    def describe(self, o: Generator) -> str:
        return "a random generator"

    def methods(self, o: Generator) -> tuple[str, ...]:
        return GENERATOR_METHODS

    def readable(self, o: Generator) -> list[str]:
        return ["device"]

    def attribute(self, o: Generator, name: str) -> object:
        if name == "device":
            return str(o.device)
        if name in self.methods(o):
            return BoundObjectMethod(o, name, self)
        raise self.missing(o, name)

    def call(self, o: Generator, name: str, args: Sequence[object], kwargs: dict[str, object]) -> object:
        if name == "manual_seed":  # a seed is a whole number, as `seed N` takes it
            args = [_whole_seed(a) for a in args]
            kwargs = {k: _whole_seed(v) for k, v in kwargs.items()}
        return self.checked_call(o, name, args, kwargs)

    def assign(self, o: Generator, name: str, value: object) -> None:
        raise GradcalcError(f"can't assign to .{name} of a random generator: seed it with .manual_seed(n)")

    def summary(self, o: Generator) -> str:
        return f"Generator  seed {o.initial_seed()}"

    def show(self, o: Generator) -> str:
        return f"Generator(seed={o.initial_seed()})"


def _setting(value: object) -> str:
    if isinstance(value, Counter):  # MultiStepLR's milestones, as they were given
        return str(sorted(value.elements()))
    return shown(value)


def _whole_seed(v: object) -> int:
    try:
        return _whole(v)
    except WrongArgument:
        raise GradcalcError(f"Generator.manual_seed: a seed is a whole number, not {shown(v)}") from None


SURFACES: tuple[Surface[Any], ...] = (ModuleSurface(), OptimizerSurface(), SchedulerSurface(), GeneratorSurface())


def surface_of(o: object) -> Surface[Any] | None:
    """The surface of `o`, or None when it is not a module or an optimizer."""
    for s in SURFACES:
        if s.owns(o):
            return s
    return None


def _register_calls() -> None:
    """`net(x)` for every module class the language can make (compiler.py looks the type up)."""
    for name in NN_BUILTINS["nn"]:
        cls = getattr(nn, name)
        if isinstance(cls, type) and issubclass(cls, nn.Module):
            OBJECT_CALLS[cls] = call_module


_register_calls()
FINDERS.append(surface_of)  # surfaces.surface_of finds them from now on


def engine_object(path: str) -> object:
    """`nn.Linear`, `optim.Adam`, `nn.functional.gelu`, `optim.lr_scheduler.StepLR`, `Generator` (top level):
    the engine's object (importing its package)."""
    space, _, name = path.rpartition(".")
    return getattr(importlib.import_module(f"{gradcalc.__name__}.{space}" if space else gradcalc.__name__), name)


def language_callable(name: str, path: str) -> Callable[..., object]:
    """Built-in `name` (engine object at `path`): a function with the shown signature and the engine's
    docstring, that checks its arguments and calls the engine."""
    target = engine_object(path)
    checked = Checked(name, target)

    def call(*args: object, **kwargs: object) -> object:
        return checked(*args, **kwargs)

    call.__signature__ = checked.signature  # type: ignore[attr-defined]
    call.__doc__ = target.__doc__
    call.__name__ = name
    return call
