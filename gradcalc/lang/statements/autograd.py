"""Autograd statements: `backward`, `retain_grad`, `zero_grad`, `graph`, `seed`, and `with` a grad mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gradcalc
from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import ARG, OPERAND, VALUE
from ..core.frames import Closure, Frame
from ..errors import GradcalcError, Loc, SyntaxProblem
from ..syntax.ast import Attribute, Block, Name, Stmt, rule, start_of, statement, token_loc
from ..values.builtins import manual_seed
from ..values.convert import as_tensor, describe
from ..values.engine import ENGINE
from ..values.namespace import PREDEFINED_NAMESPACES, Namespace

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@rule("backward_flag")  # backward_flag: RETAIN_GRAPH | CREATE_GRAPH | GRADIENT [=] test | INPUTS [=] test
def lower_backward_flag(tok: Any, *rest: Any) -> tuple[str, Any, Loc]:
    return (tok, rest[-1] if rest else None, token_loc(tok))  # (the token itself: the statement's span ends at it)


@statement("backward_stmt")  # backward_stmt: BACKWARD test backward_flag*  (the flags in any order)
class Backward(Stmt):
    """`backward y [retain_graph] [create_graph] [gradient G] [inputs [a, b]]`: `y.backward(...)`; with
    `inputs`, only those tensors accumulate into their `.grad` (PyTorch's `inputs=`)."""

    loc: Loc
    expr: Any
    gradient: Any
    retain_graph: bool
    create_graph: bool
    inputs: Any = None

    @classmethod
    def lower(cls, kw: Any, expr: Any, *flags: tuple[str, Any, Loc]) -> Backward:
        seen: dict[str, Any] = {}
        for name, value, where in flags:
            if name in seen:
                raise SyntaxProblem(f"`{name}` is given twice", where)
            seen[str(name)] = value
        return cls(token_loc(kw), expr, seen.get("gradient"), "retain_graph" in seen, "create_graph" in seen,
                   seen.get("inputs"))


def prepare_backward(c: Compiler, st: Backward, plain: bool = False) -> Any:
    """What `backward y [flags]` does, split in two for `explain backward`: at run time, the output, its
    gradient (None: implied) and the call that runs the backward, all arguments checked before it. `plain`:
    the statement's own closure instead, which runs the backward at once."""
    ev = c.expr(st.expr, VALUE)
    gradient = c.expr(st.gradient, OPERAND) if st.gradient is not None else None
    retain = True if st.retain_graph else None  # None: create_graph decides, as in PyTorch
    create = st.create_graph
    where = start_of(st.expr)
    gradient_at = start_of(st.gradient) if st.gradient is not None else None
    inputs = c.expr(st.inputs, ARG) if st.inputs is not None else None
    inputs_loc = start_of(st.inputs) if st.inputs is not None else None

    def arguments(f: Frame) -> tuple[Any, Any, Any]:
        y = ev(f)
        if not isinstance(y, ENGINE.Tensor):
            raise GradcalcError(f"backward needs a tensor, not {describe(y)}", where)
        g = as_tensor(gradient(f)) if gradient is not None else None
        if g is not None and not isinstance(g, ENGINE.Tensor):
            raise GradcalcError(f"backward: the gradient must be a tensor, not {describe(g)}", gradient_at)
        return y, g, _inputs(inputs(f), inputs_loc) if inputs is not None else None

    if plain:  # the statement itself: one call less per backward of a training loop
        def run(f: Frame) -> None:
            y, g, wanted = arguments(f)
            y.backward(g, retain_graph=retain, create_graph=create, inputs=wanted)

        return run

    def prepare(f: Frame) -> tuple[Any, Any, Callable[[], None]]:
        y, g, wanted = arguments(f)
        return y, g, lambda: y.backward(g, retain_graph=retain, create_graph=create, inputs=wanted)

    return prepare


@compiles(Backward)
def compile_backward(c: Compiler, st: Backward) -> Closure:
    run: Closure = prepare_backward(c, st, plain=True)
    return run


@translates(Backward)
def translate_backward(t: Translator, st: Backward) -> None:
    """`backward y retain_graph gradient g` is `y.backward(g, retain_graph=True)`."""
    args = [t.as_tensor(st.gradient)] if st.gradient is not None else []
    args += ["retain_graph=True"] * bool(st.retain_graph) + ["create_graph=True"] * bool(st.create_graph)
    if st.inputs is not None:
        args.append(f"inputs={t.argument_of(st.inputs)}")
    t.line(f"{t.postfix(st.expr)}.backward({', '.join(args)})")


def _inputs(value: Any, loc: Loc | None) -> list[Any]:
    """`backward y inputs X`: X is a tensor or a list or tuple of tensors."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for v in items:
        if not isinstance(v, ENGINE.Tensor):
            raise GradcalcError(f"backward ... inputs needs a tensor or a list of tensors, not {describe(v)}", loc)
    if not items:
        raise GradcalcError("backward ... inputs is empty: name the tensors whose .grad should accumulate", loc)
    return items


@statement("retain_grad_stmt")  # retain_grad_stmt: RETAIN_GRAD exprlist
class RetainGrad(Stmt):
    loc: Loc
    exprs: list[Any]


def _each_tensor(c: Compiler, exprs: list[Any], keyword: str, action: Callable[[Any], None]) -> Closure:
    """`KEYWORD a, b, ...`: `action` on each tensor, all of them checked before any is changed."""
    values = c.tensors(exprs, keyword)

    def run(f: Frame) -> None:
        for t in values(f):
            action(t)

    return run


def _clear_grad(t: Any) -> None:
    t.grad = None  # PyTorch's optimizer default (set_to_none=True)


@compiles(RetainGrad)
def compile_retain_grad(c: Compiler, st: RetainGrad) -> Closure:
    return _each_tensor(c, st.exprs, "retain_grad", ENGINE.Tensor.retain_grad)


@statement("zero_grad_stmt")  # zero_grad_stmt: ZERO_GRAD exprlist
class ZeroGrad(Stmt):
    loc: Loc
    exprs: list[Any]


@compiles(ZeroGrad)
def compile_zero_grad(c: Compiler, st: ZeroGrad) -> Closure:
    return _each_tensor(c, st.exprs, "zero_grad", _clear_grad)


@translates(RetainGrad)
def translate_retain_grad(t: Translator, st: RetainGrad) -> None:
    for e in st.exprs:
        t.line(f"{t.postfix(e)}.retain_grad()")


@translates(ZeroGrad)
def translate_zero_grad(t: Translator, st: ZeroGrad) -> None:
    """`zero_grad x, w` sets each `.grad` to None (PyTorch's optimizer default)."""
    for e in st.exprs:
        t.line(f"{t.postfix(e)}.grad = None")


@statement("graph_stmt")  # graph_stmt: GRAPH test [TO test]
class Graph(Stmt):
    """`graph y` prints y's backward graph (names, shapes, values, grads, saved values); `graph y to
    "y.dot"` writes it as Graphviz DOT, `to "y.svg"` or `"y.png"` draws it with Graphviz's `dot`."""

    loc: Loc
    expr: Any
    path: Any

    @classmethod
    def lower(cls, kw: Any, expr: Any, to: Any, path: Any) -> Graph:
        return cls(token_loc(kw), expr, path)


@compiles(Graph)
def compile_graph(c: Compiler, st: Graph) -> Closure:
    ev = c.expr(st.expr, VALUE)
    path = c.expr(st.path, VALUE) if st.path is not None else None
    host = c.interp.host
    where = start_of(st.expr)
    path_loc = start_of(st.path) if st.path is not None else None

    def run(f: Frame) -> None:
        y = ev(f)
        if not isinstance(y, ENGINE.Tensor):
            raise GradcalcError(f"graph needs a tensor, not {describe(y)}", where)
        target = path(f) if path is not None else None
        if target is not None and not isinstance(target, str):
            raise GradcalcError(f"graph ... to needs a file name (a string), not {describe(target)}", path_loc)
        try:
            host.graph(y, target)
        except GradcalcError as exc:
            if exc.loc is None:  # a file that can't be written or drawn: point at its name
                exc.loc = path_loc
            raise

    return run


@translates(Graph)
def translate_graph(t: Translator, st: Graph) -> None:
    """A comment: the script draws no graph (torchviz's make_dot draws one from PyTorch)."""
    what = "writes (or draws) the backward graph into that file" if st.path is not None else \
        "prints the backward graph as a tree"
    t.comment(f"{t.text(st)}: gradcalc {what} here")


@statement("seed_stmt")  # seed_stmt: SEED test
class Seed(Stmt):
    loc: Loc
    expr: Any


@compiles(Seed)
def compile_seed(c: Compiler, st: Seed) -> Closure:
    ev = c.expr(st.expr, ARG)

    def run(f: Frame) -> None:
        manual_seed(ev(f))

    return run


@translates(Seed)
def translate_seed(t: Translator, st: Seed) -> None:
    """`seed N` is `torch.manual_seed(N)` (PyTorch's stream: the draws that follow differ from gradcalc's)."""
    t.line(f"torch.manual_seed({t.whole(st.expr)})")


@statement("with_stmt")  # with_stmt: WITH (NAME ".")* grad_mode ("(" ")")? ":" suite
class With(Stmt):
    """`with no_grad:` (also enable_grad, inference_mode, detect_anomaly): the block runs in that mode. PyTorch's
    spelling is the same block: `with torch.no_grad():`, `with torch.autograd.detect_anomaly():`."""

    loc: Loc
    mode: str
    body: Block
    prefix: list[Any] = []  # the namespace written before the mode (`torch`, `torch.autograd`): names, with where

    @classmethod
    def lower(cls, kw: Any, *children: Any) -> With:
        *names, mode, body = children
        return cls(token_loc(kw), str(mode), body, [(str(n), token_loc(n)) for n in names])


@compiles(With)
def compile_with(c: Compiler, st: With) -> Closure:
    body = c.block(st.body)
    factories: dict[str, Callable[[], Any]] = {
        "no_grad": gradcalc.no_grad,
        "enable_grad": gradcalc.enable_grad,
        "inference_mode": gradcalc.inference_mode,
        "detect_anomaly": gradcalc.autograd.detect_anomaly,
    }
    factory = factories[st.mode]
    check = _namespace_check(c, st) if st.prefix else None

    def run(f: Frame) -> Any:  # anomaly mode names the statement by the nodes' origins (lang/core/origin.py)
        if check is not None:
            check(f)
        with factory():
            return body(f)

    return run


@translates(With)
def translate_with(t: Translator, st: With) -> None:
    """`with no_grad:` is `with torch.no_grad():` (as written when it names its namespace)."""
    if st.prefix:
        (first, first_loc), *rest = st.prefix
        node: Name | Attribute = Name(first, first_loc)
        for name, where in rest:
            node = Attribute(node, name, where)
        block = f"{t.value(node)}.{st.mode}"
    else:
        block = t.block_spelling(st.mode)
    t.line(f"with {block}():")
    t.block(st.body)


def _namespace_check(c: Compiler, st: With) -> Callable[[Frame], None]:
    """`with torch.no_grad():`: the names before the mode must spell a namespace that has that block, as in
    PyTorch (`torch.autograd.detect_anomaly`, not `torch.detect_anomaly`); looked up when the block runs, so
    that `import torch as t` then `with t.no_grad():` works too."""
    (first, first_loc), *rest = st.prefix
    node: Any = Name(first, first_loc)
    for name, where in rest:
        node = Attribute(node, name, where)
    namespace = c.expr(node, VALUE)
    spelled = ".".join(name for name, _ in st.prefix)
    where = first_loc

    def check(f: Frame) -> None:
        value = namespace(f)
        if not isinstance(value, Namespace):
            raise GradcalcError(f"with {spelled}.{st.mode}(): {spelled} is {describe(value)}, not a namespace "
                                f"(such as torch)", where)
        if not value.has_block(st.mode):
            spellings = " or ".join(f"with {ns.label}.{st.mode}():" for ns in _block_homes(st.mode))
            raise GradcalcError(f"{value.label} has no block {st.mode}: write {spellings} (or with {st.mode}:)",
                                where)

    return check


def _block_homes(mode: str) -> list[Any]:
    return [ns for ns in PREDEFINED_NAMESPACES.values() if ns.has_block(mode)]
