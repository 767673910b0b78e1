"""Bare `explain`: the session's last error in its long form: what happened, where (lines), why, the fix.

For the errors the seed tutorials discuss, the engine's error says what it is about (`inspection.reason_of`:
a typed record with the node, the tensor, the versions), and the culprits are named by workspace name and
line: which earlier backward freed the values a second one needed; which tensor a node saved, where that
node was made, which statement changed the tensor in place and to which version; the leaf changed in place;
the output without a gradient; the unused input; the inference tensor; the NaN's node under detect_anomaly.
Any other error is told in its general long form. Where a statement is, is said by where.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gradcalc.autograd.inspection import (
    BackwardCall,
    ErrorReason,
    Freed,
    InferenceInPlace,
    InferenceSaved,
    InputNoGrad,
    LeafInPlace,
    NanGradient,
    NoGradOutput,
    NonScalar,
    Unused,
    VersionMismatch,
    call_history,
    in_place_changes,
    inputs,
    origin,
    reaches,
    reason_of,
    saved,
    saved_names,
    version_key,
)

from ...errors import GradcalcError, Interrupted, SyntaxProblem
from ..names import Names, quoted
from . import where as places  # (`places.place`: one function says where a statement is)
from .rebound import told
from .report import Report, owned
from .style import Style
from .where import at, statement

if TYPE_CHECKING:
    from gradcalc.autograd.graph import Node

    from ...core.frames import Frame
    from .rebound import Rebinding

# a teller's answer: the lines, once the style is known
Build = Callable[[Style], list[str]]


def explain_error(err: GradcalcError | None, frame: Frame, interp: object) -> Report:
    """The report on the session's last error (`err`, a GradcalcError, or None when there was none)."""
    if err is None:
        return Report("error", "no_error", lambda s: [
            "No error yet in this session: `explain` alone tells the last error in full, once there is one.",
            "It also takes `explain backward y`, `explain grad(y, x)` and `explain x.grad`.",
        ])
    rebinding = getattr(err, "rebound", None)
    if rebinding is not None:  # the None of a rebound leaf's .grad made it fail (explain/rebound.py)
        return Report("error", "rebound", lambda s: [_head(err, _where(err), s), *_rebound(err, rebinding, s)],
                      line=_line(err))
    names = Names(frame)
    where = _where(err)
    failing = getattr(err, "origin", None)
    if isinstance(err, Interrupted):
        return Report("error", "interrupted", lambda s: [_head(err, where, s), *_interrupted(err, failing)],
                      line=_line(err))
    cause = reason_of(err)  # what the engine's error behind it (kept as its context) is about
    tell = TELLERS.get(type(cause)) if cause is not None else None
    if cause is not None and tell is not None:
        body = tell(cause, failing, names, interp)
        return Report("error", cause.reason, lambda s: [_head(err, where, s), *body(s)], line=_line(err))
    return Report("error", "other", lambda s: [_head(err, where, s), *_general(err, failing)], line=_line(err))


def _line(err: GradcalcError) -> int | None:
    loc = getattr(err, "loc", None)
    return loc.line if loc is not None and loc.line > 0 else None


def _where(err: GradcalcError) -> str:
    loc = getattr(err, "loc", None)
    if loc is None or loc.line <= 0:
        return ""
    if getattr(err, "interactive", False):
        return ""
    name = getattr(err, "filename", None) or "<stdin>"
    return f"{name}:{loc.line}:{loc.column}"


def _head(err: GradcalcError, where: str, s: Style) -> str:
    text = f"error at {where}: " if where else "error: "
    return s.warn(text) + err.message


def _source_line(err: GradcalcError) -> str | None:
    loc, source = getattr(err, "loc", None), getattr(err, "source", None)
    if loc is None or source is None or loc.line <= 0:
        return None
    lines = source.splitlines()
    return lines[loc.line - 1].strip() if loc.line <= len(lines) else None


def _general(err: GradcalcError, failing: object) -> list[str]:
    lines = []
    text = _source_line(err)
    if failing is not None:
        lines.append(f"Where: {statement(failing)}.")
    elif text:
        lines.append(f"Where: `{text}`.")
    if isinstance(err, SyntaxProblem):
        lines.append("Why: the program could not be read, so nothing of it ran.")
        lines.append("Fix: write it as the message says; `:help` lists the statements and functions.")
    else:
        lines.append("Why: the statement stopped there, and changed nothing (a failed statement leaves the "
                     "workspace, the .grads and the saved values as they were).")
        lines.append("Fix: as the message says; `:help TOPIC` tells more about a statement or function.")
    return lines


def _rebound(err: GradcalcError, r: Rebinding, s: Style) -> list[str]:
    failing = getattr(err, "origin", None)
    where = statement(failing) if failing is not None else "the statement"
    return [f"What happened: {where} read {s.name(r.name + '.grad')}, which is None, and computed with it.",
            *told(r, s)]


def _interrupted(err: GradcalcError, failing: object) -> list[str]:
    """Ctrl-C (LANGUAGE.md section 6): which statement it stopped, and that it changed nothing."""
    where = statement(failing) if failing is not None else "the program"
    if getattr(err, "finished", False) and failing is None:
        return ["Why: Ctrl-C came as the program was ending: every statement of it ran to its end.",
                "Fix: nothing is wrong; the workspace is as the program left it."]
    if getattr(err, "finished", False):
        return [
            f"Where: {where}, which was running when Ctrl-C came.",
            "Why: it had already begun changing the workspace (an in-place change, a backward's gradients), "
            "so it ran to its end; the program stopped after it, with nothing left to run.",
            "Fix: nothing is wrong; the workspace is as that statement left it.",
        ]
    if getattr(err, "before", False):
        why = (f"Why: Ctrl-C stopped the program before {where} began (the statement running then had begun "
               "changing the workspace, so it was let finish, or it had just ended): it did not run.")
    else:
        why = (f"Why: Ctrl-C stopped {where} while it ran; it changed nothing (it bound no name and left every "
               ".grad, version and saved value as it was).")
    return [
        f"Where: {where}.",
        why,
        "The statements before it ran, earlier iterations of a loop included, and their effects stay.",
        "Fix: nothing is wrong; run it again to finish it.",
    ]


def _made(node: Node) -> str:
    o = origin(node)
    return f"`{node.name()}`" + (f" made {at(o)}" if o is not None else "")


def _node_names(node: Node, names: Names) -> list[str]:
    return names.of_output(node)


# -- the tellers: (the reason, the failing statement's origin, names, interp) -> (style -> lines) ------------
def _freed(info: Freed, failing: object, names: Names, interp: object) -> Build:
    node = info.node
    who = _node_names(node, names)
    kept_names = saved_names(node, tensors_only=True)
    culprit: BackwardCall | None = None
    for call in reversed(call_history().calls):
        if owned(call.origin, interp) and not call.retain_graph and reaches(call.roots, node):
            culprit = call
            break

    def build(s: Style) -> list[str]:
        of = f", the node of {s.name(quoted(who))}" if who else ""
        origin_n = origin(node)
        made = f" made {at(origin_n)}" if origin_n is not None else ""
        lines = [f"What happened: {statement(failing)} needed the values saved by {s.node(f'`{node.name()}`')}"
                 f"{of}{made}; they had been freed."]
        if culprit is not None:
            what = "backward" if culprit.accumulate else "grad()"
            lines.append(f"Who freed them: the {what} {at(culprit.origin)} ran through that node without "
                         "retain_graph, which frees saved values as it goes.")
        else:
            lines.append("Who freed them: an earlier backward or grad() through that node, without retain_graph.")
        kept = f" (for {node.name()}: {', '.join(kept_names)})" if kept_names else ""
        lines.append(f"Why: a node keeps what its derivative needs{kept}; backward and grad() free it as they "
                     "pass, to save memory, unless told to keep it.")
        first = f" {at(culprit.origin)}" if culprit is not None else ""
        fix_stmt = ""
        if culprit is not None:
            fix_stmt = _with_retain_graph(getattr(culprit.origin, "text", ""))
        if culprit is not None and not culprit.accumulate:
            lines.append(f"Fix: pass retain_graph=true to the first grad(){first}{fix_stmt}; or compute the output "
                         "again before the second backward (a new graph).")
        else:
            lines.append(f"Fix: add retain_graph to the first backward{first}{fix_stmt}; or compute the output "
                         "again before the second backward (a new graph).")
        return lines

    return build


def _with_retain_graph(text: str) -> str:
    """`: `backward b retain_graph``: the statement that freed the values, written to keep them (or "")."""
    if re.fullmatch(r"(explain\s+)?backward\s.*", text) and "retain_graph" not in text:
        return f": `{text} retain_graph`"
    if "retain_graph=false" in text:
        return f": `{text.replace('retain_graph=false', 'retain_graph=true')}`"
    m = re.fullmatch(r"(.*\.backward\()\)", text)
    if m:
        return f": `{m[1]}retain_graph=true)`"
    start = text.find("grad(")
    if start >= 0 and "retain_graph" not in text:  # grad(...): the keyword added before its closing bracket
        depth = 0
        for i in range(start + 4, len(text)):
            depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[i], 0)
            if depth == 0:
                return f": `{text[:i]}, retain_graph=true{text[i:]}`"
    return ""


def _version(info: VersionMismatch, failing: object, names: Names, interp: object) -> Build:
    t, node = info.tensor, info.node
    saved_v, now = info.saved_version, info.version
    who = names.sharing(t)
    if not who:
        who = [n for n, _ in names.counters.get(id(version_key(t)), [])]
    named = saved_names(node, tensors_only=True)  # PyTorch's (a custom Function's saved tensors have none)
    saved_name = next((v.name for v in saved(node) if v.index == info.index and v.name in named), None)
    runs = [c for c in in_place_changes(t) if c.last > saved_v]
    node_origin = origin(node)
    shape = tuple(t.shape)

    def build(s: Style) -> list[str]:
        what = quoted(who) if who else f"a tensor of shape {shape}"
        as_name = f" (as `{saved_name}`)" if saved_name else ""
        made = f" made {at(node_origin)}" if node_origin is not None else ""
        first = f"{s.name(what)} was saved{as_name} by {s.node(f'`{node.name()}`')}{made} at version {saved_v}"
        if runs:
            steps = []
            for c in runs:
                a, b = c.first, c.last
                to = f"version {b}" if a == b or b == saved_v + 1 else f"versions {max(a, saved_v + 1)} to {b}"
                steps.append(f"{statement(c.origin)} changed it to {to}")
            first += "; " + "; then ".join(steps)
        else:
            first += f"; it was changed in place since (now version {now})"
        text = getattr(failing, "text", "")
        line = places.place(failing)
        needed = f"backward at {line}" if text.startswith("backward") and line is not None else statement(failing)
        first += f"; {needed} needed version {saved_v}."
        lines = [f"What happened: {first}"]
        lines.append(f"Why: {node.name()} needs the value it saved to compute its gradients; an in-place change "
                     f"(+=, x[i] = v, x.add_(...)) overwrote it, and the version counter (x.version) shows it.")
        fix = _new_tensor_fix(runs[0].origin if runs else None, who[0] if who else None)
        lines.append(f"Fix: {fix}, or do the change after the backward.")
        return lines

    return build


def _new_tensor_fix(change: object, name: str | None) -> str:
    """How to write an in-place change as one that makes a new tensor."""
    text = getattr(change, "text", "") or ""
    m = re.fullmatch(r"(\w+)\s*([-+*/])=\s*(.+)", text)
    if m:
        return f"`{m[1]} = {m[1]} {m[2]} {m[3]}` (a new tensor) instead of `{text}`"
    m = re.fullmatch(r"(\w+)\.(\w+)_\((.*)\)", text)
    if m:
        return f"`{m[1]} = {m[1]}.{m[2]}({m[3]})` (a new tensor) instead of `{text}`"
    target = name or "x"
    return f"change a copy, `{target} = {target}.clone()` before the change (the graph keeps the old tensor)"


def _leaf_inplace(info: LeafInPlace, failing: object, names: Names, interp: object) -> Build:
    t, view = info.tensor, info.view
    who = names.of(t)
    name = who[0] if who else "the leaf"
    text = getattr(failing, "text", "")

    def build(s: Style) -> list[str]:
        through = " through a view of it" if view is not None else ""
        lines = [f"What happened: {statement(failing)} changes {s.name(quoted(who) or 'a leaf')} in place{through}, "
                 f"but {name} is a leaf that requires grad."]
        lines.append(f"Why: backward computes gradients with respect to {name} as it is; changing it in place "
                     "while grad mode records would lose how its gradient flows.")
        lines.append("Fix: do it where nothing is recorded, as an optimizer step does:")
        lines.append("    with no_grad:")
        lines.append(f"        {text or name + ' -= ...'}")
        m = re.fullmatch(r"(\w+)\s*([-+*/])=\s*(.+)", text)
        if m:
            lines.append(f"or make a new tensor: `{m[1]} = {m[1]} {m[2]} {m[3]}` ({m[1]} is then computed, not a "
                         "leaf).")
        return lines

    return build


def _nonscalar(info: NonScalar, failing: object, names: Names, interp: object) -> Build:
    t, what = info.tensor, info.what or "backward"
    who = names.of(t)
    name = who[0] if who else "the output"
    shape = tuple(t.shape)

    def build(s: Style) -> list[str]:
        lines = [f"What happened: {statement(failing)} starts {what} from {s.name(quoted(who) or name)}, which has "
                 f"shape {shape} ({t.numel()} elements), without a gradient for it."]
        lines.append("Why: backward starts from one number, whose gradient is 1; for an output with several "
                     "elements you say how much each element counts, with a gradient of the output's shape.")
        if what == "grad":
            lines.append(f"Fix: `grad({name}, x, grad_outputs=ones_like({name}))`, or differentiate "
                         f"`{name}.sum()`.")
        else:
            lines.append(f"Fix: `backward {name} gradient ones_like({name})` (the same as `backward {name}.sum()`), "
                         "or reduce the output to one number first (a loss).")
        return lines

    return build


def _no_grad_output(info: NoGradOutput, failing: object, names: Names, interp: object) -> Build:
    t, what = info.tensor, info.what or "backward"
    who = names.of(t)

    def build(s: Style) -> list[str]:
        return [
            f"What happened: {statement(failing)} starts {what} from {s.name(quoted(who) or 'a tensor')}, which does "
            "not require grad.",
            "Why: nothing it was computed from requires grad (or it was computed inside `with no_grad:`), so "
            "no graph was recorded to go back through.",
            "Fix: make the inputs leaves that require grad (`x = 3 requires_grad`) and compute it outside no_grad.",
        ]

    return build


def _unused(info: Unused, failing: object, names: Names, interp: object) -> Build:
    k, t = info.index, info.tensor
    who = names.of(t)

    def build(s: Style) -> list[str]:
        what = s.name(quoted(who)) if who else f"input {k}"
        return [
            f"What happened: grad() {at(failing)} was asked for the gradient with respect to {what} "
            f"(input {k}), but the outputs were not computed from it.",
            "Why: an input the outputs do not depend on has no gradient at all (not even zero), and grad() "
            "treats asking for one as a mistake.",
            "Fix: pass allow_unused=true (its gradient is then None), or leave it out of the inputs.",
        ]

    return build


def _input_no_grad(info: InputNoGrad, failing: object, names: Names, interp: object) -> Build:
    k, t = info.index, info.tensor
    who = names.of(t)

    def build(s: Style) -> list[str]:
        what = s.name(quoted(who)) if who else f"input {k}"
        name = who[0] if who else "it"
        return [
            f"What happened: grad() {at(failing)} was asked for the gradient with respect to {what} "
            f"(input {k}), which does not require grad.",
            "Why: autograd computes gradients only for tensors that require grad; for the others (constants to "
            "it) there is nothing to return.",
            f"Fix: make {name} a leaf that requires grad (`{name} = ... requires_grad`) before computing the "
            "outputs from it, or leave it out of the inputs.",
        ]

    return build


def _inference_saved(info: InferenceSaved, failing: object, names: Names, interp: object) -> Build:
    t = info.tensor
    who = names.of(t)
    name = who[0] if who else "it"

    def build(s: Style) -> list[str]:
        return [
            f"What happened: {statement(failing)} computes with {s.name(quoted(who) or 'an inference tensor')}, an "
            "inference tensor (made inside `with inference_mode:`), in an operation that must save it for backward.",
            "Why: inference tensors carry no version counter, so autograd can't check that they stay unchanged "
            "until backward; they can't be saved.",
            f"Fix: make a normal tensor from it outside inference mode: `{name} = {name}.clone()`; or make it under "
            "`with no_grad:` instead of inference_mode.",
        ]

    return build


def _inference_inplace(info: InferenceInPlace, failing: object, names: Names, interp: object) -> Build:
    t = info.tensor
    who = names.of(t)
    name = who[0] if who else "it"

    def build(s: Style) -> list[str]:
        return [
            f"What happened: {statement(failing)} changes {s.name(quoted(who) or 'an inference tensor')} in place; "
            "it is an inference tensor (made inside `with inference_mode:`).",
            "Why: outside inference mode, an inference tensor can't be changed in place (autograd could not "
            "see the change).",
            f"Fix: change a normal copy: `{name} = {name}.clone()` first; or make the change inside "
            "`with inference_mode:`.",
        ]

    return build


def _nan(info: NanGradient, failing: object, names: Names, interp: object) -> Build:
    node, i, grads = info.node, info.index, info.grads or ()
    edges = inputs(node)
    edge = edges[i] if i < len(edges) else None
    to = names.of_output(edge.node, edge.output_nr) if edge is not None else []
    g = grads[i] if i < len(grads) else None

    def build(s: Style) -> list[str]:
        dest = f" (the gradient for {s.name(quoted(to))})" if to else ""
        lines = [f"What happened: under detect_anomaly, backward {at(failing)} found NaN in gradient {i} "
                 f"of {s.node(_made(node))}{dest}."]
        if g is not None:
            lines.append(f"That gradient: {s.value(g, 2)}")
        lines.append(f"Why: {node.name()}'s derivative is infinite or undefined at the values it was computed at "
                     "(as sqrt's or log's at 0), and multiplying it by the gradient that arrived (0 * inf) or "
                     "adding opposite infinities gives NaN.")
        lines.append("Fix: keep the inputs where the derivative is finite (clamp them, or add a small epsilon: "
                     "sqrt(x + 1e-12)), or mask the elements out before the operation.")
        return lines

    return build


TELLERS: dict[type[ErrorReason], Callable[..., Build]] = {
    Freed: _freed,
    VersionMismatch: _version,
    LeafInPlace: _leaf_inplace,
    NonScalar: _nonscalar,
    NoGradOutput: _no_grad_output,
    Unused: _unused,
    InputNoGrad: _input_no_grad,
    InferenceSaved: _inference_saved,
    InferenceInPlace: _inference_inplace,
    NanGradient: _nan,
}
