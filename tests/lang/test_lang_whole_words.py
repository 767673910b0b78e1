"""Keywords are whole words (LANGUAGE.md section 2): a name that merely begins with a keyword (`total`,
`order1`, `inputsx`, `requires_gradient`, `torch`) is a name wherever a name may stand, never the keyword
followed by the rest.

The keywords are read from the grammar (every keyword terminal, reserved and soft), and each name made from
one is tried in every place a name may stand, on both parser paths (the fast path's own loop and Lark's
parser): the program must be the one the same text gives with a neutral name of the same length in its place.
The issue's examples run from the user's side, through the `gradcalc` command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gradcalc.lang.statements  # noqa: F401 - the parser lowers to the statements' records
from gradcalc.lang.syntax import parser as P
from gradcalc.lang.syntax.grammar import keyword_terminals
from gradcalc.lang.syntax.keywords import KEYWORDS, SOFT_KEYWORDS

ROOT = Path(__file__).resolve().parents[2]

# Every place a name may stand; N is the name under test.
CONTEXTS = [
    "N = 1",
    "N",
    "y = N + 1",
    "y = -N ** N @ N",
    "y = not N and N or N == N",
    "f(N)",
    "f(a=N)",
    "f(N=1)",
    "N(1)",
    "x.N",
    "x.N(N)",
    "N.x",
    "N[0]",
    "N[N:N, ::N]",
    "[N, N]",
    "(N, N)",
    "N, M = 1, 2",
    "N += 1",
    "N[0] = N",
    "x = N requires_grad",
    "x = 3 requires_grad\nN",
    "def N(N, a=N):\n    return N",
    "for N in N:\n    pass",
    "for N, M in N: pass",
    "while N: break",
    "if N: pass\nelif N: pass\nelse: N",
    "with no_grad:\n    N",
    "with N.no_grad():\n    N",
    "with N.N.detect_anomaly():\n    N",
    "backward N",
    "backward N retain_graph",
    "backward y gradient N inputs N",
    "backward y inputs N create_graph",
    "explain backward N",
    "explain grad(N, N)",
    "explain N.grad",
    "retain_grad N",
    "zero_grad N, N",
    "del N",
    "print N, N",
    "graph N",
    "graph N to N",
    "plot N for N in [N, N]",
    "plot y for t in [0, N] order N to N",
    "seed N",
    "import N",
    "import N.N as N, N",
    "from N import N as N, N",
    "from N.N import (N, N,)",
    "function N(N):\n    forward:\n        save N\n        return N\n    backward(N):\n        return N",
]
# One name for each keyword of the grammar (reserved and soft) and each way of going on from it.
WORDS = [word for _, word, _ in keyword_terminals()]
NAMES = [word + tail for word in WORDS for tail in ("x", "_1", "2")]


def test_the_keywords_are_the_grammars() -> None:
    assert set(WORDS) == set(KEYWORDS) | set(SOFT_KEYWORDS)
    assert {"to", "order", "inputs", "as"} <= set(SOFT_KEYWORDS)
    assert {"import", "from", "requires_grad", "backward", "graph"} <= set(KEYWORDS)


def test_every_word_terminal_is_a_whole_word_keyword() -> None:
    """A terminal that matches one word must be written as a keyword (`NAME.1: /word\\b/`): spelled as a string
    ("word") the contextual lexer would match it at the start of a longer name where no name is expected."""
    parser, _ = P.get_parser()
    keywords = {terminal for terminal, _, _ in keyword_terminals()}
    for t in parser.terminals:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\\b)?", t.pattern.value):  # a word: a keyword's terminal
            assert t.name in keywords, t  # ... read by keywords.py, so reserved (or soft)
            assert t.pattern.type == "re" and t.pattern.value.endswith("\\b") and t.priority > 0, t
    assert len(keywords) == len(WORDS) == len(set(WORDS))


def _neutral(name: str) -> str:
    return "q" * len(name)


def _lark(text: str) -> Any:
    parser, postlex = P.get_parser()
    postlex.begin(text)
    with P.no_gc():
        return parser.parse(text)


def _fast(text: str) -> Any:
    fast = P.fast_parser()
    assert fast is not None, "the fast path is not in use"
    with P.no_gc():
        return fast.parse(text)[0]


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("path", [_fast, _lark], ids=["fast", "lark"])
def test_a_name_that_begins_with_a_keyword_is_a_name(context: str, path: Any) -> None:
    for name in NAMES:
        neutral = _neutral(name)
        expected = repr(path(context.replace("N", neutral) + "\n"))
        got = repr(path(context.replace("N", name) + "\n")).replace(f"'{name}'", f"'{neutral}'")
        assert got == expected, (context, name)


@pytest.mark.parametrize("name", ["total", "order1", "inputsx", "requires_gradient", "torch", "tox", "assert",
                                  "iffy", "format", "imports", "fromage", "asx", "nonex", "Truex", "andy", "oracle"])
def test_the_public_parse_takes_them(name: str) -> None:
    program = P.parse(f"{name} = 1\n{name}\nplot {name} for t in [0, {name}] order {name} to {name}\n")
    assert repr(program).count(f"'{name}'") == 6  # each one a name


# -- from the user's side ------------------------------------------------------------------------------------


def gradcalc(*expressions: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "gradcalc"]
    for e in expressions:
        args += ["-e", e]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


def test_the_issue_s_examples() -> None:
    r = gradcalc("y = 1\ngraph y total")
    assert r.returncode == 1 and "unexpected name 'total'" in r.stderr and "'tal'" not in r.stderr
    r = gradcalc("x = 3 requires_gradient")
    assert r.returncode == 1 and "unexpected name 'requires_gradient'" in r.stderr and "'ient'" not in r.stderr
    # `backward y inputsx` used to run as `backward y inputs x`: now an error, and x.grad stays None
    r = gradcalc("x = 2 requires_grad\ny = x * x\nbackward y inputsx\n", "x.grad")
    assert r.returncode == 1 and "unexpected name 'inputsx'" in r.stderr
    r = gradcalc("plot sin(t) for t in [0, 1] order1")
    assert r.returncode == 1 and "unexpected name 'order1'" in r.stderr
    r = gradcalc("import torch")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_such_names_are_variables() -> None:
    r = gradcalc("total = 5\ntotal\norder1 = 2; inputsx = 3; requires_gradient = 4; fromage = 6; asx = 7\n"
                 "order1 + inputsx + requires_gradient + fromage + asx\nx = 3 requires_grad\ny = x * total\n"
                 "backward y\nx.grad")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == "tensor(5.)\ntensor(22.)\ntensor(5.)\n"  # 2 + 3 + 4 + 6 + 7; d(5x)/dx


def test_soft_keywords_are_names_outside_their_statements() -> None:
    r = gradcalc("to = 1; order = 2; inputs = 3; as = 4\nto + order + inputs + as")
    assert (r.returncode, r.stdout, r.stderr) == (0, "tensor(10.)\n", "")
