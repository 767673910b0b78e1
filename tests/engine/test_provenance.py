"""autograd/provenance.py: who changed what, kept only while a front end's origin is set; and the engine's
errors carrying what explains them (their messages and types unchanged: RuntimeError, as PyTorch's)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import provenance
from gradcalc.autograd.graph import origin


def test_nothing_is_kept_without_an_origin() -> None:
    before = len(provenance.calls)
    serial = provenance.SERIAL[0]
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    with gradcalc.no_grad():
        x += 1
    (x * x).sum().backward()
    x.grad = None
    assert provenance.changes(x._vc) == [] and provenance.last_set(x) is None
    assert provenance.SERIAL[0] == serial and len(provenance.calls) == before


def test_in_place_changes_are_runs_of_versions_by_origin() -> None:
    w = gradcalc.tensor([1.0, 2.0])
    with origin("A"):
        w += 1
        w.mul_(2)
    with origin("B"):
        w[0] = 5
    with origin("A"):
        w.zero_()
    assert provenance.changes(w._vc) == [("A", 1, 2), ("B", 3, 3), ("A", 4, 4)]
    d = w.detach()  # shares the version counter
    assert provenance.changes(d._vc) == provenance.changes(w._vc)


def test_calls_and_grad_writes_are_kept_when_they_succeed() -> None:
    a = gradcalc.tensor(3.0, requires_grad=True)
    b = a * a
    with origin("first"):
        b.backward(retain_graph=True)
    with origin("second"):
        b.backward()
    with origin("third"), pytest.raises(RuntimeError):
        b.backward()  # freed: a failed call is not kept
    cleared, writes = provenance.grad_writes(a)
    assert cleared is None and [c.origin for c in writes] == ["first", "second"]
    assert writes[0].retain_graph and not writes[1].retain_graph
    assert provenance.reaches(writes[1].root_nodes(), b.grad_fn)
    with origin("zero"):
        a.grad = None
    cleared, writes = provenance.grad_writes(a)
    assert cleared[0] == "zero" and cleared[2] is True and writes == []


def test_grad_calls_keep_their_inputs_and_write_no_leaf() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    with origin("g"):
        gradcalc.autograd.grad(x * x, x)
    call = provenance.recent()[-1]
    assert call.origin == "g" and not call.accumulate and call.input_tensors() == [x] and call.wrote == ()


def _reason(fn: object) -> tuple[str, dict, str]:
    with pytest.raises(RuntimeError) as info:
        fn()  # type: ignore[operator]
    exc = info.value
    assert type(exc) is RuntimeError
    return exc.autograd_reason, exc.autograd_info, str(exc)  # type: ignore[attr-defined]


def test_errors_carry_what_explains_them() -> None:
    a = gradcalc.tensor(3.0, requires_grad=True)
    b = a * a
    b.backward()
    reason, info, msg = _reason(b.backward)
    assert reason == "freed" and info["node"] is b.grad_fn and "second time" in msg

    w = gradcalc.tensor([1.0, 1.0])
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    y = (w * x).sum()
    w += 1
    reason, info, msg = _reason(y.backward)
    assert reason == "version" and info["tensor"] is w and (info["saved_version"], info["version"]) == (0, 1)
    assert info["node"].name() == "MulBackward0" and "version 1" in msg

    def leaf_change() -> None:
        x.add_(1)

    reason, info, _ = _reason(leaf_change)
    assert reason == "leaf_inplace" and info["tensor"] is x

    reason, info, _ = _reason(lambda: (x * 2).backward())
    assert reason == "nonscalar" and info["tensor"].shape == (2,)

    c = gradcalc.tensor(1.0, requires_grad=True)
    reason, info, _ = _reason(lambda: gradcalc.autograd.grad((x * x).sum(), [x, c]))
    assert reason == "unused" and info["index"] == 1 and info["tensor"] is c

    with gradcalc.inference_mode():
        z = gradcalc.tensor([1.0, 2.0]) * 2
    reason, info, _ = _reason(lambda: z * x)
    assert reason == "inference_saved" and info["tensor"] is z

    q = gradcalc.tensor([0.0, 1.0], requires_grad=True)
    with gradcalc.autograd.detect_anomaly():
        r = (gradcalc.sqrt(q) * 0).sum()
        reason, info, msg = _reason(r.backward)
    assert reason == "nan" and info["node"].name() == "SqrtBackward0" and info["index"] == 0
    assert np.isnan(info["grads"][0]._data[0]) and "SqrtBackward0 returned NaN" in msg
