"""`gradcalc.nn`: PyTorch's `torch.nn` for the layers gradcalc has: `Module`, `Parameter`, `Sequential`,
`Linear`, `Flatten`, `Unflatten`, the activations, the losses, and the submodules `functional` and `init`.

The number of parameters of a network is `sum(p.numel() for p in net.parameters())`; `print(net)` shows
its layers as PyTorch does.
"""

from __future__ import annotations

from . import functional, init
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus, Tanh
from .container import Sequential
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Flatten", "GELU", "Identity", "L1Loss", "Linear",
    "LogSoftmax", "MSELoss", "Module", "NLLLoss", "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax",
    "Softplus", "Tanh", "Unflatten", "functional", "init",
]

# -- convolution and pooling layers (issue 21) ----------------------------------------------------------------
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d  # noqa: E402
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d  # noqa: E402

__all__ += [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "Conv1d", "Conv2d", "ConvTranspose1d",
    "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
]
