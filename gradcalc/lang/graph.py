"""The `graph` statement: a tensor's backward graph as a tree of grad_fn nodes, or as Graphviz DOT.

Walks `grad_fn.next_functions` down to the leaves' `AccumulateGrad` nodes with an explicit stack (a
chain of a million operations prints without recursion). A node reached a second time (a shared
subgraph) is printed once and then referred to, so the output grows with the graph, not with its paths.
"""

from __future__ import annotations

import weakref
from typing import Any

MAX_LINES = 2000


def _leaf_of(node: Any) -> Any:
    v = getattr(node, "variable", None)
    return v() if isinstance(v, weakref.ref) else v


def _shape(t: Any) -> str:
    s = tuple(t.shape)
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def _label(node: Any, names: dict[int, str]) -> str:
    """A node's line: its name, the workspace variable it produces, or the leaf it accumulates into."""
    name = node.name()
    leaf = _leaf_of(node)
    if leaf is not None:
        who = names.get(id(leaf))
        return f"{name}  ({who + ': ' if who else ''}leaf, shape {_shape(leaf)})"
    who = names.get(id(node))
    return f"{name}  ({who})" if who else name


def _children(node: Any) -> list[Any]:
    return [n for n, _ in getattr(node, "next_functions", ()) if n is not None]


def node_names(workspace: dict[str, Any], tensor_type: type) -> dict[int, str]:
    """Workspace names of tensors (for leaves) and of their grad_fn nodes (for computed tensors)."""
    names: dict[int, str] = {}
    for name, value in workspace.items():
        if isinstance(value, tensor_type) and name not in ("_", "ans"):
            names.setdefault(id(value), name)
            if value.grad_fn is not None:
                names.setdefault(id(value.grad_fn), name)
    return names


def tree(t: Any, names: dict[int, str]) -> str:
    """The graph below tensor `t` as an indented tree."""
    root = t.grad_fn
    if root is None:
        if t.requires_grad:
            return (
                f"AccumulateGrad  ({names.get(id(t), 'a') + ': ' if id(t) in names else ''}leaf, shape "
                f"{_shape(t)}): a leaf; backward accumulates into its .grad"
            )
        return "no graph: this tensor does not require grad (nothing was recorded)"
    lines: list[str] = []
    shown: set[int] = set()
    stack: list[tuple[Any, str, str]] = [(root, "", "")]  # node, this line's prefix, its children's prefix
    while stack:
        node, prefix, child_prefix = stack.pop()
        if len(lines) >= MAX_LINES:
            lines.append(f"... (the graph is larger; {MAX_LINES} lines shown)")
            break
        kids = _children(node)
        if id(node) in shown and kids:
            lines.append(f"{prefix}{node.name()}  (shared: shown above)")
            continue
        shown.add(id(node))
        lines.append(prefix + _label(node, names))
        for i in range(len(kids) - 1, -1, -1):
            last = i == len(kids) - 1
            stack.append(
                (
                    kids[i],
                    child_prefix + ("└── " if last else "├── "),
                    child_prefix + ("    " if last else "│   "),
                )
            )
    return "\n".join(lines)


def dot(t: Any, names: dict[int, str], title: str = "graph") -> str:
    """The graph below `t` in Graphviz DOT: an edge from each node to where its gradient goes next."""
    out = [f"digraph {_quote(title)} {{", '  node [shape=box, fontname="monospace"];']
    root = t.grad_fn
    if root is None:
        out.append(f"  n0 [label={_quote(_label_for_tensor(t, names))}, style=filled, fillcolor=lightblue];")
        out.append("}")
        return "\n".join(out) + "\n"
    ids: dict[int, int] = {}
    stack = [root]
    ids[id(root)] = 0
    edges: list[tuple[int, int]] = []
    nodes: list[tuple[int, Any]] = [(0, root)]
    while stack:
        node = stack.pop()
        for kid in _children(node):
            if id(kid) not in ids:
                ids[id(kid)] = len(ids)
                nodes.append((ids[id(kid)], kid))
                stack.append(kid)
            edges.append((ids[id(node)], ids[id(kid)]))
    for k, node in nodes:
        style = ", style=filled, fillcolor=lightblue" if _leaf_of(node) is not None else ""
        out.append(f"  n{k} [label={_quote(_label(node, names))}{style}];")
    for a, b in edges:
        out.append(f"  n{a} -> n{b};")
    out.append("}")
    return "\n".join(out) + "\n"


def _label_for_tensor(t: Any, names: dict[int, str]) -> str:
    return f"{names.get(id(t), 'tensor')}: shape {_shape(t)}"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
