"""Errors and warnings: `FILE:LINE:COL: error: MESSAGE`, the source line and a caret; parse errors say what
was expected in words; runtime errors are located at what failed; nothing ever shows a traceback."""

from __future__ import annotations

import re

import pytest
from gclang_testing import run

from gradcalc.lang import Session


def syntax(source: str) -> tuple[str, str]:
    """(location, message) of the syntax error in `source`; checks that nothing ran."""
    r = run("print 'ran'\n" + source, filename="s.gc")
    assert not r.ok and r.out == "", r.out
    first = r.err.splitlines()[0]
    m = re.match(r"s\.gc:(\d+):(\d+): error: (.*)$", first)
    assert m, r.err
    return f"{int(m[1]) - 1}:{m[2]}", m[3]


@pytest.mark.parametrize(
    "source, where, message",
    [
        ("x = 1 +", "1:8", "expected an expression after '+'"),
        ("y = 2 * (3 +", "1:13", "unclosed '(' opened at 2:9"),
        ("f(1, 2", "1:7", "unclosed '(' opened at 2:2"),
        ("y = f(x\nz = 3", "2:1", "unclosed '(' opened at 2:6"),
        ("x = [1, 2,\n 3", "2:3", "unclosed '[' opened at 2:5"),
        (")", "1:1", "unmatched ')'"),
        ("x = (1,\n2]", "2:2", "']' does not close the '(' opened at 2:5"),
        ("x = 3 foo", "1:7", "unexpected name 'foo'; expected an operator or the end of the statement"),
        ("backward = 3", "1:1", "'backward' is a keyword; it can't be used as a name"),
        ("y = backward", "1:5", "'backward' is a keyword; it can't be used as a name"),
        ("def if(x): x", "1:5", "'if' is a keyword; it can't be used as a name"),
        ("if x = 3:\n    y", "1:6", "unexpected '=' in an expression; use '==' to compare"),
        ("1 +* 2", "1:4", "expected an expression after '+'"),
        ("  x = 1", "1:3", "unexpected indentation"),
        ("x = 1\n    y = 2", "2:5", "unexpected indentation"),
        ("for i in range(3):\ny", "2:1", "expected an indented block after 'for' on line 2"),
        (
            "def f(x):\n    if x:\n        y\n      z",
            "4:7",
            "this line's indentation matches no enclosing block",
        ),
        ("x = 'abc", "1:5", "unterminated string (a string ends on the line it starts)"),
        ("x $ 2", "1:3", "unexpected character '$'"),
        (
            "a < b < c",
            "1:7",
            "comparisons can't be chained (they are elementwise on tensors): write (a < b) and (b < c)",
        ),
        (
            "f(x) = 3",
            "1:1",
            "can't assign to a function call; the left side must be a name, x[i] or x.attribute",
        ),
        ("3 = x", "1:1", "can't assign to a number; the left side must be a name, x[i] or x.attribute"),
        ("break", "1:1", "`break` outside a loop"),
        ("continue", "1:1", "`continue` outside a loop"),
        ("return 1", "1:1", "`return` outside a function"),
        ("save x", "1:1", "`save` belongs in the forward block of a `function`"),
        (
            "x.__class__",
            "1:3",
            "attribute '__class__' is not accessible: names starting with '_' are Python internals",
        ),
        (
            "x.data.__array__",
            "1:8",
            "attribute '__array__' is not accessible: names starting with '_' are Python internals",
        ),
        ("f(a=1, 2)", "1:8", "a positional argument can't follow a keyword argument"),
        ("f(a=1, a=2)", "1:8", "keyword argument 'a' is given twice"),
        ("backward y retain_graph retain_graph", "1:25", "`retain_graph` is given twice"),
        ("graph y to", "1:11", "expected an expression after 'to'"),
        ("backward y gradient", "1:20", "expected an expression after 'gradient'"),
        (
            ":frobnicate",
            "1:1",
            "unknown command ':frobnicate'; the commands are :help, :vars, :reset, :load, :export, :quit",
        ),
        (
            "x = 3 + 4 requires_grad requires_grad",
            "1:25",
            "unexpected keyword 'requires_grad'; expected the end of the statement",
        ),
        ("def f(a, a): a", "1:10", "parameter 'a' is listed twice"),
        ("def f(a=1, b): a", "1:12", "parameter 'b' without a default follows one with a default"),
        (
            "function f(x):\n    forward:\n        save x * 2\n        return x\n    backward(g):\n"
            "        return g",
            "3:14",
            "`save` takes names (`save a, b`), so that backward can read them by name",
        ),
        ("del x[0]", "1:5", "`del` removes names from the workspace: `del x, y`"),
        (
            "a, b = 1, 2 requires_grad",
            "1:13",
            "`requires_grad` after an assignment makes one new leaf: write `x = EXPR "
            "requires_grad` with a single name",
        ),
    ],
)
def test_syntax_error_messages(source: str, where: str, message: str) -> None:
    assert syntax(source) == (where, message)


def test_no_syntax_error_shows_lark_internals() -> None:
    for source in [
        "x = = 1",
        "x = (",
        "[,]",
        "f(,)",
        "x..y",
        "x = 1 2",
        "if",
        "with x:",
        "for in x: y",
        "def (x): x",
        "x[1:2:3:4]",
        "print print",
        "backward",
        "seed",
        "x +=",
        ":",
        "@",
    ]:
        r = run(source)
        assert not r.ok
        assert "__ANON" not in r.err and "Traceback" not in r.err and "Token(" not in r.err, r.err
        assert r.err.startswith("<stdin>:1:"), r.err


def test_error_format_has_the_source_line_and_a_caret() -> None:
    r = run("x = 1\ny = x @ [1, 2]\n", filename="prog.gc")
    lines = r.err.splitlines()
    assert re.match(r"prog\.gc:2:7: error: ", lines[0])
    assert lines[1] == "y = x @ [1, 2]"
    assert lines[2] == "      ^"


def test_caret_keeps_tabs_so_it_lines_up() -> None:
    r = run("if true:\n\ty = undefined_name\n", filename="t.gc")
    lines = r.err.splitlines()
    assert lines[0] == "t.gc:2:6: error: name 'undefined_name' is not defined"
    assert lines[2] == "\t    ^"


def test_runtime_errors_are_located_at_what_failed() -> None:
    r = run("a = [1, 2]\nb = [1, 2, 3]\nc = a + b\n", filename="t.gc")
    assert r.err.startswith("t.gc:3:7: error: ")
    r = run("x = 1\nx.foo\n", filename="t.gc")
    assert r.err.startswith("t.gc:2:3: error: a tensor has no attribute 'foo'")
    r = run("sin(1, 2)\n", filename="t.gc")
    assert r.err.startswith("t.gc:1:4: error: ")


@pytest.mark.parametrize(
    "source, message",
    [
        ("nope", "name 'nope' is not defined"),
        ("weight = 1\nwieght", "name 'wieght' is not defined; did you mean 'weight'?"),
        (
            "x = 3 requires_grad\ny = x * 2\nz = y requires_grad",
            "`requires_grad` makes a new leaf, but this tensor was "
            "computed (grad_fn=MulBackward0): write `z = y.detach() requires_grad`",
        ),
        ("x = [1, 2] requires_grad\nbackward x * 2", "backward: the output has shape (2,)"),
        ("backward 3", "backward: the tensor does not require grad"),
        ("backward none", "backward needs a tensor, not none"),
        ("retain_grad 3", "can't retain_grad on a tensor that doesn't require grad"),
        ("zero_grad 1 + 1, none", "zero_grad needs tensors, not none"),
        ("del nothing", "name 'nothing' is not defined"),
        ("del pi", "'pi' is predefined, not a variable: it can't be deleted"),
        ("x = 3\nx(1)", "'x' is a tensor of shape (), not a function: it can't be called"),
        ("'a' * 3", "can't multiply a string and a number (operator '*')"),
        ("none + 1", "can't add none and a number (operator '+')"),
        ("x = [1, 2]\nif x > 0: 1", "the truth value of a tensor with 2 elements is ambiguous"),
        ("for i in 3: i", "can't loop over a 0-d tensor; it has no first dimension"),
        ("for i in none: i", "can't loop over none"),
        ("a, b = [1, 2, 3]", "can't unpack 3 values into 2 names"),
        ("range(1.5)", "a range bound must be a whole number, not 1.5"),
        ("len(3)", "len needs a tensor, tuple, list or string, not a number"),
        ("x = 3\nlen(x)", "len of a 0-d tensor: it has no first dimension (use x.numel() for its size)"),
        ("def f(a): a\nf(1, 2)", "f() takes 1 argument (a), but 2 were given"),
        ("def f(a): a\nf()", "f() is missing its argument 'a'"),
        ("def f(a): a\nf(b=1)", "f() has no parameter 'b' (its parameters: a)"),
        ("def f(n): return f(n + 1)\nf(0)", "too deep a recursion: more than 800 nested calls (in f)"),
        ("x = 1\nx.grad()", "'grad' is an attribute, not a method: write x.grad without ()"),
        ("x = 1\nx.gard", "a tensor has no attribute 'gard'; did you mean 'grad'?"),
        ("(1, 2).foo", "a tuple has no attribute 'foo'"),
        (
            "x = 1\nx.shape = 3",
            "can't assign to .shape; only x.grad, x.requires_grad, x.data of a tensor can be assigned",
        ),
        ("[[1, 2], [3]]", "a ragged list literal: row 1 has shape [1], but row 0 has shape [2]"),
        ("[1, [2]]", "a list literal mixes numbers and lists (ragged lists are an error)"),
        ("graph 3 to 4", "graph ... to needs a file name (a string), not a tensor of shape ()"),
        ("zeros(2, 1.5)", "zeros: 'size' must be whole numbers, not 1.5. zeros(*size, dtype=none, "),
        ("jacobian(3, 3)", "expected a function, not a number"),
        ("n = len([1, 2])\nn ** 100000", "a number is too large"),
    ],
)
def test_runtime_error_messages(source: str, message: str) -> None:
    r = run(source)
    assert not r.ok
    assert r.errors and r.errors[0].startswith(message), r.err
    assert "Traceback" not in r.err


def test_syntax_error_runs_nothing() -> None:
    r = run("print 'first'\nx = 1\ny = (\n")
    assert r.out == "" and not r.ok


def test_runtime_error_stops_after_what_came_before_printed() -> None:
    r = run("1\nnope\n2\n")
    assert r.out == "tensor(1.)\n" and not r.ok


def test_keep_going_runs_on_and_still_fails() -> None:
    r = run("1\nnope\n2\nalso_nope\n3\n", keep_going=True)
    assert r.out == "tensor(1.)\ntensor(2.)\ntensor(3.)\n"
    assert not r.ok and len(r.errors) == 2


def test_warnings_are_located_and_shown_once_per_line_per_run() -> None:
    source = "a = 3 requires_grad\nb = a * a\nfor i in range(3):\n    b.grad\nb.grad\n"
    r = run(source, filename="w.gc")
    heads = [line for line in r.err.splitlines() if ": warning: " in line]
    assert [h.split(": warning:")[0] for h in heads] == ["w.gc:4:5", "w.gc:5:1"]
    assert "retain_grad" in heads[0]
    assert r.ok and r.out == "None\n" * 4


def test_warnings_print_in_order_with_values() -> None:
    import io

    stream = io.StringIO()
    s = Session(out=stream, err=stream)
    s.run("a = 3 requires_grad\nb = a * a\n1\nb.grad\n2\n", "o.gc")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "tensor(1.)" and lines[1].startswith("o.gc:4:1: warning:") and lines[4] == "None"
    assert lines[5] == "tensor(2.)"


def test_the_same_warning_again_in_a_new_run_is_shown_again() -> None:
    s = Session()
    run("a = 3 requires_grad\nb = a * a", session=s)
    assert run("b.grad", session=s).warnings
    assert run("b.grad", session=s).warnings


def test_interactive_one_line_input_drops_the_location() -> None:
    s = Session()
    r = run("nope", session=s, interactive=True)
    # the session's first error ends with the hint that `explain` says more (once per session)
    assert r.err == "error: name 'nope' is not defined\n(type `explain` for the long form of this error)\n"
    assert run("nope", session=s, interactive=True).err == "error: name 'nope' is not defined\n"
    run("a = 3 requires_grad; b = a * a", session=s, interactive=True)
    r = run("b.grad", session=s, interactive=True)
    assert r.err.startswith("warning: reading .grad of a non-leaf tensor") and r.err.count("\n") == 1
    r = run("x = 1\nnope", session=s, interactive=True)
    assert r.err.startswith("<stdin>:2:1: error: name 'nope' is not defined")


def test_color_wraps_warnings_in_yellow_and_errors_in_red() -> None:
    import io

    err = io.StringIO()
    s = Session(out=io.StringIO(), err=err, color=True)
    s.run("a = 3 requires_grad\nb = a * a\nb.grad\nnope\n", "c.gc")
    text = err.getvalue()
    assert "\x1b[33mc.gc:3:1: warning:" in text and "\x1b[31mc.gc:4:1: error:" in text


def test_errors_inside_a_function_point_into_its_body() -> None:
    r = run("def f(x):\n    y = x * 2\n    return y @ [1, 2, 3]\nf([1, 2])\n", filename="t.gc")
    assert r.err.startswith("t.gc:3:14: error: ")


def test_an_error_in_a_function_defined_in_an_earlier_input_shows_that_input() -> None:
    s = Session()
    run("def f(x):\n    return x + nope", session=s, filename="first")
    r = run("f(1)", session=s, filename="second")
    assert r.err.startswith("first:2:16: error: name 'nope' is not defined")
    assert "    return x + nope" in r.err


def test_a_long_line_is_shown_around_the_column() -> None:
    """The header keeps the true column; the echoed line is cut to the part around it, marked with '...',
    and the caret stays under the offending character."""
    terms = " + ".join(["1"] * 400)
    source = f"y = {terms} + * 2 + {terms}\n"
    r = run(source, filename="long.gc")
    header, shown, caret = r.err.splitlines()[:3]
    column = source.index("* 2") + 1
    assert header.startswith(f"long.gc:1:{column}: error:")
    assert shown.startswith("...") and shown.endswith("...") and len(shown) < 120
    assert shown[caret.index("^")] == "*"
