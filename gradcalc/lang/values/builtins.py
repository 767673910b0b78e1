"""The language's built-in functions, tensor attributes and tensor methods: derived from the engine.

Nothing here lists the engine's operations by hand. The built-in functions are the engine's module-level
functions (`gradcalc.autograd.ops.FUNCTIONS`, installed from its operations' specs) plus the few built-ins that
only the language has (`LANGUAGE_ONLY`, declared once below); the methods are the `Tensor`'s public methods, the
attributes its public properties. An operation registered after start-up (`autograd.spec.op`) becomes a built-in
and a method as it is registered (`_added`). A name not reachable this way is not reachable, whatever Python
would allow.

What each argument becomes (convert.py's kinds `T L I N D A F`) is read from the engine callable's own
signature, when the built-in is first called: its annotation (`Tensor`, `int`, `float`, a sequence of
tensors), else PyTorch's name for the parameter (`dim` is a dimension, `min` a number, `tensors` a list of
tensors: `PARAMETER_KINDS`), else a function's first parameter is a tensor and any other is passed as it is.
`:help NAME` shows the signature and the first line of the docstring.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

from gradcalc.autograd import spec
from gradcalc.autograd.ops import FUNCTIONS as ENGINE_FUNCTIONS
from gradcalc.autograd.tensor import Tensor

from ..errors import ArgumentError, GradcalcError
from ..habits import call_pointer, with_pointer
from ..limits import LIMITS, check_size
from .convert import (
    CONVERT,
    RawList,
    as_tensor,
    describe,
    size_of_arange,
    size_of_dims,
    size_of_eye,
    size_of_full,
    size_of_linspace,
    size_of_product,
    whole,
)
from .engine import engine
from .signatures import derive_spec, signature_text
from .spaces import NN_BUILTINS, PREDEFINED

__all__ = [
    "ATTRIBUTES", "BUILTINS", "CONSTANTS", "DTYPES", "FUNCTIONS", "LIMITS", "METHODS", "NN_BUILTINS",
    "NODE_ATTRIBUTES",
    "NODE_HOOK_METHODS", "NODE_METHODS", "SETTABLE", "TENSOR_HOOK_METHODS", "Builtin", "RawList", "as_tensor",
    "check_size", "describe", "whole",
]

# ---------------------------------------------------------------------------------------------------
# What the language adds to the engine's names (each declared once)

# Built-ins the engine has under another namespace, as a method only, or not at all (Python's own).
LANGUAGE_ONLY: dict[str, str] = {
    "grad": "autograd.grad",
    # autograd.functional's transforms, checked and worded by the language (transforms.py)
    **{name: f"lang:{name}" for name in ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")},
    "gradcheck": "autograd.gradcheck",
    "view": "method:view",
    "expand": "method:expand",
    "manual_seed": "py:manual_seed",  # the seed statement's check (torch.manual_seed(n) is `seed n`)
    "set_printoptions": "set_printoptions",  # torch.set_printoptions (the engine's printing.py)
    "range": "py:range",
    "len": "py:len",
    "float": "py:float",
}

# Engine names that are not built-ins of the language (the language has a statement for it, or the value it
# returns is not one of the language's).
NOT_BUILT_INS = frozenset(
    {"manual_seed", "numpy", "type", "output_nr", "register_hook", "register_post_accumulate_grad_hook",
     # int32 and float16 are not the language's dtypes (and `int` reads as Python's word in a message)
     "int", "half"}
)

# How many elements a constructor's result will have, checked before anything is allocated.
SIZES: dict[str, Callable[[tuple[object, ...], dict[str, object]], int]] = {
    **dict.fromkeys(("zeros", "ones", "rand", "randn", "empty"), size_of_dims),
    "randint": lambda args, kw: size_of_full((next((a for a in args if isinstance(a, tuple)), kw.get("size", ())),),
                                             {}),
    "normal": lambda args, kw: size_of_full(args[2:3] or (kw.get("size", ()) or (),), {}),
    "randperm": lambda args, kw: size_of_full(args[:1] or (kw.get("n", 0),), {}),
    "full": size_of_full,
    "eye": size_of_eye,
    "arange": size_of_arange,
    "linspace": size_of_linspace,
    **dict.fromkeys(("matmul", "mm", "outer"), size_of_product),
}
# Constructors whose numbers make float64 tensors here (numbers are float64 in the language).
FLOAT_DEFAULT = frozenset({"full", "arange"})

# The predefined constants: each behaves as the number literal of its value (LANGUAGE.md section 1).
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}

# dtypes, usable as `dtype=` arguments and compared with `x.dtype`
DTYPES = ("float32", "float64", "double", "int64", "long", "bool")

# A grad_fn node's attributes and methods (`y.grad_fn.next_functions`, `y.grad_fn.name()`); `saved` and the
# hooks are the language's own values (lang/tell/saved.py, lang/hooks.py).
NODE_ATTRIBUTES = ("next_functions", "variable", "saved")
NODE_METHODS = ("name", "register_hook", "register_prehook")
# Methods that register a hook written in the language (lang/hooks.py), not derived from the engine's tables.
TENSOR_HOOK_METHODS = ("register_hook", "register_post_accumulate_grad_hook")
NODE_HOOK_METHODS = ("register_hook", "register_prehook")


# ---------------------------------------------------------------------------------------------------
# Built-ins


class Builtin:
    """A built-in function of the language (or a tensor method): how to call the engine for it.

    `target` is "sin" (gradcalc.sin), "autograd.grad", "method:view" (the first argument's method),
    "py:len" (implemented here) or "lang:vjp" (a transform, in transforms.py). The argument kinds (`args`,
    `kw`) are derived from the engine callable's signature on first use."""

    __slots__ = ("name", "target", "method", "size", "float_default", "_fn", "_spec")

    def __init__(self, name: str, target: str, method: bool = False) -> None:
        self.name, self.target, self.method = name, target, method
        self.size = None if method and name not in ("matmul", "mm") else SIZES.get(name)
        self.float_default = name in FLOAT_DEFAULT and not method
        self._fn: Callable[..., object] | None = None
        self._spec: tuple[tuple[str, ...], dict[str, str]] | None = None

    def resolve(self) -> Callable[..., object]:
        fn = self._fn
        if fn is None:
            fn = self._fn = _resolve(self)
        return fn

    def engine_callable(self) -> Callable[..., object]:
        """The engine function whose signature describes this built-in."""
        if self.method:
            return getattr(Tensor, self.target)
        target = self.target
        if target.startswith("method:"):
            return getattr(Tensor, target[len("method:"):])
        return self.resolve()

    @property
    def args(self) -> tuple[str, ...]:
        return self.spec()[0]

    @property
    def kw(self) -> dict[str, str]:
        return self.spec()[1]

    def spec(self) -> tuple[tuple[str, ...], dict[str, str]]:
        """(kinds of the positional parameters, `*K` repeating for the rest; kinds by keyword)."""
        spec = self._spec
        if spec is None:
            # Python's own built-ins (range, len, float) take the language's values as they are
            plain = self.target.startswith(("py:", "nn:", "lang:"))  # nn.py and transforms.py check their own
            spec = self._spec = derive_spec(self.name, self.engine_callable(), self.method, plain)
        return spec

    def convert(
        self, args: Sequence[object], kwargs: dict[str, object]
    ) -> tuple[tuple[object, ...], dict[str, object]]:
        spec, kinds = self.spec()
        out = []
        for i, a in enumerate(args):
            if i < len(spec):
                kind = spec[i]
            elif spec and spec[-1].startswith("*"):
                kind = spec[-1]
            else:
                kind = "A"
            out.append(CONVERT[kind.lstrip("*")](a))
        if spec and spec[-1] == "*I" and len(out) == len(spec) and isinstance(out[-1], tuple):
            out[-1:] = list(out[-1])  # zeros([2, 3]) is zeros(2, 3)
        kw = {k: CONVERT[kinds.get(k, "A")](v) for k, v in kwargs.items()} if kwargs else kwargs
        if self.float_default and "dtype" not in kw:
            kw["dtype"] = engine().float64
        return tuple(out), kw

    def invoke(self, args: Sequence[object], kwargs: dict[str, object]) -> object:
        """Convert the arguments, check the size, call the engine, check the result's size. A failure is a
        GradcalcError naming the argument that is wrong (calls.py; only on the way out), with a pointer when a
        habit from elsewhere explains it (habits.py)."""
        try:
            converted, kw = self.convert(args, kwargs)
            if self.size is not None:
                try:
                    n = self.size(converted, kw)
                except (TypeError, ValueError, OverflowError):
                    n = 0  # malformed arguments: the engine says what is wrong
                check_size(n, f"{self.name}(...)")
            result = self.resolve()(*converted, **kw)
        except Exception as exc:
            from .calls import call_error  # (a failed call only: not on a cold start)

            err = call_error(self, exc, args, kwargs)
            pointer = call_pointer(self.name, args) if not self.method and err.loc is None else None
            if pointer is not None:
                err = GradcalcError(with_pointer(err.message, pointer))
            raise err from None  # (a GradcalcError raised by the callee's own checks comes out as it was)
        if isinstance(result, Tensor) and result.numel() > LIMITS.max_elements:
            check_size(result.numel(), f"{self.name}(...)")
        return result

    @property
    def doc(self) -> str:
        """`:help NAME`: the signature as the language calls it, and the docstring's first line."""
        fn = self.engine_callable()
        text = (inspect.getdoc(fn) or "").strip().split("\n\n")[0].replace("\n", " ")
        signature = signature_text(self.name, fn, self.method)
        return f"{signature}: {text}" if text else signature

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.invoke(args, kwargs)

    @property
    def described_as(self) -> str:
        """How messages name it (convert.describe)."""
        return f"the built-in function {self.name}"

    def __repr__(self) -> str:
        return f"<built-in function {self.name}>"


def _method_caller(name: str) -> Callable[..., object]:
    signature = inspect.signature(getattr(Tensor, name))
    first = next(iter(signature.parameters))  # the tensor, by position or by its name (`view(x=t)`)

    def call(*args: object, **kwargs: object) -> object:
        if args:
            obj, args = args[0], args[1:]
        else:
            obj = kwargs.pop(first, None)
        obj = as_tensor(obj)
        method = getattr(obj, name, None)
        if method is None or not isinstance(obj, Tensor):
            raise ArgumentError(f"{name}: argument '{first}' must be a tensor, not {describe(obj)}")
        return method(*args, **kwargs)

    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__doc__ = getattr(Tensor, name).__doc__
    return call


def _py_range(*bounds: object) -> range:
    """Whole numbers from start (default 0) up to end, by step: range(n), range(a, b), range(a, b, step)."""
    if not 1 <= len(bounds) <= 3:
        raise GradcalcError(
            f"range takes 1 to 3 numbers (range(n), range(a, b), range(a, b, step)), not {len(bounds)}"
        )
    return range(*(whole(a, "a range bound") for a in bounds))


def _py_len(x: object) -> int:
    """The size of x's first dimension (or the length of a tuple, list or string)."""
    if isinstance(x, Tensor) and x.ndim == 0:
        raise GradcalcError("len of a 0-d tensor: it has no first dimension (use x.numel() for its size)")
    try:
        return len(x)
    except TypeError:
        raise GradcalcError(f"len needs a tensor, tuple, list or string, not {describe(x)}") from None


def _py_float(x: object) -> float:
    """A one-element tensor as a Python number."""
    if isinstance(x, (int, float, bool)) or isinstance(x, Tensor):
        return float(x)
    raise GradcalcError(f"float needs a number or a one-element tensor, not {describe(x)}")


def manual_seed(seed: object) -> None:
    """Set the random seed: seed N and torch.manual_seed(N), a whole number from 0 to 2**63 - 1. Initial
    weights and random tensors then repeat (gradcalc's random stream, not PyTorch's)."""
    n = whole(seed, "a seed")
    if not 0 <= n < 2**63:
        shown = n if abs(n) < 10**15 else f"{float(n):.3g}"
        raise GradcalcError(f"a seed must be a whole number from 0 to 2**63 - 1, not {shown}")
    engine().manual_seed(n)


PYTHON: dict[str, Callable[..., object]] = {
    "range": _py_range, "len": _py_len, "float": _py_float, "manual_seed": manual_seed,
}


def _resolve(b: Builtin) -> Callable[..., object]:
    target = b.target
    if b.method:
        return getattr(Tensor, target)
    if target.startswith("method:"):
        return _method_caller(target[len("method:"):])
    if target.startswith("py:"):
        return PYTHON[target[3:]]
    if target.startswith("nn:"):
        from .objects import (
            language_callable,  # (loads the engine's nn and optim when one is first called: not on a cold start)
        )

        return language_callable(b.name, target[3:])
    if target.startswith("lang:"):
        from .transforms import FUNCTIONAL  # (not on a cold start: loaded when a program calls a transform)

        return FUNCTIONAL[target[5:]]
    obj: object = engine()
    for part in target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise GradcalcError(f"`{b.name}` is not available: the engine has no {target}")
    return obj


# ---------------------------------------------------------------------------------------------------
# The tables, from the engine


def _engine_tables() -> tuple[dict[str, Builtin], dict[str, Builtin], dict[str, str], tuple[str, ...]]:
    functions = {
        name: Builtin(name, name)
        for name in sorted(ENGINE_FUNCTIONS)
        if not name.startswith("_") and name not in NOT_BUILT_INS
    }
    functions.update((name, Builtin(name, target)) for name, target in LANGUAGE_ONLY.items())
    functions.update(
        (name, Builtin(name, f"nn:{space}.{name}" if space else f"nn:{name}"))
        for space, names in NN_BUILTINS.items() for name in names
    )
    methods: dict[str, Builtin] = {}
    attributes: dict[str, str] = {"grad_fn": "grad_fn"}  # a field of the tensor, not a property
    settable: list[str] = []
    for name in sorted(dir(Tensor)):
        if name.startswith("_") or name in NOT_BUILT_INS:
            continue
        value = inspect.getattr_static(Tensor, name)
        if isinstance(value, property):
            attributes[name] = name
            if value.fset is not None:
                settable.append(name)
        elif callable(value) or isinstance(value, staticmethod):
            methods[name] = Builtin(name, name, method=True)
    # listed in messages with the ones users assign most first (`x.grad = none`, `x.requires_grad = false`)
    settable.sort(key=lambda name: {"grad": 0, "requires_grad": 1}.get(name, 2))
    return functions, methods, attributes, tuple(settable)


FUNCTIONS, METHODS, ATTRIBUTES, SETTABLE = _engine_tables()

# (and the predefined namespaces: torch nn F optim autograd func, spaces.py)
def _builtin_names() -> tuple[str, ...]:
    return tuple(sorted(FUNCTIONS)) + DTYPES + tuple(CONSTANTS) + PREDEFINED + ("_", "ans")


BUILTINS: tuple[str, ...] = _builtin_names()


def _added(op: spec.OpSpec) -> None:
    """An operation registered after start-up (the engine installed it first): its built-in function and its
    methods, derived as `_engine_tables` derives them, and the names completion offers."""
    global BUILTINS
    for name in op.names:
        if name in ENGINE_FUNCTIONS and not name.startswith("_") and name not in NOT_BUILT_INS:
            FUNCTIONS[name] = Builtin(name, name)
    for name in (*op.names, f"{op.name}_"):
        if name.startswith("_") or name in NOT_BUILT_INS or name in METHODS:
            continue
        value = inspect.getattr_static(Tensor, name, None)
        if value is not None and (callable(value) or isinstance(value, staticmethod)):
            METHODS[name] = Builtin(name, name, method=True)
    BUILTINS = _builtin_names()


spec.listen(_added)
