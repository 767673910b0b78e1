"""The workspace names of tensors and nodes, found by identity in the running frame and its parents."""

from __future__ import annotations

from typing import Any

HIDDEN = ("_", "ans")  # the last printed value: a name of convenience, not the user's


class Names:
    """All the names bound to each tensor visible from a frame (innermost scope first, in binding order)."""

    def __init__(self, frame: Any) -> None:
        from ..runtime import ENGINE
        from ..values import parameter_paths

        Tensor = ENGINE.Tensor
        self.tensors: dict[int, list[str]] = {}  # id(tensor) -> names
        self.outputs: dict[tuple[int, int], list[str]] = {}  # (id(grad_fn), output_nr) -> names
        self.counters: dict[int, list[tuple[str, Any]]] = {}  # id(version counter) -> (name, tensor)
        self._keep: list[Any] = []  # what the ids refer to stays alive while this object does
        seen: set[str] = set()
        modules: list[tuple[str, Any]] = []
        f = frame
        while f is not None:
            for name, value in f.vars.items():
                if name in seen or name in HIDDEN:
                    continue
                seen.add(name)
                if type(value) is Tensor:
                    self._bind(name, value)
                else:  # a module's parameters by their path (`net[0].weight`)
                    modules.extend(parameter_paths(name, value))
            f = f.parent
        for path, p in modules:
            self._bind(path, p)

    def _bind(self, name: str, value: Any) -> None:
        self._keep.append(value)
        self.tensors.setdefault(id(value), []).append(name)
        if value.grad_fn is not None:
            self.outputs.setdefault((id(value.grad_fn), value._output_nr), []).append(name)
        if value._vc is not None:
            self.counters.setdefault(id(value._vc), []).append((name, value))

    def of(self, t: Any) -> list[str]:
        """The names bound to tensor `t`."""
        return self.tensors.get(id(t), [])

    def of_output(self, node: Any, nr: int = 0) -> list[str]:
        """The names of the tensors that are output `nr` of `node`: for a leaf's AccumulateGrad, the leaf's."""
        leaf = getattr(node, "variable", None)
        if leaf is not None and node.name() == "AccumulateGrad":
            return self.of(leaf)
        return self.outputs.get((id(node), nr), [])

    def sharing(self, t: Any) -> list[str]:
        """The names of `t`, or else of the tensors sharing its version counter (views, detached aliases)."""
        direct = self.of(t)
        if direct:
            return direct
        counter = getattr(t, "_vc", None)
        return [name for name, _ in self.counters.get(id(counter), [])] if counter is not None else []


def quoted(names: list[str]) -> str:
    """`a`, or `a` (also `b`): how a tensor with these names is called in a sentence."""
    if not names:
        return ""
    head = f"`{names[0]}`"
    if len(names) > 1:
        head += " (also " + ", ".join(f"`{n}`" for n in names[1:]) + ")"
    return head
