"""The parser's fast path (parser/fast.py's own loop over tables extracted from Lark) against Lark's parser:
the same program for every input Lark accepts, a failure (and then Lark's error) for every input it
rejects; and the cache of its tables in the user's private cache directory."""

from __future__ import annotations

import marshal
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcalc.lang.statements  # noqa: F401 - the parser lowers to the statements' records
from gradcalc.lang.errors import SyntaxProblem
from gradcalc.lang.syntax import parser as P
from gradcalc.lang.syntax.keywords import KEYWORDS, SOFT_KEYWORDS
from gradcalc.lang.syntax.lower import Lowerer

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [p.read_text() for p in sorted((Path(__file__).parent / "seeds").glob("*.gc"))]
EXAMPLES = [p.read_text() for p in sorted((ROOT / "examples").glob("*.gc"))]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VALID = [
    "x = 3 requires_grad\ny = x ** 2 + sin(x)   # a comment\nbackward y retain_graph\nx.grad\n",
    "w = [[1, 2], [3, 4]] requires_grad\nloss = ((w * 2 + x - 1) ** 2).mean()\n",
    "with no_grad:\n    w -= 0.1 * w.grad\nzero_grad x, w\nprint \"loss\", loss\n",
    "x.requires_grad\ngrad(y, x, create_graph=true, retain_graph=True)\n",
    "to = 1\ngraph y to \"y.dot\"\ngraph to\n",
    "a, b = 1, 2\na = b = 0\nt = (1,)\ne = ()\n",
    "x[1:, ::2]\nx[0,]\nx[:]\nx[::]\nx[mask]\nx[1:2:3, 0]\n",
    "-2**2\n2**3**2\n2**-1\nnot a and b or c\na < b\n-x.grad[0]\n+-+1\n",
    "def f(a, b=2):\n    return a * b\nf(1)\n",
    "function square(x):\n    forward:\n        save x\n        return x * x\n"
    "    backward(g):\n        return 2 * x * g\n",
    "if x > 0:\n    y = 1\nelif x < 0:\n    y = -1\nelse:\n    y = 0\n",
    "for i in range(3):\n    if i == 1:\n        continue\n    while true:\n        break\n",
    "for i, j in pairs: pass\nif x: y = 1; z = 2\n",
    "x = tensor([1, 2],\n           dtype=float32)\ny = [1,\n  2,\n\n  3]\n",
    "\n\n# only comments\n   # indented comment\nx = 1  \n\n",
    "if x:\n\ty = 1\n\tz = 2\n",
    "x = 'single' + \"double\\n\\\"\"\n:help\n:load 'f.gc'\n:vars\n",
    "seed 0\ndel x, y\nretain_grad b\nbackward y gradient [1, 1] create_graph\nx += 1\nx[0] = 5\n",
    "x = 1e-3 + .5 + 3. + 10\nTrue; False; None; true; false; none\n",
    "x.grad.zero_()\nx.requires_grad_(false)\ny.backward(retain_graph=true)\n",
    "with no_grad():\n    pass\nwith detect_anomaly:\n    y\n",
    "if a:\n    if b:\n        if c:\n            d\ne\n",
    "x = 1",
    "",
    "\n",
]

INVALID = [
    "x = ",
    "x = (1, 2",
    "x = 1)",
    "x = [1, 2)",
    "  x = 1",
    "if x:\ny = 1",
    "if x:\n    y = 1\n  z = 2",
    "x = backward",
    "backward = 1",
    "x = 1 +* 2",
    "x = $",
    "x = 'unterminated",
    "a < b < c",
    "f(k=1, 2)",
    "x._private",
    "1 = x",
    "backward y retain_graph retain_graph",
    "if x:",
    "def f(a=1, b):\n    pass",
    "x = 3 requires_grad foo",
]

TOKENS = [
    "x", "y", "w", "f", "sin", "grad", "0", "1", "2.5", "1e3", "'s'", "+", "-", "*", "/", "//", "%", "@", "**",
    "==", "<", ">=", "=", "+=", "-=", "(", ")", "[", "]", ",", ":", ";", ".", "shape", "\n", "\n    ", "\n        ",
    "\n\t", " ", "#c\n", ":vars", "dim=", "\\", "$",
    *KEYWORDS, *SOFT_KEYWORDS,  # every keyword of the grammar (one added to it is fuzzed too)
]


def lark_parse(text: str) -> tuple[Any, bool]:
    """Lark's path, up to the lowered program (without the parser package's context checks, as the fast path)."""
    parser, postlex = P.get_parser()
    state = postlex.begin(text)
    with P.no_gc():
        program = parser.parse(text)
    return program, state.opened_block


def fast_parse(text: str) -> tuple[Any, bool]:
    fast = P.fast_parser()
    assert fast is not None, "the fast path is not in use"
    with P.no_gc():
        return fast.parse(text)


def assert_same(source: str) -> bool:
    """The fast path gives Lark's program when Lark accepts `source`, and fails when Lark rejects it.
    True when Lark accepted it."""
    text = source if source.endswith("\n") else source + "\n"
    try:
        expected = lark_parse(text)
    except Exception:  # noqa: BLE001 - Lark's path rejects it, in whatever way
        with pytest.raises(Exception):  # noqa: B017, PT011 - so must the fast path (then Lark's path reports)
            fast_parse(text)
        return False
    assert fast_parse(text) == expected
    return True


@pytest.mark.parametrize("source", VALID + SEEDS + EXAMPLES)
def test_the_fast_path_lowers_as_lark_does(source: str) -> None:
    assert assert_same(source)


@pytest.mark.parametrize("source", INVALID)
def test_the_fast_path_fails_where_lark_fails(source: str) -> None:
    assert not assert_same(source)


@pytest.mark.parametrize("source", INVALID)
def test_errors_come_from_larks_path(source: str) -> None:
    try:
        P._parse_with_lark(source + "\n")
    except SyntaxProblem as exc:
        expected = (str(exc), exc.loc, getattr(exc, "incomplete", False))
    with pytest.raises(SyntaxProblem) as caught:
        P.parse(source)
    assert (str(caught.value), caught.value.loc, getattr(caught.value, "incomplete", False)) == expected


def test_a_long_program_on_the_fast_path() -> None:
    text = "".join(VALID[:6]) * 200
    assert assert_same(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=25))
def test_random_token_sequences_agree(tokens: list[str]) -> None:
    assert_same(" ".join(tokens))


@FUZZ
@given(
    st.sampled_from(VALID + SEEDS), st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(TOKENS)), max_size=3)
)
def test_programs_with_inserted_tokens_agree(source: str, edits: list[tuple[int, str]]) -> None:
    for where, token in edits:
        i = where % (len(source) + 1)
        source = source[:i] + token + source[i:]
    assert_same(source)


# -- when the fast path is not used ----------------------------------------------------------------


def test_without_the_fast_path_lark_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    with_fast = P.parse(VALID[0])
    monkeypatch.setattr(P, "fast_parser", lambda: None)
    assert P.parse(VALID[0]) == with_fast


def test_an_unexpected_lowerer_turns_the_fast_path_off() -> None:
    data = P._load_tables(P._read_grammar())

    class NoTest(Lowerer):
        test = None  # Lark would build a Tree for `test`: the fast path can't stand in for that

    class TerminalCallback(Lowerer):
        def NAME(self, token: str) -> str:  # noqa: N802 - Lark calls a method named as a terminal
            return token

    assert P._FastParser(data, Lowerer()) is not None
    for lowerer in (NoTest(), TerminalCallback()):
        with pytest.raises(P.Unsupported):
            P._FastParser(data, lowerer)


# -- the tables' cache -----------------------------------------------------------------------------


def test_the_tables_survive_marshal() -> None:
    data = P.extract_tables(P.get_parser()[0])
    again = P._FastParser(marshal.loads(marshal.dumps(data)), Lowerer())
    text = "".join(VALID)
    assert again.parse(text) == lark_parse(text)


def test_the_tables_cache_is_private_written_once_and_spares_importing_lark(tmp_path: Path) -> None:
    code = (
        "import sys; import gradcalc.lang.statements; from gradcalc.lang.syntax import parser as P;"
        "P.parse('x = 1 + 1');"
        "print(P.tables_file(P._read_grammar(), P.lark_fingerprint())); print('lark' in sys.modules)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def run() -> tuple[Path, str]:
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        return Path(out[0]), out[1]

    path, imported = run()
    assert path.parent == tmp_path / "gradcalc" and path.exists()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert imported == "True"  # the first run made the tables, from Lark's parser
    stamp = path.stat().st_mtime_ns
    assert run() == (path, "False")  # the second read them: Lark was not even imported
    assert path.stat().st_mtime_ns == stamp


def test_a_corrupt_or_stale_tables_file_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    grammar = P._read_grammar()
    target = P.tables_file(grammar, P.lark_fingerprint())
    assert target is not None
    good = P._load_tables(grammar)
    assert marshal.loads(Path(target).read_bytes()) == good
    for junk in (b"not marshal data", marshal.dumps({**good, "grammar": "another grammar"}),
                 marshal.dumps({**good, "format": -1}), marshal.dumps([1, 2, 3])):
        Path(target).write_bytes(junk)
        assert P._load_tables(grammar) == good
        assert marshal.loads(Path(target).read_bytes()) == good


def test_the_tables_file_name_tells_grammars_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    a, b = P.tables_file("grammar a", "lark"), P.tables_file("grammar b", "lark")
    assert a is not None and b is not None and a != b
    assert P.tables_file("grammar a", "another lark") != a


def test_no_tables_file_in_a_world_writable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gradcalc").mkdir(mode=0o777)
    os.chmod(tmp_path / "gradcalc", 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert P.tables_file("grammar", "lark") is None
    assert P._load_tables(P._read_grammar())["format"] == P.TABLES_FORMAT  # made in memory, not cached
    assert list((tmp_path / "gradcalc").iterdir()) == []


# -- the garbage collector while parsing ------------------------------------------------------------


def test_what_a_long_parse_makes_goes_to_the_oldest_generation() -> None:
    import gc

    assert gc.isenabled()
    with P.no_gc():
        assert not gc.isenabled()
        made = [[] for _ in range(P.PROMOTE_AT + 1000)]
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in oldest for o in made)


def test_what_a_short_parse_makes_stays_young() -> None:
    """A REPL input's few objects are left to the collector's usual course (and its bookkeeping)."""
    import gc

    gc.collect()
    with P.no_gc():
        made = [[] for _ in range(100)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert not any(id(o) in oldest for o in made)


def test_objects_the_process_froze_stay_frozen() -> None:
    import gc

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with P.no_gc():
            P.parse("x = 1\n")
        # not thawed by no_gc: thawing empties the permanent generation (a frozen object freed meanwhile, which
        # leaves it too, is no thaw: the count may drop by a few, never to nothing)
        assert gc.get_freeze_count() > frozen // 2
    finally:
        gc.unfreeze()
