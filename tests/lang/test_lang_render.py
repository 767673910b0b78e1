"""--format plain and --format json (LANGUAGE.md section 6), and the torch format's reprs (section 1)."""

from __future__ import annotations

import json

import pytest
from gclang_testing import out


@pytest.mark.parametrize(
    "source, printed",
    [
        ("6", "6"),
        ("0.5", "0.5"),
        ("x = 2 requires_grad\nbackward sin(x ** 2)\nx.grad", "-2.6145744834544478"),
        ("[0, 1, 0]", "0 1 0"),
        ("[[1, 2], [3, 4]]", "1 2\n3 4"),
        ("[[[1, 2]], [[3, 4]]]", "1 2\n\n3 4"),
        ("true", "true"),
        ("false", "false"),
        ("none", "none"),
        ("[1, 2] > 1", "false true"),
        ("x = 1 requires_grad\n(x * 2).grad_fn", "MulBackward0"),
        ("zeros(2, 3).shape", "2 3"),
        ("tensor([0.1, 0.25], dtype=float32)", "0.1 0.25"),
        ("1e20", "1e+20"),
        ("[inf, -inf, nan]", "inf -inf nan"),
        ("len([1, 2])", "2"),
        ("'text'", "text"),
        ("x = 1 requires_grad\ngrad(x * 3, x)", "3"),
        ("-0.0", "-0"),
    ],
)
def test_plain(source: str, printed: str) -> None:
    assert out(source, format="plain") == printed + "\n"


def test_plain_print_statement() -> None:
    assert (
        out("x = 0.5 requires_grad\ny = sin(x)\nbackward y\nprint 'grad', x.grad", format="plain")
        == "grad 0.8775825618903728\n"
    )


def test_json_tensors() -> None:
    text = out("x = [1, 2] requires_grad\nx * 2\n[[1, 2], [3, 4]]\n", format="json")
    first, second = (json.loads(line) for line in text.splitlines())
    assert first == {
        "value": [2.0, 4.0],
        "shape": [2],
        "dtype": "float64",
        "requires_grad": True,
        "is_leaf": False,
        "grad_fn": "MulBackward0",
    }
    assert second == {
        "value": [[1.0, 2.0], [3.0, 4.0]],
        "shape": [2, 2],
        "dtype": "float64",
        "requires_grad": False,
        "is_leaf": True,
        "grad_fn": None,
    }


def test_json_other_values() -> None:
    text = out(
        "true\nnone\nlen([1, 2])\n'a'\nzeros(2, 3).shape\nx = 1 requires_grad\n(x * 2).grad_fn\nx.dtype\n"
        "print 'loss', 2\n",
        format="json",
    )
    assert [json.loads(line) for line in text.splitlines()] == [
        {"value": True},
        {"value": None},
        {"value": 2},
        {"value": "a"},
        {"value": [2, 3]},
        {"value": "MulBackward0"},
        {"value": "float64"},
        {"value": "loss"},
        {
            "value": 2.0,
            "shape": [],
            "dtype": "float64",
            "requires_grad": False,
            "is_leaf": True,
            "grad_fn": None,
        },
    ]


def test_json_non_finite_numbers_use_pythons_json() -> None:
    assert json.loads(out("[nan, inf]", format="json"))["value"][1] == float("inf")


def test_torch_format_float32_shows_its_dtype() -> None:
    assert (
        out("tensor([1, 2], dtype=float32)\n[1, 2].float()\n")
        == "tensor([1., 2.], dtype=float32)\ntensor([1., 2.], dtype=float32)\n"
    )
