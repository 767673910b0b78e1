"""Graphs, plots and explain in cells: drawn inline (SVG by Graphviz, PNG by matplotlib) with the REPL's text
as the output's text/plain, and as the REPL's text alone in a kernel that has neither program (a kernel whose
PATH has no `dot` and whose matplotlib import fails)."""

from __future__ import annotations

import base64
import io
import math
import re
import shutil
import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_client import RunningKernel, kernel_env, legend_of, plain, torch_default_float64, torch_repr

from gradcalc.lang import Session

GRAPH = "x = 3 requires_grad\nw = 2 requires_grad\ny = w * x ** 2\n"
SVG = "{http://www.w3.org/2000/svg}"


def repl_prints(program: str) -> str:
    """What the REPL prints on standard output for `program` (its text, uncoloured)."""
    out = io.StringIO()
    Session(out=out, err=io.StringIO()).run(program, "<stdin>", interactive=True)
    return out.getvalue()


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk (PNG specification, section 11.2.2)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def bare_kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningKernel]:
    """A kernel with no Graphviz on its PATH and a matplotlib that can't be imported."""
    shadow = tmp_path_factory.mktemp("no-matplotlib")
    (shadow / "matplotlib").mkdir()
    (shadow / "matplotlib" / "__init__.py").write_text('raise ImportError("matplotlib is hidden by a test")\n')
    empty = tmp_path_factory.mktemp("empty-path")
    env = kernel_env(extra_path=str(shadow))
    env["PATH"] = str(empty)
    kernel = RunningKernel(env=env, cwd=str(tmp_path_factory.mktemp("bare-cwd")))
    try:
        yield kernel
    finally:
        kernel.close()


def test_graph_is_drawn_as_svg_with_the_tree_as_its_text(kernel: RunningKernel) -> None:
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    cell = kernel.run(GRAPH + "graph y")
    assert cell.status == "ok" and cell.kinds == ["display_data"]
    (data,) = cell.displays
    assert data["text/plain"] + "\n" == repl_prints(GRAPH + "graph y")
    root = ET.fromstring(data["image/svg+xml"])
    assert root.tag == f"{SVG}svg"
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    # y = w * x ** 2: MulBackward0 <- (w's AccumulateGrad, PowBackward0 <- x's AccumulateGrad)
    assert sum(t.startswith("MulBackward0") for t in texts) == 1
    assert sum(t.startswith("PowBackward0") for t in texts) == 1
    assert sum(t.startswith("AccumulateGrad") for t in texts) == 2
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert len(edges) == 3


def test_graph_falls_back_to_the_text_tree(bare_kernel: RunningKernel) -> None:
    cell = bare_kernel.run(GRAPH + "graph y")
    assert cell.status == "ok" and cell.displays == []
    assert "\x1b[" in cell.stdout  # coloured as the REPL colours it (explain's colours)
    assert plain(cell.stdout) == repl_prints(GRAPH + "graph y")
    assert plain(cell.stdout).startswith("MulBackward0  (y: shape (), value tensor(18.))")  # w * x**2 = 2 * 9


def test_graph_to_a_file_still_writes_the_file(kernel: RunningKernel) -> None:
    cell = kernel.run(GRAPH + 'graph y to "y.dot"')
    assert cell.status == "ok" and cell.displays == []
    assert (Path(kernel.cwd) / "y.dot").read_text().startswith("digraph")


def test_plot_is_drawn_as_png_with_the_braille_plot_as_its_text(kernel: RunningKernel) -> None:
    pytest.importorskip("matplotlib")
    cell = kernel.run("plot sin(x), cos(x) for x in [0, 2 * pi] order 1")
    assert cell.status == "ok" and cell.kinds == ["display_data"], cell.messages
    (data,) = cell.displays
    assert png_size(base64.b64decode(data["image/png"])) == (800, 500)  # gradcalc.plotting.image: 8 x 5 in at 100 dpi
    text = data["text/plain"]
    assert legend_of(text) == ["sin(x)", "d/dx sin(x)", "cos(x)", "d/dx cos(x)"]
    caption = re.fullmatch(r"x: (\S+) to (\S+)   y: (\S+) to (\S+)", text.splitlines()[-1])
    assert caption is not None, text
    lo, hi, ylo, yhi = map(float, caption.groups())
    assert (lo, ylo, yhi) == (0, -1, 1)  # sin and cos and their derivatives span [-1, 1] over a period
    assert hi == pytest.approx(2 * math.pi, rel=1e-5)


def test_plot_falls_back_to_braille_text(bare_kernel: RunningKernel) -> None:
    cell = bare_kernel.run("plot x ** 2 for x in [-1, 2]")
    assert cell.status == "ok" and cell.displays == []
    lines = cell.stdout.splitlines()
    assert legend_of(cell.stdout) == ["x ** 2"]
    assert lines[-1] == "x: -1 to 2   y: 0 to 4"  # x**2 over [-1, 2] spans [0, 4]
    assert any(set(line) & set("⠁⠂⠄⡀⢀⠈⠐⠠") for line in lines)
    assert max(len(line) for line in lines) <= 80


def test_a_plot_file_is_written_instead_of_shown(kernel: RunningKernel) -> None:
    pytest.importorskip("matplotlib")
    cell = kernel.run('plot exp(x) for x in [0, 1] to "e.svg"')
    assert cell.status == "ok" and cell.displays == []
    assert ET.parse(Path(kernel.cwd) / "e.svg").getroot().tag == f"{SVG}svg"


def test_a_plot_of_nothing_finite_warns(kernel: RunningKernel) -> None:
    cell = kernel.run("plot log(x) for x in [-2, -1]")
    assert cell.status == "ok" and cell.displays == [] and cell.stdout == ""
    assert "log(x) is not finite anywhere in the range" in cell.stderr


def test_explain_is_coloured_and_says_what_the_repl_says(kernel: RunningKernel) -> None:
    cell = kernel.run(GRAPH + "explain backward y\nx.grad\nw.grad")
    assert cell.status == "ok"
    assert "\x1b[" in cell.stdout  # its colours, as ANSI for Jupyter to render
    assert plain(cell.stdout) == repl_prints(GRAPH + "explain backward y")
    with torch_default_float64() as torch:
        x = torch.tensor(3.0, requires_grad=True)
        w = torch.tensor(2.0, requires_grad=True)
        (w * x**2).backward()
        assert cell.values == [torch_repr(x.grad), torch_repr(w.grad)]
        assert f"x.grad    None -> {torch_repr(x.grad)}" in plain(cell.stdout)  # dy/dx = 2wx = 12
        assert f"w.grad    None -> {torch_repr(w.grad)}" in plain(cell.stdout)  # dy/dw = x^2 = 9


def test_explain_after_an_error_tells_it_in_full(kernel: RunningKernel) -> None:
    failed = kernel.run("a = [1, 2] requires_grad\nb = (a * a).sum()\nwith no_grad:\n    a += 1\nbackward b")
    assert failed.status == "error" and "version" in failed.error["evalue"]
    told = plain(kernel.run("explain").stdout)
    assert "a += 1" in told and "version 0" in told and "version 1" in told

