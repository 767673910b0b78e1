"""Editing in the REPL as a user types: Up searches the history by the prefix typed, auto-indentation that
does not double the indentation typed by hand and moves `else:` out to its `if`, and a block with a syntax
error collected until its empty line and reported once.

Driven through a real terminal (tmux: the screen as a user sees it), through prompt_toolkit's pipe input in
the test process (the keys a terminal sends), and through a pipe into `gradcalc -i` (the plain line reader).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from test_repl_terminal import Tmux, prompt_after, prompts, tmux_gradcalc  # noqa: F401 - the fixture `terminal` uses
from typing_keys import later

UP = "\x1b[A"


@pytest.fixture
def terminal(tmux_gradcalc: Tmux) -> Tmux:  # noqa: F811 - the fixture imported above
    """`gradcalc` in a private tmux server (test_repl_terminal.py's)."""
    return tmux_gradcalc


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]



def last_prompt_line(screen: str) -> str:
    return [line for line in screen.splitlines() if line.startswith(">>>")][-1].rstrip()


# -- Up: history search by prefix ------------------------------------------------------------------------------
def test_up_arrow_searches_the_history_by_the_prefix_typed_in_a_terminal(terminal: Tmux) -> None:
    t = terminal
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    for line, shown in [("a1 = 1", None), ("b1 = 2", None), ("b1 * 10", "tensor(20.)"), ("a1 * 100", "tensor(100.)"),
                        ("b1 * 3", "tensor(6.)")]:
        t.line(line)
        if shown:
            t.wait_for(prompt_after(shown), f"{line} to print")
    # `b1 *` then Up twice: the two newest inputs that start with `b1 *` (not `a1 * 100`, which is between).
    t.type("b1 *")
    t.key("Up")
    t.wait_for(lambda s: last_prompt_line(s) == ">>> b1 * 3", "the newest input starting with `b1 *`")
    t.key("Up")
    t.wait_for(lambda s: last_prompt_line(s) == ">>> b1 * 10", "the next older one")
    t.key("Enter")
    screen = t.wait_for(lambda s: s.count("tensor(20.)") == 2 and prompt_after("tensor(20.)")(s), "b1 * 10 to run")
    assert "tensor(100.)" in screen and screen.count("tensor(100.)") == 1
    # An empty input walks the whole history: Up gives the newest input of all.
    t.key("Up")
    t.wait_for(lambda s: last_prompt_line(s) == ">>> b1 * 10", "the newest input")
    t.key("C-c")  # the line is dropped: Ctrl-D then quits from an empty prompt (wait for it: a loaded machine)
    t.wait_for(lambda s: last_prompt_line(s) == ">>>", "an empty prompt after Ctrl-C")
    t.key("C-d")
    assert t.wait_exit() == 0


def test_up_arrow_searches_by_prefix_with_keys_from_a_pipe(drive_repl: Callable) -> None:
    run = drive_repl("a1 = 1\rb1 = 2\rb1 * 10\ra1 * 100\rb1 * 3\rb1 *", during=later(UP, UP, "\r", "\x04"))
    assert run.err == ""
    # b1 * 10 = 20 ran again; without the prefix, Up twice would have run a1 * 100 (100) again.
    assert lines(run.out) == ["tensor(20.)", "tensor(100.)", "tensor(6.)", "tensor(20.)"]


# -- auto-indentation ----------------------------------------------------------------------------------------
def test_indentation_typed_by_hand_is_not_doubled_in_a_terminal(terminal: Tmux) -> None:
    t = terminal
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    t.line("def f(x):")
    t.line("    y = x * 2")  # after the auto-indent, typed as in an editor
    t.line("    return y + 1")
    t.key("Enter")
    t.line("f(3)")
    screen = t.wait_for(prompt_after("tensor(7.)"), "f(3) to print")  # 3 * 2 + 1
    assert "...     y = x * 2" in screen and "...     return y + 1" in screen
    assert "error" not in screen
    # `else:` typed at the body's depth moves out to its `if`.
    t.line("if f(3) > 10:")
    t.line('print "big"')
    t.type("else:")
    t.wait_for(lambda s: s.rstrip().splitlines()[-1].rstrip() == "... else:" or "\n... else:" in s, "else: moved out")
    t.key("Enter")
    t.line('    print "small"')
    t.key("Enter")
    screen = t.wait_for(prompt_after("small"), "the else branch to run")
    assert "big" not in screen.split("if f(3)")[-1].replace('print "big"', "")
    assert "error" not in screen
    t.key("C-d")
    assert t.wait_exit() == 0


def test_spaces_typed_after_the_auto_indent_replace_it(drive_repl: Callable, tmp_path) -> None:
    history = tmp_path / "hist"
    # Each body line typed with its own four spaces; the nested `if` with eight.
    run = drive_repl("def f(x):\r    y = x * 2\r    if y > 4:\r        return y\r    return -y\r\rf(3)\rf(1)\r",
                     history=history)
    assert run.err == ""
    assert lines(run.out) == ["tensor(6.)", "tensor(-2.)"]
    typed = history.read_text(encoding="utf-8")
    assert "+def f(x):\n+    y = x * 2\n+    if y > 4:\n+        return y\n+    return -y\n" in typed


def test_auto_indent_alone_still_indents(drive_repl: Callable) -> None:
    # Nothing typed by hand: the proposal is kept (one level after `:`, one less after `return`).
    run = drive_repl("def f(x):\ry = x * 2\rif y > 4:\rreturn y\rreturn -y\r\rf(3)\r")
    assert (run.err, lines(run.out)) == ("", ["tensor(6.)"])


def test_else_and_elif_move_out_to_their_if(drive_repl: Callable, tmp_path) -> None:
    history = tmp_path / "hist"
    keys = ("def sign(x):\r"
            "if x > 0:\r"
            'print "positive"\r'
            "elif x < 0:\r"  # typed at the body's depth: moved out to the `if`
            'print "negative"\r'
            "else:\r"  # likewise
            'print "zero"\r'
            "\r"
            "sign(5); sign(-5); sign(0)\r")
    run = drive_repl(keys, history=history)
    assert run.err == ""
    assert lines(run.out) == ["positive", "negative", "zero"]
    assert ('+    if x > 0:\n+        print "positive"\n+    elif x < 0:\n+        print "negative"\n+    else:\n'
            in history.read_text(encoding="utf-8"))


def test_nested_else_goes_to_the_nearest_if(drive_repl: Callable) -> None:
    keys = ("def g(a, b):\r"
            "if a > 0:\r"
            "if b > 0:\r"
            'print "both"\r'
            "else:\r"  # at the inner body's depth: moved out to the inner `if`, the nearest
            'print "a only"\r'
            "\r"
            "g(1, 1); g(1, -1); g(-1, 1)\r")
    run = drive_repl(keys)
    assert run.err == ""
    assert lines(run.out) == ["both", "a only"]  # g(-1, 1): the outer `if` has no else


def test_function_backward_moves_out_to_forward(terminal: Tmux, tmp_path) -> None:
    # In a terminal (a child process): a custom Function made in the test process would add a node class
    # to the engine's for the rest of the run.
    t = terminal
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    for line in ["function myabs(a):", "forward:", "save a", "if a > 0:", "return a", "else:", "return -a"]:
        t.line(line)
    t.type("backward(g):")  # typed at the forward body's depth: moved out to `forward:`
    t.wait_for(lambda s: "\n...     backward(g):" in s, "backward(g): moved out")
    t.key("Enter")
    t.line("return g * sign(a)")
    t.key("Enter")
    t.line("x = -3 requires_grad")
    t.line("backward myabs(x)")
    t.line("x.grad")
    screen = t.wait_for(prompt_after("tensor(-1.)"), "x.grad to print")  # torch: d|x|/dx at -3
    assert "error" not in screen
    t.key("C-d")
    assert t.wait_exit() == 0
    history = (tmp_path / "state" / "gradcalc" / "history").read_text(encoding="utf-8")
    assert "+            return -a\n+    backward(g):\n+        return g * sign(a)\n" in history


# -- a block with a syntax error -----------------------------------------------------------------------------
def test_a_block_with_an_error_is_collected_and_runs_nothing(drive_repl: Callable) -> None:
    run = drive_repl("s = 0\rfor i in range(3):\rs += i\rs +* 1\rs += 100\r\rs\r")
    # one error, for the whole block, at the wrong line; nothing of the block ran (s is still 0)
    assert lines(run.out) == ["tensor(0.)"]
    assert run.err.count("error:") == 1
    assert re.search(r":3:\d+: error: ", run.err)  # the block's third line
    assert "s +* 1" in run.err


def test_a_header_without_its_colon_is_still_one_block(drive_repl: Callable) -> None:
    # `def f(x)` lacks its colon: the body is not run on its own at top level (no second error about it).
    run = drive_repl("x = 1\rdef f(x)\r    x = 50\r    return x\r\rx\r")
    assert run.err.count("error:") == 1
    assert "':'" in run.err or "colon" in run.err
    assert lines(run.out) == ["tensor(1.)"]


def test_a_compound_one_liner_waits_for_the_empty_line(drive_repl: Callable) -> None:
    # As in Python's REPL: `if c: ...` on one line may be followed by `else:`.
    run = drive_repl('if 1 > 2: print "yes"\relse: print "no"\r\r')
    assert (run.err, lines(run.out)) == ("", ["no"])


def test_an_empty_header_is_an_error_not_an_endless_block(drive_repl: Callable) -> None:
    # `if c:` and an empty line: Python says "expected an indented block"; so does gradcalc, and goes on.
    run = drive_repl("if 1 > 0:\r\r2 * 3\r")
    assert run.err.count("error:") == 1 and "indented block" in run.err
    assert lines(run.out) == ["tensor(6.)"]


def test_an_empty_line_inside_brackets_continues_the_block(drive_repl: Callable) -> None:
    run = drive_repl("for i in range(2):\rv = [i,\r\ri]\rprint v.sum()\r\r")
    assert (run.err, lines(run.out)) == ("", ["tensor(0.)", "tensor(2.)"])


def test_a_block_with_an_error_through_a_pipe(run_gradcalc) -> None:
    program = "s = 0\nfor i in range(3):\n    s += i\n    s +* 1\n    s += 100\n\ns\n"
    result = run_gradcalc("-i", stdin=program)
    assert result.stdout == "tensor(0.)\n"
    assert result.stderr.count("error:") == 1
