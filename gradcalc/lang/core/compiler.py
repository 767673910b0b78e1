"""The compiler: lowered records to closures, decided once so that running only calls closures.

Compiling dispatches on record types through tables and decides everything that does not depend on
values (which context a literal is in, which operator function to call, whether a call is a method
call): running a loop then only calls closures, without looking at records again.

Expressions are compiled here (`Compiler.expr`); each statement by the one function registered for its
record with `@compiles` (in `gradcalc.lang.statements`, beside the record).

How literals behave (LANGUAGE.md section 1): a number literal is a float64 0-d tensor as a value
(`x = 3`, `3`), but a Python number as an operand (`x ** 2` is PowBackward0, `f32 * 2` stays float32)
and as an argument (`zeros(2, 3)`, `x.sum(dim=0)`). When both operands of an operator are literals, the
left one is a tensor, so `2 ** 3 ** 2` is `tensor(512.)`. The predefined constants (`pi e inf nan`) are
literals too, until the user rebinds them: `pi` prints `tensor(3.1416)`, `x * pi` keeps x's dtype.
A list literal of booleans is a bool tensor; one mixing booleans and numbers a float64 tensor (as
`torch.tensor` makes them).

Control flow returns signals (BREAK, CONTINUE, RETURN) rather than raising exceptions; errors become
`GradcalcError`s located at the operator, call or statement that failed.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GradcalcError, Loc, SyntaxProblem
from ..explain.rebound import LAST_NONE, read_grad
from ..explain.rebound import annotate as annotate_none
from ..syntax import ast as A
from ..values.builtins import (
    ATTRIBUTES,
    CONSTANTS,
    METHODS,
    SETTABLE,
    Builtin,
    RawList,
    as_tensor,
    check_size,
    describe,
)
from ..values.dispatch import (
    OBJECT_CALLS,
    all_whole,
    assign_other_attribute,
    assign_other_item,
    check_result_size,
    floats,
    index_value,
    ints,
    other_attribute,
    other_method,
    rectangular,
)
from ..values.failures import error_from, operator_error
from .frames import ENGINE as _T
from .frames import MISSING, Closure, CustomFunction, Frame, Unit, UserFunction, invoke_method, truth
from .origin import Origin

if TYPE_CHECKING:
    from .interpreter import Interpreter

MAX_EXPR_DEPTH = 400  # nesting of one expression: deeper is a clean error when compiling, not a crash

# Expression contexts: what a literal becomes (see the module docstring). LIST_ITEM: a list literal inside
# a list literal gives its data (`ListData`), so that the outer one makes one tensor of it all.
VALUE, OPERAND, ARG, INDEX, LIST_ITEM = range(5)


def is_literal(node: A.Node) -> bool:
    """A number literal, or a predefined constant's name (a literal of its value unless rebound)."""
    return type(node) is A.Num or (type(node) is A.Name and node.id in CONSTANTS)


class ListData:
    """The data of a list literal of numbers or booleans nested in another (never a value of the language)."""

    __slots__ = ("data", "bools")

    def __init__(self, data: list, bools: bool) -> None:
        self.data, self.bools = data, bools


def _list_data(values: list) -> ListData | None:
    """The items of a list literal as tensor data, when they are all numbers or booleans (or such lists)."""
    data: list = []
    bools = True
    for v in values:
        kind = type(v)
        if kind is bool:
            data.append(v)
        elif kind is int or kind is float:
            data.append(float(v))
            bools = False
        elif kind is RawList:
            data.append(floats(v))
            bools = bools and not v
        elif kind is ListData:
            data.append(v.data)
            bools = bools and v.bools
        else:
            return None
    return ListData(data, bools and bool(data))

# record type -> its compile function (compiler, record) -> closure; filled by @compiles
STATEMENTS: dict[type, Callable[[Any, Any], Closure]] = {}


def compiles(kind: type) -> Callable[[Callable[[Any, Any], Closure]], Callable[[Any, Any], Closure]]:
    """Register the compile function of statement record `kind`."""

    def register(fn: Callable[[Any, Any], Closure]) -> Callable[[Any, Any], Closure]:
        STATEMENTS[kind] = fn
        return fn

    return register


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


class Compiler:
    """Compiles the nodes of one unit (a program, or a file run by :load) into closures."""

    def __init__(self, interp: Interpreter, unit: Unit) -> None:
        self.interp = interp
        self.unit = unit
        self.depth = 0
        from gradcalc.autograd.graph import STAMP  # the engine is loaded by now (the Interpreter loads it)
        from gradcalc.autograd.interrupts import GUARD

        self.stamp = STAMP
        self.guard = GUARD
        self.owner = weakref.ref(interp)  # what origins name as their session (a weak reference: no cycle)
        STAMP.on = True  # nodes keep their origin from now on (node.STAMP)
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

    # -- blocks and statements -------------------------------------------------------------------
    def statement_runner(self, st: A.Node) -> Closure:
        """One statement as run at top level: located errors, the interrupt check, the current position."""
        return self.block([st])

    def block(self, body: list[A.Node]) -> Closure:
        """Statements run in order. Each one, while it runs, is the engine's origin (lang/origin.py): the nodes
        it records and the changes it makes remember it; the block puts back the origin it found (a call's
        body runs inside the calling statement)."""
        interp = self.interp
        unit = self.unit
        stamp = self.stamp
        last_none = LAST_NONE
        steps = [
            ((st.loc, unit), st.loc, Origin(unit, st.loc, self.owner), STATEMENTS[type(st)](self, st))
            for st in body
        ]

        def run_block(f: Frame) -> Any:
            outer = stamp.origin
            for pos, loc, origin, step in steps:
                if interp.stop_requested:  # a Ctrl-C deferred to the next statement (repl/interrupt.py)
                    interp.stop_requested = False
                    stamp.origin = outer
                    raise interrupted_at(origin, before=True)
                interp.current = pos
                stamp.origin = origin
                try:
                    signal = step(f)
                except GradcalcError as exc:
                    if exc.loc is None:
                        exc.loc = loc
                    if exc.filename is None:
                        exc.filename, exc.source = unit.filename, unit.source
                        exc.interactive = unit.interactive  # type: ignore[attr-defined]
                    if getattr(exc, "origin", None) is None:
                        exc.origin = origin  # type: ignore[attr-defined]  # the innermost statement (explain)
                        if last_none.origin is origin:  # it read a rebound leaf's .grad as None: say so
                            annotate_none(exc)
                    stamp.origin = outer
                    raise
                except KeyboardInterrupt as exc:  # Ctrl-C: the innermost statement it stopped is named
                    stamp.origin = outer
                    if getattr(exc, "origin", None) is None:
                        exc.origin = origin  # type: ignore[attr-defined]
                    raise
                except SystemExit:
                    stamp.origin = outer
                    raise
                except Exception as exc:
                    err = error_from(exc, loc)
                    err.filename, err.source = unit.filename, unit.source
                    err.interactive = unit.interactive  # type: ignore[attr-defined]
                    err.origin = origin  # type: ignore[attr-defined]
                    if last_none.origin is origin:
                        annotate_none(err)
                    stamp.origin = outer
                    raise err from None
                if signal is not None:
                    stamp.origin = outer
                    return signal
            stamp.origin = outer
            return None

        return run_block

    # the code of every block runner's loop: where a Ctrl-C finds the statement that runs (lang/session.py)
    RUNNER_CODE: Any = None

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
                if not isinstance(o, _T.Tensor):
                    assign_other_item(o, i, v, loc)  # net[0] = Linear(1, 8); an error for anything else
                    return
                if isinstance(v, _T.Tensor) and v.ndim == 0 and not v.requires_grad:
                    v = v.item()  # g[mask] = 0: a scalar fill
                try:
                    o[i] = v
                except Exception as exc:
                    what = f"can't assign {describe(v)} into {describe(o)} at index {describe(i)}"
                    raise error_from(exc, loc, what) from None

            return bind_item
        if isinstance(target, A.Attribute):
            obj = self.expr(target.obj, VALUE)
            attr, loc = target.name, target.loc

            def bind_attr(f: Frame, v: Any) -> None:
                o = obj(f)
                if not isinstance(o, _T.Tensor) and assign_other_attribute(o, attr, v, loc):
                    return  # a module's parameter or submodule, an optimizer's lr
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
                    raise error_from(exc, loc, f"can't assign {describe(v)} to .{attr}") from None

            return bind_attr
        assert isinstance(target, A.TupleExpr)
        parts = [self.binder(t) for t in target.items]
        n = len(parts)
        loc = target.loc
        guard, stamp = self.guard, self.stamp

        def bind_tuple(f: Frame, v: Any) -> None:
            try:
                items = list(v)
            except Exception:
                raise GradcalcError(f"can't unpack {describe(v)} into {n} names", loc) from None
            if len(items) != n:
                raise GradcalcError(f"can't unpack {len(items)} values into {n} names", loc)
            guard.changing = stamp.origin  # all names or none under an interrupt (autograd/interrupts.py)
            for bind, item in zip(parts, items, strict=True):
                bind(f, item)

        return bind_tuple

    def tensors(self, exprs: list[A.Node], what: str) -> Callable[[Frame], list[Any]]:
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

    def _params(self, params: list[A.Param]) -> tuple[list[str], list[Closure]]:
        names = [p.name for p in params]
        defaults = [self.expr(p.default, VALUE) for p in params if p.default is not None]
        return names, defaults

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
        if ctx == INDEX and all_whole(data):
            whole_data = ints(data)
            return lambda f: list(whole_data)
        float_data = floats(data)
        make = _T.tensor
        return lambda f: make(float_data)

    def const(self, node: A.Str | A.Const, ctx: int) -> Closure:
        value = node.value
        return lambda f: value

    def name(self, node: A.Name, ctx: int) -> Closure:
        name, loc = node.id, node.loc
        lookup = self.interp.lookup
        if name in CONSTANTS and ctx == VALUE:
            constant = self.interp.predefined.get(name)
            make = _T.tensor

            def ev_constant(f: Frame) -> Any:
                v = f.vars.get(name, MISSING)
                if v is MISSING:
                    v = lookup(f, name, loc)
                    if v is constant:  # not rebound: the number literal of its value
                        return make(v)
                return v

            return ev_constant

        def ev(f: Frame) -> Any:
            v = f.vars.get(name, MISSING)
            if v is MISSING:
                return lookup(f, name, loc)
            return v

        return ev

    def list_expr(self, node: A.ListExpr, ctx: int) -> Closure:
        """`[a, b]` is a list value; but a list whose items are all numbers (`[pi, 1]`, `[x.item(), 0]`) or
        booleans (`[true, false]`), at any depth, is a tensor, as a list literal of numbers is."""
        fns = [self.expr(i, LIST_ITEM if type(i) is A.ListExpr else ARG) for i in node.items]
        literal = [i for i, item in enumerate(node.items) if is_literal(item) or type(item) is A.NumList]
        make = _T.tensor
        loc = node.loc
        nested = ctx == LIST_ITEM

        def ev(f: Frame) -> Any:
            values = [fn(f) for fn in fns]
            found = _list_data(values)
            if found is not None:
                if nested:
                    return found
                if not rectangular(found.data):
                    raise GradcalcError("a ragged list: every row of a tensor needs the same length", loc)
                return make(found.data)
            for i, v in enumerate(values):
                if type(v) is ListData:  # an inner list of data beside other values: a tensor of its own
                    if not rectangular(v.data):
                        raise GradcalcError("a ragged list: every row of a tensor needs the same length", loc)
                    values[i] = make(v.data)
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
                check_result_size(sym, a, b, loc)
            try:
                return op(a, b)
            except Exception as exc:
                raise operator_error(exc, sym, a, b, loc) from None

        return ev

    def chain(self, node: A.Chain, ctx: int) -> Closure:
        ops = node.ops
        both_literal = is_literal(node.first) and is_literal(ops[0][1])
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
                    check_result_size(sym, a, b, loc)
                try:
                    a = op(a, b)
                except Exception as exc:
                    raise operator_error(exc, sym, a, b, loc) from None
            return a

        return ev

    def power(self, node: A.Power, ctx: int) -> Closure:
        both_literal = is_literal(node.base) and is_literal(node.exponent)
        base = self.expr(node.base, VALUE if both_literal else OPERAND)
        exponent = self.expr(node.exponent, OPERAND)
        return self._binary("**", base, exponent, node.loc)

    def unary(self, node: A.Unary, ctx: int) -> Closure:
        # `-pi` is the literal -3.14159...: a tensor as a value, a Python number as an operand
        operand = self.expr(node.operand, ctx if is_literal(node.operand) and ctx != LIST_ITEM else OPERAND)
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
        both_literal = is_literal(node.left) and is_literal(node.right)
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
        lit_pos = [i for i, a in enumerate(node.args) if _literal_argument(a)]
        lit_kw = [k for k, v in node.kwargs if _literal_argument(v)]
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
                call_object = OBJECT_CALLS.get(type(fn))
                if call_object is not None:  # a module: net(x)
                    return call_object(fn, a, kw)
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
                        from ..values.calls import call_error

                        raise error_from(call_error(b, exc, (), {}), loc) from None
                    if type(result) is Tensor and result.numel() > limits.max_elements:
                        check_size(result.numel(), f"x.{name}()")
                    return result
                return other_method(o, name, (), {}, loc)

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
            return other_method(o, name, a, kw, loc)

        return ev

    def attribute(self, node: A.Attribute, ctx: int) -> Closure:
        obj = self.expr(node.obj, VALUE)
        name, loc = node.name, node.loc
        Tensor = _T.Tensor
        engine_name = ATTRIBUTES.get(name)
        if name == "grad":
            from gradcalc.autograd.inspection import grad_of  # (the engine is loaded by the time code compiles)

            def ev_grad(f: Frame) -> Any:
                o = obj(f)
                if type(o) is Tensor:
                    if o.grad_fn is None or o.retains_grad:
                        return o.grad  # no warning to give
                    g = grad_of(o)  # what the property returns; it only adds the non-leaf warning
                    if g is None:
                        return read_grad(o, f)  # that warning, which names a rebound leaf (explain/rebound.py)
                    return g
                return other_attribute(o, name, loc)

            return ev_grad
        if engine_name is not None:

            def ev_attr(f: Frame) -> Any:
                o = obj(f)
                if type(o) is Tensor:
                    try:
                        return getattr(o, engine_name)
                    except Exception as exc:
                        raise error_from(exc, loc) from None
                return other_attribute(o, name, loc)

            return ev_attr

        def ev(f: Frame) -> Any:
            return other_attribute(obj(f), name, loc)

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
                raise error_from(exc, loc, f"can't index {describe(o)} with {describe(i)}") from None

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
        return lambda f: index_value(ev(f))

    def slice(self, node: A.Slice, ctx: int) -> Closure:
        parts = [self.index_expr(p) if p is not None else None for p in (node.start, node.stop, node.step)]
        start, stop, step = (p if p is not None else _none for p in parts)
        return lambda f: slice(start(f), stop(f), step(f))


def _none(f: Frame) -> None:
    return None


def interrupted_at(origin: Origin, before: bool = False) -> KeyboardInterrupt:
    """The KeyboardInterrupt that stops the program at `origin`'s statement (`before` it began: a Ctrl-C that
    waited for a statement boundary); the session reports it as `Interrupted`."""
    exc = KeyboardInterrupt()
    exc.origin = origin  # type: ignore[attr-defined]
    exc.before = before  # type: ignore[attr-defined]
    return exc


Compiler.RUNNER_CODE = next(
    c for c in Compiler.block.__code__.co_consts if getattr(c, "co_name", None) == "run_block"
)


def _literal_argument(node: A.Node) -> bool:
    """An argument that is a Python number or raw list until the callee says what it wants."""
    if type(node) is A.Unary:
        node = node.operand
    return is_literal(node) or type(node) is A.NumList
