"""The `:vars` table: each workspace name with its shape, dtype, requires_grad, is_leaf, grad_fn and grad."""

from __future__ import annotations

import warnings

from gradcalc import Tensor

from ..values.convert import describe
from ..values.surfaces import surface_of
from .names import HIDDEN  # the last printed value: not a variable the user made
from .render import torch_repr

HEADER = ("name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "grad")


def _shape(t: Tensor) -> str:
    s = tuple(t.shape)
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def _grad(t: Tensor) -> str:
    with warnings.catch_warnings():  # reading a non-leaf's .grad warns; the table only looks
        warnings.simplefilter("ignore")
        g = t.grad
    if g is None:
        return "None"
    if g.numel() <= 4:
        return " ".join(torch_repr(g).split())
    return f"tensor of shape {_shape(g)}"


def _row(name: str, value: object, tensor_type: type[Tensor]) -> tuple[str, ...]:
    if isinstance(value, tensor_type):
        fn = value.grad_fn
        return (
            name,
            _shape(value),
            value.dtype.name,
            str(value.requires_grad),
            str(value.is_leaf),
            fn.name() if fn is not None else "None",
            _grad(value),
        )
    surface = surface_of(value)
    shown = surface.summary(value) if surface is not None else describe(value)  # net  Sequential  1,153 parameters
    if isinstance(value, (bool, int, float, str)) or value is None:
        shown = f"{shown}: {value!r}"
    return (name, shown, "", "", "", "", "")


def vars_table(workspace: dict[str, object]) -> str:
    """The workspace as an aligned table (or a note that it is empty)."""
    rows = [_row(n, v, Tensor) for n, v in sorted(workspace.items()) if n not in HIDDEN]
    if not rows:
        return "(the workspace is empty)"
    table = [HEADER, *rows]
    widths = [max(len(r[i]) for r in table if r[2] or i == 0 or r is HEADER) for i in range(len(HEADER))]
    lines = []
    for r in table:
        if r is not HEADER and not r[2]:  # not a tensor: name and kind only
            lines.append(f"{r[0].ljust(widths[0])}  {r[1]}")
        else:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)
