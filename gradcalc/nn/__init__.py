"""`gradcalc.nn`: PyTorch's `torch.nn` for the layers gradcalc has: `Module`, `Parameter`, the containers
(`Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`, `ParameterDict`),
`Linear`, `Flatten`, `Unflatten`, the activations, the losses, `Dropout` (and its 1d/2d/3d forms), `BatchNorm1d`,
`BatchNorm2d`, `BatchNorm3d`, `LayerNorm`, `GroupNorm`, `InstanceNorm1d/2d/3d`, `Embedding`, the convolutions and
pooling, the recurrent layers (`RNN`, `LSTM`, `GRU` and their cells), `MultiheadAttention`, the padding layers,
`Upsample`, `PixelShuffle`, and the submodules `functional` and `init`.

The number of parameters of a network is `sum(p.numel() for p in net.parameters())`; `print(net)` shows
its layers as PyTorch does.
"""

from __future__ import annotations

from . import functional, init
from .activation import (
    ELU,
    GELU,
    GLU,
    SELU,
    CosineSimilarity,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PairwiseDistance,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Softsign,
    Tanh,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
)
from .parameter import Parameter
from .sparse import Embedding

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Flatten", "GELU", "Identity", "L1Loss", "Linear",
    "LogSoftmax", "MSELoss", "Module", "NLLLoss", "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax",
    "Softplus", "Tanh", "Unflatten", "functional", "init",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Embedding",
    "HuberLoss", "KLDivLoss", "LayerNorm", "SmoothL1Loss", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d",
    "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
    "CosineSimilarity", "ELU", "GLU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "Mish",
    "PairwiseDistance", "ReLU6", "SELU", "Softsign",
]

# -- convolution and pooling layers (issue 21) ----------------------------------------------------------------
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d  # noqa: E402
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d  # noqa: E402

__all__ += [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "Conv1d", "Conv2d", "ConvTranspose1d",
    "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
]

# -- recurrent layers -------------------------------------------------------------------------------------------
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

# -- attention --------------------------------------------------------------------------------------------------
from .attention import MultiheadAttention  # noqa: E402

__all__ += ["MultiheadAttention"]

# -- padding and resampling -------------------------------------------------------------------------------------
from .padding import (  # noqa: E402
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .upsampling import PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
]

# -- more losses ------------------------------------------------------------------------------------------------
from .loss import (  # noqa: E402
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    PoissonNLLLoss,
    TripletMarginLoss,
)

__all__ += ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss", "PoissonNLLLoss",
            "TripletMarginLoss"]
