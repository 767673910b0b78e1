"""`:help statements` and each statement's `:help WORD` page, derived from the grammar.

The statements are the grammar's: the alternatives of its `simple` and `compound` rules (grammar/gradcalc.lark),
read from its text, so that a statement added to the grammar is listed and has a page without a word here.
What a statement's entry says comes from `ENTRIES` (a synopsis, a one-line summary and the topic page that
tells more); a statement missing from it gets a synopsis made from its grammar rule and the first line of its
record's docstring. A statement's page is found by each word its rule starts with (`:help plot`, `:help if`),
by its `ENTRIES` name (`:help assignment`) and by its rule's name (`:help aug_assign`).
"""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

from ..syntax.ast import STATEMENT_RECORDS
from ..syntax.grammar import keyword_terminals
from ..syntax.shape import alternatives, literals, statement_body, statement_keywords, statement_rules


class Entry(NamedTuple):
    """What the help says of one statement: its synopsis, a one-line summary, the topic page that tells
    more (a key of `help.TOPICS`, or ""), and the name `:help` finds it by when it starts with no keyword."""

    synopsis: str
    summary: str
    topic: str = ""
    name: str = ""


ENTRIES: dict[str, Entry] = {
    "expr_stmt": Entry("EXPR", "prints its value; _ (also ans) is the last value printed", "printing",
                       "expression"),
    "assign": Entry("x = EXPR [requires_grad]", "bind a name (a, b = t unpacks; x[i] = v sets in place); "
                    "requires_grad: a new leaf", "leaves", "assignment"),
    "aug_assign": Entry("x += v   (also -= *= /=)", "in place on a tensor: x.add_(v)", "in-place", "+="),
    "backward_stmt": Entry("backward y [retain_graph] [create_graph] [gradient G] [inputs [a, b]]",
                           "y.backward(...): adds dy/dx into x.grad for the leaves y came from", "backward"),
    "retain_grad_stmt": Entry("retain_grad b, ...", "keep a computed tensor's .grad at the next backward",
                              "retain_grad"),
    "zero_grad_stmt": Entry("zero_grad x, w, ...", "set their .grad to None", "grad"),
    "del_stmt": Entry("del x, ...", "forget names"),
    "print_stmt": Entry('print "loss", loss', "print the values separated by spaces"),
    "graph_stmt": Entry('graph y [to "y.dot"]', "y's backward graph: a tree of grad_fn nodes, or a Graphviz file",
                        "graph"),
    "plot_stmt": Entry('plot EXPR[, EXPR ...] for NAME in [LO, HI] [order N] [to "FILE"]',
                       "draw functions and their derivatives"),
    "explain_stmt": Entry("explain [backward y | grad(...) | x.grad]",
                          "see inside autograd; alone, the last error in full", "explain"),
    "seed_stmt": Entry("seed N", "set the random seed (torch.manual_seed): rand, randn and new layers repeat"),
    "save_stmt": Entry("save a, b", "in a function's forward block: keep tensors for its backward", "function"),
    "return_stmt": Entry("return [EXPR]", "leave a def (or a function's forward/backward) with a value", "def"),
    "import_stmt": Entry("import torch.nn as nn\nfrom torch import nn, optim",
                         "bind PyTorch's namespaces (torch nn F optim autograd func) as a PyTorch program does"),
    "break_stmt": Entry("break", "leave the innermost loop"),
    "continue_stmt": Entry("continue", "go on with the loop's next step"),
    "pass_stmt": Entry("pass", "do nothing (an empty block)"),
    "command": Entry(":help [topic]  :vars  :reset  :load FILE  :export torch|notebook FILE  :quit", "REPL commands",
                     "commands", "commands"),
    "if_stmt": Entry("if COND: ... [elif COND: ...] [else: ...]",
                     "run the first block whose condition is true (a boolean or a one-element tensor)"),
    "for_stmt": Entry("for x in EXPR: ...", "over range(n), a tensor's first dimension, a list or a tuple "
                      "(for a, b in pairs: unpacks)"),
    "while_stmt": Entry("while COND: ...", "repeat while the condition is true"),
    "with_stmt": Entry("with no_grad: ...", "run the block in a grad mode: no_grad, enable_grad, inference_mode, "
                       "detect_anomaly", "no_grad"),
    "def_stmt": Entry("def f(a, b=2): ...", "a function (closes over the workspace)", "def"),
    "function_stmt": Entry("function f(x): forward: ... backward(g): ...",
                           "a custom autograd Function (torch.autograd.Function)", "function"),
}

# How a grammar symbol reads in a synopsis made from its rule (a statement that ENTRIES does not know).
_SYMBOLS = {"test": "EXPR", "testlist": "EXPR", "exprlist": "EXPR, ...", "suite": "...", "params": "PARAMS",
            "NAME": "NAME", "STRING": '"TEXT"', "NUMBER": "N"}
_TOKEN = re.compile(r'"[^"]*"|[A-Za-z_][A-Za-z0-9_]*|->|\S')


def synopsis_from_grammar(rule: str) -> str:
    """A synopsis made from the statement's grammar rule (its first alternative), for a statement ENTRIES
    does not know: `graph_stmt: GRAPH test [TO test]` reads `graph EXPR [to EXPR]`."""
    spelled = literals()
    keywords = {terminal: word for terminal, word, _ in keyword_terminals()}
    forms = alternatives(statement_body(rule))
    words = []
    for token in _TOKEN.findall(forms[0] if forms else ""):
        if token == "->":
            break
        if token.startswith('"'):
            words.append(token[1:-1])
        elif token in _SYMBOLS:
            words.append(_SYMBOLS[token])
        elif token in spelled:
            words.append(spelled[token])
        elif token in keywords:
            words.append(keywords[token])
        elif token.startswith("_") and token[1:2].isupper():
            continue  # a filtered-out terminal (_NEWLINE, _INDENT): layout, not words
        elif token[0].isalpha() or token[0] == "_":
            words.append(token.strip("_"))
        else:
            words.append(token)
    text = " ".join(words)
    text = re.sub(r"\s+([:,)\]])", r"\1", text)
    text = re.sub(r"(?<=[\w)\]])\s+([*?+])", r"\1", text)  # quantifiers stay on what they repeat
    return re.sub(r"([(\[])\s+", r"\1", text)


def _record_doc(rule: str) -> str:
    """The statement record's own docstring (not one it inherits), or ""."""
    cls = STATEMENT_RECORDS.get(rule)
    doc = cls.__dict__.get("__doc__") if cls is not None else None
    return textwrap.dedent(doc).strip() if isinstance(doc, str) else ""


def entry(rule: str) -> Entry:
    """The help's entry for statement `rule`: ENTRIES', or one made from the grammar and the record."""
    known = ENTRIES.get(rule)
    if known is not None:
        return known
    doc = _record_doc(rule)
    return Entry(synopsis_from_grammar(rule), doc.split("\n\n")[0].replace("\n", " ") if doc else "")


def find_statement(word: str) -> str | None:
    """The statement rule a `:help` word names: a keyword it starts with, its entry's name or its rule's."""
    word = word.strip()
    for rule, keywords in statement_keywords().items():
        if word in keywords:
            return rule
    for rule in statement_rules():
        if word in (rule, entry(rule).name):
            return rule
    return None


def help_words() -> list[str]:
    """The words a user would type for a statement's page (for did-you-mean; rule names are not offered)."""
    words: list[str] = []
    for rule, keywords in statement_keywords().items():
        words += [*keywords, *([entry(rule).name] if entry(rule).name else [])]
    return words


def statement_page(rule: str, topics: dict[str, str]) -> str:
    """`:help WORD` for statement `rule`: its synopsis and summary, then the topic page or the record's
    docstring that tells more (`topics` is help.TOPICS); that page alone when it opens with a synopsis."""
    e = entry(rule)
    more = topics.get(e.topic, "") if e.topic else _record_doc(rule)
    first = more.split("\n", 1)[0].strip()
    if more and (first == e.synopsis.strip() or first.split(" ", 1)[0] in statement_keywords()[rule]):
        return more  # the page opens with a synopsis of its own (backward's, explain's, plot's)
    head = e.synopsis + (f"\n  {e.summary}" if e.summary else "")
    return f"{head}\n\n{more}" if more else head


def statements_page() -> str:
    """`:help statements`: every statement of the grammar, its synopsis and summary."""
    width, total = 38, 110
    lines = ["Statements, one per line (`;` separates several; # starts a comment). :help WORD shows one."]
    for rule in statement_rules():
        e = entry(rule)
        summary = textwrap.wrap(e.summary, total - width) or [""]
        *before, synopsis = e.synopsis.split("\n")  # a line per form that starts with its own keyword
        lines += [f"  {form}" for form in before]
        if len(synopsis) < width - 2:
            lines.append(f"  {synopsis.ljust(width - 2)}{summary[0]}".rstrip())
            summary = summary[1:]
        else:
            lines.append(f"  {synopsis}")
        lines += [" " * width + part for part in summary if part]
    lines.append("A line ending in `:` opens a block: the lines below it, indented deeper (in the REPL an empty "
                 "line ends it).")
    return "\n".join(lines)


def statement_summary_line() -> str:
    """The statements' keywords on one line, for `:help`'s first page."""
    words: list[str] = []
    for keywords in statement_keywords().values():
        words += [w for w in keywords if w not in words]
    return "Statements: " + " ".join(words) + "  (:help statements)"
