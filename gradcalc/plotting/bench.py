"""A benchmark of the plotting core, for bench/interpreter.py: `plot sin(x)*exp(-x/5) for x in [0, 20] order 2`
sampled and rendered as for a non-terminal (80 columns, no colour).

`python -m gradcalc.plotting.bench` prints the figures. The target is 60 ms beyond start-up for the whole
statement; the per-point fallback (an expression that cannot be evaluated over a vector) is timed too.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import gradcalc

from .figure import make_figure
from .sampling import samples_for_width
from .terminal import render_terminal

COLUMNS = 80  # the width when the output is not a terminal


def _expr(x: gradcalc.Tensor) -> gradcalc.Tensor:
    return gradcalc.sin(x) * gradcalc.exp(-x / 5)


def _only_per_point(x: gradcalc.Tensor) -> gradcalc.Tensor:
    # refuses a vector, as an expression with a Python-level branch on x would: forces the fallback
    if x.ndim:
        raise ValueError("one point at a time")
    return _expr(x)


def _once(fn: Callable[[gradcalc.Tensor], gradcalc.Tensor]) -> tuple[float, float]:
    """Seconds to sample and to render, for one plot statement."""
    start = time.perf_counter()
    figure = make_figure([("sin(x)*exp(-x/5)", fn)], "x", 0.0, 20.0, order=2, n=samples_for_width(COLUMNS))
    sampled = time.perf_counter()
    render_terminal(figure, COLUMNS, color=False)
    return sampled - start, time.perf_counter() - sampled


def bench_plot(repeat: int = 20, *, per_point: bool = False) -> dict[str, float]:
    """Timings in milliseconds: `first` (the first plot in this process, loading plotille if not yet
    loaded), then the medians over `repeat` runs of `sample`, `render` and `total`."""
    fn = _only_per_point if per_point else _expr
    first = sum(_once(fn))
    runs = [_once(fn) for _ in range(max(1, repeat))]
    sample_ms = statistics.median(s for s, _ in runs) * 1e3
    render_ms = statistics.median(r for _, r in runs) * 1e3
    total_ms = statistics.median(s + r for s, r in runs) * 1e3
    return {"first": first * 1e3, "sample": sample_ms, "render": render_ms, "total": total_ms}


def main() -> None:
    """Print both benchmarks."""
    cold = "plotille" not in sys.modules
    for label, per_point in (("vectorised", False), ("per-point fallback", True)):
        t = bench_plot(per_point=per_point)
        print(
            f"{label:>18}: first {t['first']:.1f} ms{' (loads plotille)' if cold else ''}, then median "
            f"{t['total']:.1f} ms (sample {t['sample']:.1f} + render {t['render']:.1f})"
        )
        cold = False


if __name__ == "__main__":
    main()
