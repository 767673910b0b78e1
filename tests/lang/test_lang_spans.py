"""Every record knows its span, and `source_text(span)` quotes what the user wrote: expressions (brackets,
calls, literals, operators, across lines), statements and compound statements' headers, on both of the
parser's paths; a statement from another unit (a `:load`ed file, another cell) names it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc.lang.statements as S
from gradcalc.lang.session import Session
from gradcalc.lang.syntax import ast as A
from gradcalc.lang.syntax import parser as P
from gradcalc.lang.syntax.ast import span_of, walk_statements
from gradcalc.lang.syntax.source import Span, source_text

EXPRESSIONS = [
    "x", "3", "1e-3", "0.5", '"a b"', "'it''s'" if False else "'its'", "true", "False", "None", "none",
    "x + 1", "-x", "- 2", "not x", "x ** -2", "(x + 1) * 2", "((x))", "(a, b)", "()", "(a,)", "[1, 2]",
    "[[1, 2], [3, 4]]", "[a, b]", "[]", "[-1, 2.5]", "f(x)", "f()", "f(x, k=2)", "x.grad", "x.sum()",
    "(a * b).sum()", "x[0]", "x[1:, ::2]", "x[mask]", "a < b", "a and b or c", "y.grad_fn.saved",
    "grad(y, x, create_graph=true)[0]", "sin(x) * exp(-x / 5)", "x @ w.T", "f(a)(b)", "-(-x)",
]


def parse(text: str) -> A.Program:
    return P.parse(text)


def assigned(text: str) -> A.Node:
    """The value of `y = TEXT`."""
    (st_,) = parse(f"y = {text}").body
    assert isinstance(st_, S.Assign)
    return st_.value


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_an_expression_spans_what_was_written(text: str) -> None:
    source = f"y = {text}\n"
    assert source_text(source, span_of(assigned(text))) == text


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_every_record_inside_spans_text_of_its_own(text: str) -> None:
    """Each record inside an expression spans a piece of it that parses to the same record (numbers
    aside: `-1` is one literal)."""
    source = f"y = {text}\n"
    stack = [assigned(text)]
    while stack:
        node = stack.pop()
        piece = source_text(source, span_of(node))
        assert piece and piece in text, (node, piece)
        if ":" not in piece:  # (slices parse only inside brackets)
            again = assigned(piece)
            assert type(again) is type(node), (piece, again, node)
        stack.extend(A.children(node))


_ATOMS = st.sampled_from(["x", "1", "2.5", "f(x)", "x.sum()", "x[0]", "[1, 2]", '"s"', "true"])


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 3 or draw(st.booleans()):
        return draw(_ATOMS)
    kind = draw(st.sampled_from(["binary", "unary", "parens", "call", "attribute", "index", "list"]))
    a = draw(expressions(depth + 1))
    if kind == "binary":
        op = draw(st.sampled_from(["+", "-", "*", "/", "**", "@", "<", "==", "and", "or"]))
        b = draw(expressions(depth + 1))
        if op in ("<", "=="):
            return f"({a}) {op} ({b})"
        # comparisons do not chain: an operand holding one is bracketed, or `(x) < (x) + (x) < (x)` would be
        # written, which the language rejects
        a, b = (f"({e})" if " < " in e or " == " in e else e for e in (a, b))
        return f"{a} {op} {b}"
    if kind == "unary":
        return f"{draw(st.sampled_from(['-', 'not ']))}({a})"
    if kind == "parens":
        return f"({a})"
    if kind == "call":
        return f"f({a}, k={draw(expressions(depth + 1))})"
    if kind == "attribute":
        return f"({a}).grad"
    if kind == "index":
        return f"({a})[{draw(expressions(depth + 1))}]"
    return f"[{a}, {draw(expressions(depth + 1))}]"


@settings(max_examples=150, deadline=None)
@given(expressions())
def test_generated_expressions_span_what_was_written(text: str) -> None:
    source = f"y = {text}\n"
    assert source_text(source, span_of(assigned(text))) == text


def test_a_span_over_lines_reads_as_one_line_without_comments() -> None:
    source = "y = f(a,   # the first\n      b)  # done\n"
    (st_,) = parse(source).body
    assert st_.span == Span((1, 1), (2, 9))
    assert source_text(source, st_.span) == "y = f(a, b)"
    assert source_text(source, span_of(st_.value)) == "f(a, b)"


STATEMENTS = [
    ("x = 3 requires_grad", "x = 3 requires_grad"),
    ("backward y retain_graph gradient [1, 2]", "backward y retain_graph gradient [1, 2]"),
    ("backward y inputs [a, b]", "backward y inputs [a, b]"),
    ("a, b = t; del a", "a, b = t"),
    ("print", "print"),
    ('print "loss", loss  # shown', 'print "loss", loss'),
    ("graph y to 'y.dot'", "graph y to 'y.dot'"),
    ("plot sin(x), cos(x) for x in [0, 2*pi] order 2 to 'p.svg'  # a plot", "plot sin(x), cos(x) for x in [0, 2*pi] "
     "order 2 to 'p.svg'"),
    ("explain", "explain"),
    ("explain backward (a * b).sum() create_graph", "explain backward (a * b).sum() create_graph"),
    ("import torch.nn.functional as F", "import torch.nn.functional as F"),
    ("from torch import (nn, optim)", "from torch import (nn, optim)"),
    (":load my file.gc", ":load my file.gc"),
    ("(a * b).sum()", "(a * b).sum()"),
    ("x += 1", "x += 1"),
    ("zero_grad x, w", "zero_grad x, w"),
]


@pytest.mark.parametrize(("source", "text"), STATEMENTS)
def test_a_statement_spans_what_was_written(source: str, text: str) -> None:
    st_ = parse(source).body[0]
    assert st_.span is not None and st_.head == st_.span
    assert source_text(source, st_.span) == text


COMPOUND = [
    ("if x > 0:\n    y = 1\nelse:\n    y = 2\n", "if x > 0", 4),
    ("for i, j in pairs:  # both\n    pass\n", "for i, j in pairs", 2),
    ("while (n <\n       3):\n    n += 1\n", "while (n < 3)", 3),
    ("with torch.no_grad():\n    w -= 1\n", "with torch.no_grad()", 2),
    ("def f(a, b=2):\n    return a * b\n", "def f(a, b=2)", 2),
    ("function r(x):\n    forward:\n        return x\n    backward(g):\n        return g\n", "function r(x)", 5),
]


@pytest.mark.parametrize(("source", "head", "last_line"), COMPOUND)
def test_a_compound_statement_spans_its_blocks_and_its_head_stops_before_the_colon(
        source: str, head: str, last_line: int) -> None:
    st_ = parse(source).body[0]
    assert source_text(source, st_.head) == head
    assert st_.span.start == st_.head.start and st_.span.end.line == last_line


def test_both_parser_paths_give_the_same_spans() -> None:
    """Lark's path (which describes errors) lowers with the same spans as the fast path."""
    text = "".join(s + "\n" for s, _ in STATEMENTS) + "".join(s for s, _, _ in COMPOUND)
    fast = P.fast_parser()
    assert fast is not None
    program, _ = fast.parse(text)
    parser, postlex = P.get_parser()
    postlex.begin(text)
    slow = parser.parse(text)
    assert program == slow
    ours = [(type(s).__name__, s.span, s.head) for s in walk_statements(program.body)]
    theirs = [(type(s).__name__, s.span, s.head) for s in walk_statements(slow.body)]
    assert ours == theirs and all(span is not None for _, span, _ in ours)


def run(source: str, tmp_path: Path, filename: str = "main.gc") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    s = Session(out=out, err=err)
    s.run(source, str(tmp_path / filename))
    return out.getvalue(), err.getvalue()


def test_a_loaded_files_statements_name_it_in_graphs_and_explanations(tmp_path: Path) -> None:
    lib = tmp_path / "lib.gc"
    lib.write_text("a = 3 requires_grad\nb = a * a\nc = b.sum()\n")
    out, err = run(f":load {lib}\nbackward c retain_graph\nexplain backward c\ngraph c\n", tmp_path)
    assert not err
    assert f"[line 3 of {lib}: c = b.sum()]" in out  # graph
    assert f"(line 2 of {lib}: b = a * a)" in out  # the narration's steps
    assert "line 3:" not in out and "line 2:" not in out


def test_a_statement_of_the_unit_running_now_is_named_by_its_line_alone(tmp_path: Path) -> None:
    out, err = run("a = 3 requires_grad\nb = a * a\ngraph b\n", tmp_path)
    assert "[line 2: b = a * a]" in out, out


def test_an_error_or_warning_in_a_loaded_file_is_located_in_it(tmp_path: Path) -> None:
    lib = tmp_path / "lib.gc"
    lib.write_text("a = 3 requires_grad\nb = a * a\nb.grad\ny = a.foo\n")
    _, err = run(f":load {lib}\n", tmp_path)
    assert f"{lib}:3:1: warning: reading .grad of a non-leaf tensor" in err
    assert f"{lib}:4:7: error: a tensor has no attribute 'foo'" in err


def test_cells_name_each_other() -> None:
    """A notebook's cells are units of their own (the kernel names them In[N]): a node made in another cell
    is named with it."""
    out = io.StringIO()
    s = Session(out=out, err=io.StringIO())
    s.run("a = 3 requires_grad\nb = a * a\n", "In[1]")
    s.run("graph b\n", "In[2]")
    assert "[line 2 of In[1]: b = a * a]" in out.getvalue()
