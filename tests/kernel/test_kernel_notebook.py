"""Notebooks through nbclient, the library `jupyter execute` and papermill run notebooks with: a small
notebook's outputs and errors, and examples/autograd_tour.ipynb, which must run (errors only in the cells
tagged `raises-exception`), show what PyTorch computes, and be stored with the outputs it shows today.

    python tests/kernel/test_kernel_notebook.py --update     # re-run the example and store its outputs
"""

from __future__ import annotations

import base64
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from kernel_client import CELL, ROOT, kernel_env, legend_of, plain, torch_default_float64, torch_repr

TOUR = ROOT / "examples" / "autograd_tour.ipynb"


def execute(nb: Any, cwd: Path) -> Any:
    """Run `nb` on the gradcalc kernel with nbclient; the executed notebook."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=CELL, startup_timeout=CELL, kernel_name="gradcalc",
                            resources={"metadata": {"path": str(cwd)}}, record_timing=False)
    client.execute(env=kernel_env())
    return nb


def texts(cell: Any) -> list[str]:
    """A code cell's outputs as text, in order: streams, text/plain of values and drawings, errors."""
    shown = []
    for out in cell.outputs:
        if out.output_type == "stream":
            shown.append(f"{out.name}: {out.text}")
        elif out.output_type == "error":
            shown.append(f"error: {out.evalue}")
        else:
            shown.append(f"{out.output_type}: {out.data['text/plain']}")
    return shown


# -- a small notebook ------------------------------------------------------------------------------------
def test_nbclient_runs_cells_and_stops_at_an_untagged_error(jupyter_path: Path, tmp_path: Path) -> None:
    import nbformat
    from nbclient.exceptions import CellExecutionError
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = [
        new_markdown_cell("# not run"),
        new_code_cell("x = 2 requires_grad\ny = x ** 3\ny"),
        new_code_cell("backward y\nx.grad\nprint \"done\""),
        new_code_cell("backward y"),  # the graph was freed: an error, and the cell is not tagged
        new_code_cell("x.grad"),
    ]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "gradcalc", "display_name": "gradcalc"}})
    with pytest.raises(CellExecutionError) as raised:
        execute(nb, tmp_path)
    assert raised.value.ename == "error" and "retain_graph" in raised.value.evalue
    assert "Traceback" not in str(raised.value)
    first, second, third, fourth = (nb.cells[i] for i in range(1, 5))
    with torch_default_float64() as torch:
        x = torch.tensor(2.0, requires_grad=True)
        y = x**3
        assert texts(first) == [f"execute_result: {torch_repr(y)}"]
        assert first.outputs[0].execution_count == 1
        y.backward()
        assert texts(second) == [f"display_data: {torch_repr(x.grad)}", "stdout: done\n"]  # 3x^2 = 12
    (error,) = third.outputs
    assert error.output_type == "error" and error.ename == "error"
    assert [plain(line) for line in error.traceback][1:] == ["backward y", "^"]
    assert fourth.outputs == []  # nbclient stopped at the error
    nbformat.validate(nb)


# -- the example notebook --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tour(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """examples/autograd_tour.ipynb, its outputs cleared and run afresh (an untagged error fails here)."""
    import nbformat

    nb = nbformat.read(TOUR, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return execute(nb, tmp_path_factory.mktemp("tour"))


def cell_with(nb: Any, source_start: str) -> Any:
    """The one code cell whose source starts with `source_start`."""
    found = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(source_start)]
    assert len(found) == 1, source_start
    return found[0]


def values(cell: Any) -> list[str]:
    return [out.data["text/plain"] for out in cell.outputs if out.output_type in ("display_data", "execute_result")]


def stderr(cell: Any) -> str:
    return "".join(out.text for out in cell.outputs if out.output_type == "stream" and out.name == "stderr")


def test_the_tour_has_errors_only_where_it_means_to(tour: Any) -> None:
    import nbformat

    nbformat.validate(tour)
    assert tour.metadata.kernelspec.name == "gradcalc"
    for cell in tour.cells:
        if cell.cell_type != "code":
            continue
        errors = [out for out in cell.outputs if out.output_type == "error"]
        if "raises-exception" in cell.metadata.get("tags", []):
            assert len(errors) == 1 and errors[0].ename == "error", cell.source
            assert "Traceback" not in "\n".join(errors[0].traceback)
        else:
            assert errors == [], cell.source


def test_the_tour_shows_what_pytorch_computes(tour: Any) -> None:
    with torch_default_float64() as torch:
        # leaves
        a = torch.tensor(3.0, requires_grad=True)
        b = a * a
        c = torch.tensor(5.0)
        d = c * c
        assert values(cell_with(tour, "a = 3 requires_grad          #")) == [
            torch_repr((a.is_leaf, b.is_leaf, c.is_leaf, d.is_leaf))]
        assert values(cell_with(tour, "a.requires_grad, b.requires_grad")) == [
            torch_repr((a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad))]
        # only leaves keep their gradient
        b.backward()
        cell = cell_with(tour, "backward b\na.grad")
        assert values(cell) == [torch_repr(a.grad), "None"]
        assert "warning: reading .grad of a non-leaf tensor" in stderr(cell)
        a = torch.tensor(3.0, requires_grad=True)
        b = a * a
        b.retain_grad()
        b.backward()
        assert values(cell_with(tour, "a.grad, b.grad")) == [torch_repr((a.grad, b.grad))]
        assert values(cell_with(tour, "a.grad.requires_grad, a.grad.is_leaf")) == [
            torch_repr((a.grad.requires_grad, a.grad.is_leaf))]
        with pytest.raises(RuntimeError, match="second time"):
            b.backward()
        # retain_graph: gradients add up
        a = torch.tensor(3.0, requires_grad=True)
        b = a * a
        seen = []
        for retain in (True, True, False):
            b.backward(retain_graph=retain)
            seen.append(torch_repr(a.grad))
        assert values(cell_with(tour, "a = 3 requires_grad\nb = a * a\nbackward b retain_graph")) == seen
        # create_graph
        a = torch.tensor(3.0, requires_grad=True)
        (db_da,) = torch.autograd.grad(a * a * a, a, create_graph=True)
        (d2b_da2,) = torch.autograd.grad(db_da, a, create_graph=True)
        assert values(cell_with(tour, "a = 3 requires_grad\nb = a * a * a")) == [torch_repr(db_da), torch_repr(d2b_da2)]
        assert values(cell_with(tour, "db_da.requires_grad")) == [torch_repr((db_da.requires_grad, db_da.is_leaf))]
        # the PINN residual and its training
        first, grads, trained = torch_pinn(torch)
        assert values(cell_with(tour, "x = linspace(0, 2, 16)")) == [first]
        assert values(cell_with(tour, "backward loss\nw.grad")) == [grads]
        (final,) = values(cell_with(tour, "lr = 0.1"))
        assert float(final) == pytest.approx(trained, rel=1e-9)  # 300 steps in float64
        # no_grad
        p = torch.tensor([1.0, -2.0], requires_grad=True)
        (p**2).sum().backward()
        with torch.no_grad():
            p -= 0.1 * p.grad
            z = p * 2
        assert values(cell_with(tour, "p = [1., -2.] requires_grad")) == [torch_repr((p, p.is_leaf))]
        assert values(cell_with(tour, "z.requires_grad")) == [torch_repr((z.requires_grad, z.is_leaf))]
        q = torch.tensor([1.0, -2.0], requires_grad=True)
        (q**2).sum().backward()
        q = q - 0.1 * q.grad
        (q**2).sum().backward()
        with pytest.warns(UserWarning, match="not a leaf"):
            assert q.grad is None
        cell = cell_with(tour, "q = [1., -2.] requires_grad")
        assert values(cell) == ["None"] and "non-leaf" in stderr(cell)
        assert "q is not the leaf it was" in plain(cell_with(tour, "explain q.grad").outputs[0].text)
        # in place
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        h = w * 2
        y = (h * h).sum()
        versions = [h._version]
        h += 1
        versions.append(h._version)
        assert values(cell_with(tour, "w = [1., 2.] requires_grad\nh = w * 2")) == [str(v) for v in versions]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w += 1


def torch_pinn(torch: Any) -> tuple[str, str, float]:
    """The tour's one-neuron PINN in PyTorch: the first loss, the gradients of the weights, the trained loss."""
    x = torch.linspace(0, 2, 16, requires_grad=True)
    x0 = torch.zeros(1, requires_grad=True)
    w, c, v = (torch.tensor(value, requires_grad=True) for value in (0.5, 0.1, 1.0))

    def u_of(t: Any) -> Any:
        return v * torch.tanh(w * t + c)

    def pinn_loss() -> Any:
        u = u_of(x)
        (du,) = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
        (d2u,) = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)
        u0 = u_of(x0)
        (du0,) = torch.autograd.grad(u0, x0, torch.ones_like(u0), create_graph=True)
        return ((d2u + u) ** 2).mean() + (u0**2).mean() + ((du0 - 1) ** 2).mean()

    loss = pinn_loss()
    first = torch_repr(loss)
    loss.backward()
    grads = torch_repr((w.grad, c.grad, v.grad))
    for _ in range(300):
        w.grad = c.grad = v.grad = None
        loss = pinn_loss()
        loss.backward()
        with torch.no_grad():
            for parameter in (w, c, v):
                parameter -= 0.1 * parameter.grad
    return first, grads, loss.item()


def test_the_tour_draws_graphs_and_plots_inline(tour: Any) -> None:
    drawn = shutil.which("dot") is not None
    for source in ("graph b", "graph y"):
        (out,) = cell_with(tour, source).outputs
        if drawn:
            assert ET.fromstring(out.data["image/svg+xml"]).tag == "{http://www.w3.org/2000/svg}svg"
            assert out.data["text/plain"].startswith(("MulBackward0", "SumBackward0"))
        else:
            assert out.output_type == "stream" and out.text.startswith(("MulBackward0", "SumBackward0"))
    saved = cell_with(tour, "graph y").outputs[0]
    shown = saved.data["text/plain"] if drawn else saved.text
    assert "h (version 0 when saved, now 1)" in shown
    pytest.importorskip("matplotlib")
    for source, legend in (("plot x ** 3", ["x ** 3 - 2 * x", "d/dx (x ** 3 - 2 * x)", "d²/dx² (x ** 3 - 2 * x)"]),
                           ("plot u_of(t)", ["u_of(t)", "sin(t)"])):
        (out,) = cell_with(tour, source).outputs
        assert base64.b64decode(out.data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
        assert legend_of(out.data["text/plain"]) == legend


def test_explain_in_the_tour_is_coloured(tour: Any) -> None:
    (out,) = cell_with(tour, "a = 3 requires_grad\nb = a * a\nretain_grad b").outputs
    assert out.name == "stdout" and "\x1b[" in out.text
    assert "b.grad    None -> tensor(1.)   (retain_grad)" in plain(out.text)


def test_the_stored_tour_shows_what_it_shows_today(tour: Any) -> None:
    import nbformat

    if shutil.which("dot") is None:
        pytest.skip("the stored tour was run with Graphviz")
    pytest.importorskip("matplotlib")
    stored = nbformat.read(TOUR, as_version=4)
    fresh_cells = [c for c in tour.cells if c.cell_type == "code"]
    stored_cells = [c for c in stored.cells if c.cell_type == "code"]
    assert [c.source for c in stored_cells] == [c.source for c in fresh_cells]
    for old, new in zip(stored_cells, fresh_cells, strict=True):
        stale = f"examples/autograd_tour.ipynb is stale at {old.source!r}: run this file with --update"
        assert texts(old) == texts(new), stale


def update() -> None:
    """Run the example notebook and store it with its outputs (after its cells or gradcalc changed)."""
    import os
    import subprocess
    import tempfile

    import nbformat

    nb = nbformat.read(TOUR, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory() as prefix, tempfile.TemporaryDirectory() as cwd:
        subprocess.run([sys.executable, "-m", "gradcalc.kernel", "install", "--prefix", prefix], check=True,
                       env=kernel_env(), capture_output=True)
        os.environ["JUPYTER_PATH"] = str(Path(prefix) / "share" / "jupyter")
        execute(nb, Path(cwd))
    nbformat.validate(nb)
    nbformat.write(nb, TOUR)
    print(f"wrote {TOUR.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(__doc__)
    update()
