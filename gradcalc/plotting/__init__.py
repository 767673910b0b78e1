"""The plotting core behind the language's `plot` statement (LANGUAGE.md section 8).

Imported only when a plot is drawn, never at gradcalc start-up; each output's modules (and plotille for
the terminal, matplotlib for files) load on first use, so a plot pays only for what it draws. The flow:

    figure = make_figure([(text, fn), ...], name, lo, hi, order, n=samples_for_width(columns))
    render_terminal(figure, width, color=...)  -> Rendered(text, warnings)
    render_plain(figure) / render_json(figure) -> str
    write_image(figure, path)                  -> Written(written, warnings)

Every failure the user can cause is a PlotError with a message in plain words, except a file that can't be
written: that is gradcalc.files.FileProblem, worded as every writer's errors are.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import PlotError

if TYPE_CHECKING:
    from .figure import Curve, Figure, derivative_label, make_figure
    from .image import Written, write_image
    from .sampling import MAX_ORDER, Samples, sample, samples_for_width
    from .terminal import Rendered, render_terminal, terminal_width
    from .text import figure_json, plain_number, render_json, render_plain

# public name -> the module that defines it, imported when the name is first used
_HOME = {
    "Curve": "figure", "Figure": "figure", "derivative_label": "figure", "make_figure": "figure",
    "Written": "image", "write_image": "image",
    "MAX_ORDER": "sampling", "Samples": "sampling", "sample": "sampling", "samples_for_width": "sampling",
    "Rendered": "terminal", "render_terminal": "terminal", "terminal_width": "terminal",
    "figure_json": "text", "plain_number": "text", "render_json": "text", "render_plain": "text",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


__all__ = [
    "MAX_ORDER", "Curve", "Figure", "PlotError", "Rendered", "Samples", "derivative_label", "figure_json",
    "make_figure", "plain_number", "render_json", "render_plain", "render_terminal", "sample",
    "samples_for_width", "terminal_width", "Written", "write_image",
]
assert set(__all__) == {"PlotError", *_HOME}
