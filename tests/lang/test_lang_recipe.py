"""docs/contributing.md's recipe for a new statement, followed to the letter in a fresh interpreter: a rule in a
copy of the grammar (GRADCALC_GRAMMAR), a record and a compile function, and nothing else. The parser, the
messages, `:help` and `:help statements`, the REPL's colouring, completion and blocks all know the statement.
And every list of keywords the language and its tests keep is the grammar's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gradcalc.lang.syntax.grammar import grammar_text
from gradcalc.lang.syntax.keywords import KEYWORDS, SOFT_KEYWORDS

ROOT = Path(__file__).resolve().parents[2]

# The recipe, step 1: the grammar (a keyword, the rule, its alternative in `?simple`).
RULE = "shout_stmt: SHOUT test [LOUDLY]                         // shout EXPR [loudly]\n"
TERMINALS = "SHOUT.1: /shout\\b/\nLOUDLY.1: /loudly\\b/  // soft\n"

# Steps 2 and 3: the record and its compile function (in a module of gradcalc/lang/statements/).
SCRIPT = r'''
import json, sys
from typing import Any

from gradcalc.lang import statements  # the language's own statements
from gradcalc.lang.core.compiler import Compiler, compiles
from gradcalc.lang.core.expressions import VALUE
from gradcalc.lang.core.frames import Closure, Frame
from gradcalc.lang.errors import Loc
from gradcalc.lang.syntax.ast import Stmt, finish_records, statement


@statement("shout_stmt")
class Shout(Stmt):
    """shout EXPR [loudly]: print the value of EXPR in capitals."""

    loc: Loc
    expr: Any
    loudly: Any


finish_records()


@compiles(Shout)
def compile_shout(c: Compiler, st: Shout) -> Closure:
    value = c.expr(st.expr, VALUE)
    show = c.interp.host.print_values
    bang = "!" if st.loudly is not None else ""

    def run(f: Frame) -> None:
        show([str(value(f)).upper() + bang])

    return run


import io
from gradcalc.lang import BUILTINS, KEYWORDS, Session
from gradcalc.lang.syntax.source import source_text
from gradcalc.lang.syntax.parser import parse
from gradcalc.lang.tell.help import help_text
from gradcalc.repl.blocks import is_block
from gradcalc.repl.completer import GradcalcCompleter
from gradcalc.repl.lexer import GradcalcLexer
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from pygments.token import Keyword


def run(source):
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run(source, "<expr>")
    return out.getvalue(), err.getvalue()


session = Session(out=io.StringIO())
completer = GradcalcCompleter(session, KEYWORDS, BUILTINS)
program = parse("x = 2\nshout x * 3 loudly  # hey\n")
print(json.dumps({
    "ran": run("x = 2\nshout x * 3 loudly\nshout x"),
    "bare": run("shout"),
    "name": run("shout = 1"),
    "soft": run("loudly = 4\nloudly"),
    "span": source_text("x = 2\nshout x * 3 loudly  # hey\n", program.body[1].span),
    "help": help_text("shout"),
    "statements": help_text("statements"),
    "first_page": help_text(""),
    "keywords": list(KEYWORDS),
    "colour": [str(t) for t, v in GradcalcLexer().get_tokens("shout x") if v == "shout"],
    "completed": [c.text for c in completer.get_completions(Document("sho"), CompleteEvent())],
    "block": is_block(["shout x"]),
}))
'''


def grammar_with_the_statement() -> str:
    text = grammar_text()
    text = text.replace("       | seed_stmt\n", "       | seed_stmt\n       | shout_stmt\n", 1)
    text = text.replace("seed_stmt: SEED test\n", "seed_stmt: SEED test\n" + RULE, 1)
    text = text.replace("AS.1: /as\\b/  // soft\n", "AS.1: /as\\b/  // soft\n" + TERMINALS, 1)
    assert text.count("shout") == 4
    return text


def test_a_statement_added_by_the_recipe_is_known_everywhere(tmp_path: Path) -> None:
    grammar = tmp_path / "gradcalc.lark"
    grammar.write_text(grammar_with_the_statement(), encoding="utf-8")
    env = {**os.environ, "GRADCALC_GRAMMAR": str(grammar), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ran"] == ["TENSOR(6.)!\nTENSOR(2.)\n", ""]  # the parser lowers it, the compiler runs it
    assert seen["bare"][1].startswith("<expr>:1:6: error: expected an expression after 'shout'")
    assert "'shout' is a keyword; it can't be used as a name" in seen["name"][1]
    assert seen["soft"] == ["tensor(4.)\n", ""]  # a soft keyword stays a name elsewhere
    assert seen["span"] == "shout x * 3 loudly"
    assert seen["help"].startswith("shout EXPR [loudly]") and "in capitals" in seen["help"]
    assert any(line.strip().startswith("shout EXPR [loudly]") for line in seen["statements"].splitlines())
    assert " shout " in seen["first_page"]  # the statements' line of :help's first page
    assert "shout" in seen["keywords"] and "loudly" not in seen["keywords"]
    assert seen["colour"] == ["Token.Keyword"]
    assert "shout" in seen["completed"]
    assert seen["block"] is False  # a simple statement: Enter runs it


def test_every_list_of_keywords_is_the_grammars() -> None:
    """The lists the language and its tests keep hold every keyword the grammar declares (so a keyword added
    to the grammar is in them): the REPL's colouring and completion, `:help`, the fuzzers' tokens."""
    import gradcalc.lang.statements  # noqa: F401 - the records, for :help
    from gradcalc.lang import KEYWORDS as PUBLIC
    from gradcalc.lang.syntax.grammar import keyword_terminals
    from gradcalc.lang.syntax.shape import statement_keywords
    from gradcalc.lang.tell.help import help_text
    from gradcalc.repl import lexer
    from tests.lang import test_lang_fastpath, test_lang_fuzz

    words = {word for _, word, _ in keyword_terminals()}
    assert set(KEYWORDS) | set(SOFT_KEYWORDS) == words and PUBLIC == KEYWORDS
    coloured = (set(lexer._STATEMENT_KEYWORDS) | set(lexer.CONSTANT_KEYWORDS) | set(lexer.OPERATOR_KEYWORDS)
                | set(lexer.MODE_KEYWORDS) | set(lexer.IMPORT_KEYWORDS) | set(lexer.AS_KEYWORDS))
    assert set(KEYWORDS) | set(lexer.AS_KEYWORDS) <= coloured
    assert words <= set(test_lang_fuzz.TOKENS) and words <= set(test_lang_fastpath.TOKENS)
    starts = {w for ws in statement_keywords().values() for w in ws}
    page = help_text("statements")
    assert all(any(line.strip().startswith(w) for line in page.splitlines()) for w in starts), page
