"""The PyTorch script of a program or a session (LANGUAGE.md §10 "Export"): each statement written by the
translation registered beside its compile function (`@translates`, gradcalc/lang/statements/*.py), its
expressions by expressions.py, under a prelude (imports, float64, the printing helper: prelude.py).

The translator knows what each name is before running, as far as the records say (`is_user`): a name the
program binds is the user's from the statement that binds it (a whole loop or block binds its names before it
runs, as they are bound again at each step); a function's body sees every name the program binds at the top
level. A user's name that Python or the script needs is renamed (`int` -> `int_`). The program's comments are
kept: comment lines before the statement they precede, a comment after a statement on its line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .expressions import ARG, OPERAND, VALUE, Expressions
from .language import NAMESPACES, SPACES, A, GradcalcError, walk_statements
from .names import RETURNS_NOTHING, block_spelling, label_import
from .prelude import prelude
from .registry import TRANSLATIONS
from .source import Entry, own_text

INDENT = "    "


def comment_columns(line: str) -> int | None:
    """Where the comment on `line` starts (outside string literals), or None."""
    quote = None
    k = 0
    while k < len(line):
        c = line[k]
        if quote is not None:
            if c == "\\":
                k += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return k
        k += 1
    return None


class Translator(Expressions):
    """Writes the PyTorch script of `entries` (see the module docstring)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.lines: list[str] = []
        self.depth = 0
        self.labels: set[str] = {"torch"}
        self.helpers: set[str] = set()
        self.bound: set[str] = set()  # top-level names bound by the statements written so far
        self.scopes: list[set[str]] = []  # the names of the functions being written, innermost last
        self.aliases: dict[str, Any] = {}  # an import's name -> the namespace (or member) it binds
        self.entry: Entry | None = None
        self.forward: list[list[str]] = []  # in a `function`'s forward block: the names saved so far
        self.saved: list[str] = []  # in its backward block: the names forward saved
        self.draws_noted = False
        self._units = 0  # files written in place of `:load`
        self.forgotten = False  # the statement written forgot names (`del`, `:reset`)
        self._comments: dict[int, dict[int, str]] = {}  # unit -> line -> comment text
        self._comment_lines_done: dict[int, int] = {}  # unit -> the last comment line written
        self.all_bound = set().union(*(self.bound_by(e.statement) for e in entries)) if entries else set()
        self.name_kinds: dict[str, str | None] = {}
        self.custom: set[str] = set()  # names bound only by `function` blocks
        self._infer_kinds()

    # -- the script ----------------------------------------------------------------------------------------
    def script(self, title: str) -> str:
        """The whole script."""
        for entry in self.entries:
            self.entry = entry
            st = entry.statement
            names = self.bound_by(st)
            compound = next(A.blocks(st), None) is not None
            if compound:
                self.bound |= names
                if self.lines and self.lines[-1] != "":
                    self.lines.append("")
            self.forgotten = False
            self.statement(st)
            if not self.forgotten:
                self.bound |= names
            if compound:
                self.lines.append("")
        self._rest_of_comments()
        imports = [label_import(label) for label in self._labels_in_order()]
        head = prelude(imports, self.helpers, title)
        body = self.lines
        while body and body[-1] == "":
            body = body[:-1]
        return "\n".join(head + body) + "\n"

    def _labels_in_order(self) -> list[str]:
        order = [label for label in SPACES.values() if "." not in label]
        return [label for label in order if label in self.labels]

    # -- what statement translations call ------------------------------------------------------------------
    def line(self, text: str) -> None:
        """Write a line of Python at the current indentation."""
        self.lines.append(INDENT * self.depth + text)

    def comment(self, text: str) -> None:
        """Write a comment line."""
        for part in text.splitlines() or [""]:
            self.line(f"# {part}".rstrip())

    def use(self, label: str | None) -> None:
        """The script uses namespace name `label` (`nn`): it is imported at the top."""
        if label is not None:
            self.labels.add(label)

    def helper(self, name: str) -> str:
        """The script uses printing helper `name` (`_show`, `_print`)."""
        self.helpers.add(name)
        return name

    def value(self, node: Any) -> str:
        """An expression as a value (a number literal is a tensor)."""
        return self.expr(node, VALUE)

    def operand(self, node: Any) -> str:
        """An expression as an operand (a number literal is a Python number)."""
        return self.expr(node, OPERAND)

    def argument_of(self, node: Any) -> str:
        """An expression as an argument (a number literal as written, a list of tensors as a list)."""
        return self.sub(node, ARG, bare=True)[0]

    def as_tensor(self, node: Any) -> str:
        """An expression made a tensor where a statement wants one (`backward y gradient 2`)."""
        if self.is_literal_argument(node):
            return self.tensor_literal(node)
        return self.sub(node, OPERAND)[0]

    def postfix(self, node: Any) -> str:
        """An expression that a method call or attribute follows (parenthesized if it must be)."""
        from .expressions import POSTFIX

        return self.sub(node, VALUE, POSTFIX)[0]

    def target(self, node: Any) -> str:
        """An assignment target: a name (the script's name for it), `x[i]`, `x.attr`, or a tuple of those."""
        if type(node) is A.Name:
            return self.py_name(node.id)
        if type(node) is A.TupleExpr:
            return ", ".join(self.target(i) for i in node.items)
        return self.expr(node, VALUE)

    def name(self, name: str) -> str:
        """The script's name for a name the program binds."""
        return self.py_name(name)

    def show(self, node: Any) -> None:
        """An expression statement: print the value as gradcalc does, and keep it as `_`/`ans`."""
        if type(node) is A.Call and self._returns_nothing(node):
            self.line(self.value(node))  # a call for its effect: opt.step(), x.retain_grad()
            return
        maybe_none = type(node) is A.Call and self.kind(node) is None  # a call's None prints nothing
        self.line(f"{self.helper('_show')}({self.value(node)}{', call=True' if maybe_none else ''})")

    def show_value(self, text: str, call: bool) -> None:
        """Print an already written value as an expression statement does."""
        self.line(f"{self.helper('_show')}({text}{', call=True' if call else ''})")

    def print_values(self, nodes: list[Any]) -> None:
        """`print a, b`: the values separated by spaces, strings as they are."""
        if not nodes:
            self.line("print()")
            return
        self.line(f"{self.helper('_print')}({', '.join(self.value(n) for n in nodes)})")

    def text(self, st: Any) -> str:
        """The code of statement `st` as the program wrote it (for comments)."""
        assert self.entry is not None
        return own_text(self.entry, st)

    def block(self, body: list[Any], head: list[str] | None = None) -> None:
        """Write a block's statements, one level deeper (`pass` if it wrote nothing), after the lines `head`."""
        self.depth += 1
        for text in head or []:
            self.line(text)
        before = len(self.lines)
        for st in body:
            self.statement(st)
        if not any(line.strip() and not line.strip().startswith("#") for line in self.lines[before:]):
            self.line("pass")
        self.depth -= 1

    @contextmanager
    def function_scope(self, names: set[str]) -> Iterator[None]:
        """Statements of a function body: `names` are its own (parameters and the names it binds)."""
        self.scopes.append(set(names))
        try:
            yield
        finally:
            self.scopes.pop()

    def whole(self, node: Any) -> str:
        """An argument that must be a whole number: a 0-d tensor of numbers becomes `int(...)`."""
        text = self.argument_of(node)
        return f"int({text})" if self.kind(node, ARG) == "scalar" else text

    def iterable(self, node: Any) -> str:
        """What a `for` loop runs over (a module's iterator stays one)."""
        return self.sub(node, VALUE, bare=True)[0]

    def import_name(self, name: str) -> str:
        """The script's name for a name an import binds: a predefined namespace's own name stays."""
        return name if _canonical(name, self.aliases.get(name)) else self.py_name(name)

    def local_names(self, params: set[str], body: list[Any]) -> set[str]:
        """A function's own names: its parameters and the names its body binds (not by `+=` alone)."""
        own = set(params)
        for s in walk_statements(body, into_functions=False):
            if type(s).__name__ != "AugAssign":
                own |= self._binds(s)
        return own

    def function_body(self, params: set[str], body: list[Any], head: list[str] | None = None) -> None:
        """A function's body: its own names, and `global`/`nonlocal` for a name it changes with `+=` that is not
        its own (the language finds it outside)."""
        own = self.local_names(params, body)
        changed = sorted({s.target.id for s in walk_statements(body, into_functions=False)
                          if type(s).__name__ == "AugAssign" and type(s.target) is A.Name} - own)
        with self.function_scope(own | set(changed)):
            lines = list(head or [])
            for where in ("global", "nonlocal"):
                names = [self.py_name(n) for n in changed if self.enclosing_scope(n) == where]
                if names:
                    lines.append(f"{where} {', '.join(names)}")
            self.block(body, lines)

    def save(self, names: list[str]) -> None:
        """`save a, b` in a forward block: everything saved so far, saved for backward."""
        saved = self.forward[-1] if self.forward else []
        saved.extend(names)
        self.line(f"ctx.save_for_backward({', '.join(self.py_name(n) for n in saved)})")

    def custom_function(self, name: str, params: list[Any], forward: list[Any], grad_params: list[Any],
                        backward: list[Any]) -> None:
        """A `function` block: a torch.autograd.Function subclass and its `apply` (see functions.py)."""
        cls = self.py_name(name)  # PyTorch names the nodes after the class: <myreluBackward>, as gradcalc does
        saved = [n.id for s in walk_statements(forward, into_functions=False) if type(s).__name__ == "Save"
                 for n in s.exprs]
        shown = ", ".join(self.py_name(p.name) if p.default is None else
                          f"{self.py_name(p.name)}={self.value(p.default)}" for p in params)
        self.line(f"class {cls}(torch.autograd.Function):")
        self.depth += 1
        self.line("@staticmethod")
        self.line(f"def forward(ctx{', ' if shown else ''}{shown}):")
        self.forward.append([])
        try:
            self.function_body({p.name for p in params}, forward)
        finally:
            self.forward.pop()
        self.lines.append("")
        self.line("@staticmethod")
        grads = ", ".join(self.py_name(p.name) for p in grad_params)
        self.line(f"def backward(ctx{', ' if grads else ''}{grads}):")
        head = []
        if saved:
            names = ", ".join(self.py_name(n) for n in saved)
            head.append(f"{names}{',' if len(saved) == 1 else ''} = ctx.saved_tensors")
        self.function_body({p.name for p in grad_params} | set(saved), backward, head)
        self.depth -= 1

    def reset(self) -> None:
        """`:reset`: the names bound so far are forgotten (and the print options are the defaults again)."""
        names = sorted({self.py_name(n) for n in self.bound} | {"_", "ans"})
        self.line(f"for _name in {names!r}:  # :reset")
        self.line(f"{INDENT}globals().pop(_name, None)")
        self.line("torch.set_printoptions(profile='default')")
        self.bound = set()
        self.forgotten = True

    def forget(self, names: list[str]) -> None:
        """`del x`: at the top level, `x` names what it named before the program bound it (`pi`, `sum`)."""
        if not self.scopes:
            self.bound -= set(names)
            self.forgotten = True

    def load(self, arg: str) -> None:
        """`:load FILE`: FILE's statements, written in its place (a comment when it can't be read or parsed)."""
        from .language import parse
        from .source import entries

        path = arg.strip()
        if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
            path = path[1:-1]
        try:
            with open(os.path.expanduser(path), encoding="utf-8-sig") as handle:
                text = handle.read().replace("\r\n", "\n")
            program = parse(text)
        except (OSError, UnicodeDecodeError, GradcalcError):
            self.line(f"raise FileNotFoundError({path!r})  # :load {path}: gradcalc could not load it")
            return
        self.comment(f":load {path}")
        outer = self.entry
        self._units += 1
        for entry in entries(program, text, path, unit=-self._units):
            self.entry = entry
            names = self.bound_by(entry.statement)
            self.all_bound |= names
            if not self.scopes and next(A.blocks(entry.statement), None) is not None:
                self.bound |= names
            self.statement(entry.statement)
            if not self.scopes:
                self.bound |= names
        self.entry = outer

    def block_spelling(self, mode: str) -> str:
        """`with no_grad:` as PyTorch writes it: `torch.no_grad`."""
        spelled = block_spelling(mode)
        self.use(spelled.label)
        return spelled.text

    def enclosing_scope(self, name: str) -> str:
        """`global` or `nonlocal`: where a function's statement finds `name` when it is not the function's own."""
        for scope in reversed(self.scopes[:-1]):
            if name in scope:
                return "nonlocal"
        return "global"

    def note_draws(self, st: Any) -> None:
        """Say once, before the first statement that draws random numbers, that PyTorch's draws are not gradcalc's."""
        if not self.draws_noted:
            self.draws_noted = True
            self.comment("(random numbers: PyTorch's generator is not gradcalc's, so the values drawn from here on "
                         "differ from gradcalc's)")

    # -- statements ----------------------------------------------------------------------------------------
    def statement(self, st: Any) -> None:
        """Write one statement (its comments before it, its comment on its line after it)."""
        self._comments_before(st.loc.line)
        if next(A.blocks(st), None) is None and self._draws(st):
            self.note_draws(st)
        start = len(self.lines)
        translate = TRANSLATIONS.get(type(st))
        if translate is None:  # pragma: no cover - every statement registers one (tests/export checks)
            self.comment(f"{self.text(st)}: gradcalc has no PyTorch translation of this statement")
        else:
            translate(self, st)
        self._inline_comment(st, start)

    def _draws(self, st: Any) -> bool:
        """Whether a simple statement calls something that draws random numbers (names.py's `draws`)."""
        from .language import FUNCTIONS, Builtin
        from .names import draws, method_draws

        stack = list(A.children(st))
        while stack:
            node = stack.pop()
            stack.extend(A.children(node))
            if type(node) is not A.Call:
                continue
            func = node.func
            if type(func) is A.Name and not self.is_user(func.id) and func.id in FUNCTIONS:
                if draws(FUNCTIONS[func.id]):
                    return True
            elif type(func) is A.Attribute:
                ns = self.namespace_of(func.obj)
                if ns is not None:
                    member = ns.member(func.name) if ns.has(func.name) else None
                    if isinstance(member, Builtin) and draws(member):
                        return True
                elif method_draws(func.name):
                    return True
        return False

    def _returns_nothing(self, node: Any) -> bool:
        """A call known to give None: a tensor's, module's or optimizer's method so annotated in the engine, or a
        built-in whose PyTorch namesake gives what the language's does not (names.py's RETURNS_NOTHING)."""
        from .names import returns_none

        func = node.func
        if type(func) is A.Attribute and self.namespace_of(func.obj) is None:
            return returns_none(self.kind(func.obj), func.name, bool(node.args or node.kwargs))
        b = None
        if type(func) is A.Name and not self.is_user(func.id):
            from .language import FUNCTIONS

            b = FUNCTIONS.get(func.id)
        elif type(func) is A.Attribute:
            ns = self.namespace_of(func.obj)
            if ns is not None and ns.has(func.name):
                b = ns.member(func.name)
        return b is not None and getattr(b, "target", None) in RETURNS_NOTHING

    # -- names ---------------------------------------------------------------------------------------------
    def is_user(self, name: str) -> bool:
        if any(name in scope for scope in self.scopes):
            return True
        return name in (self.all_bound if self.scopes else self.bound)

    def bound_by(self, st: Any) -> set[str]:
        """The names statement `st` binds in the scope it runs in (inside its blocks too, not inside functions)."""
        out: set[str] = set()
        for s in walk_statements([st], into_functions=False):
            out |= self._binds(s)
        return out

    def _binds(self, s: Any) -> set[str]:
        S = type(s).__name__
        if S == "Assign":
            return {n for t in s.targets for n in _target_names(t)}
        if S == "AugAssign":
            return set(_target_names(s.target)) if type(s.target) is A.Name else set()
        if S == "For":
            return set(s.names)
        if S in ("Def", "FunctionDef"):
            return {s.name}
        if S == "Import":
            return {name for name, value in self.import_bindings(s) if not _canonical(name, value)}
        return set()

    def import_bindings(self, st: Any) -> list[tuple[str, Any]]:
        """The names an import binds, with the namespace (or a namespace's member) each is bound to (None when it
        can't be imported: the import is an error when it runs)."""
        out: list[tuple[str, Any]] = []
        if st.source:
            module = NAMESPACES.get(".".join(n for n, _ in st.source))
            for path, alias, _ in st.items:
                name = path[0][0]
                value = module.member(name) if module is not None and module.has(name) else None
                out.append((alias or name, value))
            return out
        for path, alias, _ in st.items:
            spelled = ".".join(n for n, _ in path)
            if alias is not None:
                out.append((alias, NAMESPACES.get(spelled)))
            else:
                out.append((path[0][0], NAMESPACES.get("torch") if path[0][0] == "torch" else None))
        return out

    # -- what names are ------------------------------------------------------------------------------------
    def _infer_kinds(self) -> None:
        """Each name's kind, when every assignment to it gives the same kind (two passes: names of names)."""
        assigned: list[tuple[str, Any, int]] = []
        for entry in self.entries:
            for s in walk_statements([entry.statement]):
                S = type(s).__name__
                if S == "Assign" and len(s.targets) == 1 and type(s.targets[0]) is A.Name:
                    assigned.append((s.targets[0].id, s, 0))
                elif S == "Assign":
                    for t in s.targets:
                        for n in _target_names(t):
                            assigned.append((n, None, 0))
                elif S == "For":
                    for n in s.names:
                        assigned.append((n, s, 1))
                elif S in ("Def", "FunctionDef"):
                    assigned.append((s.name, None, 2 if S == "Def" else 3))
                elif S == "Import":
                    for name, value in self.import_bindings(s):
                        self.aliases[name] = value
        saved_scopes = self.scopes
        self.scopes = [self.all_bound]  # every name the program binds is the user's, while inferring
        try:
            for _ in range(2):
                kinds: dict[str, set[str | None]] = {}
                for name, s, how in assigned:
                    kinds.setdefault(name, set()).add(self._assigned_kind(s, how))
                self.name_kinds = {n: _one_kind(k) for n, k in kinds.items()}
        finally:
            self.scopes = saved_scopes
        customs = {name for name, _, how in assigned if how == 3}
        self.custom = {name for name in customs if all(how == 3 for n, _, how in assigned if n == name)}

    def _assigned_kind(self, s: Any, how: int) -> str | None:
        if how in (2, 3):
            return "function"
        if s is None:
            return None
        if how == 1:
            it = s.iterable
            if type(it) is A.Call and type(it.func) is A.Name and it.func.id == "range":
                return "int"
            return "tensor" if self.kind(it) in ("tensor", "scalar") and len(s.names) == 1 else None
        if s.requires_grad:
            return "tensor"
        return self.kind(s.value, VALUE)

    # -- comments ------------------------------------------------------------------------------------------
    def _unit_comments(self) -> dict[int, str]:
        entry = self.entry
        assert entry is not None
        found = self._comments.get(entry.unit)
        if found is None:
            found = {}
            for k, line in enumerate(entry.source.split("\n"), start=1):
                if not line.strip():
                    found[k] = "\n"  # a blank line: one blank line in the script where there is one
                    continue
                col = comment_columns(line)
                if col is not None:
                    text = line[col + 1:].rstrip()
                    text = text[1:] if text.startswith(" ") else text
                    found[k] = text if not line[:col].strip() else "\0" + text.strip()
            self._comments[entry.unit] = found
        return found

    def _comments_before(self, line: int) -> None:
        """The program's comment lines before `line` not written yet (comment lines, not comments after code)."""
        if self.entry is None:
            return
        comments = self._unit_comments()
        done = self._comment_lines_done.get(self.entry.unit, 0)
        for k in sorted(n for n in comments if done < n < line):
            text = comments[k]
            if text == "\n":
                if self.lines and self.lines[-1] != "" and k > 1:
                    self.lines.append("")
            elif not text.startswith("\0"):
                self.comment(text)
        if line - 1 > done:
            self._comment_lines_done[self.entry.unit] = line - 1

    def _inline_comment(self, st: Any, start: int) -> None:
        """A comment after the statement's code on its first line: after the statement's (first) line."""
        if self.entry is None:
            return
        text = self._unit_comments().get(st.loc.line)
        if text is None or not text.startswith("\0"):
            return
        starts_later = any(s.loc.line == st.loc.line and s.loc > st.loc
                           for s in walk_statements([self.entry.statement]))
        if starts_later:
            return
        written = [k for k in range(start, len(self.lines)) if self.lines[k].strip()
                   and not self.lines[k].strip().startswith("#")]
        if not written:
            return
        k = written[0] if next(A.blocks(st), None) is not None else written[-1]
        if "#" not in self.lines[k]:
            self.lines[k] += "  # " + text[1:]

    def _rest_of_comments(self) -> None:
        """Comment lines after the last statement of each unit."""
        for entry in self.entries:
            self.entry = entry
            self.depth = 0
            self._comments_before(len(entry.source.split("\n")) + 1)


def _target_names(node: Any) -> list[str]:
    if type(node) is A.Name:
        return [node.id]
    if type(node) is A.TupleExpr:
        return [n for i in node.items for n in _target_names(i)]
    return []


def _canonical(name: str, value: Any) -> bool:
    """An import that binds a predefined namespace name to that very namespace (`import torch.nn as nn`)."""
    from .language import PREDEFINED_NAMESPACES

    return value is not None and PREDEFINED_NAMESPACES.get(name) is value


def _one_kind(kinds: set[str | None]) -> str | None:
    if kinds == {"scalar", "tensor"}:
        return "tensor"
    if kinds == {"int", "float"}:
        return "float"
    return next(iter(kinds)) if len(kinds) == 1 else None


def translate(entries: list[Entry], title: str) -> str:
    """The PyTorch script of `entries` (see the module docstring)."""
    return Translator(entries).script(title)

