"""examples/cnn.gc against the same program written with PyTorch (LANGUAGE.md §9; issue 21's small CNN example).

The example's random parts (its images, labels and initial weights: gradcalc's stream, not PyTorch's) are read
from a session that ran the example up to its training loop; everything after that is computed by PyTorch from
them, in float64, and compared with what the example prints: the loss at steps 0, 20 and 40, the final loss and
the accuracy, and the first convolution's node and saved arguments.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import torch

from gradcalc.lang import Session

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "examples" / "cnn.gc").read_text()
NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"


def _session(text: str) -> tuple[Session, str]:
    out, err = io.StringIO(), io.StringIO()
    session = Session(out=out, err=err)
    assert session.run(text, "cnn.gc"), err.getvalue()
    return session, out.getvalue()


def _torch_run(x: np.ndarray, labels: np.ndarray, weights: dict[str, np.ndarray]) -> tuple[list[float], float, float]:
    """The example's training loop in PyTorch: the losses it prints, the final loss, the accuracy."""
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.ReLU(),
                        nn.Flatten(), nn.Linear(32, 2)).double()
    net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    xs, ys = torch.tensor(x), torch.tensor(labels)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    printed = []
    for step in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xs), ys)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            printed.append(loss.item())
    final = torch.nn.functional.cross_entropy(net(xs), ys).item()
    with torch.no_grad():
        accuracy = (net(xs).argmax(dim=1) == ys).double().mean().item()
    return printed, final, accuracy


def test_the_cnn_example_trains_as_pytorch_does() -> None:
    prefix = SOURCE[: SOURCE.index("for step in range")]
    before, _ = _session(prefix)  # the same seed: the same images, labels and initial weights
    x = before.workspace["x"].detach().numpy()
    labels = before.workspace["labels"].numpy()
    weights = {k: v.detach().numpy().copy() for k, v in before.workspace["net"].state_dict().items()}
    losses, final, accuracy = _torch_run(x, labels, weights)

    _, text = _session(SOURCE)
    shown = [float(v) for v in re.findall(rf"^step \d+ loss ({NUMBER})$", text, re.M)]
    # 60 steps of float64 SGD over a few thousand operations each: far inside 1e-9 relative
    assert len(shown) == 3
    np.testing.assert_allclose(shown, losses, rtol=1e-9)
    np.testing.assert_allclose(float(re.search(rf"^final loss: ({NUMBER})$", text, re.M).group(1)), final, rtol=1e-9)
    assert float(re.search(rf"^accuracy: ({NUMBER})$", text, re.M).group(1)) == accuracy
    # the node PyTorch records for a convolution, and what it saved
    assert "<ConvolutionBackward0>" in text
    assert "((1, 1), (1, 1), 1)" in text
