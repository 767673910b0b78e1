"""How a built-in's parameters read: the kind of argument each takes (convert.py's `T L I N D A F`), derived from
the engine callable's signature and PyTorch's parameter names, and the signature as `:help` and messages show
it (`sum(x, dim=, keepdim=False)`). Shared by the built-ins, the failed-call messages (calls.py), modules and
optimizers (nn.py) and the transforms."""

from __future__ import annotations

import inspect
from collections.abc import Callable

# PyTorch's parameter names, and the kind of argument each takes (when the signature does not annotate it).
PARAMETER_KINDS: dict[str, str] = {
    **dict.fromkeys(
        ("dim", "dims", "size", "shape", "start_dim", "end_dim", "dim0", "dim1", "chunks", "steps", "n", "m",
         "index", "split_size_or_sections", "diagonal", "source", "destination", "normalized_shape"),
        "I",
    ),
    **dict.fromkeys(
        ("min", "max", "p", "beta", "threshold", "fill_value", "value", "alpha", "eps", "atol", "rtol",
         "correction", "start", "end", "step", "length"),
        "N",
    ),
    **dict.fromkeys(("tensors", "outputs", "inputs", "grad_outputs"), "L"),
    **dict.fromkeys(("src", "condition", "cond", "mat1", "mat2"), "T"),
    **dict.fromkeys(("func", "fn", "f", "hook"), "F"),
    "data": "D",
}

# Where the signature alone says the wrong thing: `max(a, b)` is elementwise, so max's second argument given
# by position may be a tensor as well as a dimension; `where(c, 1, 0)` makes float64 tensors of its numbers.
OVERRIDES: dict[tuple[str, str], str] = {
    ("where", "a"): "T",
    ("where", "b"): "T",
}
POSITIONAL_OVERRIDES: dict[tuple[str, str], str] = {
    ("max", "dim"): "A",
    ("min", "dim"): "A",
}

def engine_parameters(fn: Callable[..., object], method: bool) -> list[inspect.Parameter]:
    """The parameters of engine callable `fn` as the language passes them (a method's without its tensor)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    return params[1:] if method and params and params[0].kind is not inspect.Parameter.VAR_POSITIONAL else params


def kind_of(name: str, param: inspect.Parameter, first: bool) -> str:
    """The kind of argument a parameter takes (see the module docstring for the order of the rules)."""
    override = OVERRIDES.get((name, param.name))
    if override is not None:
        return override
    annotation = param.annotation
    if annotation is not inspect.Parameter.empty:
        parts = {p.strip() for p in str(annotation).split("|")} - {"None"}
        if parts == {"Tensor"}:
            return "T"
        if parts <= {"Sequence[Tensor]", "list[Tensor]", "tuple[Tensor, ...]", "Tensor"} and parts != {"Tensor"}:
            return "L"
        if parts <= {"int", "tuple[int, ...]", "Sequence[int]"} or parts == {"int", "tuple[int, ...]", "str"}:
            return "I"  # (a convolution's padding may be "same" or "valid": as_ints passes a string on)
        if parts <= {"float", "int | float"} and "float" in parts:
            return "N"
        if any(p.startswith("Callable") for p in parts):
            return "F"
    kind = PARAMETER_KINDS.get(param.name)
    if kind is not None:
        return kind
    return "T" if first else "A"


def derive_spec(
    name: str, fn: Callable[..., object], method: bool, plain: bool = False
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The argument kinds of built-in `name` from the signature of its engine callable `fn` (`plain`: every
    argument as it is)."""
    positional: list[str] = []
    keywords: dict[str, str] = {}
    for i, p in enumerate(engine_parameters(fn, method)):
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        kind = "A" if plain else kind_of(name, p, first=(i == 0 and not method))
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.append("*" + kind)
            continue
        if p.kind is not inspect.Parameter.KEYWORD_ONLY:
            positional.append(POSITIONAL_OVERRIDES.get((name, p.name), kind))
        if p.kind is not inspect.Parameter.POSITIONAL_ONLY:
            keywords[p.name] = kind
    return tuple(positional), keywords


def signature_text(name: str, fn: Callable[..., object], method: bool = False) -> str:
    """`sum(x, dim=, keepdim=False)`: how `:help` and messages show a built-in's parameters."""
    parts = []
    for p in engine_parameters(fn, method):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:  # (`*args`, Python's name for any values: `*values`)
            parts.append(f"*{'values' if p.name == 'args' else p.name}")
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        elif p.default is inspect.Parameter.empty:
            parts.append(p.name)
        elif p.default is None or isinstance(p.default, (bool, int, float, str)):
            parts.append(f"{p.name}={_shown(p.default)}")
        elif isinstance(p.default, tuple) and p.default and all(type(v) is float for v in p.default):
            parts.append(f"{p.name}={_shown(p.default)}")  # Adam's betas=(0.9, 0.999)
        else:  # a sentinel that stands for none (`sum(x, dim=none)`), or a default not to spell out
            parts.append(f"{p.name}={'none' if repr(p.default) == 'None' else ''}")
    return f"{'x.' if method else ''}{name}({', '.join(parts)})"


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return str(value)  # Adam's betas=(0.9, 0.999)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) and value else str(value)


