"""`autograd.graph` against PyTorch: saved-tensor hooks (pack order, unpack at backward), save_on_cpu,
allow_mutation_on_saved_tensors, increment_version, register_multi_grad_hook; origins of nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import graph

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

LIBS = (gradcalc, torch)


def val(t: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, (tuple, list)):
        return tuple(val(x) for x in t)
    d = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)
    return np.round(d, 10).tolist()


def same(scenario: Any) -> list:
    logs = []
    for lib in LIBS:
        log: list = []
        scenario(lib, log)
        logs.append(log)
    assert logs[0] == logs[1]
    return logs[0]


OPS = {
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow_float": lambda a, b: a * b**2.5,
    "pow_number": lambda a, b: a**3,
    "exp": lambda a, b: a.exp() * b,
    "sin": lambda a, b: a.sin() + b.tanh(),
    "dot": lambda a, b: a.dot(b),
    "chain": lambda a, b: (a * b).sigmoid() / (b + 1.0).sqrt(),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_saved_tensors_hooks_pack_in_pytorchs_order_and_unpack_at_backward(op: str) -> None:
    def scenario(lib: Any, log: list) -> None:
        a = lib.tensor([0.5, 0.25], requires_grad=True)
        b = lib.tensor([0.75, 1.5], requires_grad=True)

        def pack(t: Any) -> Any:
            log.append(("pack", val(t)))
            return ("box", t)

        def unpack(p: Any) -> Any:
            log.append(("unpack", val(p[1])))
            return p[1]

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = OPS[op](a, b).sum()
        y.backward()
        log.append(("grads", val(a.grad), val(b.grad)))

    log = same(scenario)
    assert any(e[0] == "pack" for e in log)


def test_save_on_cpu_changes_nothing() -> None:
    def scenario(lib: Any, log: list) -> None:
        a = lib.tensor([0.5, 0.25], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (a * a.exp()).sum()
        y.backward()
        log.append(val(a.grad))

    same(scenario)


def test_allow_mutation_on_saved_tensors() -> None:
    def scenario(lib: Any, log: list) -> None:
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.tensor([0.5, 0.25], requires_grad=True)
            b = a.clone()
            out = (b**2).sum()
            b.mul_(3)
            out.backward()
        log.append(val(a.grad))

    same(scenario)


def test_increment_version_makes_backward_fail() -> None:
    for lib in LIBS:
        a = lib.tensor([0.5, 0.25], requires_grad=True)
        b = a * 1
        y = (b * b).sum()
        lib.autograd.graph.increment_version(b)
        with pytest.raises(RuntimeError):
            y.backward()


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook(mode: str) -> None:
    def scenario(lib: Any, log: list) -> None:
        a = lib.tensor([0.5, 0.25], requires_grad=True)
        b = lib.tensor([0.75, 1.5], requires_grad=True)
        c = lib.tensor([1.0, 2.0], requires_grad=True)
        h = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c), lambda g: log.append(("fired", val(g))), mode=mode
        )
        (a * b).sum().backward()
        (a * b * c).sum().backward()
        h.remove()
        (a * b).sum().backward()
        log.append(("end", val(a.grad)))

    same(scenario)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's 0/0 in the NaN anomaly mode is to find
def test_origin_is_stamped_on_nodes_and_shown_by_anomaly() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    assert (x * 2).grad_fn.origin is None
    with graph.origin("line 3: y = x * 2"):
        y = x * 2
        z = y.exp()
        w = y.sum()
    assert y.grad_fn.origin == "line 3: y = x * 2"
    assert z.grad_fn.origin == "line 3: y = x * 2" and w.grad_fn.origin == "line 3: y = x * 2"
    assert (x * 3).grad_fn.origin is None
    with graph.origin("line 7: bad"), pytest.warns(UserWarning), gradcalc.autograd.detect_anomaly():
        bad = (x - 2.0).sqrt() * 0.0
        with pytest.raises(RuntimeError, match="line 7: bad"):
            (x.log() * bad).backward()
    assert bad.grad_fn.origin == "line 7: bad"


def test_sequence_numbers_grow_with_creation() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    a, b = x * 2, x.exp()
    assert a.grad_fn._sequence_nr() < b.grad_fn._sequence_nr()
    assert b.grad_fn.next_functions[0][0]._sequence_nr() == 2**64 - 1  # AccumulateGrad, as in PyTorch
