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
