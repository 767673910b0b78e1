"""`plot ... to "FILE.svg"` / `"FILE.png"`: the figure as an image, drawn by matplotlib.

matplotlib is an optional extra (`pip install 'gradcalc[plot]'`) and is imported only here, only when a
file is written. It is used without pyplot (a bare `Figure`): no GUI backend, no global state.

The file appears whole or not at all, and its errors read as every writer's (gradcalc/files.py).
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO, NamedTuple

from gradcalc import files

from .figure import Curve, Figure, drawable
from .yrange import clip_to_frame, y_range

WHAT = "the plot"  # as file errors name it: "can't write the plot to 'p.pdf': ..."
FORMATS = (".svg", ".png")
INSTALL = "pip install 'gradcalc[plot]'"
SIZE_INCHES = (8.0, 5.0)
DPI = 100  # with SIZE_INCHES: an 800 x 500 pixel PNG
MARGIN = 0.05  # matplotlib's own default margin around the data


class Written(NamedTuple):
    """What `write_image` did: whether the file was written (the caller confirms it: `wrote p.svg`), and
    warnings for the caller to print."""

    written: bool
    warnings: tuple[str, ...] = ()


def write_image(figure: Figure, path: str | os.PathLike[str]) -> Written:
    """Write the figure to `path`, an .svg or .png file.

    Axis label and legend as in the terminal: the variable's name under the x axis, each curve's label in
    the legend. Raises gradcalc.files.FileProblem (the one wording of every writer) for another extension,
    a place that can't be written, and when matplotlib is missing (the message gives the install command)
    -- in every case nothing is written. When no curve has a finite value, nothing is written either, and
    the last warning says so.
    """
    files.check_suffix(WHAT, path, FORMATS)
    files.check_place(WHAT, path)  # a typo in the directory fails before matplotlib is loaded
    mpl_figure, canvas = _matplotlib(path)  # before the data: without the extra, say so whatever the data
    drawn, warnings = drawable(figure)
    shown = y_range([c.values for c in drawn])
    if shown is None:
        return Written(False, (*warnings, f"nothing to draw: '{os.fspath(path)}' was not written"))
    image = _draw(mpl_figure, canvas, figure, drawn, shown.lo, shown.hi)
    _save(image, path, os.path.splitext(os.fspath(path))[1].lower()[1:])
    return Written(True, tuple(warnings))


def _matplotlib(path: str | os.PathLike[str]) -> tuple[Any, Any]:
    """matplotlib's Figure class and its Agg canvas; the file's problem, with the install command, if missing."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure
    except ImportError:
        raise files.FileProblem(WHAT, path, f"drawing it needs matplotlib; install it with: {INSTALL}") from None
    del matplotlib
    return MplFigure, FigureCanvasAgg


def _draw(mpl_figure: Any, canvas: Any, figure: Figure, drawn: list[Curve], lo: float, hi: float) -> Any:
    """A matplotlib figure of the drawn curves over [lo, hi] (plus a margin), axis label and legend."""
    image = mpl_figure(figsize=SIZE_INCHES, dpi=DPI)
    canvas(image)
    ax = image.add_subplot()
    pad = MARGIN * (hi - lo)
    bottom, top = lo - pad, hi + pad
    for curve in drawn:
        # cut at the padded frame so a pole's two sides are not joined by a vertical line
        x, y = clip_to_frame(figure.x, curve.values, bottom, top)
        ax.plot(x, y, label=_literal(curve.label), linewidth=1.5)
    if bottom <= 0.0 <= top:
        ax.axhline(0.0, color="0.4", linewidth=0.8, zorder=0)
    ax.set_xlim(figure.lo, figure.hi)
    ax.set_ylim(bottom, top)
    ax.set_xlabel(_literal(figure.name))
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.legend()
    image.tight_layout()
    return image


def _literal(text: str) -> str:
    """The text shown as written: matplotlib would read `$...$` as a formula."""
    return text.replace("$", r"\$")


def _save(image: Any, path: str | os.PathLike[str], fmt: str) -> None:
    """Render the image into the file, whole or not at all (gradcalc/files.py)."""
    import matplotlib

    def render(out: BinaryIO) -> None:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gc"}):
            # svg.fonttype none: text stays text (searchable, selectable) instead of glyph outlines;
            # a fixed hash salt and no date keep the same plot the same file from run to run
            image.savefig(out, format=fmt, metadata={"Date": None} if fmt == "svg" else None)

    files.write(WHAT, path, render)
