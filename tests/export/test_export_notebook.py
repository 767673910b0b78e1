"""`gradcalc --export notebook FILE.gc`: a notebook for the gradcalc kernel, one cell per top-level statement or
block, comments as markdown cells; it validates with nbformat, and run through nbclient on the kernel (its own
process) its cells show what `gradcalc FILE.gc` prints."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from differential import ROOT
from kernel_client import CELL, STARTUP, kernel_env, plain

from gradcalc.export import export_program
from gradcalc.lang import Session

nbformat = pytest.importorskip("nbformat", reason="the jupyter extra is not installed: pip install -e '.[jupyter]'")

PROGRAMS = sorted((ROOT / "examples").glob("*.gc")) + sorted((ROOT / "tests" / "lang" / "seeds").glob("*.gc"))


def notebook(source: str) -> Any:
    return nbformat.reads(export_program(source, "t.gc", "notebook"), as_version=4)


def cells(source: str) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in notebook(source).cells]


def test_one_cell_per_statement_or_block_and_comments_as_markdown() -> None:
    source = ("# A title\n# and its second line\n\nx = 2 requires_grad  # a leaf\ny = x ** 2; z = y * 2\n"
              "for i in range(2):\n    # inside the loop\n    z = z * 2\n\n# the end\nz\n")
    assert cells(source) == [
        ("markdown", "A title\nand its second line"),
        ("code", "x = 2 requires_grad  # a leaf"),
        ("code", "y = x ** 2; z = y * 2"),
        ("code", "for i in range(2):\n    # inside the loop\n    z = z * 2"),
        ("markdown", "the end"),
        ("code", "z"),
    ]


def test_the_notebook_is_for_the_gradcalc_kernel() -> None:
    nb = notebook("x = 1\n(x * 2).sum()\n")
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.metadata.kernelspec.name == "gradcalc"
    assert nb.metadata.language_info.file_extension == ".gc"
    assert [c.source for c in nb.cells] == ["x = 1", "(x * 2).sum()"]  # a statement's leading bracket is its own
    assert json.loads(export_program("x = 1\n", "t.gc", "notebook")) == json.loads(
        export_program("x = 1\n", "t.gc", "notebook"))  # the same file each time (ids are stable)


def gradcalc_run(source: str) -> tuple[str, int]:
    """What gradcalc prints for `source` (running on after errors, as the notebook does), and how many errors."""
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run(source, "t.gc", keep_going=True)
    return out.getvalue(), err.getvalue().count(": error: ")


def gradcalc_cells(nb: Any, first: int) -> tuple[str, int]:
    """What gradcalc prints for the notebook's code cells run one after another into one workspace (each cell its
    own unit, as in the kernel: `graph` and `explain` name a statement's line within its cell, the first cell
    `In[first]`), and how many cells failed."""
    out, err = io.StringIO(), io.StringIO()
    session = Session(out=out, err=err)
    failed = 0
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    for count, cell in enumerate(code, start=first):  # as the kernel runs and names them (host.py)
        failed += not session.run(cell.source, f"In[{count}]")
    return out.getvalue(), failed


def shown(nb: Any) -> str:
    """What the executed notebook's code cells show, in order, as the language prints it: their stdout streams
    and the text of their values (errors and warnings are the cells' error and stderr)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                parts.append(plain(out.text))
            elif out.output_type in ("display_data", "execute_result"):
                parts.append(out.data["text/plain"] + "\n")
    return "".join(parts)


@pytest.fixture(scope="module")
def kernel_manager(jupyter_path: Path) -> Any:
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="gradcalc")
    km.start_kernel(env=kernel_env())
    try:
        yield km
    finally:
        km.shutdown_kernel(now=True)


def fresh_workspace(km: Any) -> int:
    """`:reset` the shared kernel (silently: no cell of its own); the number its next cell will have (the kernel
    names cells by its execution count, `line 2 of In[7]`, and the count goes on across the notebooks)."""
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=STARTUP)
        reply = kc.execute_interactive(":reset", silent=True, timeout=CELL)
    finally:
        kc.stop_channels()
    assert reply["content"]["status"] == "ok"
    return int(reply["content"]["execution_count"]) + 1


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_the_notebook_runs_on_the_kernel_to_what_gradcalc_prints(path: Path, kernel_manager: Any,
                                                                  tmp_path: Path) -> None:
    from nbclient import NotebookClient

    source = path.read_text()
    nb = notebook(source)
    nbformat.validate(nb)
    first = fresh_workspace(kernel_manager)
    client = NotebookClient(nb, km=kernel_manager, timeout=CELL, allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    printed, errors = gradcalc_cells(nb, first)
    assert shown(nb) == printed
    assert sum(o.output_type == "error" for c in nb.cells for o in c.get("outputs", [])) == errors
    if not re.search(r"^\s*(graph|explain)\b", source, re.MULTILINE):  # (they name lines: of the cell, of the file)
        assert (printed, errors) == gradcalc_run(source)  # the cells print what the program prints
