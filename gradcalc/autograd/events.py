"""What a backward observer receives (`autograd.graph.observe_backward`): one record per step, in the order
the engine takes the steps, which is PyTorch's order.

A node's step is a `NodeRun`; a leaf's gradient added into its `.grad` is a `GradAccumulated` (followed by
the `NodeRun` of the leaf's AccumulateGrad node); a gradient kept by `retain_grad` is a `GradRetained`
(before the `NodeRun` of the node that made the tensor). Gradients are tensors (never bare arrays).
A `.grad`'s "before" and "after" are snapshots (a later backward may add into a `.grad` in place); the
gradients of a `NodeRun` are the engine's own tensors, right when the record is made: a listener that keeps
them past its call should keep copies (one may become a leaf's `.grad`, which later backward calls update
in place).
A front end reads them typed through `inspection.observe` (`NodeRan`, `GradWritten`, `HookFired`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .node import Node
    from .tensor import Tensor


# NamedTuples, not dataclasses: loading dataclasses would cost every cold start about 2 ms
class HookCall(NamedTuple):
    """One hook that ran: `kind` is "tensor" (Tensor.register_hook), "prehook" (Node.register_prehook),
    "hook" (Node.register_hook) or "post_accumulate_grad"; `replaced` says whether it returned a
    replacement for the gradient(s) it was given."""

    kind: str
    hook: Callable[..., Any]
    replaced: bool


class NodeRun(NamedTuple):
    """A node of the graph taking its turn.

    - `grad_outputs`: per output of the node, the gradient it received (after the hooks), or None;
    - `grad_inputs`: per next edge, the gradient it passes on (None: nothing goes that way);
    - `to`: per next edge, the node that gradient goes to (None: the input needs no gradient);
    - `hooks`: the hooks that ran at this node, in order (tensor hooks, prehooks, then hooks);
    - `freed`: the names of the saved values released after the node ran (empty with retain_graph);
    - `executed`: False for a node `grad()` only read a gradient at (it computes nothing further).
    """

    node: Node
    grad_outputs: tuple[Tensor | None, ...]
    grad_inputs: tuple[Tensor | None, ...]
    to: tuple[Node | None, ...]
    hooks: tuple[HookCall, ...]
    freed: tuple[str, ...]
    executed: bool = True


class GradAccumulated(NamedTuple):
    """A gradient added into a leaf's `.grad`: `before` (a snapshot, or None) and `after` the addition."""

    tensor: Tensor
    node: Node
    grad: Tensor
    before: Tensor | None
    after: Tensor | None


class GradRetained(NamedTuple):
    """A non-leaf's gradient kept in its `.grad` (retain_grad): `before` and `after`."""

    tensor: Tensor
    node: Node
    grad: Tensor
    before: Tensor | None
    after: Tensor | None


Event = NodeRun | GradAccumulated | GradRetained
