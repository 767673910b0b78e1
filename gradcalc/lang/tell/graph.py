"""The `graph` statement: a tensor's backward graph as a tree of grad_fn nodes, as Graphviz DOT, or as JSON.

Each node is labelled with what the workspace knows of it: every workspace name bound to its output (a
leaf's AccumulateGrad with every name bound to the leaf), the output's shape and, for at most `SMALL`
elements, its value; a leaf (and a non-leaf that retains its gradient) its `.grad`. Then its formula (the
derivative as derivatives.yaml writes it, from the operation's spec, when it has one) and what it saved for
backward, by PyTorch's names (`self`, `other`, `result`, `exponent`...): a workspace tensor by its name, else
its value or shape; `freed` once a backward without retain_graph released it; both versions when the tensor
was changed in place after it was saved. Everything is read through `gradcalc.autograd.inspection`.

`Graph` is a `Told` (explain/told.py): the tree as styled text (coloured in the REPL and the kernel), one
JSON object with `--format json`, and `dot()` for the files. The tree walks the node's inputs down to the
leaves with an explicit stack (a chain of a million operations prints without recursion). A node reached a
second time (a shared subgraph) is printed once and then referred to, so the output grows with the graph,
not with its paths; the tree stops after MAX_LINES lines.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from typing import TYPE_CHECKING

from gradcalc import files
from gradcalc.autograd.inspection import (
    accumulates,
    formula,
    formulas,
    grad_of,
    inputs,
    leaf,
    num_outputs,
    origin,
    saved,
    state,
)
from gradcalc.autograd.printing import tensor_repr
from gradcalc.files import FileProblem

from ..errors import GradcalcError
from .explain.style import Style
from .explain.told import Told
from .explain.where import made, number, short
from .names import Names
from .render import tensor_json, torch_repr

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd.graph import Node
    from gradcalc.autograd.inspection import SavedValue

MAX_LINES = 2000
SMALL = 6  # a tensor of at most this many elements shows its value
PLAIN = Style()  # DOT labels and JSON: no colour

# one node's label: its name, what is known of its output(s), its formula (per input), what it saved
Label = tuple[str, str, tuple[str, ...], str]
# the text of equal 0-d values, by (dtype, bytes), made once
Reprs = dict[tuple[object, bytes], str]


def _value(t: Tensor, reprs: Reprs) -> str:
    """`compact(t)`, remembered in `reprs` for equal 0-d values: a chain of a million `y * 2` formats `2` once."""
    if t.ndim:
        return compact(t)
    key = (t.dtype, t.detach().numpy().tobytes())
    text = reprs.get(key)
    if text is None:
        text = reprs[key] = compact(t)
    return text


def _shape(t: Tensor) -> str:
    s = tuple(t.shape)
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def compact(t: Tensor, full: bool = False) -> str:
    """A tensor's repr on one line (`tensor([[1., 2.], [3., 4.]])`); `full` keeps requires_grad/grad_fn."""
    grad_fn = t.grad_fn.name() if full and t.grad_fn is not None else None
    text = tensor_repr(
        t.detach().numpy(), requires_grad=full and t.requires_grad, grad_fn=grad_fn, dtype_prefix=""
    )
    return re.sub(r"\n\s*", " ", text)


def _grad_text(t: Tensor) -> str:
    g = grad_of(t)
    if g is None:
        return "grad None"
    if g.numel() <= SMALL:
        return "grad " + compact(g, full=True)
    return f"grad (a tensor of {g.numel()} elements)"


def _about(t: Tensor, names: list[str], is_leaf: bool, style: Style, output: int | None = None) -> str:
    """`y: shape (2,), value tensor([1., 2.])`: what is known of one tensor."""
    parts = []
    if output is not None:
        parts.append(f"output {output}")
    if is_leaf:
        parts.append("leaf")
    parts.append(f"shape {_shape(t)}")
    if t.numel() <= SMALL:
        parts.append("value " + compact(t))
    if is_leaf or state(t).retains_grad:
        parts.append(_grad_text(t))
    text = ", ".join(parts)
    return f"{style.name(', '.join(names))}: {text}" if names else text


def _saved_text(node: Node, names: Names, reprs: Reprs, style: Style) -> str:
    """`self = x, exponent = 2.0`: what the node saved for backward."""
    items = []
    outputs = names.outputs(node)
    for v in saved(node):
        if not v.is_tensor:
            items.append(f"{v.name} = {torch_repr(v.value)}")
        elif v.freed:
            items.append(f"{v.name} {style.warn('(freed)')}")
        elif v.packed:
            items.append(f"{v.name} (packed by saved_tensors_hooks)")
        elif v.value is None:
            items.append(f"{v.name} = None")
        else:
            t = v.value
            who = _saved_name(v, outputs, names)
            shown = style.name(who) if who else (_value(t, reprs) if t.numel() <= SMALL else
                                                 f"a tensor of shape {_shape(t)}")
            if v.saved_version is not None and v.version != v.saved_version:
                shown += style.warn(f" (version {v.saved_version} when saved, now {v.version})")
            items.append(f"{v.name} = {shown}")
    return ", ".join(items)


def _saved_name(v: SavedValue, outputs: dict[int, list[str]], names: Names) -> str | None:
    """The workspace name of a saved tensor: PyTorch's `result` is the node's own output, named as it is
    (gradcalc may keep a copy of it)."""
    return names.name_of(v.value) if v.name != "result" or not outputs.get(0) else outputs[0][0]


def made_at(node: Node) -> str | None:
    """Where the front end made the node (`line 3: y = a * b`, or a REPL input's text), when known; a leaf's
    AccumulateGrad is made by its leaf's first use, not by a statement of its own."""
    o = origin(node)
    return None if o is None else " ".join(made(o).split())


def label(node: Node, names: Names, reprs: Reprs, style: Style = PLAIN) -> Label:
    """One node's label: its name, what is known of its output(s), its formula (per input), what it saved."""
    shown = tuple(style.formula(text if name is None else f"{name}: {text}") for name, text in formulas(node))
    if accumulates(node):  # made on first use by whichever statement: no origin of its own
        t = leaf(node)
        about = _about(t, names.of(t), True, style) if t is not None else ""
        return style.node(node.name()), about, shown, _saved_text(node, names, reprs, style)
    outputs = names.outputs(node)
    several = num_outputs(node) > 1
    about = "; ".join(
        _about(names.made[(id(node), nr)], who, False, style, nr if several else None)
        for nr, who in sorted(outputs.items())
    )
    return style.node(node.name()), about, shown, _saved_text(node, names, reprs, style)


def _line(parts: Label, where: str | None = None, style: Style = PLAIN) -> str:
    """One line of the tree: the name first, then names and values, the formula, what it saved, and last
    where it was made (the part a reader's eye looks for first is the part a line starts with)."""
    name, about, rule, kept = parts
    return (name + (f"  ({about})" if about else "") + (f"  formula: {'; '.join(rule)}" if rule else "")
            + (f"  saved: {kept}" if kept else "") + (style.where(f"  [{where}]") if where else ""))


def _children(node: Node) -> list[Node]:
    return [e.node for e in inputs(node) if e is not None]


class Graph(Told):
    """The graph below tensor `t`, labelled with the workspace's `names`: told as a tree (`lines`), as one
    JSON object (`objects`), or as Graphviz DOT (`dot`)."""

    def __init__(self, t: Tensor, names: Names) -> None:
        names.add(t, None)
        self.t, self.names = t, names
        self.reprs: Reprs = {}

    # -- the tree ------------------------------------------------------------------------------------------
    def lines(self, style: Style) -> list[str]:
        """The graph as an indented tree. A node says where it was made when that differs from its parent's
        statement (so one statement's nodes are named once, at the top of their group): the first time with
        the statement's text, later by its line alone (`[line 24]`)."""
        t, names = self.t, self.names
        root = t.grad_fn
        if root is None:
            if t.requires_grad:
                about = _about(t, names.of(t), True, style)
                return [f"{style.node('AccumulateGrad')}  ({about}): a leaf; backward accumulates into its .grad"]
            return ["no graph: this tensor does not require grad (nothing was recorded)"]
        lines: list[str] = []
        shown: set[int] = set()
        told: dict[str, str] = {}  # a statement named in full -> its short name
        # node, this line's prefix, its children's prefix, where its parent was made
        stack: list[tuple[Node, str, str, str | None]] = [(root, "", "", None)]
        while stack:
            node, prefix, child_prefix, parent_made = stack.pop()
            if len(lines) >= MAX_LINES:
                lines.append(f"... (the graph is larger; {MAX_LINES} lines shown)")
                break
            kids = _children(node)
            if id(node) in shown and kids:
                lines.append(f"{prefix}{style.node(node.name())}  (shared: shown above)")
                continue
            shown.add(id(node))
            where_made = made_at(node)
            where = None
            if where_made is not None and where_made != parent_made:
                where = told.get(where_made)
                if where is None:
                    where = where_made
                    brief = " ".join(short(origin(node)).split())
                    # a short name shared by two statements (two files' line 3) would be ambiguous: keep it long
                    told[where_made] = brief if brief not in told.values() else where_made
            lines.append(prefix + _line(label(node, names, self.reprs, style), where, style))
            for i in range(len(kids) - 1, -1, -1):
                last = i == len(kids) - 1
                stack.append(
                    (
                        kids[i],
                        child_prefix + ("└── " if last else "├── "),
                        child_prefix + ("    " if last else "│   "),
                        where_made or parent_made,
                    )
                )
        return lines

    # -- every node once -----------------------------------------------------------------------------------
    def _nodes(self) -> tuple[list[Node], dict[int, int], list[tuple[int, int]]]:
        """The nodes below the root in the order first reached (depth first), their numbers, the edges."""
        root = self.t.grad_fn
        ids: dict[int, int] = {id(root): 0}
        stack = [root]
        edges: list[tuple[int, int]] = []
        nodes: list[Node] = [root]
        while stack:
            node = stack.pop()
            for kid in _children(node):
                if id(kid) not in ids:
                    ids[id(kid)] = len(ids)
                    nodes.append(kid)
                    stack.append(kid)
                edges.append((ids[id(node)], ids[id(kid)]))
        return nodes, ids, edges

    # -- JSON ----------------------------------------------------------------------------------------------
    def objects(self) -> list[dict[str, object]]:
        """One object: `{"event": "graph", "nodes": [...]}`, the root first (none for a tensor that does not
        require grad; a leaf's AccumulateGrad alone for a leaf)."""
        t, names = self.t, self.names
        if t.grad_fn is None:
            nodes = [] if not t.requires_grad else [{
                "id": 0, "node": "AccumulateGrad", "line": None, "formula": None,
                "outputs": [self._tensor_json(t, 0, names.of(t), True)], "saved": [], "next": [],
            }]
            return [{"event": "graph", "nodes": nodes}]
        found, ids, _ = self._nodes()
        return [{"event": "graph", "nodes": [self._node_json(k, node, ids) for k, node in enumerate(found)]}]

    def _tensor_json(self, t: Tensor, nr: int, who: list[str], is_leaf: bool) -> dict[str, object]:
        out: dict[str, object] = {"output": nr, "names": who, "shape": list(t.shape),
                               "value": tensor_json(t) if t.numel() <= SMALL else None}
        if is_leaf or state(t).retains_grad:
            g = grad_of(t)
            out["grad"] = None if g is None else {"shape": list(g.shape),
                                                  "value": tensor_json(g) if g.numel() <= SMALL else None}
        return out

    def _node_json(self, k: int, node: Node, ids: dict[int, int]) -> dict[str, object]:
        names = self.names
        if accumulates(node):
            t = leaf(node)
            outputs = [] if t is None else [self._tensor_json(t, 0, names.of(t), True)]
        else:
            outputs = [self._tensor_json(names.made[(id(node), nr)], nr, who, False)
                       for nr, who in sorted(names.outputs(node).items())]
        kept = []
        known = names.outputs(node)
        for v in saved(node):
            item: dict[str, object] = {"name": v.name, "freed": v.freed, "packed": v.packed}
            if not v.is_tensor:
                item["value"] = _plain_json(v.value)
            elif v.value is not None and not v.freed:
                item["names"] = [n] if (n := _saved_name(v, known, names)) else []
                item["shape"] = list(v.value.shape)
                item["value"] = tensor_json(v.value) if v.value.numel() <= SMALL else None
                item["saved_version"], item["version"] = v.saved_version, v.version
            kept.append(item)
        return {
            "id": k, "node": node.name(), "line": number(origin(node)), "formula": formula(node),
            "outputs": outputs, "saved": kept,
            "next": [None if e is None else [ids[id(e.node)], e.output_nr] for e in inputs(node)],
        }

    # -- DOT -----------------------------------------------------------------------------------------------
    def dot(self, title: str = "graph") -> str:
        """The graph in Graphviz DOT, with the tree's labels: an edge from each node to where its gradient
        goes next. The nodes one statement made are drawn in a box labelled with that statement (a Graphviz
        cluster), so a large graph names each line once rather than in every node."""
        t, names = self.t, self.names
        out = [
            f"digraph {_quote(title)} {{",
            '  graph [fontname="monospace", fontsize=11, nodesep=0.15, ranksep=0.3];',
            '  node [shape=box, fontname="monospace", fontsize=10];',
            "  edge [arrowsize=0.6];",
        ]
        if t.grad_fn is None:
            about = _about(t, names.of(t), t.requires_grad, PLAIN)
            title_line = "AccumulateGrad" if t.requires_grad else "no graph (does not require grad)"
            out.append(f"  n0 [label={_label_text((title_line, about, (), ''))}, style=filled, fillcolor=lightblue];")
            out.append("}")
            return "\n".join(out) + "\n"
        found, _, edges = self._nodes()
        groups: dict[str | None, list[str]] = {}  # where made -> its nodes' lines, in the order first reached
        for k, node in enumerate(found):
            fill = ", style=filled, fillcolor=lightblue" if accumulates(node) else ""
            groups.setdefault(made_at(node), []).append(
                f"n{k} [label={_label_text(label(node, names, self.reprs))}{fill}];")
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


def tree(t: Tensor, names: Names) -> str:
    """The graph below tensor `t` as an indented tree, without colour."""
    return "\n".join(Graph(t, names).lines(PLAIN))


def dot(t: Tensor, names: Names, title: str = "graph") -> str:
    """The graph below `t` in Graphviz DOT (see `Graph.dot`)."""
    return Graph(t, names).dot(title)


def _plain_json(value: object) -> object:
    """A saved value that is not a tensor, as JSON: numbers, booleans and None as they are, a tuple of them as
    a list, anything else as the text the tree shows."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float)) for v in value):
        return list(value)
    return torch_repr(value)


CLUSTER_WIDTH = 60  # a statement's text is wrapped to this many characters in its cluster's label


def _cluster_label(where: str) -> str:
    """A statement's text as a cluster's label, wrapped at spaces, each line left-aligned."""
    lines = textwrap.wrap(where, CLUSTER_WIDTH, subsequent_indent="    ", break_long_words=True) or [where]
    return '"' + "".join(_escape(line) + "\\l" for line in lines) + '"'


LABEL_WIDTH = 48  # a DOT label's line longer than this is broken after a comma (outside brackets)


def _label_text(parts: Label) -> str:
    """A DOT label: the node's name, what is known of its output, its formula (an input a line) and what it
    saved, each broken into lines of about LABEL_WIDTH characters (a narrow box keeps a large graph narrow)."""
    name, about, rule, kept = parts
    lines = [name] + (_wrap(about) if about else []) + _formula_lines(rule) + (_wrap(f"saved: {kept}") if kept else [])
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
    return _fill(pieces, "  ")


def _formula_lines(parts: tuple[str, ...]) -> list[str]:
    """A node's formula in a DOT label: an input a line (`formula: self: grad * other`, `  other: ...`), one
    too long broken at a space between its terms or its outermost call's arguments (indented further)."""
    lines: list[str] = []
    for j, text in enumerate(parts):
        pieces = _terms(text)
        if len(pieces) > 1 and pieces[0].endswith(":"):  # an input's name stays with its formula's first term
            pieces[:2] = [f"{pieces[0]} {pieces[1]}"]
        pieces[0] = ("formula: " if j == 0 else "  ") + pieces[0]
        lines.extend(_fill(pieces, "      "))
    return lines


def _terms(text: str) -> list[str]:
    """`text` cut at its spaces outside brackets or inside one pair only (`a * f(b, c)`: `a`, `*`, `f(b,`,
    `c)`): where a formula can be broken."""
    pieces: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == " " and depth <= 1:
            if i > start:
                pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def _fill(pieces: list[str], indent: str) -> list[str]:
    """`pieces` joined by spaces into lines of at most LABEL_WIDTH characters where they fit (a piece longer
    than that has a line of its own); the lines after the first indented by `indent`."""
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= LABEL_WIDTH:
            lines[-1] += " " + piece
        else:
            lines.append(piece if not lines else indent + piece)
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
    try:
        suffix = files.check_suffix(WHAT, path, FORMATS, DESCRIBED)
        files.check_place(WHAT, path)  # a typo in the directory fails before Graphviz runs
        data = text.encode("utf-8") if suffix == ".dot" else _draw(text, suffix[1:], path)
        files.write(WHAT, path, data)
    except files.FileProblem as exc:
        raise GradcalcError(exc.message) from None


def _draw(text: str, fmt: str, path: str) -> bytes:
    """The graph drawn by `dot -T<fmt>`; the file's problem when Graphviz is not installed or fails."""
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
