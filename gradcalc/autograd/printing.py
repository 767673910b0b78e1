"""PyTorch's `repr(tensor)`, reproduced on NumPy arrays.

The output matches PyTorch 2.13 character for character, under the same default dtype (defaults.py: `dtype=`
is shown for a floating dtype other than the default) and the same print options:
`set_printoptions(precision=, threshold=, edgeitems=, linewidth=, profile=, sci_mode=)`
is PyTorch's (defaults precision 4, threshold 1000, edgeitems 3, linewidth 80, sci_mode chosen per tensor;
the profiles "default", "short" and "full"), and so are `get_printoptions()` and `printoptions(**kwargs)`.
Like PyTorch's, the options are global. The rules follow `torch/_tensor_str.py` (shown with the defaults):

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .defaults import default_float
from .meta import is_meta

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


class _PrintOptions:
    """PyTorch's `PRINT_OPTS`: the options every repr reads."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision = 4
        self.threshold: float = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

# PyTorch's profiles: (precision, threshold, edgeitems, linewidth)
PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}
MAX_PRECISION = 1000  # digits after the point: one number may print a line, not megabytes


def _whole(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"set_printoptions: {name} must be a whole number, not {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        shown = value if abs(value) < 10**15 else f"{float(value):.3g}"
        raise ValueError(f"set_printoptions: {name} must be a whole number {bounds}, not {shown}")
    return int(value)


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (torch.set_printoptions): digits, summarizing, line width, scientific notation.

    precision: digits after the point (4). threshold: tensors with more elements (1000) are summarized to
    edgeitems (3) at each end of each dimension. linewidth: where rows wrap (80). sci_mode: scientific
    notation always (True), never (False), or chosen per tensor (None, the default; a call without it
    chooses again). profile: "default", "short" (precision 2, edgeitems 2) or "full" (never summarize),
    which the other arguments then adjust.

    Unlike PyTorch's, an argument that could not print (a negative precision, an unknown profile) is refused
    here rather than when the next tensor prints; nothing changes then.
    """
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', not {profile!r}")
    if precision is not None:
        precision = _whole("precision", precision, 0, MAX_PRECISION)
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)):
            raise TypeError(f"set_printoptions: threshold must be a number, not {threshold!r}")
        if math.isnan(threshold):
            raise ValueError("set_printoptions: threshold must be a number, not nan")
    if edgeitems is not None:
        edgeitems = _whole("edgeitems", edgeitems, 0)
    if linewidth is not None:
        linewidth = _whole("linewidth", linewidth)
    if sci_mode is not None and not isinstance(sci_mode, (bool, np.bool_)):
        raise TypeError(f"set_printoptions: sci_mode must be True, False or None, not {sci_mode!r}")
    opts = PRINT_OPTS
    if profile is not None:
        opts.precision, opts.threshold, opts.edgeitems, opts.linewidth = PROFILES[profile]
    if precision is not None:
        opts.precision = precision
    if threshold is not None:
        opts.threshold = threshold
    if edgeitems is not None:
        opts.edgeitems = edgeitems
    if linewidth is not None:
        opts.linewidth = linewidth
    opts.sci_mode = None if sci_mode is None else bool(sci_mode)  # PyTorch sets it on every call


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for set_printoptions (torch.get_printoptions)."""
    return {name: getattr(PRINT_OPTS, name) for name in _PrintOptions.__slots__}


@contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Set print options for the `with` block only (torch.printoptions)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


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
        return _add_suffixes(_PREFIX + "...", suffixes, len(_PREFIX), PRINT_OPTS.linewidth)
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
        opts = PRINT_OPTS
        if not opts.edgeitems:  # PyTorch names the size then, summarized or not
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype != default and data.dtype not in _ALWAYS_IMPLIED:
            suffixes.append(dtype_suffix)
        summarize = data.size > opts.threshold
        fmt, width = _formatter(_summarized(data, opts.edgeitems) if summarize else data, opts)
        body = _body(data, indent, summarize, fmt, width, opts)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(_PREFIX + body, suffixes, indent, PRINT_OPTS.linewidth)


def _summarized(data: np.ndarray, edgeitems: int) -> np.ndarray:
    """The elements a summarized print shows: the first and last `edgeitems` along each long dimension."""
    if edgeitems == 0:
        # PyTorch's `get_summarized_data`: a 1-d tensor keeps all (its `self[-0:]` is the whole), more
        # dimensions none
        return data if data.ndim <= 1 else data[tuple(slice(0, 0) for _ in data.shape)]
    index = [
        np.r_[0:edgeitems, n - edgeitems : n] if n > 2 * edgeitems else np.arange(n) for n in data.shape
    ]
    return data[np.ix_(*index)] if index else data


def _formatter(sample: np.ndarray, opts: _PrintOptions) -> tuple[_Format, int]:
    """The element formatter for a tensor whose shown elements are `sample`, and its column width."""
    flat = sample.reshape(-1)
    if flat.dtype.kind != "f":
        width = max([1, *(len(str(v)) for v in flat.tolist())])  # nothing shown (edgeitems=0): 1
        return (lambda v: str(v).rjust(width)), width

    precision = opts.precision
    shown = flat[np.isfinite(flat) & (flat != 0)]
    int_mode, sci_mode, width = True, False, 1
    if shown.size:
        magnitudes = np.abs(shown).astype(np.float64)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        int_mode = bool(np.all(shown == np.ceil(shown)))
        if opts.sci_mode is None:
            sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            sci_mode = opts.sci_mode
        values = shown.tolist()
        if sci_mode:
            width = max(len(f"{v:.{precision}e}") for v in values)
        elif int_mode:
            # the appended "." marks the tensor as floating
            width = max(len(f"{v:.0f}") + 1 for v in values)
        else:
            width = max(len(f"{v:.{precision}f}") for v in values)

    def fmt(v: float) -> str:
        if sci_mode:
            text = f"{v:.{precision}e}"
        elif int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{precision}f}"
        return text.rjust(width)

    return fmt, width


def _body(data: np.ndarray, indent: int, summarize: bool, fmt: _Format, width: int, opts: _PrintOptions) -> str:
    """The bracketed contents of `data`, whose first character sits at column `indent`."""
    if data.ndim == 0:
        return fmt(data.item())
    n = len(data)
    e = opts.edgeitems
    edges = summarize and n > 2 * e
    if data.ndim == 1:
        if summarize and not e:
            cells = ["..."]  # PyTorch's: no elements, and no leading blank
        elif edges:
            cells = [*map(fmt, data[:e].tolist()), " ...", *map(fmt, data[n - e:].tolist())]
        else:
            cells = [fmt(v) for v in data.tolist()]
        per_line = max(1, math.floor((opts.linewidth - indent) / (width + 2)))
        lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [*range(e), None, *range(n - e, n)] if edges else range(n)
    slices = ["..." if i is None else _body(data[i], indent + 1, summarize, fmt, width, opts) for i in rows]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    """`text` closed by `)`, with `suffixes` appended, wrapping each that would pass the line width."""
    parts = [text]
    # PyTorch's own measure of the last line (it counts two more than the line's length).
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
