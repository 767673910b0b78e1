"""PyTorch tutorial programs, run as written on gradcalc (`import gradcalc as torch`) and on torch, compared.

The programs are PyTorch's `beginner_source/examples_nn` polynomial fits (`polynomial_nn.py`,
`polynomial_optim.py`, `dynamic_net.py`), `examples_autograd/polynomial_custom_function.py` and
pytorch/examples' `regression/main.py`, with their comments left
out. Their random draws (`torch.randn`, a layer's initial weights, Python's `random.randint`) are the test's:
each library gets the same values, so the two runs compute the same thing. Only the run lengths are cut where
noted (dynamic_net trains 3000 steps, not 30000), and regression's update is made under `torch.no_grad()`, as
PyTorch now requires of an in-place change of a leaf.

Each program runs in float32, PyTorch's default dtype, on both libraries, and once more on torch in float64 as
the reference: gradcalc's float32 results are held to PyTorch's own float32 error (tests/precision.py). In
float64 both agree to rounding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.precision import assert_float32_close

POLYNOMIAL_NN = """
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
loss_fn = torch.nn.MSELoss(reduction='sum')
learning_rate = 1e-6
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
"""  # noqa: E501 - the tutorial's own line

POLYNOMIAL_OPTIM = """
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
loss_fn = torch.nn.MSELoss(reduction='sum')
learning_rate = 1e-6
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
"""  # noqa: E501 - the tutorial's own line

POLYNOMIAL_CUSTOM_FUNCTION = """
class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(2000):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
"""

DYNAMIC_NET = """
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(3000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 200 == 199:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
"""  # noqa: E501 - the tutorial's own line

REGRESSION = """
from itertools import count
import torch.nn.functional as F

POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


fc = torch.nn.Linear(W_target.size(0), 1)

for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    with torch.no_grad():
        for param in fc.parameters():
            param.add_(-0.1 * param.grad)
    if loss < 1e-3:
        break

print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\\t' + poly_desc(fc.weight.view(-1), fc.bias))
print('==> Actual function:\\t' + poly_desc(W_target.view(-1), b_target))
"""


class Draws:
    """The test's random values, handed out in order (one stream per run, the same for every library)."""

    def __init__(self, seed: int, ints: list[int] | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.ints = list(ints or [])

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.standard_normal(shape)

    def randint(self, a: int, b: int) -> int:  # Python's random.randint(a, b): a <= n <= b
        value = self.ints.pop(0)
        assert a <= value <= b
        return value


class Library:
    """`torch` as the program sees it: the library, but `randn` and a Linear layer's initial weights are the
    test's draws, in the program's dtype."""

    def __init__(self, lib: Any, draws: Draws) -> None:
        self._lib, self._draws = lib, draws
        self.nn = _NN(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)

    def randn(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Any:
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], tuple) else tuple(size)
        t = self._lib.tensor(self._draws.normal(shape), dtype=dtype or self._lib.get_default_dtype())
        return t.requires_grad_(requires_grad)


class _NN:
    def __init__(self, outer: Library) -> None:
        self._outer = outer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._outer._lib.nn, name)

    def Linear(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - PyTorch's name
        lib = self._outer._lib
        layer = lib.nn.Linear(*args, **kwargs)
        with lib.no_grad():
            for p in layer.parameters():
                p.copy_(lib.tensor(self._outer._draws.normal(tuple(p.shape)) * 0.5))
        return layer


def run(lib: Any, source: str, dtype: str, seed: int = 0, ints: list[int] | None = None) -> list[str]:
    """Run the program on `lib` under default dtype `dtype`; what it printed, line by line."""
    import sys
    import types

    printed: list[str] = []
    previous = lib.get_default_dtype()
    lib.set_default_dtype(getattr(lib, dtype))
    draws = Draws(seed, ints)
    fake_random = types.SimpleNamespace(randint=draws.randint)
    library = Library(lib, draws)
    # `import torch.nn.functional as F` inside the program finds the library under test
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.nn", "torch.nn.functional")}
    namespace = {"torch": library, "math": math, "random": fake_random,
                 "print": lambda *a: printed.append(" ".join(str(v) for v in a)), "__name__": "__tutorial__"}
    try:
        if lib is gradcalc:
            sys.modules["torch"], sys.modules["torch.nn"] = library, library.nn  # type: ignore[assignment]
            sys.modules["torch.nn.functional"] = lib.nn.functional
        exec(compile(source, "<tutorial>", "exec"), namespace)  # noqa: S102 - the tutorial program
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        lib.set_default_dtype(previous)
    return printed


_NUMBER = re.compile(r"[-+]?\d+\.?\d*(?:e[-+]?\d+)?")


def numbers(lines: list[str]) -> np.ndarray:
    return np.array([float(v) for line in lines for v in _NUMBER.findall(line)])


def scales(lines: list[str]) -> np.ndarray:
    """The size of the values each printed number was computed through: a loss its own; a fitted coefficient
    the largest of its line's (the fit moves them all by the same gradient steps: one near 0 carries their
    rounding)."""
    out: list[float] = []
    for line in lines:
        values = [abs(float(v)) for v in _NUMBER.findall(line)]
        out += [max(values)] * len(values) if line.startswith("Result") else values
    return np.array(out)


def assert_run_close(ours: list[str], theirs: list[str], reference: list[str], steps: int) -> None:
    a, b, r, scale = numbers(ours), numbers(theirs), numbers(reference), scales(reference)
    assert len(a) == len(b) == len(r)
    for i in range(len(r)):
        assert_float32_close(np.float32(a[i]), np.float32(b[i]), np.float64(r[i]), steps=10 * steps,
                             scale=float(scale[i]), what=f"printed value {i}")


PROGRAMS: dict[str, tuple[str, int, list[int] | None]] = {
    # name: (source, steps per printed value: the computation's length, Python's random draws)
    "polynomial_nn": (POLYNOMIAL_NN, 2000, None),
    "polynomial_optim": (POLYNOMIAL_OPTIM, 2000, None),
    "dynamic_net": (DYNAMIC_NET, 3000, [int(v) for v in np.random.default_rng(5).integers(4, 7, 3000)]),
}


def test_custom_function_tutorial_float32() -> None:
    """examples_autograd/polynomial_custom_function.py: a custom autograd Function in float32 (the program
    fixes `dtype = torch.float`); its float64 reference is the same program with `torch.double`."""
    ours, theirs = run(gradcalc, POLYNOMIAL_CUSTOM_FUNCTION, "float32"), run(torch, POLYNOMIAL_CUSTOM_FUNCTION,
                                                                          "float32")
    reference = run(torch, POLYNOMIAL_CUSTOM_FUNCTION.replace("dtype = torch.float\n", "dtype = torch.double\n"),
                    "float32")
    assert_run_close(ours, theirs, reference, 2000)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tutorial_float64_as_torch(name: str) -> None:
    source, _, ints = PROGRAMS[name]
    ours, theirs = run(gradcalc, source, "float64", ints=ints), run(torch, source, "float64", ints=ints)
    assert len(ours) == len(theirs)
    np.testing.assert_allclose(numbers(ours), numbers(theirs), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tutorial_float32_within_torchs_error(name: str, pytorch_default_dtype: None) -> None:
    """The tutorials as written run in float32: gradcalc's printed values are as close to the float64 run as
    PyTorch's float32 ones allow, over the program's length (10 roundings a step)."""
    source, steps, ints = PROGRAMS[name]
    ours, theirs = run(gradcalc, source, "float32", ints=ints), run(torch, source, "float32", ints=ints)
    reference = run(torch, source, "float64", ints=ints)
    assert len(ours) == len(theirs) == len(reference)
    assert_run_close(ours, theirs, reference, steps)


def test_regression_example() -> None:
    """pytorch/examples' regression: a Linear layer fitted to a random polynomial by smooth L1 loss."""
    if not hasattr(gradcalc.nn.functional, "smooth_l1_loss"):
        pytest.skip("F.smooth_l1_loss is one of the new losses that come with the engine's op specs")
    ours, theirs = run(gradcalc, REGRESSION, "float64", seed=3), run(torch, REGRESSION, "float64", seed=3)
    assert ours == theirs


def test_the_programs_use_the_library_they_are_given() -> None:
    """The harness itself: each run's `torch` is the library under test (not a stray import of torch)."""
    seen: list[Callable[..., Any]] = []
    for lib in (gradcalc, torch):
        printed = run(lib, "print(type(torch.zeros(1)).__module__)\nimport torch.nn.functional as F\n"
                           "print(F.relu.__module__)", "float32")
        seen.append(printed)  # type: ignore[arg-type]
    assert seen[0][0].startswith("gradcalc") and seen[1][0].startswith("torch")
    assert seen[0][1].startswith("gradcalc") and not seen[1][1].startswith("gradcalc")
