"""The language's built-in functions, tensor attributes and tensor methods, mapped onto the engine.

Everything a program can reach is listed here (LANGUAGE.md section 3): a name not in these tables is
not reachable, whatever Python would allow. Each entry says which engine callable it is and what kind
of value each argument must become, because the language's values are not quite Python's:

- `T`  a tensor: a number or a list literal becomes a float64 tensor (`sin(2)`, `sum([1, 2])`);
- `L`  a tensor or a list/tuple of tensors (`cat([a, b])`, `grad(y, [a, b])`), each converted as `T`;
- `I`  an int or ints (dimensions, sizes): a whole float64 tensor or float becomes an int, a list or a
       1-d tensor a tuple of ints (`zeros([2, 3])`, `reshape(x, x.shape)`, `x[n]` with `n = 1`);
- `N`  a number: a 0-d tensor becomes a Python number (`clamp(x, max=inf)`, `full([2], pi)`);
- `D`  tensor data: list literals as Python lists of floats, whole numbers as floats (numbers are float64);
- `A`  anything: passed on, a list literal as a tensor;
- `F`  a function (a `def`, a `function`, or a built-in).
A spec is a tuple of positional kinds (`*I` repeats for the rest), and a dict of keyword kinds.

Engine callables are looked up by name when first called, so a missing one is a clean error naming it,
and importing this module does not import the engine.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from .errors import GradcalcError

DEFAULT_MAX_ELEMENTS = 2**27


class RawList(list):
    """A list literal of numbers passed as an argument, before it is known what the callee wants:
    a tensor (most parameters), ints (sizes) or Python data (`tensor([1, 2], dtype=float32)`)."""

    __slots__ = ()


class _Limits(threading.local):
    """Per-thread limits of the running session (set by the interpreter on each run)."""

    max_elements: int = DEFAULT_MAX_ELEMENTS


LIMITS = _Limits()


def engine() -> Any:
    import gradcalc

    return gradcalc


def _Tensor() -> type:
    from gradcalc.autograd.tensor import Tensor

    return Tensor


# ---------------------------------------------------------------------------------------------------
# Argument conversions


def _floats(data: Any) -> Any:
    if isinstance(data, list):
        return [_floats(d) for d in data]
    return float(data)


def as_tensor(value: Any) -> Any:
    """`T`: numbers and list literals become float64 tensors; tensors and anything else pass."""
    kind = type(value)
    if kind is int or kind is float:
        return engine().tensor(float(value))
    if kind is RawList:
        return engine().tensor(_floats(value))
    return value


def _as_tensors(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and type(value) is not RawList:
        return [as_tensor(v) for v in value]
    return as_tensor(value)


def _whole(value: Any, what: str = "a dimension or size") -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise GradcalcError(f"{what} must be a whole number, not {value!r}")
        return int(value)
    if isinstance(value, _Tensor()):
        if value.numel() != 1:
            raise GradcalcError(f"{what} must be a number, not a tensor of shape {tuple(value.shape)}")
        return _whole(value.item(), what)
    raise GradcalcError(f"{what} must be a whole number, not {describe(value)}")


def as_ints(value: Any) -> Any:
    """`I`: an int, or a tuple of ints for a list, tuple or 1-d tensor."""
    if isinstance(value, (list, tuple)):
        return tuple(_whole(v) for v in value)
    if isinstance(value, _Tensor()) and value.ndim == 1:
        return tuple(_whole(v) for v in value.tolist())
    if value is None:
        return None
    return _whole(value)


def as_number(value: Any) -> Any:
    """`N`: a 0-d tensor becomes a Python number (a list literal a tensor)."""
    if type(value) is RawList:
        return as_tensor(value)
    if isinstance(value, _Tensor()) and value.ndim == 0 and not value.requires_grad:
        return value.item()
    return value


def as_data(value: Any) -> Any:
    """`D`: a list literal as Python floats; a whole Python number as a float (numbers are float64)."""
    if type(value) is RawList:
        return _floats(value)
    if type(value) is int:
        return float(value)
    return value


def as_any(value: Any) -> Any:
    """`A`: a list literal becomes a tensor; the rest passes unchanged."""
    if type(value) is RawList:
        return as_tensor(value)
    return value


def as_function(value: Any) -> Any:
    if not callable(value) or isinstance(value, _Tensor()):
        raise GradcalcError(f"expected a function, not {describe(value)}")
    return value


CONVERT: dict[str, Callable[[Any], Any]] = {
    "T": as_tensor,
    "L": _as_tensors,
    "I": as_ints,
    "N": as_number,
    "D": as_data,
    "A": as_any,
    "F": as_function,
}


def describe(value: Any) -> str:
    """A value's kind in the language's words, for messages."""
    if isinstance(value, _Tensor()):
        return f"a tensor of shape {tuple(value.shape)}"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, tuple):
        return "a tuple"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Builtin):
        return f"the built-in function {value.name}"
    if callable(value):
        return "a function"
    return "a value of another kind"


# ---------------------------------------------------------------------------------------------------
# Sizes, checked before anything is allocated


def _prod(dims: Any) -> int:
    n = 1
    for d in dims:
        n *= max(int(d), 0)
    return n


def _size_of_dims(args: tuple, kwargs: dict) -> int:
    dims = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
    return _prod(dims)


def _size_of_full(args: tuple, kwargs: dict) -> int:
    size = args[0] if args else kwargs.get("size", ())
    return _prod(size if isinstance(size, tuple) else (size,))


def _size_of_eye(args: tuple, kwargs: dict) -> int:
    n = args[0] if args else kwargs.get("n", 0)
    m = args[1] if len(args) > 1 else kwargs.get("m", n)
    return _prod((n, n if m is None else m))


def _size_of_arange(args: tuple, kwargs: dict) -> int:
    nums = [float(a) for a in args]
    if len(nums) == 1:
        start, end, step = 0.0, nums[0], float(kwargs.get("step", 1))
    else:
        start, end = nums[0], nums[1]
        step = nums[2] if len(nums) > 2 else float(kwargs.get("step", 1))
    if step == 0 or not all(math.isfinite(v) for v in (start, end, step)):
        return 0  # the engine explains what is wrong
    return max(math.ceil((end - start) / step), 0)


def _size_of_linspace(args: tuple, kwargs: dict) -> int:
    steps = args[2] if len(args) > 2 else kwargs.get("steps", 0)
    return int(steps) if isinstance(steps, (int, float)) else 0


def _size_of_product(args: tuple, kwargs: dict) -> int:
    n = 1
    for a in args[:2]:
        if isinstance(a, _Tensor()):
            n *= a.numel()
    return n


def check_size(n: int, what: str) -> None:
    limit = LIMITS.max_elements
    if n > limit:
        raise GradcalcError(
            f"{what} would have {n} elements, more than the limit of {limit} (raise it with --max-elements)"
        )


# ---------------------------------------------------------------------------------------------------
# The tables


class Builtin:
    """A built-in function of the language (or a tensor method): how to call the engine for it.

    `target` is "sin" (gradcalc.sin), "autograd.grad", "method:view" (the first argument's method) or
    "py:len" (implemented here); `size` gives the result's element count before the call (constructors);
    `float_default` marks constructors whose numbers make float64 tensors (numbers are float64 here).
    """

    __slots__ = ("name", "target", "args", "kw", "doc", "size", "float_default", "_fn")

    def __init__(
        self,
        name: str,
        target: str,
        args: tuple[str, ...] = (),
        kw: dict[str, str] | None = None,
        doc: str = "",
        size: Callable[[tuple, dict], int] | None = None,
        float_default: bool = False,
    ) -> None:
        self.name, self.target, self.args, self.kw, self.doc = name, target, args, kw or {}, doc
        self.size, self.float_default = size, float_default
        self._fn: Callable[..., Any] | None = None

    def resolve(self) -> Callable[..., Any]:
        fn = self._fn
        if fn is None:
            fn = self._fn = _resolve(self)
        return fn

    def convert(self, args: tuple | list, kwargs: dict) -> tuple[tuple, dict]:
        spec = self.args
        out = []
        for i, a in enumerate(args):
            if i < len(spec):
                kind = spec[i]
            elif spec and spec[-1].startswith("*"):
                kind = spec[-1]
            else:
                kind = "A"
            out.append(CONVERT[kind.lstrip("*?")](a))
        if spec and spec[-1] == "*I" and len(out) == len(spec) and isinstance(out[-1], tuple):
            out[-1:] = list(out[-1])  # zeros([2, 3]) is zeros(2, 3)
        kw = {k: CONVERT[self.kw.get(k, "A")](v) for k, v in kwargs.items()} if kwargs else kwargs
        if self.float_default and "dtype" not in kw:
            kw["dtype"] = engine().float64
        return tuple(out), kw

    def invoke(self, args: tuple | list, kwargs: dict) -> Any:
        """Convert the arguments, check the size, call the engine, check the result's size."""
        args, kwargs = self.convert(args, kwargs)
        if self.size is not None:
            try:
                n = self.size(args, kwargs)
            except (TypeError, ValueError, OverflowError):
                n = 0  # malformed arguments: the engine says what is wrong
            check_size(n, f"{self.name}(...)")
        result = self.resolve()(*args, **kwargs)
        if isinstance(result, _Tensor()) and result.numel() > LIMITS.max_elements:
            check_size(result.numel(), f"{self.name}(...)")
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.invoke(args, kwargs)

    def __repr__(self) -> str:
        return f"<built-in function {self.name}>"


def _method_caller(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        obj = as_tensor(obj)
        method = getattr(obj, name, None)
        if method is None or not isinstance(obj, _Tensor()):
            raise GradcalcError(f"{name}() needs a tensor, not {describe(obj)}")
        return method(*args, **kwargs)

    return call


def _py_range(*args: Any) -> range:
    if not 1 <= len(args) <= 3:
        raise GradcalcError(
            f"range takes 1 to 3 numbers (range(n), range(a, b), range(a, b, step)), not {len(args)}"
        )
    return range(*(_whole(a, "a range bound") for a in args))


def _py_len(value: Any) -> int:
    if isinstance(value, _Tensor()) and value.ndim == 0:
        raise GradcalcError("len() of a 0-d tensor: it has no first dimension (use numel() for its size)")
    try:
        return len(value)
    except TypeError:
        raise GradcalcError(f"len() needs a tensor, tuple, list or string, not {describe(value)}") from None


def _py_float(value: Any) -> float:
    if isinstance(value, (int, float, bool)) or isinstance(value, _Tensor()):
        return float(value)
    raise GradcalcError(f"float() needs a number or a one-element tensor, not {describe(value)}")


PYTHON: dict[str, Callable[..., Any]] = {"range": _py_range, "len": _py_len, "float": _py_float}


def _resolve(b: Builtin) -> Callable[..., Any]:
    target = b.target
    if target.startswith("method:"):
        return _method_caller(target[len("method:") :])
    if target.startswith("py:"):
        return PYTHON[target[3:]]
    obj: Any = engine()
    for part in target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise GradcalcError(f"`{b.name}` is not available: the engine has no {target}")
    return obj


_CTOR_KW = {"dtype": "A", "requires_grad": "A"}
_RED_KW = {"dim": "I", "keepdim": "A"}


def _fns(names: str, args: tuple[str, ...], doc: str, **extra: Any) -> dict[str, Builtin]:
    return {n: Builtin(n, n, args, doc=doc.format(name=n), **extra) for n in names.split()}


FUNCTIONS: dict[str, Builtin] = {
    # constructors
    "tensor": Builtin(
        "tensor", "tensor", ("D",), _CTOR_KW, "tensor(data, dtype=, requires_grad=): a new leaf"
    ),
    **_fns(
        "zeros ones rand randn",
        ("*I",),
        "{name}(*size, dtype=, requires_grad=): a new tensor of that shape",
        kw=_CTOR_KW,
        size=_size_of_dims,
    ),
    "full": Builtin(
        "full",
        "full",
        ("I", "N"),
        _CTOR_KW,
        "full(size, value): a tensor filled with value",
        size=_size_of_full,
        float_default=True,
    ),
    "eye": Builtin("eye", "eye", ("I", "I"), _CTOR_KW, "eye(n, m=n): the identity matrix", size=_size_of_eye),
    "arange": Builtin(
        "arange",
        "arange",
        ("N", "N", "N"),
        {**_CTOR_KW, "step": "N"},
        "arange(end) or arange(start, end, step): evenly spaced values (float64)",
        size=_size_of_arange,
        float_default=True,
    ),
    "linspace": Builtin(
        "linspace",
        "linspace",
        ("N", "N", "I"),
        {**_CTOR_KW, "steps": "I"},
        "linspace(start, end, steps): steps values from start to end",
        size=_size_of_linspace,
    ),
    **_fns("zeros_like ones_like", ("T",), "{name}(x): a new tensor of x's shape and dtype", kw=_CTOR_KW),
    # elementwise
    **_fns(
        "sin cos tan asin acos atan sinh cosh tanh exp log log2 log10 log1p expm1 sqrt rsqrt abs sign relu "
        "sigmoid softplus erf neg reciprocal",
        ("T",),
        "{name}(x): elementwise",
    ),
    "clamp": Builtin(
        "clamp",
        "clamp",
        ("T", "N", "N"),
        {"min": "N", "max": "N"},
        "clamp(x, min=, max=): limit the values of x to [min, max]",
    ),
    "pow": Builtin("pow", "pow", ("T", "A"), doc="pow(x, y): x ** y elementwise"),
    "maximum": Builtin("maximum", "maximum", ("T", "T"), doc="maximum(a, b): the elementwise maximum"),
    "minimum": Builtin("minimum", "minimum", ("T", "T"), doc="minimum(a, b): the elementwise minimum"),
    "where": Builtin(
        "where", "where", ("T", "T", "T"), doc="where(cond, a, b): a where cond is true, else b"
    ),
    # reductions
    **_fns(
        "sum mean prod amax amin logsumexp", ("T", "I"), "{name}(x, dim=, keepdim=): reduce x", kw=_RED_KW
    ),
    **_fns(
        "max min",
        ("T", "A"),
        "{name}(x) over all elements, {name}(x, dim=) along dim, {name}(a, b) elementwise",
        kw=_RED_KW,
    ),
    "norm": Builtin("norm", "norm", ("T", "N"), {"p": "N", **_RED_KW}, "norm(x, p=2, dim=): the p-norm"),
    **_fns(
        "var std",
        ("T", "I"),
        "{name}(x, dim=, correction=1, keepdim=): variance / standard deviation",
        kw={**_RED_KW, "correction": "N", "unbiased": "A"},
    ),
    # linear algebra and shape
    "matmul": Builtin(
        "matmul", "matmul", ("T", "T"), doc="matmul(a, b): matrix product (also a @ b)", size=_size_of_product
    ),
    "mm": Builtin("mm", "mm", ("T", "T"), doc="mm(a, b): product of two matrices", size=_size_of_product),
    "dot": Builtin("dot", "dot", ("T", "T"), doc="dot(a, b): the dot product of two vectors"),
    "outer": Builtin(
        "outer", "outer", ("T", "T"), doc="outer(a, b): the outer product", size=_size_of_product
    ),
    "transpose": Builtin(
        "transpose", "transpose", ("T", "I", "I"), doc="transpose(x, d0, d1): swap two dims"
    ),
    "permute": Builtin("permute", "permute", ("T", "*I"), doc="permute(x, dims): reorder the dimensions"),
    "reshape": Builtin(
        "reshape", "reshape", ("T", "*I"), doc="reshape(x, *shape): the same values, a new shape"
    ),
    "view": Builtin("view", "method:view", ("T", "*I"), doc="view(x, *shape): a view with a new shape"),
    "flatten": Builtin(
        "flatten",
        "flatten",
        ("T", "I", "I"),
        {"start_dim": "I", "end_dim": "I"},
        "flatten(x, start_dim=0, end_dim=-1): collapse dimensions",
    ),
    "squeeze": Builtin(
        "squeeze", "squeeze", ("T", "I"), {"dim": "I"}, "squeeze(x, dim=): drop dims of size 1"
    ),
    "unsqueeze": Builtin(
        "unsqueeze", "unsqueeze", ("T", "I"), {"dim": "I"}, "unsqueeze(x, dim): insert a dim of size 1"
    ),
    "cat": Builtin("cat", "cat", ("L", "I"), {"dim": "I"}, "cat([a, b], dim=0): join along an existing dim"),
    "stack": Builtin(
        "stack", "stack", ("L", "I"), {"dim": "I"}, "stack([a, b], dim=0): join along a new dim"
    ),
    "expand": Builtin(
        "expand", "method:expand", ("T", "*I"), doc="expand(x, *sizes): broadcast to a larger shape"
    ),
    "softmax": Builtin(
        "softmax", "softmax", ("T", "I"), {"dim": "I"}, "softmax(x, dim): exp(x) / sum(exp(x))"
    ),
    "log_softmax": Builtin(
        "log_softmax",
        "log_softmax",
        ("T", "I"),
        {"dim": "I"},
        "log_softmax(x, dim): log(softmax(x, dim)), computed stably",
    ),
    # autograd
    "grad": Builtin(
        "grad",
        "autograd.grad",
        ("L", "L"),
        {
            "grad_outputs": "L",
            "retain_graph": "A",
            "create_graph": "A",
            "allow_unused": "A",
            "materialize_grads": "A",
        },
        "grad(outputs, inputs, grad_outputs=, retain_graph=, create_graph=, allow_unused=): "
        "a tuple of gradients, one per input",
    ),
    "detach": Builtin("detach", "detach", ("T",), doc="detach(x): the same values, cut from the graph"),
    "jacobian": Builtin(
        "jacobian",
        "autograd.functional.jacobian",
        ("F", "L"),
        {"create_graph": "A", "strict": "A", "vectorize": "A"},
        "jacobian(f, x): the Jacobian of f at x",
    ),
    "hessian": Builtin(
        "hessian",
        "autograd.functional.hessian",
        ("F", "L"),
        {"create_graph": "A", "strict": "A"},
        "hessian(f, x): the Hessian of a scalar function f at x",
    ),
    "gradcheck": Builtin(
        "gradcheck",
        "autograd.gradcheck",
        ("F", "L"),
        {"eps": "N", "atol": "N", "rtol": "N", "raise_exception": "A"},
        "gradcheck(f, x): compare analytic and finite-difference gradients (x float64)",
    ),
    # Python's
    "range": Builtin("range", "py:range", ("A", "A", "A"), doc="range(n), range(a, b, step): whole numbers"),
    "len": Builtin("len", "py:len", ("A",), doc="len(x): the size of x's first dimension"),
    "float": Builtin("float", "py:float", ("A",), doc="float(x): a one-element tensor as a Python number"),
}

# dtypes, usable as `dtype=` arguments and compared with `x.dtype`
DTYPES = ("float32", "float64", "double", "int64", "long", "bool")

# Tensor attributes: language name -> engine attribute
ATTRIBUTES: dict[str, str] = {
    "grad": "grad",
    "requires_grad": "requires_grad",
    "is_leaf": "is_leaf",
    "grad_fn": "grad_fn",
    "retains_grad": "retains_grad",
    "shape": "shape",
    "dtype": "dtype",
    "data": "data",
    "T": "T",
    "ndim": "ndim",
    "version": "version",
}
# Attributes that can be assigned (`x.grad = none`, as an optimizer's zero_grad does).
SETTABLE = ("grad", "requires_grad", "data")


def _methods(
    names: str, args: tuple[str, ...] = (), kw: dict[str, str] | None = None, doc: str = "", **extra: Any
) -> dict[str, Builtin]:
    return {n: Builtin(n, n, args, dict(kw or {}), doc.format(name=n), **extra) for n in names.split()}


METHODS: dict[str, Builtin] = {
    "backward": Builtin(
        "backward",
        "backward",
        ("T", "A", "A"),
        {"gradient": "T", "retain_graph": "A", "create_graph": "A", "inputs": "L"},
        "x.backward(gradient=, retain_graph=, create_graph=): the statement `backward x`",
    ),
    **_methods(
        "detach detach_ retain_grad zero_ clone item tolist numel dim is_inference float double contiguous",
        doc="x.{name}()",
    ),
    "requires_grad_": Builtin("requires_grad_", "requires_grad_", ("A",), doc="x.requires_grad_(b=true)"),
    "size": Builtin("size", "size", ("I",), doc="x.size(dim=): the shape, or one dimension of it"),
    **_methods("add_ sub_ mul_ div_", ("A",), doc="x.{name}(v): in place"),
    "fill_": Builtin("fill_", "fill_", ("N",), doc="x.fill_(v): set every element to v, in place"),
    "copy_": Builtin("copy_", "copy_", ("T",), doc="x.copy_(t): copy t's values into x, in place"),
    **_methods(
        "clamp_ relu_ sigmoid_ exp_ pow_ abs_ neg_ sqrt_",
        ("A",),
        {"min": "N", "max": "N"},
        doc="x.{name}(...): in place",
    ),
    **_methods(
        "sin cos tan asin acos atan sinh cosh tanh exp log log2 log10 log1p expm1 sqrt rsqrt abs sign relu "
        "sigmoid softplus erf neg reciprocal isnan",
        doc="x.{name}(): elementwise",
    ),
    "clamp": Builtin("clamp", "clamp", ("N", "N"), {"min": "N", "max": "N"}, "x.clamp(min=, max=)"),
    "pow": Builtin("pow", "pow", ("A",), doc="x.pow(y): x ** y"),
    **_methods("maximum minimum", ("T",), doc="x.{name}(y): elementwise"),
    **_methods(
        "sum mean prod amax amin logsumexp var std any all",
        ("I",),
        dict(_RED_KW, correction="N"),
        doc="x.{name}(dim=, keepdim=)",
    ),
    **_methods("max min", ("A",), _RED_KW, doc="x.{name}(dim=, keepdim=)"),
    "norm": Builtin("norm", "norm", ("N",), {"p": "N", **_RED_KW}, "x.norm(p=2, dim=)"),
    **_methods("matmul mm", ("T",), doc="x.{name}(y): matrix product", size=_size_of_product),
    "dot": Builtin("dot", "dot", ("T",), doc="x.dot(y): dot product"),
    "outer": Builtin("outer", "outer", ("T",), doc="x.outer(y): outer product"),
    **_methods("reshape view expand permute", ("*I",), doc="x.{name}(*shape)"),
    "transpose": Builtin("transpose", "transpose", ("I", "I"), doc="x.transpose(d0, d1)"),
    "flatten": Builtin("flatten", "flatten", ("I", "I"), {"start_dim": "I", "end_dim": "I"}, "x.flatten()"),
    **_methods("squeeze unsqueeze", ("I",), {"dim": "I"}, doc="x.{name}(dim)"),
    **_methods("softmax log_softmax", ("I",), {"dim": "I"}, doc="x.{name}(dim)"),
    "to": Builtin("to", "to", ("A",), {"dtype": "A"}, "x.to(dtype): a copy of another dtype"),
    "expand_as": Builtin("expand_as", "expand_as", ("T",), doc="x.expand_as(y)"),
}

# Methods of a grad_fn node (`y.grad_fn.next_functions`, `y.grad_fn.name()`), for exploring a graph.
NODE_ATTRIBUTES = ("next_functions", "variable")
NODE_METHODS = ("name",)

BUILTINS: tuple[str, ...] = tuple(sorted(FUNCTIONS)) + DTYPES + ("pi", "e", "inf", "nan", "_", "ans")
