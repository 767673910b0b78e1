"""What a node saved for backward, in the language: `y.grad_fn.saved` and `y.grad_fn._saved_self`.

`saved.self` is PyTorch's `grad_fn._saved_self` (also written that way), `saved.exponent` its
`_saved_exponent`, and so on, by the names PyTorch gives the same node. Reading a tensor that a backward
without retain_graph freed is PyTorch's error, in the language's words; printing `saved` shows every name
and what it holds (`freed` for a freed tensor) without failing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gradcalc.autograd.inspection import is_freed, saved, saved_names

from ..errors import GradcalcError, Loc
from ..values.failures import error_from
from .render import torch_repr

if TYPE_CHECKING:
    from gradcalc.autograd.graph import Node


def freed_message(node: Node) -> str:
    """Reading a saved value after a backward freed it."""
    return (
        f"the values {node.name()} saved were freed by a backward (or grad) that ran without retain_graph; "
        "run that backward with retain_graph (backward y retain_graph) to read them afterwards"
    )


def _names(node: Node) -> list[str]:
    return list(saved_names(node))


def read(node: Node, name: str, loc: Loc) -> object:
    """`node._saved_<name>`: the value, or an error naming what the node saved."""
    names = _names(node)
    if name not in names:
        kept = f"it saved: {', '.join(names)}" if names else "it saved nothing it names"
        raise GradcalcError(f"{node.name()} saved no value named '{name}'; {kept}", loc)
    if is_freed(node) and name in saved_names(node, tensors_only=True):
        raise GradcalcError(freed_message(node), loc)

    try:
        return getattr(node, f"_saved_{name}")
    except Exception as exc:  # changed in place since it was saved: the engine's message says which
        raise error_from(exc, loc) from None


class SavedValues:
    """`y.grad_fn.saved`: the node's saved values by PyTorch's names (`saved.self`, `saved.other`...)."""

    __slots__ = ("node",)
    described_as = "the saved values of a node"

    def __init__(self, node: Node) -> None:
        self.node = node

    def language_attribute(self, name: str, loc: Loc) -> object:
        return read(self.node, name, loc)

    def language_method(self, name: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc) -> object:
        raise GradcalcError(
            f"the saved values have no methods; read one as saved.NAME ({', '.join(_names(self.node))})", loc
        )

    def __repr__(self) -> str:
        node = self.node
        items = saved(node)
        if not items:
            return f"{node.name()} saved nothing"
        lines = [f"saved by {node.name()}:"]
        for d in items:
            if d.freed:
                shown = "freed (by a backward without retain_graph)"
            elif d.packed:
                shown = "packed by saved_tensors_hooks"
            else:
                shown = torch_repr(d.value).replace("\n", "\n" + " " * (len(d.name) + 5))
                if d.saved_version is not None and d.version != d.saved_version:
                    shown += f"  (changed in place since: version {d.saved_version} when saved, now {d.version})"
            lines.append(f"  {d.name} = {shown}")
        return "\n".join(lines)
