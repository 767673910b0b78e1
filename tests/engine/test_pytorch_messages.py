"""The Python API's errors begin with PyTorch's own text (the phrases code and tests match on), table-driven
against the messages torch actually raises; gradcalc's explanation follows on the next line. The language keeps
its own words for the same failures (its messages are the explanation alone), and anomaly mode warns as
PyTorch's does ("Error detected in ... Traceback of forward call that caused the error")."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import gradcalc
from tests.engine.ops_oracle import torch


def _freed(L: Any) -> None:
    x = L.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    y.backward()


def _freed_saved(L: Any) -> None:
    x = L.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    y.grad_fn._saved_self  # noqa: B018 - reading it is the failure


def _version(L: Any) -> None:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a * a
    a.add_(1)
    y.sum().backward()


def _version_leaf_saved(L: Any) -> None:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    w = L.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.mul_(2)
    y.backward()


def _mark_dirty(L: Any) -> None:
    class Double(L.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    a = L.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = b * b
    Double.apply(b)
    c.sum().backward()


def _anomaly_nan(L: Any) -> None:
    with L.autograd.detect_anomaly():
        x = L.tensor(0.0, requires_grad=True)
        (x * 0).sqrt().backward()


CASES: dict[str, Callable[[Any], Any]] = {
    "freed": _freed,
    "freed_saved_read": _freed_saved,
    "version": _version,
    "version_leaf_saved": _version_leaf_saved,
    "mark_dirty": _mark_dirty,
    "no_grad_fn_backward": lambda L: (L.tensor(2.0) * 2).backward(),
    "no_grad_fn_grad": lambda L: L.autograd.grad(L.tensor(2.0) * 2, L.tensor(2.0)),
    "nonscalar_backward": lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).backward(),
    "nonscalar_grad": lambda L: (lambda x: L.autograd.grad(x * 2, x))(L.tensor([1.0, 2.0], requires_grad=True)),
    "leaf_inplace": lambda L: L.tensor([1.0, 2.0], requires_grad=True).add_(1),
    "view_of_leaf_inplace": lambda L: L.tensor([1.0, 2.0], requires_grad=True)[0].add_(1),
    "unused": lambda L: (lambda x, z: L.autograd.grad(x * 2, [x, z]))(L.tensor(1.0, requires_grad=True),
                                                                      L.tensor(1.0, requires_grad=True)),
    "input_without_grad": lambda L: (lambda x: L.autograd.grad(x * 2, [L.tensor(1.0)]))(
        L.tensor(1.0, requires_grad=True)),
    "retain_grad_without_grad": lambda L: L.tensor(1.0).retain_grad(),
    "numpy_of_requires_grad": lambda L: L.tensor(1.0, requires_grad=True).numpy(),
    "item_of_many": lambda L: L.tensor([1.0, 2.0]).item(),
    "bool_of_many": lambda L: bool(L.tensor([1.0, 2.0])),
    "hook_without_grad": lambda L: L.tensor(1.0).register_hook(lambda g: g),
    "requires_grad_of_non_leaf": lambda L: setattr(L.tensor(1.0, requires_grad=True) * 2, "requires_grad", False),
    "gradient_shape": lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).backward(L.ones(3)),
    "grad_outputs_shape": lambda L: (lambda x: L.autograd.grad(x * 2, x, L.ones(3)))(
        L.tensor([1.0, 2.0], requires_grad=True)),
    "anomaly_nan": _anomaly_nan,
    "backward_inputs_empty": lambda L: (L.tensor(1.0, requires_grad=True) * 2).backward(inputs=[]),
    "int_requires_grad": lambda L: L.tensor([1, 2], requires_grad=True),
    "detach_view_in_place": lambda L: L.tensor([1.0, 2.0], requires_grad=True)[:1].detach_(),
    "grad_of_wrong_shape": lambda L: setattr(L.tensor([1.0, 2.0], requires_grad=True), "grad", L.ones(3)),
    "broadcast": lambda L: L.ones(3) + L.ones(2),
    "matmul": lambda L: L.ones(2, 3) @ L.ones(2, 3),
    "post_accumulate_hook_returns": lambda L: (lambda p: (
        p.register_post_accumulate_grad_hook(lambda q: L.zeros(2)), (p * p).sum().backward()))(
        L.tensor([1.0, 2.0], requires_grad=True)),
}
CASES["inference_saved"] = lambda L: (lambda t: (L.tensor(2.0, requires_grad=True) * t).sum())(_inference(L))
CASES["inference_in_place"] = lambda L: _inference(L).add_(1)


def _inference(L: Any) -> Any:
    with L.inference_mode():
        return L.ones(2)


def _raised(L: Any, name: str) -> BaseException:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as caught:
            CASES[name](L)
    return caught.value


@pytest.mark.parametrize("name", sorted(CASES))
def test_messages_begin_with_pytorchs_text(name: str) -> None:
    theirs, ours = _raised(torch, name), _raised(gradcalc, name)
    assert type(ours) is type(theirs)
    # the whole of PyTorch's message, up to the hint it adds about its own tools
    head = str(theirs).split(" Hint: ")[0].split("  (Could this")[0]
    assert str(ours).startswith(head), f"\n ours:   {ours}\n theirs: {theirs}"


def test_anomaly_mode_warns_with_the_forward_traceback() -> None:
    heads = []
    for L in (torch, gradcalc):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                _anomaly_nan(L)
        texts = [str(w.message) for w in seen if "Error detected in" in str(w.message)]
        assert len(texts) == 1, L.__name__
        head, _, trace = texts[0].partition("\n")
        heads.append(head)
        assert "(x * 0).sqrt().backward()" in trace  # the user's line that made the failing node
    assert heads[0] == heads[1]
    assert heads[0].endswith("Traceback of forward call that caused the error:")


@pytest.mark.parametrize("source, words", [
    ("x = 2 requires_grad\ny = x * x\nbackward y\nbackward y",
     "trying to backward through the graph a second time (or to read saved values after they were freed)"),
    ("x = [1., 2.] requires_grad\nx.add_(1)", "add_: this tensor is a leaf that requires grad"),
    ("x = [1., 2.] requires_grad\nbackward x * 2", "backward: the output has shape (2,)"),
    ("x = [1., 2.]\n(x * 2).sum().backward()", "backward: the tensor does not require grad"),
])
def test_the_language_keeps_its_own_words(source: str, words: str) -> None:
    from tests.lang.gclang_testing import run

    result = run(source)
    assert not result.ok and result.errors[0].startswith(words), result.errors
    assert "Trying to backward" not in result.err and "leaf Variable" not in result.err


def test_anomaly_mode_warns_for_a_saved_tensor_changed_in_place() -> None:
    found = []
    for L in (torch, gradcalc):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="modified by an inplace operation"):
                _version(L)
        found.append([str(w.message).split("\n")[0] for w in seen if "Error detected in" in str(w.message)])
    assert found[0] == found[1] == ["Error detected in MulBackward0. Traceback of forward call that caused the error:"]
