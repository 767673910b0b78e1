"""check_complete: the REPL's Enter key asks whether to run the text typed so far."""

from __future__ import annotations

import pytest

from gradcalc.lang import check_complete


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "x = 1",
        "1 + 1",
        "x = 3 requires_grad",
        "backward y retain_graph",
        ":help",
        ":load my file.gc",
        "if x: y",
        "def f(x): return x",
        "for i in range(3):\n    i\n",
        "with no_grad:\n    w -= 1\n\n",
        "if x:\n    a\nelse:\n    b\n",
        "x = [1,\n 2]",
        "f(a,\n  b)",
        "# only a comment",
        "function f(x):\n    forward:\n        return x\n    backward(g):\n        return g\n",
    ],
)
def test_complete(text: str) -> None:
    assert check_complete(text) == "complete"


@pytest.mark.parametrize(
    "text",
    [
        "if x:",
        "for i in range(3):",
        "while true:",
        "def f(x):",
        "with no_grad:",
        "with no_grad():",
        "function f(x):",
        "function f(x):\n    forward:",
        "function f(x):\n    forward:\n        return x",
        "if x:\n    y",
        "for i in range(3):\n    i",
        "if x:\n    a\nelse:",
        "f(1, 2",
        "x = [1, 2,",
        "x = [[1, 2],\n [3",
        "grad(y, x,\n",
        "if x:\n    y = (1 +",
    ],
)
def test_incomplete(text: str) -> None:
    assert check_complete(text) == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        "x = 1 +",
        "1 +* 2",
        ")",
        "x = (1]",
        "x = 'abc",
        "x $ 2",
        "backward = 3",
        "if x = 3: y",
        "  x = 1",
        "a < b < c",
        "f(x) = 3",
        "break",
        "return 1",
        "if x:\n    y = 1 +",
        ":nonsense",
        "x.__class__",
        "for i in range(3):\ny",
    ],
)
def test_invalid(text: str) -> None:
    assert check_complete(text) == "invalid"
