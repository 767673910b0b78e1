"""Function transforms in the language (LANGUAGE.md section 9): what they share, and the built-ins of
`torch.autograd.functional` (`vjp jvp hvp vhp jacobian hessian`); the `func.` namespace is func_namespace.py.

A transform takes a function of the language (a `def`, a built-in, or a function a transform made) and calls
it from the engine. The language checks what the engine would complain about in Python's words, and says it
in its own, naming the argument: the function's results (`_checked`), the inputs and vectors
(`tensor_tuple`), and whatever the engine still raises (`call_engine` renames the transform and Python's
type names).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

from gradcalc import Tensor
from gradcalc.autograd import functional

from ..errors import GradcalcError
from .calls import BOOLEAN, bind_arguments, must_be, wrong_call
from .convert import RawList, as_tensor, describe
from .failures import translate
from .signatures import signature_text

# the words the engine's transforms start their messages with (`grad: argnums=3 is out of range...`)
_ENGINE_WORDS = ("grad_and_value", "grad", "vjp_fn", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
                 "linearize", "jacobian", "hvp", "vhp")
# Python's type names in the engine's messages, as the language says them
_PYTHON_TYPES = {
    "NoneType": "none", "float": "a number", "int": "a number", "bool": "a boolean", "str": "a string",
    "list": "a list", "tuple": "a tuple", "dict": "a dictionary", "Tensor": "a tensor",
    "function": "a function", "UserFunction": "a function", "Builtin": "a function", "Transformed": "a function",
    "CustomFunction": "a function", "BoundMethod": "a function", "Namespace": "a namespace",
    "NamespaceFunction": "a function", "DType": "a dtype", "Size": "a shape", "range": "a range", "slice": "a slice",
}


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The leading engine word, Python's type names, and None/True/False (the language's none/true/false):
    compiled on the first error, not at start-up."""
    return (re.compile(r"^(?:" + "|".join(_ENGINE_WORDS) + r")(?= \(strict\):|:)"),
            re.compile(r"\b(?:an?|type) (" + "|".join(_PYTHON_TYPES) + r")\b"),
            re.compile(r"\b(?:None|True|False)\b"))


def function_name(f: Any) -> str:
    """How a message names a function value: `f` (a def), `sin` (a built-in), `func.grad(f)`."""
    for attr in ("label", "name"):
        name = getattr(f, attr, None)
        if isinstance(name, str):
            return name
    return "the function"


def our_words(message: str, label: str) -> str:
    """An engine transform's message in the language's words: named as the user called it, no Python types."""
    leading, types, constants = _patterns()
    message = leading.sub(label, message, count=1)
    message = types.sub(lambda m: _PYTHON_TYPES[m.group(1)], message)
    message = constants.sub(lambda m: m.group(0).lower(), message)
    return message.replace("positional argument", "argument")  # the language has no other kind


def call_engine(label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call an engine transform; its errors become GradcalcErrors in our words (the user's own pass)."""
    try:
        return fn(*args, **kwargs)
    except GradcalcError:
        raise
    except Exception as exc:
        raise GradcalcError(our_words(translate(exc), label)) from None  # (error_from checks the result)


def bind(label: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Python's rules for the arguments, with the language's messages (calls.py's binding and format)."""
    sig = inspect.signature(fn)
    try:
        sig.bind(*args, **kwargs)
        return
    except TypeError:
        pass
    _, problem = bind_arguments(label, list(sig.parameters.values()), args, kwargs)
    raise wrong_call(problem or f"{label} can't take these arguments", signature_text(label, fn))


def checked_call(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as a built-in: its arguments bound with the language's messages first; its signature and
    docstring are fn's (for :help)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        bind(name, fn, args, kwargs)
        return fn(*args, **kwargs)

    call.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    call.__doc__, call.__name__ = fn.__doc__, name
    return call


# -- values a transform takes --------------------------------------------------------------------------------
def as_function(value: Any, label: str) -> Any:
    """The function argument of a transform (a def, a built-in, a function a transform made)."""
    if not callable(value) or isinstance(value, (Tensor, type)):
        raise GradcalcError(f"expected a function, not {describe(value)} (the first argument of {label}: a def, "
                            "a built-in or a transformed function)")
    return value


def primal(value: Any) -> Any:
    """An argument passed to a transformed function: numbers and list literals become float64 tensors, in
    tuples and lists too; other values pass as they are."""
    kind = type(value)
    if kind is int or kind is float or kind is RawList:
        return as_tensor(value)
    if kind is tuple:
        return tuple(primal(v) for v in value)
    if kind is list:
        return [primal(v) for v in value]
    return value


def tensor_tuple(value: Any, label: str, what: str) -> Any:
    """A tensor, or a tuple of tensors (from a tuple or list): autograd.functional's `inputs` and `v`."""
    wants = "a tensor or a tuple of tensors"
    value = primal(value)
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            if not isinstance(v, Tensor):
                raise GradcalcError(f"{label}: argument '{what}' must be {wants}, but its item {i} is {describe(v)}")
        return tuple(value)
    if not isinstance(value, Tensor):
        raise GradcalcError(must_be(label, what, wants, describe(value)))
    return value


def flag(value: Any, label: str, name: str) -> bool:
    """A true/false option (`create_graph=`, `strict=`, `has_aux=`)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype.name == "bool":
        return bool(value)
    raise GradcalcError(must_be(label, name, BOOLEAN.text, describe(value)))


# -- what the transformed function returns -------------------------------------------------------------------
def _all_tensors(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return all(_all_tensors(v) for v in value)
    return False


_WANTED = {
    "tensor": "a tensor",
    "tuple": "a tensor or a tuple of tensors",
    "tensors": "a tensor, or tuples or lists of tensors",
}


def _fits(value: Any, want: str) -> bool:
    if want == "tensor":
        return isinstance(value, Tensor)
    if want == "tuple":
        return isinstance(value, Tensor) or (
            isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value))
    return _all_tensors(value)


def _returned(value: Any) -> str:
    if isinstance(value, (tuple, list)) and not _all_tensors(value):
        odd = next(v for v in value if not _all_tensors(v))
        return f"{describe(value)} holding {describe(odd)}"
    return describe(value)


def checked(f: Any, label: str, want: str, has_aux: bool = False) -> Callable[..., Any]:
    """`f`, its results checked before the engine reads them: `want` is "tensor", "tuple" (a tensor or a
    tuple of tensors) or "tensors" (nested tuples and lists of tensors); with `has_aux` a pair whose first
    item is that."""
    name = function_name(f)

    def call(*args: Any, **kwargs: Any) -> Any:
        out = f(*args, **kwargs)
        main = out
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise GradcalcError(f"{label}: with has_aux=true, {name} must return a pair (output, aux), but it "
                                    f"returned {describe(out)}")
            main = out[0]
        if not _fits(main, want):
            if has_aux:
                raise GradcalcError(f"{label}: the output in the pair {name} returns must be {_WANTED[want]}, "
                                    f"not {_returned(main)}")
            raise GradcalcError(f"{label}: {name} must return {_WANTED[want]}, but it returned {_returned(main)}")
        return out

    call.__name__ = call.__qualname__ = name
    return call


class Transformed:
    """A function a transform made (`func.grad(f)`, a `vjp_fn`): calling it calls the engine's transform,
    its arguments as the language passes them (numbers become tensors)."""

    __slots__ = ("label", "fn", "__weakref__")

    def __init__(self, label: str, fn: Callable[..., Any]) -> None:
        self.label, self.fn = label, fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_engine(self.label, self.fn, *(primal(a) for a in args), **kwargs)

    def __repr__(self) -> str:
        return f"<function {self.label}>"


# -- the built-ins of torch.autograd.functional --------------------------------------------------------------
def _functional(name: str, func: Any, inputs: Any, v: Any, options: dict[str, Any], want: str = "tuple") -> Any:
    f = as_function(func, name)
    ins = tensor_tuple(inputs, name, "inputs")
    vs = tensor_tuple(v, name, "v") if v is not None else None
    opts = {k: flag(value, name, k) if isinstance(default, bool) else value
            for k, (value, default) in options.items()}
    return call_engine(name, getattr(functional, name), checked(f, name, want), ins, vs, **opts)


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Jacobian product v^T J of func at inputs: returns (func(inputs), vjp), as PyTorch's
    autograd.functional.vjp. v has the output's shape (may be left out for a one-element output).

    inputs is a tensor or a tuple of tensors (then the product is a tuple); create_graph=true keeps the
    results differentiable; strict=true makes an output independent of an input an error."""
    return _functional("vjp", func, inputs, v, {"create_graph": (create_graph, False), "strict": (strict, False)})


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Jacobian-vector product J v of func at inputs: returns (func(inputs), jvp), as PyTorch's
    autograd.functional.jvp (by the double-vjp trick; func.jvp is forward mode). v has the inputs' shapes."""
    return _functional("jvp", func, inputs, v, {"create_graph": (create_graph, False), "strict": (strict, False)})


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Hessian product v^T H of func (returning one element) at inputs: (func(inputs), vhp)."""
    return _functional("vhp", func, inputs, v, {"create_graph": (create_graph, False), "strict": (strict, False)},
                       "tensor")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Hessian-vector product H v of func (returning one element) at inputs: (func(inputs), hvp)."""
    return _functional("hvp", func, inputs, v, {"create_graph": (create_graph, False), "strict": (strict, False)},
                       "tensor")


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of func at inputs, of shape output.shape + input.shape (tuples for tuples), as PyTorch's
    autograd.functional.jacobian; strategy="forward-mode" (with vectorize=true) computes it by forward mode."""
    f = as_function(func, "jacobian")
    return call_engine("jacobian", functional.jacobian, checked(f, "jacobian", "tuple"),
                       tensor_tuple(inputs, "jacobian", "inputs"), flag(create_graph, "jacobian", "create_graph"),
                       flag(strict, "jacobian", "strict"), flag(vectorize, "jacobian", "vectorize"), strategy)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of func (returning one element) at inputs, of shape input.shape + input.shape, as PyTorch's
    autograd.functional.hessian."""
    f = as_function(func, "hessian")
    return call_engine("hessian", functional.hessian, checked(f, "hessian", "tensor"),
                       tensor_tuple(inputs, "hessian", "inputs"), flag(create_graph, "hessian", "create_graph"),
                       flag(strict, "hessian", "strict"), flag(vectorize, "hessian", "vectorize"),
                       outer_jacobian_strategy)


FUNCTIONAL: dict[str, Callable[..., Any]] = {
    name: checked_call(name, fn)
    for name, fn in (("vjp", vjp), ("jvp", jvp), ("vhp", vhp), ("hvp", hvp), ("jacobian", jacobian),
                     ("hessian", hessian))
}
