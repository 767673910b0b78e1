"""The language's code only gets better typed: the counts of `Any` in its annotations (a bare `list`, `dict`,
`tuple`, `Callable`... counts as one, being `list[Any]`) and of `# type: ignore` comments in gradcalc/lang stay
at or below the ceilings committed here. Lower a ceiling when a change brings its count down; the type check
itself is `mypy` (strict on the modules pyproject.toml's [tool.mypy] lists; README, .ci/run)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

LANG = Path(__file__).resolve().parents[2] / "gradcalc" / "lang"
ANY_CEILING = 338
IGNORE_CEILING = 6
# generic types that mean `...[Any]` when written bare
_GENERIC = {"list", "dict", "tuple", "set", "frozenset", "type", "Callable", "Iterable", "Iterator", "Sequence"}


def _annotations(tree: ast.AST) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found += [p.annotation for p in params if p is not None and p.annotation is not None]
            if node.returns is not None:
                found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return found


def any_count(source: str) -> int:
    """How many `Any`s a module's annotations hold, explicit or implied by a bare generic."""
    count = 0
    for annotation in _annotations(ast.parse(source)):
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval").body
        subscripted = {id(n.value) for n in ast.walk(annotation) if isinstance(n, ast.Subscript)}
        for n in ast.walk(annotation):
            if isinstance(n, ast.Name) and (n.id == "Any" or (n.id in _GENERIC and id(n) not in subscripted)):
                count += 1
            elif isinstance(n, ast.Attribute) and n.attr == "Any":
                count += 1
    return count


def ignore_count(source: str) -> int:
    return len(re.findall(r"#\s*type:\s*ignore", source))


def test_the_counter_counts() -> None:
    source = ("def f(a: Any, b: list, c: list[int], d: dict[str, Any] | None) -> tuple:\n"
              "    x: Callable[..., Any] = g  # type: ignore[assignment]\n")
    assert any_count(source) == 5 and ignore_count(source) == 1


def test_any_and_type_ignores_do_not_grow() -> None:
    sources = [p.read_text(encoding="utf-8") for p in sorted(LANG.rglob("*.py"))]
    anys = sum(any_count(s) for s in sources)
    ignores = sum(ignore_count(s) for s in sources)
    assert anys <= ANY_CEILING, f"{anys} Any in gradcalc/lang's annotations, more than the ceiling {ANY_CEILING}"
    assert ignores <= IGNORE_CEILING, f"{ignores} `# type: ignore` in gradcalc/lang, more than {IGNORE_CEILING}"
