"""A Pygments lexer for the gradcalc language, built from the language's own KEYWORDS and BUILTINS.

It colours the REPL's input and is registered as the `pygments.lexers` entry point `gradcalc`, so that
`pygmentize -l gradcalc FILE.gc` highlights scripts.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from gradcalc.lang import BUILTINS, KEYWORDS
from gradcalc.lang.syntax.keywords import AS_KEYWORDS, CONSTANT_KEYWORDS, GRAD_MODES, IMPORT_KEYWORDS, OPERATOR_KEYWORDS
from gradcalc.lang.syntax.keywords import COMMANDS as COMMAND_NAMES

# The keywords by what they are, read from the grammar's rules (keywords.py): values (true none ...),
# operators (and or not), the grad modes of `with` (also after a namespace there: `with torch.no_grad():`),
# the import keywords (import from, and `as`, a keyword only in an import), and the statements.
MODE_KEYWORDS = GRAD_MODES
#: The REPL's commands.
COMMANDS = tuple(":" + name for name in COMMAND_NAMES)

_STATEMENT_KEYWORDS = tuple(
    k for k in KEYWORDS if k not in CONSTANT_KEYWORDS + OPERATOR_KEYWORDS + MODE_KEYWORDS + IMPORT_KEYWORDS
)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def _longest_first(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(set(names), key=lambda n: (-len(n), n)))


class GradcalcLexer(RegexLexer):
    """Lexer for gradcalc scripts and REPL input (`*.gc`)."""

    name = "gradcalc"
    aliases = ["gradcalc", "gc"]
    filenames = ["*.gc"]
    mimetypes = ["text/x-gradcalc"]
    url = "https://github.com/gradcalc/gradcalc"

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"#.*$", Comment.Single),
            (r"^(:[A-Za-z]+)(.*)$", bygroups(Keyword.Pseudo, Text)),
            (r'"(?:\\.|[^"\\\n])*"', String.Double),
            (r'"(?:\\.|[^"\\\n])*$', String.Double),  # an unterminated string, while typing
            (r"(\d+\.\d*|\.\d+)([eE][+-]?\d+)?|\d+[eE][+-]?\d+", Number.Float),
            (r"\d+", Number.Integer),
            # `with torch.no_grad():`: a grad mode after a namespace, in a `with` header.
            (r"(\.)([ \t]*)(" + "|".join(_longest_first(MODE_KEYWORDS)) + r")\b(?=[ \t]*(?:\([ \t]*\))?[ \t]*:)",
             bygroups(Punctuation, Whitespace, Keyword.Namespace)),
            # `x.requires_grad`, `x.backward(...)`: after a dot, a keyword is an attribute name.
            (r"(\.)([ \t]*)(" + _NAME + ")", bygroups(Punctuation, Whitespace, Name.Attribute)),
            # `grad(y, x, create_graph=true)`: a keyword argument's name (even a keyword's).
            (r"([(,])([ \t]*)(" + _NAME + r")([ \t]*)(=)(?!=)",
             bygroups(Punctuation, Whitespace, Name.Variable, Whitespace, Operator)),
            (r"(def|function)([ \t]+)(" + _NAME + ")",
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (words(_longest_first(IMPORT_KEYWORDS), suffix=r"\b"), Keyword.Namespace),
            # `import torch.nn as nn`: `as` followed by the name it binds (elsewhere `as` is a name)
            (r"(" + "|".join(AS_KEYWORDS) + r")([ \t]+)(?=[A-Za-z_])", bygroups(Keyword.Namespace, Whitespace)),
            (words(_longest_first(CONSTANT_KEYWORDS), suffix=r"\b"), Keyword.Constant),
            (words(_longest_first(OPERATOR_KEYWORDS), suffix=r"\b"), Operator.Word),
            (words(_longest_first(MODE_KEYWORDS), suffix=r"\b"), Keyword.Namespace),
            (words(_longest_first(_STATEMENT_KEYWORDS), prefix=r"\b", suffix=r"\b"), Keyword),
            (words(_longest_first(tuple(BUILTINS)), prefix=r"\b", suffix=r"\b"), Name.Builtin),
            (_NAME, Name),
            (r"\*\*=?|//=?|==|!=|<=|>=|[-+*/%@]=?|[<>=]", Operator),
            (r"[()\[\]{},;:.]", Punctuation),
            (r".", Text),
        ],
    }
