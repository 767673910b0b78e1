"""The language's reserved words (LANGUAGE.md section 2), read from the grammar's terminals, kept apart so
that a syntax highlighter or a completer can import them without loading the parser or the engine."""

from __future__ import annotations

from typing import Any

from ..errors import Loc, SyntaxProblem
from .grammar import keyword_terminals, rule_keywords

# Reserved everywhere: no name may spell one (`backward = 1` is an error).
KEYWORDS: tuple[str, ...] = tuple(word for _, word, soft in keyword_terminals() if not soft)

# Special only where the grammar expects them (`graph y to "y.dot"`); a name everywhere else.
SOFT_KEYWORDS: tuple[str, ...] = tuple(word for _, word, soft in keyword_terminals() if soft)

KEYWORD_SET = frozenset(KEYWORDS)

# The REPL's commands (`:help`, `:vars`, ...): the words a COMMAND token may start with, which the session runs.
COMMANDS: tuple[str, ...] = ("help", "vars", "reset", "load", "export", "quit")

# The keywords of a few rules, by what they are (for highlighting, `with`, and the namespaces' blocks):
GRAD_MODES: tuple[str, ...] = rule_keywords("grad_mode")  # with no_grad: ... (also torch.no_grad())
CONSTANT_KEYWORDS: tuple[str, ...] = rule_keywords("atom")  # true False none ...
OPERATOR_KEYWORDS: tuple[str, ...] = rule_keywords("test") + rule_keywords("operand")  # and or not
IMPORT_KEYWORDS: tuple[str, ...] = rule_keywords("import_stmt")  # import from
AS_KEYWORDS: tuple[str, ...] = tuple(k for k in rule_keywords("import_path") if k in SOFT_KEYWORDS)  # as


def check_name(tok: Any) -> None:  # (Any: a Token; the statements' lowerings pass what they narrowed to str)
    """A name token that spells a keyword is an error (`backward = 1`)."""
    if str(tok) in KEYWORD_SET:
        raise SyntaxProblem(f"'{tok}' is a keyword; it can't be used as a name", Loc(tok.line, tok.column))
