"""Expressions to closures, decided once so that running only calls closures.

Compiling dispatches on record types through a table and decides everything that does not depend on values
(which context a literal is in, which operator function to call, whether a call is a method call): running a
loop then only calls closures, without looking at records again.

How literals behave (LANGUAGE.md section 1): a number literal is a float64 0-d tensor as a value
(`x = 3`, `3`), but a Python number as an operand (`x ** 2` is PowBackward0, `f32 * 2` stays float32)
and as an argument (`zeros(2, 3)`, `x.sum(dim=0)`). When both operands of an operator are literals, the
left one is a tensor, so `2 ** 3 ** 2` is `tensor(512.)`. The predefined constants (`pi e inf nan`) are
literals too, until the user rebinds them: `pi` prints `tensor(3.1416)`, `x * pi` keeps x's dtype.
A list literal of booleans is a bool tensor; one mixing booleans and numbers a float64 tensor (as
`torch.tensor` makes them).

Errors become `GradcalcError`s located at the operator, call or attribute that failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GradcalcError, Loc, SyntaxProblem
from ..limits import check_size
from ..syntax import ast as A
from ..tell.explain.rebound import read_grad
from ..values.builtins import ATTRIBUTES, CONSTANTS, METHODS, Builtin
from ..values.convert import RawList, as_tensor, describe
from ..values.dispatch import (
    all_whole,
    check_result_size,
    floats,
    index_value,
    ints,
    other_attribute,
    other_method,
    rectangular,
)
from ..values.engine import ENGINE as _T
from ..values.failures import error_from, operator_error
from ..values.functions import CustomFunction, UserFunction, invoke_method
from ..values.surfaces import OBJECT_CALLS
from .frames import MISSING, Closure, Frame, truth
from .operators import BINARY, UNARY

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

    def __init__(self, data: list[object], bools: bool) -> None:
        self.data, self.bools = data, bools


def _list_data(values: list[object]) -> ListData | None:
    """The items of a list literal as tensor data, when they are all numbers or booleans (or such lists)."""
    data: list[object] = []
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

class ExpressionCompiler:
    """Compiles the expressions of one unit (`expr(node, context)`); `Compiler` adds the statements."""

    interp: Interpreter
    depth: int

    def __init__(self) -> None:
        self.depth = 0
        # (Any: each takes the record of its own kind)
        self.exprs: dict[type[A.Node], Callable[[Any, int], Closure]] = {
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

            def fail(f: Frame) -> object:
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

            def ev_constant(f: Frame) -> object:
                v = f.vars.get(name, MISSING)
                if v is MISSING:
                    v = lookup(f, name, loc)
                    if v is constant:  # not rebound: the number literal of its value
                        return make(v)
                return v

            return ev_constant

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

        def ev(f: Frame) -> object:
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

            def ev_plain(f: Frame) -> object:
                o = obj(f)
                if type(o) is Tensor:
                    try:
                        result = getattr(o, target)()
                    except Exception as exc:
                        from ..values.calls import call_error  # (a failed call only: not on a cold start)

                        raise error_from(call_error(b, exc, (), {}), loc) from None
                    if type(result) is Tensor and result.numel() > limits.max_elements:
                        check_size(result.numel(), f"x.{name}()")
                    return result
                return other_method(o, name, (), {}, loc)

            return ev_plain

        def ev(f: Frame) -> object:
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
            from gradcalc.autograd.inspection import grad_of  # (when a program first reads .grad: not a cold start)

            def ev_grad(f: Frame) -> object:
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

            def ev_attr(f: Frame) -> object:
                o = obj(f)
                if type(o) is Tensor:
                    try:
                        return getattr(o, engine_name)
                    except Exception as exc:
                        raise error_from(exc, loc) from None
                return other_attribute(o, name, loc)

            return ev_attr

        if name == "saved" or name.startswith("_saved_"):  # a node's saved values (lang/tell/saved.py)
            from ..tell import saved  # (when a program first reads one: not on a cold start)

            key = name[len("_saved_"):]
            Node = _T.Node

            def ev_saved(f: Frame) -> object:
                o = obj(f)
                if isinstance(o, Node):
                    return saved.SavedValues(o) if name == "saved" else saved.read(o, key, loc)
                return other_attribute(o, name, loc)

            return ev_saved

        def ev(f: Frame) -> object:
            return other_attribute(obj(f), name, loc)

        return ev

    def index(self, node: A.Index, ctx: int) -> Closure:
        obj = self.expr(node.obj, VALUE)
        idx = self.index_expr(node.index)
        loc = node.loc

        def ev(f: Frame) -> object:
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


def _literal_argument(node: A.Node) -> bool:
    """An argument that is a Python number or raw list until the callee says what it wants."""
    if type(node) is A.Unary:
        node = node.operand
    return is_literal(node) or type(node) is A.NumList
