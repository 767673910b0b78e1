"""`gradcalc.nn.init`: fill a tensor in place with values for a starting point of training, as PyTorch's
`torch.nn.init` does (uniform, normal, constant, Kaiming and Xavier schemes), under no_grad.

Random values come from gradcalc's own stream (`gradcalc.manual_seed`, or a `generator=`, makes them repeat);
they follow PyTorch's distributions, not its exact draws.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..autograd.ops import random as _R
from ..autograd.tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_", "orthogonal_",
    "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for a nonlinearity: 1 (linear, sigmoid), 5/3 (tanh), √2 (relu),
    √(2 / (1 + slope²)) (leaky_relu, slope `param`, 0.01 by default), 3/4 (selu)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"calculate_gain: the negative slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(
        f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; use one of linear, sigmoid, tanh, relu, "
        "leaky_relu, selu (or a conv name)"
    )


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    shape = tensor._data.shape
    if len(shape) < 2:
        raise ValueError(
            f"fan in and fan out need a tensor of at least 2 dimensions (out, in, ...), not {len(shape)}: "
            "Kaiming and Xavier initialisations are for weight matrices"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} is not supported: use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _check(tensor: Any, fn: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a tensor to fill, not {type(tensor).__name__}")
    return tensor


def _write(tensor: Tensor, values: Any) -> Tensor:
    """Write `values` into `tensor` in place, unrecorded (bumps its version, as PyTorch's fills do)."""
    with no_grad():
        tensor.copy_(Tensor._make(np.asarray(values, dtype=tensor._data.dtype), False, None))
    return tensor


def _draw(kind: str, tensor: Tensor, a: float, b: float, generator: Any) -> np.ndarray:
    """Values for `tensor` from U(a, b) or N(a, b²), drawn in its dtype from `generator` (or the default)."""
    shape = tensor._data.shape
    want = tensor._data.dtype if tensor._data.dtype.kind == "f" else np.dtype(np.float64)
    if kind == "uniform":
        return _R._draw(generator, lambda r: r.random(shape, dtype=want)) * (b - a) + a
    return _R._draw(generator, lambda r: r.standard_normal(shape, dtype=want)) * b + a


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values drawn uniformly from [a, b)."""
    _check(tensor, "uniform_")
    return _write(tensor, _draw("uniform", tensor, a, b, generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values drawn from the normal distribution N(mean, std²)."""
    _check(tensor, "normal_")
    return _write(tensor, _draw("normal", tensor, mean, std, generator))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    _check(tensor, "constant_")
    return _write(tensor, np.full(tensor._data.shape, val))


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def _empty(tensor: Tensor) -> bool:
    if 0 in tensor._data.shape:
        warnings.warn("initialising a tensor with no elements does nothing", UserWarning, stacklevel=3)
        return True
    return False


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot initialisation: U(-a, a) with a = gain √(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check(tensor, "xavier_uniform_"))
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot initialisation: N(0, std²) with std = gain √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check(tensor, "xavier_normal_"))
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He initialisation: U(-bound, bound) with bound = gain √(3 / fan), gain from `nonlinearity` and `a`."""
    if _empty(_check(tensor, "kaiming_uniform_")):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He initialisation: N(0, std²) with std = gain / √fan, gain from `nonlinearity` and `a`."""
    if _empty(_check(tensor, "kaiming_normal_")):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Fill with values drawn from N(mean, std²) truncated to [a, b], by PyTorch's method (its law, not its
    draws): where [a, b] holds more than 0.3 of the normal's mass, normal draws redrawn until inside; else
    uniform draws on [a, b] kept with probability pdf(x) / pdf(mode), which ends however far [a, b] lies in a
    tail (redrawing normal draws there would not)."""
    _check(tensor, "trunc_normal_")
    if std == 0:
        raise ZeroDivisionError("division by zero")  # (PyTorch's, from its normal CDF)
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    mass = (math.erf((b - mean) / std / math.sqrt(2.0)) - math.erf((a - mean) / std / math.sqrt(2.0))) / 2.0
    shape = tensor._data.shape
    out = np.empty(shape).reshape(-1)
    todo = np.arange(out.size)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    if not mass > 0.3:  # PyTorch's uniform_ on [a, b] refuses what it refuses there
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
        if not (math.isfinite(a) and math.isfinite(b)):
            raise RuntimeError(f"{'from' if not math.isfinite(a) else 'to'} is out of bounds for double")
    while todo.size:
        if mass > 0.3:
            draws = _R._draw(generator, lambda r, n=todo.size: r.standard_normal(n)) * std + mean
            keep = ~((draws < a) | (draws > b))  # (PyTorch's test, as written: a NaN is kept)
        else:
            draws = _R._draw(generator, lambda r, n=todo.size: r.uniform(a, b, n))
            log_u = np.log(_R._draw(generator, lambda r, n=todo.size: r.random(n)))
            with np.errstate(invalid="ignore"):  # an infinite or NaN mean: PyTorch's test keeps every draw
                keep = ~(log_u > -0.5 * ((draws - mean) / std) ** 2 - log_peak)
        out[todo[keep]] = draws[keep]
        todo = todo[~keep]
    return _write(tensor, out.reshape(shape))


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d tensor with the identity matrix (ones on the diagonal)."""
    if _check(tensor, "eye_")._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor._data.shape))


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix, times `gain`: the Q of a QR decomposition of normal draws, its
    signs fixed by R's diagonal, as PyTorch makes it (dims after the first are flattened)."""
    if _check(tensor, "orthogonal_")._data.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._data.size == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    flat = _R._draw(generator, lambda r: r.standard_normal((rows, cols)))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor._data.shape))
