"""The workspace's names of tensors, found by identity: how `graph` labels a node and `explain` names a tensor.

A tensor is known by every name bound to it in the scopes searched (innermost first, in binding order), then
by the parameter paths of the modules bound there (`net[0].weight`); `_` and `ans` (the last printed value)
are never a tensor's name. A computed tensor is also known by the node that made it and its output number,
so a node names its outputs; a tensor sharing a version counter with a named one (a view, a detached alias)
can be named through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gradcalc.autograd.inspection import accumulates, leaf, version_key

from ..values import parameter_paths
from ..values.engine import ENGINE

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd.graph import Node

    from ..core.frames import Frame

HIDDEN = ("_", "ans")  # the last printed value: a name of convenience, not the user's


class Names:
    """All the names bound to each tensor of `scope`: a Frame (its variables, then its parents', a name shadowed
    by an inner scope not counted) or a single dict of variables. Names in `hidden` are skipped too (`graph`:
    the variables a finished `for` loop left behind)."""

    def __init__(self, scope: Frame | dict[str, object], hidden: Iterable[str] = ()) -> None:
        ENGINE.load()
        tensor_type = ENGINE.Tensor
        self.tensors: dict[int, list[str]] = {}  # id(tensor) -> names
        self.nodes: dict[int, dict[int, list[str]]] = {}  # id(grad_fn) -> output number -> names
        self.made: dict[tuple[int, int], Tensor] = {}  # (id(grad_fn), output number) -> a tensor it made
        self.counters: dict[int, list[tuple[str, Tensor]]] = {}  # id(version counter) -> (name, tensor)
        self._keep: dict[int, Tensor] = {}  # what the ids refer to stays alive while this object does
        seen = {*HIDDEN, *hidden}
        modules: list[tuple[str, Tensor]] = []
        scopes = [scope] if isinstance(scope, dict) else _frames(scope)
        for variables in scopes:
            for name, value in variables.items():
                if name in seen:
                    continue
                seen.add(name)
                if type(value) is tensor_type:
                    self.add(value, name)
                else:
                    modules.extend(parameter_paths(name, value))
        for path, p in modules:  # a module's parameters by their path, after the plain names
            self.add(p, path)

    def add(self, t: Tensor, name: str | None) -> None:
        """Bind `name` to tensor `t` (None: only make `t` known as its node's output)."""
        if id(t) not in self._keep:
            self._keep[id(t)] = t
        names = self.tensors.setdefault(id(t), [])
        node = t.grad_fn
        outputs = None
        if node is not None:
            nr = t.output_nr
            outputs = self.nodes.setdefault(id(node), {}).setdefault(nr, [])
            self.made.setdefault((id(node), nr), t)
        if name is None or name in names:
            return
        names.append(name)
        if outputs is not None and name not in outputs:
            outputs.append(name)
        counter = version_key(t)
        if counter is not None:
            self.counters.setdefault(id(counter), []).append((name, t))

    def of(self, t: Tensor) -> list[str]:
        """The names bound to tensor `t`."""
        return self.tensors.get(id(t), [])

    def of_output(self, node: Node, nr: int = 0) -> list[str]:
        """The names of the tensors that are output `nr` of `node`: for a leaf's AccumulateGrad, the leaf's."""
        if accumulates(node):
            t = leaf(node)
            return self.of(t) if t is not None else []
        return self.nodes.get(id(node), {}).get(nr, [])

    def outputs(self, node: Node) -> dict[int, list[str]]:
        """Each known output of `node` (by number) with its names (possibly none)."""
        return self.nodes.get(id(node), {})

    def name_of(self, t: Tensor) -> str | None:
        """One name for `t`: its own, or else that of the tensor that is the same output of the same node."""
        names = self.of(t)
        if names:
            return names[0]
        if t.grad_fn is not None:
            names = self.of_output(t.grad_fn, t.output_nr)
            if names:
                return names[0]
        return None

    def sharing(self, t: Tensor) -> list[str]:
        """The names of `t`, or else of the tensors sharing its version counter (views, detached aliases)."""
        direct = self.of(t)
        if direct:
            return direct
        counter = version_key(t)
        return [name for name, _ in self.counters.get(id(counter), [])] if counter is not None else []


def _frames(frame: Frame | None) -> list[dict[str, object]]:
    out = []
    while frame is not None:
        out.append(frame.vars)
        frame = frame.parent
    return out


def quoted(names: list[str]) -> str:
    """`a`, or `a` (also `b`): how a tensor with these names is called in a sentence."""
    if not names:
        return ""
    head = f"`{names[0]}`"
    if len(names) > 1:
        head += " (also " + ", ".join(f"`{n}`" for n in names[1:]) + ")"
    return head
