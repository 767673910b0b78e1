"""The evaluator: each lowered statement is compiled, once, into a Python closure, and run over a workspace.

Compiling dispatches on node types through tables, and decides everything that does not depend on
values (which context a literal is in, which operator function to call, whether a call is a method
call): running a loop then only calls closures, without looking at nodes again.

How literals behave (LANGUAGE.md section 1): a number literal is a float64 0-d tensor as a value
(`x = 3`, `3`), but a Python number as an operand (`x ** 2` is PowBackward0, `f32 * 2` stays float32)
and as an argument (`zeros(2, 3)`, `x.sum(dim=0)`). When both operands of an operator are literals, the
left one is a tensor, so `2 ** 3 ** 2` is `tensor(512.)`.

Control flow returns signals (BREAK, CONTINUE, RETURN) rather than raising exceptions; errors become
`GradcalcError`s located at the operator, call or statement that failed.
"""

from __future__ import annotations

import difflib
import math
import operator
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import ast as A
from .builtins import (
    ATTRIBUTES,
    DTYPES,
    FUNCTIONS,
    METHODS,
    NODE_ATTRIBUTES,
    NODE_METHODS,
    SETTABLE,
    Builtin,
    RawList,
    as_tensor,
    check_size,
    describe,
)
from .errors import GradcalcError, Interrupted, Loc, SyntaxProblem

if TYPE_CHECKING:
    from .session import Session

MAX_EXPR_DEPTH = 400  # nesting of one expression: deeper is a clean error when compiling, not a crash
MAX_CALL_DEPTH = 800  # nested calls of user functions (recursion)

MISSING = object()


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BREAK = _Signal("BREAK")
CONTINUE = _Signal("CONTINUE")
RETURN = _Signal("RETURN")

# Expression contexts: what a literal becomes (see the module docstring).
VALUE, OPERAND, ARG, INDEX = range(4)


class Unit(NamedTuple):
    """Where compiled code came from: errors and warnings inside it point into this text."""

    filename: str
    source: str
    interactive: bool = False  # a one-line REPL input: its diagnostics may drop the location


class Frame:
    """The variables of one scope: the workspace at top level, or a call's locals (then `parent` is the
    scope the function was defined in: closures see it)."""

    __slots__ = ("vars", "parent", "retval", "saved", "hints")

    def __init__(self, vars: dict[str, Any], parent: Frame | None) -> None:
        self.vars = vars
        self.parent = parent
        self.retval: Any = None
        self.saved: list[tuple[str, Any]] | None = None  # `save`d names, in a custom function's forward
        self.hints: dict[str, str] | None = None  # why a name may be missing (a forward local not saved)


Closure = Callable[[Frame], Any]


# ---------------------------------------------------------------------------------------------------
# Operators


def _mul(a: Any, b: Any) -> Any:
    # Python would repeat a string or tuple: `"ab" * 10**9` must not allocate gigabytes
    if isinstance(a, (str, tuple, list)) or isinstance(b, (str, tuple, list)):
        raise TypeError("unsupported operand")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int and (b > 64 or b < 0):
        return float(a) ** b  # a huge exponent of Python ints would compute for ever
    return a**b


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": _mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "@": operator.matmul,
    "**": _pow,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
UNARY: dict[str, Callable[[Any], Any]] = {"-": operator.neg, "+": operator.pos}
IN_PLACE = {"+": "add_", "-": "sub_", "*": "mul_", "/": "div_"}
OP_WORDS = {
    "+": "add",
    "-": "subtract",
    "*": "multiply",
    "/": "divide",
    "//": "floor-divide",
    "%": "take the remainder of",
    "@": "matrix-multiply",
    "**": "raise to a power",
}


def error_from(exc: BaseException, loc: Loc | None) -> GradcalcError:
    """An exception raised while running, as a located GradcalcError in our words."""
    if isinstance(exc, GradcalcError):
        if exc.loc is None:
            exc.loc = loc
        return exc
    if isinstance(exc, RecursionError):
        return GradcalcError("the computation is nested too deeply (Python's recursion limit)", loc)
    if isinstance(exc, MemoryError):
        return GradcalcError("out of memory: the result is too large (see --max-elements)", loc)
    if isinstance(exc, ZeroDivisionError):
        return GradcalcError("division by zero (of Python numbers; tensors give inf or nan)", loc)
    if isinstance(exc, OverflowError):
        return GradcalcError(f"a number is too large: {exc}", loc)
    message = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        message = f"no key {exc.args[0]!r}"
    if not message:
        message = f"the engine failed ({type(exc).__name__})"
    return GradcalcError(message, loc)


def _operator_error(exc: Exception, sym: str, a: Any, b: Any, loc: Loc) -> GradcalcError:
    text = str(exc)
    python_words = (
        "unsupported operand",
        "not supported between",
        "can only concatenate",
        "can't multiply",
        "must be str",
        "not iterable",
        "bad operand type",
    )
    if isinstance(exc, TypeError) and any(w in text for w in python_words):
        if sym in ("==", "!=", "<", "<=", ">", ">="):
            return GradcalcError(f"can't compare {describe(a)} with {describe(b)} using '{sym}'", loc)
        verb = OP_WORDS.get(sym, f"apply '{sym}' to")
        return GradcalcError(f"can't {verb} {describe(a)} and {describe(b)} (operator '{sym}')", loc)
    return error_from(exc, loc)


# ---------------------------------------------------------------------------------------------------
# Functions made by `def` and `function`


class UserFunction:
    """A function written with `def`: parameters, a compiled body, and the scope it closes over."""

    __slots__ = ("name", "params", "defaults", "body", "scope", "interp", "__weakref__")

    def __init__(
        self,
        name: str,
        params: list[str],
        defaults: list[Any],
        body: Closure,
        scope: Frame,
        interp: Interpreter,
    ) -> None:
        self.name, self.params, self.defaults, self.body, self.scope, self.interp = (
            name,
            params,
            defaults,
            body,
            scope,
            interp,
        )

    def bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        return bind_arguments(self.name, self.params, self.defaults, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame = Frame(self.bind(args, kwargs), self.scope)
        interp = self.interp
        if interp.depth >= MAX_CALL_DEPTH:
            raise GradcalcError(
                f"too deep a recursion: more than {MAX_CALL_DEPTH} nested calls (in {self.name})"
            )
        interp.depth += 1
        try:
            signal = self.body(frame)
        finally:
            interp.depth -= 1
        return frame.retval if signal is RETURN else None

    def __repr__(self) -> str:
        return f"<function {self.name}>"


def bind_arguments(
    name: str, params: list[str], defaults: list[Any], args: tuple, kwargs: dict
) -> dict[str, Any]:
    """Python's rules for positional, keyword and default arguments, with our messages."""
    n = len(params)
    if len(args) > n:
        raise GradcalcError(
            f"{name}() takes {n} argument{'s' * (n != 1)} ({', '.join(params)}), but {len(args)} were given"
        )
    values = dict(zip(params, args, strict=False))
    for key, value in kwargs.items():
        if key not in params:
            raise GradcalcError(
                f"{name}() has no parameter '{key}' (its parameters: {', '.join(params) or 'none'})"
            )
        if key in values:
            raise GradcalcError(f"{name}() got two values for '{key}'")
        values[key] = value
    if len(values) < n:
        first_default = n - len(defaults)
        for i, p in enumerate(params):
            if p not in values:
                if i < first_default:
                    raise GradcalcError(f"{name}() is missing its argument '{p}'")
                values[p] = defaults[i - first_default]
    return values


class CustomFunction:
    """A `function` block: a subclass of the engine's autograd.Function, called through its `apply`."""

    __slots__ = ("name", "cls", "__weakref__")

    def __init__(self, name: str, cls: type) -> None:
        self.name, self.cls = name, cls

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise GradcalcError(f"{self.name}() takes its inputs by position, not by keyword")
        return self.cls.apply(*args)

    def __repr__(self) -> str:
        return f"<function {self.name} (a custom autograd function)>"


class BoundMethod:
    """`x.sum` without the call: a tensor method as a value (`f = x.sum; f()`)."""

    __slots__ = ("obj", "builtin")

    def __init__(self, obj: Any, builtin: Builtin) -> None:
        self.obj, self.builtin = obj, builtin

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return invoke_method(self.builtin, self.obj, args, kwargs)

    def __repr__(self) -> str:
        return f"<method {self.builtin.name} of a tensor>"


def invoke_method(b: Builtin, obj: Any, args: tuple | list, kwargs: dict) -> Any:
    """Call tensor method `b` on `obj`, arguments converted as the table says, the result's size checked."""
    if args or kwargs:
        args, kwargs = b.convert(args, kwargs)
    result = getattr(obj, b.target)(*args, **kwargs)
    if type(result) is _T.Tensor and result.numel() > _T.limits.max_elements:
        check_size(result.numel(), f"x.{b.name}(...)")
    return result


class _EngineNames:
    """Engine objects looked up once, when the first program is compiled (not at import)."""

    Tensor: type
    tensor: Callable[..., Any]
    Node: type
    limits: Any

    def load(self) -> None:
        if hasattr(self, "Tensor"):
            return
        import gradcalc
        from gradcalc.autograd.node import Node
        from gradcalc.autograd.tensor import Tensor

        from .builtins import LIMITS

        self.Tensor, self.tensor, self.Node, self.limits = Tensor, gradcalc.tensor, Node, LIMITS


_T = _EngineNames()


def truth(value: Any, loc: Loc) -> bool:
    """A condition's truth: a one-element tensor by its value; several elements are an error."""
    try:
        return bool(value)
    except Exception as exc:
        raise error_from(exc, loc) from None


# ---------------------------------------------------------------------------------------------------
# The interpreter: a workspace, and the state of the running program


class Interpreter:
    """Runs compiled statements over a workspace; reports output through its `host` (the Session)."""

    def __init__(self, host: Session, max_elements: int) -> None:
        _T.load()
        self.host = host
        self.max_elements = max_elements
        self.workspace: dict[str, Any] = {}
        self.predefined: dict[str, Any] = {}
        self.top = Frame(self.workspace, None)
        self.stop_requested = False  # set by Session.interrupt: stop at the next statement
        self.current: tuple[Loc, Unit] | None = None  # the statement running (for warnings)
        self.depth = 0
        self.reset()

    def reset(self) -> None:
        """Forget every user name; the predefined constants come back."""
        self.workspace.clear()
        self.predefined.clear()
        self.predefined.update(pi=math.pi, e=math.e, inf=math.inf, nan=math.nan)

    def compile(self, program: A.Program, unit: Unit) -> list[tuple[Loc, Closure]]:
        """Compile the top-level statements (a SyntaxProblem for an expression nested too deeply)."""
        from .parser import no_gc

        c = Compiler(self, unit)
        with no_gc():
            return [(st.loc, c.statement_runner(st)) for st in program.body]

    def lookup(self, frame: Frame, name: str, loc: Loc) -> Any:
        """A name not in the innermost scope: enclosing scopes, the workspace, predefined, built-in."""
        f = frame.parent
        while f is not None:
            v = f.vars.get(name, MISSING)
            if v is not MISSING:
                return v
            f = f.parent
        v = self.predefined.get(name, MISSING)
        if v is not MISSING:
            return v
        v = FUNCTIONS.get(name, MISSING)
        if v is not MISSING:
            return v
        if name in DTYPES:
            import gradcalc

            return getattr(gradcalc, name)
        raise self.name_error(frame, name, loc)

    def name_error(self, frame: Frame, name: str, loc: Loc) -> GradcalcError:
        f: Frame | None = frame
        while f is not None:
            if f.hints and name in f.hints:
                return GradcalcError(f.hints[name], loc)
            f = f.parent
        known: set[str] = set(self.predefined) | set(FUNCTIONS) | set(DTYPES)
        f = frame
        while f is not None:
            known.update(f.vars)
            f = f.parent
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return GradcalcError(f"name '{name}' is not defined{hint}", loc)


# ---------------------------------------------------------------------------------------------------
# The compiler: nodes to closures


class Compiler:
    """Compiles the nodes of one unit (a program, or a file run by :load) into closures."""

    def __init__(self, interp: Interpreter, unit: Unit) -> None:
        self.interp = interp
        self.unit = unit
        self.depth = 0
        self.exprs: dict[type, Callable[[Any, int], Closure]] = {
            A.Num: self.num,
            A.NumList: self.num_list,
            A.Str: self.const,
            A.Const: self.const,
            A.Name: self.name,
            A.ListExpr: self.list_expr,
            A.TupleExpr: self.tuple_expr,
            A.Chain: self.chain,
            A.Power: self.power,
            A.Unary: self.unary,
            A.Compare: self.compare,
            A.BoolOp: self.bool_op,
            A.Not: self.not_,
            A.Call: self.call,
            A.Attribute: self.attribute,
            A.Index: self.index,
            A.Slice: self.slice,
        }
        self.stmts: dict[type, Callable[[Any], Closure]] = {
            A.ExprStmt: self.expr_stmt,
            A.Assign: self.assign,
            A.AugAssign: self.aug_assign,
            A.Backward: self.backward,
            A.RetainGrad: self.retain_grad,
            A.ZeroGrad: self.zero_grad,
            A.Del: self.del_,
            A.Print: self.print_,
            A.Graph: self.graph,
            A.Seed: self.seed,
            A.Save: self.save,
            A.Return: self.return_,
            A.Break: self.break_,
            A.Continue: self.continue_,
            A.Pass: self.pass_,
            A.Command: self.command,
            A.If: self.if_,
            A.For: self.for_,
            A.While: self.while_,
            A.With: self.with_,
            A.Def: self.def_,
            A.FunctionDef: self.function_def,
        }

    # -- blocks and statements -------------------------------------------------------------------
    def statement_runner(self, st: A.Node) -> Closure:
        """One statement as run at top level: located errors, the interrupt check, the current position."""
        return self.block([st])

    def block(self, body: list[A.Node]) -> Closure:
        interp = self.interp
        unit = self.unit
        steps = [((st.loc, unit), st.loc, self.stmts[type(st)](st)) for st in body]

        def run_block(f: Frame) -> Any:
            for pos, loc, step in steps:
                if interp.stop_requested:
                    interp.stop_requested = False
                    raise Interrupted(loc)
                interp.current = pos
                try:
                    signal = step(f)
                except GradcalcError as exc:
                    if exc.loc is None:
                        exc.loc = loc
                    if exc.filename is None:
                        exc.filename, exc.source = unit.filename, unit.source
                        exc.interactive = unit.interactive  # type: ignore[attr-defined]
                    raise
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as exc:
                    err = error_from(exc, loc)
                    err.filename, err.source = unit.filename, unit.source
                    err.interactive = unit.interactive  # type: ignore[attr-defined]
                    raise err from None
                if signal is not None:
                    return signal
            return None

        return run_block

    def expr_stmt(self, st: A.ExprStmt) -> Closure:
        ev = self.expr(st.expr, VALUE)
        show = self.interp.host.show
        is_call = isinstance(st.expr, A.Call)

        def run(f: Frame) -> None:
            show(ev(f), is_call)

        return run

    def assign(self, st: A.Assign) -> Closure:
        value = self.expr(st.value, VALUE)
        binders = [self.binder(t) for t in st.targets]
        if st.requires_grad:
            plain = value
            where = st.value

            target = st.targets[0].id  # type: ignore[attr-defined]
            source = _source_text(where)

            def value(f: Frame) -> Any:  # x = EXPR requires_grad  ==  x = (EXPR).requires_grad_()
                v = as_tensor(plain(f))
                if not isinstance(v, _T.Tensor):
                    raise GradcalcError(
                        f"`requires_grad` needs a tensor, not {describe(v)}", A.start_of(where)
                    )
                if v.grad_fn is not None:  # PyTorch would accept it silently; LANGUAGE.md says it is an error
                    raise GradcalcError(
                        f"`requires_grad` makes a new leaf, but this tensor was computed "
                        f"(grad_fn={v.grad_fn.name()}): write `{target} = {source}.detach() requires_grad`",
                        A.start_of(where),
                    )
                return v.requires_grad_()

        if len(binders) == 1:
            bind = binders[0]
            if isinstance(st.targets[0], A.Name):
                name = st.targets[0].id

                def run_name(f: Frame) -> None:
                    f.vars[name] = value(f)

                return run_name

            def run_one(f: Frame) -> None:
                bind(f, value(f))

            return run_one

        def run_many(f: Frame) -> None:
            v = value(f)
            for bind in binders:
                bind(f, v)

        return run_many

    def binder(self, target: A.Node) -> Callable[[Frame, Any], None]:
        """How to store a value into an assignment target."""
        if isinstance(target, A.Name):
            name = target.id

            def bind_name(f: Frame, v: Any) -> None:
                f.vars[name] = v

            return bind_name
        if isinstance(target, A.Index):
            obj = self.expr(target.obj, VALUE)
            idx = self.index_expr(target.index)
            loc = target.loc

            def bind_item(f: Frame, v: Any) -> None:
                o = obj(f)
                i = idx(f)
                if isinstance(v, _T.Tensor) and v.ndim == 0 and not v.requires_grad:
                    v = v.item()  # g[mask] = 0: a scalar fill
                if not isinstance(o, _T.Tensor):
                    raise GradcalcError(f"only tensors can be assigned into by index, not {describe(o)}", loc)
                try:
                    o[i] = v
                except Exception as exc:
                    raise error_from(exc, loc) from None

            return bind_item
        if isinstance(target, A.Attribute):
            obj = self.expr(target.obj, VALUE)
            attr, loc = target.name, target.loc

            def bind_attr(f: Frame, v: Any) -> None:
                o = obj(f)
                if not isinstance(o, _T.Tensor) or attr not in SETTABLE:
                    settable = ", ".join(f"x.{s}" for s in SETTABLE)
                    raise GradcalcError(
                        f"can't assign to .{attr}; only {settable} of a tensor can be assigned", loc
                    )
                if attr != "requires_grad":
                    v = as_tensor(v) if v is not None else None
                try:
                    setattr(o, ATTRIBUTES[attr], v)
                except Exception as exc:
                    raise error_from(exc, loc) from None

            return bind_attr
        assert isinstance(target, A.TupleExpr)
        parts = [self.binder(t) for t in target.items]
        n = len(parts)
        loc = target.loc

        def bind_tuple(f: Frame, v: Any) -> None:
            try:
                items = list(v)
            except Exception:
                raise GradcalcError(f"can't unpack {describe(v)} into {n} names", loc) from None
            if len(items) != n:
                raise GradcalcError(f"can't unpack {len(items)} values into {n} names", loc)
            for bind, item in zip(parts, items, strict=True):
                bind(f, item)

        return bind_tuple

    def aug_assign(self, st: A.AugAssign) -> Closure:
        value = self.expr(st.value, OPERAND)
        method = IN_PLACE[st.op]
        op = BINARY[st.op]
        sym = st.op + "="
        target = st.target
        interp = self.interp
        if isinstance(target, A.Index):
            # x[i] += v is x[i] = x[i] + v (the same values; PyTorch records it through a view)
            current = self.expr(target, VALUE)
            bind = self.binder(target)

            def run_item(f: Frame) -> None:
                old = current(f)
                v = value(f)
                try:
                    new = op(old, v)
                except Exception as exc:
                    raise _operator_error(exc, st.op, old, v, target.loc) from None
                bind(f, new)

            return run_item
        current = self.expr(target, VALUE)
        bind = self.binder(target)
        loc = st.loc

        def run(f: Frame) -> None:
            old = current(f)
            v = value(f)
            if isinstance(old, _T.Tensor):
                if isinstance(v, _T.Tensor) and old.numel() * v.numel() > interp.max_elements:
                    check_size(v.numel(), "the right side")
                try:
                    getattr(old, method)(v)  # in place: x += 1 is x.add_(1)
                except Exception as exc:
                    raise error_from(exc, loc) from None
                return
            if isinstance(target, A.Attribute):
                raise GradcalcError(
                    f"'{sym}' changes a tensor in place, but .{target.name} is {describe(old)}", loc
                )
            try:
                new = op(old, v)
            except Exception as exc:
                raise _operator_error(exc, st.op, old, v, loc) from None
            bind(f, new)

        return run

    def backward(self, st: A.Backward) -> Closure:
        ev = self.expr(st.expr, VALUE)
        gradient = self.expr(st.gradient, OPERAND) if st.gradient is not None else None
        retain = True if st.retain_graph else None  # None: create_graph decides, as in PyTorch
        create = st.create_graph
        where = A.start_of(st.expr)

        def run(f: Frame) -> None:
            y = ev(f)
            if not isinstance(y, _T.Tensor):
                raise GradcalcError(f"backward needs a tensor, not {describe(y)}", where)
            g = as_tensor(gradient(f)) if gradient is not None else None
            y.backward(g, retain_graph=retain, create_graph=create)

        return run

    def _tensors(self, exprs: list[A.Node], what: str) -> Callable[[Frame], list[Any]]:
        fns = [(self.expr(e, VALUE), A.start_of(e)) for e in exprs]

        def values(f: Frame) -> list[Any]:
            out = []
            for fn, loc in fns:
                v = fn(f)
                if not isinstance(v, _T.Tensor):
                    raise GradcalcError(f"{what} needs tensors, not {describe(v)}", loc)
                out.append(v)
            return out

        return values

    def retain_grad(self, st: A.RetainGrad) -> Closure:
        values = self._tensors(st.exprs, "retain_grad")

        def run(f: Frame) -> None:
            for t in values(f):  # all checked before any is changed
                t.retain_grad()

        return run

    def zero_grad(self, st: A.ZeroGrad) -> Closure:
        values = self._tensors(st.exprs, "zero_grad")

        def run(f: Frame) -> None:
            for t in values(f):
                t.grad = None  # PyTorch's optimizer default (set_to_none=True)

        return run

    def del_(self, st: A.Del) -> Closure:
        names = [(n.id, n.loc) for n in st.names]
        interp = self.interp

        def run(f: Frame) -> None:
            for name, loc in names:
                if name not in f.vars:
                    if name in interp.predefined or name in FUNCTIONS:
                        raise GradcalcError(
                            f"'{name}' is predefined, not a variable: it can't be deleted", loc
                        )
                    raise GradcalcError(f"name '{name}' is not defined", loc)
            for name, _ in names:
                del f.vars[name]

        return run

    def print_(self, st: A.Print) -> Closure:
        fns = [self.expr(a, VALUE) for a in st.args]
        emit = self.interp.host.print_values

        def run(f: Frame) -> None:
            emit([fn(f) for fn in fns])

        return run

    def graph(self, st: A.Graph) -> Closure:
        ev = self.expr(st.expr, VALUE)
        path = self.expr(st.path, VALUE) if st.path is not None else None
        host = self.interp.host
        where = A.start_of(st.expr)
        path_loc = A.start_of(st.path) if st.path is not None else None

        def run(f: Frame) -> None:
            y = ev(f)
            if not isinstance(y, _T.Tensor):
                raise GradcalcError(f"graph needs a tensor, not {describe(y)}", where)
            target = path(f) if path is not None else None
            if target is not None and not isinstance(target, str):
                raise GradcalcError(
                    f"graph ... to needs a file name (a string), not {describe(target)}", path_loc
                )
            host.graph(y, target)

        return run

    def seed(self, st: A.Seed) -> Closure:
        ev = self.expr(st.expr, ARG)

        def run(f: Frame) -> None:
            from .builtins import _whole, engine

            engine().manual_seed(_whole(ev(f), "a seed"))

        return run

    def save(self, st: A.Save) -> Closure:
        names = [(n.id, self.expr(n, VALUE)) for n in st.exprs]

        def run(f: Frame) -> None:
            if f.saved is None:
                raise GradcalcError("`save` belongs in the forward block of a `function`")
            f.saved.extend((name, fn(f)) for name, fn in names)

        return run

    def return_(self, st: A.Return) -> Closure:
        ev = self.expr(st.value, VALUE) if st.value is not None else None

        def run(f: Frame) -> Any:
            f.retval = ev(f) if ev is not None else None
            return RETURN

        return run

    def break_(self, st: A.Break) -> Closure:
        return lambda f: BREAK

    def continue_(self, st: A.Continue) -> Closure:
        return lambda f: CONTINUE

    def pass_(self, st: A.Pass) -> Closure:
        return lambda f: None

    def command(self, st: A.Command) -> Closure:
        host = self.interp.host
        name, arg = st.name, st.arg

        def run(f: Frame) -> None:
            host.command(name, arg)

        return run

    def if_(self, st: A.If) -> Closure:
        branches = [(self.expr(c, VALUE), A.start_of(c), self.block(b)) for c, b in st.branches]
        orelse = self.block(st.orelse) if st.orelse else None

        def run(f: Frame) -> Any:
            for cond, loc, body in branches:
                if truth(cond(f), loc):
                    return body(f)
            if orelse is not None:
                return orelse(f)
            return None

        return run

    def for_(self, st: A.For) -> Closure:
        iterable = self.expr(st.iterable, VALUE)
        body = self.block(st.body)
        names = st.names
        where = A.start_of(st.iterable)
        single = names[0] if len(names) == 1 else None
        unpack = (
            self.binder(A.TupleExpr([A.Name(n, st.loc) for n in names], st.loc)) if single is None else None
        )

        def run(f: Frame) -> Any:
            seq = iterable(f)
            if isinstance(seq, _T.Tensor) and seq.ndim == 0:
                raise GradcalcError("can't loop over a 0-d tensor; it has no first dimension", where)
            try:
                it = iter(seq)
            except TypeError:
                raise GradcalcError(f"can't loop over {describe(seq)}", where) from None
            for item in it:
                if single is not None:
                    f.vars[single] = item
                else:
                    unpack(f, item)
                signal = body(f)
                if signal is not None:
                    if signal is BREAK:
                        break
                    if signal is CONTINUE:
                        continue
                    return signal
            return None

        return run

    def while_(self, st: A.While) -> Closure:
        cond = self.expr(st.cond, VALUE)
        body = self.block(st.body)
        loc = A.start_of(st.cond)

        def run(f: Frame) -> Any:
            while truth(cond(f), loc):
                signal = body(f)
                if signal is not None:
                    if signal is BREAK:
                        break
                    if signal is CONTINUE:
                        continue
                    return signal
            return None

        return run

    def with_(self, st: A.With) -> Closure:
        import gradcalc

        body = self.block(st.body)
        interp = self.interp
        factories: dict[str, Callable[[], Any]] = {
            "no_grad": gradcalc.no_grad,
            "enable_grad": gradcalc.enable_grad,
            "inference_mode": gradcalc.inference_mode,
            "detect_anomaly": gradcalc.autograd.detect_anomaly,
        }
        factory = factories[st.mode]
        anomaly = st.mode == "detect_anomaly"

        def run(f: Frame) -> Any:
            if anomaly:
                interp.host.describe_forward_ops()
            with factory():
                return body(f)

        return run

    def _params(self, params: list[A.Param]) -> tuple[list[str], list[Closure]]:
        names = [p.name for p in params]
        defaults = [self.expr(p.default, VALUE) for p in params if p.default is not None]
        return names, defaults

    def def_(self, st: A.Def) -> Closure:
        names, defaults = self._params(st.params)
        body = self.block(st.body)
        interp = self.interp
        fname = st.name

        def run(f: Frame) -> None:
            f.vars[fname] = UserFunction(fname, names, [d(f) for d in defaults], body, f, interp)

        return run

    def function_def(self, st: A.FunctionDef) -> Closure:
        names, defaults = self._params(st.params)
        grad_names = [p.name for p in st.grad_params]
        forward = self.block(st.forward)
        backward = self.block(st.backward)
        interp = self.interp
        fname = st.name
        forward_locals = set(names) | _assigned_names(st.forward)

        def run(f: Frame) -> None:
            import gradcalc

            scope = f
            default_values = [d(f) for d in defaults]

            def forward_fn(ctx: Any, *args: Any) -> Any:
                frame = Frame(bind_arguments(fname, names, default_values, args, {}), scope)
                frame.saved = []
                interp.depth += 1
                try:
                    signal = forward(frame)
                finally:
                    interp.depth -= 1
                saved = frame.saved
                tensors = [v for _, v in saved if v is None or isinstance(v, _T.Tensor)]
                if tensors:  # (saving nothing would make the engine think the graph was freed)
                    ctx.save_for_backward(*tensors)
                # other values (numbers) ride on ctx, as PyTorch's ctx.k = v
                ctx.gradcalc_saved = [
                    (n, None if v is None or isinstance(v, _T.Tensor) else (v,)) for n, v in saved
                ]
                return frame.retval if signal is RETURN else None

            def backward_fn(ctx: Any, *grads: Any) -> Any:
                if len(grads) != len(grad_names):
                    raise GradcalcError(
                        f"{fname}: backward takes {_count(len(grad_names), 'gradient')}, but forward "
                        f"returned {_count(len(grads), 'output')}; take one gradient per output",
                        st.backward_loc,
                    )
                frame = Frame(dict(zip(grad_names, grads, strict=True)), scope)
                saved = getattr(ctx, "gradcalc_saved", ())
                # reading saved_tensors checks them for in-place changes made since forward
                tensors = iter(ctx.saved_tensors if any(o is None for _, o in saved) else ())
                for name, other in saved:
                    frame.vars[name] = next(tensors) if other is None else other[0]
                frame.hints = {
                    n: f"'{n}' belongs to {fname}'s forward block; `save {n}` there to use it in backward"
                    for n in forward_locals
                    if n not in frame.vars
                }
                interp.depth += 1
                try:
                    signal = backward(frame)
                finally:
                    interp.depth -= 1
                return frame.retval if signal is RETURN else None

            cls = type(
                fname,
                (gradcalc.autograd.Function,),
                {"forward": staticmethod(forward_fn), "backward": staticmethod(backward_fn)},
            )
            f.vars[fname] = CustomFunction(fname, cls)

        return run

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: A.Node, ctx: int) -> Closure:
        self.depth += 1
        try:
            if self.depth > MAX_EXPR_DEPTH:
                raise SyntaxProblem(f"an expression nested more than {MAX_EXPR_DEPTH} levels deep", node.loc)
            return self.exprs[type(node)](node, ctx)
        finally:
            self.depth -= 1

    def num(self, node: A.Num, ctx: int) -> Closure:
        value = node.value
        if ctx == VALUE:
            make = _T.tensor
            x = float(value)
            return lambda f: make(x)
        return lambda f: value

    def num_list(self, node: A.NumList, ctx: int) -> Closure:
        if node.problem is not None:
            problem, loc = node.problem, node.loc

            def fail(f: Frame) -> Any:
                raise GradcalcError(problem, loc)

            return fail
        data = node.data
        if ctx == ARG:
            return lambda f: RawList(data)
        if ctx == INDEX and _all_whole(data):
            ints = _ints(data)
            return lambda f: list(ints)
        floats = _floats(data)
        make = _T.tensor
        return lambda f: make(floats)

    def const(self, node: A.Str | A.Const, ctx: int) -> Closure:
        value = node.value
        return lambda f: value

    def name(self, node: A.Name, ctx: int) -> Closure:
        name, loc = node.id, node.loc
        lookup = self.interp.lookup

        def ev(f: Frame) -> Any:
            v = f.vars.get(name, MISSING)
            if v is MISSING:
                return lookup(f, name, loc)
            return v

        return ev

    def list_expr(self, node: A.ListExpr, ctx: int) -> Closure:
        """`[a, b]` is a list value; but a list whose items are all numbers (`[pi, 1]`, `[x.item(), 0]`) is a
        tensor, as a list literal of numbers is."""
        fns = [self.expr(i, ARG) for i in node.items]
        literal = [i for i, item in enumerate(node.items) if isinstance(item, (A.Num, A.NumList))]
        make = _T.tensor
        loc = node.loc
        numeric = (int, float, RawList)

        def ev(f: Frame) -> Any:
            values = [fn(f) for fn in fns]
            if all(type(v) in numeric for v in values):
                data = _floats(values)
                if not _rectangular(data):
                    raise GradcalcError("a ragged list: every row of a tensor needs the same length", loc)
                return make(data)
            for i in literal:
                values[i] = as_tensor(values[i])
            return values

        return ev

    def tuple_expr(self, node: A.TupleExpr, ctx: int) -> Closure:
        fns = [self.expr(i, VALUE) for i in node.items]
        return lambda f: tuple(fn(f) for fn in fns)

    def _binary(self, sym: str, left: Closure, right: Closure, loc: Loc) -> Closure:
        op = BINARY[sym]
        interp = self.interp
        Tensor = _T.Tensor

        def ev(f: Frame) -> Any:
            a = left(f)
            b = right(f)
            if type(a) is Tensor and type(b) is Tensor and a.numel() * b.numel() > interp.max_elements:
                _check_result_size(sym, a, b, loc)
            try:
                return op(a, b)
            except Exception as exc:
                raise _operator_error(exc, sym, a, b, loc) from None

        return ev

    def chain(self, node: A.Chain, ctx: int) -> Closure:
        ops = node.ops
        both_literal = isinstance(node.first, A.Num) and isinstance(ops[0][1], A.Num)
        first = self.expr(node.first, VALUE if both_literal else OPERAND)
        steps = [(sym, self.expr(operand, OPERAND), loc) for sym, operand, loc in ops]
        if len(steps) == 1:
            sym, right, loc = steps[0]
            return self._binary(sym, first, right, loc)
        binaries = [(BINARY[sym], sym, right, loc) for sym, right, loc in steps]
        interp = self.interp
        Tensor = _T.Tensor

        def ev(f: Frame) -> Any:
            a = first(f)
            for op, sym, right, loc in binaries:
                b = right(f)
                if type(a) is Tensor and type(b) is Tensor and a.numel() * b.numel() > interp.max_elements:
                    _check_result_size(sym, a, b, loc)
                try:
                    a = op(a, b)
                except Exception as exc:
                    raise _operator_error(exc, sym, a, b, loc) from None
            return a

        return ev

    def power(self, node: A.Power, ctx: int) -> Closure:
        both_literal = isinstance(node.base, A.Num) and isinstance(node.exponent, A.Num)
        base = self.expr(node.base, VALUE if both_literal else OPERAND)
        exponent = self.expr(node.exponent, OPERAND)
        return self._binary("**", base, exponent, node.loc)

    def unary(self, node: A.Unary, ctx: int) -> Closure:
        operand = self.expr(node.operand, OPERAND)
        op, sym, loc = UNARY[node.op], node.op, node.loc

        def ev(f: Frame) -> Any:
            v = operand(f)
            try:
                return op(v)
            except TypeError:
                raise GradcalcError(f"can't apply unary '{sym}' to {describe(v)}", loc) from None
            except Exception as exc:
                raise error_from(exc, loc) from None

        return ev

    def compare(self, node: A.Compare, ctx: int) -> Closure:
        both_literal = isinstance(node.left, A.Num) and isinstance(node.right, A.Num)
        left = self.expr(node.left, VALUE if both_literal else OPERAND)
        right = self.expr(node.right, OPERAND)
        return self._binary(node.op, left, right, node.loc)

    def bool_op(self, node: A.BoolOp, ctx: int) -> Closure:
        fns = [(self.expr(v, VALUE), A.start_of(v)) for v in node.values]
        want = node.op == "or"  # `or` stops at the first true value, `and` at the first false one

        def ev(f: Frame) -> Any:
            v = None
            for fn, loc in fns:
                v = fn(f)
                if truth(v, loc) is want:
                    return v
            return v

        return ev

    def not_(self, node: A.Not, ctx: int) -> Closure:
        operand = self.expr(node.operand, VALUE)
        loc = A.start_of(node.operand)
        return lambda f: not truth(operand(f), loc)

    def _arguments(
        self, node: A.Call
    ) -> tuple[list[Closure], list[tuple[str, Closure]], list[int], list[str]]:
        args = [self.expr(a, ARG) for a in node.args]
        kwargs = [(k, self.expr(v, ARG)) for k, v in node.kwargs]
        literal = (A.Num, A.NumList)
        lit_pos = [i for i, a in enumerate(node.args) if isinstance(a, literal)]
        lit_kw = [k for k, v in node.kwargs if isinstance(v, literal)]
        return args, kwargs, lit_pos, lit_kw

    def call(self, node: A.Call, ctx: int) -> Closure:
        if isinstance(node.func, A.Attribute):
            return self.method_call(node)
        func = self.expr(node.func, VALUE)
        args, kwargs, lit_pos, lit_kw = self._arguments(node)
        loc = node.loc
        fname = node.func.id if isinstance(node.func, A.Name) else None

        def ev(f: Frame) -> Any:
            fn = func(f)
            a = [g(f) for g in args]
            kw = {k: g(f) for k, g in kwargs} if kwargs else {}
            try:
                if type(fn) is Builtin:
                    return fn.invoke(a, kw)
                if not callable(fn) or isinstance(fn, _T.Tensor) or isinstance(fn, type):
                    what = f"'{fname}' is {describe(fn)}" if fname else f"this is {describe(fn)}"
                    raise GradcalcError(f"{what}, not a function: it can't be called", loc)
                for i in lit_pos:  # literals are tensors for user functions
                    a[i] = as_tensor(a[i])
                for k in lit_kw:
                    kw[k] = as_tensor(kw[k])
                return fn(*a, **kw)
            except GradcalcError as exc:
                if exc.loc is None:
                    exc.loc = loc
                raise
            except Exception as exc:
                raise error_from(exc, loc) from None

        return ev

    def method_call(self, node: A.Call) -> Closure:
        attr = node.func
        assert isinstance(attr, A.Attribute)
        obj = self.expr(attr.obj, VALUE)
        name, loc = attr.name, node.loc
        args, kwargs, _, _ = self._arguments(node)
        b = METHODS.get(name)
        Tensor = _T.Tensor
        if b is not None and not args and not kwargs:
            target = b.target
            limits = _T.limits

            def ev_plain(f: Frame) -> Any:
                o = obj(f)
                if type(o) is Tensor:
                    try:
                        result = getattr(o, target)()
                    except Exception as exc:
                        raise error_from(exc, loc) from None
                    if type(result) is Tensor and result.numel() > limits.max_elements:
                        check_size(result.numel(), f"x.{name}()")
                    return result
                return _other_method(o, name, (), {}, loc)

            return ev_plain

        def ev(f: Frame) -> Any:
            o = obj(f)
            a = [g(f) for g in args]
            kw = {k: g(f) for k, g in kwargs} if kwargs else {}
            if type(o) is Tensor and b is not None:
                try:
                    return invoke_method(b, o, a, kw)
                except Exception as exc:
                    raise error_from(exc, loc) from None
            return _other_method(o, name, a, kw, loc)

        return ev

    def attribute(self, node: A.Attribute, ctx: int) -> Closure:
        obj = self.expr(node.obj, VALUE)
        name, loc = node.name, node.loc
        Tensor = _T.Tensor
        engine_name = ATTRIBUTES.get(name)
        if engine_name is not None:

            def ev_attr(f: Frame) -> Any:
                o = obj(f)
                if type(o) is Tensor:
                    try:
                        return getattr(o, engine_name)
                    except Exception as exc:
                        raise error_from(exc, loc) from None
                return _other_attribute(o, name, loc)

            return ev_attr

        def ev(f: Frame) -> Any:
            return _other_attribute(obj(f), name, loc)

        return ev

    def index(self, node: A.Index, ctx: int) -> Closure:
        obj = self.expr(node.obj, VALUE)
        idx = self.index_expr(node.index)
        loc = node.loc

        def ev(f: Frame) -> Any:
            o = obj(f)
            i = idx(f)
            try:
                return o[i]
            except TypeError:
                if not hasattr(o, "__getitem__") or isinstance(o, (UserFunction, CustomFunction, Builtin)):
                    raise GradcalcError(f"can't index {describe(o)}", loc) from None
                raise GradcalcError(f"can't index {describe(o)} with {describe(i)}", loc) from None
            except Exception as exc:
                raise error_from(exc, loc) from None

        return ev

    def index_expr(self, node: A.Node) -> Closure:
        """An index: numbers as ints, whole float64 0-d tensors as ints, slices, tuples of those."""
        if isinstance(node, A.TupleExpr) and not node.parens:
            parts = [self.index_expr(i) for i in node.items]
            return lambda f: tuple(p(f) for p in parts)
        if isinstance(node, A.Slice):
            return self.slice(node, INDEX)
        ev = self.expr(node, INDEX)
        if isinstance(node, (A.Num, A.NumList, A.Const)):
            return ev
        return lambda f: _index_value(ev(f))

    def slice(self, node: A.Slice, ctx: int) -> Closure:
        parts = [self.index_expr(p) if p is not None else None for p in (node.start, node.stop, node.step)]
        start, stop, step = (p if p is not None else _none for p in parts)
        return lambda f: slice(start(f), stop(f), step(f))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _source_text(node: A.Node) -> str:
    """A short rendering of a simple expression for messages (a name, or `(...)`)."""
    return node.id if isinstance(node, A.Name) else "(...)"


def _none(f: Frame) -> None:
    return None


def _index_value(v: Any) -> Any:
    """`x[n]` where n = 1 (a float64 tensor): a whole 0-d tensor indexes as an int."""
    if type(v) is _T.Tensor and v.ndim == 0 and v.dtype.is_floating_point:
        x = v.item()
        if x == int(x):
            return int(x)
    return v


def _all_whole(data: Any) -> bool:
    if isinstance(data, list):
        return all(_all_whole(d) for d in data)
    return float(data).is_integer()


def _ints(data: Any) -> Any:
    if isinstance(data, list):
        return [_ints(d) for d in data]
    return int(data)


def _rectangular(data: list) -> bool:
    """True when nested lists have one length per depth (a tensor's shape)."""
    level = data
    while True:
        kinds = {isinstance(v, list) for v in level}
        if len(kinds) > 1:
            return False
        if not level or kinds == {False}:
            return True
        lengths = {len(v) for v in level}
        if len(lengths) > 1:
            return False
        level = [x for v in level for x in v]


def _floats(data: Any) -> Any:
    if isinstance(data, list):
        return [_floats(d) for d in data]
    return float(data)


def _check_result_size(sym: str, a: Any, b: Any, loc: Loc) -> None:
    """Before an operation of two large tensors: would its result exceed the element limit?"""
    import numpy as np

    sa, sb = tuple(a.shape), tuple(b.shape)
    try:
        if sym == "@":
            if len(sa) >= 2 and len(sb) >= 2:
                batch = np.broadcast_shapes(sa[:-2], sb[:-2])
                shape = (*batch, sa[-2], sb[-1])
            else:
                shape = sa[:-1] + sb[:-2] + sb[-1:] if sb else sa[:-1]
        else:
            shape = np.broadcast_shapes(sa, sb)
    except ValueError:
        return  # shapes that do not broadcast: the engine says so
    n = 1
    for d in shape:
        n *= d
    try:
        check_size(n, f"the result of '{sym}'")
    except GradcalcError as exc:
        exc.loc = loc
        raise


def _is_node(o: Any) -> bool:
    return isinstance(o, _T.Node)


def _other_attribute(o: Any, name: str, loc: Loc) -> Any:
    """Attributes of values that are not tensors (and unknown tensor attributes)."""
    if type(o) is _T.Tensor:
        b = METHODS.get(name)
        if b is not None:
            return BoundMethod(o, b)
        close = difflib.get_close_matches(name, list(ATTRIBUTES) + list(METHODS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise GradcalcError(f"a tensor has no attribute '{name}'{hint}", loc)
    if _is_node(o) and name in NODE_ATTRIBUTES:
        v = getattr(o, name, None)
        if isinstance(v, weakref.ref):
            v = v()
        return v
    raise GradcalcError(f"{describe(o)} has no attribute '{name}'", loc)


def _other_method(o: Any, name: str, args: Any, kwargs: dict, loc: Loc) -> Any:
    """Methods of values that are not tensors, and the message when there is none."""
    if type(o) is _T.Tensor:
        if name in ATTRIBUTES:
            raise GradcalcError(f"'{name}' is an attribute, not a method: write x.{name} without ()", loc)
        _other_attribute(o, name, loc)  # raises: no such attribute
    if _is_node(o) and name in NODE_METHODS and not args and not kwargs:
        return getattr(o, name)()
    if _is_node(o) and name in NODE_ATTRIBUTES:
        raise GradcalcError(f"'{name}' is an attribute, not a method: write .{name} without ()", loc)
    raise GradcalcError(f"{describe(o)} has no method '{name}'", loc)


def _assigned_names(body: list[A.Node]) -> set[str]:
    """Names a block assigns (for the hint when backward reads a forward local that was not saved)."""
    out: set[str] = set()
    for st in body:
        if isinstance(st, A.Assign):
            for t in st.targets:
                items = t.items if isinstance(t, A.TupleExpr) else [t]
                out.update(i.id for i in items if isinstance(i, A.Name))
        elif isinstance(st, A.For):
            out.update(st.names)
            out |= _assigned_names(st.body)
        elif isinstance(st, (A.While, A.With)):
            out |= _assigned_names(st.body)
        elif isinstance(st, A.If):
            for _, b in st.branches:
                out |= _assigned_names(b)
            out |= _assigned_names(st.orelse or [])
    return out
