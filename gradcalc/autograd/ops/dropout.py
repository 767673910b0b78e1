"""Dropout: `dropout`, `feature_dropout` (the channel-wise dropout under `dropout1d/2d/3d`) and `native_dropout`,
as PyTorch runs them on the CPU.

On the CPU, PyTorch's `F.dropout` is a composition (ATen's `_dropout_impl`), not the fused kernel: in training
mode it draws `noise = bernoulli(1 - p) / (1 - p)` and returns `input * noise`, so the graph holds a
MulBackward0 whose `_saved_other` is the noise (the mask, scaled); with `p == 0` or in evaluation mode it
returns `input` itself (no node); with `p == 1`, `input * zeros(())`. `native_dropout` is the fused operation
(NativeDropoutBackward0, saving `p` and the mask `result1`), which PyTorch's GPU path records.

The random part is one function, `keep_mask` (which elements are kept): every dropout draws through it, from
gradcalc's default generator (the stream is gradcalc's, not PyTorch's). It is the hook for `vmap`'s
`randomness=` and for tests that inject masks: replace `keep_mask` (a module attribute looked up at each call)
and every dropout uses the replacement. The batching rules read the mode of the vmap running from
`randomness()` ('error', PyTorch's default, unless a vmap sets 'same' or 'different' with `vmap_randomness`):
'error' raises PyTorch's error where a mask would be drawn, 'different' draws one mask for the whole batch
(each sample its own), 'same' draws one sample's mask and broadcasts it over the batch.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..defaults import default_float
from ..node import Node
from ..tensor import Tensor
from .arithmetic import mul
from .binary import mul_scalar
from .core import needs, record, result
from .random import _draw

PYTORCH_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
    "randomness flags on vmap or perform the randomness operation out of vmap"
)
RANDOMNESS_MODES = ("error", "different", "same")


class _Randomness(threading.local):
    mode = "error"  # PyTorch's vmap default


_randomness = _Randomness()


def randomness() -> str:
    """The `randomness=` of the vmap running in this thread ('error' when none set one)."""
    return _randomness.mode


@contextmanager
def vmap_randomness(mode: str) -> Iterator[None]:
    """Within the block, in this thread, batching rules draw as vmap's `randomness=mode` says."""
    if mode not in RANDOMNESS_MODES:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {mode}")
    previous = _randomness.mode
    _randomness.mode = mode
    try:
        yield
    finally:
        _randomness.mode = previous


def keep_mask(input: Tensor, shape: tuple[int, ...], p: float) -> Tensor:  # noqa: A002 - PyTorch's name
    """Dropout's one random draw: a bool tensor of `shape`, each element True (kept) with probability 1 - p,
    drawn from the default generator. Every dropout calls it through this module's attribute, so replacing it
    intercepts every draw (vmap's randomness, a test's injected mask)."""
    keep = 1.0 - p
    return Tensor._make(np.asarray(_draw(None, lambda r: r.random(shape)) < keep), False, None)


def _check_p(p: Any) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def _noise(input: Tensor, shape: tuple[int, ...], p: float) -> Tensor:  # noqa: A002
    """PyTorch's noise: the mask in input's dtype, divided by 1 - p (in input's dtype, as `div_` computes)."""
    data = input._data
    if data.dtype.kind != "f":  # PyTorch's noise.div_ on an integral tensor: the quotient is of the default dtype
        wide = "Double" if default_float() == np.float64 else "Float"
        raise RuntimeError(f"result type {wide} can't be cast to the desired output type {_TYPE.get(data.dtype.name)}")
    mask = keep_mask(input, shape, p)._data
    return Tensor._make(np.asarray(mask.astype(data.dtype) / data.dtype.type(1.0 - p)), False, None)


_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _apply(input: Tensor, p: float, train: bool, inplace: bool, shape: Any) -> Tensor:  # noqa: A002
    """ATen's `_dropout_impl`: `input` itself, `input * 0`, or `input * noise` (in place with `inplace`)."""
    if p == 0 or not train or input._data.size == 0:
        return input
    if p == 1:
        zero = Tensor._make(np.zeros((), dtype=input._data.dtype), False, None)
        return input.mul_(zero) if inplace else mul(input, zero)
    noise = _noise(input, shape(input), p)
    return input.mul_(noise) if inplace else mul(input, noise)


def _feature_shape(input: Tensor) -> tuple[int, ...]:  # noqa: A002
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return (shape[0], shape[1]) + (1,) * (len(shape) - 2)


def _rule(name: str, feature: bool) -> spec.BatchRule:
    """The batching rule of `dropout` / `feature_dropout` (see the module docstring for the randomness)."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        batching = spec.RULES
        bind = batching.bind
        names = ("p", "training" if name == "dropout" else "train", "inplace")
        given = dict(zip(names, args[1:], strict=False))
        given.update(params)
        x, d = args[0], dims[0]
        p, train = given.get("p", 0.5), given.get(names[1], True)
        if p == 0 or p == 1 or not train:  # no mask is drawn: the same operation on the whole batch
            return bind(name, x, **given), d
        mode = randomness()
        if mode == "error":
            raise RuntimeError(PYTORCH_RANDOM_ERROR)
        x = batching.to_front(x, d)
        shape = batching.shape_of(x)
        if mode == "same":  # one sample's mask, the same for every sample
            sample = _feature_shape(Tensor._make(np.empty(shape[1:]), False, None)) if feature else shape[1:]
            noise = _noise(Tensor._make(np.empty((), dtype=_dtype_of(x)), False, None), sample, p)
            return bind("mul", x, noise), 0
        if not feature:  # a mask for the whole batch: each sample its own
            return bind(name, x, **given), 0
        # channel-wise: the batch folded into the samples' first dimension, each (sample, row) its own channels
        flat = bind("reshape", x, (shape[0] * shape[1], *shape[2:]))
        return bind("reshape", bind(name, flat, **given), shape), 0

    return rule


def _dtype_of(x: Any) -> np.dtype:
    while not isinstance(x, Tensor):  # a value batched at an outer level
        x = x.value
    return x._data.dtype


@spec.op("dropout", top_level=False, method=False, vmap=_rule("dropout", False),
         sample=spec.Sample(((2, 3),), lambda L, a: L.nn.functional.dropout(a, 1.0)
                            + L.nn.functional.dropout(a, 0.5, training=False) + L.nn.functional.dropout(a * 2.0, 0.0)))
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """In training mode, each element zeroed with probability p and the others scaled by 1/(1-p); the input
    itself otherwise (evaluation mode, or p = 0)."""
    return _apply(input, _check_p(p), training, inplace, lambda x: x._data.shape)


@spec.op("feature_dropout", method=False, vmap=_rule("feature_dropout", True),
         sample=spec.Sample(((2, 3, 2),), lambda L, a: L.feature_dropout(a, 1.0, True)
                            + L.feature_dropout(a, 0.5, False)))
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Channel-wise dropout of an (N, C, ...) input: each channel of each sample zeroed with probability p in
    training mode, the others scaled by 1/(1-p)."""
    return _apply(input, p, train, False, _feature_shape)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """`feature_dropout` written into `input`."""
    return _apply(input, p, train, True, _feature_shape)


# -- native_dropout: the fused operation ---------------------------------------------------------------------
def _native_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    t = tangents[0]
    if t is None or not node.train:
        return t
    return mul_scalar(t, node.scale) * node.mask


@spec.node(
    formula={"input": "native_dropout_backward(grad, result1, scale)"},
    saved={"p": SV.field("p"), "result1": SV.tensor(0)},
    jvp=_native_jvp, tangent="train ? scale * input_t * result1 : input_t", batched=spec.BROADCASTS,
)
class NativeDropoutBackward0(Node):
    """grad * mask * scale, scale = 1/(1-p) in training (0 for p = 1), 1 in evaluation mode."""

    __slots__ = ("p", "scale", "train", "mask")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if type(g) is not Tensor:  # native_dropout_backward: (grad * mask) * scale
            (mask,) = self.unpack_saved(True)
            return ((g * mask) * self.scale,)
        (mask,) = self.saved_tensors  # PyTorch's differentiable form: grad * (mask * scale), a MulBackward0
        factor = Tensor._make(np.asarray(mask._data.astype(g._data.dtype) * g._data.dtype.type(self.scale)),
                              False, None)
        return (g * factor if needs(self, 0) else None,)


@spec.op("native_dropout", method=False,
         sample=spec.Sample(((2, 3),), lambda L, a: L.native_dropout(a, 0.0, True)[0]
                            + L.native_dropout(a, 1.0, True)[0] + L.native_dropout(a, 0.3, False)[0]))
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Fused dropout: (output, mask), the mask a bool tensor of the elements kept."""
    data = input._data
    training = train is None or bool(train)
    if data.size == 0:
        return input, Tensor._make(np.empty_like(data), False, None)
    if training:
        keep = 1.0 - p
        scale = 0.0 if keep == 0 else 1.0 / keep
        mask = keep_mask(input, data.shape, p)._data
        out = (data * mask) * data.dtype.type(scale)
    else:
        scale = 1.0
        mask = np.ones(data.shape, dtype=bool)
        out = data.copy()
    kept = Tensor._make(mask, False, None)
    node = record(NativeDropoutBackward0, input)
    if node is not None:
        node.p, node.scale, node.train, node.mask = p, scale, training, kept
        node.save(kept)  # the mask returned: a later in-place change of it is caught, as PyTorch's result1
    return result(np.asarray(out, dtype=data.dtype), node), kept
