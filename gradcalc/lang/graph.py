"""The `graph` statement: a tensor's backward graph as a tree of grad_fn nodes, or as Graphviz DOT.

Each node is labelled with what the workspace knows of it: every workspace name bound to its output (a
leaf's AccumulateGrad with every name bound to the leaf), the output's shape and, for at most `SMALL`
elements, its value; a leaf (and a non-leaf that retains its gradient) its `.grad`. Then what the node
saved for backward, by PyTorch's names (`self`, `other`, `result`, `exponent`...): a workspace tensor by
its name, else its value or shape; `freed` once a backward without retain_graph released it; both
versions when the tensor was changed in place after it was saved.

Walks `next_functions` down to the leaves with an explicit stack (a chain of a million operations prints
without recursion). A node reached a second time (a shared subgraph) is printed once and then referred
to, so the output grows with the graph, not with its paths; the tree stops after MAX_LINES lines.
"""

from __future__ import annotations

import re
from typing import Any

from gradcalc.autograd.printing import tensor_repr
from gradcalc.autograd.saved import FREED_VALUE, details

from .errors import GradcalcError
from .names import Names, leaf_of
from .render import torch_repr

MAX_LINES = 2000
SMALL = 6  # a tensor of at most this many elements shows its value


def _value(t: Any, reprs: dict[tuple[Any, bytes], str]) -> str:
    """`compact(t)`, remembered in `reprs` for equal 0-d values: a chain of a million `y * 2` formats `2` once."""
    if t.ndim:
        return compact(t)
    key = (t.dtype, t.detach().numpy().tobytes())
    text = reprs.get(key)
    if text is None:
        text = reprs[key] = compact(t)
    return text


def _shape(t: Any) -> str:
    s = tuple(t.shape)
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def compact(t: Any, full: bool = False) -> str:
    """A tensor's repr on one line (`tensor([[1., 2.], [3., 4.]])`); `full` keeps requires_grad/grad_fn."""
    grad_fn = t.grad_fn.name() if full and t.grad_fn is not None else None
    text = tensor_repr(
        t.detach().numpy(), requires_grad=full and t.requires_grad, grad_fn=grad_fn, dtype_prefix=""
    )
    return re.sub(r"\n\s*", " ", text)


def _grad_text(t: Any) -> str:
    g = t.grad
    if g is None:
        return "grad None"
    if g.numel() <= SMALL:
        return "grad " + compact(g, full=True)
    return f"grad (a tensor of {g.numel()} elements)"


def _about(t: Any, names: list[str], leaf: bool, output: int | None = None) -> str:
    """`y: shape (2,), value tensor([1., 2.])`: what is known of one tensor."""
    parts = []
    if output is not None:
        parts.append(f"output {output}")
    if leaf:
        parts.append("leaf")
    parts.append(f"shape {_shape(t)}")
    if t.numel() <= SMALL:
        parts.append("value " + compact(t))
    if leaf or t.retains_grad:
        parts.append(_grad_text(t))
    text = ", ".join(parts)
    return f"{', '.join(names)}: {text}" if names else text


def _saved_text(node: Any, names: Names, reprs: dict) -> str:
    """`self = x, exponent = 2.0`: what the node saved for backward."""
    items = []
    for d in details(node):
        if not d.is_tensor:
            items.append(f"{d.name} = {torch_repr(d.value)}")
        elif d.value is FREED_VALUE:
            items.append(f"{d.name} (freed)")
        elif d.packed:
            items.append(f"{d.name} (packed by saved_tensors_hooks)")
        elif d.value is None:
            items.append(f"{d.name} = None")
        else:
            t = d.value
            outputs = names.outputs(node)
            # PyTorch's `result` is the node's own output: named as it is (gradcalc may keep a copy of it)
            who = names.name_of(t) if d.name != "result" or not outputs.get(0) else outputs[0][0]
            shown = who or (_value(t, reprs) if t.numel() <= SMALL else f"a tensor of shape {_shape(t)}")
            if d.saved_version is not None and d.version != d.saved_version:
                shown += f" (version {d.saved_version} when saved, now {d.version})"
            items.append(f"{d.name} = {shown}")
    return ", ".join(items)


def made_at(node: Any) -> str | None:
    """Where the front end made the node (`line 3: y = a * b`, or a REPL input's text), when known."""
    origin = getattr(node, "origin", None)
    if origin is None or leaf_of(node) is not None:  # a leaf's node is made by its first use: not its statement
        return None
    return " ".join(str(origin).split())


def label(node: Any, names: Names, reprs: dict) -> tuple[str, str, str]:
    """(the node's name, what is known of its output(s), what it saved): one node's label."""
    leaf = leaf_of(node)
    if leaf is not None:  # made on first use by whichever statement: no origin of its own
        return node.name(), _about(leaf, names.of(leaf), True), _saved_text(node, names, reprs)
    outputs = names.outputs(node)
    several = node.num_outputs > 1
    about = "; ".join(
        _about(names.made[(id(node), nr)], who, False, nr if several else None)
        for nr, who in sorted(outputs.items())
    )
    return node.name(), about, _saved_text(node, names, reprs)


def _line(parts: tuple[str, str, str], where: str | None = None) -> str:
    """One line of the tree: the name first, then names and values, what it saved, and last where it was made
    (the part a reader's eye looks for first is the part a line starts with)."""
    name, about, saved = parts
    return (name + (f"  ({about})" if about else "") + (f"  saved: {saved}" if saved else "")
            + (f"  [{where}]" if where else ""))


def _short(where: str) -> str:
    """`line 24` for `line 24: loss = ...`: how the tree names a statement it has named in full before."""
    head, colon, _ = where.partition(": ")
    return head if colon and head.startswith("line ") else where


def _children(node: Any) -> list[Any]:
    return [n for n, _ in getattr(node, "next_functions", ()) if n is not None]


def tree(t: Any, names: Names) -> str:
    """The graph below tensor `t` as an indented tree. A node says where it was made when that differs from
    its parent's statement (so one statement's nodes are named once, at the top of their group): the first
    time with the statement's text, later by its line alone (`[line 24]`)."""
    names.add(t, None)
    reprs: dict[tuple[Any, bytes], str] = {}
    root = t.grad_fn
    if root is None:
        if t.requires_grad:
            about = _about(t, names.of(t), True)
            return f"AccumulateGrad  ({about}): a leaf; backward accumulates into its .grad"
        return "no graph: this tensor does not require grad (nothing was recorded)"
    lines: list[str] = []
    shown: set[int] = set()
    told: dict[str, str] = {}  # a statement named in full -> its short name
    # node, this line's prefix, its children's prefix, where its parent was made
    stack: list[tuple[Any, str, str, str | None]] = [(root, "", "", None)]
    while stack:
        node, prefix, child_prefix, parent_made = stack.pop()
        if len(lines) >= MAX_LINES:
            lines.append(f"... (the graph is larger; {MAX_LINES} lines shown)")
            break
        kids = _children(node)
        if id(node) in shown and kids:
            lines.append(f"{prefix}{node.name()}  (shared: shown above)")
            continue
        shown.add(id(node))
        made = made_at(node)
        where = None
        if made is not None and made != parent_made:
            where = told.get(made)
            if where is None:
                where = made
                short = _short(made)
                # a short name shared by two statements (two files' line 3) would be ambiguous: keep it long
                told[made] = short if short not in told.values() else made
        lines.append(prefix + _line(label(node, names, reprs), where))
        for i in range(len(kids) - 1, -1, -1):
            last = i == len(kids) - 1
            stack.append(
                (
                    kids[i],
                    child_prefix + ("└── " if last else "├── "),
                    child_prefix + ("    " if last else "│   "),
                    made or parent_made,
                )
            )
    return "\n".join(lines)


CLUSTER_WIDTH = 60  # a statement's text is wrapped to this many characters in its cluster's label


def dot(t: Any, names: Names, title: str = "graph") -> str:
    """The graph below `t` in Graphviz DOT, with the tree's labels: an edge from each node to where its
    gradient goes next. The nodes one statement made are drawn in a box labelled with that statement
    (a Graphviz cluster), so a large graph names each line once rather than in every node."""
    names.add(t, None)
    reprs: dict[tuple[Any, bytes], str] = {}
    out = [
        f"digraph {_quote(title)} {{",
        '  graph [fontname="monospace", fontsize=11, nodesep=0.15, ranksep=0.3];',
        '  node [shape=box, fontname="monospace", fontsize=10];',
        "  edge [arrowsize=0.6];",
    ]
    root = t.grad_fn
    if root is None:
        about = _about(t, names.of(t), t.requires_grad)
        title_line = "AccumulateGrad" if t.requires_grad else "no graph (does not require grad)"
        out.append(f"  n0 [label={_label_text((title_line, about, ''))}, style=filled, fillcolor=lightblue];")
        out.append("}")
        return "\n".join(out) + "\n"
    ids: dict[int, int] = {id(root): 0}
    stack = [root]
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
    groups: dict[str | None, list[str]] = {}  # where made -> its nodes' lines, in the order first reached
    for k, node in nodes:
        style = ", style=filled, fillcolor=lightblue" if leaf_of(node) is not None else ""
        groups.setdefault(made_at(node), []).append(f"n{k} [label={_label_text(label(node, names, reprs))}{style}];")
    for c, (where, lines) in enumerate(groups.items()):
        if where is None:  # leaves, and nodes made outside the language: no statement to group them by
            out.extend(f"  {line}" for line in lines)
            continue
        out.append(f"  subgraph cluster_{c} {{")
        out.append(f"    label={_cluster_label(where)}; labeljust=l; style=rounded; color=gray60;")
        out.extend(f"    {line}" for line in lines)
        out.append("  }")
    for a, b in edges:
        out.append(f"  n{a} -> n{b};")
    out.append("}")
    return "\n".join(out) + "\n"


def _cluster_label(where: str) -> str:
    """A statement's text as a cluster's label, wrapped at spaces, each line left-aligned."""
    import textwrap

    lines = textwrap.wrap(where, CLUSTER_WIDTH, subsequent_indent="    ", break_long_words=True) or [where]
    return '"' + "".join(_escape(line) + "\\l" for line in lines) + '"'


LABEL_WIDTH = 48  # a DOT label's line longer than this is broken after a comma (outside brackets)


def _label_text(parts: tuple[str, str, str]) -> str:
    """A DOT label: the node's name, what is known of its output, and what it saved, each broken into lines
    of about LABEL_WIDTH characters (a narrow box keeps a large graph narrow)."""
    name, about, saved = parts
    lines = [name] + (_wrap(about) if about else []) + (_wrap(f"saved: {saved}") if saved else [])
    return '"' + "\\n".join(_escape(line) for line in lines) + '"'


def _wrap(text: str) -> list[str]:
    """`text` in lines of about LABEL_WIDTH characters, broken only after a top-level `, ` or `; `."""
    pieces: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in ",;" and depth == 0 and text[i + 1:i + 2] == " ":
            pieces.append(text[start:i + 1])
            start = i + 2
    pieces.append(text[start:])
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= LABEL_WIDTH:
            lines[-1] += " " + piece
        else:
            lines.append(piece if not lines else "  " + piece)
    return lines


def _escape(text: str) -> str:
    # a backslash first: then `\N`, `\G`, `\l`... in a value can't become Graphviz's escapes
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _quote(text: str) -> str:
    return '"' + _escape(text) + '"'


# -- files -------------------------------------------------------------------------------------------------
WHAT = "the graph"  # as file errors name it: "can't write the graph to 'y.txt': ..."
FORMATS = (".dot", ".svg", ".png")
DESCRIBED = ".dot (Graphviz's text), .svg or .png (drawn by Graphviz)"
INSTALL = (
    "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; Windows: "
    "winget install graphviz; or see https://graphviz.org/download/), or write DOT instead: "
)


def save(text: str, path: str) -> None:
    """Write DOT `text` to `path`, as DOT (`.dot`) or drawn by Graphviz's `dot` program (`.svg`, `.png`).
    Nothing is written when anything fails; the errors are every writer's (gradcalc/files.py)."""
    from gradcalc import files

    try:
        suffix = files.check_suffix(WHAT, path, FORMATS, DESCRIBED)
        files.check_place(WHAT, path)  # a typo in the directory fails before Graphviz runs
        data = text.encode("utf-8") if suffix == ".dot" else _draw(text, suffix[1:], path)
        files.write(WHAT, path, data)
    except files.FileProblem as exc:
        raise GradcalcError(exc.message) from None


def _draw(text: str, fmt: str, path: str) -> bytes:
    """The graph drawn by `dot -T<fmt>`; the file's problem when Graphviz is not installed or fails."""
    import os
    import shutil
    import subprocess

    from gradcalc.files import FileProblem

    program = shutil.which("dot")
    if program is None:
        as_dot = os.path.splitext(path)[0] + ".dot"
        raise FileProblem(WHAT, path, f"Graphviz's `dot` program was not found; {INSTALL}graph ... to \"{as_dot}\"")
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=text.encode("utf-8"), capture_output=True)
    except OSError as exc:
        raise FileProblem(WHAT, path, f"Graphviz's `dot` could not run ({exc.strerror or exc})") from None
    if done.returncode != 0 or not done.stdout:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = f": {reason[0]}" if reason else ""
        raise FileProblem(WHAT, path, f"Graphviz's `dot` failed{detail}")
    return done.stdout
