"""In-place changes that read memory they write, against PyTorch: the same elements in the same layout are allowed
(`x += x`), memory shared only in part is PyTorch's error (`x += x[0]`, `x[1:] = x[:-1]`), and at integer indices
any shared memory is (`x[[0]] = x[2]`); views that are not dense in memory are let through, as PyTorch lets them.
Generated: a target and a source, each a view of one base (or a clone), under every in-place kind."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd.ops.inplace import OVERLAP, byte_bounds

torch = pytest.importorskip("torch")

VIEWS = ["b", "b[1:]", "b[:-1]", "b[0]", "b[2]", "b[1:2]", "b[::2]", "b[1::2]", "b.view(2, 3)[0]",
         "b.view(2, 3)[:, 1]", "b.view(3, 2)[1:]", "b.view(6, 1)[:3, 0]", "b[2:5]", "b.clone()[1:4]"]
OPS = ["t.add_(s)", "t.sub_(s)", "t.mul_(s)", "t.div_(s)", "t += s", "t.copy_(s)", "t.clamp_(min=s)",
       "t.pow_(s)", "t[...] = s", "t[[0]] = s", "t.masked_fill_(t > 2, s)", "t.lerp_(s, 0.5)", "t.addcmul_(s, s)"]


def _run(M: Any, target: str, source: str, op: str) -> tuple[str, Any]:
    b = M.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=M.float64)
    t = eval(target)
    s = eval(source)
    # memory shared in part by views that are not dense: PyTorch lets the change through and its result depends
    # on the order it writes the elements in (unspecified); gradcalc's reads what was there before (NumPy's)
    unspecified = False
    if M is gc and op != "t[[0]] = s":
        td, sd = t._data, s._data
        unspecified = np.shares_memory(td, sd) and not (td.shape == sd.shape and td.strides == sd.strides
                                                         and byte_bounds(td) == byte_bounds(sd))
    try:
        exec(op)
    except (RuntimeError, IndexError, ValueError) as exc:
        return "error", OVERLAP in str(exc)
    return "ok", None if unspecified else np.asarray(b.tolist())


@pytest.mark.parametrize("seed", range(400))
def test_overlap_as_pytorch(seed: int) -> None:
    rng = random.Random(seed)
    target, source, op = rng.choice(VIEWS), rng.choice(VIEWS), rng.choice(OPS)
    expected = _run(torch, target, source, op)
    got = _run(gc, target, source, op)
    assert got[0] == expected[0], (target, source, op, expected, got)
    if got[0] == "ok" and got[1] is not None:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-15)
    elif got[0] == "error" and expected[1]:  # PyTorch's overlap error: ours, with PyTorch's words first
        assert got[1], (target, source, op)


def test_overlap_in_the_language_changes_nothing() -> None:
    import io

    from gradcalc.lang.session import Session

    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run("d = tensor([1., 2., 3.])\nd += d[0]\nd\n", "t.gc", keep_going=True)
    assert "shares some of its memory" in err.getvalue() and "clone()" in err.getvalue()
    assert "unsupported operation" not in err.getvalue()  # the language's own words, not PyTorch's
    assert "tensor([1., 2., 3.])" in out.getvalue()  # the failed statement changed nothing
