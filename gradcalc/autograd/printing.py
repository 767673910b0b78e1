"""PyTorch's `repr(tensor)`, reproduced on NumPy arrays.

The output matches PyTorch 2.13 character for character, under the same default dtype (defaults.py: `dtype=`
is shown for a floating dtype other than the default) and the default print options (precision 4, threshold
1000, edgeitems 3, linewidth 80). The rules follow `torch/_tensor_str.py`:

* one formatter is chosen for the whole tensor (from the elements that are shown): integer dtypes and bool
  print with `str`; floats print in "int mode" (`6.`) when every nonzero finite value is integral, in
  scientific notation (`1.0000e-05`) when the nonzero finite magnitudes span more than a factor of 1000,
  exceed 1e8 or go below 1e-4, and with 4 decimals otherwise; every element is right-aligned to the widest
  nonzero finite one;
* rows wrap at 80 columns; a tensor of more than 1000 elements is summarized to its first and last 3
  entries along every dimension longer than 6, with `...` in between;
* suffixes (`size=`, `dtype=`, `grad_fn=` or `requires_grad=True`) follow the contents, each moving to a new
  line when it would overflow the current one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .defaults import default_float
from .meta import is_meta

__all__ = ["tensor_repr"]

_PRECISION = 4
_THRESHOLD = 1000
_EDGEITEMS = 3
_LINEWIDTH = 80
_PREFIX = "tensor("
_ALWAYS_IMPLIED = (np.dtype(np.int64), np.dtype(np.bool_))  # never shown: besides them, the default float

_Format = Callable[[Any], str]


def tensor_repr(
    data: np.ndarray,
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    dtype_prefix: str = "torch.",
    default_dtype: np.dtype | None = None,
) -> str:
    """PyTorch's repr of a tensor holding `data` (under the default dtype in force: defaults.py).

    `grad_fn` is the class name of the node that made the tensor (`"MulBackward0"`); when it is given,
    `requires_grad=True` is implied and not printed. `dtype_prefix` precedes the dtype's name in the
    `dtype=` suffix: `"torch."` as PyTorch prints it, `""` for gradcalc's own language. `default_dtype` is the
    default floating dtype to print under (None: the one in force).
    """
    default = default_float() if default_dtype is None else default_dtype
    if is_meta(data):  # PyTorch's `tensor(..., device='meta', size=(2, 3))`
        suffixes = ["device='meta'", f"size={tuple(data.shape)}"]
        if data.dtype != default and data.dtype not in _ALWAYS_IMPLIED:
            suffixes.append(f"dtype={dtype_prefix}{data.dtype.name}")
        if grad_fn is not None:
            suffixes.append(f"grad_fn=<{grad_fn}>")
        elif requires_grad:
            suffixes.append("requires_grad=True")
        return _add_suffixes(_PREFIX + "...", suffixes, len(_PREFIX))
    data = np.asarray(data)
    if data.dtype.kind not in "biuf":
        raise TypeError(f"cannot print a tensor of dtype {data.dtype}")
    indent = len(_PREFIX)
    dtype_suffix = f"dtype={dtype_prefix}{data.dtype.name}"
    suffixes = []
    if data.size == 0:
        # No elements to infer the dtype from, so anything but the default float dtype is spelled out.
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype != default:
            suffixes.append(dtype_suffix)
        body = "[]"
    else:
        if data.dtype != default and data.dtype not in _ALWAYS_IMPLIED:
            suffixes.append(dtype_suffix)
        summarize = data.size > _THRESHOLD
        fmt, width = _formatter(_summarized(data) if summarize else data)
        body = _body(data, indent, summarize, fmt, width)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(_PREFIX + body, suffixes, indent)


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows: the first and last `_EDGEITEMS` along each long dimension."""
    index = [
        np.r_[0:_EDGEITEMS, n - _EDGEITEMS : n] if n > 2 * _EDGEITEMS else np.arange(n) for n in data.shape
    ]
    return data[np.ix_(*index)] if index else data


def _formatter(sample: np.ndarray) -> tuple[_Format, int]:
    """The element formatter for a tensor whose shown elements are `sample`, and its column width."""
    flat = sample.reshape(-1)
    if flat.dtype.kind != "f":
        width = max(1, *(len(str(v)) for v in flat.tolist()))
        return (lambda v: str(v).rjust(width)), width

    shown = flat[np.isfinite(flat) & (flat != 0)]
    int_mode, sci_mode, width = True, False, 1
    if shown.size:
        magnitudes = np.abs(shown).astype(np.float64)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        int_mode = bool(np.all(shown == np.ceil(shown)))
        sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        values = shown.tolist()
        if sci_mode:
            width = max(len(f"{v:.{_PRECISION}e}") for v in values)
        elif int_mode:
            # the appended "." marks the tensor as floating
            width = max(len(f"{v:.0f}") + 1 for v in values)
        else:
            width = max(len(f"{v:.{_PRECISION}f}") for v in values)

    def fmt(v: float) -> str:
        if sci_mode:
            text = f"{v:.{_PRECISION}e}"
        elif int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{_PRECISION}f}"
        return text.rjust(width)

    return fmt, width


def _body(data: np.ndarray, indent: int, summarize: bool, fmt: _Format, width: int) -> str:
    """The bracketed contents of `data`, whose first character sits at column `indent`."""
    if data.ndim == 0:
        return fmt(data.item())
    n = len(data)
    edges = summarize and n > 2 * _EDGEITEMS
    if data.ndim == 1:
        if edges:
            cells = [*map(fmt, data[:_EDGEITEMS].tolist()), " ...", *map(fmt, data[-_EDGEITEMS:].tolist())]
        else:
            cells = [fmt(v) for v in data.tolist()]
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [*range(_EDGEITEMS), None, *range(n - _EDGEITEMS, n)] if edges else range(n)
    slices = ["..." if i is None else _body(data[i], indent + 1, summarize, fmt, width) for i in rows]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """`text` closed by `)`, with `suffixes` appended, wrapping each that would pass the line width."""
    parts = [text]
    # PyTorch's own measure of the last line (it counts two more than the line's length).
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
