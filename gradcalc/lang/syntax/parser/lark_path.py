"""Lark's parser for grammar/gradcalc.lark: where the grammar is, the user's private cache directory, and
the parser itself (LALR with the contextual lexer, `BlockPostLex`, and `Lowerer` as its transformer),
built once per process from Lark's own pickle cache.

Lark's path parses an input the fast path could not take to the end, and so describes every syntax error;
the fast path's tables (tables.py) are extracted from this parser.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from typing import TYPE_CHECKING

from ..grammar import grammar_path as grammar_path  # (re-exported: the package's name for it)
from ..grammar import grammar_text
from ..lower import Lowerer
from .blocks import BlockPostLex

if TYPE_CHECKING:  # Lark is imported only on its own path (importing it costs a cold start ~20 ms)
    from lark import Lark


def cache_dir() -> str | None:
    """The user's private cache directory for gradcalc, made with mode 0700; None when unusable.

    Lark's cache is a pickle, and the fast path's a marshal dump (neither is safe to load from untrusted
    files), so they are only read from a directory that the user owns and nobody else can write to (never
    a shared, world-writable place such as /tmp).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    path = os.path.join(base, "gradcalc")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError:
        return None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return path


def cache_file(grammar: str) -> str | None:
    """Lark's cache file (a pickle of its parser) for this grammar text, Lark version and Python version."""
    import hashlib  # (Lark's path only: loading OpenSSL would cost a cold start)

    import lark  # (Lark's path only: not on a cold start)

    directory = cache_dir()
    if directory is None:
        return None
    key = f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()
    return os.path.join(directory, f"parser-{hashlib.sha256(key).hexdigest()[:20]}.lark")


def _read_grammar() -> str:
    """The grammar's text (grammar.py reads it once per process)."""
    return grammar_text()


_parser: Lark | None = None
_postlex: BlockPostLex | None = None
_build_lock = threading.Lock()


def get_parser() -> tuple[Lark, BlockPostLex]:
    """Lark's parser (built on first use, then kept for the process), and its post-lexer."""
    global _parser, _postlex
    if _parser is None:
        with _build_lock:
            if _parser is None:
                from lark import Lark  # (Lark's path only: importing it would cost a cold start ~20 ms)

                grammar = _read_grammar()
                postlex = BlockPostLex()
                options = dict(
                    parser="lalr",
                    lexer="contextual",
                    postlex=postlex,
                    transformer=Lowerer(),
                    maybe_placeholders=True,
                    propagate_positions=False,
                )
                target = cache_file(grammar)
                try:
                    parser = Lark(grammar, cache=str(target) if target else False, **options)
                except OSError:  # an unreadable or unwritable cache is not an error: build without it
                    parser = Lark(grammar, **options)
                _postlex, _parser = postlex, parser
    assert _postlex is not None
    return _parser, _postlex
