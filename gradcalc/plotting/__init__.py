"""The plotting core behind the language's `plot` statement (LANGUAGE.md section 8).

Imported only when a plot is drawn, never at gradcalc start-up; uniplot (terminal) and matplotlib
(files) are imported later still, by the output that needs them. The flow:

    figure = make_figure([(text, fn), ...], name, lo, hi, order, n=samples_for_width(columns))
    render_terminal(figure, width, color=...)  -> Rendered(text, warnings)
    render_plain(figure) / render_json(figure) -> str
    write_image(figure, path)                  -> warnings

Every failure the user can cause is a PlotError with a message in plain words.
"""

from __future__ import annotations

from .errors import PlotError
from .figure import Curve, Figure, derivative_label, make_figure
from .image import write_image
from .sample import MAX_ORDER, Samples, sample, samples_for_width
from .terminal import Rendered, render_terminal, terminal_width
from .text import figure_json, plain_number, render_json, render_plain

__all__ = [
    "MAX_ORDER", "Curve", "Figure", "PlotError", "Rendered", "Samples", "derivative_label", "figure_json",
    "make_figure", "plain_number", "render_json", "render_plain", "render_terminal", "sample",
    "samples_for_width", "terminal_width", "write_image",
]
