"""A plot's samples as text, for pipes into other tools: `--format plain` rows and `--format json`.

plain: one row per sample point, `x f [f' ...]`, the columns in legend order, numbers as the language's
plain format writes them (shortest round-trip decimal, no `.0` on whole values); a gap is `nan`.

json: one object, `{"name": "x", "points": [...], "curves": [{"name": "sin(x)", "values": [...]}, ...]}`,
a gap as null (strict JSON has no NaN).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .figure import Figure


def plain_number(value: float) -> str:
    """The shortest round-trip decimal without `.0` on whole values: 6, 0.5, -0, 1e+20, nan.

    The same rule as the language's `--format plain` (gradcalc/lang/render.py); kept here so the
    plotting core does not import the language layer.
    """
    text = str(float(value))
    return text[:-2] if text.endswith(".0") else text


def render_plain(figure: Figure) -> str:
    """Rows `x f [f' ...]`, one per sample point, joined by newlines (no trailing newline)."""
    columns = [figure.x, *(c.values for c in figure.curves)]
    table = np.stack(columns, axis=1)
    return "\n".join(" ".join(plain_number(v) for v in row) for row in table.tolist())


def figure_json(figure: Figure) -> dict[str, Any]:
    """The json object as Python data (NaN already None)."""
    return {
        "name": figure.name,
        "points": [float(v) for v in figure.x],
        "curves": [{"name": c.label, "values": _json_numbers(c.values)} for c in figure.curves],
    }


def render_json(figure: Figure) -> str:
    """The json object on one line."""
    return json.dumps(figure_json(figure), allow_nan=False)


def _json_numbers(values: np.ndarray) -> list[float | None]:
    return [v if np.isfinite(v) else None for v in values.tolist()]
