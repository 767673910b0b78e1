"""The differentiation transforms of `torch.func`: grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian.

Each takes a function and returns one (or the result at once, for vjp, jvp and linearize). The reverse
transforms run the function on fresh copies of the differentiated arguments and call `autograd.grad`; the
forward ones (jvp, jacfwd, linearize) open a forward-AD level of their own (`forward_ad.enter_dual_level`)
and push tangents through. Transforms compose (`jacfwd(jacrev(f))`, `grad(grad(f))`, `vmap(grad(f))`):
- a transform inside another keeps its graph (`create_graph`), so the outer one can differentiate it;
- forward-over-reverse works because backward formulas are ordinary operations, which carry tangents.
At the outermost level a result is detached unless it depends on a tensor from outside (an argument, or a
tensor the function closes over, that requires grad): as torch.func's results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd import forward_ad
from ..autograd.differentiate import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, state
from ..autograd.node import AccumulateGrad
from ..autograd.tensor import Tensor, version_of
from . import _batched as _b
from ._pytree import flatten, tensors_of, unflatten

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp"]

_depth = 0  # how many reverse transforms are running now (an inner one keeps its graph for the outer)


# -- shared pieces ---------------------------------------------------------------------------------------
def _inside(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`func` called by a transform: `backward()` inside it is PyTorch's error (differentiate.py reads
    `state.transforms`)."""
    state.transforms += 1
    try:
        return func(*args, **kwargs)
    finally:
        state.transforms -= 1


def _argnums(argnums: Any, nargs: int, fn: str) -> tuple[tuple[int, ...], bool]:
    """The argument positions to differentiate, and whether `argnums` was a tuple."""
    is_tuple = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if is_tuple else (argnums,)
    if not nums:
        raise RuntimeError(f"{fn}: argnums must name at least one argument, not be empty")
    out = []
    for n in nums:
        if not isinstance(n, int) or isinstance(n, bool):
            raise RuntimeError(f"{fn}: argnums must be an int or a tuple of ints, not {type(n).__name__}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"{fn}: argnums={n} is out of range: the function was called with {nargs} "
                               f"positional argument{'s' if nargs != 1 else ''}")
        out.append(n % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn}: argnums {tuple(nums)} names an argument twice")
    return tuple(out), is_tuple


def _fresh(t: Tensor) -> Tensor:
    """A tensor to differentiate with respect to: connected to `t`'s graph when `t` requires grad (so an
    outer transform sees through it), else a new leaf that requires grad. It keeps `t`'s tangents. Inside
    vmap, batched at every open level (_batched.py)."""
    if _b.active():
        return _b.fresh(t)
    if t._data.dtype.kind != "f":
        raise TypeError("only floating-point tensors can be differentiated; convert with .double()")
    if t._requires_grad:
        from ..autograd.ops.shape import view_as

        return view_as(t, t)
    leaf = Tensor._make(t._data, False, None, version_of(t))
    leaf._requires_grad = True
    fw = getattr(t, "_fw", None)
    if fw is not None and forward_ad.carries(t):
        leaf._fw = forward_ad._forced(t)
    return leaf


def _reaches_outside(outs: list[Tensor], inside: list[Tensor]) -> bool:
    """Whether the graph of `outs` reaches a leaf other than the transform's own (`inside`)."""
    own = {id(_b.physical(t)) for t in inside}
    outs = [_b.physical(o) for o in outs]
    seen: set[int] = set()
    stack = [o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn is not None]
    for o in outs:
        if isinstance(o, Tensor) and o._requires_grad and o.grad_fn is None and id(o) not in own:
            return True
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            leaf = node.variable
            if leaf is not None and id(leaf) not in own:
                return True
            continue
        stack.extend(n for n in node._next if n is not None and n is not forward_ad.FORWARD_EDGE)
    return False


def _needs_graph(outs: list[Tensor], inside: list[Tensor]) -> bool:
    """Whether a reverse transform's results must stay connected to a graph: inside another transform, or
    when the result depends on tensors from outside. (With tangents about it records too (`create_graph`,
    so backward formulas carry them), but cuts its results loose after.)"""
    return _depth > 1 or _reaches_outside(outs, inside)


def _cut(t: Any) -> Any:
    """`t` without a graph, keeping its tangents (themselves cut loose)."""
    if not isinstance(t, Tensor):
        return t
    if type(t) is not Tensor:  # a batched tensor (inside vmap): its physical tensor is cut loose
        return _b.on_physical(t, _cut)
    if not t._requires_grad and getattr(t, "_fw", None) is None:
        return t  # nothing to cut (a gradient computed without create_graph is already free)
    out = t.detach()
    if forward_ad.carries(t):
        out._fw = {level: _cut(tangent) for level, tangent in forward_ad._forced(t).items()}
    return out


def _detach_tree(tree: Any) -> Any:
    leaves, spec = flatten(tree)
    return unflatten([_cut(x) for x in leaves], spec)


def _split_aux(out: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}(f, has_aux=True): f must return a pair (output, aux), but it returned "
                           f"{type(out).__name__ if not isinstance(out, tuple) else f'a tuple of {len(out)}'}")
    return out


def _zeros_like(t: Tensor) -> Tensor:
    if type(t) is not Tensor:
        return _b.zeros_like(t)
    return Tensor._make(np.zeros_like(t._data), False, None)


def _prepare_args(args: tuple, nums: tuple[int, ...], fn: str) -> tuple[list, list[list[Tensor]], list]:
    """The arguments with fresh copies in place of the differentiated ones; per differentiated argument,
    its fresh tensors, and its structure."""
    new_args = list(args)
    fresh, specs = [], []
    for i in nums:
        leaves, spec = tensors_of(args[i], f"{fn}: argument {i} (differentiated, by argnums)")
        made = [_fresh(t) for t in leaves]
        new_args[i] = unflatten(made, spec)
        fresh.append(made)
        specs.append(spec)
    return new_args, fresh, specs


# -- grad ------------------------------------------------------------------------------------------------
def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning `(gradient, value)` of `func` (which must return a 0-d tensor) with respect
    to the arguments `argnums`; with `has_aux`, `func` returns `(value, aux)` and this `((gradient, (value,
    aux))`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _depth
        nums, is_tuple = _argnums(argnums, len(args), "grad")
        with enable_grad():
            _depth += 1
            try:
                new_args, fresh, specs = _prepare_args(args, nums, "grad")
                out, aux = _split_aux(_inside(func, *new_args, **kwargs), has_aux, "grad")
                if not isinstance(out, Tensor):
                    raise RuntimeError(f"grad: the function must return a tensor, but it returned a "
                                       f"{type(out).__name__}")
                if out.dim() != 0:
                    raise RuntimeError(f"grad: the function must return a 0-d (scalar) tensor, but its output has "
                                       f"shape {tuple(out.shape)}; reduce it (.sum()), or use vjp or jacrev")
                inside = [t for group in fresh for t in group]
                keep = _needs_graph([out], inside)
                if _b.active():
                    found = _b.vjp([out], inside, [None], create_graph=keep or bool(forward_ad._active))
                elif out._requires_grad:
                    found = _autograd_grad(out, inside, create_graph=keep or bool(forward_ad._active),
                                           allow_unused=True)
                else:
                    found = (None,) * len(inside)
            finally:
                _depth -= 1
        grads = [g if g is not None else _zeros_like(t) for g, t in zip(found, inside, strict=True)]
        per_arg, k = [], 0
        for group, spec in zip(fresh, specs, strict=True):
            per_arg.append(unflatten(grads[k:k + len(group)], spec))
            k += len(group)
        result = tuple(per_arg) if is_tuple else per_arg[0]
        if not keep:
            result, out, aux = _detach_tree(result), _cut(out), _detach_tree(aux)
        return (result, (out, aux)) if has_aux else (result, out)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """A function computing the gradient of `func` (which returns a 0-d tensor) with respect to the
    arguments `argnums` (an int, or a tuple for a tuple of gradients). With `has_aux`, `func` returns
    `(value, aux)` and the result is `(gradient, aux)`."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# -- vjp -------------------------------------------------------------------------------------------------
def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(func(*primals), vjp_fn)`: `vjp_fn(cotangents)` gives the vector-Jacobian product, a tuple with one
    entry per primal. With `has_aux`, `func` returns `(output, aux)` and this `(output, vjp_fn, aux)`."""
    global _depth
    nums = tuple(range(len(primals)))
    with enable_grad():
        _depth += 1
        try:
            new_args, fresh, specs = _prepare_args(primals, nums, "vjp")
            out, aux = _split_aux(_inside(func, *new_args), has_aux, "vjp")
            outs, out_spec = tensors_of(out, "vjp: the function's output")
            inside = [t for group in fresh for t in group]
            keep = _needs_graph(outs, inside)
        finally:
            _depth -= 1

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cts, ct_spec = tensors_of(cotangents, "vjp_fn: cotangents")
        if ct_spec != out_spec:
            raise RuntimeError("vjp_fn: the cotangents must have the structure of the function's output "
                               f"({len(outs)} tensor(s), in the same tuples/dicts)")
        for i, (c, o) in enumerate(zip(cts, outs, strict=True)):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"vjp_fn: cotangent {i} has shape {tuple(c.shape)} but the output it "
                                   f"goes with has shape {tuple(o.shape)}; they must match")
        pairs = [(o, c) for o, c in zip(outs, cts, strict=True) if _b.physical(o)._requires_grad]
        create = keep or _depth > 0 or bool(forward_ad._active)
        cut = not (keep or _depth > 0)
        with enable_grad():
            if _b.active() or any(type(c) is not Tensor for c in cts):
                found = _b.vjp(list(outs), inside, list(cts), create_graph=create, retain_graph=True)
            elif pairs:
                found = _autograd_grad([o for o, _ in pairs], inside, [c for _, c in pairs], retain_graph=True,
                                       create_graph=create, allow_unused=True)
            else:
                found = (None,) * len(inside)
        grads = [g if g is not None else _zeros_like(t) for g, t in zip(found, inside, strict=True)]
        per_arg, k = [], 0
        for group, spec in zip(fresh, specs, strict=True):
            per_arg.append(unflatten(grads[k:k + len(group)], spec))
            k += len(group)
        return _detach_tree(tuple(per_arg)) if cut else tuple(per_arg)

    if not keep:
        out, aux = _detach_tree(out), _detach_tree(aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# -- jvp -------------------------------------------------------------------------------------------------
def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """`(func(*primals), J·tangents)` by forward-mode AD. `primals` and `tangents` are tuples of the same
    structure and shapes. With `has_aux`, `func` returns `(output, aux)` and this `(output, jvp, aux)`."""
    if strict:
        raise RuntimeError("jvp: strict=True is not supported (as in torch.func)")
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(f"jvp: primals must be a tuple of tensors (write primals=(x,) for one), not a "
                           f"{type(primals).__name__}")
    if not isinstance(tangents, (tuple, list)):
        raise RuntimeError(f"jvp: tangents must be a tuple of tensors (write tangents=(t,) for one), not a "
                           f"{type(tangents).__name__}")
    ps, p_spec = tensors_of(tuple(primals), "jvp: primals")
    ts, t_spec = tensors_of(tuple(tangents), "jvp: tangents")
    if p_spec != t_spec:
        raise RuntimeError("jvp: tangents must have the structure of primals (one tangent per primal, in the "
                           "same tuples/dicts)")
    for i, (p, t) in enumerate(zip(ps, ts, strict=True)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp: tangent {i} has shape {tuple(t.shape)} but its primal has shape "
                               f"{tuple(p.shape)}; they must match")
    return _jvp(func, ps, ts, p_spec, has_aux)


def _jvp(func: Callable[..., Any], ps: list[Tensor], ts: list[Any], spec: Any, has_aux: bool) -> tuple[Any, ...]:
    """The JVP with checked leaves; a None tangent leaves its primal as it is (no tangent)."""
    level = forward_ad.enter_dual_level()
    try:
        duals = [p if t is None else _make_dual(p, t, level) for p, t in zip(ps, ts, strict=True)]
        out, aux = _split_aux(_inside(func, *unflatten(duals, spec)), has_aux, "jvp")
        outs, out_spec = tensors_of(out, "jvp: the function's output")
        primal_outs, tangent_outs = [], []
        for o in outs:
            primal, tangent = _unpack_dual(o, level)
            primal_outs.append(primal)
            tangent_outs.append(tangent if tangent is not None else _zeros_like(o))
        if has_aux:
            aux_leaves, aux_spec = flatten(aux)
            aux = unflatten([_unpack_dual(x, level)[0] if isinstance(x, Tensor) else x
                             for x in aux_leaves], aux_spec)
    finally:
        forward_ad.exit_dual_level(level=level)
    result = (unflatten(primal_outs, out_spec), unflatten(tangent_outs, out_spec))
    return (*result, aux) if has_aux else result


def _make_dual(p: Tensor, t: Tensor, level: int) -> Tensor:
    if type(p) is not Tensor or type(t) is not Tensor:  # batched (inside vmap): on the physical tensors
        return _b.make_dual(p, t, level)
    return forward_ad.make_dual(p, t, level=level)


def _unpack_dual(o: Tensor, level: int) -> tuple[Any, Any]:
    if type(o) is not Tensor:
        return _b.unpack_dual(o, level)
    return forward_ad.unpack_dual(o, level=level)


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """`(func(*primals), jvp_fn)`: `jvp_fn(*tangents)` gives J·tangents at `primals` (each call runs the
    function again in forward mode; the result is that of `jvp`)."""
    leaves, spec = tensors_of(primals, "linearize: primals")
    out, _ = jvp(func, primals, unflatten([_zeros_like(p) for p in leaves], spec))

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn


# -- Jacobians -------------------------------------------------------------------------------------------
def _assemble(columns: list[Tensor], out: Tensor, inp: Tensor, along_last: bool) -> Tensor:
    """The block d out / d inp from its pieces: rows (one per element of `out`, shaped like `inp`) or
    columns (one per element of `inp`, shaped like `out`); differentiable when a piece has a graph or
    carries tangents."""
    shape = tuple(out.shape) + tuple(inp.shape)
    if not columns:
        return Tensor._make(np.zeros(shape, dtype=inp.dtype.np), False, None)
    tracked = any(type(c) is not Tensor or c._requires_grad or forward_ad.carries(c) for c in columns)
    if not tracked:
        data = np.stack([c._data for c in columns], axis=-1 if along_last else 0)
        if along_last:
            data = data.reshape(out._data.shape + (-1,))
        return Tensor._make(np.ascontiguousarray(data).reshape(shape), False, None)
    from ..autograd.ops.joins import stack
    from ..autograd.ops.shape import reshape

    if along_last:
        flat = stack([reshape(c, (-1,)) for c in columns], -1)
    else:
        flat = stack([reshape(c, (-1,)) for c in columns], 0)
    return reshape(flat, shape)


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """A function computing the Jacobian of `func` with respect to the arguments `argnums` by reverse
    mode (one vector-Jacobian product per output element). Each block has shape `output.shape +
    input.shape`; a tuple of outputs (or `argnums`) gives tuples of blocks, outputs outside."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"jacrev: chunk_size must be a positive int or None, not {chunk_size}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _depth
        nums, is_tuple = _argnums(argnums, len(args), "jacrev")
        with enable_grad():
            _depth += 1
            try:
                new_args, fresh, specs = _prepare_args(args, nums, "jacrev")
                out, aux = _split_aux(_inside(func, *new_args, **kwargs), has_aux, "jacrev")
                outs, out_spec = tensors_of(out, "jacrev: the function's output")
                inside = [t for group in fresh for t in group]
                keep = _needs_graph(outs, inside)
                rows = _b.jacobian_rows if _b.active() else _rows
                blocks = [rows(o, inside, keep or bool(forward_ad._active), chunk_size) for o in outs]
            finally:
                _depth -= 1
        result = unflatten([_per_arg(b, fresh, specs, is_tuple) for b in blocks], out_spec)
        if not keep:
            result = _detach_tree(result)
        if has_aux:
            return result, (aux if keep else _detach_tree(aux))
        return result

    return wrapper


def _rows(o: Tensor, inside: list[Tensor], keep: bool, chunk_size: int | None = None) -> list[Tensor]:
    """The blocks d o / d x for each x of `inside`: by one batched reverse pass (chunks of at most
    `chunk_size` rows) when no graph is kept and every node of the graph can run batched, else by one
    `autograd.grad` per element of `o`."""
    if not keep:
        from ..autograd import batched

        found = batched.rows(o, inside, chunk_size)
        if found is not None:
            return [Tensor._make(b, False, None) for b in found]
    rows: list[list[Tensor]] = [[] for _ in inside]
    n = o._data.size
    flat = np.zeros(n, dtype=o._data.dtype)
    for j in range(n):
        if o._requires_grad:
            flat[j] = 1
            e = Tensor._make(flat.reshape(o._data.shape).copy(), False, None)
            flat[j] = 0
            found = _autograd_grad(o, inside, grad_outputs=e, retain_graph=True, create_graph=keep,
                                   allow_unused=True)
        else:
            found = (None,) * len(inside)
        for k, (g, t) in enumerate(zip(found, inside, strict=True)):
            rows[k].append(g if g is not None else _zeros_like(t))
    return [_assemble(r, o, t, False) for r, t in zip(rows, inside, strict=True)]


def _per_arg(blocks: list[Tensor], fresh: list[list[Tensor]], specs: list[Any], is_tuple: bool) -> Any:
    per_arg, k = [], 0
    for group, spec in zip(fresh, specs, strict=True):
        per_arg.append(unflatten(blocks[k:k + len(group)], spec))
        k += len(group)
    return tuple(per_arg) if is_tuple else per_arg[0]


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """A function computing the Jacobian of `func` with respect to the arguments `argnums` by forward
    mode (one Jacobian-vector product per input element). Shapes and nesting as `jacrev`'s."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f'jacfwd: randomness must be "error", "different" or "same", not {randomness!r}')

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums, is_tuple = _argnums(argnums, len(args), "jacfwd")
        groups, specs = [], []
        for i in nums:
            leaves, spec = tensors_of(args[i], f"jacfwd: argument {i} (differentiated, by argnums)")
            groups.append(leaves)
            specs.append(spec)
        inside = [t for g in groups for t in g]
        where = [(i, k) for i, g in zip(nums, groups, strict=True) for k in range(len(g))]

        flat_args, arg_spec = flatten(list(args))
        firsts = _leaf_offsets(args)
        # the differentiated tensors' places among all the arguments' leaves
        places = [firsts[i] + k for i, k in where]

        def on_leaves(*leaves: Any) -> Any:
            return func(*unflatten(list(leaves), arg_spec), **kwargs)

        def call(position: int, tangent: Tensor) -> tuple[Any, ...]:
            """One JVP: `tangent` on differentiated tensor `position`, the others without one."""
            tangents: list[Any] = [None] * len(flat_args)
            tangents[places[position]] = tangent
            return _jvp_flat(on_leaves, flat_args, tangents, has_aux)

        columns: list[list[list[Tensor]]] = []  # per differentiated tensor, per element: the outputs' tangents
        first: tuple[Any, ...] | None = None
        for position, x in enumerate(inside):
            per_element = []
            basis = np.zeros(x.numel(), dtype=x.dtype.np)
            for j in range(x.numel()):
                basis[j] = 1
                result = call(position, Tensor._make(basis.reshape(tuple(x.shape)).copy(), False, None))
                basis[j] = 0
                if first is None:
                    first = result
                per_element.append(tensors_of(result[1], "jacfwd: the function's output")[0])
            columns.append(per_element)
        if first is None:  # nothing to differentiate (empty inputs): the outputs from one plain call
            out = _inside(func, *args, **kwargs)
            first = (out[0], None, out[1]) if has_aux else (out, None)
        outs, out_spec = tensors_of(first[0], "jacfwd: the function's output")
        blocks = []
        for i, o in enumerate(outs):
            blocks.append([_assemble([c[i] for c in columns[k]], o, x, True) for k, x in enumerate(inside)])
        result = unflatten([_per_arg(b, groups, specs, is_tuple) for b in blocks], out_spec)
        return (result, first[2]) if has_aux else result

    return wrapper


def _leaf_offsets(args: tuple) -> list[int]:
    """Per argument, the index of its first leaf among the leaves of all the arguments."""
    offsets, n = [], 0
    for a in args:
        offsets.append(n)
        n += len(flatten(a)[0])
    return offsets


def _jvp_flat(func: Callable[..., Any], primals: list[Any], tangents: list[Any], has_aux: bool) -> tuple[Any, ...]:
    """`_jvp` over a flat list of arguments, some of them not tensors (passed as they are)."""
    level = forward_ad.enter_dual_level()
    try:
        args = [p if t is None else _make_dual(p, t, level) for p, t in zip(primals, tangents, strict=True)]
        out, aux = _split_aux(_inside(func, *args), has_aux, "jacfwd")
        outs, out_spec = tensors_of(out, "jacfwd: the function's output")
        pairs = [_unpack_dual(o, level) for o in outs]
        primal_outs = [p for p, _ in pairs]
        tangent_outs = [t if t is not None else _zeros_like(o) for (_, t), o in zip(pairs, outs, strict=True)]
    finally:
        forward_ad.exit_dual_level(level=level)
    result = (unflatten(primal_outs, out_spec), unflatten(tangent_outs, out_spec))
    return (*result, aux) if has_aux else result


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """A function computing the Hessian of `func` (which returns a 0-d tensor) with respect to the
    arguments `argnums`: `jacfwd(jacrev(func, argnums), argnums)`, as torch.func's."""
    return jacfwd(jacrev(func, argnums), argnums)
