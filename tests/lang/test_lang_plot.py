"""The `plot` statement (LANGUAGE.md §8): samples and exact derivatives against closed forms, outputs, errors."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from gclang_testing import run


def rows(source: str) -> np.ndarray:
    r = run(source, format="plain")
    assert r.ok, r.err
    return np.array([[float(v) for v in line.split()] for line in r.out.splitlines()])


def test_derivatives_are_exact() -> None:
    data = rows("plot sin(x), x**3 - 2*x for x in [-2, 2] order 3")
    x = data[:, 0]
    expected = [np.sin(x), np.cos(x), -np.sin(x), -np.cos(x), x**3 - 2 * x, 3 * x**2 - 2, 6 * x, 6 + 0 * x]
    assert data.shape == (len(x), 9) and x[0] == -2 and x[-1] == 2
    for k, e in enumerate(expected):
        np.testing.assert_allclose(data[:, k + 1], e, rtol=1e-12, atol=1e-12)


def test_other_names_are_read_and_the_name_is_local() -> None:
    r = run("x = 5\na = 3\nplot a * x for x in [0, 1] order 1\nx", format="plain")
    assert r.ok, r.err
    lines = r.out.splitlines()
    assert lines[-1] == "5"
    x, f, d = map(float, lines[-2].split())
    assert x == 1 and f == 3 and d == 3


def test_not_elementwise_falls_back_to_one_point_at_a_time() -> None:
    data = rows("plot x * mean(x) for x in [1, 2] order 1")
    np.testing.assert_allclose(data[:, 1], data[:, 0] ** 2, rtol=1e-12)
    np.testing.assert_allclose(data[:, 2], 2 * data[:, 0], rtol=1e-12)


def test_constant_has_zero_derivatives() -> None:
    data = rows("plot 2 for x in [0, 1] order 2")
    assert (data[:, 1] == 2).all() and (data[:, 2:] == 0).all()


def test_json_names_the_curves() -> None:
    r = run("plot sin(x) for x in [0, pi] order 1", format="json")
    obj = json.loads(r.out)
    assert [c["name"] for c in obj["curves"]] == ["sin(x)", "d/dx sin(x)"]
    assert math.isclose(obj["points"][-1], math.pi)


def test_terminal_plot_has_legend_and_range() -> None:
    r = run("plot sin(x) for x in [0, 3] order 1")
    assert r.ok, r.err
    assert "sin(x)" in r.out and "d/dx sin(x)" in r.out and "x: 0 to 3" in r.out
    assert any("\u2800" <= ch <= "\u28ff" for ch in r.out)  # braille


def test_from_a_pipe_the_plot_is_readable_without_colour(tmp_path) -> None:  # noqa: ANN001
    """`gradcalc` writing into a pipe (no colour): the issue's plot, read as a user reads it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root, "COLUMNS": "80"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "gradcalc", "-e", "plot x**3 - 2*x for x in [-2, 2] order 1"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "" and "\x1b" not in done.stdout
    lines = done.stdout.splitlines()
    k = next(i for i, line in enumerate(lines) if "└" in line)
    w = lines[k].index("└") - 1
    labels = [line[:w].strip() for line in lines[:k]]
    # round ticks every 2 from -4 to 10 (the range of x**3 - 2*x and 3*x**2 - 2 on [-2, 2])
    assert [t for t in labels if t] == ["10", "8", "6", "4", "2", "0", "-2", "-4"]
    assert lines[k + 1].split() == ["-2", "-1", "0", "1", "2"]
    assert lines[-1] == "x: -2 to 2   y: -4 to 10"
    # 0 on the row where it falls: (10 - 0) / (10 - -4) of the way down from the top row to the bottom one
    rows = k
    zero = round(10 / 14 * (rows - 1))
    assert labels[zero] == "0" and lines[zero][w + 1] == "┼" and "─" in lines[zero]
    # the two curves' markers differ, and each is in the plot
    legend = lines[k + 2:-1]
    assert [e[2:] for e in legend] == ["x**3 - 2*x", "d/dx (x**3 - 2*x)"]
    markers = {e[0] for e in legend}
    assert len(markers) == 2 and all(any(m in line[w + 2:] for line in lines[:k]) for m in markers)


def test_non_finite_everywhere_warns() -> None:
    r = run("plot log(x) for x in [-2, -1]")
    assert r.ok and r.warnings == ["log(x) is not finite anywhere in the range; it is not drawn"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("plot sin(x) for x in [1, 0]", "plot: the range [1, 0] is empty"),
        ("plot sin(x) for x in [0, 1] order 4", "plot: order is a whole number from 0 to 3, not 4"),
        ("plot sin(x) for x in [0, inf]", "plot: the high end must be finite"),
        ('plot sin(x) for x in [0, 1] to "f.txt"', "can't write the plot to 'f.txt': the file name must end in"),
        ("plot sin(x) for x in [0, 1] to 3", "plot ... to needs a file name"),
    ],
)
def test_bad_input(source: str, message: str) -> None:
    r = run(source)
    assert not r.ok and r.errors[0].startswith(message), r.err


def test_range_must_be_a_pair() -> None:
    r = run("plot sin(x) for x in 3")
    assert not r.ok and "is written [LO, HI]" in r.errors[0]


def test_svg_file(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("matplotlib")
    path = tmp_path / "trig.svg"
    r = run(f'plot sin(x), cos(x) for x in [0, 2*pi] to "{path}"')
    assert r.ok, r.err
    texts = "".join(el.text or "" for el in ET.parse(path).iter() if el.tag.endswith("text"))
    assert path.stat().st_size > 1000 and r.out == ""
    assert "sin(x)" in path.read_text() or "sin(x)" in texts
