"""The terminal plot (LANGUAGE.md §8), read back as a user reads it: the rows and their labels, the x axis and
its labels, the zero lines, the legend and the caption -- checked against the mathematics of the plotted
functions and of round numbers, not against a stored picture.

What a plot promises, and how it is checked:
- each row stands for one value, evenly spaced from the caption's y range (top row: its high end, bottom row:
  its low end); each column for one x value, from LO (first column) to HI (last column);
- ticks at round numbers (1, 2 or 5 times a power of ten), labels short, each on the row (column) of its value;
- the line y = 0 on the row where 0 falls, x = 0 on the column where 0 falls;
- a curve's value at a column is drawn on the row nearest to it;
- without colour each curve has its own marker, in the legend and in the plot.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.plotting import Curve, Figure, make_figure, render_terminal, terminal_width
from gradcalc.plotting.terminal import MARKERS, plot_columns_for

ANSI = re.compile(r"\x1b\[[0-9;]*m")
EMPTY = chr(0x2800)
BRAILLE = {chr(c) for c in range(0x2800, 0x2900)}


@dataclass
class Plot:
    labels: list[str]  # each row's y label ("" for none), top to bottom
    edges: list[str]  # each row's frame character
    cells: list[str]  # each row's plot cells
    axis: str  # the x axis line's cells
    name: str  # what follows the x axis line
    x_labels: str  # the x label line
    left: int  # where the plot's first column is in a line
    legend: list[str]
    caption: str

    @property
    def columns(self) -> int:
        return len(self.cells[0])

    @property
    def rows(self) -> int:
        return len(self.cells)

    def ranges(self) -> tuple[float, float, float, float]:
        m = re.fullmatch(r"\S+: (\S+) to (\S+)   y: (\S+) to (\S+)( \(clipped: the curves go beyond\))?", self.caption)
        assert m, self.caption
        return float(m[1]), float(m[2]), float(m[3]), float(m[4])

    def y_ticks(self) -> list[tuple[int, str]]:
        return [(r, t) for r, t in enumerate(self.labels) if t]

    def x_ticks(self) -> list[tuple[int, str]]:
        """(column, label) of each labelled tick: the label centred under the column's `┬`."""
        marks = [c for c, ch in enumerate(self.axis) if ch == "┬"]
        found = []
        for m in re.finditer(r"\S+", self.x_labels):
            centre = m.start() - self.left + (len(m[0]) - 1) // 2
            assert centre in marks, (m[0], centre, marks)
            found.append((centre, m[0]))
        return found


def parse(text: str) -> Plot:
    lines = ANSI.sub("", text).splitlines()
    k = next(i for i, line in enumerate(lines) if "└" in line)
    w = lines[k].index("└") - 1  # the y labels' width
    rows = lines[:k]
    for line in rows:
        assert line[w] == " " and line[w + 1] in "│┤┼", line
    cells = [line[w + 2:] for line in rows]
    columns = len(cells[0])
    axis = lines[k][w + 2: w + 2 + columns]
    return Plot(
        labels=[line[:w].strip() for line in rows], edges=[line[w + 1] for line in rows], cells=cells,
        axis=axis, name=lines[k][w + 2 + columns:].strip(), x_labels=lines[k + 1], left=w + 2,
        legend=lines[k + 2:-1], caption=lines[-1],
    )


def is_round_step(step: Decimal) -> bool:
    """1, 2 or 5 times a power of ten."""
    digits = step.normalize().as_tuple().digits
    return digits in ((1,), (2,), (5,))


def label_value(text: str) -> Decimal:
    assert re.fullmatch(r"-?(0|[1-9]\d*)(\.\d*[1-9])?(e-?[1-9]\d*)?", text), f"not a short number: {text!r}"
    return Decimal(text)


def check_round_ticks(values: list[Decimal], positions: list[int]) -> Decimal:
    """Evenly spaced round values at evenly spaced positions; returns the step."""
    assert len(values) >= 2
    steps = {abs(b - a) for a, b in zip(values, values[1:], strict=False)}
    assert len(steps) == 1, values
    step = steps.pop()
    assert is_round_step(step), values
    assert all(v % step == 0 for v in values), values  # multiples of the step: 0 would be a tick
    return step


FIGURES = {
    "cubic and its derivative": ([("x**3 - 2*x", lambda x: x**3 - 2 * x)], "x", -2.0, 2.0, 1),
    "sin on [-pi, pi]": ([("sin(x)", torch.sin)], "x", -math.pi, math.pi, 2),
    "a small bump": ([("0.1*exp(-x**2) - 0.05", lambda x: 0.1 * torch.exp(-(x**2)) - 0.05)], "x", -1.322, 1.39, 0),
    "tiny values": ([("x*1e-3", lambda x: x * 1e-3)], "x", -3.0, 3.0, 0),
    "large values": ([("exp(x)", torch.exp)], "t", 0.0, 20.0, 0),
    "off zero": ([("2 + x", lambda x: 2 + x)], "x", 0.5, 0.75, 0),
    "tan": ([("tan(x)", torch.tan)], "x", -math.pi, math.pi, 0),
}


@pytest.fixture(params=list(FIGURES), ids=list(FIGURES))
def plotted(request: pytest.FixtureRequest) -> tuple[Figure, Plot]:
    exprs, name, lo, hi, order = FIGURES[request.param]
    fig = make_figure(exprs, name, lo, hi, order, n=320)
    return fig, parse(render_terminal(fig, 80, color=False).text)


# -- ticks --------------------------------------------------------------------------------------------------
def test_y_ticks_are_round_short_and_on_the_row_of_their_value(plotted: tuple[Figure, Plot]) -> None:
    _, p = plotted
    _, _, lo, hi = p.ranges()
    ticks = p.y_ticks()
    values = [label_value(t) for _, t in ticks]
    step = check_round_ticks(values, [r for r, _ in ticks])
    assert 3 <= len(ticks) <= 8
    for (r, _), v in zip(ticks, values, strict=True):
        # each row stands for hi - r (hi - lo) / (rows - 1): the tick's value is its row's
        assert float(v) == pytest.approx(hi - r * (hi - lo) / (p.rows - 1), abs=1e-9 * float(step))
        assert p.edges[r] in "┤┼"
    assert all(e == "│" for r, e in enumerate(p.edges) if not p.labels[r])


def test_x_ticks_are_round_short_and_on_the_column_of_their_value(plotted: tuple[Figure, Plot]) -> None:
    _, p = plotted
    x_lo, x_hi, _, _ = p.ranges()
    ticks = p.x_ticks()
    values = [label_value(t) for _, t in ticks]
    check_round_ticks(values, [c for c, _ in ticks])
    assert 3 <= len(ticks) <= 7
    for (c, _), v in zip(ticks, values, strict=True):
        exact = (float(v) - x_lo) / (x_hi - x_lo) * (p.columns - 1)  # the column's value is nearest v
        assert abs(c - exact) <= 0.5 + 1e-9
    labels = p.x_labels.split()
    assert all(len(t) <= 6 for t in labels)  # short: no 0.0339, no -0.6441


def test_labels_are_written_short() -> None:
    def labels(lo: float, hi: float, f) -> tuple[list[str], list[str]]:  # noqa: ANN001
        p = parse(render_terminal(make_figure([("f", f)], "x", lo, hi, n=200), 80, color=False).text)
        return [t for _, t in p.y_ticks()], [t for _, t in p.x_ticks()]

    y, x = labels(-2, 2, lambda x: x)
    assert y == ["2", "1", "0", "-1", "-2"] and x == ["-2", "-1", "0", "1", "2"]
    y, _ = labels(0, 1, lambda x: x * 1e-3)
    assert "1e-3" in y and all("0.00" not in t for t in y)
    y, _ = labels(-1, 1, lambda x: 0.5 * x)
    assert "0.5" in y and "-0.5" in y


# -- the zero lines -----------------------------------------------------------------------------------------
def test_the_line_y_0_is_on_the_row_where_0_falls(plotted: tuple[Figure, Plot]) -> None:
    _, p = plotted
    _, _, lo, hi = p.ranges()
    if not lo <= 0 <= hi:
        assert not any("─" in row for row in p.cells)
        return
    row = (hi - 0.0) / (hi - lo) * (p.rows - 1)
    assert row == pytest.approx(round(row), abs=1e-9)  # 0 falls exactly on a row
    zero = round(row)
    assert p.labels[zero] == "0" and p.edges[zero] == "┼"
    assert set(p.cells[zero]) - BRAILLE - set(MARKERS) <= {"─", "┼"}  # the axis where no curve passes
    assert EMPTY not in p.cells[zero]  # every cell a curve leaves empty shows the axis
    assert all("─" not in row for r, row in enumerate(p.cells) if r != zero)


def test_the_line_x_0_is_on_the_column_where_0_falls(plotted: tuple[Figure, Plot]) -> None:
    _, p = plotted
    x_lo, x_hi, _, _ = p.ranges()
    columns = [c for c in range(p.columns) if any(row[c] in "│┼" for row in p.cells)]
    if not x_lo < 0 < x_hi:
        assert columns == []
        return
    exact = (0 - x_lo) / (x_hi - x_lo) * (p.columns - 1)
    assert len(columns) == 1 and abs(columns[0] - exact) <= 0.5 + 1e-9
    c = columns[0]
    assert all(row[c] in "│┼" or row[c] in BRAILLE - {EMPTY} or row[c] in MARKERS for row in p.cells)


# -- the curves ---------------------------------------------------------------------------------------------
def test_a_curve_is_drawn_on_the_row_nearest_its_value_at_each_column() -> None:
    # y = x on [0, 1], 21 columns: column c stands for c/20, whose row is the nearest row value
    fig = make_figure([("x", lambda x: x)], "x", 0, 1, n=400)
    p = parse(render_terminal(fig, plot_columns=21, color=False).text)
    _, _, lo, hi = p.ranges()
    for c in range(p.columns):
        v = c / (p.columns - 1)
        r = round((hi - v) / (hi - lo) * (p.rows - 1))
        assert p.cells[r][c] not in (EMPTY, " "), (c, r)
        # nothing far from it in that column
        assert all(p.cells[k][c] in (EMPTY, "─", "│") for k in range(p.rows) if abs(k - r) > 1), c


def test_a_gap_is_empty_cells() -> None:
    # sqrt is not finite left of 0: those columns hold nothing but the axis
    fig = make_figure([("sqrt(x)", torch.sqrt)], "x", -1, 1, n=160)
    p = parse(render_terminal(fig, plot_columns=41, color=False).text)
    for row in p.cells:
        assert set(row[:19]) <= {EMPTY, "─"}
    assert any(set(row[21:]) - {EMPTY, "─", "│"} for row in p.cells)


# -- curves apart -------------------------------------------------------------------------------------------
def test_without_colour_each_curve_has_its_own_marker_in_the_legend_and_in_the_plot() -> None:
    fig = make_figure([("sin(x)", torch.sin), ("cos(x)", torch.cos)], "x", 0, 2 * math.pi, order=1, n=320)
    text = render_terminal(fig, 80, color=False).text
    assert "\x1b" not in text
    p = parse(text)
    assert [e.split(" ", 1)[1] for e in p.legend] == ["sin(x)", "d/dx sin(x)", "cos(x)", "d/dx cos(x)"]
    markers = [e.split(" ", 1)[0] for e in p.legend]
    assert len(set(markers)) == 4
    area = "".join(p.cells)
    for m in markers:
        assert len(m) == 1 and m not in BRAILLE and m not in "│─┼┤┬└"
        assert area.count(m) >= 3  # along the whole curve, not once


def test_each_marker_sits_on_its_own_curve() -> None:
    fig = make_figure([("1", lambda x: x * 0 + 1), ("-1", lambda x: x * 0 - 1)], "x", 0, 1, n=100)
    p = parse(render_terminal(fig, 60, color=False).text)
    _, _, lo, hi = p.ranges()
    for value, marker in ((1.0, p.legend[0][0]), (-1.0, p.legend[1][0])):
        row = round((hi - value) / (hi - lo) * (p.rows - 1))
        assert [r for r, cells in enumerate(p.cells) if marker in cells] == [row]


def test_a_curve_seen_in_a_few_columns_still_shows_its_marker() -> None:
    x = np.linspace(0, 1, 200)
    narrow = np.where(np.abs(x - 0.51) < 0.01, 0.5, np.nan)
    fig = Figure("x", x, (Curve("wide", x), Curve("narrow", narrow)))
    p = parse(render_terminal(fig, 60, color=False).text)
    assert p.legend[1].startswith("+ ") and "+" in "".join(p.cells)


def test_colour_per_curve_and_no_markers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # the library colours only a terminal's output
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    text = render_terminal(fig, 60, color=True).text
    lines = text.splitlines()
    area = "\n".join(lines[:-5])
    assert set(re.findall(r"\x1b\[(\d+)m", area)) - {"0"} == {"34", "35"}  # blue, magenta
    assert lines[-3:-1] == ["\x1b[34m⠤⠤ x\x1b[0m", "\x1b[35m⠤⠤ 1 - x\x1b[0m"]
    assert not set(MARKERS) & set(ANSI.sub("", area))


def test_no_colour_when_the_library_would_not_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    # colour allowed, but NO_COLOR set: plain text, and then the markers tell the curves apart
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    text = render_terminal(fig, 60, color=True).text
    assert "\x1b" not in text
    assert [e[:2] for e in parse(text).legend] == ["* ", "+ "]


# -- frame, legend, caption ---------------------------------------------------------------------------------
def test_legend_and_caption_give_the_curves_and_the_axes_ranges() -> None:
    fig = make_figure([("sin(t)", torch.sin)], "t", -np.pi, np.pi, order=2, n=64)
    p = parse(render_terminal(fig, 80, color=False).text)
    assert p.legend == ["* sin(t)", "+ d/dt sin(t)", "o d²/dt² sin(t)"]
    assert p.caption == "t: -3.14159 to 3.14159   y: -1 to 1"
    assert p.name == "t"


def test_clipped_range_is_said() -> None:
    fig = make_figure([("tan(x)", torch.tan)], "x", -np.pi, np.pi, n=320)
    p = parse(render_terminal(fig, 80, color=False).text)
    assert p.caption.endswith("(clipped: the curves go beyond)")
    _, _, lo, hi = p.ranges()
    assert 5 < hi < 50 and -50 < lo < -5


@pytest.mark.parametrize("columns", [40, 80, 123])
def test_width_is_the_terminal_width(columns: int) -> None:
    fig = make_figure([("sin(x)", torch.sin), ("cos(x)", torch.cos)], "x", 0, 6, n=4 * columns)
    text = render_terminal(fig, columns, color=False).text
    widths = [len(line) for line in text.splitlines()]
    assert columns - 6 < max(widths) <= columns
    assert parse(text).columns == plot_columns_for(columns, "x", 4)


def test_plot_columns_rule() -> None:
    # the y labels and " ┤" on the left, " NAME" (at least 3 columns) on the right
    assert plot_columns_for(80, "x", 4) == 80 - 4 - 2 - 3
    assert plot_columns_for(80, "time", 2) == 80 - 2 - 2 - 5
    assert plot_columns_for(5, "x") == 10  # a minimum, even if the lines wrap


def test_default_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 80  # pytest's output is not a terminal
    monkeypatch.setenv("COLUMNS", "100")
    assert terminal_width() == 100
    fig = make_figure([("x", lambda x: x)], "x", 0, 1, n=20)
    text = render_terminal(fig, color=False).text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert parse(text).columns > 80


def test_at_most_the_given_height() -> None:
    for height in (5, 9, 17, 30):
        fig = make_figure([("x**2", lambda x: x**2)], "x", -3, 3, n=100)
        assert parse(render_terminal(fig, 80, color=False, height=height).text).rows <= height


def test_curve_without_a_finite_value_is_skipped_with_a_warning() -> None:
    fig = make_figure([("sin(x)", torch.sin), ("log(-1 - x)", lambda x: torch.log(-1 - x))], "x", 0, 1, n=32)
    out = render_terminal(fig, 60, color=False)
    assert out.warnings == ("log(-1 - x) is not finite anywhere in the range; it is not drawn",)
    assert parse(out.text).legend == ["* sin(x)"]


def test_nothing_finite_gives_no_plot() -> None:
    exprs = [("log(-1 - x)", lambda x: torch.log(-1 - x)), ("sqrt(-1 - x)", lambda x: torch.sqrt(-1 - x))]
    out = render_terminal(make_figure(exprs, "x", 0, 1, n=8), 60, color=False)
    assert out.text == ""
    assert len(out.warnings) == 2 and out.warnings[1].startswith("sqrt(-1 - x) is not finite")


def test_curve_wholly_outside_a_clipped_range_keeps_its_legend() -> None:
    x = np.linspace(-1, 1, 320)
    with np.errstate(divide="ignore"):
        pole = np.where(x == 0, np.nan, 1 / x)
    fig = Figure("x", x, (Curve("1/x", pole), Curve("far", np.full(320, 1e9))))
    assert parse(render_terminal(fig, 60, color=False).text).legend == ["* 1/x", "+ far"]
