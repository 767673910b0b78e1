"""vmap's dispatch: where every operation given a batched tensor arrives, and what it does there.

`dispatch(op, args, kwargs)` is the dispatch point of spec.dispatching (`gradcalc.<name>`, `Tensor.<name>` and the
operations' module-level names; the elementwise rows and a batched tensor's operators call it themselves). It runs
the operation's batching rule (batching.py) at the innermost level among its arguments, as functorch's
interpreters and JAX's tracers peel their levels; an operation without one runs once per sample (the per-sample
loop, for that operation only, with PyTorch's performance warning, once per operation); an in-place operation
writes into its batched tensor's batch (`inplace`), and one that would write a batched value into a plain tensor
is PyTorch's error; random operations follow the levels' `randomness=` (`random_call`). `bind(name, ...)` is how
rules call operations: the operation itself on plain values, its rule at an outer level otherwise.

Also the core of vmap itself (`vmap`, `add_batch_dim`, `remove_batch_dim`), which gradcalc.func's vmap builds
PyTorch's API on.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import spec as S
from .batched_tensor import BatchedTensor, Level, batched, find_level, levels, pop_level, push_level, shape_of
from .ops import FUNCTIONS, lazy, unary
from .ops import random as random_state
from .reasons import worded
from .tensor import Tensor

BT = BatchedTensor


# -- the dispatch ------------------------------------------------------------------------------------------------
def dispatch(op: Any, args: tuple, kwargs: dict) -> Any:
    """Operation `op` (an OpSpec or spec.Dispatched) on `args`: itself when no argument is batched, else at the
    innermost level among its arguments, by its rule (or in-place, or once per sample)."""
    name = op.name
    if name in RANDOM_NAMES:
        return random_call(op, args, kwargs)
    level = 0
    for a in args:
        ta = type(a)
        if ta is BT:
            if a._level > level:
                level = a._level
        elif ta is tuple or ta is list:
            for x in a:
                if type(x) is BT and x._level > level:
                    level = x._level
    if kwargs:
        for a in kwargs.values():
            if type(a) is BT and a._level > level:
                level = a._level
            elif type(a) is tuple or type(a) is list:
                for x in a:
                    if type(x) is BT and x._level > level:
                        level = x._level
    if not level:
        return op.raw(*args, **kwargs)
    lvl = find_level(level)
    rule = op.vmap
    if rule is None:
        rule = NAMED.get(name)
        if rule is None:
            if name in INPLACE_DUNDERS or (name[-1] == "_" and name[-2] != "_"):
                return inplace(op, args, kwargs, lvl)
            return fallback(op, args, kwargs, lvl)
    if kwargs and _tensor_keywords(kwargs):
        args, kwargs = _positional(op, args, kwargs)
    values, dims = _unwrap(args, level)
    try:
        out, dim = rule(values, dims, **kwargs)
    except NoRule:  # the rule does not take these arguments (before it computed anything): the loop
        return fallback(op, args, kwargs, lvl)
    return _wrap(out, dim, level)


class NoRule(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a rule, before it computes anything, for arguments it cannot batch: the per-sample loop runs."""


def _unwrap(args: tuple, level: int) -> tuple[tuple, tuple]:
    values, dims = [], []
    for a in args:
        ta = type(a)
        if ta is BT and a._level == level:
            values.append(a._value)
            dims.append(a._bdim)
        elif (ta is tuple or ta is list) and any(type(x) is BT and x._level == level for x in a):
            values.append(ta(x._value if type(x) is BT and x._level == level else x for x in a))
            dims.append(tuple(x._bdim if type(x) is BT and x._level == level else None for x in a))
        else:
            values.append(a)
            dims.append(None)
    return tuple(values), tuple(dims)


def _wrap(out: Any, dim: Any, level: int) -> Any:
    if dim is None:
        return out
    if type(dim) is int:
        return batched(out, dim, level)
    items = [_wrap(o, d, level) for o, d in zip(out, dim, strict=True)]
    return _rebuilt(out, items)


def _rebuilt(like: Any, items: list) -> Any:
    """`items` in a sequence of `like`'s type: a tuple, a list, or a named tuple such as max's values and indices
    (ops/return_types.py), which takes one sequence as PyTorch's do."""
    return type(like)(items)


def _tensor_keywords(kwargs: dict) -> bool:
    return any(isinstance(a, Tensor) or (type(a) in (tuple, list) and any(isinstance(x, Tensor) for x in a))
               for a in kwargs.values())


_signatures: dict[int, inspect.Signature] = {}


def _positional(op: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments with the tensors given by keyword moved to their positions, the parameters between given
    their defaults (a rule reads tensors by position); keyword-only parameters stay keywords."""
    sig = _signatures.get(id(op))
    if sig is None:
        sig = _signatures[id(op)] = inspect.signature(op.raw)
    bound = sig.bind(*args, **kwargs)
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    last = max((i for i, p in enumerate(params) if p.name in bound.arguments and _has_tensor(bound.arguments[p.name])),
               default=-1)
    if last < len(args):
        return args, kwargs
    positional = list(args)
    rest = dict(kwargs)
    for p in params[len(args): last + 1]:
        positional.append(rest.pop(p.name) if p.name in rest else p.default)
    return tuple(positional), rest


def _has_tensor(a: Any) -> bool:
    return isinstance(a, Tensor) or (type(a) in (tuple, list) and any(isinstance(x, Tensor) for x in a))


def bind(name: str, *args: Any, **params: Any) -> Any:
    """Operation `name` on `args` (what rules are written with): itself on plain values, else its rule at the
    innermost level among the arguments."""
    op = S.OPS.get(name) or S.op_of(name) or OTHER.get(name)
    if op is None:
        raise LookupError(f"no operation {name!r} is registered")
    if S.VMAP[0]:
        return dispatch(op, args, params)
    return op.raw(*args, **params)


# Operations that are not an OpSpec's (Tensor's methods, functions of the modules' tables), by name, for `bind`:
# filled from the dispatching functions ops/__init__.py made, when this module loads
OTHER: dict[str, Any] = {}


# -- the per-sample loop ----------------------------------------------------------------------------------------
_warned: set[str] = set()


def fallback(op: Any, args: tuple, kwargs: dict, lvl: Level) -> Any:
    """`op` once per sample of level `lvl` (with PyTorch's performance warning, once per operation), the
    results stacked along a new first dimension."""
    if op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for "
            f"aten::{op.name.strip('_') or op.name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation.", UserWarning, stacklevel=4)
    level, size = lvl.id, lvl.size
    same = lvl.randomness == "same"
    start = random_state.default_generator.get_state() if same else None
    outs = []
    for b in range(size):
        if start is not None:
            random_state.default_generator.set_state(start)
        outs.append(dispatch(op, _sample(args, level, b), _sample_kw(kwargs, level, b)))
    return _stacked(outs, level, op.name)


def _select(x: Any, level: int, b: int) -> Any:
    if type(x) is BT and x._level == level:
        return bind("select", x._value, x._bdim, b)
    return x


def _sample(args: tuple, level: int, b: int) -> tuple:
    return tuple(type(a)(_select(x, level, b) for x in a) if type(a) in (tuple, list) else _select(a, level, b)
                 for a in args)


def _sample_kw(kwargs: dict, level: int, b: int) -> dict:
    return {k: _sample((v,), level, b)[0] for k, v in kwargs.items()} if kwargs else kwargs


def _stacked(outs: list, level: int, name: str) -> Any:
    first = outs[0]
    if isinstance(first, Tensor):
        return batched(bind("stack", outs, 0), 0, level)
    if isinstance(first, (tuple, list)):
        return _rebuilt(first, [_stacked([o[i] for o in outs], level, name) for i in range(len(first))])
    if all(o is first or o == first for o in outs[1:]):
        return first
    raise RuntimeError(
        f"vmap: {name} returned a value that is not a tensor and differs between the samples; we don't support "
        "vmap over such an operation, please try to rewrite what you're doing with other operations")


# -- in-place operations ------------------------------------------------------------------------------------------
INPLACE_DUNDERS = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
                   "__ipow__": "pow_", "__setitem__": "__setitem__"}
# in-place operations that write an elementwise result (of `self` and operands that broadcast against it): the
# same operation on the batch, the operands put in its layout; any other runs once per sample on views
# the name PyTorch's in-place error gives an operation (its elementwise ones share "inplace arithmetic"; add_
# fails on the shapes instead)
_ARITHMETIC = "inplace arithmetic"
INPLACE_NAMES = {"copy_": _ARITHMETIC, "__setitem__": _ARITHMETIC, "sub_": _ARITHMETIC, "mul_": _ARITHMETIC,
                 "div_": _ARITHMETIC, "__isub__": _ARITHMETIC, "__imul__": _ARITHMETIC, "__itruediv__": _ARITHMETIC,
                 "masked_fill_": _ARITHMETIC, "pow_": "aten::pow_", "__ipow__": "aten::pow_",
                 "clamp_": "aten::clamp_", "clamp_min_": "aten::clamp_min_", "clamp_max_": "aten::clamp_max_"}
# (masked_fill_ is not one: its value is 0-d in every sample, not an operand laid out as the batch)
ALONG_DIM_INPLACE = {"cumsum_", "cumprod_"}  # in-place operations along one dim of the sample
ELEMENTWISE_INPLACE = {"add_", "sub_", "mul_", "div_", "pow_", "copy_", "fill_", "clamp_", "clamp_min_",
                       "clamp_max_"}

def inplace_error(name: str = "inplace arithmetic") -> Exception:
    """PyTorch's error for an in-place operation that would write a batched value into a tensor that is not."""
    return worded(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that "
        f"has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
        f"vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. If said operator is "
        "being called inside the PyTorch framework, please file a bug report instead.",
        "an in-place operation would write a value that differs between the samples (a tensor mapped by vmap) "
        "into a tensor that is the same for all of them; use the out-of-place operation (y = x + v, not x += v)")


def inplace(op: Any, args: tuple, kwargs: dict, lvl: Level) -> Any:
    """An in-place operation at level `lvl`: into `self`'s batch (every sample's part of it); a batched value
    into a tensor that is not batched at this level is PyTorch's error."""
    self, level = args[0], lvl.id
    if not (type(self) is BT and self._level == level):
        if op.name in ("add_", "__iadd__") and isinstance(self, Tensor):  # PyTorch's rule fails on the shapes
            other = args[1] if len(args) > 1 else None
            shape = list(_broadcast(shape_of(self), shape_of(other) if type(other) is not BT else other._shape))
            raise RuntimeError(f"output with shape {list(shape_of(self))} doesn't match the broadcast shape "
                               f"{[lvl.size, *shape]}")
        raise inplace_error(INPLACE_NAMES.get(op.name, op.name))
    name = INPLACE_DUNDERS.get(op.name, op.name)
    value, bdim, rank = self._value, self._bdim, len(self._shape)
    if name in ELEMENTWISE_INPLACE or name[:-1] in UNARY_NAMES:
        for a in (*args[1:], *kwargs.values()):
            if isinstance(a, Tensor) and not (type(a) is BT and a._level == level) and len(shape_of(a)) > rank:
                _too_many_dims(self, a, lvl.size)
        others = tuple(align(a, level, bdim, rank) for a in args[1:])
        kw = {k: align(v, level, bdim, rank) for k, v in kwargs.items()}
        dispatch(op, (value, *others), kw)
        return self
    if name in ALONG_DIM_INPLACE and rank and args[1:] and not kwargs and isinstance(args[1], int):
        # cumsum_, cumprod_: along the sample's dim, on the whole batch (a loop would bump the shared version
        # counter between the samples, staling the results the others saved)
        d = args[1] % rank
        dispatch(op, (value, d + (d >= bdim), *args[2:]), {})
        return self
    for b in range(lvl.size):
        view = bind("select", value, bdim, b)
        dispatch(op, (view, *_sample(args[1:], level, b)), _sample_kw(kwargs, level, b))
    return self


def _broadcast(a: tuple, b: tuple) -> tuple:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return a


def _too_many_dims(self: BT, other: Any, size: int) -> None:
    """PyTorch's error for an operand of more dims than the sample written into in place: its shapes are the
    batch's, the sample's padded with ones (as PyTorch's rule lays them out)."""
    theirs = shape_of(other) if type(other) is not BT else other._shape
    ours = (1,) * (len(theirs) - len(self._shape)) + tuple(self._shape)
    raise RuntimeError(f"output with shape {[size, *ours]} doesn't match the broadcast shape "
                       f"{[size, *_broadcast(ours, theirs)]}")


def align(x: Any, level: int, bdim: int, rank: int) -> Any:
    """Operand `x` of an elementwise in-place operation on a tensor batched along `bdim` with samples of `rank`
    dims: laid out as that tensor's batch (its batch dim at `bdim`, or 1 there for a value the same for every
    sample), so that it broadcasts against it."""
    if not isinstance(x, Tensor):
        return x
    d = x._bdim if type(x) is BT and x._level == level else None
    if d is not None:
        x = x._value
    n = len(shape_of(x)) - (d is not None)
    if n > rank:
        if d is not None:
            raise inplace_error()
        raise RuntimeError(f"output with rank {rank} doesn't match the broadcast rank {n}")
    if d is None:
        for _ in range(rank - n):
            x = bind("unsqueeze", x, 0)
        return bind("unsqueeze", x, bdim)
    x = to_front(x, d)
    for _ in range(rank - n):
        x = bind("unsqueeze", x, 1)
    return bind("movedim", x, 0, bdim) if bdim else x


# -- random operations ------------------------------------------------------------------------------------------
# Operations that draw random numbers (spec.rule("random") marks one of a spec): under vmap they follow the open
# levels' `randomness=`, innermost first, whether or not an argument is batched ("error": PyTorch's error;
# "same": one draw for every sample; "different": a draw per sample)
# random operations whose values depend on a tensor argument's values: "same" randomness can't give one draw for
# all the samples when that tensor differs between them (PyTorch's error)
VALUED_RANDOM = {"bernoulli", "multinomial", "normal", "poisson"}
RANDOM_NAMES = {"rand", "randn", "randint", "normal", "rand_like", "randn_like", "randint_like", "randperm",
                "bernoulli", "multinomial", "uniform_", "normal_", "bernoulli_", "exponential_", "random_"}
FACTORIES = {"rand", "randn"}  # a size first: 'different' draws the batch at once
def random_error() -> Exception:
    return worded(
        "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
        "randomness flags on vmap or perform the randomness operation out of vmap",
        "a random operation inside vmap: pass randomness=\"different\" (each sample its own draws) or "
        "randomness=\"same\" (one draw for all the samples)")
_drawing = threading.local()  # .on: inside a random operation's own call, under its levels' rules


def random_call(op: Any, args: tuple, kwargs: dict, open_levels: tuple[Level, ...] | None = None) -> Any:
    """Random operation `op` under the open levels (all of this thread's when None), innermost first."""
    if getattr(_drawing, "on", False):
        return op.raw(*args, **kwargs)
    if open_levels is None:
        open_levels = levels()
    if not open_levels:
        _drawing.on = True
        try:
            return op.raw(*args, **kwargs)
        finally:
            _drawing.on = False
    lvl, rest = open_levels[-1], open_levels[:-1]
    level = lvl.id
    if lvl.randomness == "error":
        raise random_error()
    mapped = [i for i, a in enumerate(args) if type(a) is BT and a._level == level]
    if lvl.randomness == "same":
        if not mapped:
            return random_call(op, args, kwargs, rest)
        if op.name in VALUED_RANDOM:
            raise worded("Vmap does not currently support same randomness with a batched tensor input. Please file "
                         "an issue with functorch",
                         f"{op.name} inside vmap with randomness=\"same\" draws one value for all the samples, but "
                         "its argument differs between them: pass randomness=\"different\"")
        start = random_state.default_generator.get_state()
        outs = []
        for b in range(lvl.size):
            random_state.default_generator.set_state(start)
            outs.append(random_call(op, _sample(args, level, b), kwargs, rest))
        if op.name[-1] == "_":
            return args[0]
        return batched(bind("stack", outs, 0), 0, level)
    # "different"
    if op.name in FACTORIES and not any(isinstance(a, Tensor) for a in args):
        size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return batched(random_call(op, (lvl.size, *size), kwargs, rest), 0, level)
    tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not tensors:  # a draw per sample
        outs = [random_call(op, args, kwargs, rest) for _ in range(lvl.size)]
        return batched(bind("stack", outs, 0), 0, level)
    if op.name[-1] == "_" and 0 not in mapped:
        raise worded(
            "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like same "
            "randomness. If this is necessary for your usage, please file an issue with functorch.",
            "an in-place random operation inside vmap with randomness=\"different\" writes into a tensor that is "
            "the same for every sample, so it can't hold a draw per sample: draw into a mapped tensor, or pass "
            "randomness=\"same\"")
    first = tensors[0]
    if first not in mapped:  # the sample's shape, for a batch of them
        x = args[first]
        args = (*args[:first], batched(bind("expand", bind("unsqueeze", x, 0), (lvl.size, *shape_of(x))), 0,
                                       level), *args[first + 1:])
    values, dims = _unwrap(args, level)
    d = dims[first]
    values = tuple(v if i == first or dims[i] is None else bind("movedim", v, dims[i], d)
                   for i, v in enumerate(values))
    out = random_call(op, values, kwargs, rest)
    if op.name[-1] == "_":
        return args[0]
    return batched(out, d, level)


def random_guard() -> None:
    """For random.py's draws: a draw inside vmap that no random operation's rule handles, where a level says
    "error", is PyTorch's error."""
    if getattr(_drawing, "on", False):
        return
    for lvl in levels():
        if lvl.randomness == "error":
            raise random_error()




def to_front(x: Any, dim: int | None) -> Any:
    """`x` with its batch dimension `dim` moved first (unchanged when it is first, or has none)."""
    return x if not dim else bind("movedim", x, dim, 0)

# -- the core of vmap -----------------------------------------------------------------------------------------------
def vmap(f: Callable[..., Any], in_dims: Any = 0, out_dims: int = 0, randomness: str = "error") -> Callable[..., Any]:
    """`f` mapped over a dimension of its arguments, one call of `f` whose operations run their batching rules
    (`in_dims`: one for all positional arguments, or one per argument, None for one not mapped; `out_dims` one
    for all outputs). gradcalc.func's `vmap` is this with PyTorch's trees of dims, checks and `chunk_size`."""

    def mapped(*args: Any, **kwargs: Any) -> Any:
        per_arg = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        size = None
        for a, d in zip(args, per_arg, strict=True):
            if d is not None:
                size = shape_of(a)[d]
                break
        if size is None:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        lvl = push_level(size, randomness)
        try:
            wrapped = [a if d is None else add_batch_dim(a, d, lvl) for a, d in zip(args, per_arg, strict=True)]
            out = f(*wrapped, **kwargs)
            return _unwrap_out(out, lvl, out_dims)
        finally:
            pop_level(lvl)

    return mapped


def add_batch_dim(x: Tensor, d: int, lvl: Level) -> BatchedTensor:
    """`x` batched at level `lvl` along its dimension `d` (of its shape at the level being computed)."""
    n = len(shape_of(x))
    return batched(x, d % n, lvl.id)


def remove_batch_dim(x: Any, lvl: Level, out_dim: int) -> Any:
    """A result of the mapped function as the batch it stands for: its batch dim of level `lvl` at `out_dim`;
    a value the same for every sample repeated (expanded) along a new dim `out_dim`."""
    if type(x) is BT and x._level == lvl.id:
        value, d = x._value, x._bdim
        n = len(shape_of(value))
        out_dim = _out_dim(out_dim, n)
        return value if d == out_dim else bind("movedim", value, d, out_dim)
    shape = list(shape_of(x))
    out_dim = _out_dim(out_dim, len(shape) + 1)
    shape.insert(out_dim, lvl.size)
    return bind("expand", bind("unsqueeze", x, out_dim), tuple(shape))


def _out_dim(d: int, n: int) -> int:
    """`out_dims`' entry `d` for a result of `n` dims (its batch dim among them), as PyTorch checks it."""
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def _unwrap_out(out: Any, lvl: Level, out_dims: int) -> Any:
    if isinstance(out, (tuple, list)):
        return _rebuilt(out, [_unwrap_out(o, lvl, out_dims) for o in out])
    return remove_batch_dim(out, lvl, out_dims)


# -- the rules of operations that are not an OpSpec's, by name (batching.py fills it) ------------------------------
NAMED: dict[str, S.BatchRule] = {}
UNARY_NAMES: set[str] = set()


def _install() -> None:
    UNARY_NAMES.update(unary.ROWS)
    for op in S.OPS.values():
        _note(op)
    S.listen(_note)
    _operators()


def _operators() -> None:
    """A batched tensor's operators: the operations' dispatching functions (a plain tensor's are the functions
    as written, which Python skips for the batched right operand's reflected one)."""
    fn = {name: op.function for name, op in S.OPS.items()}
    fn.update((name, FUNCTIONS[name]) for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                                                   "logical_not"))
    add, sub, mul, div, pw, mod, fdiv, mm = (fn[n] for n in ("add", "sub", "mul", "div", "pow", "remainder",
                                                            "floor_divide", "matmul"))
    table = {
        "__add__": add, "__radd__": lambda a, b: add(b, a), "__sub__": sub, "__rsub__": lambda a, b: sub(b, a),
        "__mul__": mul, "__rmul__": lambda a, b: mul(b, a), "__truediv__": div,
        "__rtruediv__": lambda a, b: div(b, a), "__pow__": pw, "__rpow__": lambda a, b: pw(b, a),
        "__mod__": mod, "__rmod__": lambda a, b: mod(b, a), "__floordiv__": fdiv,
        "__rfloordiv__": lambda a, b: fdiv(b, a), "__matmul__": mm, "__rmatmul__": lambda a, b: mm(b, a),
        "__neg__": fn["neg"], "__pos__": lambda a: a, "__abs__": fn["abs"], "__eq__": fn["eq"], "__ne__": fn["ne"],
        "__lt__": fn["lt"], "__le__": fn["le"], "__gt__": fn["gt"], "__ge__": fn["ge"],
        "__and__": fn["logical_and"], "__rand__": lambda a, b: fn["logical_and"](b, a),
        "__or__": fn["logical_or"], "__ror__": lambda a, b: fn["logical_or"](b, a), "__invert__": fn["logical_not"],
    }
    for name, f in table.items():
        setattr(BatchedTensor, name, f)
    for name in ("T", "mT", "mH", "H"):  # Tensor's properties of the sample, by their rules (batching_ops.py)
        record = S.Dispatched(name, getattr(Tensor, name).fget)
        setattr(BatchedTensor, name, property(lambda x, record=record: dispatch(record, (x,), {})))
    BatchedTensor.__hash__ = object.__hash__  # (a class that defines __eq__ loses its hash otherwise)


def _note(op: S.OpSpec) -> None:
    rule = op.vmap
    if isinstance(rule, S.LazyRule) and rule.name == "random":
        RANDOM_NAMES.update(op.names)


def _collect_other() -> None:
    """`bind`'s table of the dispatching functions that are not an OpSpec's: Tensor's methods and the functions."""
    for table in (vars(Tensor), FUNCTIONS):
        for name, fn in table.items():
            if isinstance(fn, property):
                fn = fn.fget
            record = _record_of(fn)
            if record is not None and name not in S.OPS:
                OTHER.setdefault(name, record)


def _record_of(fn: Any) -> Any:
    code = getattr(fn, "__code__", None)
    if code is not S._CALL_CODE:
        inner = getattr(fn, "__wrapped__", None)  # spellings.with_aliases around a dispatching one
        return _record_of(inner) if inner is not None and inner is not fn else None
    for cell in fn.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, (S.OpSpec, S.Dispatched)):
            return value
    return None


lazy.load_all()  # the tables below read every operation and every name (vmap loads the deferred families)
_install()
_collect_other()
S.DISPATCH = dispatch
S.RANDOM_GUARD = random_guard
