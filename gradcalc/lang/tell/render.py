"""How values print: `torch` (PyTorch's reprs), `plain` (bare numbers for shell pipelines) and `json`.

LANGUAGE.md sections 1 and 6. `render(value, fmt)` is what an expression statement prints; `render_print`
is how `print` shows one argument (strings without quotes). Tensor reprs come from the engine's
`tensor_repr`, with `dtype_prefix=""` so that float32 shows `dtype=float32`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcalc import DType, Tensor
from gradcalc.autograd.graph import Node
from gradcalc.autograd.printing import tensor_repr
from gradcalc.autograd.tensor import is_parameter

from ..values.surfaces import surface_of

FORMATS = ("torch", "plain", "json")
_FLOAT64 = np.dtype("float64")


def _engine() -> tuple[type, type, type]:

    return Tensor, Node, DType


def _array(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _grad_fn_name(t: Any) -> str | None:
    fn = t.grad_fn
    return fn.name() if fn is not None else None


# ---------------------------------------------------------------------------------------------------
# torch


def torch_repr(value: Any) -> str:
    """PyTorch's repr of a value (under float64 default dtype), as LANGUAGE.md section 1 lists it."""
    Tensor, Node, DType = _engine()
    if isinstance(value, Tensor):
        text = tensor_repr(
            _array(value), requires_grad=value.requires_grad, grad_fn=_grad_fn_name(value), dtype_prefix="",
            default_dtype=_FLOAT64,  # the language's default dtype, whatever Python code has set
        )
        return "Parameter containing:\n" + text if is_parameter(value) else text  # a module's, as PyTorch shows it
    fields = getattr(type(value), "__match_args__", None) if isinstance(value, tuple) else None
    if fields:  # PyTorch's named tuples, as PyTorch prints them: `torch.return_types.max(\nvalues=...,\nindices=...)`
        items = ",\n".join(f"{f}={torch_repr(v)}" for f, v in zip(fields, value, strict=False))
        return f"torch.return_types.{type(value).__name__}(\n{items})"
    if isinstance(value, tuple):  # also x.shape, which prints (2, 3) rather than torch.Size([2, 3])
        items = [torch_repr(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(torch_repr(v) for v in value) + "]"
    if isinstance(value, Node):
        return f"<{value.name()}>"
    if isinstance(value, DType):
        return value.name
    return _object_repr(value)


def _object_repr(value: Any) -> str:
    """A value that is none of the above: what its surface (objects.py) shows, else its repr."""
    surface = surface_of(value)
    return surface.show(value) if surface is not None else repr(value)


def torch_str(value: Any) -> str:
    """How `print` shows a value: strings as themselves, everything else as its repr."""
    return value if isinstance(value, str) else torch_repr(value)


# ---------------------------------------------------------------------------------------------------
# plain


def plain_number(x: Any) -> str:
    """The shortest round-trip decimal, without `.0` on whole values: 6, 0.5, -2.6145744834544478, inf."""
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    text = str(x if isinstance(x, np.floating) else float(x))  # NumPy's str is shortest for float32 too
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _plain_rows(data: np.ndarray) -> list[str]:
    if data.ndim == 0:
        return [plain_number(data[()])]
    if data.ndim == 1:
        return [" ".join(plain_number(v) for v in data)]
    if data.ndim == 2:
        return [" ".join(plain_number(v) for v in row) for row in data]
    out: list[str] = []
    for i, block in enumerate(data):  # higher dimensions: 2-d blocks separated by an empty line
        if i:
            out.append("")
        out.extend(_plain_rows(block))
    return out


def plain(value: Any) -> str:
    """`--format plain`: numbers for shell pipelines (LANGUAGE.md section 6)."""
    Tensor, Node, DType = _engine()
    if isinstance(value, Tensor):
        return "\n".join(_plain_rows(_array(value)))
    if value is None:
        return "none"
    if isinstance(value, (bool, int, float)):
        return plain_number(value)
    if isinstance(value, (tuple, list)):
        if all(isinstance(v, (bool, int, float)) for v in value):  # x.shape: 2 3
            return " ".join(plain_number(v) for v in value)
        return "\n".join(plain(v) for v in value)
    if isinstance(value, Node):
        return value.name()
    if isinstance(value, DType):
        return value.name
    if isinstance(value, str):
        return value
    return repr(value)


# ---------------------------------------------------------------------------------------------------
# json


def _json_value(value: Any) -> Any:
    Tensor, Node, DType = _engine()
    if isinstance(value, Tensor):
        return tensor_json(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    if isinstance(value, Node):
        return value.name()
    if isinstance(value, DType):
        return value.name
    return repr(value)


def tensor_json(t: Any) -> dict[str, Any]:
    data = _array(t)
    return {
        "value": data.tolist(),
        "shape": list(data.shape),
        "dtype": t.dtype.name,
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": _grad_fn_name(t),
    }


def to_json(value: Any) -> str:
    """`--format json`: one object per value; NaN and infinities as NaN/Infinity (as Python's json writes)."""
    import json  # (here, not at the top: only `--format json` needs it, and it costs a cold start ~1 ms)

    Tensor = _engine()[0]
    obj = tensor_json(value) if isinstance(value, Tensor) else {"value": _json_value(value)}
    return json.dumps(obj, allow_nan=True)


RENDER: dict[str, Callable[[Any], str]] = {"torch": torch_repr, "plain": plain, "json": to_json}
RENDER_PRINT: dict[str, Callable[[Any], str]] = {"torch": torch_str, "plain": plain, "json": to_json}


def _batched(value: object) -> bool:
    """A tensor inside func.vmap, which stands for one sample while it holds the batch: it prints as PyTorch
    prints one (`BatchedTensor(lvl=1, bdim=0, value=...)`) in every format, its values being the batch's."""
    Tensor = _engine()[0]
    return isinstance(value, Tensor) and type(value) is not Tensor


def render(value: Any, fmt: str) -> str:
    """What an expression statement prints for `value`."""
    return repr(value) if _batched(value) else RENDER[fmt](value)


def render_print(values: list[Any], fmt: str) -> str:
    """What `print a, b` prints: the arguments separated by spaces (json: one object per line)."""
    sep = "\n" if fmt == "json" else " "
    return sep.join(repr(v) if _batched(v) else RENDER_PRINT[fmt](v) for v in values)


__all__ = [
    "FORMATS",
    "plain",
    "plain_number",
    "render",
    "render_print",
    "tensor_json",
    "to_json",
    "torch_repr",
]
