"""`:help` from the user's side: every statement of the grammar is listed and has its own page, and a word
with no page gets the closest words that have one.

The statements are enumerated from the grammar itself (Lark's own reading of grammar/gradcalc.lark: the
alternatives of its `simple` and `compound` rules), never listed here: a statement added to the grammar is
checked without a line of this file changing.
"""

from __future__ import annotations

import re
from functools import cache

import lark
import pytest
from gclang_testing import out

from gradcalc.lang.syntax.grammar import grammar_text


@cache
def grammar() -> lark.Lark:
    return lark.Lark(grammar_text(), parser="lalr")


@cache
def statements() -> dict[str, tuple[str, ...]]:
    """Each statement rule of the grammar -> the keywords its alternatives start with."""
    g = grammar()
    rules: dict[str, tuple[str, ...]] = {}
    for r in g.rules:
        if r.origin.name not in ("simple", "compound"):
            continue
        first = r.expansion[0]
        if r.alias:  # `BREAK -> break_stmt`: the statement is the terminal itself
            rules[r.alias] = (first.name,)
        else:
            rules[first.name] = tuple(x.expansion[0].name for x in g.rules if x.origin.name == first.name)
    return {rule: tuple(dict.fromkeys(w for w in map(keyword, firsts) if w)) for rule, firsts in rules.items()}


def keyword(symbol: str) -> str | None:
    """The word a terminal spells when it is a keyword (`BACKWARD` -> "backward"), else None."""
    try:
        pattern = grammar().get_terminal(symbol).pattern
    except KeyError:
        return None  # a rule, not a terminal
    value = pattern.value
    if isinstance(pattern, lark.lexer.PatternRE):  # a keyword is a whole word: `BACKWARD.1: /backward\b/`
        whole = re.fullmatch(r"([A-Za-z_]\w*)\\b", value)
        return whole[1] if whole else None
    return value if isinstance(pattern, lark.lexer.PatternStr) and re.fullmatch(r"[A-Za-z_]\w*", value) else None


def has_word(page: str, word: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", page) is not None


def test_the_grammar_has_statements() -> None:
    found = statements()
    assert len(found) > 10 and "plot_stmt" in found and found["plot_stmt"] == ("plot",)


@pytest.mark.parametrize("page", [":help", ":help statements"])
def test_every_statement_keyword_is_on_the_first_pages(page: str) -> None:
    text = out(page)
    missing = [w for words in statements().values() for w in words if not has_word(text, w)]
    assert not missing, f"{page} does not mention {missing}"


@pytest.mark.parametrize("rule", sorted(statements()))
def test_every_statement_has_its_page(rule: str) -> None:
    listed = out(":help statements")
    for word in statements()[rule]:  # found by each keyword it starts with
        page = out(f":help {word}")
        assert not page.startswith("no help"), word
        assert has_word(page, word), page
        # `:help statements` has a line for it that starts with the keyword
        assert re.search(rf"^\s+{re.escape(word)}\b", listed, re.M), word
    page = out(f":help {rule}")  # and by the rule's name, keyword or not (`aug_assign`, `expr_stmt`)
    assert not page.startswith("no help"), rule
    if not statements()[rule]:
        # a statement without a keyword: its page opens with the synopsis `:help statements` lists it by
        assert page.splitlines()[0].strip() in listed, page.splitlines()[0]


def test_plot_is_on_the_statements_page() -> None:
    listed = out(":help statements")
    assert re.search(r"^\s+plot .* for .* in ", listed, re.M)
    assert "draw" in out(":help plot").lower()


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("backwrd", "backward"), ("plto", "plot"), ("sinn", "sin"), ("Linaer", "Linear"), ("retain_graf", "retain_graph"),
     ("staments", "statements"), ("whle", "while"), ("jacobain", "jacobian")],
)
def test_unknown_topic_gets_a_did_you_mean(typed: str, suggested: str) -> None:
    text = out(f":help {typed}")
    assert text.startswith(f"no help on '{typed}'; did you mean ")
    head = text.split("?")[0]
    assert f"'{suggested}'" in head
    assert "Topics:" in text


def test_a_word_nothing_is_close_to_lists_the_topics() -> None:
    text = out(":help qqqqzzzz")
    assert text.startswith("no help on 'qqqqzzzz'. Topics: ")
    assert "did you mean" not in text


def test_help_by_the_command_line(run_gradcalc_e) -> None:
    result = run_gradcalc_e(":help backwrd")
    assert result.returncode == 0
    assert "did you mean 'backward'?" in result.stdout


@pytest.fixture
def run_gradcalc_e():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def run(text: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "gradcalc", "-e", text], capture_output=True, text=True,
                              cwd=root, env={"PYTHONPATH": str(root), "PATH": ""}, timeout=60)

    return run
