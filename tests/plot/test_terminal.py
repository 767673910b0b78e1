"""The terminal plot, cell by cell on tiny canvases, against plots worked out by hand.

How the expected cells are derived (independently of the library): a plot area `w` cells wide and `h`
high has 2w x 4h braille dots; a point (x, y) lands on dot column (2w - 1)(x - lo)/(hi - lo) and dot row
(4h - 1)(y - ylo)/(yhi - ylo) counted from the bottom, rounded half to even -- the range's ends on the
first and last dots. A braille character is U+2800 plus the bits of its set dots, by Unicode's numbering
(left column top to bottom 0x01, 0x02, 0x04, 0x40; right column 0x08, 0x10, 0x20, 0x80); an empty cell
is U+2800 itself. With w = 4, h = 2 and the 8 points x = k/7 both scales are 7 dots per unit, so each
point is exactly on a dot.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.plotting import Curve, Figure, make_figure, render_terminal, terminal_width
from gradcalc.plotting.terminal import plot_columns_for

ANSI = re.compile(r"\x1b\[[0-9;]*m")
EMPTY = chr(0x2800)

# dot (column within the cell, row within the cell from the top) -> bit
BITS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}


def braille(*dots: tuple[int, int]) -> str:
    return chr(0x2800 + sum(BITS[d] for d in set(dots)))


def expected_cells(dots: list[tuple[int, int]], w: int, h: int) -> list[str]:
    """Rows of characters for dots given as (column, row from the bottom) on a 2w x 4h grid."""
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for col, row in dots:
        top = 4 * h - 1 - row
        cells.setdefault((top // 4, col // 2), []).append((col % 2, top % 4))
    return ["".join(braille(*cells.get((r, c), [])) for c in range(w)) for r in range(h)]


def plot_area(text: str) -> list[str]:
    """The cells of the plot area, one string per row: what follows the y labels' " | "."""
    return [line[13:] for line in ANSI.sub("", text).splitlines() if line[10:13] == " | " and line[:10].strip()]


K = np.arange(8)


def test_hand_worked_example_of_the_encoding() -> None:
    # the helper itself, on the diagonal: dots (k, k)
    assert expected_cells([(k, k) for k in range(8)], 4, 2) == [EMPTY * 2 + "⡠⠊", "⡠⠊" + EMPTY * 2]


def test_diagonal_line() -> None:
    fig = Figure("x", K / 7, (Curve("y", 1 + K / 7),))  # y from 1 to 2: 0 not in range, no x axis
    out = render_terminal(fig, plot_columns=4, height=2, color=False)
    assert plot_area(out.text) == expected_cells([(k, k) for k in range(8)], 4, 2)
    assert out.warnings == ()


def test_horizontal_lines_and_a_gap() -> None:
    low = np.ones(8)
    low[3:5] = np.nan  # a gap over dot columns 3 and 4
    fig = Figure("x", K / 7, (Curve("low", low), Curve("high", np.full(8, 2.0))))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    want_low = expected_cells([(k, 0) for k in (0, 1, 2, 5, 6, 7)], 4, 2)
    want_high = expected_cells([(k, 7) for k in range(8)], 4, 2)
    assert area == [want_high[0], want_low[1]]
    assert area == ["⠉⠉⠉⠉", "⣀⡀⢀⣀"]


def test_curves_sharing_cells_keep_all_their_dots() -> None:
    # one cell row: the low curve on the bottom dot row, the high one on the top dot row
    low = np.ones(8)
    low[3:5] = np.nan
    fig = Figure("x", K / 7, (Curve("low", low), Curve("high", np.full(8, 2.0))))
    area = plot_area(render_terminal(fig, plot_columns=4, height=1, color=False).text)
    dots = [(k, 0) for k in (0, 1, 2, 5, 6, 7)] + [(k, 3) for k in range(8)]
    assert area == expected_cells(dots, 4, 1) == ["⣉⡉⢉⣉"]


def test_step_is_joined_by_a_vertical_line() -> None:
    # y = 1 for the first four points, 2 for the last four: the segment from dot (3, 0) to (4, 7) is
    # steep, so it sets one dot per row: row j at column 3 + j/7 rounded -- 3 for j <= 3, 4 above
    step = np.where(K < 4, 1.0, 2.0)
    fig = Figure("x", K / 7, (Curve("step", step),))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    dots = [(k, 0) for k in range(4)] + [(k, 7) for k in range(4, 8)]
    dots += [(3, j) for j in range(1, 4)] + [(4, j) for j in range(4, 7)]
    assert area == expected_cells(dots, 4, 2)


def test_x_axis_drawn_where_zero_is() -> None:
    # y = x on [-1, 1]: 0 falls on dot row (0 + 1)/2 * 7 = 3.5, rounded half to even: row 4, the
    # bottom dot row of the upper cells; the axis sets that row's dots across the whole width
    fig = Figure("x", -1 + 2 * K / 7, (Curve("x", -1 + 2 * K / 7),))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    dots = [(k, k) for k in range(8)] + [(c, 4) for c in range(8)]
    assert area == expected_cells(dots, 4, 2)


def test_no_x_axis_when_zero_is_out_of_range() -> None:
    fig = Figure("x", K / 7, (Curve("y", 1 + K / 7),))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    assert area == expected_cells([(k, k) for k in range(8)], 4, 2)


def test_y_labels_give_the_range() -> None:
    fig = Figure("x", K / 7, (Curve("y", 1 + K / 7),))
    lines = render_terminal(fig, plot_columns=4, height=2, color=False).text.splitlines()
    labels = [line[:10].strip() for line in lines if line[10:12] == " |" and line[:10].strip()]
    assert labels == ["2", "1.5", "1"]  # the top of the range, then the bottom of each cell row


def test_legend_x_labels_and_caption() -> None:
    fig = make_figure([("sin(t)", torch.sin)], "t", -np.pi, np.pi, order=2, n=64)
    lines = render_terminal(fig, 80, color=False).text.splitlines()
    assert lines[-4:-1] == ["⠤⠤ sin(t)", "⠤⠤ d/dt sin(t)", "⠤⠤ d²/dt² sin(t)"]
    assert lines[-1] == "t: -3.14159 to 3.14159   y: -1 to 1"
    axis = next(line for line in lines if line.startswith("-----------|"))
    assert axis.endswith("-> (t)")
    ticks = lines[lines.index(axis) + 1].split()
    assert ticks[:2] == ["|", "-3.142"]  # the x range's start under the first column


def test_clipped_range_is_said() -> None:
    fig = make_figure([("tan(x)", torch.tan)], "x", -np.pi, np.pi, n=320)
    caption = render_terminal(fig, 80, color=False).text.splitlines()[-1]
    assert caption.endswith("(clipped: the curves go beyond)")
    top = float(caption.split("y: ")[1].split(" to ")[1].split()[0])
    assert 5 < top < 50


@pytest.mark.parametrize("columns", [40, 80, 123])
def test_width_is_the_terminal_width(columns: int) -> None:
    fig = make_figure([("sin(x)", torch.sin), ("cos(x)", torch.cos)], "x", 0, 6, n=4 * columns)
    text = render_terminal(fig, columns, color=False).text
    widths = [len(line) for line in text.splitlines()]
    assert columns - 10 < max(widths) <= columns
    assert len(plot_area(text)[0]) == plot_columns_for(columns, "x")


def test_plot_columns_rule() -> None:
    # 13 columns of y labels; the x axis line ends in "-> (x)"; the tick row grows 10 columns at a time
    assert plot_columns_for(80, "x") == 59
    assert plot_columns_for(123, "x") == 103
    assert plot_columns_for(123, "time") == 100
    assert plot_columns_for(5, "x") == 10  # a minimum, even if the lines wrap


def test_default_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 80  # pytest's output is not a terminal
    monkeypatch.setenv("COLUMNS", "100")
    assert terminal_width() == 100
    fig = make_figure([("x", lambda x: x)], "x", 0, 1, n=20)
    assert len(plot_area(render_terminal(fig, color=False).text)[0]) == plot_columns_for(100, "x")


def test_colour_per_curve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # the library colours only a terminal's output
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    text = render_terminal(fig, 60, color=True).text
    area = "\n".join(line for line in text.splitlines() if line[10:13] == " | ")
    assert set(re.findall(r"\x1b\[(\d+)m", area)) - {"0"} == {"34", "35"}  # blue, magenta
    lines = text.splitlines()
    assert lines[-3:-1] == ["\x1b[34m⠤⠤ x\x1b[0m", "\x1b[35m⠤⠤ 1 - x\x1b[0m"]


def test_no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    assert "\x1b" not in render_terminal(fig, 60, color=False).text


def test_no_colour_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    fig = make_figure([("x", lambda x: x)], "x", 0, 1, n=64)
    assert "\x1b" not in render_terminal(fig, 60, color=True).text


def test_curve_without_a_finite_value_is_skipped_with_a_warning() -> None:
    fig = make_figure([("sin(x)", torch.sin), ("log(-1 - x)", lambda x: torch.log(-1 - x))], "x", 0, 1, n=32)
    out = render_terminal(fig, 60, color=False)
    assert out.warnings == ("log(-1 - x) is not finite anywhere in the range; it is not drawn",)
    assert "⠤⠤ sin(x)" in out.text and "log(-1 - x)" not in out.text


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
    text = render_terminal(fig, 60, color=False).text
    assert "⠤⠤ far" in text.splitlines()


def test_gap_in_sampled_curve_is_empty_cells() -> None:
    # sqrt is not finite left of 0: the left half of the plot area is empty but for the x axis
    fig = make_figure([("sqrt(x)", torch.sqrt)], "x", -1, 1, n=160)
    area = plot_area(render_terminal(fig, plot_columns=40, height=8, color=False).text)
    axis_only = {EMPTY, braille((0, 3), (1, 3))}  # y = 0 is the bottom dot row
    assert all(set(row[:19]) <= axis_only for row in area)
    assert any(set(row[21:]) - axis_only for row in area)
