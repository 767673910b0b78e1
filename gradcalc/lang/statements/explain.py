"""`explain`: run a backward or grad() and tell it step by step, say why a `.grad` is what it is, or tell the
last error in full (LANGUAGE.md §7). The telling lives in `gradcalc.lang.tell.explain`; this module holds the
statement's record and its compile function."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import gradcalc
from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import ARG, VALUE
from ..core.frames import Closure, Frame
from ..errors import GradcalcError, Loc, SyntaxProblem
from ..syntax import ast as A
from ..syntax.ast import Stmt, span_of, start_of, statement, token_loc
from ..syntax.source import source_text
from ..values.builtins import METHODS, Builtin, describe
from ..values.engine import ENGINE
from ..values.failures import error_from
from ..values.functions import invoke_method
from .autograd import Backward, prepare_backward, translate_backward

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator

ACCEPTS = "`explain backward y [flags]`, `explain grad(...)`, `explain T.grad`, or `explain` alone (the last error)"

_WORDS = {
    A.Num: "a number",
    A.NumList: "a list literal",
    A.Str: "a string",
    A.Const: "a constant",
    A.Name: "a name",
    A.Call: "a call",
    A.Attribute: "an attribute",
    A.Index: "an index",
}


@statement("explain_stmt")  # explain_stmt: EXPLAIN [backward_stmt | test]
class Explain(Stmt):
    """`explain backward y [flags]`, `explain grad(...)`, `explain T.grad`, `explain`: see inside autograd
    (its `:help` page is in help.py)."""

    loc: Loc
    target: Any  # a Backward record, an expression (grad(...), T.grad, y.backward(...)), or None

    @classmethod
    def lower(cls, kw: Any, target: Any = None) -> Explain:
        if target is not None and not isinstance(target, Backward) and _kind(target) is None:
            what = _WORDS.get(type(target), "an expression")
            raise SyntaxProblem(f"explain takes {ACCEPTS}; not {what}", start_of(target))
        return cls(token_loc(kw), target)


def _kind(node: Any) -> str | None:
    while isinstance(node, A.TupleExpr) and node.parens and len(node.items) == 1:
        node = node.items[0]
    if isinstance(node, A.Call) and isinstance(node.func, A.Name) and node.func.id == "grad":
        return "grad"
    if isinstance(node, A.Call) and isinstance(node.func, A.Attribute) and node.func.name == "backward":
        return "method"
    if isinstance(node, A.Attribute) and node.name == "grad":
        return "dotgrad"
    return None


@compiles(Explain)
def compile_explain(c: Compiler, st: Explain) -> Closure:
    target = st.target
    if target is None:
        return _compile_last_error(c, st)
    if isinstance(target, Backward):
        return _compile_backward(c, target)
    kind = _kind(target)
    while isinstance(target, A.TupleExpr):
        target = target.items[0]
    if kind == "grad":
        return _compile_grad(c, target)
    if kind == "method":
        return _compile_method_backward(c, target)
    return _compile_dot_grad(c, target)


@translates(Explain)
def translate_explain(t: Translator, st: Explain) -> None:
    """`explain backward y` is the backward it runs, `explain grad(...)` the call it shows, each under a comment;
    `explain T.grad` and `explain` alone are comments (the script tells nothing; T.grad becomes `_` and `ans`)."""
    target = st.target
    while isinstance(target, A.TupleExpr) and target.parens and len(target.items) == 1:
        target = target.items[0]
    text = t.text(st)
    if target is None:
        t.comment(f"{text}: gradcalc tells the last error in full here")
        return
    kind = None if isinstance(target, Backward) else _kind(target)
    if kind == "dotgrad":
        t.comment(f"{text}: gradcalc says here why this .grad is what it is")
        t.line(f"{t.helper('_keep')}({t.value(target)})")  # the .grad becomes _ and ans, as gradcalc leaves it
        return
    t.comment(f"{text}: gradcalc narrates this backward pass step by step")
    if isinstance(target, Backward):
        translate_backward(t, target)
    elif kind == "grad":
        t.show(target)
    else:
        t.line(t.value(target))


# -- explain backward y [flags] ---------------------------------------------------------------------------
def _expr_text(c: Compiler, node: Any, unnamed: str = "the output") -> str:
    """The expression as the user wrote it (its span's text), or `unnamed` when it has none."""
    return source_text(c.unit.source, span_of(node)) or unnamed


def _compile_backward(c: Compiler, st: Backward) -> Closure:
    prepare = prepare_backward(c, st)  # the backward statement's own checks and call
    label = _expr_text(c, st.expr)
    host = c.interp.host
    flags = {"retain_graph": bool(st.retain_graph), "create_graph": bool(st.create_graph)}

    def run(f: Frame) -> None:
        y, g, call = prepare(f)
        _narrate_backward(host, f, y, g, label, flags, call)

    return run


def _compile_method_backward(c: Compiler, node: A.Call) -> Closure:
    attr = node.func
    assert isinstance(attr, A.Attribute)
    obj = c.expr(attr.obj, VALUE)
    args = [c.expr(a, ARG) for a in node.args]
    kwargs = [(k, c.expr(v, ARG)) for k, v in node.kwargs]
    loc = node.loc
    label = _expr_text(c, attr.obj)
    host = c.interp.host
    method = METHODS["backward"]

    def run(f: Frame) -> None:
        y = obj(f)
        if not isinstance(y, ENGINE.Tensor):
            raise GradcalcError(f"backward needs a tensor, not {describe(y)}", start_of(attr.obj))
        a = [g(f) for g in args]
        kw = {k: g(f) for k, g in kwargs}
        conv_args, conv_kw = method.convert(a, kw)
        g0 = conv_args[0] if conv_args else conv_kw.get("gradient")
        flags = {"retain_graph": bool(conv_args[1] if len(conv_args) > 1 else conv_kw.get("retain_graph")),
                 "create_graph": bool(conv_args[2] if len(conv_args) > 2 else conv_kw.get("create_graph"))}

        def call() -> None:
            try:
                invoke_method(method, y, a, kw)
            except GradcalcError:
                raise
            except Exception as exc:
                raise error_from(exc, loc) from None

        _narrate_backward(host, f, y, g0, label, flags, call)

    return run


def _narrate_backward(host: Any, f: Frame, y: Any, g: Any, label: str, flags: dict[str, Any], call: Any) -> None:
    from ..tell.explain.narrate import Narration, Recorder, observe, skipped_inputs, snapshot  # (not a cold start)
    from ..tell.names import Names  # (not on a cold start)

    names = Names(f)
    recorder = Recorder()
    skipped = skipped_inputs([y.grad_fn], names)
    seed = snapshot(g if g is not None else _ones(y)) if g is not None or y.numel() == 1 else None
    with observe(recorder):
        call()
    who = names.of(y)
    story = Narration(recorder, names, kind="backward", roots=[(y, seed, ", ".join(who) or label)], flags=flags,
                      skipped=skipped)
    host.explanation(story.render)


def _ones(t: Any) -> Any:
    return cast(Any, gradcalc).ones_like(t.detach())  # (the engine's functions are set on it dynamically)


# -- explain grad(...) -------------------------------------------------------------------------------------
def _compile_grad(c: Compiler, node: A.Call) -> Closure:
    func = c.expr(node.func, VALUE)
    args = [c.expr(a, ARG) for a in node.args]
    kwargs = [(k, c.expr(v, ARG)) for k, v in node.kwargs]
    loc = node.loc
    host = c.interp.host
    label = _expr_text(c, node.args[0]) if node.args else "the output"

    def run(f: Frame) -> None:
        from ..tell.explain.narrate import Narration, Recorder, observe, skipped_inputs, snapshot  # (not a cold start)
        from ..tell.names import Names  # (not on a cold start)

        fn = func(f)
        if type(fn) is not Builtin or fn.name != "grad":
            raise GradcalcError("explain grad(...) needs the built-in grad, but 'grad' is rebound here; "
                                "`del grad` brings it back", loc)
        a = [g(f) for g in args]
        kw = {k: g(f) for k, g in kwargs}
        names = Names(f)
        try:
            conv_args, conv_kw = fn.convert(a, kw)
            outputs = conv_args[0] if conv_args else conv_kw.get("outputs")
            inputs = conv_args[1] if len(conv_args) > 1 else conv_kw.get("inputs")
            grad_outputs = conv_args[2] if len(conv_args) > 2 else conv_kw.get("grad_outputs")
        except Exception:
            outputs = inputs = grad_outputs = None  # the call below says what is wrong
        outs = _tensor_list(outputs)
        ins = _tensor_list(inputs)
        seeds = _tensor_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
        skipped = skipped_inputs([t.grad_fn for t in outs], names)
        recorder = Recorder()
        with observe(recorder):
            try:
                value = fn.invoke(a, kw)
            except GradcalcError as exc:
                if exc.loc is None:
                    exc.loc = loc
                raise
            except Exception as exc:
                raise error_from(exc, loc) from None
        roots = []
        for k, t in enumerate(outs):
            g = seeds[k] if k < len(seeds) else None
            if g is None and t.numel() == 1:
                g = _ones(t)
            shown = ", ".join(names.of(t)) or (label if k == 0 else f"output {k}")
            roots.append((t, snapshot(g) if g is not None else None, shown))
        flags = {"retain_graph": bool(conv_kw.get("retain_graph")) if outputs is not None else False,
                 "create_graph": bool(conv_kw.get("create_graph")) if outputs is not None else False}
        results = tuple(snapshot(v) if isinstance(v, ENGINE.Tensor) else v for v in value) \
            if isinstance(value, tuple) else None
        story = Narration(recorder, names, kind="grad", roots=roots, flags=flags, skipped=skipped, inputs=ins,
                          results=results)
        host.explanation(story.render)
        host.show(value, True)  # as the expression statement `grad(...)` shows it

    return run


def _tensor_list(v: Any) -> list[Any]:
    if isinstance(v, ENGINE.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, ENGINE.Tensor)]
    return []


# -- explain T.grad ----------------------------------------------------------------------------------------
def _compile_dot_grad(c: Compiler, node: A.Attribute) -> Closure:
    obj = c.expr(node.obj, VALUE)
    where = start_of(node.obj)
    host = c.interp.host
    interp = c.interp
    label = _expr_text(c, node.obj, "this tensor")

    def run(f: Frame) -> None:
        from gradcalc.autograd.inspection import grad_of  # (explain loads when first used, not on a cold start)

        from ..tell.explain.why_grad import explain_grad  # (explain loads when first used, not on a cold start)
        from ..tell.names import Names  # (not on a cold start)

        t = obj(f)
        if not isinstance(t, ENGINE.Tensor):
            raise GradcalcError(f"explain T.grad needs a tensor T, not {describe(t)}", where)
        report = explain_grad(t, Names(f), label, interp)
        value = grad_of(t)
        if value is not None:
            ws = interp.workspace
            ws["_"] = ws["ans"] = value  # as `T.grad` alone would leave it
        host.explanation(report.render)

    return run


# -- explain (the last error) ------------------------------------------------------------------------------
def _compile_last_error(c: Compiler, st: Explain) -> Closure:
    host = c.interp.host
    interp = c.interp

    def run(f: Frame) -> None:
        from ..tell.explain.long_errors import explain_error  # (explain loads when first used, not on a cold start)

        report = explain_error(interp.last_error, f, interp)
        host.explanation(report.render)

    return run
