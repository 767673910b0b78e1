"""`einsum`, as PyTorch computes it, and the view it needs for a repeated subscript, `diagonal`.

einsum records no node of its own: PyTorch's (aten/src/ATen/native/Linear.cpp) aligns every operand to one order
of subscripts (output subscripts first, then the summed ones) with `permute`, `unsqueeze` and, for a subscript
repeated in one operand, `diagonal`; then contracts the operands left to right, each pair by `sumproduct_pair`
(a `bmm` between permutes and reshapes, or a `mul` when nothing is summed), and sums or views away what is left.
This module follows that algorithm step by step with the engine's operations, so the graph (and the result's
grad_fn: `ViewBackward0` after a contraction, `PermuteBackward0` for a transpose, `SumBackward1` for a
reduction, `MulBackward0` for an outer product) is PyTorch's, and every derivative, of any order, comes from
those operations. (PyTorch with opt_einsum installed contracts three or more operands in an optimised order;
without it, and here, left to right.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from .arithmetic import mul
from .core import record, result
from .linalg import bmm
from .reorder import movedim
from .sums import sum as tsum

_ALL = slice(None)


# -- diagonal ------------------------------------------------------------------------------------------------------
def _diagonal_array(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """The diagonal `offset` of the (d1, d2) planes of `a`, as a writable view with the diagonal as the last dim."""
    n1, n2 = a.shape[d1], a.shape[d2]
    size = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = [0] * a.ndim
    if size:
        start[d2 if offset >= 0 else d1] = abs(offset)
    base = a[tuple(slice(s, None) for s in start)] if size else a
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = tuple(a.shape[i] for i in keep) + (size,)
    strides = tuple(a.strides[i] for i in keep) + (a.strides[d1] + a.strides[d2],)
    return as_strided(base, shape, strides, writeable=a.flags.writeable)


def _diagonal_backward_array(g: np.ndarray, shape: tuple[int, ...], offset: int, d1: int, d2: int) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    _diagonal_array(out, offset, d1, d2)[...] = g
    return out


def _batched_diagonal(node: Node, g: np.ndarray) -> tuple:
    out = np.zeros((g.shape[0],) + node.in_shape, dtype=g.dtype)
    _diagonal_array(out, node.offset, node.dim1 + 1, node.dim2 + 1)[...] = g
    return (out,)


@spec.node(
    formula={"self": "diagonal_backward_symint(grad, self.sym_sizes(), offset, dim1, dim2)"},
    saved={"dim1": SV.field("dim1"), "dim2": SV.field("dim2"), "offset": SV.field("offset"),
           "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: diagonal(tangents[0], node.offset, node.dim1, node.dim2),
    tangent="self_t.diagonal(offset, dim1, dim2)", batched=_batched_diagonal,
)
class DiagonalBackward0(Node):
    """A diagonal taken as a view: the gradient is zeros with it written back on that diagonal."""

    __slots__ = ("in_shape", "offset", "dim1", "dim2")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if type(g) is Tensor:
            return (diagonal_backward(g, self.in_shape, self.offset, self.dim1, self.dim2),)
        return (_diagonal_backward_array(g, self.in_shape, self.offset, self.dim1, self.dim2),)


@spec.node(
    formula={"grad_output": "grad.diagonal(offset, dim1, dim2)"},
    saved={"dim1": SV.field("dim1"), "dim2": SV.field("dim2"), "offset": SV.field("offset")},
    jvp=lambda node, inputs, out, tangents: diagonal_backward(tangents[0], out._data.shape, node.offset, node.dim1,
                                                              node.dim2),
    tangent="diagonal_backward(grad_output_t, input_sizes, offset, dim1, dim2)",
)
class DiagonalBackwardBackward0(Node):
    """The gradient of a diagonal under create_graph (PyTorch's diagonal_backward): its own gradient is the
    diagonal again."""

    __slots__ = ("offset", "dim1", "dim2")

    def apply(self, gg: Tensor) -> tuple:
        return (diagonal(gg, self.offset, self.dim1, self.dim2),)


def diagonal_backward(g: Tensor, shape: tuple[int, ...], offset: int, dim1: int, dim2: int) -> Tensor:
    """Zeros of `shape` with `g` on the diagonal (one node, DiagonalBackwardBackward0, when it records)."""
    node = record(DiagonalBackwardBackward0, g)
    if node is not None:
        node.offset, node.dim1, node.dim2 = offset, dim1, dim2
    return result(_diagonal_backward_array(g._data, shape, offset, dim1, dim2), node)


def _diagonal_rule(args: tuple, dims: tuple, *rest: Any, **params: Any) -> tuple[Any, Any]:
    """diagonal over a batch: the batch dim first, the sample's dims counted after it."""
    from .. import batching as B  # vmap only: batching.py stays off the start-up path

    (x, *more), (d, *_) = args, dims
    given = dict(zip(("offset", "dim1", "dim2"), (*more, *rest), strict=False))
    given.update(params)
    rank = B.ndim(x) - 1
    x = B.to_front(x, d)
    return B.bind("diagonal", x, given.get("offset", 0), B.sample_dim(given.get("dim1", 0), rank),
                  B.sample_dim(given.get("dim2", 1), rank)), 0


@spec.op("diagonal", nodes=(DiagonalBackward0,), vmap=_diagonal_rule,
         sample=spec.Sample(((3, 4, 2),), lambda L, a: L.diagonal(a, 1) + a.diagonal(-1, 1, 0)
                            + L.diagonal(a, 0, 2, 1).sum()))
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal `offset` (above the main one when positive) of each (dim1, dim2) plane, as a view whose last
    dim runs along it."""
    x = input
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got {nd}")
    d1, d2 = S.dim_index(dim1, nd), S.dim_index(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    node = record(DiagonalBackward0, x)
    if node is not None:
        node.in_shape, node.offset, node.dim1, node.dim2 = x._data.shape, int(offset), d1, d2
    return S._view(_diagonal_array(x._data, int(offset), d1, d2), x, node)


# -- einsum --------------------------------------------------------------------------------------------------------
_LETTERS = 26
_TOTAL = 2 * _LETTERS
_ELLIPSIS = _TOTAL  # the code of `...` among the subscripts


def _code(c: str) -> int:
    """A subscript in [A-Za-z] as a number in [0, 52): the capitals first, as PyTorch orders them."""
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + _LETTERS


def _letter(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _is_subscript(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """(left * right).sum(sum_dims, keepdim=True) by permutes, reshapes and one bmm (PyTorch's sumproduct_pair);
    both have the same number of dims, broadcasting where one has size 1."""
    if not sum_dims:
        return mul(left, right)
    dim = left._data.ndim
    summed = set(sum_dims)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dim):
        sl, sr = left._data.shape[i] != 1, right._data.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left._data.shape[i] != right._data.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._data.shape[i]
            elif sl:
                left = tsum(left, i, keepdim=True)
            elif sr:
                right = tsum(right, i, keepdim=True)
        elif sl and sr:
            if left._data.shape[i] != right._data.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._data.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._data.shape[i]
        else:
            ro.append(i)
            ro_size *= right._data.shape[i]
    if lo and ro and ro[-1] < lo[0]:  # the right operand's dims all come first: swapped, bmm gives that order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left._data.shape[d] for d in lro] + [left._data.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right._data.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = S.reshape(S.permute(left, lperm), (lro_size, lo_size, sum_size))
    right = S.reshape(S.permute(right, rperm), (lro_size, sum_size, ro_size))
    return S.permute(S.view(bmm(left, right), tuple(out_size)), operm)


def _parse(equation: str, operands: list[Tensor]) -> tuple:
    """The subscripts of each operand (codes, `_ELLIPSIS` for `...`), checked as PyTorch checks them; the output's
    part of the equation (None when implicit)."""
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels: list[list[int]] = [[] for _ in range(num_ops)]
    ellipsis_seen, current, i = False, 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ellipsis_seen:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any ellipsis")
            i += 2
            labels[current].append(_ELLIPSIS)
            ellipsis_seen = True
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ellipsis_seen = False
        elif c != " ":
            if not _is_subscript(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            labels[current].append(_code(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels, (None if arrow < 0 else (equation[arrow + 2:], len(lhs)))


def _einsum(equation: str, operands: list[Tensor]) -> Tensor:
    """PyTorch's einsum (see the module docstring), step by step."""
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    op_labels, rhs = _parse(equation, operands)
    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, (t, labels) in enumerate(zip(operands, op_labels, strict=True)):
        ndims = t._data.ndim
        nlabels = len(labels)
        has_ellipsis = _ELLIPSIS in labels
        if has_ellipsis:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, ndims - nlabels)
        for s in labels:
            if s != _ELLIPSIS:
                label_count[s] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) "
                f"{'is more than' if has_ellipsis else 'does not match'} the number of dimensions ({ndims}) for "
                f"operand {i}{'' if has_ellipsis else ' and no ellipsis was given'}")
    perm_index_of = [-1] * _TOTAL
    perm_index = ell_index = 0
    ell_in_output = False
    if rhs is None:  # implicit output: the ellipsis' dims, then the subscripts seen once, in order
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_TOTAL):
            if label_count[s] == 1:
                perm_index_of[s] = perm_index
                perm_index += 1
    else:
        out, offset = rhs
        j = 0
        while j < len(out):
            c = out[j]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (j + 2 < len(out) and out[j + 1] == "." and out[j + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                j += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            elif c != " ":
                if not _is_subscript(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {offset + 2 + j} in the equation "
                                       "string, subscripts must be in [a-zA-Z]")
                s = _code(c)
                if label_count[s] == 0 or perm_index_of[s] != -1:
                    why = "appears more than once in the output" if perm_index_of[s] != -1 else (
                        "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c} {why}")
                perm_index_of[s] = perm_index
                perm_index += 1
            j += 1
    out_num_dim = perm_index
    if not ell_in_output:  # the ellipsis' dims are summed
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_TOTAL):
        if label_count[s] > 0 and perm_index_of[s] == -1:
            perm_index_of[s] = perm_index
            perm_index += 1

    # each operand: sizes checked, repeated subscripts' diagonals taken, missing dims added, dims aligned
    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops: list[Tensor] = []
    for i, (t, labels) in enumerate(zip(operands, op_labels, strict=True)):
        op = t
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = t._data.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    n = op._data.shape[dim]
                    if n != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != n:
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                               f"{n} which does not broadcast with previously seen ellipsis with size "
                                               f"{ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = n
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index_of[s]] == -1:
                n = op._data.shape[dim]
                if n != 1:
                    if label_size[s] != 1 and label_size[s] != n:
                        raise RuntimeError(f"einsum(): subscript {_letter(s)} has size {n} for operand {i} which does "
                                           f"not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = n
                    dim_counts[perm_index_of[s]] += 1
                permutation[perm_index_of[s]] = dim
                dim += 1
            else:  # a repeated subscript: its diagonal, where the first one was
                prev = permutation[perm_index_of[s]]
                if op._data.shape[dim] != op._data.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_letter(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {op._data.shape[dim]} != {op._data.shape[prev]}")
                op = movedim(diagonal(op, 0, prev, dim), -1, prev)
        for k, v in enumerate(permutation):
            if v == -1:
                op = S.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(S.permute(op, permutation))

    # contract, left to right
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims: list[int] = []
        a_dims: list[int] = []
        b_dims: list[int] = []
        for dim in range(out_num_dim, perm_index):
            sa, sb = a._data.shape[dim] != 1, b._data.shape[dim] != 1
            if sa and sb:
                if a._data.shape[dim] != b._data.shape[dim]:
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif sb:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = tsum(a, tuple(a_dims), keepdim=True)
        if b_dims:
            b = tsum(b, tuple(b_dims), keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    if perm_index > out_num_dim:  # the summed dims: already of size 1 after a contraction, else summed here
        if num_ops > 1:
            return S.view(ops[0], ops[0]._data.shape[:out_num_dim])
        return tsum(ops[0], tuple(range(out_num_dim, perm_index)))
    return ops[0]


def _from_sublists(args: tuple) -> tuple[str, list]:
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]): the equation in letters (PyTorch's
    sublist format: 0-25 are a-z, 26-51 A-Z, Ellipsis is `...`)."""

    def letters(sub: Any) -> str:
        if isinstance(sub, Tensor) and sub._data.ndim == 1:  # (a list of numbers the language made a tensor)
            sub = [int(v) if float(v).is_integer() else v for v in sub._data.tolist()]
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < _TOTAL:
                out.append(chr(ord("a") + s) if s < _LETTERS else chr(ord("A") + s - _LETTERS))
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {s}")
        return "".join(out)

    operands = list(args[0::2][: len(args) // 2])
    subs = [letters(s) for s in args[1::2][: len(args) // 2]]
    equation = ",".join(subs)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


def _einsum_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """einsum over a batch: the batch dim first in each batched operand, and a new subscript for it in front of
    theirs and of the output's."""
    from .. import batching as B  # vmap only: batching.py stays off the start-up path

    if args and not isinstance(args[0], str):
        equation, operands = _from_sublists(args)
        at = list(dims[0::2])
    else:
        equation, operands = args[0], list(args[1:])
        at = list(dims[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            raise NotImplementedError("einsum under vmap: give the operands one by one, not as a list")
    lhs, _, out = equation.partition("->")
    parts = lhs.split(",")
    used = {c for c in equation if _is_subscript(c)}
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used)
    if "->" not in equation:
        counts = [sum(p.count(c) for p in parts) for c in map(_letter, range(_TOTAL))]
        out = ("..." if "..." in lhs else "") + "".join(_letter(s) for s in range(_TOTAL) if counts[s] == 1)
    moved = []
    for k, (t, d) in enumerate(zip(operands, at, strict=True)):
        if d is not None:
            t = B.to_front(t, d)
            parts[k] = letter + parts[k]
        moved.append(t)
    return B.bind("einsum", ",".join(parts) + "->" + letter + out, *moved), 0


@spec.op("einsum", method=False, vmap=_einsum_rule,
         sample=spec.Sample(((2, 3), (3, 4), (5, 2, 3), (3, 3)), lambda L, a, b, c, s: L.einsum("ij,jk->ik", a, b)
                            + L.einsum("ij,jk", [a, b]) + L.einsum("bij,jk->bik", c, b).sum(0)
                            + L.einsum("...ij,jk->...ik", c, b)[1] + L.einsum("ii->i", s)[:2, None]
                            + L.einsum("ii", s) + L.einsum("ij->ji", s)[:2, :1]
                            + L.einsum("i,j->ij", s[0], b[0])[:2] + L.einsum(a, [0, 1], b, [1, 2], [0, 2])
                            + L.einsum("bij,bij->b", c, c)[:2, None] + L.einsum("ij,jk,kl->il", a, s, b)))
def einsum(equation: Any, *operands: Any) -> Tensor:
    """Einstein summation: einsum('ij,jk->ik', a, b) multiplies operands along the subscripts they share and sums
    those missing from the output (implicit output: the subscripts seen once, in order; '...' for broadcast dims);
    also einsum('ij,jk', [a, b]) and the sublist form einsum(a, [0, 1], b, [1, 2])."""
    if isinstance(equation, str):
        ops = list(operands)
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        equation, ops = _from_sublists((equation, *operands))
    for i, t in enumerate(ops):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a tensor, not {type(t).__name__}")
    return _einsum(equation, ops)
