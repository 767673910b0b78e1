"""The batching rules of particular operations (the families' are in batching.py): views and shapes, joins,
indexing, matrix products, reductions with more than a `dim`, softmax, the losses, and `nn`'s.

Each is `rule(args, dims, **params) -> (result, dim)` as batching.py describes, written with `bind`, and named by
its operation's spec (`vmap=spec.rule("cat_rule")`). Most put the batch dimension first (`front`) and shift the
sample's dims by one (`dims_arg`); the losses compute per element (`reduction="none"`) over the whole batch and
reduce each sample's part as the sample's own call would.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from . import batching as _families
from . import batching_moves as _moves
from . import spec as S
from .batched_tensor import BatchedTensor, shape_of
from .batching import (
    _NO_DIM,
    _shape_arg,
    batch_size,
    dims_arg,
    dtype_of,
    expand_rule,
    front,
    materialize,
    ndim,
    pad,
    pointwise,
    sample_dim,
)
from .dispatch import NAMED, NoRule, bind, to_front
from .ops.losses import reduction_of
from .reasons import worded
from .tensor import Tensor

_signatures: dict[str, inspect.Signature] = {}


def arguments(name: str, args: tuple, dims: tuple, params: dict) -> dict[str, tuple[Any, Any]]:
    """Every parameter of operation `name` (its defaults filled in) as (value, batch dim)."""
    sig = _signatures.get(name)
    if sig is None:
        op = S.op_of(name)
        sig = _signatures[name] = inspect.signature(op.raw)
    bound = sig.bind(*args, **params)
    bound.apply_defaults()
    positions = {n: i for i, n in enumerate(list(sig.parameters)[: len(args)])}
    return {n: (v, dims[positions[n]] if n in positions else None) for n, v in bound.arguments.items()}


def positional(rest: list[Any], first: Any, second: Any) -> tuple[Any, Any]:
    """The two parameters after a rule's tensor: as given by position (`rest`), else their keyword values."""
    return (rest[0] if rest else first, rest[1] if len(rest) > 1 else second)


def sample_shape(x: Any, d: Any) -> tuple[int, ...]:
    """The shape of one sample of `x` batched along `d` (None: `x` itself)."""
    shape = shape_of(x)
    return shape if d is None else shape[:d] + shape[d + 1:]


# -- views and shapes ---------------------------------------------------------------------------------------------
def _like_shape(name: str) -> S.BatchRule:
    """`view_as`/`reshape_as`/`expand_as`: to the sample's shape of `other` (batched or not)."""
    base = name[: -len("_as")]

    def rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
        (x, other), (d, do) = args, dims
        target = sample_shape(other, do)
        if d is None:  # only `other` batched: the same for every sample
            return bind(base, x, target), None
        if base == "expand":
            return expand_rule((x,), (d,), target)
        x = to_front(x, d)
        return bind(base, x, (shape_of(x)[0], *target)), 0

    return rule


view_as_rule, reshape_as_rule, expand_as_rule = (_like_shape(n) for n in ("view_as", "reshape_as", "expand_as"))


def flatten_rule(args: tuple, dims: tuple, start_dim: int = 0, end_dim: int = -1) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    start_dim, end_dim = positional(rest, start_dim, end_dim)
    x, rank = front(x, d)
    if rank == 0:
        return bind("reshape", x, (shape_of(x)[0], 1)), 0
    return bind("flatten", x, sample_dim(start_dim, rank), sample_dim(end_dim, rank)), 0


def transpose_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    (x, d0, d1), (d, *_) = args, dims
    x, rank = front(x, d)
    if rank == 0:
        return x, 0
    return bind("transpose", x, sample_dim(d0, rank), sample_dim(d1, rank)), 0


def t_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    x, rank = front(x, d)
    return (bind("transpose", x, 1, 2) if rank == 2 else x), 0


def permute_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    (x, *order), (d, *_) = args, dims
    x, rank = front(x, d)
    order = _shape_arg(tuple(order)) if order else ()
    return bind("permute", x, (0, *(sample_dim(i, rank) for i in order))), 0


def T_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:  # noqa: N802 - the property's name
    (x,), (d,) = args, dims
    x, rank = front(x, d)
    return bind("permute", x, (0, *range(rank, 0, -1))), 0


def mT_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:  # noqa: N802
    (x,), (d,) = args, dims
    x, rank = front(x, d)
    if rank < 2:
        raise RuntimeError(f"x.mT needs a tensor of at least 2 dimensions, this one has {rank}")
    return bind("transpose", x, -2, -1), 0


def H_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:  # noqa: N802
    (x,), (d,) = args, dims
    x, rank = front(x, d)
    if rank != 2:
        raise RuntimeError(f"x.H needs a matrix (2 dimensions), this tensor has {rank}: use x.mH")
    return bind("transpose", x, 1, 2), 0


def select_rule(args: tuple, dims: tuple, dim: Any = None, index: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim, index = positional(rest, dim, index)
    x, rank = front(x, d)
    return bind("select", x, sample_dim(dim, rank), index), 0


def narrow_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    (x, dim, start, length), (d, *_) = args, dims
    x, rank = front(x, d)
    return bind("narrow", x, sample_dim(dim, rank), start, length), 0


# -- joins ---------------------------------------------------------------------------------------------------------
def _joined(name: str) -> S.BatchRule:
    def rule(args: tuple, dims: tuple, dim: int = 0) -> tuple[Any, Any]:
        (tensors, *rest), (ds, *_) = args, dims
        if rest:
            dim = rest[0]
        size = batch_size(args, dims)
        items = [materialize(t, e, size) for t, e in zip(tensors, ds, strict=True)]
        rank = max(ndim(t) - 1 for t in items)
        if name == "stack":
            rank += 1  # the new dim counts among the result's
        elif rank == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        return bind(name, items, sample_dim(dim, rank)), 0

    return rule


cat_rule, stack_rule = _joined("cat"), _joined("stack")


def _pieces(name: str) -> S.BatchRule:
    def rule(args: tuple, dims: tuple, dim: int = 0) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        if name != "unbind" and len(rest) > 1:
            dim = rest[1]
        elif name == "unbind" and rest:
            dim = rest[0]
        x, rank = front(x, d)
        extra = (rest[0],) if name != "unbind" else ()
        out = bind(name, x, *extra, sample_dim(dim, rank))
        return out, (0,) * len(out)

    return rule


split_rule, chunk_rule, unbind_rule = _pieces("split"), _pieces("chunk"), _pieces("unbind")


# -- indexing ------------------------------------------------------------------------------------------------------
def _basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) and not isinstance(i, bool)
               for i in items)


def getitem_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """`x[index]`: a basic index (ints, slices, None, ...) after the batch dim; a tensor of indices, batched or
    not, into a batched or plain `x`, by advanced indexing with the batch's own positions."""
    (x, index), (d, di) = args, dims
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, Tensor) and dtype_of(i).kind == "b" for i in items) and (d is not None or di is not None):
        raise worded("vmap: We do not support batching operators that can support dynamic shape. Attempting to "
                     "batch over indexing with a boolean mask.", "indexing with a mask inside vmap gives each sample "
                     "its own number of elements, which one batch can't hold: use where(mask, x, 0) instead")
    if d is not None and di is None and _basic(index):
        return bind("__getitem__", to_front(x, d), (slice(None), *items)), 0
    if di is None and not isinstance(di, tuple) and d is not None:  # plain tensors of indices
        x = to_front(x, d)
        tensors = [i for i, it in enumerate(items) if isinstance(it, (Tensor, list, np.ndarray))]
        adjacent = tensors == list(range(tensors[0], tensors[-1] + 1)) if tensors else True
        out = bind("__getitem__", x, (slice(None), *items))
        if adjacent or Ellipsis in items:
            return out, 0
        # advanced indices apart: NumPy's (and PyTorch's) rule puts their dims first, ahead of the batch's
        return out, len(np.broadcast(*[np.empty(np.shape(items[i]), bool) if not isinstance(items[i], Tensor)
                                       else np.empty(shape_of(items[i]), bool) for i in tensors]).shape)
    if isinstance(di, int) and not isinstance(index, tuple):  # one batched tensor of indices
        size = shape_of(index)[di]
        idx = to_front(index, di)
        xb = materialize(x, d, size)
        positions = Tensor._make(np.arange(size).reshape((size,) + (1,) * (ndim(idx) - 1)), False, None)
        return bind("__getitem__", xb, (positions, idx)), 0
    raise NoRule

# -- matrix products ---------------------------------------------------------------------------------------------
def matmul_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """`matmul` over a batch: the batch dimensions first; a vector becomes a matrix of one row (or column) so
    that its samples stay apart, and a sample of fewer dimensions is padded after the batch dimension."""
    (a, b), (da, db) = args, dims
    ra, rb = ndim(a) - (da is not None), ndim(b) - (db is not None)
    if da is not None and db is not None and ra == 1 and rb == 1:  # a dot per sample, as PyTorch's rule
        out = bind("matmul", bind("unsqueeze", to_front(a, da), -2), bind("unsqueeze", to_front(b, db), -1))
        return bind("squeeze", bind("squeeze", out, -1), -1), 0
    if da is not None:
        a = to_front(a, da)
        if ra == 1:  # (B, m) -> (B, 1.., 1, m): a row per sample, batched alongside b's batch dims
            a = pad(bind("unsqueeze", a, 1), max(rb, 2))
            out = bind("matmul", a, to_front(b, db) if db is not None else b)
            return bind("squeeze", out, -2 if rb >= 2 else -1), 0
        if db is not None:
            b = to_front(b, db)
            if rb == 1:  # (B, m) -> (B, 1.., m, 1): a column per sample
                b = pad(bind("unsqueeze", b, 2), ra)
                return bind("squeeze", bind("matmul", a, b), -1), 0
            rank = max(ra, rb)
            a, b = pad(a, rank), pad(b, rank)
            if rank == 2:
                return bind("bmm", a, b), 0
            return bind("matmul", a, b), 0
        if rb > 2:
            a = pad(a, rb)
        return bind("matmul", a, b), 0
    b = to_front(b, db)
    if rb == 1:  # a @ v for each v: a column per sample
        b = pad(bind("unsqueeze", b, 2), max(ra, 2))
        out = bind("matmul", a, b)
        return bind("squeeze", out, -1), 0
    if ra > 2:
        b = pad(b, ra)
    return bind("matmul", a, b), 0


def dot_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    return matmul_rule(args, dims)


def _checked_matmul(name: str, ra_want: int, rb_want: int) -> S.BatchRule:
    """mm, mv, bmm: their ranks checked as the sample's call would, then matmul's rule."""

    def rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
        (a, b), (da, db) = args, dims
        ra, rb = ndim(a) - (da is not None), ndim(b) - (db is not None)
        if (ra, rb) != (ra_want, rb_want):
            raise RuntimeError(f"{name}: expected {ra_want}-D and {rb_want}-D tensors, got {ra}-D and {rb}-D")
        return matmul_rule(args, dims)

    return rule


mm_rule, mv_rule, bmm_rule = _checked_matmul("mm", 2, 2), _checked_matmul("mv", 2, 1), _checked_matmul("bmm", 3, 3)


def outer_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    (a, b), (da, db) = args, dims
    size = batch_size(args, dims)
    a, b = materialize(a, da, size), materialize(b, db, size)
    return bind("mul", bind("unsqueeze", a, 2), bind("unsqueeze", b, 1)), 0


def addmm_rule(args: tuple, dims: tuple, *, beta: Any = 1, alpha: Any = 1) -> tuple[Any, Any]:
    (c, m1, m2), (dc, d1, d2) = args, dims
    prod, pd = matmul_rule((m1, m2), (d1, d2)) if (d1 is not None or d2 is not None) else (bind("mm", m1, m2), None)
    if alpha != 1:
        prod = bind("mul", prod, alpha)
    if beta != 1:
        c = bind("mul", c, beta)
    return pointwise("add")((c, prod), (dc, pd))


def linear_rule(args: tuple, dims: tuple, bias: Any = None) -> tuple[Any, Any]:
    """`linear(x, w, b)`: one `linear` of the whole batch when only `x` is batched (its batch dim is one of the
    rows); else `x @ w.mT + b`, by matmul's rule (a batch of weights: an ensemble, per-sample gradients)."""
    (x, w, *rest), (d, dw, *more) = args, dims
    db = None
    if rest:
        bias, db = rest[0], more[0]
    if dw is None and db is None:
        if d is None:
            return bind("linear", x, w, bias), None
        if d != ndim(x) - 1:  # the batch dim is not the features': linear maps the last dim only
            return bind("linear", x, w, bias), d
        return bind("linear", to_front(x, d), w, bias), 0
    wt = bind("transpose", to_front(w, dw), -1, -2) if dw is not None else bind("t", w)
    out, od = matmul_rule((x, wt), (d, 0 if dw is not None else None))
    if bias is None:
        return out, od
    return pointwise("add")((out, bias), (od, db))


# -- reductions and softmax -------------------------------------------------------------------------------------
def _over_all(name: str) -> S.BatchRule:
    """`prod`, `max`, `min`, `argmax`, `argmin` (a `dim` or none, `keepdim`): without a dim, each sample's
    elements flattened first."""

    def rule(args: tuple, dims: tuple, dim: Any = None, keepdim: bool = False, **params: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *rd) = args, dims
        dim, keepdim = positional(rest, dim, keepdim)
        if name in ("max", "min") and (isinstance(dim, Tensor) or "other" in params):  # elementwise
            other = params.pop("other", dim)
            od = rd[0] if rest and isinstance(rest[0], Tensor) else None
            if type(other) is BatchedTensor:
                raise NoRule
            return pointwise("maximum" if name == "max" else "minimum")((x, other), (d, od))
        x, rank = front(x, d)
        if dim is None:
            flat = bind("reshape", x, (shape_of(x)[0], -1))
            out = bind(name, flat, 1, keepdim=False, **params)
            if isinstance(out, tuple):
                out = out[0]
            if keepdim and name in ("argmax", "argmin", "prod"):
                out = bind("reshape", out, (shape_of(out)[0], *(1,) * rank))
            return out, 0
        out = bind(name, x, sample_dim(dim, rank), keepdim=keepdim, **params)
        return out, ((0, 0) if isinstance(out, tuple) else 0)

    return rule


prod_rule, max_rule, min_rule, argmax_rule, argmin_rule = (_over_all(n) for n in ("prod", "max", "min", "argmax",
                                                                                   "argmin"))


def _boolean(name: str) -> S.BatchRule:
    def rule(args: tuple, dims: tuple, dim: Any = None, keepdim: bool = False) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        dim, keepdim = positional(rest, dim, keepdim)
        x, rank = front(x, d)
        if dim is None:
            return bind(name, bind("reshape", x, (shape_of(x)[0], -1)), 1), 0
        return bind(name, x, sample_dim(dim, rank), keepdim), 0

    return rule


all_rule, any_rule = _boolean("all"), _boolean("any")


def norm_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    a = arguments("norm", args, dims, params)
    (x, d), dim = a["x"], a["dim"][0]
    x, rank = front(x, d)
    over = tuple(range(1, rank + 1)) if dim is None else dims_arg(dim, rank)
    if not over:
        x, over = bind("unsqueeze", x, 1), (1,)
    return bind("norm", x, a["p"][0], over, a["keepdim"][0], a["dtype"][0]), 0


def _spread(name: str) -> S.BatchRule:
    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        a = arguments(name, args, dims, params)
        (x, d), dim, unbiased = a["x"], a["dim"][0], a["unbiased"][0]
        if isinstance(dim, bool):  # var(x, True): the old form whose first argument is `unbiased`
            dim, unbiased = None, dim
        x, rank = front(x, d)
        over = tuple(range(1, rank + 1)) if dim is None else dims_arg(dim, rank)
        if not over:
            x, over = bind("unsqueeze", x, 1), (1,)
        return bind(name, x, over, unbiased, a["keepdim"][0], correction=a["correction"][0]), 0

    return rule


var_rule, std_rule = _spread("var"), _spread("std")


def logsumexp_rule(args: tuple, dims: tuple, dim: Any = _NO_DIM, keepdim: bool = False) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim, keepdim = positional(rest, dim, keepdim)
    x, rank = front(x, d)
    if rank == 0:
        return bind("logsumexp", bind("unsqueeze", x, 1), 1, keepdim=False), 0
    return bind("logsumexp", x, dims_arg(dim, rank), keepdim=keepdim), 0


def _along(name: str) -> S.BatchRule:
    """softmax, log_softmax: along the sample's `dim`."""

    def rule(args: tuple, dims: tuple, dim: Any = None, dtype: Any = None) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        dim, dtype = positional(rest, dim, dtype)
        x, rank = front(x, d)
        if rank == 0:
            return bind("squeeze", bind(name, bind("unsqueeze", x, 1), 1, dtype), 1), 0
        return bind(name, x, sample_dim(dim, rank), dtype), 0

    return rule


softmax_rule, log_softmax_rule = _along("softmax"), _along("log_softmax")


def glu_rule(args: tuple, dims: tuple, dim: Any = -1) -> tuple[Any, Any]:
    """glu: along the sample's `dim` (halved there)."""
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    x, rank = front(x, d)
    return bind("glu", x, sample_dim(dim, rank)), 0


def sort_rule(args: tuple, dims: tuple, dim: int = -1, descending: bool = False, stable: bool = False) -> tuple:
    (x, *rest), (d, *_) = args, dims
    dim, descending = positional(rest, dim, descending)
    x, rank = front(x, d)
    if rank == 0:
        return bind("sort", x, 0, descending, stable), (0, 0)
    return bind("sort", x, sample_dim(dim, rank), descending, stable), (0, 0)


def diag_rule(args: tuple, dims: tuple, diagonal: int = 0) -> tuple[Any, Any]:
    """`diag` of a batch of vectors (each on a diagonal of its matrix: a product with a fixed 0/1 tensor) or of
    matrices (each's diagonal, by indexing)."""
    (x, *rest), (d, *_) = args, dims
    k = int(rest[0]) if rest else int(diagonal)
    x, rank = front(x, d)
    if rank == 1:
        m = shape_of(x)[1]
        n = m + abs(k)
        picker = np.zeros((n, n, m), dtype=dtype_of(x))
        picker[np.arange(m) + max(-k, 0), np.arange(m) + max(k, 0), np.arange(m)] = 1
        rows = bind("reshape", x, (shape_of(x)[0], 1, 1, m))
        return bind("sum", bind("mul", rows, Tensor._make(picker, False, None)), -1), 0
    if rank == 2:
        r, c = shape_of(x)[1:]
        start_r, start_c = (0, k) if k >= 0 else (-k, 0)
        m = max(0, min(r - start_r, c - start_c))
        at_rows = Tensor._make(np.arange(m) + start_r, False, None)
        at_cols = Tensor._make(np.arange(m) + start_c, False, None)
        return bind("__getitem__", x, (slice(None), at_rows, at_cols)), 0
    raise RuntimeError(f"diag: the input must be a vector or a matrix, not a tensor of {rank} dimensions")


def index_add_rule(args: tuple, dims: tuple, *, alpha: Any = 1) -> tuple[Any, Any]:
    (x, dim, index, source), (d, _, di, ds) = args, dims
    if di is not None:
        raise NoRule
    size = batch_size(args, dims)
    x, rank = front(x, d) if d is not None else (materialize(x, None, size), ndim(x))
    return bind("index_add", x, sample_dim(dim, rank), index, materialize(source, ds, size), alpha=alpha), 0


# -- losses ------------------------------------------------------------------------------------------------------
def _reduce_samples(out: Any, reduction: str) -> Any:
    """Per-element losses of a batch (batch dim first) reduced as each sample's own call would."""
    if reduction == "none":
        return out
    rank = ndim(out) - 1
    if rank == 0:
        return out
    return bind("mean" if reduction == "mean" else "sum", out, tuple(range(1, rank + 1)))


def _elementwise_loss(name: str, tensors: tuple[str, ...]) -> S.BatchRule:
    """mse_loss, l1_loss, binary_cross_entropy(_with_logits): the input and target (and weights) aligned as an
    elementwise operation's operands, the losses per element, each sample's reduced on its own."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        a = arguments(name, args, dims, params)
        reduction = reduction_of(name, a["reduction"][0], a.get("size_average", (None,))[0],
                                 a.get("reduce", (None,))[0])
        size = batch_size(args, dims)
        present = [(n, a[n]) for n in tensors if a[n][0] is not None]
        rank = max(len(sample_shape(v, d)) for _, (v, d) in present)
        kw = {n: v for n, (v, _) in a.items() if n not in ("size_average", "reduce", "reduction") and v is not None}
        for n, (v, d) in present:
            kw[n] = pad(materialize(v, d, size), rank) if n in ("input", "target") or d is not None else v
        if "input" in kw and "target" in kw and shape_of(kw["input"]) != shape_of(kw["target"]):
            full = np.broadcast_shapes(shape_of(kw["input"]), shape_of(kw["target"]))
            kw["input"], kw["target"] = bind("expand", kw["input"], full), bind("expand", kw["target"], full)
        out = bind(name, **kw, reduction="none")
        return _reduce_samples(out, reduction), 0

    return rule


mse_loss_rule = _elementwise_loss("mse_loss", ("input", "target", "weight"))
l1_loss_rule = _elementwise_loss("l1_loss", ("input", "target", "weight"))
binary_cross_entropy_rule = _elementwise_loss("binary_cross_entropy", ("input", "target", "weight"))
bce_with_logits_rule = _elementwise_loss("binary_cross_entropy_with_logits", ("input", "target", "weight",
                                                                             "pos_weight"))


def _classification(name: str) -> S.BatchRule:
    """nll_loss, cross_entropy: the batch folded into the samples' rows (N), the losses per row, each sample's
    reduced on its own (a mean over its targets' weights, as its own call's)."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        a = arguments(name, args, dims, params)
        reduction = reduction_of(name, a["reduction"][0], a["size_average"][0], a["reduce"][0])
        (x, d), (t, dt), (w, dw) = a["input"], a["target"], a["weight"]
        if dw is not None:
            raise NoRule  # class weights per sample: the loop
        size = batch_size(args, dims)
        x, t = materialize(x, d, size), materialize(t, dt, size)
        xs, ts = shape_of(x)[1:], shape_of(t)[1:]
        probabilities = dtype_of(t).kind == "f"
        if len(xs) == 1:  # a sample (C,): the batch is the rows
            rows_x, rows_t = x, t
        else:
            rows_x = bind("reshape", x, (size * xs[0], *xs[1:]))
            rows_t = bind("reshape", t, (size * ts[0], *ts[1:])) if ts else t
        kw = {k: v for k, (v, _) in a.items() if k not in ("input", "target", "size_average", "reduce",
                                                          "reduction")}
        per = bind(name, rows_x, rows_t, **kw, reduction="none")
        lead = (size,) if len(xs) == 1 else (size, xs[0])
        per = bind("reshape", per, (*lead, *shape_of(per)[1:]))
        if reduction == "none":
            return per, 0
        rank = ndim(per) - 1
        total = bind("sum", per, tuple(range(1, rank + 1))) if rank else per
        if reduction == "sum":
            return total, 0
        if probabilities:
            count = math.prod(shape_of(per)[1:])
            return (bind("div", total, float(count)) if count != 1 else total), 0
        kept = bind("ne", t, a["ignore_index"][0])
        if w is None:
            den = bind("to", kept, dtype_of(x))
        else:
            safe = bind("where", kept, t, 0)
            den = bind("mul", bind("__getitem__", w, safe), bind("to", kept, dtype_of(x)))
        if ndim(den) > 1:
            den = bind("sum", den, tuple(range(1, ndim(den))))
        return bind("div", total, den), 0

    return rule


nll_loss_rule, cross_entropy_rule = _classification("nll_loss"), _classification("cross_entropy")


def equal_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """PyTorch's error: `equal` gives one Python bool, which no batch of samples can be."""
    raise worded("Batching rule not implemented for aten::equal. We could not generate a fallback.",
                 "equal(a, b) inside vmap gives one true or false for all the samples; compare with eq(a, b) and all() "
                 "instead, which give one per sample")


def allclose_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """PyTorch's error: `allclose` gives one Python bool, which no batch of samples can be."""
    raise worded("vmap over torch.allclose isn't supported yet. Please file an issue at "
                 "https://github.com/pytorch/pytorch/issues if you need this feature.",
                 "allclose(a, b) inside vmap gives one true or false for all the samples; use isclose(a, b) and all() "
                 "instead, which give one per sample")


NAMED.update({"equal": equal_rule, "allclose": allclose_rule})
NAMED.update({"argmax": argmax_rule, "argmin": argmin_rule, "all": all_rule, "any": any_rule, "T": T_rule,
              "mT": mT_rule, "mH": mT_rule, "H": H_rule})


class _Rules:
    """The rules the specs name (spec.LazyRule): batching.py's, batching_moves.py's and this module's."""

    def __getattr__(self, name: str) -> Any:
        found = getattr(_families, name, None)
        if found is None:
            found = getattr(_moves, name, None)
        return found if found is not None else globals()[name]


S.RULES = _Rules()
