"""The plotting core costs nothing until a plot is drawn, and each output loads only its own library."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(code: str) -> set[str]:
    """Which of the plotting modules and libraries are loaded after running `code` in a fresh Python."""
    probe = (
        f"{code}\nimport sys\n"
        "print(' '.join(m for m in ('gradcalc.plotting', 'plotille', 'matplotlib', 'uniplot', 'numpy.random')"
        " if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_gradcalc_start_up_does_not_load_plotting() -> None:
    assert loaded_after("import gradcalc, gradcalc.cli") == set()


@pytest.mark.parametrize(
    "code, libraries",
    [
        ("from gradcalc.plotting import make_figure, render_json, render_plain", set()),
        ("from gradcalc.plotting import render_terminal, write_image", set()),  # libraries load on drawing
    ],
)
def test_each_output_loads_only_its_library(code: str, libraries: set[str]) -> None:
    assert loaded_after(f"import gradcalc\n{code}") - {"gradcalc.plotting"} == libraries


def test_a_terminal_plot_loads_no_more() -> None:
    code = (
        "import gradcalc\nfrom gradcalc.plotting import make_figure, render_terminal\n"
        "render_terminal(make_figure([('sin(x)', gradcalc.sin)], 'x', 0, 1, order=1, n=40), 60, color=False)"
    )
    assert loaded_after(code) == {"gradcalc.plotting", "plotille"}
