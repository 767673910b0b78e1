"""`plot ... to "FILE.svg"` / `"FILE.png"`: the figure as an image, drawn by matplotlib.

matplotlib is an optional extra (`pip install 'gradcalc[plot]'`) and is imported only here, only when a
file is written. It is used without pyplot (a bare `Figure`): no GUI backend, no global state.

The file appears whole or not at all: the image goes to a temporary file in the target's directory, which
is renamed over the target only once it is complete (a rename within one directory is atomic).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import PlotError
from .figure import Curve, Figure, drawable
from .yrange import clip_to_frame, y_range

FORMATS = (".svg", ".png")
INSTALL = "pip install 'gradcalc[plot]'"
SIZE_INCHES = (8.0, 5.0)
DPI = 100  # with SIZE_INCHES: an 800 x 500 pixel PNG
MARGIN = 0.05  # matplotlib's own default margin around the data


def write_image(figure: Figure, path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Write the figure to `path`, an .svg or .png file; returns warnings for the caller to print.

    Axis label and legend as in the terminal: the variable's name under the x axis, each curve's label in
    the legend. Raises PlotError for another extension, when matplotlib is missing (the message gives
    the install command), and when the file cannot be written -- in every case nothing is written.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise PlotError(
            f"cannot write a plot to '{target}': the file name must end in {' or '.join(FORMATS)}"
        )
    mpl_figure, canvas = _matplotlib()  # before anything else: without the extra, say so whatever the data
    drawn, warnings = drawable(figure)
    shown = y_range([c.values for c in drawn])
    if shown is None:
        return (*warnings, f"nothing to draw: '{target}' was not written")
    image = _draw(mpl_figure, canvas, figure, drawn, shown.lo, shown.hi)
    _save_atomically(image, target, suffix[1:])
    return tuple(warnings)


def _matplotlib() -> tuple[Any, Any]:
    """matplotlib's Figure class and its Agg canvas; PlotError with the install command if missing."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure
    except ImportError:
        raise PlotError(f"writing a plot to a file needs matplotlib; install it with: {INSTALL}") from None
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


def _save_atomically(image: Any, target: Path, fmt: str) -> None:
    """Render into a temporary file beside `target`, then rename it over `target`."""
    import matplotlib

    directory = target.parent  # Path("p.svg").parent is Path(".")
    if target.is_dir():
        raise PlotError(f"cannot write the plot to '{target}': it is a directory")
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise PlotError(f"cannot write the plot to '{target}': {_reason(e)}") from None
    try:
        with os.fdopen(handle, "wb") as out, matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gc"}):
            # svg.fonttype none: text stays text (searchable, selectable) instead of glyph outlines;
            # a fixed hash salt and no date keep the same plot the same file from run to run
            image.savefig(out, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes the file private; give it the usual mode
        os.replace(temporary, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise PlotError(f"cannot write the plot to '{target}': {_reason(e)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask (reading it means setting it: it is put back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reason(error: OSError) -> str:
    """The operating system's words for the failure, in lower case after the colon."""
    text = error.strerror or str(error)
    return text[:1].lower() + text[1:]
