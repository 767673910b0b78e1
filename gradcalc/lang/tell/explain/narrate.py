"""`explain backward ...` and `explain grad(...)`: the backward pass told step by step.

The engine reports each step through `inspection.observe` (`NodeRan` and `GradWritten` records) in the order
PyTorch's engine runs the nodes. `Recorder` keeps them with snapshots of their tensors (a later backward may
change a `.grad` in place); `Narration` tells them: one step per node, naming it by the workspace names of
what it made, where it was made, its formula (from the operation's spec), what it received and what it
passed along each edge (to which names), each `.grad` written (before -> after), the hooks that fired, the
saved values freed, the inputs that needed no gradient. As text, or with `--format json` as one object per
step (told.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gradcalc.autograd.inspection import (
    Edge,
    GradWritten,
    HookFired,
    NodeRan,
    accumulates,
    edge_of,
    formula,
    formulas,
    grad_of,
    inputs,
    nodes_below,
    num_outputs,
    observe,
    origin,
    saved,
    snapshot,
)

from ..names import Names
from ..render import tensor_json
from .style import Style, names_text
from .told import Told
from .where import made, number, short

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd.graph import Node

__all__ = ["Narration", "Recorder", "observe", "skipped_inputs", "snapshot"]


class Recorder:
    """The listener of `inspection.observe`: every record of the backward with its tensors copied."""

    def __init__(self) -> None:
        self.events: list[NodeRan | GradWritten] = []

    def __call__(self, e: NodeRan | GradWritten) -> None:
        if isinstance(e, NodeRan):
            self.events.append(NodeRan(
                e.node, tuple(snapshot(g) for g in e.grad_outputs), tuple(snapshot(g) for g in e.grad_inputs),
                e.to, e.hooks, e.freed, e.executed))
        else:  # `after` as the .grad is now, with its grad_fn (create_graph)
            self.events.append(GradWritten(e.tensor, e.node, e.grad, e.before, snapshot(grad_of(e.tensor)),
                                           e.retained))


def _entry(t: Tensor) -> Node | None:
    """The node a gradient for `t` enters the graph at (None: it does not require grad)."""
    edge = edge_of(t)
    return None if edge is None else edge.node


def skipped_inputs(roots: list[Node], names: Names) -> dict[int, dict[int, list[str]]]:
    """Before the walk frees anything: for each node below `roots` with an input that needs no gradient,
    the names of that input when the node saved it (PyTorch's `self` is input 0, `other` input 1)."""
    out: dict[int, dict[int, list[str]]] = {}
    for node in nodes_below(roots):
        for i, edge in enumerate(inputs(node)[:2]):
            if edge is not None:
                continue
            wanted = ("self", "other")[i]
            value = next((v.value for v in saved(node) if v.name == wanted and v.is_tensor), None)
            who = names.of(value) if value is not None else []
            if who:
                out.setdefault(id(node), {})[i] = who
    return out


class Step:
    """One node's turn."""

    def __init__(self, run: NodeRan) -> None:
        self.run = run
        self.node = run.node
        self.grads: list[GradWritten] = []  # the .grads written just before it ran
        self.results: list[tuple[int, Tensor | None]] = []  # grad(): (input number, value returned for it)
        self.arrivals = 0  # how many gradients were added up into what the node received


class Narration(Told):
    """What one backward or grad() call did, ready to be told (`lines`) or listed (`objects`)."""

    def __init__(
        self, recorder: Recorder, names: Names, *, kind: str, roots: list[tuple[Tensor, Tensor | None, str]],
        flags: dict[str, bool], skipped: dict[int, dict[int, list[str]]], inputs: list[Tensor] | None = None,
        results: tuple[Tensor | None, ...] | None = None,
    ) -> None:
        self.names = names
        self.kind = kind  # "backward" or "grad"
        self.roots = roots  # (tensor, its starting gradient, its label)
        self.flags = flags
        self.skipped = skipped
        self.inputs = inputs or []
        self.steps: list[Step] = []
        pending: list[GradWritten] = []
        arrivals: dict[int, int] = {}
        for t, _, _ in roots:
            node = _entry(t)
            if node is not None:
                arrivals[id(node)] = arrivals.get(id(node), 0) + 1
        for e in recorder.events:
            if isinstance(e, NodeRan):
                step = Step(e)
                step.grads = pending
                pending = []
                step.arrivals = arrivals.get(id(e.node), 0)
                for g, child in zip(e.grad_inputs, e.to, strict=False):
                    if g is not None and child is not None:
                        arrivals[id(child)] = arrivals.get(id(child), 0) + 1
                self.steps.append(step)
            else:
                pending.append(e)
        if results is not None:
            for k, t in enumerate(self.inputs):
                node = _entry(t)
                for step in self.steps:
                    if step.node is node:
                        step.results.append((k, results[k]))
                        break

    # -- labels ------------------------------------------------------------------------------------
    def _node_names(self, node: Node) -> list[str]:
        out: list[str] = []
        for nr in range(num_outputs(node) or 1):
            for n in self.names.of_output(node, nr):
                if n not in out:
                    out.append(n)
        return out

    def _target(self, edge: Edge, style: Style) -> str:
        who = self.names.of_output(edge.node, edge.output_nr)
        if who:
            return names_text(who, style)
        o = origin(edge.node)
        where = f" ({short(o)})" if o is not None else ""
        return style.node(edge.node.name()) + style.where(where)

    def _tensor_label(self, t: Tensor) -> str | None:
        who = self.names.of(t)
        return who[0] if who else None

    def _input_label(self, k: int) -> str:
        t = self.inputs[k]
        who = self.names.of(t)
        return who[0] if who else f"input {k}"

    # -- text --------------------------------------------------------------------------------------
    def lines(self, style: Style) -> list[str]:
        lines = [self._header(style)]
        for i, step in enumerate(self.steps, 1):
            lines.extend(self._step_lines(i, step, style))
        lines.extend(self._summary(style))
        return lines

    def _header(self, style: Style) -> str:
        parts = []
        for _t, g, label in self.roots:
            start = style.value(g) if g is not None else "the gradient given"
            parts.append(f"{style.name(label)}'s gradient starts as {start}")
        labels = ", ".join(label for _, _, label in self.roots)
        what = f"backward {labels}" if self.kind == "backward" else f"grad({labels}, ...)"
        return f"{what}: " + "; ".join(parts)

    def _step_lines(self, i: int, step: Step, style: Style) -> list[str]:
        run, node = step.run, step.node
        who = self._node_names(node)
        head = f"{i:>2}. "
        if who:
            head += names_text(who, style) + "  "
        head += style.node(node.name())
        o = origin(node)
        if o is not None:
            head += "  " + style.where(f"({made(o)})")
        lines = [head]
        pad = "      "
        width = 10
        received = list(run.grad_outputs)
        if not run.executed:
            k_names = ", ".join(self._input_label(k) for k, _ in step.results) or "an input"
            value = step.results[0][1] if step.results else (received[0] if received else None)
            lines.append(f"{pad}{'returns':<{width}}{style.value(value, len(pad) + width)}   (grad() returns what "
                         f"arrived here for {style.name(k_names)}; this node does not run)")
            return lines
        for j, (name, text) in enumerate(formulas(node)):  # the derivative the numbers below come from
            written = text if name is None else f"{name}: {text}"  # one input a line, as derivatives.yaml
            lines.append(f"{pad}{'formula' if j == 0 else '':<{width}}{style.formula(written)}")
        pre_hooks = [h for h in run.hooks if h.kind in ("tensor", "prehook")]  # they act on what arrived
        post_hooks = [h for h in run.hooks if h.kind not in ("tensor", "prehook")]
        if pre_hooks:
            lines.append(f"{pad}{'hooks':<{width}}" + ", ".join(_hook_text(h) for h in pre_hooks))
        if all(g is None for g in received):
            lines.append(f"{pad}{'received':<{width}}nothing: no gradient reached it, so it passes nothing on")
        elif len(received) == 1:
            extra = f"   (the sum of {step.arrivals} gradients)" if step.arrivals > 1 else ""
            lines.append(f"{pad}{'received':<{width}}{style.value(received[0], len(pad) + width)}{extra}")
        else:  # one gradient per output of the node, each named by the tensor it is for
            parts = []
            for nr, g in enumerate(received):
                who = self.names.of_output(node, nr)
                label = names_text(who, style) if who else f"output {nr}"
                parts.append(f"{label}: {style.value(g, len(pad) + width)}")
            extra = f"   ({step.arrivals} gradients arrived)" if step.arrivals > len(received) else ""
            lines.append(f"{pad}{'received':<{width}}" + "; ".join(parts) + extra)
        for w in step.grads:
            label = self._tensor_label(w.tensor) or ("this tensor" if w.retained else "the leaf")
            note = "   (retain_grad)" if w.retained else ""
            head = f"{pad}{(label + '.grad'):<{width - 1}} "  # a long name still leaves a space
            was = style.value(w.before, len(head))
            now_at = len(head) + _visible(was.rsplit("\n", 1)[-1]) + 4 if "\n" not in was else len(head)
            lines.append(f"{head}{was} -> {style.value(w.after, now_at)}{note}")
        for k, value in step.results:
            lines.append(f"{pad}{'returns':<{width}}{style.value(value, len(pad) + width)}   (grad()'s result "
                         f"for {style.name(self._input_label(k))})")
        if not accumulates(node):  # a leaf's AccumulateGrad passes nothing on
            edges = inputs(node)
            given = run.grad_inputs
            skipped = self.skipped.get(id(node), {})
            count = len(edges)
            for k, edge in enumerate(edges):
                g = given[k] if k < len(given) else None
                branch = "└─ " if k == count - 1 else "├─ "
                if edge is None:
                    who_in = skipped.get(k)
                    what = names_text(who_in, style) if who_in else f"input {k}"
                    lines.append(f"{pad}{branch}{what}: skipped (does not require grad)")
                    continue
                head = f"{pad}{branch}to {self._target(edge, style)}: "
                shown = style.value(g, _visible(head)) if g is not None else "None (no gradient goes this way)"
                lines.append(head + shown)
        if post_hooks:
            lines.append(f"{pad}{'hooks':<{width}}" + ", ".join(_hook_text(h) for h in post_hooks))
        if run.freed:
            freed = ", ".join(f"saved tensor {n}" if n.isdigit() else n for n in run.freed)
            lines.append(f"{pad}{'freed':<{width}}" + style.warn(freed) + "   (its saved values)")
        return lines

    def _summary(self, style: Style) -> list[str]:
        out = []
        freed = any(s.run.freed for s in self.steps)
        if self.flags.get("create_graph"):
            out.append("create_graph: the gradients are graph members themselves (they require grad) and can be "
                       "differentiated again")
        elif freed:
            out.append("without retain_graph the saved values were freed: a second backward through this graph is "
                       "an error (add retain_graph to keep them)")
        elif self.flags.get("retain_graph"):
            out.append("retain_graph: the saved values were kept, so backward can run through this graph again")
        if self.kind == "grad":
            out.append("grad() returns the gradients: it leaves the leaves' .grad as they were (only tensors "
                       "marked with retain_grad keep theirs)")
        return out

    # -- json --------------------------------------------------------------------------------------
    def objects(self) -> list[dict[str, object]]:
        def val(t: Tensor | None) -> object:
            return None if t is None else tensor_json(t)

        out: list[dict[str, object]] = []
        for step in self.steps:
            run, node = step.run, step.node
            if run.executed:
                edges = inputs(node)
                to = [None if e is None else (self.names.of_output(e.node, e.output_nr) or [e.node.name()])[0]
                      for e in edges]
                grad_inputs = [val(g) for g in run.grad_inputs] if run.grad_inputs else [None] * len(edges)
                if accumulates(node):
                    grad_inputs, to = [], []
                out.append({
                    "event": "node", "node": node.name(), "line": number(origin(node)),
                    "names": self._node_names(node), "formula": formula(node),
                    "grad_outputs": [val(g) for g in run.grad_outputs], "grad_inputs": grad_inputs, "to": to,
                    "freed": list(run.freed), "hooks": [_hook_text(h) for h in run.hooks],
                })
            for w in step.grads:
                out.append({"event": "grad", "name": self._tensor_label(w.tensor), "before": val(w.before),
                            "after": val(w.after)})
            for k, value in step.results:
                out.append({"event": "result", "input": k, "name": self._input_label(k), "value": val(value)})
        return out


def _hook_text(h: HookFired) -> str:
    fn = h.hook
    name = getattr(fn, "name", None) or getattr(getattr(fn, "__wrapped__", None), "name", None)
    if not isinstance(name, str):
        raw = getattr(fn, "__name__", "")
        name = raw if raw and not raw.startswith(("<", "_")) else ""
    kinds = {"tensor": "tensor hook", "prehook": "prehook", "hook": "hook",
             "post_accumulate_grad": "post-accumulate hook"}
    text = f"{kinds.get(h.kind, h.kind)} {name}".strip()
    return text + (" (replaced the gradient)" if h.replaced else "")


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _visible(text: str) -> int:
    """The width of `text` on the screen: its length without colour codes (values under it line up)."""
    return len(_COLOUR.sub("", text))
