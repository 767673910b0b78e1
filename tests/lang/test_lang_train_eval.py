"""Training and evaluation mode in the language (LANGUAGE.md §9, the autograd-mechanics seed): examples/
train_eval.gc against the same program written with PyTorch, and the surface a user reaches (the layers, their
functions, `train()`/`eval()`/`training`, the buffers).

The example's random parts are injected into PyTorch: the initial weights are read from the session (nothing in
the example changes them), and each dropout mask gradcalc draws (through `ops.dropout.keep_mask`, the one draw
every dropout makes) is given to PyTorch's `F.dropout` in the same order, computed as ATen's CPU dropout computes
it (`input * (mask / (1 - p))`). Everything else is PyTorch's own.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gclang_testing import out, run

from gradcalc.autograd.ops import dropout as gc_dropout
from gradcalc.lang import Session

torch.set_default_dtype(torch.float64)
TF = torch.nn.functional
ROOT = Path(__file__).resolve().parents[2]


def _run_example(monkeypatch: pytest.MonkeyPatch) -> tuple[str, Session, list[np.ndarray]]:
    masks: list[np.ndarray] = []
    real = gc_dropout.keep_mask

    def recording(input: Any, shape: tuple[int, ...], p: float) -> Any:  # noqa: A002
        kept = real(input, shape, p)
        masks.append(kept._data.copy())
        return kept

    monkeypatch.setattr(gc_dropout, "keep_mask", recording)
    buf, err = io.StringIO(), io.StringIO()
    session = Session(out=buf, err=err)
    assert session.run((ROOT / "examples" / "train_eval.gc").read_text(), "train_eval.gc"), err.getvalue()
    return buf.getvalue(), session, masks


def _torch_program(weights: dict[str, np.ndarray], masks: list[np.ndarray],
                   monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """examples/train_eval.gc in PyTorch: the lines its `print` statements write."""
    queue = list(masks)
    real = TF.dropout

    def injected(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:  # noqa: A002
        if not training or p == 0:
            return real(input, p, training, inplace)
        noise = torch.tensor(queue.pop(0), dtype=input.dtype) / (1 - p)  # ATen's CPU dropout, with our mask
        return input * noise

    monkeypatch.setattr(torch.nn.functional, "dropout", injected)
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2), torch.nn.Dropout(0.5))
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.tensor(weights[name]))
    x = torch.tensor([[0.5, -1.0], [1.5, 2.0], [-0.5, 0.25]])
    bn = net[1]
    lines = [f"training: {net.training}"]
    o = net(x)
    lines.append(f"train, grad: {o!r}")
    lines.append(f"running_mean: {bn.running_mean!r} running_var: {bn.running_var!r}")
    lines.append(f"num_batches_tracked: {bn.num_batches_tracked!r}")
    o.sum().backward()
    grads_after_train = {n: p.grad.clone() for n, p in net.named_parameters()}
    net.zero_grad()
    with torch.no_grad():
        o = net(x)
    lines.append(f"train, no_grad: {o!r}")
    lines.append(f"num_batches_tracked: {bn.num_batches_tracked!r}")
    net.eval()
    lines.append(f"training: {net.training}")
    o = net(x)
    lines.append(f"eval, grad: {o!r}")
    o.sum().backward()
    lines.append(f"weight.grad: {net[0].weight.grad!r}")
    with torch.no_grad():
        same = net(x)
    lines.append(f"eval, no_grad: {same!r}")
    lines.append(f"equal to eval, grad: {torch.equal(same, o.detach())}")
    lines.append(f"num_batches_tracked: {bn.num_batches_tracked!r} (unchanged in evaluation mode)")
    assert not queue, "gradcalc drew more masks than PyTorch used"
    _TORCH_STATE.update(grads=grads_after_train, state=net[1].state_dict())
    return lines


_TORCH_STATE: dict[str, Any] = {}


def _printed(text: str) -> list[str]:
    """The output of the example's `print` statements (a label, a colon, values), tensors over several lines."""
    labels = ("training:", "train, grad:", "running_mean:", "num_batches_tracked:", "train, no_grad:", "eval, grad:",
              "weight.grad:", "eval, no_grad:", "equal to eval, grad:")
    out, current = [], None
    for line in text.splitlines():
        if line.startswith(labels):
            current = [line]
            out.append(current)
        elif current is not None and line.startswith(" ") and not line.lstrip().startswith(("├", "└", "│")):
            current.append(line)
        else:
            current = None
    return ["\n".join(block) for block in out]


def test_the_example_prints_pytorchs_values(monkeypatch: pytest.MonkeyPatch) -> None:
    text, session, masks = _run_example(monkeypatch)
    assert len(masks) == 2  # one mask a training-mode forward: recording, then under no_grad
    net = session.workspace["net"]
    weights = {name: p.detach().numpy().copy() for name, p in net.named_parameters()}
    expected = _torch_program(weights, masks, monkeypatch)
    assert _printed(text) == expected
    # the buffers after the whole program, and the gradients of the training-mode backward
    state = session.workspace["bn"].state_dict()
    for key, value in _TORCH_STATE["state"].items():
        np.testing.assert_allclose(state[key].numpy(), value.numpy(), rtol=1e-12, atol=0, err_msg=key)


def test_the_example_shows_the_mask_node_and_the_batch_norm_node(monkeypatch: pytest.MonkeyPatch) -> None:
    text, _, masks = _run_example(monkeypatch)
    train_graph, eval_graph = (line for line in text.splitlines() if "(out: shape (3, 2)" in line)
    # training mode: the dropout is a MulBackward0 whose saved `other` is the mask scaled by 1/(1-p) ...
    assert train_graph.startswith("MulBackward0")
    scaled = torch.tensor(masks[0].astype(float) * 2.0)
    assert f"other = {repr(scaled).replace(chr(10) + '        ', ' ')}" in train_graph
    batch_norm_line = next(line for line in text.splitlines() if "NativeBatchNormBackward0  formula:" in line)
    assert "saved: eps = 1e-05" in batch_norm_line and "training = True" in batch_norm_line
    # ... and in evaluation mode there is no mask node, but the graph is still recorded
    assert eval_graph.startswith("NativeBatchNormBackward0") and "training = False" in eval_graph
    assert "result1 = tensor([]), result2 = tensor([])" in eval_graph
    assert "MulBackward0" not in eval_graph
    # explain narrates the backward through the mask: the dropped elements pass no gradient
    narration = text[text.index("backward out.sum():"):text.index("train, no_grad:")]
    assert re.search(r"\d+\. out  MulBackward0", narration)
    assert "NativeBatchNormBackward0" in narration


# -- the surface --------------------------------------------------------------------------------------------------
def test_train_eval_and_training_on_any_module() -> None:
    text = out(
        "net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.3))\n"
        "print net.training, net[1].training\n"
        "_ = net.eval()\n"
        "print net.training, net[1].training\n"
        "_ = net.train()\n"
        "print net.training\n"
        "_ = net.train(false)\n"
        "print net[1].training\n"
    )
    assert text.split() == ["True", "True", "False", "False", "True", "False"]


def test_evaluation_mode_is_orthogonal_to_no_grad() -> None:
    """The seed's point: eval() changes what Dropout computes, not whether autograd records; no_grad the reverse.
    (In evaluation mode Dropout returns its input itself, as PyTorch's does.)"""
    text = out(
        "seed 1\n"
        "x = ones(2, 50) requires_grad\n"
        "d = nn.Dropout(0.5)\n"
        "a = d(x * 1)\n"
        "print a.requires_grad, (a == 0).any().item(), (a * (a - 2)).abs().sum().item() == 0\n"
        "_ = d.eval()\n"
        "b = d(x * 1)\n"
        "print b.requires_grad, torch.equal(b, x)\n"
        "with no_grad:\n"
        "    c = d(x * 1)\n"
        "print c.requires_grad, torch.equal(c, x)\n"
        "_ = d.train()\n"
        "with no_grad:\n"
        "    e = d(x * 1)\n"
        "print e.requires_grad, (e == 0).any().item()\n"
    )
    assert text.split() == ["True", "True", "True", "True", "True", "False", "True", "False", "True"]


def test_the_layers_and_functions_are_built_ins() -> None:
    text = out(
        "print nn.BatchNorm2d(3)\n"
        "print nn.LayerNorm([3, 4], elementwise_affine=false)\n"
        "print nn.Embedding(10, 3, padding_idx=0)\n"
        "print nn.Dropout2d(0.25), nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(delta=2.0), "
        "nn.KLDivLoss(reduction=\"batchmean\")\n"
    )
    assert text.splitlines() == [
        repr(torch.nn.BatchNorm2d(3)), repr(torch.nn.LayerNorm([3, 4], elementwise_affine=False)),
        repr(torch.nn.Embedding(10, 3, padding_idx=0)),
        f"{torch.nn.Dropout2d(0.25)} {torch.nn.SmoothL1Loss(beta=0.5)} {torch.nn.HuberLoss(delta=2.0)} "
        f"{torch.nn.KLDivLoss(reduction='batchmean')}",
    ]


@pytest.mark.parametrize("call, expected", [
    ("F.layer_norm(x, [3])", lambda x: TF.layer_norm(x, [3])),
    ("layer_norm(x, (3,), eps=0.5)", lambda x: TF.layer_norm(x, (3,), eps=0.5)),
    ("F.batch_norm(x, none, none, training=true)", lambda x: TF.batch_norm(x, None, None, training=True)),
    ("batch_norm(x, zeros(3), ones(3) * 2)", lambda x: TF.batch_norm(x, torch.zeros(3), torch.ones(3) * 2)),
    ("F.smooth_l1_loss(x, x * 0.5, beta=0.3)", lambda x: TF.smooth_l1_loss(x, x * 0.5, beta=0.3)),
    ("huber_loss(x, zeros(4, 3), delta=0.5)", lambda x: TF.huber_loss(x, torch.zeros(4, 3), delta=0.5)),
    ("F.kl_div(x.log_softmax(1), x.softmax(0), reduction=\"batchmean\")",
     lambda x: TF.kl_div(x.log_softmax(1), x.softmax(0), reduction="batchmean")),
    ("F.embedding(tensor([[0, 2], [1, 1]]).long(), x)",
     lambda x: TF.embedding(torch.tensor([[0, 2], [1, 1]]), x)),
    ("F.dropout(x, 0.5, training=false)", lambda x: x),
    ("dropout(x, 1.0)", lambda x: x * 0.0),
])
def test_functional_forms_give_pytorchs_values(call: str, expected: Any) -> None:
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 2.0, -0.5], [-0.5, 0.25, 1.0], [0.0, 1.0, -2.0]])
    text = out(f"x = {x.tolist()}\nprint {call}\n")
    assert text.strip() == repr(expected(x))


def test_buffers_are_attributes_and_in_the_state_dict() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run("bn = nn.BatchNorm1d(2, momentum=none)\nfor i in range(3):\n    y = bn(randn(4, 2))\n"
                 "n = bn.num_batches_tracked\nm = bn.running_mean\nd = bn.state_dict()\n", "t.gc")
    assert s.workspace["n"].item() == 3 and s.workspace["n"].dtype.__repr__() == "torch.int64"
    assert list(s.workspace["d"]) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    r = run("bn = nn.BatchNorm1d(2)\nbn.training = false\n")
    assert not r.ok and "set training mode with .train() and evaluation mode with .eval()" in r.err


def test_messages_are_the_languages() -> None:
    r = run("e = nn.Embedding(4, 2)\ne(tensor([1, 2]))\n")
    assert "the indices must be whole numbers of dtype int64, not float64" in r.err and "torch." not in r.err
    r = run("e = nn.Embedding(4, 2)\ne(tensor([1, 5]).long())\n")
    assert "index 5 is out of range for a table of 4 rows" in r.err and "self" not in r.err
    r = run("nn.BatchNorm1d(3)(ones(2, 3, 4, 5))\n")
    assert "expected 2D or 3D input (got 4D input)" in r.err
    r = run("nn.Dropout(1.5)\n")
    assert "dropout probability has to be between 0 and 1, but got 1.5" in r.err
    r = run("nn.BatchNorm1d(3)(ones(1, 3))\n")
    assert "needs more than 1 value per channel, and an input of shape (1, 3) has one" in r.err
    r = run("nn.Embedding(4, 2, _weight=ones(4, 2))\n")
    assert "does not take an argument '_weight'" in r.err  # PyTorch's private parameter: not the language's
    assert "_weight" not in r.err.split(". Embedding(")[1].splitlines()[0]
