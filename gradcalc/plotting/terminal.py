"""The terminal plot: braille curves drawn by plotille, in a frame with round ticks drawn here.

plotille's `Canvas` draws the braille (2 x 4 dots a cell, one colour per line, the dots of lines that share a
cell ORed; docs/plotting.md says why plotille); its `Figure` frame labels the axes at evenly spaced values
(`-1.322 -0.6441 0.0339`) and puts the y = 0 line on whichever row the dot falls in, so the frame, the ticks
and the zero lines are drawn here, around the canvas (LANGUAGE.md §8):

- rows and columns stand for exact values: the y axis from `ticks.y_axis` (ticks and 0 fall on rows), the x
  axis from LO (the first column) to HI (the last), with ticks on the nearest columns (`ticks.x_ticks`); the
  canvas's limits are set so that each value is drawn at the centre of its row and column;
- ticks at round numbers, labelled short (`-2 -1 0 1 2`, `0.5`, `1e-3`), on a frame of box-drawing lines;
- the line y = 0 on the row where 0 is, the line x = 0 on the column where 0 is, drawn as `─` and `│` in
  the cells no curve passes through (a curve is never hidden by an axis, and an axis never looks like a
  curve);
- curves apart without colour (NO_COLOR, pipes): each curve also carries its own marker (`*`, `+`, `o`,
  ...) every few columns, and the legend shows it; with colour, each curve has its colour instead;
- the legend (one entry per curve), then a caption with the axes' ranges.

plotille is imported inside `render_terminal`, so a plot to a file or in `--format json` never loads it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

from .figure import Curve, Figure, drawable
from .ticks import Tick, YAxis, column_of, x_ticks, y_axis
from .yrange import clip_to_frame, y_range

DEFAULT_HEIGHT = 17  # rows at most (ticks on rows decide the exact number): with the frame, legend and caption
#                      a plot fits a 24-line terminal
MIN_PLOT_COLUMNS = 10  # narrower terminals still get a (cramped) plot rather than an error

# One colour per curve, cycled: 8-colour ANSI names every terminal has.
COLORS = ("blue", "magenta", "green", "yellow", "cyan", "red")
# Without colour, one marker per curve, cycled: plain ASCII, none of them a frame or axis character.
MARKERS = ("*", "+", "o", "x", "#", "@", "%", "&")
MARKER_SPACING = 8  # columns between two markers of one curve (at least)
LEGEND_LINE = "⠤⠤"  # a curve's legend sample with colour

EMPTY = chr(0x2800)  # a braille cell with no dot
_CELL = re.compile(r"(?:\x1b\[[0-9;]*m)?[^\x1b](?:\x1b\[0m)?")


class Rendered(NamedTuple):
    """A finished plot: the text to print, and warnings for the caller to print (curves not drawn)."""

    text: str
    warnings: tuple[str, ...] = ()


def terminal_width() -> int:
    """The terminal's width in columns (COLUMNS if set), 80 when the output is not a terminal."""
    import shutil  # deferred: the language usually passes the width it already knows

    return shutil.get_terminal_size((80, 24)).columns


def plot_columns_for(width: int, name: str, label_width: int = 4) -> int:
    """How many cells wide the plot area can be for every line to fit in `width` columns: the y labels
    (`label_width` characters) and the frame's ` ┤` on the left, ` NAME` after the x axis on the right."""
    return max(MIN_PLOT_COLUMNS, width - label_width - 2 - max(len(name) + 1, 3))


def uses_colour(color: bool) -> bool:
    """Whether the curves will show in colour: allowed by the caller, and applied by plotille (standard output
    a terminal or FORCE_COLOR set, NO_COLOR unset -- plotille's policy, asked of plotille itself)."""
    if not color:
        return False
    import plotille

    return plotille.color("x", fg="blue", mode="names") != "x"


def render_terminal(
    figure: Figure,
    width: int | None = None,
    *,
    color: bool = True,
    height: int = DEFAULT_HEIGHT,
    plot_columns: int | None = None,
) -> Rendered:
    """The figure as a braille line plot at most `width` columns wide (the terminal's width if None).

    The plot area fills the width left by the frame (or is exactly `plot_columns` cells wide when given) and
    has at most `height` rows (`ticks.y_axis` picks the number that puts round ticks on rows). `color` off
    gives plain text with a marker per curve (NO_COLOR, batch output); on, it allows colour, which plotille
    then applies only when standard output is a terminal (or FORCE_COLOR is set) and never under NO_COLOR --
    the markers are drawn whenever the colour is not. A curve that is not finite anywhere is left out, with a
    warning naming it; when no curve is left the text is empty.
    """
    import plotille  # deferred: only terminal plots need it

    drawn, warnings = drawable(figure)
    shown = y_range([c.values for c in drawn])
    if shown is None:
        return Rendered("", tuple(warnings))
    axis = y_axis(shown.lo, shown.hi, height)
    label_width = max(len(t.label) for t in axis.ticks)
    total = width if width is not None else terminal_width()
    columns = plot_columns or plot_columns_for(total, figure.name, label_width)
    coloured = uses_colour(color)
    lo, hi = figure.lo, figure.hi

    # each row's and column's value at the centre of its cell: 2 dots a column, 4 a row
    dx = (hi - lo) / (2 * (columns - 1)) if columns > 1 else (hi - lo) / 2
    dy = axis.row_step / 4
    canvas = plotille.Canvas(
        columns, axis.rows, xmin=lo - 0.5 * dx, ymin=axis.lo - 1.5 * dy,
        xmax=lo - 0.5 * dx + 2 * columns * dx, ymax=axis.lo - 1.5 * dy + 4 * axis.rows * dy, mode="names",
    )
    legend = []
    marked: set[tuple[int, int]] = set()
    for index, curve in enumerate(drawn):
        lc = COLORS[index % len(COLORS)] if coloured else None
        x, y = clip_to_frame(figure.x, curve.values, axis.lo, axis.hi)
        for start, stop in _finite_runs(y):
            xs, ys = x[start:stop].tolist(), y[start:stop].tolist()  # Python floats: plotille rounds each one
            if len(xs) == 1:
                canvas.point(xs[0], ys[0], color=lc)
            for i in range(len(xs) - 1):
                canvas.line(xs[i], ys[i], xs[i + 1], ys[i + 1], color=lc)
        if coloured:
            legend.append(plotille.color(f"{LEGEND_LINE} {curve.label}", fg=lc, mode="names"))
        else:
            legend.append(f"{MARKERS[index % len(MARKERS)]} {curve.label}")
    if not coloured:
        # the curve seen in the fewest cells chooses its markers' cells first: a marker hides what else a
        # cell holds, so a curve that runs along another is not hidden under the other's markers
        seen = [int(np.sum(np.isfinite(c.values) & (c.values >= axis.lo) & (c.values <= axis.hi))) for c in drawn]
        for index in sorted(range(len(drawn)), key=seen.__getitem__):
            _place_markers(canvas, figure, drawn[index], axis, columns, index, len(drawn),
                           MARKERS[index % len(MARKERS)], marked)

    xt = x_ticks(lo, hi, columns)
    zero_column = column_of(0.0, lo, hi, columns) if lo < 0.0 < hi else None
    rows = [_CELL.findall(line) for line in canvas.plot(linesep="\n").split("\n")]
    lines = _framed(rows, axis, xt, zero_column, label_width, figure.name)
    caption = f"{figure.name}: {_num(lo)} to {_num(hi)}   y: {_num(axis.lo)} to {_num(axis.hi)}"
    if shown.clipped:
        caption += " (clipped: the curves go beyond)"
    return Rendered("\n".join([*lines, *legend, caption]), tuple(warnings))


def _place_markers(canvas: Any, figure: Figure, curve: Curve, axis: YAxis, columns: int, index: int, count: int,
                   marker: str, marked: set[tuple[int, int]]) -> None:
    """Put the curve's marker on it every MARKER_SPACING columns or so, each curve's columns shifted so that
    curves which run together do not put their markers in one cell; at least one marker on a drawn curve."""
    spacing = max(MARKER_SPACING, columns // 7)
    offset = (spacing * (2 * index + 1)) // (2 * count)
    lo, hi, x = figure.lo, figure.hi, figure.x
    samples = []
    for c in range(offset, columns, spacing):  # the sample nearest each chosen column's value
        xc = lo + (hi - lo) * c / max(columns - 1, 1)
        k = int(np.clip(np.searchsorted(x, xc), 0, x.size - 1))
        samples.append(k - 1 if k > 0 and abs(x[k - 1] - xc) < abs(x[k] - xc) else k)
    # a curve seen only in a few columns still gets one: its visible samples, from the middle out
    visible = np.flatnonzero(np.isfinite(curve.values) & (curve.values >= axis.lo) & (curve.values <= axis.hi))
    fallback = visible[np.argsort(np.abs(np.arange(visible.size) - visible.size // 2), kind="stable")].tolist()
    placed = False
    for n, k in enumerate(samples + fallback):
        if n >= len(samples) and placed:
            return
        v = curve.values[k]
        if not np.isfinite(v) or not axis.lo <= v <= axis.hi:
            continue
        cell = (column_of(x[k], lo, hi, columns), axis.row_of(v))
        if cell in marked:
            continue
        marked.add(cell)
        canvas.point(x[k], v, marker=marker)
        placed = True


def _framed(rows: list[list[str]], axis: YAxis, xt: tuple[Tick, ...], zero_column: int | None,
            label_width: int, name: str) -> list[str]:
    """The canvas's cells in the frame: y labels and ticks on the left, the zero lines in empty cells, the x
    axis with its ticks, labels and name below."""
    labels = {t.at: t.label for t in axis.ticks}
    out = []
    for r, cells in enumerate(rows):
        if r == axis.zero_row:
            cells = ["┼" if c == zero_column and cell == EMPTY else "─" if cell == EMPTY else cell
                     for c, cell in enumerate(cells)]
        elif zero_column is not None and cells[zero_column] == EMPTY:
            cells = [*cells[:zero_column], "│", *cells[zero_column + 1:]]
        tick = labels.get(r)
        edge = ("┼" if r == axis.zero_row else "┤") if tick is not None else "│"
        out.append(f"{(tick or ''):>{label_width}} {edge}{''.join(cells)}")
    columns = len(rows[0]) if rows else 0
    marks = {t.at for t in xt}
    axis_line = "".join("┬" if c in marks else "─" for c in range(columns))
    out.append(f"{'':>{label_width}} └{axis_line} {name}")
    out.append(_x_labels(xt, label_width + 2, columns))
    return out


def _x_labels(xt: tuple[Tick, ...], left: int, columns: int) -> str:
    """The x tick labels, each centred under its column; one that would touch the one before is left out."""
    line = ""
    for t in xt:
        start = max(left + t.at - (len(t.label) - 1) // 2, 0)
        if line and start < len(line) + 1:
            continue
        line = line.ljust(start) + t.label
    return line.rstrip()


def _finite_runs(values: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each stretch of consecutive finite values."""
    finite = np.concatenate(([False], np.isfinite(values), [False]))
    edges = np.flatnonzero(finite[1:] != finite[:-1])
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _num(value: float) -> str:
    """A short, exact-enough number for the caption: 6 significant digits, no trailing zeros."""
    return f"{value:.6g}"
