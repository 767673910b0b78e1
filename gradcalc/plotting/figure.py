"""What a plot statement draws: the sample points and the named curves, ready for any output.

`make_figure` samples each expression (with its derivatives) and names every curve as the legend shows
it: the user's text, `d/dx TEXT`, `d²/dx² TEXT`, `d³/dx³ TEXT`. The terminal, text and image outputs all
take the resulting `Figure`, so they plot exactly the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .sampling import Fn, sample

_SUPERSCRIPT = {2: "²", 3: "³"}


class Curve(NamedTuple):
    """One plotted line: its legend label and its values at the figure's points (NaN = not finite)."""

    label: str
    values: np.ndarray


class Figure(NamedTuple):
    """The sample points of the variable `name` and the curves over them, in legend order."""

    name: str
    x: np.ndarray
    curves: tuple[Curve, ...]

    @property
    def lo(self) -> float:
        """The first sample point (LO of the statement)."""
        return float(self.x[0])

    @property
    def hi(self) -> float:
        """The last sample point (HI of the statement)."""
        return float(self.x[-1])


def derivative_label(text: str, name: str, k: int) -> str:
    """The legend label of the k-th derivative of the expression `text` with respect to `name`.

    A compound expression is put in parentheses (`d/dx (x**3 - 2*x)`) so the label cannot be read as
    the derivative of its first term only; a name, number or call is left as written (`d/dx sin(x)`).
    """
    if k == 0:
        return text
    body = text if _is_atom(text) else f"({text})"
    if k == 1:
        return f"d/d{name} {body}"
    power = _SUPERSCRIPT.get(k, f"^{k}")
    return f"d{power}/d{name}{power} {body}"


def make_figure(
    exprs: Sequence[tuple[str, Fn]],
    name: str,
    lo: float,
    hi: float,
    order: int = 0,
    n: int = 320,
    *,
    propagate: tuple[type[BaseException], ...] = (),
) -> Figure:
    """Sample every `(text, fn)` of `exprs` on `n` points of [lo, hi] with `order` derivatives.

    Curves come out grouped by expression: f, f', f'', then g, g', ... -- the order of the legend and of
    the columns of `--format plain`. Raises PlotError as `sample` does.
    """
    curves: list[Curve] = []
    x: np.ndarray | None = None
    for text, fn in exprs:
        found = sample(fn, lo, hi, n, order, name=name, propagate=propagate)
        x = found.x
        curves.extend(Curve(derivative_label(text, name, k), found.values[k]) for k in range(order + 1))
    if x is None:
        x = np.linspace(float(lo), float(hi), n)
    return Figure(name=name, x=x, curves=tuple(curves))


def drawable(figure: Figure) -> tuple[list[Curve], list[str]]:
    """The curves that have at least one finite value, and a warning for each one that has none."""
    drawn: list[Curve] = []
    warnings: list[str] = []
    for curve in figure.curves:
        if np.any(np.isfinite(curve.values)):
            drawn.append(curve)
        else:
            warnings.append(f"{curve.label} is not finite anywhere in the range; it is not drawn")
    return drawn, warnings


def _is_atom(text: str) -> bool:
    """A name, a number, a call `f(...)` or a fully parenthesised expression: nothing binds looser."""
    text = text.strip()
    if not text:
        return True
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            # a group that closes before the end means something follows it at the top level
            if depth == 0 and i != len(text) - 1 and text[i + 1] not in "([.":
                return False
        elif depth == 0 and not (ch.isalnum() or ch in "_."):
            return False
    return True
