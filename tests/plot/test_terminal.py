"""The terminal plot, cell by cell on tiny canvases, against plots worked out by hand.

How the expected cells are derived (independently of the library): a plot area `w` cells wide and `h`
high has 2w x 4h braille dots; a point (x, y) lands on dot column round((2w - 1)(x - lo)/(hi - lo)) and
dot row round((4h - 1)(y - ylo)/(yhi - ylo)) counted from the bottom. A braille character is
U+2800 plus the bits of its set dots, by Unicode's numbering (left column top to bottom 0x01, 0x02,
0x04, 0x40; right column 0x08, 0x10, 0x20, 0x80). With w = 4, h = 2 and the 8 points x = k/7 both
scales are 7 dots per unit, so each point is exactly on a dot.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.plotting import Curve, Figure, make_figure, render_terminal, terminal_width

ANSI = re.compile(r"\x1b\[[0-9;]*m")

# dot (column within the cell, row within the cell from the top) -> bit
BITS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}


def braille(*dots: tuple[int, int]) -> str:
    return chr(0x2800 + sum(BITS[d] for d in dots))


def expected_cells(dots: list[tuple[int, int]], w: int, h: int) -> list[str]:
    """Rows of characters for dots given as (column, row from the bottom) on a 2w x 4h grid."""
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for col, row in dots:
        top = 4 * h - 1 - row
        cells.setdefault((top // 4, col // 2), []).append((col % 2, top % 4))
    return ["".join(braille(*cells[(r, c)]) if (r, c) in cells else " " for c in range(w)) for r in range(h)]


def plot_area(text: str) -> list[str]:
    """The characters inside the frame, one string per row."""
    lines = ANSI.sub("", text).splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┌"))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("└"))
    return [line[1 : line.index("│", 1)] for line in lines[top + 1 : bottom]]


K = np.arange(8)


def test_hand_worked_example_of_the_encoding() -> None:
    # the helper itself, on the diagonal: dots (k, k)
    assert expected_cells([(k, k) for k in range(8)], 4, 2) == ["  ⡠⠊", "⡠⠊  "]


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


def test_step_is_joined_by_a_vertical_line() -> None:
    # y = 1 for the first four points, 2 for the last four: the segment from dot (3, 0) to (4, 7) is
    # steep, so it sets one dot per row: row j at column round(3 + j/7) -- 3 for j <= 3, 4 above
    step = np.where(K < 4, 1.0, 2.0)
    fig = Figure("x", K / 7, (Curve("step", step),))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    dots = [(k, 0) for k in range(4)] + [(k, 7) for k in range(4, 8)]
    dots += [(3, j) for j in range(1, 4)] + [(4, j) for j in range(4, 7)]
    assert area == expected_cells(dots, 4, 2)


def test_x_axis_drawn_where_zero_is() -> None:
    # y = x on [-1, 1]: 0 is half way up, on the boundary between the two cell rows; the axis is drawn
    # as a line along the bottom of the upper row ("▁") in the cells the curve leaves empty
    fig = Figure("x", -1 + 2 * K / 7, (Curve("x", -1 + 2 * K / 7),))
    area = plot_area(render_terminal(fig, plot_columns=4, height=2, color=False).text)
    diagonal = expected_cells([(k, k) for k in range(8)], 4, 2)
    assert area == ["▁▁" + diagonal[0][2:], diagonal[1]]


def test_no_x_axis_when_zero_is_out_of_range() -> None:
    fig = Figure("x", K / 7, (Curve("y", 1 + K / 7),))
    text = render_terminal(fig, plot_columns=4, height=2, color=False).text
    assert "▁" not in text and "─" not in "".join(plot_area(text))


def test_legend_axes_ranges_and_caption() -> None:
    fig = make_figure([("sin(t)", torch.sin)], "t", -np.pi, np.pi, order=2, n=64)
    text = render_terminal(fig, 80, color=False).text
    lines = text.splitlines()
    legend = next(line for line in lines if "⣿⣿" in line)
    assert re.search(r"⣿⣿ sin\(t\)\s+⣿⣿ d/dt sin\(t\)\s+⣿⣿ d²/dt² sin\(t\)", legend)
    assert lines[-1].startswith("t: -3.14159 to 3.14159   y: -")
    assert "clipped" not in lines[-1]
    # tick labels: y on the right of the frame, x below it
    assert any(line.endswith("│ 0") for line in lines)
    x_labels = lines[lines.index(next(line for line in lines if line.startswith("└"))) + 1]
    assert x_labels.split() == ["-3", "-2", "-1", "0", "1", "2", "3"]


def test_clipped_range_is_said() -> None:
    fig = make_figure([("tan(x)", torch.tan)], "x", -np.pi, np.pi, n=320)
    caption = render_terminal(fig, 80, color=False).text.splitlines()[-1]
    assert caption.endswith("(clipped: the curves go beyond)")
    top = float(caption.split("y: ")[1].split(" to ")[1].split()[0])
    assert 5 < top < 50


@pytest.mark.parametrize("columns", [40, 80, 123])
def test_width_is_the_terminal_width(columns: int) -> None:
    fig = make_figure([("sin(x)", torch.sin), ("cos(x)", torch.cos)], "x", 0, 6, n=4 * columns)
    text = render_terminal(fig, columns, color=True).text
    widths = [len(line) for line in ANSI.sub("", text).splitlines()]
    assert max(widths) == columns


def test_default_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 80  # pytest's output is not a terminal
    monkeypatch.setenv("COLUMNS", "100")
    assert terminal_width() == 100
    fig = make_figure([("x", lambda x: x)], "x", 0, 1, n=20)
    assert max(len(line) for line in render_terminal(fig, color=False).text.splitlines()) == 100


def test_colour_per_curve() -> None:
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    text = render_terminal(fig, 60, color=True).text
    area = "\n".join(text.splitlines()[1:17])
    codes = set(re.findall(r"\x1b\[(\d+)m", area)) - {"0"}
    assert codes == {"34", "35"}  # blue, magenta: one per curve
    legend = next(line for line in text.splitlines() if "⣿⣿" in line)
    assert "\x1b[34m⣿⣿\x1b[0m x" in legend and "\x1b[35m⣿⣿\x1b[0m 1 - x" in legend


def test_no_colour() -> None:
    fig = make_figure([("x", lambda x: x), ("1 - x", lambda x: 1 - x)], "x", 0, 1, n=64)
    assert "\x1b" not in render_terminal(fig, 60, color=False).text


def test_curve_without_a_finite_value_is_skipped_with_a_warning() -> None:
    fig = make_figure([("sin(x)", torch.sin), ("log(-1 - x)", lambda x: torch.log(-1 - x))], "x", 0, 1, n=32)
    out = render_terminal(fig, 60, color=False)
    assert out.warnings == ("log(-1 - x) is not finite anywhere in the range; it is not drawn",)
    assert "sin(x)" in out.text and "log(-1 - x)" not in out.text


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
    assert "⣿⣿ far" in text


def test_gap_in_sampled_curve_is_empty_cells() -> None:
    # sqrt is not finite left of 0: the left half of the plot area is empty
    fig = make_figure([("sqrt(x)", torch.sqrt)], "x", -1, 1, n=160)
    area = plot_area(render_terminal(fig, plot_columns=40, height=8, color=False).text)
    assert all(set(row[:19]) <= {" ", "▁", "▔", "─"} for row in area)
    assert any(row[21:].strip() for row in area)
