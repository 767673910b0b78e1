"""Round axis ticks for the terminal plot (LANGUAGE.md §8): at 1, 2 or 5 times a power of ten, printed short.

A tick value is kept exactly as an integer times a power of ten (`n`, `q`: n * 10^q), so its label is exact:
`-2 -1 0 1 2`, `0.5`, `2.5`, and `1e-3` rather than `0.001` when every tick of the axis is below 0.01 in size
(or `1e6` when they are 100000 and more).

The y axis is laid out in rows: every row stands for one value, evenly spaced by a row step `s` (the tick
step divided by 1, 2, 4 or 5), the frame's ends and 0 are multiples of `s`, so every tick -- and the line
y = 0 -- falls exactly on a row, and the row labelled 0 is the row where 0 is. The number of rows varies
with the range (at most `max_rows`): [-4, 10] gets 15 rows, one per unit, labelled every 2.

The x axis is the user's range as given: its columns stand for evenly spaced values from LO (the first) to
HI (the last); a tick sits on the column nearest its value, labels centred under it, far enough apart to
be read.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

MANTISSAS = (1, 2, 5)
ROW_DIVISORS = (1, 2, 4, 5)  # rows per tick: the row step stays a round number (0.5, 0.25, 1, 0.2 of a tick)


class Step(NamedTuple):
    """A round step c * 10^q (c in 1, 2, 5)."""

    c: int
    q: int

    @property
    def value(self) -> float:
        return self.c * 10.0**self.q


def steps_around(span: float) -> Iterator[Step]:
    """Round steps from about span/1000 up to about 10 span, smallest first."""
    top = math.floor(math.log10(span)) if span > 0 else 0
    for q in range(top - 3, top + 2):
        for c in MANTISSAS:
            yield Step(c, q)


def multiples(lo: float, hi: float, step: Step) -> tuple[int, int]:
    """The first and last k with k * step in [lo, hi] (a value within rounding error of the range counts)."""
    v = step.value
    slack = 1e-9 * max(abs(lo), abs(hi), v)
    return math.ceil((lo - slack) / v), math.floor((hi + slack) / v)


def label(n: int, q: int, scientific: bool) -> str:
    """The value n * 10^q written short: `0`, `-2`, `0.5`, `2.5e-3`, `1e6`."""
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    digits = str(abs(n))
    if scientific:
        exponent = q + len(digits) - 1
        kept = digits.rstrip("0")
        mantissa = kept[0] + ("." + kept[1:] if len(kept) > 1 else "")
        return f"{sign}{mantissa}e{exponent}"
    if q >= 0:
        return sign + digits + "0" * q
    whole, frac = (digits[:q] or "0"), digits[q:].rjust(-q, "0")
    frac = frac.rstrip("0")
    return sign + whole + ("." + frac if frac else "")


def scientific_for(largest: float) -> bool:
    """Whether an axis whose largest tick (in size) is `largest` is labelled `1e-3` style."""
    return largest != 0 and (largest < 0.01 or largest >= 1e5)


class Tick(NamedTuple):
    """A tick: its value, where it sits (a row from the top, or a column from the left) and its label."""

    value: float
    at: int
    label: str


def value_of(n: int, q: int) -> float:
    """n * 10^q as the nearest float (the decimal's own rounding, not a product's)."""
    return float(f"{n}e{q}")


# -- the y axis -----------------------------------------------------------------------------------------------
class YAxis(NamedTuple):
    """The rows of a terminal plot: row 0 (the top) is `hi`, row `rows - 1` is `lo`, each `row_step` apart."""

    lo: float
    hi: float
    rows: int
    row_step: float
    ticks: tuple[Tick, ...]
    zero_row: int | None  # the row where y = 0 is, when 0 is in [lo, hi]

    def row_of(self, y: float) -> int:
        """The row a value falls on (the nearest row's value; halfway goes up)."""
        return int(math.floor((self.hi - y) / self.row_step + 0.5))


def y_axis(a: float, b: float, max_rows: int = 17) -> YAxis:
    """Rows and round ticks for values from `a` to `b` (a < b): the best-filled frame of at most `max_rows`
    rows whose ticks (3 to 8 of them) and 0 fall on rows."""
    max_rows = max(3, max_rows)
    best: tuple[float, Step, int, int, int] | None = None
    for tick in steps_around(b - a):
        for m in ROW_DIVISORS:
            n, q = _divide(tick, m)  # the row step, exactly: n * 10^q
            r_lo, r_hi = math.floor(_ratio(a, n, q) + 1e-9), math.ceil(_ratio(b, n, q) - 1e-9)
            rows = r_hi - r_lo + 1
            if rows > max_rows or rows < 3:
                continue
            k_lo, k_hi = multiples(value_of(r_lo * n, q), value_of(r_hi * n, q), tick)
            count = k_hi - k_lo + 1
            if not 3 <= count <= 8 and not (count == 2 and max_rows < 6):
                continue
            fill = (b - a) / ((rows - 1) * value_of(n, q))
            ends = (r_lo % m == 0) + (r_hi % m == 0)  # frame ends that are labelled
            # resolution, labelled ends, and 4 to 7 labels
            score = fill * rows + 0.5 * ends - 0.8 * max(4 - count, count - 7, 0)
            if best is None or score > best[0] + 1e-9:
                best = (score, tick, m, r_lo, r_hi)
    if best is None:  # a very short frame: two rows, the ends
        lo, hi = a, b
        ticks = (Tick(hi, 0, _short(hi)), Tick(lo, 1, _short(lo)))
        return YAxis(lo, hi, 2, hi - lo, ticks, None)
    _, tick, m, r_lo, r_hi = best
    n, q = _divide(tick, m)
    lo, hi = value_of(r_lo * n, q), value_of(r_hi * n, q)
    rows = r_hi - r_lo + 1
    k_lo, k_hi = multiples(lo, hi, tick)
    sci = scientific_for(max(abs(k_lo), abs(k_hi)) * tick.value)
    ticks = tuple(
        Tick(value_of(k * tick.c, tick.q), r_hi - k * m, label(k * tick.c, tick.q, sci))
        for k in range(k_hi, k_lo - 1, -1)
    )
    zero = r_hi if r_lo <= 0 <= r_hi else None
    return YAxis(lo, hi, rows, value_of(n, q), ticks, zero)


def _divide(step: Step, m: int) -> tuple[int, int]:
    """step / m as n * 10^q with n an integer (m in 1, 2, 4, 5: at most two more decimals)."""
    n = step.c * 100 // m
    assert step.c * 100 % m == 0
    return n, step.q - 2


def _ratio(v: float, n: int, q: int) -> float:
    """v / (n * 10^q)."""
    return v / value_of(n, q)


def _short(v: float) -> str:
    return f"{v:.4g}"


# -- the x axis -----------------------------------------------------------------------------------------------
def x_ticks(lo: float, hi: float, columns: int, max_ticks: int = 7) -> tuple[Tick, ...]:
    """Round ticks on columns 0 (lo) to columns - 1 (hi): the smallest round step that gives at most
    `max_ticks` ticks with room between their labels (two blanks at least)."""
    width = hi - lo
    for step in steps_around(width):
        k_lo, k_hi = multiples(lo, hi, step)
        count = k_hi - k_lo + 1
        if count > max_ticks:
            continue
        sci = scientific_for(max(abs(k_lo), abs(k_hi)) * step.value)
        labels = [label(k * step.c, step.q, sci) for k in range(k_lo, k_hi + 1)]
        gap = step.value / width * (columns - 1) if width > 0 else columns
        if count > 1 and gap < max(len(t) for t in labels) + 2:
            continue
        return tuple(
            Tick(v, column_of(v, lo, hi, columns), t)
            for v, t in ((value_of(k * step.c, step.q), t) for k, t in zip(range(k_lo, k_hi + 1), labels, strict=True))
        )
    return ()


def column_of(x: float, lo: float, hi: float, columns: int) -> int:
    """The column a value falls on: the nearest column's value (halfway goes right)."""
    return int(math.floor((x - lo) / (hi - lo) * (columns - 1) + 0.5))
