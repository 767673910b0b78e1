"""The rebound leaf: `w = w - lr * w.grad` turns the name `w` from a leaf into a computed tensor.

The most common beginner bug with autograd: `w = 1 requires_grad`, then in a loop `backward loss` and
`w = w - 0.1 * w.grad`. The assignment binds `w` to a new tensor computed from the leaf, a non-leaf, so the
next backward passes its gradient on to the old leaf and `w.grad` is None (and then `0.1 * None` fails).
`retain_grad w` is not the fix: the update must change the leaf in place where nothing is recorded,
`with no_grad: w -= 0.1 * w.grad`, so that `w` stays the leaf (LANGUAGE.md §7).

How it is detected, generally (any assignment, any expression, in a loop or not):
- when an assignment binds a name that was bound to a leaf that requires grad to a non-leaf tensor
  (`note`, called by the assignment statement only in that case: a check of two attributes otherwise), the
  new tensor's node is noted with the name, the statement and the old leaf's AccumulateGrad node (weakly:
  a note dies with its node);
- when the language asks about a non-leaf T bound to that name (`find`: `explain T.grad`, the non-leaf
  `.grad` warning, the error that follows from the None), T's graph is searched for a noted node of that
  name (later assignments such as `w = w * 2` stack nodes above it) whose graph reaches the old leaf's
  AccumulateGrad: the value was computed from the leaf. A name rebound to something not computed from its
  old leaf (`w = 2 * x`), or a name that was never a leaf (`b = a * a`), is a genuinely new non-leaf: the
  fix stays `retain_grad`.

The engine knows nothing of names: its warning and errors stay as they are, and the language adds this
diagnosis where it shows them (compiler.py's `.grad` read and block runner, why_grad.py, long_errors.py).
"""

from __future__ import annotations

import re
import warnings
import weakref
from typing import TYPE_CHECKING, NamedTuple

from gradcalc.autograd.graph import STAMP

from .where import sentence, statement

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd.graph import Node

    from ...core.frames import Frame
    from ...errors import GradcalcError
    from .style import Style

WALK_LIMIT = 100_000  # nodes looked at when searching a graph for a rebinding (only when something was noted)


class Rebinding(NamedTuple):
    """An assignment that rebound `name` from a leaf to `node`'s output, a tensor computed from it."""

    name: str
    origin: object  # the assignment statement (lang/origin.py)
    node: Node  # the node that made the new value
    accumulator: Node  # the old leaf's AccumulateGrad node


# node that made the new value -> (name, statement, weak reference to the old leaf's AccumulateGrad)
_NOTES: weakref.WeakKeyDictionary[Node, tuple[str, object, weakref.ref[Node]]] = weakref.WeakKeyDictionary()


def note(name: str, old: Tensor, new: Tensor) -> None:
    """`name` was bound to the leaf `old` (which requires grad) and is now bound to the non-leaf `new`."""
    from gradcalc.autograd.inspection import edge_of  # (lazy: this module is on the start-up path, inspection is not)

    edge = edge_of(old, create=False)
    if edge is None:  # the leaf was never used in a recorded computation: `new` is not computed from it
        return
    _NOTES[new.grad_fn] = (name, STAMP.origin, weakref.ref(edge.node))


def find(t: Tensor, names: list[str]) -> Rebinding | None:
    """The rebinding that made the non-leaf `t` (bound to one of `names`) out of a leaf of that name, if any."""
    root = t.grad_fn
    if root is None or not _NOTES or not names:
        return None
    from gradcalc.autograd.inspection import inputs, reaches  # (lazy: off the start-up path)

    wanted = set(names)
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < WALK_LIMIT:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        entry = _NOTES.get(node)
        if entry is not None and entry[0] in wanted:
            acc = entry[2]()
            if acc is not None and reaches([node], acc, WALK_LIMIT):
                return Rebinding(entry[0], entry[1], node, acc)
        stack.extend(e.node for e in inputs(node) if e is not None)
    return None


def bound_name(t: Tensor, frame: Frame | None) -> list[str]:
    """The names bound to `t` in `frame` and the scopes around it (only those that notes were made for)."""
    noted = {entry[0] for entry in _NOTES.values()}
    out = []
    while frame is not None:
        for name in noted:
            if frame.vars.get(name) is t and name not in out:
                out.append(name)
        frame = frame.parent
    return out


def in_place(text: str, name: str) -> str:
    """The rebinding statement written as the in-place update that keeps `name` a leaf:
    `w = w - 0.1 * w.grad` -> `w -= 0.1 * w.grad`; anything else -> `w.copy_(EXPR)`."""
    m = re.fullmatch(rf"{re.escape(name)}\s*=\s*(.+)", text.strip())
    if m is None:
        return f"{name} -= lr * {name}.grad"
    expr = m[1].strip()
    m = re.fullmatch(rf"{re.escape(name)}\s*([-+*/])\s*(.+)", expr)
    if m is not None and not (m[1] == "*" and m[2].startswith("*")):  # `w ** 2` is not `w *= ...`
        op, rest = m[1], m[2].strip()
        # `w - a - b` is not `w -= a - b`: a rest with an operator as loose as `-` (or `/`) at its top level
        # would change meaning; `+` and `*` regroup safely (w + a - b == w + (a - b))
        loose = {"-": "+-", "/": "*/", "+": "", "*": ""}[op]
        if not _top_level_ops(rest, loose) and not _top_level_ops(rest, "<>=!,") and " if " not in f" {rest} ":
            return f"{name} {op}= {rest}"
    return f"{name}.copy_({expr})"


def _top_level_ops(text: str, ops: str) -> bool:
    """Whether one of the binary operators `ops` appears in `text` outside brackets."""
    depth = 0
    prev = ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in ops and ch in "+-" and (prev.isalnum() or prev in ")]._"):
            return True  # binary + or -, not a sign (1e-3 is taken as binary: only the fix's form changes)
        elif depth == 0 and ch in ops and ch not in "+-":
            return True
        if not ch.isspace():
            prev = ch
    return False


# -- the error that follows from the None ----------------------------------------------------------------
class _LastNone:
    """The last rebound non-leaf `.grad` the language read as None: the statement that read it, and why."""

    __slots__ = ("origin", "rebinding")

    def __init__(self) -> None:
        self.origin: object = None
        self.rebinding: Rebinding | None = None


LAST_NONE = _LastNone()


def short(r: Rebinding) -> str:
    """One clause for a warning or an error: which line rebound the name, and the fix."""
    return (f"{r.name} was a leaf until {statement(r.origin)} rebound it to a tensor computed from it; update "
            f"{r.name} in place under `with no_grad:` (`{fix(r)}`) to keep it a leaf")


def fix(r: Rebinding) -> str:
    """The in-place update that replaces the rebinding statement."""
    return in_place(getattr(r.origin, "text", ""), r.name)


def told(r: Rebinding, s: Style) -> list[str]:
    """The long form (explain T.grad, bare explain): what the assignment did, why .grad is None, the fix."""
    name = s.name(r.name)
    return [
        f"{sentence(statement(r.origin))} rebound the name {name} from a leaf that requires grad to a tensor "
        f"computed from it (made by {s.node(r.node.name())}): {name} is now a non-leaf.",
        "backward fills .grad only on leaves: it passes the gradient through the new tensor on to the old leaf, "
        f"so {r.name}.grad stays None (retain_grad would not help: the next update would rebind {r.name} again, "
        "and each step would build on the graph of all the steps before).",
        f"Fix: update {r.name} in place where nothing is recorded, so that it stays the leaf (as an optimizer's "
        "step does):",
        "    with no_grad:",
        f"        {fix(r)}",
        f"and make {r.name} a leaf again before running it: `{r.name} = {r.name}.detach() requires_grad`.",
    ]


def warning_text(r: Rebinding) -> str:
    """The non-leaf `.grad` warning, when the non-leaf is a rebound leaf."""
    return f"reading .grad of a non-leaf tensor, so this is None: {short(r)}"


def read_grad(t: Tensor, frame: Frame) -> Tensor | None:
    """`T.grad` read by the language for a non-leaf T whose .grad is None: the engine's warning, or, for a
    rebound leaf, the language's warning saying so (the None remembered for the error that may follow)."""
    r = find(t, bound_name(t, frame)) if _NOTES else None
    if r is None:
        return t.grad  # the engine's warning as it is
    LAST_NONE.origin, LAST_NONE.rebinding = STAMP.origin, r
    warnings.warn(warning_text(r), UserWarning, stacklevel=2)
    return None


def annotate(exc: GradcalcError) -> None:
    """An error in the statement that read a rebound leaf's `.grad` as None: say why it was None (when the
    message is about a none value) -- called by the block runner, only when `LAST_NONE.origin` is the
    failing statement."""
    r = LAST_NONE.rebinding
    LAST_NONE.origin = LAST_NONE.rebinding = None
    if r is None or getattr(exc, "rebound", None) is not None or "none" not in exc.message:
        return
    exc.rebound = r
    exc.message = f"{exc.message}; {r.name}.grad is None: {short(r)}"
    exc.args = (exc.message,)
