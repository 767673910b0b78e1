"""The parser: an LALR(1) parser over grammar/gradcalc.lark, with Lark's tables, lowering as it parses.

Two ways to run the same tables, one result:

- The fast path (fast.py, `_FastParser`): one loop that lexes (one compiled regex per parser state, as
  Lark's contextual lexer), turns indentation into blocks and shifts/reduces, applying `lower.Lowerer`'s
  callbacks as Lark's tree builder would. Its tables (tables.py) are extracted from Lark once and cached in
  the user's cache directory (`$XDG_CACHE_HOME/gradcalc/`, else `~/.cache/gradcalc/`) as plain data
  (marshal), so a cold start neither imports Lark nor unpickles its parser. A program it cannot take to
  the end (any syntax error, or an error a callback raises) is parsed again on the other path, which says
  what is wrong.
- Lark's path (lark_path.py): Lark's LALR parser and contextual lexer, with `BlockPostLex` (blocks.py)
  turning indentation into _INDENT/_DEDENT tokens and checking brackets, and Lark's own pickle cache.
  `parse()` turns its exceptions into `SyntaxProblem`s that say, in words, what was expected
  (messages.py). Errors, their locations and the REPL's completeness answers all come from this path, so
  they are the same whichever path ran first.

`check_complete()` answers the REPL's question on Enter: run it, or ask for another line? `no_gc()`
(collector.py) pauses the garbage collector around a parse, on either path.

Which path runs, and why: `parser_status()` (printed by `gradcalc --version`) says whether the fast path is
in use and where its tables came from, or why it is not in use. With GRADCALC_DEBUG_PARSER=1 in the
environment, each parse that falls back to Lark's path says why on standard error (the fast path is
unavailable, or it stopped at an error in this input).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, cast

# Besides the public names, `X as X` re-exports the private ones that the tests reach through the package
# (as they did when it was a single module, parser.py).
from ...errors import Loc, SyntaxProblem
from ..lower import check
from .blocks import CLOSERS, MAX_BLOCK_DEPTH, OPENERS, BlockPostLex, _BlockState
from .collector import PROMOTE_AT, no_gc
from .fast import _Bail, fast_parser, fast_status
from .fast import _FastParser as _FastParser
from .lark_path import _read_grammar as _read_grammar
from .lark_path import cache_dir, cache_file, get_parser, grammar_path
from .messages import WORDS, _translate
from .tables import (
    LARK_TESTED_BELOW,
    LARK_TESTED_FROM,
    TABLES_FORMAT,
    Unsupported,
    extract_tables,
    lark_fingerprint,
    lark_tested,
    tables_file,
)
from .tables import _load_tables as _load_tables

if TYPE_CHECKING:
    from .. import ast as A

__all__ = [
    "CLOSERS",
    "DEBUG_ENV",
    "LARK_TESTED_BELOW",
    "LARK_TESTED_FROM",
    "MAX_BLOCK_DEPTH",
    "OPENERS",
    "PROMOTE_AT",
    "TABLES_FORMAT",
    "WORDS",
    "BlockPostLex",
    "Unsupported",
    "cache_dir",
    "cache_file",
    "check_complete",
    "extract_tables",
    "fast_parser",
    "get_parser",
    "grammar_path",
    "lark_fingerprint",
    "lark_tested",
    "no_gc",
    "parse",
    "parser_status",
    "tables_file",
]


def parse(source: str) -> A.Program:
    """Parse and lower a whole program; a SyntaxProblem says where and what was expected."""
    program, _ = _parse(source)
    return program


def _parse(source: str) -> tuple[A.Program, bool]:
    """The program, and whether it opened an indented block (for `check_complete`)."""
    text = source if source.endswith("\n") else source + "\n"
    fast = fast_parser()
    if fast is not None:
        try:
            with no_gc():
                program, opened_block = fast.parse(text)
        except Exception as exc:  # noqa: BLE001 - any error: Lark's path finds it again, and says what it is
            if _debugging():
                _debug(f"the fast path stopped ({_stopped_because(exc)}): parsing again on Lark's path")
        else:
            check(program)
            return program, opened_block
    elif _debugging() and not _said_unavailable:
        _say_unavailable()
    program, state = _parse_with_lark(text)
    return program, state.opened_block


def _parse_with_lark(text: str) -> tuple[A.Program, _BlockState]:
    from lark.exceptions import UnexpectedInput  # (Lark loads only on its own path, never on a cold start)

    parser, postlex = get_parser()
    state = postlex.begin(text)
    try:
        with no_gc():
            program = cast("A.Program", parser.parse(text))  # (the Lowerer's start(): no tree is built)
    except UnexpectedInput as exc:
        raise _translate(exc, state) from None
    except SyntaxProblem as exc:
        exc.state = state
        raise
    except RecursionError:
        raise SyntaxProblem("the program is nested too deeply to parse", Loc(1, 1)) from None
    check(program)
    return program, state


def check_complete(text: str) -> str:
    """ "complete" (run it), "incomplete" (an open block or bracket: ask for another line) or "invalid".

    As in Python's REPL, input that opened an indented block is complete only once it ends with an
    empty line.
    """
    if not text.strip():
        return "complete"
    try:
        _, opened_block = _parse(text)
    except SyntaxProblem as exc:
        return "incomplete" if getattr(exc, "incomplete", False) else "invalid"
    except Exception:  # anything else the parser raises is an input it cannot take
        return "invalid"
    if opened_block and text.split("\n")[-1].strip():
        return "incomplete"
    return "complete"


# ---------------------------------------------------------------------------------------------------
# Which path runs, and why

DEBUG_ENV = "GRADCALC_DEBUG_PARSER"  # set (to anything but "" or "0"): each fallback to Lark's path says why
_said_unavailable = False  # a fast path that is unavailable is so for the whole process: say it once


def _debugging() -> bool:
    """Read on each fallback, never on the fast path's way (a parse that succeeds there pays nothing)."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _debug(message: str) -> None:
    print(f"gradcalc: parser: {message}", file=sys.stderr, flush=True)


def _say_unavailable() -> None:
    global _said_unavailable
    _said_unavailable = True
    _debug(f"parsing on Lark's path (fast path unavailable: {fast_status()[1]})")


def _stopped_because(exc: BaseException) -> str:
    if isinstance(exc, _Bail):
        return "an error in this input, which Lark's path describes"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def parser_status() -> str:
    """Which parser runs, in words: "fast path (Lark 1.3.1 tables, cached)", or "Lark (fast path
    unavailable: <why>)". Makes the fast path's tables if the cache lacks them, and imports Lark (for its
    version): for `gradcalc --version`, not for a cold start."""
    import lark  # (--version only)

    in_use, how = fast_status()
    version = getattr(lark, "__version__", "?")
    untested = "" if lark_tested(version) else f"; Lark {version} is outside the tested range {_tested_range()}"
    if in_use:
        return f"fast path (Lark {version} tables, {how}{untested})"
    return f"Lark {version} (fast path unavailable: {how}{untested})"


def _tested_range() -> str:
    return f">={'.'.join(map(str, LARK_TESTED_FROM))},<{'.'.join(map(str, LARK_TESTED_BELOW))}"
