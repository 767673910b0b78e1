"""The grammar file, grammar/gradcalc.lark, and what is read straight from its text (the keywords).

Kept apart from the parser so that a syntax highlighter or a completer can learn the keywords without
loading the parser or the engine.
"""

from __future__ import annotations

import os
import re
from functools import cache

GRAMMAR_ENV = "GRADCALC_GRAMMAR"  # a grammar file to use instead (for trying a change to the language)


def grammar_path() -> str:
    """grammar/gradcalc.lark: beside the package in a source tree, inside it in an installed wheel; or the file
    GRADCALC_GRAMMAR names (docs/contributing.md: a statement tried out on a copy of the grammar).
    (os.path rather than pathlib: importing pathlib would cost every cold start a few milliseconds.)"""
    override = os.environ.get(GRAMMAR_ENV)
    if override:
        return override
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # gradcalc/
    for candidate in (os.path.join(here, "grammar", "gradcalc.lark"),
                      os.path.join(os.path.dirname(here), "grammar", "gradcalc.lark")):
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError("gradcalc's grammar (grammar/gradcalc.lark) is missing from the installation")


@cache
def grammar_text() -> str:
    """The grammar's text (read once)."""
    with open(grammar_path(), encoding="utf-8") as f:
        return f.read()


# A keyword is a terminal defined as one whole word (`BACKWARD.1: /backward\b/`: the priority puts it before
# NAME where both may come, the `\b` keeps it from matching the start of a longer name such as `backwards`);
# one marked `// soft` is special only where the grammar expects it (`to` after `graph EXPR`) and a name
# everywhere else.
_KEYWORD_TERMINAL = re.compile(
    r"^([A-Z][A-Z0-9_]*)\.1:[ \t]*/([A-Za-z_][A-Za-z0-9_]*)\\b/[ \t]*(//[ \t]*soft\b)?", re.M
)


@cache
def keyword_terminals() -> tuple[tuple[str, str, bool], ...]:
    """(terminal, word, soft) for every keyword of the grammar, in the grammar's order."""
    return tuple((m[1], m[2], bool(m[3])) for m in _KEYWORD_TERMINAL.finditer(grammar_text()))


@cache
def rule_keywords(rule: str) -> tuple[str, ...]:
    """The keywords that rule `rule` of the grammar names (`grad_mode`: no_grad, enable_grad, ...), in order:
    the terminals in its definition (its first line and the lines that continue it) that are keywords."""
    words = {terminal: word for terminal, word, _ in keyword_terminals()}
    found = re.search(rf"^\??{re.escape(rule)}:(.*(?:\n[ \t]+\S.*)*)", grammar_text(), re.M)
    if found is None:
        raise KeyError(f"the grammar has no rule {rule!r}")
    body = re.sub(r"//[^\n]*", "", found[1])  # not the words of its comments
    seen = [words[t] for t in re.findall(r"\b[A-Z][A-Z0-9_]*\b", body) if t in words]
    return tuple(dict.fromkeys(seen))
