"""`explain T.grad`: why a `.grad` is None, or what made it what it is.

The reasons, in the order they are checked (LANGUAGE.md §7):
- T is a name that was a leaf until an assignment rebound it to a tensor computed from it (`w = w - lr * w.grad`;
  rebound.py): that line, and the fix, the in-place update under `with no_grad:` that keeps it a leaf;
- T is not a leaf: backward passes its gradient on without keeping it (fix: `retain_grad T` before backward);
- T does not require grad: autograd computes nothing for it (fix: make it with `requires_grad`);
- `.grad` was set to None (`zero_grad`, `T.grad = none`) at some line, after which no backward wrote it;
- no backward has run yet (a `grad(...)` call returns gradients rather than filling `.grad`);
- the last backward's output does not depend on T (or T was never used in a recorded computation).
For a `.grad` that is a tensor: the backward calls (by line) that added into it since it was last set, whether
it carries a graph (`create_graph`), and in-place changes made to it (`x.grad.zero_()`).

What happened is read from the engine's bounded history through `gradcalc.autograd.inspection` (the last
calls, `call_history`; the last `.grad` set, `last_grad_set`; the calls that wrote it since, `grad_writes`;
in-place changes, `in_place_changes`), computed when asked: whether a backward's output depends on T is a
walk of that call's graph (`reaches`), done here, not during the backward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.autograd.inspection import (
    CALLS_KEPT,
    BackwardCall,
    GradSet,
    call_history,
    edge_of,
    grad_of,
    grad_writes,
    in_place_changes,
    last_grad_set,
    origin,
    reaches,
    state,
)

from ..names import Names
from .rebound import find, told
from .report import Report, owned
from .style import Style
from .where import at, sentence, statement

if TYPE_CHECKING:
    from gradcalc import Tensor


def explain_grad(t: Tensor, names: Names, label: str, interp: object) -> Report:
    """The report on `t.grad` (`label` is how the program wrote T, for an unnamed T)."""
    who = names.of(t)
    name = who[0] if who else label
    g = grad_of(t)
    calls = [c for c in call_history().calls if owned(c.origin, interp)]
    if g is not None:
        return _has_grad(t, g, name, calls, interp)
    if t.grad_fn is not None and not state(t).retains_grad:
        rebinding = find(t, who)
        if rebinding is not None:
            return Report("grad", "rebound", lambda s: [
                f"{_dot(rebinding.name, s)} is None: {s.name(rebinding.name)} is not the leaf it was.",
                *told(rebinding, s)])
        return _not_leaf(t, name, calls)
    if not state(t).requires_grad:
        return Report("grad", "no_requires_grad", lambda s: [
            f"{_dot(name, s)} is None: {s.name(name)} does not require grad, so autograd treats it as a constant and "
            "computes no gradient for it.",
            f"Fix: make it a leaf that requires grad before computing with it: `{name} = ... requires_grad` "
            f"(or `{name}.requires_grad_(true)`), then run the computation and backward again.",
        ])
    cleared = last_grad_set(t)
    if cleared is not None and owned(cleared.origin, interp):
        return _cleared(t, name, cleared, calls)
    backwards = [c for c in calls if c.accumulate]
    if not backwards:
        return _no_backward(t, name, calls)
    return _not_reached(t, name, backwards[-1], names)


def _dot(name: str, s: Style) -> str:
    return s.name(f"{name}.grad")


def _not_leaf(t: Tensor, name: str, calls: list[BackwardCall]) -> Report:
    node = t.grad_fn
    o = origin(node)
    made = f"made by {node.name()}" + (f" {at(o)}" if o is not None else "")
    reached = [c for c in calls if c.accumulate and reaches(c.roots, node, 100_000)]

    def build(s: Style) -> list[str]:
        lines = [
            f"{_dot(name, s)} is None: {s.name(name)} is not a leaf: it was {s.node(made)}.",
            "backward fills .grad only on leaves (the tensors made with requires_grad); a computed tensor's "
            "gradient is passed on to what it was computed from, and not kept.",
        ]
        if reached:
            lines.append(f"The backward {at(reached[-1].origin)} went through {s.name(name)}, but "
                         "did not keep its gradient.")
        lines.append(f"Fix: `retain_grad {name}` before the backward (then {name}.grad holds its gradient), or "
                     f"read the .grad of the leaves {name} was computed from.")
        return lines

    return Report("grad", "not_leaf", build)


def _cleared(t: Tensor, name: str, cleared: GradSet, calls: list[BackwardCall]) -> Report:
    before = [c for c in calls if c.serial <= cleared.after_call and c.wrote_into(t)]
    text = getattr(cleared.origin, "text", "")
    how = "zero_grad" if text.startswith("zero_grad") else "an assignment"

    def build(s: Style) -> list[str]:
        lines = [f"{_dot(name, s)} is None: {how} set it to None {at(cleared.origin)}, and no backward has "
                 "written it since."]
        if before:
            lines.append(f"Before that, {_calls_text(before)} had written it.")
        lines.append(f"Fix: run backward again after the {how} (a training step zeroes the gradients, then "
                     "computes the loss and runs backward), or read the gradient before zeroing it.")
        return lines

    return Report("grad", "cleared", build)


def _no_backward(t: Tensor, name: str, calls: list[BackwardCall]) -> Report:
    grads = [c for c in calls if not c.accumulate and any(x is t for x in c.inputs)]

    def build(s: Style) -> list[str]:
        lines = [f"{_dot(name, s)} is None: no backward has run yet in this session."]
        if grads:
            lines.append(f"grad(...) {at(grads[-1].origin)} computed the gradient for {s.name(name)}, "
                         "but grad() returns gradients instead of filling .grad.")
        lines.append(f"Fix: `backward y` for an output y computed from {name} fills {name}.grad.")
        return lines

    return Report("grad", "no_backward", build)


def _not_reached(t: Tensor, name: str, last: BackwardCall, names: Names) -> Report:
    entry = edge_of(t, create=False)
    target = None if entry is None else entry.node
    roots = last.roots
    outputs: list[str] = []
    for node in roots:
        outputs.extend(n for n in names.of_output(node) if n not in outputs)
    out_text = ", ".join(f"`{o}`" for o in outputs) or "its output"
    depends = target is not None and bool(roots) and reaches(roots, target)

    def build(s: Style) -> list[str]:
        where = statement(last.origin)
        if target is None:
            lines = [f"{_dot(name, s)} is None: {s.name(name)} was never used in a computation that recorded a "
                     "graph, so no backward can reach it."]
        elif depends:
            lines = [f"{_dot(name, s)} is None: the last backward ({where}) reached {s.name(name)}, but no gradient "
                     "arrived there (the gradient along that way was None, or backward's inputs= left it out)."]
        elif not roots:
            lines = [f"{_dot(name, s)} is None: the last backward ({where}) did not reach {s.name(name)}."]
        else:
            lines = [f"{_dot(name, s)} is None: the last backward ({where}) computed the gradient of {out_text}, "
                     f"which does not depend on {s.name(name)}."]
            if names.of(t):
                lines.append(f"(If {name} was assigned again after computing {out_text}, the new {name} is a "
                             "different tensor: its .grad is empty.)")
        lines.append(f"Fix: compute the output from {name} and run backward on it: `backward y` for y computed "
                     f"from {name}.")
        return lines

    return Report("grad", "not_reached", build)


def _calls_text(calls: list[BackwardCall]) -> str:
    """`line 4 (`backward b`)`, `line 7 (`backward loss`) 3 times`: calls grouped by statement, in order."""
    groups: list[list[Any]] = []
    for c in calls:
        if groups and groups[-1][0] is c.origin:
            groups[-1][1] += 1
        else:
            groups.append([c.origin, 1])
    parts = [statement(o) + (f" {n} times" if n > 1 else "") for o, n in groups]
    return ", then ".join(parts)


def _has_grad(t: Tensor, g: Tensor, name: str, calls: list[BackwardCall], interp: object) -> Report:
    cleared, writes = grad_writes(t)
    writes = [c for c in writes if owned(c.origin, interp)]
    if cleared is not None and not owned(cleared.origin, interp):
        cleared = None
    call_origins = {id(c.origin) for c in calls}
    changes = [c for c in in_place_changes(g) if id(c.origin) not in call_origins and c.origin is not None]
    history = call_history()
    full = history.full and writes and writes[0].serial == history.calls[0].serial
    retained = t.grad_fn is not None

    def build(s: Style) -> list[str]:
        lines = [f"{_dot(name, s)} is {s.value(g, 2)}"]
        if retained:
            lines.append(f"{s.name(name)} is not a leaf; it keeps its gradient because of retain_grad.")
        if cleared is not None and not cleared.to_none:
            lines.append(f"It was set {at(cleared.origin)}.")
        elif cleared is not None and writes:
            lines.append(f"It was set to None {at(cleared.origin)}.")
        if writes:
            verb = "wrote it" if len(writes) == 1 else "added into it, in this order"
            older = f" (and maybe earlier calls: gradcalc keeps the last {CALLS_KEPT})" if full else ""
            lines.append(sentence(f"{_calls_text(writes)} {verb}") + older + ".")
            if len(writes) > 1:
                lines.append("Gradients add up across backward calls until zeroed (zero_grad, or .grad.zero_()).")
        elif cleared is None or cleared.to_none:
            lines.append("No backward call that gradcalc remembers wrote it (it keeps the last "
                         f"{CALLS_KEPT} calls).")
        for c in changes:
            to = f"version {c.last}" if c.first == c.last else f"versions {c.first} to {c.last}"
            lines.append(sentence(f"{statement(c.origin)} changed it in place ({to})."))
        if g.grad_fn is not None:
            graph_calls = [c for c in writes if c.create_graph]
            by = f" {at(graph_calls[-1].origin)}" if graph_calls else ""
            lines.append(f"It carries a graph (grad_fn={g.grad_fn.name()}): it was made with create_graph{by}, "
                         f"so it can be differentiated again (grad({name}.grad, {name})).")
        else:
            lines.append("It carries no graph (made without create_graph): a constant to autograd.")
        return lines

    return Report("grad", "has_grad", build)
