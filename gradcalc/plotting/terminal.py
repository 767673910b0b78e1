"""The terminal plot: a braille line plot drawn by plotille.

Why plotille (docs/plotting.md has the full comparison with uniplot and plotext):

- it draws braille (2x4 dots a cell) with one colour per line, ORing the dots of lines that share a
  cell (uniplot keeps only the last line's dots there), returns the plot as a string
  (`Figure.show`), takes exact axis limits, labels both axes with their ranges, and spans (our x axis);
- it has no dependencies and loads in about 10 ms; uniplot needs readchar, whose import looks up its
  own version in the installed packages' metadata, and its labels load NumPy's masked arrays -- together
  60 ms or more on the first plot, the whole time budget of a plot statement. (Once loaded, uniplot
  draws faster, rasterising with NumPy: 2 ms against plotille's 15 ms for three 320-point curves; but
  a script usually draws one plot, so the first one is what counts.)
- plotext 6 replaced its whole plotting interface (no `plot`, no `clf`) and keeps one global figure.

What plotille lacks we add around it, without drawing anything by hand: it raises on NaN, so each curve
is cut into its finite runs (one plotille line each); its legend would list every run, so the legend is
ours (one entry per curve, in the curve's colour); its y = 0 line comes with an x = 0 line, so the x
axis is a horizontal span instead.

plotille is imported here, inside `render_terminal`, so a plot to a file or in `--format json` never
loads it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .figure import Figure, drawable
from .yrange import clip_to_frame, y_range

DEFAULT_HEIGHT = 16  # rows of braille cells: 64 dot rows; with axes, legend and caption it fits 24 lines
MIN_PLOT_COLUMNS = 10  # narrower terminals still get a (cramped) plot rather than an error

# One colour per curve, cycled: 8-colour ANSI names every terminal has.
COLORS = ("blue", "magenta", "green", "yellow", "cyan", "red")

# plotille's frame around the plot area: 10 characters of y label and " | " on the left; the x axis
# line adds "-> (NAME)" on the right; the x tick row is 13 + 10 * (columns // 10) + 9 characters
_LEFT = 13
_X_AXIS_RIGHT = 6  # "-> (" + ")" + one more "-" than the area, around the name


class Rendered(NamedTuple):
    """A finished plot: the text to print, and warnings for the caller to print (curves not drawn)."""

    text: str
    warnings: tuple[str, ...] = ()


def terminal_width() -> int:
    """The terminal's width in columns (COLUMNS if set), 80 when the output is not a terminal."""
    import shutil  # deferred: the language usually passes the width it already knows

    return shutil.get_terminal_size((80, 24)).columns


def plot_columns_for(width: int, name: str) -> int:
    """How many cells wide the plot area can be for every line to fit in `width` columns."""
    by_axis = width - _LEFT - _X_AXIS_RIGHT - len(name)
    by_ticks = 10 * ((width - _LEFT - 9) // 10) + 9  # the tick row grows in steps of 10 columns
    return max(MIN_PLOT_COLUMNS, min(by_axis, by_ticks))


def render_terminal(
    figure: Figure,
    width: int | None = None,
    *,
    color: bool = True,
    height: int = DEFAULT_HEIGHT,
    plot_columns: int | None = None,
) -> Rendered:
    """The figure as a braille line plot at most `width` columns wide (the terminal's width if None).

    The plot area fills the width left after the axis labels (or is exactly `plot_columns` cells wide
    when given), `height` cells high; the x axis (y = 0) is drawn when 0 is in the y range; the y axis
    is labelled from the bottom of the range to its top, the x axis from its start; a legend names each
    curve in its colour, and a caption line gives the exact ranges. `color` off gives plain text (for
    NO_COLOR and batch output); on, it allows colour, which plotille then still applies only when
    standard output is a terminal (or FORCE_COLOR is set) and never under NO_COLOR. A curve that is
    not finite anywhere is left out, with a warning naming it; when no curve is left the text is empty.
    """
    import plotille  # deferred: only terminal plots need it

    drawn, warnings = drawable(figure)
    shown = y_range([c.values for c in drawn])
    if shown is None:
        return Rendered("", tuple(warnings))
    columns = plot_columns or plot_columns_for(width if width is not None else terminal_width(), figure.name)
    rows = max(1, height)

    fig = plotille.Figure()
    fig.width, fig.height = columns, rows
    fig.with_colors = color
    fig.origin = False  # it would draw x = 0 as well; the x axis is the span below
    fig.x_label, fig.y_label = figure.name, "y"
    fig.set_x_limits(figure.lo, figure.hi)
    fig.set_y_limits(shown.lo, shown.hi)
    # plotille pads tick labels with digits to 10 characters; 4 significant ones read better
    fig.x_ticks_fkt = _ticks(figure.hi - figure.lo)
    fig.y_ticks_fkt = _ticks(shown.hi - shown.lo)
    if shown.lo <= 0.0 <= shown.hi:
        # a span's height is a fraction of the range, placed on the dot row the value 0 falls on
        at = (0.0 - shown.lo) / (shown.hi - shown.lo)
        fig.axhline(at)

    # plotille puts a value v on dot round((v - lo) / (hi - lo) * dots), so hi itself falls one dot past
    # the edge; scaling by (dots - 1) / dots maps [lo, hi] onto the first and the last dot exactly
    sx = _squeeze(figure.lo, figure.hi, 2 * columns)
    legend = []
    for index, curve in enumerate(drawn):
        lc = COLORS[index % len(COLORS)]
        x, y = clip_to_frame(figure.x, curve.values, shown.lo, shown.hi)
        sy = _squeeze(shown.lo, shown.hi, 4 * rows)
        for start, stop in _finite_runs(y):
            fig.plot(sx(x[start:stop]).tolist(), sy(y[start:stop]).tolist(), lc=lc)
        legend.append(plotille.color(f"⠤⠤ {curve.label}", fg=lc, mode="names", no_color=not color))

    caption = f"{figure.name}: {_num(figure.lo)} to {_num(figure.hi)}   y: {_num(shown.lo)} to {_num(shown.hi)}"
    if shown.clipped:
        caption += " (clipped: the curves go beyond)"
    return Rendered("\n".join([fig.show(legend=False), *legend, caption]), tuple(warnings))


def _ticks(span: float):  # noqa: ANN202 - plotille's tick callback
    """Tick labels with 4 significant digits; a value within rounding error of 0 is 0."""

    def label(value: float, _next: float) -> str:
        if abs(value) < 1e-9 * span:
            value = 0.0
        return f"{value:.4g}"

    return label


def _squeeze(lo: float, hi: float, dots: int):  # noqa: ANN202 - a NumPy function
    factor = (dots - 1) / dots
    return lambda v: lo + (v - lo) * factor


def _finite_runs(values: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each stretch of consecutive finite values."""
    finite = np.concatenate(([False], np.isfinite(values), [False]))
    edges = np.flatnonzero(finite[1:] != finite[:-1])
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _num(value: float) -> str:
    """A short, exact-enough number for the caption: 6 significant digits, no trailing zeros."""
    return f"{value:.6g}"
