"""`explain backward ...` and `explain grad(...)`: the backward pass told step by step.

The engine reports each step to an observer (`autograd.graph.observe_backward`, records in
`autograd.events`) in the order PyTorch's engine runs the nodes. `Recorder` keeps them with snapshots of
their tensors (a later backward may change a `.grad` in place); `Narration` tells them: one step per node,
naming it by the workspace names of what it made, where it was made, what it received and what it passed
along each edge (to which names), each `.grad` written (before -> after), the hooks that fired, the saved
values freed, the inputs that needed no gradient. As text, or with `--format json` as one object per step.
"""

from __future__ import annotations

import json
from typing import Any

from ..names import Names
from .style import Style, names_text

ACCUMULATE = "AccumulateGrad"


def snapshot(t: Any) -> Any:
    """A copy of a gradient as it is now (same dtype, requires_grad and grad_fn, for printing)."""
    if t is None:
        return None
    import numpy as np

    from ..runtime import ENGINE

    s = ENGINE.Tensor._make(np.array(t._data, copy=True), t._requires_grad, t.grad_fn)
    s._output_nr = t._output_nr
    return s


class Recorder:
    """The observer: every event of the backward with its tensors copied."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def __call__(self, e: Any) -> None:
        kind = type(e).__name__
        if kind == "NodeRun":
            self.events.append((kind, e._replace(
                grad_outputs=tuple(snapshot(g) for g in e.grad_outputs),
                grad_inputs=tuple(snapshot(g) for g in e.grad_inputs),
            )))
        else:  # GradAccumulated, GradRetained: `after` as the .grad is now, with its grad_fn (create_graph)
            self.events.append((kind, e._replace(after=snapshot(e.tensor._grad))))


def _node_of(t: Any) -> tuple[Any, int]:
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    return t._accumulate_node() if t._requires_grad else None, 0


def skipped_inputs(roots: list[Any], names: Names) -> dict[int, dict[int, list[str]]]:
    """Before the walk frees anything: for each node below `roots` with an input that needs no gradient,
    the names of that input when the node saved it (PyTorch's `self` is input 0, `other` input 1)."""
    from ..runtime import ENGINE

    out: dict[int, dict[int, list[str]]] = {}
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nexts = getattr(node, "_next", ())
        for i, child in enumerate(nexts):
            if child is not None:
                stack.append(child)
            elif i < 2:
                spec = type(node).saved_names.get(("self", "other")[i])
                saved = node._saved
                index = getattr(spec, "index", None)
                if index is not None and saved and index < len(saved) and type(saved[index]) is ENGINE.Tensor:
                    who = names.of(saved[index])
                    if who:
                        out.setdefault(id(node), {})[i] = who
    return out


class Step:
    """One node's turn."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.node = run.node
        self.grads: list[tuple[str, Any, Any, Any]] = []  # (kind, tensor, before, after)
        self.results: list[tuple[int, Any]] = []  # grad(): (input number, value returned for it)
        self.arrivals = 0  # how many gradients were added up into what the node received


class Narration:
    """What one backward or grad() call did, ready to be told (`text`) or listed (`json_lines`)."""

    def __init__(
        self, recorder: Recorder, names: Names, *, kind: str, roots: list[tuple[Any, Any, str]],
        flags: dict[str, Any], skipped: dict[int, dict[int, list[str]]], inputs: list[Any] | None = None,
        results: tuple | None = None,
    ) -> None:
        self.names = names
        self.kind = kind  # "backward" or "grad"
        self.roots = roots  # (tensor, its starting gradient, its label)
        self.flags = flags
        self.skipped = skipped
        self.inputs = inputs or []
        self.steps: list[Step] = []
        pending: list[tuple[str, Any, Any, Any]] = []
        arrivals: dict[int, int] = {}
        for t, _, _ in roots:
            node, _nr = _node_of(t)
            if node is not None:
                arrivals[id(node)] = arrivals.get(id(node), 0) + 1
        for kind_, e in recorder.events:
            if kind_ == "NodeRun":
                step = Step(e)
                step.grads = pending
                pending = []
                step.arrivals = arrivals.get(id(e.node), 0)
                for g, child in zip(e.grad_inputs, e.to, strict=False):
                    if g is not None and child is not None:
                        arrivals[id(child)] = arrivals.get(id(child), 0) + 1
                self.steps.append(step)
            elif kind_ == "GradAccumulated":
                pending.append(("leaf", e.tensor, e.before, e.after))
            else:
                pending.append(("retained", e.tensor, e.before, e.after))
        if results is not None:
            for k, t in enumerate(self.inputs):
                node, _nr = _node_of(t)
                for step in self.steps:
                    if step.node is node:
                        step.results.append((k, results[k]))
                        break

    # -- labels ------------------------------------------------------------------------------------
    def _node_names(self, node: Any) -> list[str]:
        out: list[str] = []
        for nr in range(getattr(node, "num_outputs", 1) or 1):
            for n in self.names.of_output(node, nr):
                if n not in out:
                    out.append(n)
        return out

    def _target(self, child: Any, nr: int, style: Style) -> str:
        who = self.names.of_output(child, nr)
        if who:
            return names_text(who, style)
        origin = _origin(child)
        where = f" ({_line_of(origin)})" if origin is not None else ""
        return style.node(child.name()) + style.where(where)

    def _tensor_label(self, t: Any) -> str | None:
        who = self.names.of(t)
        return who[0] if who else None

    def _input_label(self, k: int) -> str:
        t = self.inputs[k]
        who = self.names.of(t)
        return who[0] if who else f"input {k}"

    # -- text --------------------------------------------------------------------------------------
    def text(self, style: Style) -> str:
        lines = [self._header(style)]
        for i, step in enumerate(self.steps, 1):
            lines.extend(self._step_lines(i, step, style))
        lines.extend(self._summary(style))
        return "\n".join(lines)

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
        is_leaf = node.name() == ACCUMULATE
        who = self._node_names(node)
        head = f"{i:>2}. "
        if who:
            head += names_text(who, style) + "  "
        head += style.node(node.name())
        origin = _origin(node)
        if origin is not None:
            head += "  " + style.where(f"({origin})")
        lines = [head]
        pad = "      "
        width = 10
        received = [g for g in run.grad_outputs]
        if not run.executed:
            k_names = ", ".join(self._input_label(k) for k, _ in step.results) or "an input"
            value = step.results[0][1] if step.results else (received[0] if received else None)
            lines.append(f"{pad}{'returns':<{width}}{style.value(value, len(pad) + width)}   (grad() returns what "
                         f"arrived here for {style.name(k_names)}; this node does not run)")
            return lines
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
        for kind, t, before, after in step.grads:
            label = self._tensor_label(t) or ("the leaf" if kind == "leaf" else "this tensor")
            note = "   (retain_grad)" if kind == "retained" else ""
            head = f"{pad}{(label + '.grad'):<{width - 1}} "  # a long name still leaves a space
            was = style.value(before, len(head))
            now_at = len(head) + _visible(was.rsplit("\n", 1)[-1]) + 4 if "\n" not in was else len(head)
            lines.append(f"{head}{was} -> {style.value(after, now_at)}{note}")
        for k, value in step.results:
            lines.append(f"{pad}{'returns':<{width}}{style.value(value, len(pad) + width)}   (grad()'s result "
                         f"for {style.name(self._input_label(k))})")
        if not is_leaf:
            edges = list(zip(run.grad_inputs, run.to, strict=False)) if run.grad_inputs else [
                (None, child) for child in run.to]
            nrs = node._nrs or (0,) * len(node._next)
            skipped = self.skipped.get(id(node), {})
            count = len(node._next)
            for k in range(count):
                g, child = edges[k] if k < len(edges) else (None, node._next[k])
                branch = "└─ " if k == count - 1 else "├─ "
                if child is None:
                    who_in = skipped.get(k)
                    what = names_text(who_in, style) if who_in else f"input {k}"
                    lines.append(f"{pad}{branch}{what}: skipped (does not require grad)")
                    continue
                target = self._target(child, nrs[k], style)
                head = f"{pad}{branch}to {target}: "
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
    def json_lines(self) -> str:
        from ..render import tensor_json

        def val(t: Any) -> Any:
            return None if t is None else tensor_json(t)

        out = []
        for step in self.steps:
            run, node = step.run, step.node
            line = getattr(_origin(node), "line", None)
            if run.executed:
                nrs = node._nrs or (0,) * len(node._next)
                to = [
                    None if child is None else (self.names.of_output(child, nrs[k]) or [child.name()])[0]
                    for k, child in enumerate(node._next)
                ]
                grad_inputs = [val(g) for g in run.grad_inputs] if run.grad_inputs else [None] * len(node._next)
                if node.name() == ACCUMULATE:
                    grad_inputs, to = [], []
                out.append({
                    "event": "node", "node": node.name(), "line": line, "names": self._node_names(node),
                    "grad_outputs": [val(g) for g in run.grad_outputs], "grad_inputs": grad_inputs, "to": to,
                    "freed": list(run.freed), "hooks": [_hook_text(h) for h in run.hooks],
                })
            for _kind, t, before, after in step.grads:
                out.append({"event": "grad", "name": self._tensor_label(t), "before": val(before),
                            "after": val(after)})
            for k, value in step.results:
                out.append({"event": "result", "input": k, "name": self._input_label(k), "value": val(value)})
        return "\n".join(json.dumps(o, allow_nan=True) for o in out)


def _origin(node: Any) -> Any:
    """Where a node was made; none for a leaf's AccumulateGrad (made on the leaf's first use, not by a line)."""
    return None if node.name() == ACCUMULATE else getattr(node, "origin", None)


def _line_of(origin: Any) -> str:
    line = getattr(origin, "line", None)
    return f"line {line}" if line is not None and not getattr(origin.unit, "interactive", False) else str(origin)


def _hook_text(h: Any) -> str:
    fn = h.hook
    name = getattr(fn, "name", None) or getattr(getattr(fn, "__wrapped__", None), "name", None)
    if not isinstance(name, str):
        raw = getattr(fn, "__name__", "")
        name = raw if raw and not raw.startswith(("<", "_")) else ""
    kinds = {"tensor": "tensor hook", "prehook": "prehook", "hook": "hook",
             "post_accumulate_grad": "post-accumulate hook"}
    text = f"{kinds.get(h.kind, h.kind)} {name}".strip()
    return text + (" (replaced the gradient)" if h.replaced else "")


def _visible(text: str) -> int:
    """The width of `text` on the screen: its length without colour codes (values under it line up)."""
    import re

    return len(re.sub(r"\x1b\[[0-9;]*m", "", text))
