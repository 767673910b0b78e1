"""The recurrent layers `RNN`, `LSTM`, `GRU` and their one-step cells `RNNCell`, `LSTMCell`, `GRUCell`.

Each is composed of the engine's operations in the order PyTorch's CPU kernel (ATen's RNN.cpp) runs them, so
that autograd records the same kind of graph and the values and gradients are PyTorch's for the same weights:
a layer applies `linear(input, weight_ih, bias_ih)` to the whole sequence at once, then per step adds
`linear(h, weight_hh, bias_hh)`, splits the gates with `chunk` and applies `sigmoid`/`tanh`; the steps'
outputs are `stack`ed, the two directions `cat`ed on the last dim, the final states `stack`ed over layers.
Dropout (`F.dropout`) runs on every layer's output but the last, in training mode only. Parameters are PyTorch's
(`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, `..._reverse`, `weight_hr_l0` with `proj_size`),
drawn from U(-1/√hidden_size, 1/√hidden_size) as PyTorch's `reset_parameters` does. Packed sequences are not
in gradcalc.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ..autograd.defaults import default_float
from ..autograd.ops.creation import np_dtype
from ..autograd.ops.joins import cat, stack
from ..autograd.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _param(shape: tuple[int, ...], dt: Any) -> Parameter:
    return Parameter(Tensor._make(np.empty(shape, dtype=dt), False, None))


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor._make(np.zeros(shape, dtype=like._data.dtype), False, None)


# -- one step of each cell, as ATen's RNN.cpp writes them (pre: the input's linear map is already applied) ----
def _simple_step(x: Tensor, h: Tensor, w: tuple, pre: bool, relu: bool) -> Tensor:
    w_ih, w_hh, b_ih, b_hh = w[:4]
    out = F.linear(h, w_hh, b_hh) + (x if pre else F.linear(x, w_ih, b_ih))
    return out.relu() if relu else out.tanh()


def _lstm_step(x: Tensor, hc: tuple[Tensor, Tensor], w: tuple, pre: bool) -> tuple[Tensor, Tensor]:
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    h, c = hc
    gates = F.linear(h, w_hh, b_hh) + (x if pre else F.linear(x, w_ih, b_ih))
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * c + i * g
    hy = o * cy.tanh()
    if w_hr is not None:
        hy = hy.matmul(w_hr.t())
    return hy, cy


def _gru_step(x: Tensor, h: Tensor, w: tuple, pre: bool) -> Tensor:
    w_ih, w_hh, b_ih, b_hh = w[:4]
    ig = (x if pre else F.linear(x, w_ih, b_ih)).chunk(3, 1)
    hg = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset = (hg[0] + ig[0]).sigmoid()
    update = (hg[1] + ig[1]).sigmoid()
    new = (ig[2] + hg[2] * reset).tanh()
    return (h - new) * update + new


def _check_size(what: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{what} should be of type int, got: {type(n).__name__}")
    if n <= 0:
        raise ValueError(f"{what} must be greater than zero")
    return int(n)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters per layer and direction, their initialisation, the checks
    of the input and the initial state, and the walk over layers, directions and time steps."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device not in (None, "cpu"):
            raise RuntimeError(f"{mode}: gradcalc runs on the CPU only; leave device unset")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:  # type: ignore[operator]
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        input_size = _check_size("input_size", input_size)
        hidden_size = _check_size("hidden_size", hidden_size)
        if isinstance(num_layers, bool) or not isinstance(num_layers, (int, np.integer)) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, int(num_layers)
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)  # type: ignore[arg-type]
        self.bidirectional, self.proj_size = bidirectional, int(proj_size)
        dt = np_dtype(dtype) or default_float()
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(self.num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih_l{}{}", (gate, layer_input)), ("weight_hh_l{}{}", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate,)), ("bias_hh_l{}{}", (gate,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                names = [name.format(layer, suffix) for name, _ in shapes]
                for name, (_, shape) in zip(names, shapes, strict=True):
                    setattr(self, name, _param(shape, dt))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per layer and direction (PyTorch's `all_weights`)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights for cuDNN here, gradcalc keeps them apart."""

    def reset_parameters(self) -> None:
        """Every parameter drawn from U(-1/√hidden_size, 1/√hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks -----------------------------------------------------------------------------------------------
    def _name(self) -> str:
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _check_input(self, input: Tensor) -> None:  # noqa: A002 - PyTorch's names
        weight = getattr(self, self._flat_weights_names[0])
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _expected(self, batch: int, size: int) -> tuple[int, int, int]:
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden(hx: Tensor, expected: tuple[int, ...], msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _batched(self, input: Tensor) -> bool:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{self._name()}: expected a tensor input, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"{'tensor ' if self._name() == 'RNN' else ''}instead")
        return input.dim() == 3

    # -- the walk -----------------------------------------------------------------------------------------------
    def _weights(self, layer: int, direction: int) -> tuple:
        suffix = "_reverse" if direction == 1 else ""
        get = lambda name: getattr(self, f"{name}_l{layer}{suffix}", None)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr"))

    def _run(self, input: Tensor, hidden: list[Any]) -> tuple[Tensor, list[Any]]:  # noqa: A002
        """The layers over a (T, N, features) input from per-layer-and-direction initial states: the output
        and the final states, in that order (as ATen's apply_layer_stack)."""
        directions = 2 if self.bidirectional else 1
        finals: list[Any] = []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                w = self._weights(layer, direction)
                state = hidden[layer * directions + direction]
                steps = F.linear(x, w[0], w[2]).unbind(0)  # the input's map for all steps at once (CPU path)
                order = range(len(steps) - 1, -1, -1) if direction == 1 else range(len(steps))
                seq: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
                for t in order:
                    state = self._step(steps[t], state, w)
                    seq[t] = state[0] if isinstance(state, tuple) else state
                outs.append(stack(seq, 0))
                finals.append(state)
            x = outs[0] if directions == 1 else cat(outs, outs[0].dim() - 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _step(self, x: Tensor, state: Any, w: tuple) -> Any:
        if self.mode == "LSTM":
            return _lstm_step(x, state, w, True)
        if self.mode == "GRU":
            return _gru_step(x, state, w, True)
        return _simple_step(x, state, w, True, self.mode == "RNN_RELU")

    def _forward_plain(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor]:  # noqa: A002
        """RNN and GRU: one state tensor."""
        batched = self._batched(input)
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        batch = input.size(0) if self.batch_first else input.size(1)
        expected = self._expected(batch, self.hidden_size)
        if hx is None:
            hx = _zeros(expected, input)
        self._check_input(input)
        self._check_hidden(hx, expected)
        seq = input.transpose(0, 1) if self.batch_first else input
        out, finals = self._run(seq, list(hx.unbind(0)))
        h_n = stack(finals, 0)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n = out.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return out, h_n


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (`nonlinearity='relu'`: relu), over
    `num_layers` layers; `forward(input, hx)` (hx optional, zeros by default) returns (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        return self._forward_plain(input, hx)


class GRU(RNNBase):
    """A gated recurrent unit layer (reset, update and new gates, PyTorch's equations) over `num_layers` layers;
    `forward(input, hx)` (hx optional, zeros by default) returns (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        return self._forward_plain(input, hx)


class LSTM(RNNBase):
    """A long short-term memory layer (input, forget, cell and output gates, PyTorch's equations; `proj_size`
    projects h) over `num_layers` layers; `forward(input, hx)` with the optional hx = (h_0, c_0) returns
    (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def _step(self, x: Tensor, state: Any, w: tuple) -> Any:
        return _lstm_step(x, state, w, True)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        batched = self._batched(input)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            h0 = _zeros(self._expected(batch, real_hidden), input)
            c0 = _zeros(self._expected(batch, self.hidden_size), input)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM: hx should be a tuple of two tensors (h_0, c_0)")
            h0, c0 = hx
            want = 3 if batched else 2
            if h0.dim() != want or c0.dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        self._check_input(input)
        self._check_hidden(h0, self._expected(batch, real_hidden), "Expected hidden[0] size {}, got {}")
        self._check_hidden(c0, self._expected(batch, self.hidden_size), "Expected hidden[1] size {}, got {}")
        seq = input.transpose(0, 1) if self.batch_first else input
        out, finals = self._run(seq, list(zip(h0.unbind(0), c0.unbind(0), strict=True)))
        h_n, c_n = stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n, c_n = out.squeeze(0 if self.batch_first else 1), h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


class RNNCellBase(Module):
    """What the cells share: weight_ih (chunks·hidden, input), weight_hh (chunks·hidden, hidden), bias_ih,
    bias_hh, drawn from U(-1/√hidden_size, 1/√hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if device not in (None, "cpu"):
            raise RuntimeError(f"{type(self).__name__}: gradcalc runs on the CPU only; leave device unset")
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bias
        dt = np_dtype(dtype) or default_float()
        self.weight_ih = _param((num_chunks * self.hidden_size, self.input_size), dt)
        self.weight_hh = _param((num_chunks * self.hidden_size, self.hidden_size), dt)
        if bias:
            self.bias_ih = _param((num_chunks * self.hidden_size,), dt)
            self.bias_hh = _param((num_chunks * self.hidden_size,), dt)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every parameter drawn from U(-1/√hidden_size, 1/√hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self) -> tuple:
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)

    def _one(self, input: Tensor, hx: Tensor | None, step: Any) -> Tensor:  # noqa: A002
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        hx = _zeros((input.size(0), self.hidden_size), input) if hx is None else hx if batched else hx.unsqueeze(0)
        self._check_cell(input, hx)
        out = step(input, hx)
        return out if batched else out.squeeze(0)

    def _check_cell(self, input: Tensor, hx: Tensor, which: str = "0") -> None:  # noqa: A002
        # ATen's check_rnn_cell_forward_input / _hidden
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{which} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{which} has inconsistent hidden_size: got {hx.size(1)}, expected "
                               f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        relu = self.nonlinearity == "relu"
        return self._one(input, hx, lambda x, h: _simple_step(x, h, self._weights(), False, relu))


class GRUCell(RNNCellBase):
    """One step of a GRU: the reset, update and new gates of PyTorch's equations."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._one(input, hx, lambda x, h: _gru_step(x, h, self._weights(), False))


class LSTMCell(RNNCellBase):
    """One step of an LSTM: `forward(input, hx)` with the optional hx = (h, c) returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Tensor, Tensor]:
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _zeros((input.size(0), self.hidden_size), input)
            h, c = zeros, zeros
        else:
            h, c = (hx[0], hx[1]) if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_cell(input, h, "0")
        self._check_cell(input, c, "1")
        hy, cy = _lstm_step(input, (h, c), self._weights(), False)
        return (hy, cy) if batched else (hy.squeeze(0), cy.squeeze(0))
