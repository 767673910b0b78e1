"""`--format plain` rows and the `--format json` object."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.plotting import Curve, Figure, make_figure, plain_number, render_json, render_plain


@pytest.mark.parametrize(
    "value, text",
    [(6.0, "6"), (0.5, "0.5"), (-2.6145744834544478, "-2.6145744834544478"), (1e20, "1e+20"), (-0.0, "-0"),
     (np.nan, "nan"), (0.1 + 0.2, "0.30000000000000004")],
)
def test_plain_number(value: float, text: str) -> None:
    assert plain_number(value) == text


def test_plain_rows() -> None:
    fig = make_figure([("x**2", lambda x: x**2)], "x", 0, 1, order=2, n=3)
    assert render_plain(fig) == "0 0 0 2\n0.5 0.25 1 2\n1 1 2 2"


def test_plain_columns_in_legend_order_with_gaps() -> None:
    fig = Figure("x", np.array([-1.0, 0.0]), (Curve("f", np.array([1.0, np.nan])), Curve("g", np.array([2.0, 3.0]))))
    assert render_plain(fig) == "-1 1 2\n0 nan 3"


def test_json_object() -> None:
    fig = make_figure([("1/t", lambda t: 1 / t), ("t", lambda t: t)], "t", -1, 1, order=1, n=3)
    obj = json.loads(render_json(fig))
    assert obj == {
        "name": "t",
        "points": [-1.0, 0.0, 1.0],
        "curves": [
            {"name": "1/t", "values": [-1.0, None, 1.0]},
            {"name": "d/dt (1/t)", "values": [-1.0, None, -1.0]},
            {"name": "t", "values": [-1.0, 0.0, 1.0]},
            {"name": "d/dt t", "values": [1.0, 1.0, 1.0]},
        ],
    }


def test_json_is_one_strict_line() -> None:
    fig = make_figure([("sin(x)", torch.sin)], "x", 0, 1, order=2, n=50)
    text = render_json(fig)
    assert "\n" not in text and "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["curves"][2]["name"] == "d²/dx² sin(x)"
