"""`:export` in the kernel (its own process, over its sockets): the cells run so far, without what failed,
written as a notebook or a PyTorch script in the kernel's directory (`wrote FILE` on the cell's stderr), or shown
in the cell without a file."""

from __future__ import annotations

from pathlib import Path

from kernel_client import RunningKernel


def test_export_writes_the_cells_that_did_not_fail(kernel: RunningKernel) -> None:
    import nbformat

    assert kernel.run("x = 2 requires_grad\ny = x ** 3  # a cube").status == "ok"
    assert kernel.run("backward y\nx.grad").status == "ok"
    assert kernel.run("backward y").status == "error"  # freed: not exported
    cell = kernel.run(":export notebook exported.ipynb")
    assert cell.status == "ok" and cell.stderr == "wrote exported.ipynb\n"
    nb = nbformat.read(Path(kernel.cwd or ".") / "exported.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "gradcalc"
    assert [c.source for c in nb.cells] == ["x = 2 requires_grad", "y = x ** 3  # a cube", "backward y", "x.grad"]
    shown = kernel.run(":export torch")
    assert "x = torch.tensor(2., requires_grad=True)\ny = x ** 3  # a cube\ny.backward()\n_show(x.grad)\n" in \
        shown.stdout
    wrong = kernel.run(":export torch session.txt")
    assert wrong.status == "error" and "the file name must end in .py" in wrong.error["evalue"]
