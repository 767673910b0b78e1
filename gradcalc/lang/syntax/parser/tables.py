"""The fast path's tables: Lark's LALR table, its contextual lexer's regexes and its tree builder's child
filters, extracted from Lark's parser once and cached as plain data (marshal) in the user's private cache
directory, keyed on the grammar's text, the installed Lark and the Python version.

Extraction reads Lark's private attributes (`parser.parser.lexer.lexer`, `_parse_tree_builder`,
`scanner._mres`...): anything not of the expected shape raises `Unsupported`, and every parse then goes
through Lark. pyproject.toml bounds Lark to the versions this was tested with.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
import threading
from functools import partial
from typing import TYPE_CHECKING, cast

from .lark_path import cache_dir, get_parser

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from lark import Lark

    # a rule: (its length, the rule it expands, its callback's name, a `?rule`, the children kept (position,
    # an inlined rule's, how many Nones before it), Nones appended, the terminals passed to the callback)
    RuleRow = tuple[int, str, str, bool, list[tuple[int, bool, int]] | None, int, list[str]]
    # a contextual lexer: (its regexes, keyword maps by terminal, newline kinds, ignored kinds)
    LexerRow = tuple[list[str], dict[str, dict[str, str]], list[str], list[str]]

    class Tables(TypedDict):
        """The fast path's tables, as `extract_tables` makes them and the cache keeps them."""

        format: int
        terminals: list[str]
        start: int
        end: int
        actions: list[dict[str, int]]  # per state: terminal or rule -> >= 0 shift/goto, < 0 ~reduce rule
        rules: list[RuleRow]
        lexers: list[LexerRow]
        lexer_of: list[int]  # per state: its lexer
        grammar: NotRequired[str]
        lark: NotRequired[str]

TABLES_FORMAT = 1  # bump when the layout of the tables below changes

# The Lark releases the fast path was tested with (its tests pass, and it is in use rather than falling
# back): pyproject.toml requires this range, and tests/lang/test_lang_lark_range.py checks that it does.
# Raise the upper bound only after running those tests under the newer Lark.
LARK_TESTED_FROM = (1, 1, 9)
LARK_TESTED_BELOW = (1, 4)


def lark_tested(version: str) -> bool:
    """True when Lark `version` ("1.3.1") is in the tested range. A pre-release or other suffix counts as its
    release ("1.4.0rc1" as 1.4.0)."""

    release = re.match(r"\d+(?:\.\d+)*", version)
    parts = tuple(int(n) for n in release.group().split(".")) if release else ()
    return LARK_TESTED_FROM <= parts < LARK_TESTED_BELOW


def lark_fingerprint() -> str:
    """Which Lark is installed, found without importing it: the path, size and modification time of its
    `__init__.py` (an upgrade rewrites it). The tables are Lark's, so a new Lark means new tables."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec("lark", None)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin:
            try:
                info = os.stat(spec.origin)
            except OSError:
                break
            return f"{spec.origin}\0{info.st_size}\0{info.st_mtime_ns}"
    return "lark not found"


def tables_file(grammar: str, fingerprint: str) -> str | None:
    """The fast path's cache file for this grammar text, Lark and Python version (None: no cache directory).
    The name only tells versions apart; the file itself holds the full key and is checked against it."""
    import zlib  # not hashlib: loading OpenSSL would cost a cold start more than the cache saves

    directory = cache_dir()
    if directory is None:
        return None
    key = f"{grammar}\0{fingerprint}\0{sys.version_info[:2]}".encode()
    return os.path.join(directory, f"tables-{zlib.crc32(key):08x}-{len(key)}.marshal")


class Unsupported(Exception):
    """Lark's parser is not what the fast path expects (another Lark version, other options, a rule without
    a callback that would build a tree): parse with Lark."""


def extract_tables(parser: Lark) -> Tables:
    """The fast path's tables, as plain data, from Lark's parser (its LALR table, its contextual lexer's
    regexes, its tree builder's child filters). Raises Unsupported if they are not the expected shape."""
    # Lark is imported only when the tables are made, never on a cold start:
    from lark.lexer import ContextualLexer, PatternStr, UnlessCallback  # (cold start: see above)
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild  # (start-up)
    from lark.parsers.lalr_analysis import Shift  # (start-up: see above)

    try:
        lexer = parser.parser.lexer.lexer
        table = parser.parser.parser.parser.parse_table
        builders = parser._parse_tree_builder.rule_builders
        conf = parser.lexer_conf
    except AttributeError as exc:
        raise Unsupported(str(exc)) from None
    if not isinstance(lexer, ContextualLexer) or conf.re_module is not re or conf.g_regex_flags or conf.use_bytes:
        raise Unsupported("not the contextual lexer over `re` without flags")
    if conf.callbacks:
        raise Unsupported("lexer callbacks")

    rules: list[RuleRow] = []
    index: dict[object, int] = {}  # Lark's rule -> its number
    for rule, chain in builders:
        expand1 = False
        include: list[tuple[int, bool, int]] | None = None
        append_none = 0
        for wrapper in chain:
            if wrapper is ExpandSingleChild:
                expand1 = True
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR:
                include = [(i, bool(expand), nones) for i, expand, nones in wrapper.args[0]]
                append_none = wrapper.args[1]
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR_NoPlaceholders:
                include = [(i, bool(expand), 0) for i, expand in wrapper.args[0]]
            else:
                raise Unsupported(f"tree builder step {wrapper!r}")
        name = rule.alias or rule.options.template_source or rule.origin.name
        passed = range(len(rule.expansion)) if include is None else [i for i, _, _ in include]
        kept = sorted({rule.expansion[i].name for i in passed if rule.expansion[i].is_term})
        index[rule] = len(rules)
        rules.append((len(rule.expansion), rule.origin.name, name, expand1, include, append_none, kept))

    states = table.states
    if set(states) != set(range(len(states))):
        raise Unsupported("parser states are not 0..n-1")
    actions = []
    for state in range(len(states)):
        row = {}
        for term, (action, arg) in states[state].items():
            row[term] = arg if action is Shift else ~index[arg]  # >= 0: shift or goto; < 0: reduce
        actions.append(row)

    lexers: list[LexerRow] = []
    lexer_ids: dict[int, int] = {}
    lexer_of = []
    for state in range(len(states)):
        basic = lexer.lexers[state]
        if id(basic) not in lexer_ids:
            scanner = basic.scanner
            unless = {}
            for kind, callback in basic.callback.items():
                if not isinstance(callback, UnlessCallback):
                    raise Unsupported(f"lexer callback {callback!r}")
                words = {}
                for term in callback.scanner.terminals:
                    if not isinstance(term.pattern, PatternStr) or term.pattern.flags:
                        raise Unsupported(f"keyword terminal {term.name}")
                    words[term.pattern.value] = term.name
                unless[kind] = words
            patterns = [mre.pattern for mre in scanner._mres]
            lexer_ids[id(basic)] = len(lexers)
            lexers.append((patterns, unless, sorted(basic.newline_types), sorted(basic.ignore_types)))
        lexer_of.append(lexer_ids[id(basic)])

    return cast("Tables", _plain({
        "format": TABLES_FORMAT,
        "terminals": sorted(t.name for t in parser.terminals),
        "start": table.start_states["start"],
        "end": table.end_states["start"],
        "actions": actions,
        "rules": rules,
        "lexers": lexers,
        "lexer_of": lexer_of,
    }))


def _plain(value: object) -> object:
    """`value` made of exact builtin types, as marshal requires (a Lark built from the grammar, rather than
    loaded from its cache, names its rules with Tokens, which are str subclasses)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    raise Unsupported(f"unexpected {type(value).__name__} in the tables")


def _load_tables(grammar: str, fresh: bool = False) -> Tables:
    """The tables from the cache if it holds them for this grammar, Lark and Python (and not `fresh`); else
    made from Lark's parser and written to the cache (atomically: a reader never sees half a file)."""
    return load_tables(grammar, fresh)[0]


def load_tables(grammar: str, fresh: bool = False) -> tuple[Tables, str]:
    """`_load_tables`, and where the tables came from, in words: "cached" (read from the cache), "made and
    cached", or "made, not cached: <why>"."""
    fingerprint = lark_fingerprint()
    target = tables_file(grammar, fingerprint)
    if target is not None and not fresh:
        try:
            with open(target, "rb") as f:
                data = marshal.loads(f.read())
            if (
                isinstance(data, dict)
                and data.get("format") == TABLES_FORMAT
                and data.get("grammar") == grammar
                and data.get("lark") == fingerprint
            ):
                return data, "cached"
        except (OSError, EOFError, ValueError, TypeError):  # missing, or not ours: make it again
            pass
    data = extract_tables(get_parser()[0])
    data["grammar"], data["lark"] = grammar, fingerprint
    if target is None:
        return data, "made, not cached: no private cache directory"
    temporary = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(marshal.dumps(data))
        os.replace(temporary, target)
    except (OSError, ValueError) as exc:  # a cache that cannot be written is not an error
        try:
            os.remove(temporary)
        except OSError:
            pass
        return data, f"made, not cached: {exc}"
    return data, "made and cached"
