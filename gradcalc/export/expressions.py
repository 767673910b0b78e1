"""Expressions as PyTorch: each lowered expression record (gradcalc/lang/syntax/ast.py) written as Python source over
`torch`, with the language's meaning (LANGUAGE.md §1, §3; the compiler's contexts):

- a number literal is `torch.tensor(3.)` as a value, a Python number as an operand (`x ** 2`), as an index and
  as a built-in's argument where the built-in takes a number; when both operands of an operator are literals, the
  left one is a tensor (`torch.tensor(2.) ** 3`); a list literal of numbers is `torch.tensor([1., 2.])`;
- a built-in is PyTorch's function of that name (names.py), each argument made what its parameter takes
  (convert.py's kinds: `sin(2)` is `torch.sin(torch.tensor(2.))`, `zeros(n)` with `n = 3` is
  `torch.zeros(int(n))`); a user function's literal arguments are tensors;
- `pi e inf nan` are `torch.pi`... (tensors as values), dtypes `torch.float32`..., namespaces as PyTorch's modules.

What an expression's value is (`kind`: a tensor, a 0-d tensor of numbers, a Python int...) is inferred from
the records where it decides the translation: a whole 0-d tensor used as a size, range bound or index becomes
`int(...)` as the language's conversion makes it one.
"""

from __future__ import annotations

import builtins
import keyword
import math
from typing import Any

from .language import CONSTANTS, DTYPES, FUNCTIONS, METHODS, PREDEFINED_NAMESPACES, A, Builtin, Namespace
from .names import (
    ATTRIBUTE_SPELLINGS,
    METHOD_SPELLINGS,
    argument_kinds,
    attribute_returns,
    builtin_returns,
    builtin_spelling,
    iterator_methods,
    kind_at,
    method_kinds,
    method_returns,
    spelled_path,
)

# What a literal becomes where it stands (the compiler's contexts)
VALUE, OPERAND, ARG, INDEX, LIST_ITEM = range(5)

# Python's binding powers, loosest first: a sub-expression looser than its place is parenthesized
OR, AND, NOT, COMPARE, SUM, PRODUCT, UNARY, POWER, POSTFIX, ATOM = range(1, 11)
_LEVEL = {"+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT, "//": PRODUCT, "%": PRODUCT, "@": PRODUCT}

# Names the script itself uses: a user's variable of such a name is renamed (`int` -> `int_`)
HELPERS = ("_show", "_print", "_repr", "_keep")
OWN_NAMES = frozenset(
    {"torch", "ctx", "int", "float", "range", "len", "list", "print", "globals", "isinstance", "tuple", "repr",
     "str", "type", "map", "callable", "hasattr", "getattr", "staticmethod", "SystemExit", "ImportError",
     "FileNotFoundError", *HELPERS, *(ns.label for ns in PREDEFINED_NAMESPACES.values())}
)
# Python's built-ins: a name the language does not know is an error in gradcalc, and must be one in the
# script (`format` is written `format_`)
PYTHON_BUILTINS = frozenset(dir(builtins)) - {"_"}

NUMBERS = ("int", "float", "bool")
TENSORS = ("tensor", "scalar")


def float_text(value: float) -> str:
    """A float as a Python literal: `3.`, `0.5`, `1e-05`; infinities and NaN as torch's constants."""
    f = float(value)
    if math.isinf(f):
        return "-torch.inf" if f < 0 else "torch.inf"
    if math.isnan(f):
        return "torch.nan"
    if f.is_integer() and abs(f) < 1e16:
        return f"{int(f)}." if f or math.copysign(1, f) > 0 else "-0."
    return repr(f)


def number_text(value: Any) -> str:
    """A number literal as Python writes it (an int stays an int)."""
    return str(value) if isinstance(value, int) else float_text(value)


def data_text(data: Any, whole: bool = False) -> str:
    """Nested lists of numbers as a Python literal: floats (`[1., 2.]`), or ints when `whole`."""
    if isinstance(data, list):
        return "[" + ", ".join(data_text(d, whole) for d in data) + "]"
    return str(int(data)) if whole else float_text(data)


def _all_whole(data: Any) -> bool:
    if isinstance(data, list):
        return all(_all_whole(d) for d in data)
    return float(data).is_integer()


def paren(text: str, prec: int, need: int) -> str:
    """`text` parenthesized when it binds looser than `need`."""
    return f"({text})" if prec < need else text


class Expressions:
    """The expression half of the translator (script.py adds the statements): expects `is_user(name)`,
    `name_kinds`, `aliases` and `use(label)` from it."""

    name_kinds: dict[str, str | None]
    aliases: dict[str, Any]
    custom: set[str]

    def is_user(self, name: str) -> bool:  # pragma: no cover - the translator's
        raise NotImplementedError

    def use(self, label: str | None) -> None:  # pragma: no cover - the translator's
        raise NotImplementedError

    # -- names ---------------------------------------------------------------------------------------------
    def py_name(self, name: str) -> str:
        """The script's name for a user's variable (renamed when Python or the script needs the word)."""
        if keyword.iskeyword(name) or name in OWN_NAMES:
            return name + "_"
        return name

    def unknown_name(self, name: str) -> str:
        """A name neither the program nor the language binds: an error when it runs, in the script too."""
        return name + "_" if name in PYTHON_BUILTINS else self.py_name(name)

    def is_literal(self, node: Any) -> bool:
        """A number literal, or a predefined constant's name (a literal of its value unless rebound)."""
        return type(node) is A.Num or (type(node) is A.Name and node.id in CONSTANTS and not self.is_user(node.id))

    def is_literal_argument(self, node: Any) -> bool:
        """A number or list literal, which a callee makes what it wants (compiler.py's `_literal_argument`)."""
        if type(node) is A.Unary:
            node = node.operand
        return self.is_literal(node) or type(node) is A.NumList

    def namespace_of(self, node: Any) -> Namespace | None:
        """The namespace `node` names, when it is known before running (`torch`, `nn.init`, an import's alias)."""
        if type(node) is A.Name:
            if self.is_user(node.id):
                value = self.aliases.get(node.id)
                return value if isinstance(value, Namespace) else None
            return PREDEFINED_NAMESPACES.get(node.id)
        if type(node) is A.Attribute:
            outer = self.namespace_of(node.obj)
            if outer is not None and outer.has(node.name):
                member = outer.member(node.name)
                return member if isinstance(member, Namespace) else None
        return None

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, node: Any, ctx: int = VALUE) -> str:
        """`node` as Python source, in context `ctx`."""
        return self.sub(node, ctx)[0]

    def sub(self, node: Any, ctx: int = VALUE, need: int = 0, bare: bool = False) -> tuple[str, int]:
        """(`node` as Python source, parenthesized if it binds looser than `need`, and how tightly it binds).
        `bare`: a call's argument or a loop's iterable, where a module's iterator need not become a list."""
        kind = type(node)
        if kind is A.Call:
            text, prec = self.call(node, bare)
        else:
            text, prec = getattr(self, "x_" + kind.__name__)(node, ctx)
        if prec < need:
            return f"({text})", ATOM
        return text, prec

    def x_Num(self, node: Any, ctx: int) -> tuple[str, int]:
        if ctx == VALUE:
            return f"torch.tensor({float_text(node.value)})", POSTFIX
        text = number_text(node.value)
        return text, UNARY if text.startswith("-") else ATOM

    def x_NumList(self, node: Any, ctx: int) -> tuple[str, int]:
        if node.problem is not None:  # ragged: an error when it runs, as in gradcalc
            return "torch.tensor([[0.], []])", POSTFIX
        if ctx == INDEX and node.data and _all_whole(node.data):
            return data_text(node.data, whole=True), ATOM
        return f"torch.tensor({data_text(node.data)})", POSTFIX

    def x_Str(self, node: Any, ctx: int) -> tuple[str, int]:
        return repr(node.value), ATOM

    def x_Const(self, node: Any, ctx: int) -> tuple[str, int]:
        return repr(node.value), ATOM

    def x_Name(self, node: Any, ctx: int) -> tuple[str, int]:
        name = node.id
        if self.is_user(name):
            if name in self.custom:  # a `function` block's autograd.Function: called through its apply
                return f"{self.py_name(name)}.apply", POSTFIX
            return self.py_name(name), ATOM
        if name in CONSTANTS:
            self.use("torch")
            return (f"torch.tensor(torch.{name})", POSTFIX) if ctx == VALUE else (f"torch.{name}", POSTFIX)
        b = FUNCTIONS.get(name)
        if b is not None:
            spelled = builtin_spelling(b)
            if spelled.method:
                return f"torch.Tensor.{spelled.method}", POSTFIX
            self.use(spelled.label)
            return spelled.text, POSTFIX
        if name in PREDEFINED_NAMESPACES:
            self.use(name)
            return name, ATOM
        if name in DTYPES:
            self.use("torch")
            return f"torch.{name}", POSTFIX
        return self.unknown_name(name), ATOM

    def x_ListExpr(self, node: Any, ctx: int) -> tuple[str, int]:
        if self.is_data(node):
            text = self.data_items(node)
            if ctx == LIST_ITEM:
                return text, ATOM
            self.use("torch")
            return f"torch.tensor({text})", POSTFIX
        items = []
        for item in node.items:
            if type(item) is A.ListExpr:
                items.append(self.expr(item, VALUE))
            elif self.is_literal(item) or type(item) is A.NumList:
                items.append(self.tensor_literal(item))
            else:
                items.append(self.expr(item, ARG))
        return "[" + ", ".join(items) + "]", ATOM

    def is_data(self, node: Any) -> bool:
        """A list whose items are all numbers or booleans (at any depth): a tensor, as a list literal is."""
        if type(node) is A.ListExpr:
            return bool(node.items) and all(self.is_data(i) for i in node.items)
        if type(node) is A.Const:
            return isinstance(node.value, bool)
        if self.is_literal(node) or type(node) is A.NumList:
            return True
        if type(node) is A.Unary and self.is_literal(node.operand):
            return True
        return self.kind(node, ARG) in NUMBERS

    def data_items(self, node: Any) -> str:
        """A data list's items as a Python list (numbers as floats: numbers are float64)."""
        if type(node) is A.ListExpr:
            return "[" + ", ".join(self.data_items(i) for i in node.items) + "]"
        if type(node) is A.Num:
            return float_text(node.value)
        if type(node) is A.NumList:
            return data_text(node.data)
        if type(node) is A.Const:
            return repr(node.value)
        text = self.expr(node, ARG)
        return f"float({text})" if self.kind(node, ARG) == "int" else text

    def x_TupleExpr(self, node: Any, ctx: int) -> tuple[str, int]:
        items = [self.expr(i, VALUE) for i in node.items]
        if len(items) == 1:
            return f"({items[0]},)", ATOM
        return "(" + ", ".join(items) + ")", ATOM

    def x_Chain(self, node: Any, ctx: int) -> tuple[str, int]:
        level = _LEVEL[node.ops[0][0]]
        both = self.is_literal(node.first) and self.is_literal(node.ops[0][1])
        text = self.sub(node.first, VALUE if both else OPERAND, level)[0]
        for sym, operand, _ in node.ops:
            text += f" {sym} " + self.sub(operand, OPERAND, level + 1)[0]
        return text, level

    def x_Power(self, node: Any, ctx: int) -> tuple[str, int]:
        both = self.is_literal(node.base) and self.is_literal(node.exponent)
        base = self.sub(node.base, VALUE if both else OPERAND, POSTFIX)[0]
        return f"{base} ** {self.sub(node.exponent, OPERAND, UNARY)[0]}", POWER

    def x_Unary(self, node: Any, ctx: int) -> tuple[str, int]:
        inner = ctx if self.is_literal(node.operand) and ctx != LIST_ITEM else OPERAND
        return node.op + self.sub(node.operand, inner, UNARY)[0], UNARY

    def x_Compare(self, node: Any, ctx: int) -> tuple[str, int]:
        both = self.is_literal(node.left) and self.is_literal(node.right)
        left = self.sub(node.left, VALUE if both else OPERAND, COMPARE + 1)[0]
        return f"{left} {node.op} {self.sub(node.right, OPERAND, COMPARE + 1)[0]}", COMPARE

    def x_BoolOp(self, node: Any, ctx: int) -> tuple[str, int]:
        level = OR if node.op == "or" else AND
        return f" {node.op} ".join(self.sub(v, VALUE, level + 1)[0] for v in node.values), level

    def x_Not(self, node: Any, ctx: int) -> tuple[str, int]:
        return "not " + self.sub(node.operand, VALUE, NOT)[0], NOT

    def x_Attribute(self, node: Any, ctx: int) -> tuple[str, int]:
        obj = node.obj
        if self.namespace_of(obj) is not None:  # torch.pi, nn.Linear: PyTorch's names
            return f"{self.expr(obj)}.{node.name}", POSTFIX
        if type(obj) is A.Attribute and obj.name == "saved" and self.namespace_of(obj.obj) is None:
            return f"{self.sub(obj.obj, VALUE, POSTFIX)[0]}._saved_{node.name}", POSTFIX  # grad_fn.saved.self
        text = self.sub(obj, VALUE, POSTFIX)[0]
        if self.kind(obj, VALUE) == "optimizer" and node.name not in ("param_groups", "state", "defaults"):
            return f"{text}.param_groups[0][{node.name!r}]", POSTFIX  # the language's opt.lr
        return f"{text}.{ATTRIBUTE_SPELLINGS.get(node.name, node.name)}", POSTFIX

    def x_Index(self, node: Any, ctx: int) -> tuple[str, int]:
        return f"{self.sub(node.obj, VALUE, POSTFIX)[0]}[{self.index_text(node.index)}]", POSTFIX

    def index_text(self, node: Any) -> str:
        """An index: numbers as ints, a whole 0-d tensor of numbers as `int(...)`, slices, tuples of those."""
        if type(node) is A.TupleExpr and not node.parens:
            parts = [self.index_text(i) for i in node.items]
            return parts[0] + "," if len(parts) == 1 else ", ".join(parts)
        if type(node) is A.Slice:
            parts = ["" if p is None else self.index_text(p) for p in (node.start, node.stop, node.step)]
            return f"{parts[0]}:{parts[1]}" + (f":{parts[2]}" if node.step is not None else "")
        text = self.expr(node, INDEX)
        return f"int({text})" if self.kind(node, INDEX) == "scalar" else text

    def x_Slice(self, node: Any, ctx: int) -> tuple[str, int]:  # pragma: no cover - only inside an index
        return self.index_text(node), ATOM

    # -- calls ---------------------------------------------------------------------------------------------
    def call(self, node: Any, bare: bool = False) -> tuple[str, int]:
        func = node.func
        if type(func) is A.Attribute:
            ns = self.namespace_of(func.obj)
            if ns is not None:
                member = ns.member(func.name) if ns.has(func.name) else None
                written = f"{self.expr(func.obj)}.{func.name}"
                if isinstance(member, Builtin):
                    return self.builtin_call(member, node, written)
                return self.plain_call(written, node), POSTFIX
            return self.method_call(func, node, bare)
        if type(func) is A.Name and not self.is_user(func.id) and func.id in FUNCTIONS:
            return self.builtin_call(FUNCTIONS[func.id], node, None)
        return self.user_call(self.sub(func, VALUE, POSTFIX)[0], node), POSTFIX

    def builtin_call(self, b: Builtin, node: Any, written: str | None) -> tuple[str, int]:
        """A built-in's call: PyTorch's function (as the user wrote it, when through a namespace), each argument
        made what its parameter takes."""
        kinds = argument_kinds(b)
        args = [self.argument(a, kind_at(kinds, i, None)) for i, a in enumerate(node.args)]
        kwargs = [f"{k}={self.argument(v, kind_at(kinds, None, k))[0]}" for k, v in node.kwargs]
        if b.target == "py:range":  # range's bounds are ints: a whole 0-d tensor becomes one
            args = [(f"int({t})", POSTFIX) if self.kind(a, ARG) in TENSORS else (t, p)
                    for (t, p), a in zip(args, node.args, strict=True)]
        spelled = builtin_spelling(b)
        if spelled.method:  # view(x, 2, 3) is x.view(2, 3)
            if not args:
                return f"torch.Tensor.{spelled.method}({', '.join(kwargs)})", POSTFIX
            first = paren(args[0][0], args[0][1], POSTFIX)
            rest = ", ".join([t for t, _ in args[1:]] + kwargs)
            return f"{first}.{spelled.method}({rest})", POSTFIX
        text = spelled.text
        if written is not None and b.name not in _respelled():
            text = written
        else:
            self.use(spelled.label)
        if b.float_default and not any(k == "dtype" for k, _ in node.kwargs):
            kwargs.append("dtype=torch.float64")  # the language's full and arange make float64 of numbers
        return f"{text}({', '.join([t for t, _ in args] + kwargs)})", POSTFIX

    def method_call(self, func: Any, node: Any, bare: bool) -> tuple[str, int]:
        obj = self.sub(func.obj, VALUE, POSTFIX)[0]
        name = func.name
        kinds = method_kinds(name)
        args = [self.argument(a, kind_at(kinds, i, None))[0] for i, a in enumerate(node.args)]
        kwargs = [f"{k}={self.argument(v, kind_at(kinds, None, k))[0]}" for k, v in node.kwargs]
        if name in METHOD_SPELLINGS and name in METHODS:  # x.softplus() is F.softplus(x)
            spelled = spelled_path(METHOD_SPELLINGS[name])
            self.use(spelled.label)
            return f"{spelled.text}({', '.join([obj, *args, *kwargs])})", POSTFIX
        text = f"{obj}.{name}({', '.join(args + kwargs)})"
        if name in iterator_methods() and name not in METHODS and not bare:
            return f"list({text})", POSTFIX  # the language's net.parameters() is a list
        return text, POSTFIX

    def plain_call(self, callee: str, node: Any) -> str:
        """A call whose arguments pass as they are written (a namespace's own function: `func.grad(f)`)."""
        def arg(a: Any) -> str:
            return self.number_tuple(a) if self.is_number_tuple(a) else self.sub(a, ARG, bare=True)[0]

        args = [arg(a) for a in node.args]
        kwargs = [f"{k}={arg(v)}" for k, v in node.kwargs]
        return f"{callee}({', '.join(args + kwargs)})"

    @staticmethod
    def is_number_tuple(node: Any) -> bool:
        return type(node) is A.TupleExpr and any(type(i) is A.Num for i in node.items)

    def number_tuple(self, node: Any) -> str:
        """A tuple passed to a call, its numbers as Python numbers, as PyTorch code writes them (`in_dims=(None,
        0)`, `betas=(0.9, 0.999)`): the callee reads them as the language's converter does."""
        items = [number_text(i.value) if type(i) is A.Num else self.expr(i, ARG) for i in node.items]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def user_call(self, callee: str, node: Any) -> str:
        """A call of a user's function (or a module, or a function a transform made): literals are tensors."""
        def arg(a: Any) -> str:
            return self.tensor_literal(a) if self.is_literal_argument(a) else self.sub(a, ARG, bare=True)[0]

        args = [arg(a) for a in node.args] + [f"{k}={arg(v)}" for k, v in node.kwargs]
        return f"{callee}({', '.join(args)})"

    def tensor_literal(self, node: Any) -> str:
        """A number or list literal (or a predefined constant) as a float64 tensor."""
        self.use("torch")
        if type(node) is A.NumList:
            return self.expr(node, VALUE)
        if type(node) is A.Num:
            return f"torch.tensor({float_text(node.value)})"
        return f"torch.tensor({self.expr(node, OPERAND)})"

    def argument(self, node: Any, kind: str) -> tuple[str, int]:
        """An argument made what its parameter's kind takes (convert.py): `T` a tensor, `L` tensors, `I` ints,
        `N` a number, `D` tensor data, `A` anything (a list literal a tensor), `F` a function; `P` (nn's
        other parameters) as written."""
        if kind not in ("T", "L") and self.is_number_tuple(node):
            return self.number_tuple(node), ATOM
        if type(node) is A.NumList and node.problem is None:
            if kind == "D":
                return data_text(node.data), ATOM
            if kind == "I" and _all_whole(node.data):
                return data_text(node.data, whole=True), ATOM
            if kind == "P":
                return "[" + ", ".join(number_text(v) if not isinstance(v, list) else data_text(v)
                                       for v in node.data) + "]", ATOM
            return self.tensor_literal(node), POSTFIX
        if self.is_literal_argument(node):
            if kind in ("T", "L"):
                return self.tensor_literal(node), POSTFIX
            if kind == "D" and type(node) is A.Num:
                return float_text(node.value), ATOM
            if kind == "I" and type(node) is A.Num and float(node.value).is_integer():
                return str(int(node.value)), UNARY if node.value < 0 else ATOM
            return self.sub(node, ARG)
        text, prec = self.sub(node, ARG, bare=True)
        value = self.kind(node, ARG)
        if kind in ("T", "L") and value in NUMBERS:  # a Python number or truth value where a tensor is taken
            return f"torch.tensor({'float(' + text + ')' if value == 'int' else text})", POSTFIX
        if kind == "I" and value == "scalar":
            return f"int({text})", POSTFIX
        if kind in ("N", "P") and value == "scalar":
            return f"float({text})", POSTFIX
        return text, prec

    # -- what a value is -----------------------------------------------------------------------------------
    def kind(self, node: Any, ctx: int = VALUE) -> str | None:
        """What `node`'s value is, when the records say: "scalar" (a 0-d float64 tensor of numbers), "tensor",
        "int", "float", "bool", "shape", "str", "module", "optimizer", "function", or None (not known)."""
        t = type(node)
        if t is A.Num:
            return "scalar" if ctx == VALUE else ("int" if isinstance(node.value, int) else "float")
        if t is A.NumList:
            return "tensor"
        if t is A.Const:
            return "bool" if isinstance(node.value, bool) else None
        if t is A.Str:
            return "str"
        if t is A.Name:
            if self.is_user(node.id):
                return self.name_kinds.get(node.id)
            if node.id in CONSTANTS:
                return "scalar" if ctx == VALUE else "float"
            return "function" if node.id in FUNCTIONS else None
        if t in (A.Chain, A.Power, A.Unary, A.Compare):
            return self._operation_kind(node, ctx)
        if t is A.Not:
            return "bool"
        if t is A.Call:
            return self._call_kind(node)
        if t is A.Attribute:
            if self.namespace_of(node.obj) is not None:
                return None
            return attribute_returns(node.name)
        if t is A.Index:
            inner = self.kind(node.obj)
            return "int" if inner == "shape" else ("tensor" if inner in TENSORS else None)
        if t is A.TupleExpr:
            return "tuple"
        return None

    def _operation_kind(self, node: Any, ctx: int) -> str | None:
        if type(node) is A.Chain:
            both = self.is_literal(node.first) and self.is_literal(node.ops[0][1])
            parts = [(node.first, VALUE if both else OPERAND)] + [(o, OPERAND) for _, o, _ in node.ops]
            division = any(sym == "/" for sym, _, _ in node.ops)
        elif type(node) is A.Power:
            both = self.is_literal(node.base) and self.is_literal(node.exponent)
            parts = [(node.base, VALUE if both else OPERAND), (node.exponent, OPERAND)]
            division = False
        elif type(node) is A.Unary:
            inner = ctx if self.is_literal(node.operand) and ctx != LIST_ITEM else OPERAND
            parts, division = [(node.operand, inner)], False
        else:
            both = self.is_literal(node.left) and self.is_literal(node.right)
            parts = [(node.left, VALUE if both else OPERAND), (node.right, OPERAND)]
            kinds = [self.kind(n, c) for n, c in parts]
            if any(k in TENSORS for k in kinds):
                return "tensor"
            return "bool" if all(k in NUMBERS for k in kinds) else None
        kinds = [self.kind(n, c) for n, c in parts]
        if any(k is None for k in kinds):
            return None
        if all(k in NUMBERS for k in kinds):
            return "float" if division or "float" in kinds else "int"
        if all(k in (*NUMBERS, "scalar") for k in kinds):
            return "scalar"
        return "tensor" if all(k in (*NUMBERS, *TENSORS) for k in kinds) else None

    def _call_kind(self, node: Any) -> str | None:
        func = node.func
        if type(func) is A.Attribute:
            ns = self.namespace_of(func.obj)
            if ns is not None:
                member = ns.member(func.name) if ns.has(func.name) else None
                return builtin_returns(member) if isinstance(member, Builtin) else None
            if func.name in METHODS and self.kind(func.obj) in (*TENSORS, None):
                return method_returns(func.name)
            return None
        if type(func) is A.Name and not self.is_user(func.id) and func.id in FUNCTIONS:
            return builtin_returns(FUNCTIONS[func.id])
        return None


def _respelled() -> frozenset[str]:
    from .names import SPELLINGS

    return frozenset(SPELLINGS)
