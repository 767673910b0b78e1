"""One spec per operation: everything the engine knows about a node class and a public function, in one place.

Two records, each registered right beside what it describes, as PyTorch's `derivatives.yaml` keeps one row per
operation and JAX registers `defjvp` and `primitive_batchers` next to each primitive:

- `NodeSpec`, by `@spec.node(...)` on a node class (its backward formula is the class's `apply`):
  the formula as mathematics, per input, in derivatives.yaml's words (`grad * other`, `grad * result`), for
  `explain` and `graph` to show; PyTorch's names of what the node saves (`_saved_self`, ...); the forward-mode
  rule (one signature for every node, `jvp(node, inputs, out, tangents)`), or the reason there is none; the
  batched backward that `func.jacrev`'s one-pass Jacobian runs (`apply_batched`), or none.
- `OpSpec`, by `@spec.op(...)` on a public function: its names (`gradcalc.<name>`, `Tensor.<name>`, the in-place
  `Tensor.<name>_`), the node classes it records, its batching rule for vmap (`rule(args, dims, **params) ->
  (result, dim)`, see batching.py), and a sample call with the domain its inputs are drawn from, for the tests.

Everything else is derived from them, at class creation or at registration and never per operation: the class
attributes the hot paths and the walks read (`saved_names` and its `_saved_<name>` properties, `batchable`,
`apply_batched`, `jvp_rule`, which forward_ad.py calls), the functions, methods and in-place methods
(ops/__init__.py installs every OpSpec, and those registered later through `listen`), the language's built-ins
(lang/values/builtins.py listens too), and the tests' tables (`OPS`, `NODES`). `of(node)` gives a node's spec, for a
front end to show its formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from . import saved as saved_module

if TYPE_CHECKING:  # (typing's aliases cost at every start-up: made for the type checker only)
    from typing import TypeAlias

    from .node import Node

    # (node, inputs, out, tangents) -> the tangent of `out` (None: zero). `node` is the node that recorded the
    # operation (a bare one of its class when only tangents are computed), `inputs` what the operation was given
    # (tensors, and numbers where it takes them), `tangents` one per input (None where it has none).
    JvpRule: TypeAlias = Callable[..., Any]
    # (node, grad) -> per input, its gradient: `apply` on bare arrays that carry one leading batch dim.
    BatchedBackward: TypeAlias = Callable[..., tuple]
    # (args, dims, **params) -> (result, result's batch dim): one vmap level of the operation (batching.py).
    BatchRule: TypeAlias = Callable[..., tuple[Any, Any]]


class _Marker:
    """A value a spec gives by name (each class made costs start-up some 50,000 instructions: one for both)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


# `batched=BROADCASTS`: the node's own `apply` is right on arrays with a leading batch dim (an elementwise formula
# broadcasts over it; `sum_to` keeps it while `state.batch` is set)
BROADCASTS: Any = _Marker("BROADCASTS")
# `jvp=DOUBLE_VJP`: the node's forward rule is forward_ad's `double_vjp` (J t from its backward formula).
# forward_ad.py is not loaded at start-up: when it loads it puts its rule in this marker's place, in every spec
# registered so far and (`resolve_double_vjp`) in each one registered later; only it calls the rules.
DOUBLE_VJP: Any = _Marker("DOUBLE_VJP")
_double_vjp: Any = None  # forward_ad.double_vjp, once forward_ad has loaded


class Domain:
    """Where a test draws an operation's inputs: a name, and an interval (None: standard normal values)."""

    # a plain class rather than a NamedTuple: making one of those runs `exec`, at every start-up
    __slots__ = ("name", "low", "high", "distinct")

    def __init__(self, name: str, low: float | None = None, high: float | None = None, distinct: bool = False) -> None:
        self.name, self.low, self.high = name, low, high
        self.distinct = distinct  # values well apart (max, sort: no ties for the gradient to split)

    def __repr__(self) -> str:
        return f"<Domain {self.name}>"

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Float64 values of `shape` from this domain."""
        if self.distinct:
            n = int(np.prod(shape))
            return rng.permutation(np.arange(n, dtype=np.float64)).reshape(shape) * 0.37 - 1.0
        if self.low is None:
            return rng.standard_normal(shape)
        return rng.uniform(self.low, self.high, shape)


REAL = Domain("real")
POSITIVE = Domain("positive", 0.5, 2.0)
UNIT = Domain("(-1, 1)", -0.9, 0.9)
PROBABILITY = Domain("(0, 1)", 0.05, 0.95)
DISTINCT = Domain("distinct", distinct=True)


class Sample:
    """A call of an operation for the tests, written with PyTorch's API: `call(lib, *tensors)` runs on
    `gradcalc` and on `torch` alike, with tensors of `shapes` drawn from `domain`."""

    __slots__ = ("shapes", "call", "domain")

    def __init__(self, shapes: tuple[tuple[int, ...], ...], call: Callable[..., Any], domain: Domain = REAL) -> None:
        self.shapes, self.call, self.domain = shapes, call, domain


class NodeSpec:
    """What is known about one node class besides its `apply` (see the module docstring)."""

    __slots__ = ("node", "formula", "saved", "jvp", "no_jvp", "tangent", "batched")

    def __init__(self, node: type, formula: Mapping[str, str], saved: Mapping[str, saved_module.Spec],
                 jvp: JvpRule | None, no_jvp: str | None, tangent: str | None, batched: Any) -> None:
        self.node = node
        self.formula = dict(formula)  # per input, by PyTorch's argument name: derivatives.yaml's formula
        self.saved = dict(saved)  # PyTorch's saved names, in its pack order
        self.jvp = jvp
        self.no_jvp = no_jvp  # why there is no forward rule (when `jvp` is None)
        self.tangent = tangent  # the forward rule as mathematics (derivatives.yaml's `result:`), when given
        self.batched = batched  # BROADCASTS, a BatchedBackward, or None (no batched backward)

    @property
    def inputs(self) -> tuple[str, ...]:
        """PyTorch's names of the inputs, in order (`self`, `other`)."""
        return tuple(self.formula)

    def formula_text(self) -> str:
        """The formulas on one line: `self: grad * other; other: grad * self`."""
        return "; ".join(f"{name}: {text}" for name, text in self.formula.items())

    def __repr__(self) -> str:
        return f"<NodeSpec {self.node.__name__}: {self.formula_text()}>"


class OpSpec:
    """What is known about one public operation (see the module docstring)."""

    __slots__ = ("name", "function", "raw", "aliases", "method", "inplace", "top_level", "nodes", "vmap", "sample")

    def __init__(self, name: str, function: Callable[..., Any], aliases: tuple[str, ...], method: Any,
                 inplace: Any, top_level: bool, nodes: tuple[type, ...], vmap: BatchRule | None,
                 sample: Sample | None, raw: Callable[..., Any] | None = None) -> None:
        self.name = name
        self.function = function  # what `gradcalc.<name>` is: for `@op` functions, the one `dispatching` made
        self.raw = function if raw is None else raw  # the function as written (what runs on plain tensors)
        self.aliases = aliases
        self.method = method  # True: `Tensor.<name>` is the function; a callable: the method's own form
        self.inplace = inplace  # True: `Tensor.<name>_` writes the function's result in place; or a callable
        self.top_level = top_level  # `gradcalc.<name>` (False: only as a method, or in nn.functional)
        self.nodes = nodes  # the node classes it records
        self.vmap = vmap
        self.sample = sample

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def __repr__(self) -> str:
        return f"<OpSpec {self.name}>"


# batching.py, once something loaded it (vmap does; so do the tests of the rules): it stands on this module
# and hands itself down here, so that a spec can name its rules without loading them at start-up
RULES: Any = None


class LazyRule:
    """A batching rule of batching.py by name (a factory's, with `args`), looked up when first called: vmap is
    rare, start-up is not. Only batching.py calls rules (its `bind`), so it is loaded by then."""

    __slots__ = ("name", "args", "rule")

    def __init__(self, name: str, args: tuple) -> None:
        self.name, self.args, self.rule = name, args, None

    def __call__(self, args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        rule = self.rule
        if rule is None:
            rule = getattr(RULES, self.name)
            if self.args:
                rule = rule(*self.args)
            self.rule = rule
        return rule(args, dims, **params)

    def __repr__(self) -> str:
        return f"<batching rule {self.name}{self.args or ''}>"


def rule(name: str, *args: Any) -> LazyRule:
    """The batching rule `name` of batching.py (`rule("reduction", "sum")`: what its factory makes of `args`)."""
    return LazyRule(name, args)


NODES: dict[type, NodeSpec] = {}
OPS: dict[str, OpSpec] = {}
BASES: set[type] = set()  # node classes that are only bases of others (never recorded): no spec of their own
_listeners: list[Callable[[OpSpec], None]] = []


def node(
    *,
    formula: Mapping[str, str],
    saved: Mapping[str, saved_module.Spec] | None = None,
    jvp: JvpRule | None = None,
    no_jvp: str | None = None,
    tangent: str | None = None,
    batched: Any = None,
) -> Callable[[type], type]:
    """Register the spec of the node class it decorates: `formula` per input (derivatives.yaml's words, keys
    PyTorch's argument names), `saved` PyTorch's names of what it saves (saved.py's `tensor`, `field`...),
    `jvp` its forward rule or `no_jvp` why it has none, `tangent` the forward rule as mathematics, `batched`
    its batched backward (`BROADCASTS` when `apply` itself is right with a leading batch dim)."""
    if (jvp is None) == (no_jvp is None):
        raise TypeError("spec.node: give a forward rule (jvp=) or the reason there is none (no_jvp=), not both")
    if not formula:
        raise TypeError("spec.node: give the formula of each input (formula={'self': 'grad * ...'})")

    def register(cls: type) -> type:
        spec = NodeSpec(cls, formula, saved or {}, jvp, no_jvp, tangent, batched)
        install_node(cls, spec)
        return cls

    return register


def install_node(cls: type, spec: NodeSpec) -> None:
    """Attach `spec` to `cls`: the class attributes the engine reads, derived once here."""
    if spec.jvp is DOUBLE_VJP and _double_vjp is not None:
        spec.jvp = _double_vjp
    cls.spec = spec  # type: ignore[attr-defined]
    cls.jvp_rule = spec.jvp  # type: ignore[attr-defined]  # forward_ad's lookup: one attribute, no call
    cls.saved_names = spec.saved  # type: ignore[attr-defined]
    saved_module.declare(cls)  # `_saved_<name>` properties (and parents' names hidden)
    batched = spec.batched
    cls.batchable = batched is not None  # type: ignore[attr-defined]
    if batched is not None and batched is not BROADCASTS:
        cls.apply_batched = batched  # type: ignore[attr-defined]
    elif "apply_batched" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: give its batched backward in its spec (batched=), not as a method")
    NODES[cls] = spec


def resolve_double_vjp(rule: JvpRule) -> None:
    """forward_ad.py, as it loads: `rule` (its double_vjp) replaces DOUBLE_VJP in every spec, now and later."""
    global _double_vjp
    _double_vjp = rule
    for cls, spec in NODES.items():
        if spec.jvp is DOUBLE_VJP:
            spec.jvp = cls.jvp_rule = rule  # type: ignore[attr-defined]


def base(cls: type) -> type:
    """Mark a node class as a base of others only (it is never recorded itself, so it has no spec)."""
    BASES.add(cls)
    cls.spec = cls.jvp_rule = None  # type: ignore[attr-defined]
    return cls


def op(
    name: str,
    *,
    aliases: tuple[str, ...] = (),
    method: Any = True,
    inplace: Any = False,
    top_level: bool = True,
    nodes: tuple[type, ...] = (),
    vmap: BatchRule | None = None,
    sample: Sample | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the public function it decorates as the operation `name` (see OpSpec)."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        spec = OpSpec(name, function, tuple(aliases), method, inplace, top_level, tuple(nodes), vmap, sample)
        spec.function = dispatching(spec, function)
        add_op(spec)
        return spec.function

    return register


# -- vmap's dispatch point ---------------------------------------------------------------------------------------
# How many vmap levels are open, in all threads (gradcalc/func's vmap counts them): while none is, a function
# that `dispatching` made calls the function as written at the cost of one test; while one is, it hands the
# call to `DISPATCH` (batching.py's `dispatch`, set when vmap first runs), which runs the operation's batching
# rule when an argument is a batched tensor (autograd/batched_tensor.py), and the function itself otherwise.
VMAP = [0]
DISPATCH: Any = None
# batching.random_guard, for random.py's draws: inside vmap, a draw that no random operation's rule handles is
# PyTorch's error where a level's randomness is "error"
RANDOM_GUARD: Any = None


class Dispatched:
    """A function that is not an operation of a spec (a constructor, a method such as `add_` or `to`) given to
    vmap's dispatch like one: its name, the function as written, and its batching rule (None: the per-sample
    loop, or batching.py's rule for that name)."""

    __slots__ = ("name", "raw", "vmap", "function")

    def __init__(self, name: str, raw: Callable[..., Any], vmap: BatchRule | None = None) -> None:
        self.name, self.raw, self.vmap = name, raw, vmap
        self.function: Any = None


def dispatching(op: Any, raw: Callable[..., Any]) -> Callable[..., Any]:
    """`raw` as `gradcalc.<name>` and `Tensor.<name>` are: itself while no vmap level is open anywhere, else
    through vmap's dispatch (so that a batched tensor, wherever it is among the arguments, meets the
    operation's batching rule). The module-level names of the operations are these too, so that a composite
    function (nn.functional's, a module's forward) dispatches each operation it calls. The hottest paths do
    not pay for it: the elementwise rows test their argument's type themselves (unary.py), and Tensor's
    arithmetic operators are the functions as written (a batched tensor has its own)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if VMAP[0]:
            return DISPATCH(op, args, kwargs)
        return raw(*args, **kwargs)

    call.__name__, call.__qualname__, call.__doc__ = raw.__name__, raw.__qualname__, raw.__doc__
    call.__module__ = raw.__module__
    call.__wrapped__ = raw  # type: ignore[attr-defined]  # inspect.signature, the language's :help
    call.dispatch_op = op  # type: ignore[attr-defined]  # (spellings.with_aliases folds its wrapper into this one)
    return call


def public(name: str, raw: Callable[..., Any], vmap: BatchRule | None = None) -> Callable[..., Any]:
    """`raw` (a function or method that is not an operation of a spec) made dispatching as `name`."""
    record = Dispatched(name, raw, vmap)
    record.function = dispatching(record, raw)
    return record.function


def raw_of(fn: Any) -> Any:
    """The function as written behind one `dispatching` made (else `fn` itself)."""
    inner = getattr(fn, "__wrapped__", None)
    return fn if inner is None or getattr(fn, "__code__", None) is not _CALL_CODE else inner


_CALL_CODE = dispatching(Dispatched("", len), len).__code__  # type: ignore[attr-defined]


def add_op(spec: OpSpec) -> None:
    """Register an operation, and tell every listener (the functions and methods are installed by them)."""
    OPS[spec.name] = spec
    for listener in _listeners:
        listener(spec)


def listen(listener: Callable[[OpSpec], None]) -> None:
    """Call `listener(op)` for each operation registered from now on (ops/__init__.py installs the functions and
    methods of each; the language adds its built-ins)."""
    _listeners.append(listener)


def of(node: Node | type) -> NodeSpec | None:
    """The spec of a node (or node class); None for one without (a custom Function's, the engine's own)."""
    cls = node if isinstance(node, type) else type(node)
    return getattr(cls, "spec", None)


def op_of(name: str) -> OpSpec | None:
    """The operation registered under `name` (or one of its aliases), or None."""
    found = OPS.get(name)
    if found is not None:
        return found
    return next((o for o in OPS.values() if name in o.aliases), None)
