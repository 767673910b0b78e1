"""The grammar (LANGUAGE.md sections 2-4): every statement form parses into its lowered node; lexical rules;
deep input; the cached parser."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gradcalc.lang import statements as S
from gradcalc.lang.errors import SyntaxProblem
from gradcalc.lang.syntax import ast as A
from gradcalc.lang.syntax.parser import cache_file, grammar_path, parse

ROOT = Path(__file__).resolve().parents[2]


def one(source: str) -> A.Node:
    body = parse(source).body
    assert len(body) == 1, body
    return body[0]


def expr(source: str) -> A.Node:
    st = one(source)
    assert isinstance(st, S.ExprStmt)
    return st.expr


# -- statements -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, kind",
    [
        ("x = 3", S.Assign),
        ("x = 3 requires_grad", S.Assign),
        ("a, b = t", S.Assign),
        ("a = b = 0", S.Assign),
        ("x", S.ExprStmt),
        ("x += 1", S.AugAssign),
        ("x -= 1", S.AugAssign),
        ("x *= 2", S.AugAssign),
        ("x /= 2", S.AugAssign),
        ("x[0] = 1", S.Assign),
        ("x.grad = none", S.Assign),
        ("backward y", S.Backward),
        ("retain_grad b", S.RetainGrad),
        ("zero_grad x, w", S.ZeroGrad),
        ("del x", S.Del),
        ("print 'loss', loss", S.Print),
        ("print", S.Print),
        ("graph y", S.Graph),
        ('graph y to "y.dot"', S.Graph),
        ("seed 0", S.Seed),
        ("pass", S.Pass),
        (":help", S.Command),
        (":help leaves", S.Command),
        (":vars", S.Command),
        (":reset", S.Command),
        (":load f.gc", S.Command),
        (":quit", S.Command),
        ("with no_grad:\n    x", S.With),
        ("with enable_grad: x", S.With),
        ("with inference_mode:\n    x", S.With),
        ("with detect_anomaly:\n    x", S.With),
        ("with no_grad(): x", S.With),
        ("def f(a, b=2):\n    return a * b", S.Def),
        ("if x > 0: y", S.If),
        ("if x:\n    a\nelif y:\n    b\nelse:\n    c", S.If),
        ("for i in range(3):\n    i", S.For),
        ("for row in m: row", S.For),
        ("while x < 3:\n    x += 1\n    break\n    continue", S.While),
    ],
)
def test_statement_forms(source: str, kind: type) -> None:
    assert isinstance(one(source), kind)


def test_assignment_with_requires_grad() -> None:
    st = one("w = [[1, 2], [3, 4]] requires_grad")
    assert isinstance(st, S.Assign) and st.requires_grad
    assert isinstance(st.value, A.NumList) and st.value.data == [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    "flags",
    [
        "retain_graph create_graph",
        "create_graph retain_graph",
        "gradient [1, 1] retain_graph",
        "retain_graph gradient [1, 1] create_graph",
    ],
)
def test_backward_flags_in_any_order(flags: str) -> None:
    st = one(f"backward y {flags}")
    assert isinstance(st, S.Backward)
    assert st.retain_graph == ("retain_graph" in flags)
    assert st.create_graph == ("create_graph" in flags)
    assert (st.gradient is not None) == ("gradient" in flags)


def test_function_block() -> None:
    st = one(
        "function myrelu(input):\n    forward:\n        save input\n        return clamp(input, min=0)\n"
        "    backward(grad_output):\n        g = grad_output.clone()\n        g[input < 0] = 0\n"
        "        return g\n"
    )
    assert isinstance(st, S.FunctionDef)
    assert [p.name for p in st.params] == ["input"] and [p.name for p in st.grad_params] == ["grad_output"]
    assert isinstance(st.forward[0], S.Save) and len(st.backward) == 3


def test_print_with_parentheses_prints_its_items() -> None:
    st = one("print(a, b)")
    assert isinstance(st, S.Print) and len(st.args) == 2


# -- lexical structure ------------------------------------------------------------------------------


def test_comments_blank_lines_and_semicolons() -> None:
    body = parse("# a comment\n\nx = 1  # trailing\n\n   # indented comment\ny = 2; z = 3;\n").body
    assert [type(s) for s in body] == [S.Assign, S.Assign, S.Assign]


def test_input_without_final_newline() -> None:
    assert len(parse("x = 1\ny = 2").body) == 2
    assert isinstance(one("if x:\n    y"), S.If)
    assert isinstance(one("x = 1 # comment at the very end"), S.Assign)


def test_brackets_span_lines() -> None:
    st = one("x = [1,\n     2,\n  3]")
    assert isinstance(st, S.Assign) and st.value.data == [1, 2, 3]
    assert isinstance(one("y = f(a,\n  b=2,\n)"), S.Assign)


def test_keywords_as_attribute_and_keyword_argument_names() -> None:
    e = expr("grad(y, x, create_graph=true, retain_graph=false)")
    assert [k for k, _ in e.kwargs] == ["create_graph", "retain_graph"]
    assert expr("x.requires_grad").name == "requires_grad"
    assert expr("y.backward(retain_graph=true, gradient=g)").kwargs[0][0] == "retain_graph"
    assert expr("x.retain_grad()").func.name == "retain_grad"


def test_to_is_a_name_except_after_graph() -> None:
    assert isinstance(one("to = 3"), S.Assign)
    assert isinstance(expr("x.to(float32)"), A.Call)


@pytest.mark.parametrize("word", ["true", "True", "false", "False", "none", "None"])
def test_constants_in_both_spellings(word: str) -> None:
    assert isinstance(expr(word), A.Const)


def test_numbers_and_strings() -> None:
    assert expr("3").value == 3 and isinstance(expr("3").value, int)
    assert expr("3.").value == 3.0 and isinstance(expr("3.").value, float)
    assert expr("0.5").value == 0.5 and expr("1e-3").value == 1e-3 and expr(".5").value == 0.5
    assert expr('"a\\"b\\n"').value == 'a"b\n' and expr("'single'").value == "single"


def test_negative_numbers_in_a_list_literal_make_a_tensor_literal() -> None:
    assert expr("[-1, 2, -3.5]").data == [-1, 2, -3.5]
    assert isinstance(expr("[a, 2]"), A.ListExpr)


# -- precedence (the values are checked in test_lang_statements) ------------------------------------


def test_precedence_tree_shapes() -> None:
    e = expr("-2**2")
    assert isinstance(e, A.Unary) and isinstance(e.operand, A.Power)
    e = expr("2**3**2")
    assert isinstance(e, A.Power) and isinstance(e.exponent, A.Power)
    e = expr("a + b * c")
    assert isinstance(e, A.Chain) and isinstance(e.ops[0][1], A.Chain)
    e = expr("not a == b")
    assert isinstance(e, A.Not) and isinstance(e.operand, A.Compare)
    e = expr("a or b and c")
    assert isinstance(e, A.BoolOp) and e.op == "or" and isinstance(e.values[1], A.BoolOp)
    e = expr("a < b + 1")
    assert isinstance(e, A.Compare) and isinstance(e.right, A.Chain)
    e = expr("x.sum(dim=0)[1] ** 2")
    assert isinstance(e, A.Power) and isinstance(e.base, A.Index)


def test_a_long_sum_is_one_flat_chain() -> None:
    e = expr(" + ".join(["x"] * 1000))
    assert isinstance(e, A.Chain) and len(e.ops) == 999


# -- deep input -------------------------------------------------------------------------------------


def test_ten_thousand_nested_parentheses_lower() -> None:
    assert isinstance(expr("(" * 10000 + "1" + ")" * 10000), A.Num)


def test_a_hundred_thousand_term_sum_lowers() -> None:
    e = expr("+".join(["1"] * 100_000))
    assert isinstance(e, A.Chain) and len(e.ops) == 99_999


def test_deeply_nested_lists_lower() -> None:
    e = expr("[" * 3000 + "1" + "]" * 3000)
    assert isinstance(e, A.NumList)


def test_blocks_nested_too_deeply_are_a_clean_error() -> None:
    source = "".join("    " * i + "if x:\n" for i in range(150)) + "    " * 150 + "y\n"
    with pytest.raises(SyntaxProblem, match="nested more than"):
        parse(source)


# -- the cached parser ------------------------------------------------------------------------------


def test_the_grammar_is_found() -> None:
    assert Path(grammar_path()) == ROOT / "grammar" / "gradcalc.lark"


def test_parser_cache_lives_in_a_private_user_directory(tmp_path: Path) -> None:
    code = (
        "import gradcalc.lang.statements; from gradcalc.lang.syntax.parser import get_parser, cache_file, grammar_path;"
        "get_parser(); print(cache_file(open(grammar_path(), encoding='utf-8').read()))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    path = Path(
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    assert path.parent == tmp_path / "gradcalc" and path.exists()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stamp = path.stat().st_mtime_ns
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert path.stat().st_mtime_ns == stamp  # loaded, not rebuilt


def test_a_world_writable_cache_directory_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gradcalc").mkdir(mode=0o777)
    os.chmod(tmp_path / "gradcalc", 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_file("grammar") is None


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path))
    target = cache_file("grammar")
    assert target is not None and Path(target).parent == tmp_path / ".cache" / "gradcalc"
