"""Helpers for the language tests: run source text in a fresh Session and capture what it prints."""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass
from typing import Any

import gradcalc
from gradcalc.autograd import grad_mode
from gradcalc.autograd.node import FREED
from gradcalc.lang import Session

DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): (?P<msg>.*)$"
)


@dataclass
class Result:
    ok: bool
    out: str
    err: str

    @property
    def errors(self) -> list[str]:
        return [
            m.group("msg") for m in map(DIAGNOSTIC.match, self.err.splitlines()) if m and m["kind"] == "error"
        ]

    @property
    def warnings(self) -> list[str]:
        return [
            m.group("msg")
            for m in map(DIAGNOSTIC.match, self.err.splitlines())
            if m and m["kind"] == "warning"
        ]


def run(source: str, *, session: Session | None = None, filename: str = "<stdin>", **options) -> Result:
    """Run `source`; stdout and stderr captured separately."""
    out, err = io.StringIO(), io.StringIO()
    s = session or Session(out=out, err=err, format=options.pop("format", "torch"))
    if session is not None:
        s._out, s._err = out, err
    ok = s.run(source, filename, **options)
    return Result(ok, out.getvalue(), err.getvalue())


def out(source: str, **options) -> str:
    """What `source` prints on standard output (asserting that no error happened)."""
    r = run(source, **options)
    assert r.ok, r.err
    return r.out


def markers(source: str, filename: str = "t.gc") -> str:
    """Run with values and diagnostics in one stream, diagnostics reduced to `@LINE kind` markers (the form
    of the seed scripts' expected files)."""
    stream = io.StringIO()
    s = Session(out=stream, err=stream)
    s.run(source, filename, keep_going=True)
    lines = stream.getvalue().splitlines()
    result = []
    skipping = False
    for line in lines:
        m = DIAGNOSTIC.match(line)
        if m:
            result.append(f"@{m['line']} {m['kind']}")
            skipping = True
            continue
        if skipping:  # the source line and the caret under it
            if line.strip() == "^":
                skipping = False
            continue
        result.append(line)
    return "\n".join(result) + ("\n" if result else "")


# -- what a statement could change (a failed one must change none of it) -----------------------------------


def _nodes(t: Any, seen: dict[int, Any]) -> None:
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(c for c in node._next if c is not None)


def snapshot(s: Session) -> dict[str, Any]:
    """Workspace names -> identity and contents; .grad, version, requires_grad, retains_grad; whether each
    graph node's saved values are still there."""
    shot: dict[str, Any] = {}
    nodes: dict[int, Any] = {}
    for name, v in s.workspace.items():
        if isinstance(v, gradcalc.Tensor):
            g = v._grad  # the field itself: the .grad property warns for non-leaves
            shot[name] = (
                id(v), v._data.dtype.str, v._data.shape, v._data.tobytes(), v.requires_grad, id(v.grad_fn),
                None if v.is_inference() else v.version, v.retains_grad,
                None if g is None else (id(g), g._data.tobytes(), None if g.is_inference() else g.version),
            )
            _nodes(v, nodes)
        else:
            shot[name] = id(v)
    shot[" saved"] = {k: n._saved is FREED for k, n in nodes.items()}
    return shot


DEFAULT_MODES = (True, False, False, False, None)


def modes() -> tuple:
    """(grad mode, inference mode, anomaly mode, the engine's releasing and wanted) of this thread."""
    state = grad_mode.state
    return (gradcalc.is_grad_enabled(), gradcalc.is_inference_mode_enabled(), gradcalc.is_anomaly_enabled(),
            state.releasing, state.wanted)


def altered_is_stale() -> bool:
    """Whether grad_mode.ALTERED says this thread's recording state is the default when it is not, or the
    reverse (a write that did not go through grad_mode's setters)."""
    state = grad_mode.state
    default = state.grad_enabled and not state.releasing and state.wanted is None
    return default is (threading.get_ident() in grad_mode.ALTERED)


def modes_changed() -> str | None:
    """None when the modes are the defaults; else what they are (and they are put back, so that one failure
    does not cascade into every later check)."""
    now = modes()
    stale = altered_is_stale()
    if now != DEFAULT_MODES or stale:
        state = grad_mode.state
        state.grad_enabled, state.inference, state.inference_grad, state.anomaly = True, False, False, False
        state.releasing, state.wanted = False, None
        grad_mode.refresh()
        if stale:
            return f"grad_mode.ALTERED does not follow this thread's recording state (modes {now})"
        return f"modes after the statement: grad, inference, anomaly, releasing, wanted = {now}"
    return None
