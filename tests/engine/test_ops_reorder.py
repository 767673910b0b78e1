"""The small names against PyTorch: sort, movedim, diag, index_add(_), the in-place forms of the elementwise
table, allclose/equal/all/any, and devices (values, grad_fn names, first and second derivatives)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd.ops.unary import ROWS
from tests.engine.ops_oracle import arrays_for, check, same_outcome

torch = pytest.importorskip("torch")

SCENARIOS = {
    "sort": (lambda L, x: L.sort(x, 1), [(3, 4)]),
    "sort descending": (lambda L, x: x.sort(dim=0, descending=True).values * 2.0, [(3, 4)]),
    "sort 1-d": (lambda L, x: L.sort(x.exp()), [(5,)]),
    "movedim": (lambda L, x: L.movedim(x, 0, 2), [(2, 3, 4)]),
    "movedim tuple": (lambda L, x: x.movedim((0, 1), (2, 0)), [(2, 3, 4)]),
    "diag vector": (lambda L, x: L.diag(x), [(3,)]),
    "diag vector offset": (lambda L, x: L.diag(x, -1) * 2.0, [(3,)]),
    "diag matrix": (lambda L, x: L.diag(x), [(3, 4)]),
    "diag matrix offset": (lambda L, x: x.diag(1), [(3, 4)]),
    "index_add": (lambda L, x, s: L.index_add(x, 0, L.tensor([2, 0, 2]), s, alpha=2.0), [(3, 2), (3, 2)]),
    "index_add_": (lambda L, x, s: (x * 1.0).index_add_(1, L.tensor([1, 1]), s), [(3, 2), (3, 2)]),
}
# abs_ and sign_ are left out: PyTorch's second derivatives there are ZeroTensors, which the harness cannot
# read (their out-of-place forms are checked in test_ops_elementwise.py; the in-place machinery is shared)
for _name in sorted({n for n, r in ROWS.items() if r.public} - {"abs", "sign"}):
    if _name in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "asin", "acos"):
        SCENARIOS[f"{_name}_"] = (lambda L, x, _n=_name: getattr((x.abs() * 0.4 + 0.1) * 1.0, f"{_n}_")(), [(4,)])
    else:
        SCENARIOS[f"{_name}_"] = (lambda L, x, _n=_name: getattr(x * 1.0, f"{_n}_")(), [(4,)])


# where gradcalc's double-backward graph is built with other nodes than PyTorch's (advanced indexing in
# place of PyTorch's DiagonalBackwardBackward0, ScatterBackward0, ...): the gradients' values are compared,
# their grad_fn names are not
OTHER_DOUBLE_BACKWARD = {"diag vector", "diag vector offset", "diag matrix", "diag matrix offset", "index_add",
                         "index_add_", "sort", "sort descending", "sort 1-d"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_against_torch(name: str) -> None:
    scenario, shapes = SCENARIOS[name]
    check(scenario, arrays_for(*shapes, seed=3), grad_names=name not in OTHER_DOUBLE_BACKWARD)


def test_sort_nan_and_ties() -> None:
    data = [3.0, float("nan"), 1.0, 3.0, -2.0]
    for descending in (False, True):
        same_outcome(lambda L, d=descending: L.sort(L.tensor(data), descending=d, stable=True))


def test_boolean_reductions_and_comparisons() -> None:
    a = np.array([[1.0, 0.0], [2.0, 3.0]])
    same_outcome(lambda L: (L.all(L.tensor(a)), L.any(L.tensor(a) > 2, dim=0), L.all(L.tensor(a), 1, keepdim=True)))
    for lib in (torch, gc):
        x = lib.tensor(a)
        assert lib.allclose(x, x + 1e-9) and not lib.allclose(x, x + 1e-3)
        assert lib.equal(x, x * 1.0) and x.equal(x) and not lib.equal(x, x[0])


def test_devices() -> None:
    x = gc.zeros(2, device="cpu")
    assert str(x.device) == "cpu" and repr(gc.device("cpu")) == "device(type='cpu')"
    assert x.device == gc.device("cpu") == "cpu"
    assert x.cpu() is x and x.to("cpu") is x and x.to(device="cpu") is x
    assert x.to("cpu", gc.float32).dtype == gc.float32 and x.to(gc.ones(1, dtype=gc.float32)).dtype == gc.float32
    for make in (lambda: gc.ones(2, device="cuda"), lambda: gc.tensor([1.0], device=gc.device("cuda:0")),
                 lambda: x.to("cuda")):
        with pytest.raises(RuntimeError, match="CPU only"):
            make()


def test_inplace_unary_under_forward_mode() -> None:
    tfw, gfw = torch.autograd.forward_ad, gc.autograd.forward_ad

    def run(L: Any, fw: Any) -> Any:
        with fw.dual_level():
            d = fw.make_dual(L.tensor([0.3, 0.9]), L.tensor([1.0, -2.0]))
            e = d * 1.0
            e.sin_()
            e.mul_(3.0)
            e.exp_()
            return fw.unpack_dual(e).tangent.numpy()

    np.testing.assert_allclose(run(gc, gfw), run(torch, tfw), rtol=1e-12)
