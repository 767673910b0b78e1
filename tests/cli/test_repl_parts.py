"""The REPL's parts on their own: when Enter runs the input, the Pygments lexer, the history location and
the colour decision."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pygments.token import Comment, Keyword, Name, Number, Operator, String

from gradcalc.cli import want_color
from gradcalc.lang import BUILTINS, KEYWORDS, check_complete
from gradcalc.repl.blocks import code_part, continuation_indent, normalize_block, opens_block, ready_to_run
from gradcalc.repl.history import history_path, make_history
from gradcalc.repl.lexer import GradcalcLexer


# -- Enter: run, or continue? --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["", "   ", "x = 3 requires_grad", "backward y retain_graph", ":vars", ":help backward",
     "m = [[1, 2],\n     [3, 4]]", "with no_grad:\n    z = x * 2\n", "with no_grad:\n    z = x * 2\n    ",
     "def f(a):\n    if a > 0:\n        return a\n    return -a\n", "x = = 1"],
)
def test_ready_to_run(text: str) -> None:
    assert ready_to_run(text, check_complete)


@pytest.mark.parametrize(
    "text",
    ["with no_grad:", "with no_grad:\n    z = x * 2", "m = [[1, 2],", "f(1,", "for i in range(3):  # loop",
     "def f(a):\n    if a > 0:\n        return a\n    return -a"],
)
def test_not_ready_continues(text: str) -> None:
    assert not ready_to_run(text, check_complete)


def test_continuation_indent() -> None:
    assert continuation_indent("with no_grad:") == "    "
    assert continuation_indent("if x > 0:  # positive") == "    "
    assert continuation_indent("for i in range(3):\n    if i:") == "        "
    assert continuation_indent("def f(a):\n    return a") == ""
    assert continuation_indent("while true:\n    if i:\n        break") == "    "
    assert continuation_indent("with no_grad:\n    z = 1") == "    "
    assert continuation_indent("m = [[1, 2],") == ""


def test_comments_and_strings() -> None:
    assert code_part('print "a # b"  # c') == 'print "a # b"  '
    assert opens_block("if x:  # why")
    assert not opens_block('print "x:"')
    assert not opens_block(":help")


def test_normalize_block() -> None:
    assert normalize_block("with no_grad:\n    z = 1\n    \n") == "with no_grad:\n    z = 1\n"
    assert normalize_block("1 + 1   ") == "1 + 1"


# -- the Pygments lexer --------------------------------------------------------------------------------------
def tokens(text: str) -> list[tuple[object, str]]:
    return [(kind, value) for kind, value in GradcalcLexer().get_tokens(text) if value.strip()]


def test_lexer_reconstructs_its_input() -> None:
    text = 'x = 3 requires_grad  # a leaf\nwith no_grad:\n    w -= 0.1 * w.grad\nprint "loss", 1e-3\n'
    assert "".join(value for _, value in GradcalcLexer().get_tokens(text)) == text


def test_lexer_token_kinds() -> None:
    found = tokens(
        'x = 3 requires_grad  # leaf\ny = sin(x) ** 2.5\nx.requires_grad\n'
        'print "s"\ngrad(y, x, create_graph=true)'
    )
    assert (Keyword, "requires_grad") in found
    assert (Comment.Single, "# leaf") in found
    assert (Name.Builtin, "sin") in found
    assert (Number.Float, "2.5") in found
    assert (Number.Integer, "3") in found
    assert (Operator, "**") in found
    assert (Name.Attribute, "requires_grad") in found  # after a dot, a keyword is an attribute
    assert (String.Double, '"s"') in found
    assert (Keyword.Constant, "true") in found
    assert (Name.Variable, "create_graph") in found  # a keyword argument's name


def test_lexer_covers_every_keyword_and_builtin() -> None:
    for word in KEYWORDS:
        kind = tokens(word)[0][0]
        assert kind in Keyword or kind in Operator, (word, kind)
    for word in BUILTINS:
        kind = tokens(word)[0][0]
        assert kind in Name.Builtin or kind in Keyword, (word, kind)


def test_lexer_colours_imports_and_pytorch_s_blocks() -> None:
    found = tokens("import torch.nn as nn\nfrom torch import optim\nwith torch.no_grad():\n    x.no_grad\n"
                   "as = 1\ntotal = order1 + inputsx + as")
    assert (Keyword.Namespace, "import") in found and (Keyword.Namespace, "from") in found
    assert (Keyword.Namespace, "as") in found  # `as` before the name an import binds ...
    assert (Name, "as") in found  # ... and a name elsewhere (a soft keyword)
    assert (Keyword.Namespace, "no_grad") in found  # the grad mode of `with torch.no_grad():`
    assert (Name.Attribute, "no_grad") in found  # an attribute elsewhere
    assert (Name.Builtin, "torch") in found and (Name.Builtin, "optim") in found  # predefined namespaces
    for word in ("total", "order1", "inputsx"):  # names that begin with a keyword are names
        assert (Name, word) in found


def test_pygments_finds_the_lexer_by_name() -> None:
    # The `pygments.lexers` entry point of the installed package: what `pygmentize -l gradcalc` uses.
    from pygments.lexers import find_lexer_class_for_filename, get_lexer_by_name

    assert type(get_lexer_by_name("gradcalc")).__name__ == "GradcalcLexer"
    assert find_lexer_class_for_filename("newton.gc").__name__ == "GradcalcLexer"


# -- history and colour --------------------------------------------------------------------------------------
def test_history_path_follows_xdg() -> None:
    assert history_path({"XDG_STATE_HOME": "/s", "HOME": "/h"}) == Path("/s/gradcalc/history")
    assert history_path({"HOME": "/h"}) == Path("/h/.local/state/gradcalc/history")
    relative = {"XDG_STATE_HOME": "relative", "HOME": "/h"}  # the spec: a relative path is ignored
    assert history_path(relative) == Path("/h/.local/state/gradcalc/history")


def test_history_file_is_created(tmp_path: Path) -> None:
    history, note = make_history(tmp_path / "a" / "b" / "history")
    assert note is None
    history.append_string("x = 1")
    assert "+x = 1" in (tmp_path / "a" / "b" / "history").read_text(encoding="utf-8")


def test_unwritable_history_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history, note = make_history(blocker / "history")  # its parent is a file: cannot be created
    assert note is not None and "history" in note
    history.append_string("x = 1")
    assert list(history.load_history_strings()) == ["x = 1"] or "x = 1" in history.get_strings()


class _Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal_without_no_color() -> None:
    assert want_color(_Tty(True), {"TERM": "xterm"})  # type: ignore[arg-type]
    assert not want_color(_Tty(False), {"TERM": "xterm"})  # type: ignore[arg-type]
    assert not want_color(_Tty(True), {"TERM": "xterm", "NO_COLOR": "1"})  # type: ignore[arg-type]
    assert not want_color(_Tty(True), {"TERM": "dumb"})  # type: ignore[arg-type]
    assert not want_color(None, {})


def test_ctrl_c_with_no_program_running_does_nothing_and_the_handler_is_put_back() -> None:
    import signal

    from gradcalc.lang import Session
    from gradcalc.repl.interrupt import sigint_interrupts

    session = Session(out=io.StringIO(), err=io.StringIO())
    before = signal.getsignal(signal.SIGINT)
    with sigint_interrupts(session):
        signal.raise_signal(signal.SIGINT)  # no statement runs: nothing to stop, and no exception
        signal.raise_signal(signal.SIGINT)  # nor with a second press: it never kills anything
    assert signal.getsignal(signal.SIGINT) is before  # restored before the next prompt
    assert session.run("1")  # the next program is not interrupted
