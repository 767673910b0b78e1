"""Plots written to .svg and .png through matplotlib (an optional extra), and the errors around it."""

from __future__ import annotations

import builtins
import os
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.files import FileProblem
from gradcalc.plotting import make_figure, write_image
from gradcalc.plotting.image import DPI, SIZE_INCHES

needs_matplotlib = pytest.mark.skipif(
    __import__("importlib").util.find_spec("matplotlib") is None, reason="the plot extra is not installed"
)


@pytest.fixture
def figure():  # noqa: ANN201 - a Figure
    return make_figure([("sin(x)", torch.sin), ("tan(x)", torch.tan)], "x", -np.pi, np.pi, order=1, n=200)


def texts(svg: Path) -> list[str]:
    return [el.text or "" for el in ET.parse(svg).getroot().iter() if el.tag.endswith("text")]


@needs_matplotlib
def test_svg_has_axis_label_and_legend(tmp_path: Path, figure) -> None:  # noqa: ANN001
    target = tmp_path / "trig.svg"
    assert write_image(figure, target) == (True, ())
    found = texts(target)
    for label in ("sin(x)", "d/dx sin(x)", "tan(x)", "d/dx tan(x)", "x"):
        assert label in found
    assert [p.name for p in tmp_path.iterdir()] == ["trig.svg"]  # no temporary file left


@needs_matplotlib
def test_svg_is_the_same_from_run_to_run(tmp_path: Path, figure) -> None:  # noqa: ANN001
    write_image(figure, tmp_path / "a.svg")
    write_image(figure, tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


@needs_matplotlib
def test_png_header_and_size(tmp_path: Path, figure) -> None:  # noqa: ANN001
    target = tmp_path / "Trig.PNG"  # the extension in any case
    write_image(figure, str(target))
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (int(SIZE_INCHES[0] * DPI), int(SIZE_INCHES[1] * DPI))


@needs_matplotlib
def test_file_gets_the_usual_mode(tmp_path: Path, figure) -> None:  # noqa: ANN001
    target = tmp_path / "p.svg"
    write_image(figure, target)
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


@needs_matplotlib
def test_dollar_signs_are_shown_as_written(tmp_path: Path) -> None:
    fig = make_figure([("$a", lambda x: x)], "x", 0, 1, n=10)
    write_image(fig, tmp_path / "d.svg")
    assert "$a" in texts(tmp_path / "d.svg")


@needs_matplotlib
def test_curve_without_finite_value_is_warned(tmp_path: Path) -> None:
    fig = make_figure([("x", lambda x: x), ("log(-1 - x)", lambda x: torch.log(-1 - x))], "x", 0, 1, n=10)
    assert write_image(fig, tmp_path / "w.svg") == (
        True, ("log(-1 - x) is not finite anywhere in the range; it is not drawn",),
    )
    assert "log(-1 - x)" not in texts(tmp_path / "w.svg")


@needs_matplotlib
def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    fig = make_figure([("log(-1 - x)", lambda x: torch.log(-1 - x))], "x", 0, 1, n=10)
    written, warnings = write_image(fig, tmp_path / "n.svg")
    assert not written
    assert warnings[-1] == f"nothing to draw: '{tmp_path / 'n.svg'}' was not written"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["plot.pdf", "plot", "plot.svg.txt"])
def test_unknown_extension(tmp_path: Path, figure, name: str) -> None:  # noqa: ANN001
    with pytest.raises(FileProblem) as raised:
        write_image(figure, tmp_path / name)
    assert str(raised.value) == f"can't write the plot to '{tmp_path / name}': the file name must end in .svg or .png"
    assert list(tmp_path.iterdir()) == []


@needs_matplotlib
def test_missing_directory(tmp_path: Path, figure) -> None:  # noqa: ANN001
    target = tmp_path / "no" / "such" / "p.png"
    with pytest.raises(FileProblem) as raised:
        write_image(figure, target)
    assert str(raised.value) == f"can't write the plot to '{target}': the directory '{target.parent}' does not exist"
    assert "\n" not in str(raised.value)


@needs_matplotlib
def test_parent_is_a_file(tmp_path: Path, figure) -> None:  # noqa: ANN001
    # unwritable even for root: the "directory" is a file
    (tmp_path / "notes.txt").write_text("")
    target = tmp_path / "notes.txt" / "p.svg"
    with pytest.raises(FileProblem) as raised:
        write_image(figure, target)
    assert str(raised.value) == f"can't write the plot to '{target}': '{target.parent}' is not a directory"


@needs_matplotlib
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_directory(tmp_path: Path, figure) -> None:  # noqa: ANN001
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(FileProblem, match="permission denied"):
            write_image(figure, locked / "p.svg")
    finally:
        locked.chmod(0o700)


@needs_matplotlib
def test_directory_as_target(tmp_path: Path, figure) -> None:  # noqa: ANN001
    (tmp_path / "d.svg").mkdir()
    with pytest.raises(FileProblem, match="it is a directory"):
        write_image(figure, tmp_path / "d.svg")


@needs_matplotlib
def test_failure_while_saving_leaves_nothing(tmp_path: Path, figure, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from matplotlib.figure import Figure as MplFigure

    def broken(self, out, **kwargs) -> None:  # noqa: ANN001, ANN003
        out.write(b"<svg half")
        raise OSError(28, "No space left on device")

    (tmp_path / "keep.svg").write_text("old")
    monkeypatch.setattr(MplFigure, "savefig", broken)
    with pytest.raises(FileProblem, match="no space left on the device"):
        write_image(figure, tmp_path / "keep.svg")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.svg"]
    assert (tmp_path / "keep.svg").read_text() == "old"  # the old file is untouched


def test_without_matplotlib(tmp_path: Path, figure, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(FileProblem) as raised:
        write_image(figure, tmp_path / "p.png")
    message = (f"can't write the plot to '{tmp_path / 'p.png'}': drawing it needs matplotlib; install it with: "
               "pip install 'gradcalc[plot]'")
    assert str(raised.value) == message
    assert list(tmp_path.iterdir()) == []
