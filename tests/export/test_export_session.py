"""`:export torch FILE.py` and `:export notebook FILE.ipynb` in a session: the statements that did not fail,
written through gradcalc/files.py (its wording for file errors, `wrote FILE` on standard error)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from differential import run_torch

from gradcalc.lang import Session

torch = pytest.importorskip("torch", reason="the oracle extra is not installed: pip install -e '.[oracle]'")


def session() -> tuple[Session, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Session(out=out, err=err), out, err


def test_the_session_so_far_without_what_failed(tmp_path: Path) -> None:
    s, out, err = session()
    s.run("x = 2 requires_grad\ny = x ** 3", interactive=True)
    s.run("backward y\nbackward y\nz = 1", interactive=True)  # the second backward fails: z is never bound
    s.run("x.grad\nundefined_name", interactive=True)
    s.run("print 'done', x.grad * 2", interactive=True)
    path = tmp_path / "session.py"
    assert s.run(f":export torch {path}", interactive=True)
    assert err.getvalue().endswith(f"wrote {path}\n")
    script = path.read_text()
    assert "z = " not in script and "undefined_name" not in script and script.count(".backward()") == 1
    assert run_torch(script).out == out.getvalue() == "tensor(12.)\ndone tensor(24.)\n"  # d(x**3)/dx at 2 is 12
    assert s.run(f":export notebook {tmp_path / 'session.ipynb'}", interactive=True)
    import nbformat

    nb = nbformat.read(tmp_path / "session.ipynb", as_version=4)
    assert [c.source for c in nb.cells] == ["x = 2 requires_grad", "y = x ** 3", "backward y", "x.grad",
                                            "print 'done', x.grad * 2"]


def test_without_a_file_the_export_is_printed() -> None:
    s, out, _ = session()
    s.run("w = [1, 2] requires_grad\n:export torch")
    assert "w = torch.tensor([1., 2.], requires_grad=True)\n" in out.getvalue()


@pytest.mark.parametrize(("command", "message"), [
    (":export", ":export needs a format: :export torch FILE.py or :export notebook FILE.ipynb"),
    (":export pdf x.pdf", ":export pdf: the formats are torch, notebook"),
    (":export torch x.txt", "can't write the PyTorch script to 'x.txt': the file name must end in .py"),
    (":export notebook nowhere/x.ipynb", "can't write the notebook to 'nowhere/x.ipynb': the directory 'nowhere' "
                                         "does not exist"),
])
def test_a_wrong_export_says_why_in_the_one_wording(command: str, message: str, tmp_path: Path) -> None:
    s, _, err = session()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert not s.run(command)
    finally:
        os.chdir(cwd)
    assert message in err.getvalue()
    assert list(tmp_path.iterdir()) == []


def test_the_example_notebook_run_cell_by_cell_then_exported_prints_the_same_under_pytorch() -> None:
    # the example notebook as a user runs it in the kernel: cell after cell into one workspace, some cells
    # failing on purpose (a freed graph, an in-place change); `:export torch` keeps what did not fail, and
    # PyTorch running that script prints the values gradcalc printed (narrations, graphs and plots are comments)
    import nbformat
    from differential import ROOT, Quiet

    from gradcalc.export import export
    from gradcalc.export.session import session_entries

    nb = nbformat.read(ROOT / "examples" / "autograd_tour.ipynb", as_version=4)
    out, err = io.StringIO(), io.StringIO()
    s = Quiet(out=out, err=err)
    failed = [n for n, cell in enumerate(nb.cells)
              if cell.cell_type == "code" and not s.run(cell.source, f"In[{n}]", interactive=True)]
    assert len(failed) == 3  # the cells that show errors: backward through a freed graph, in-place, ...
    assert s.own_value_at is None  # every value printed is one PyTorch prints
    ran = run_torch(export(session_entries(s.record), "torch"))
    assert ran.ok, ran.error
    assert ran.out == out.getvalue()
    assert "(tensor(6.), tensor(1.))" in ran.out  # a.grad, b.grad after retain_grad b: d(a*a)/da at 3, and 1
