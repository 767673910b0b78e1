"""The language's reserved words (LANGUAGE.md section 2), kept apart so that a syntax highlighter or a
completer can import them without loading the parser or the engine."""

from __future__ import annotations

KEYWORDS: tuple[str, ...] = (
    "requires_grad",
    "backward",
    "retain_graph",
    "create_graph",
    "gradient",
    "retain_grad",
    "zero_grad",
    "with",
    "no_grad",
    "enable_grad",
    "inference_mode",
    "detect_anomaly",
    "def",
    "function",
    "forward",
    "save",
    "return",
    "if",
    "elif",
    "else",
    "for",
    "in",
    "while",
    "break",
    "continue",
    "del",
    "print",
    "graph",
    "seed",
    "and",
    "or",
    "not",
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "pass",  # not in LANGUAGE.md's list: a Python user's empty block (`if x: pass`)
)

# Special only in one place (`graph y to "y.dot"`); a name everywhere else.
SOFT_KEYWORDS: tuple[str, ...] = ("to",)

KEYWORD_SET = frozenset(KEYWORDS)
