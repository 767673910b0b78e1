"""The terminal plot: a braille line plot drawn by uniplot.

Why uniplot (docs/plotting.md has the comparison): of the three maintained pure-Python terminal plotting
libraries,

- uniplot draws braille (2x4 dots a cell), colours each series, returns the plot as a string
  (`plot_to_string`), prints a legend, takes the axis limits we give it, draws horizontal grid lines
  (our x axis at y = 0), caps the line length (`line_length_hard_cap`: the terminal width), and treats
  NaN as a gap in a line -- so a curve with holes needs no special handling. It rasterises with NumPy
  (which gradcalc already needs), so a plot costs a few milliseconds; its one other dependency,
  readchar, is small and pure Python (used by its interactive mode, which we do not use).
- plotille has no dependencies and a clean Figure object, but raises on NaN (every curve with a gap
  would have to be split into pieces, and its legend then lists every piece), its origin option draws
  both axes, and it rasterises point by point in Python.
- plotext 6 replaced its whole plotting interface (no `plot`, no `clf`) and keeps one global figure;
  an interface that moved that much is a risk for a core that must not break.

uniplot is imported here, inside `render_terminal`, so a plot to a file or in `--format json` never
loads it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import numpy as np

from .figure import Figure, drawable
from .yrange import clip_to_frame, y_range

DEFAULT_HEIGHT = 16  # rows of braille cells: 64 dot rows; with frame, labels and legend it fits 24 lines
MIN_WIDTH = 20  # narrower terminals still get a (cramped) plot rather than an error

# One colour per curve, cycled: the 8-colour ANSI names every terminal has, in uniplot's default order.
COLORS = ("blue", "magenta", "green", "yellow", "cyan", "red")


@dataclass(frozen=True)
class Rendered:
    """A finished plot: the text to print, and warnings for the caller to print (curves not drawn)."""

    text: str
    warnings: tuple[str, ...] = ()


def terminal_width() -> int:
    """The terminal's width in columns, 80 when the output is not a terminal."""
    return shutil.get_terminal_size((80, 24)).columns


def render_terminal(
    figure: Figure,
    width: int | None = None,
    *,
    color: bool = True,
    height: int = DEFAULT_HEIGHT,
    plot_columns: int | None = None,
) -> Rendered:
    """The figure as a braille line plot at most `width` columns wide (the terminal's width if None).

    The plot area fills the width left after the frame and the y labels (or is exactly `plot_columns`
    cells wide when given, whatever the total), `height` cells high; the x axis (y = 0) is drawn
    when 0 is in the y range; a caption line gives the exact ranges of both axes. `color` off gives
    plain text (for NO_COLOR and batch output). A curve that is not finite anywhere is left out, with a
    warning naming it; when no curve is left the text is empty.
    """
    import uniplot  # deferred: only terminal plots need it

    columns = max(MIN_WIDTH, width if width is not None else terminal_width())
    drawn, warnings = drawable(figure)
    shown = y_range([c.values for c in drawn])
    if shown is None:
        return Rendered("", tuple(warnings))
    xs, ys = [], []
    for curve in drawn:
        cx, cy = clip_to_frame(figure.x, curve.values, shown.lo, shown.hi)
        if not np.any(np.isfinite(cy)):
            # wholly outside the clipped range: uniplot cannot take an all-gap series, so give it one
            # point above the frame -- not drawn, but the curve keeps its legend entry and colour
            cx, cy = figure.x[:1], np.array([shown.hi + (shown.hi - shown.lo)])
        xs.append(cx)
        ys.append(cy)
    text = uniplot.plot_to_string(
        ys,
        xs,
        character_set="braille",
        lines=True,
        width=plot_columns if plot_columns is not None else columns,
        line_length_hard_cap=None if plot_columns is not None else columns,
        height=max(1, height),
        x_min=figure.lo,
        x_max=figure.hi,
        y_min=shown.lo,
        y_max=shown.hi,
        x_gridlines=[],
        y_gridlines=[0.0] if shown.lo <= 0.0 <= shown.hi else [],
        legend_labels=[c.label for c in drawn],
        color=list(COLORS) if color else False,
    )
    caption = f"{figure.name}: {_num(figure.lo)} to {_num(figure.hi)}   y: {_num(shown.lo)} to {_num(shown.hi)}"
    if shown.clipped:
        caption += " (clipped: the curves go beyond)"
    return Rendered(text + "\n" + caption, tuple(warnings))


def _num(value: float) -> str:
    """A short, exact-enough number for the caption: 6 significant digits, no trailing zeros."""
    return f"{value:.6g}"
