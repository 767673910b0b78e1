"""PyTorch's module tree, as far as the language has it: the namespaces a PyTorch program names (`torch.`,
`torch.nn.`/`nn.`, `torch.nn.functional.`/`F.`, `torch.optim.`/`optim.`, `torch.autograd.`/`autograd.`,
`torch.func.`/`func.`) and the modules inside them (LANGUAGE.md section 5).

Only the tree is written here: which PyTorch module each namespace is, and the name PyTorch code binds it to
(`import torch.nn.functional as F`). What each one holds is derived from the language's tables and the engine
(namespace.py). The engine mirrors PyTorch's modules under the same path (`torch.nn.functional` is
`gradcalc.nn.functional`), so a namespace's engine module is its path with gradcalc for torch.

This module imports nothing, so that builtins.py (the names the REPL completes and colours) and the highlighter
can read the predefined names without loading the namespaces.
"""

from __future__ import annotations

# PyTorch's module -> the name a PyTorch program binds it to, which messages and `:help` also use. Those whose
# name is one word are predefined names of the language (`nn.Linear(1, 1)` works without an import); the others
# are reached through them (`nn.init.zeros_(w)`, `autograd.functional.jacobian(f, x)`).
SPACES: dict[str, str] = {
    "torch": "torch",
    "torch.nn": "nn",
    "torch.nn.functional": "F",
    "torch.nn.init": "nn.init",
    "torch.optim": "optim",
    "torch.optim.lr_scheduler": "optim.lr_scheduler",
    "torch.autograd": "autograd",
    "torch.autograd.functional": "autograd.functional",
    "torch.autograd.forward_ad": "autograd.forward_ad",
    "torch.autograd.graph": "autograd.graph",
    "torch.func": "func",
    "torch.linalg": "linalg",
}

# The predefined names (rebindable: `F = 3` shadows one, `:reset` brings it back).
PREDEFINED: tuple[str, ...] = tuple(label for label in SPACES.values() if "." not in label)

# The packages whose callables the language checks as it checks modules, losses and optimizers (nn.py's
# `Checked`, a built-in's `nn:` target): a function they export is offered in its namespace as it is.
CHECKED_PACKAGES: tuple[str, ...] = ("torch.nn", "torch.optim")

# The namespaces whose engine module's exported functions are all built-ins under them (`linalg.solve(A, b)`),
# with the signatures and checks of any built-in, though they are not top-level names of torch.
FUNCTION_SPACES: tuple[str, ...] = ("torch.linalg",)


def engine_module(path: str) -> str:
    """The engine's module that mirrors PyTorch module `path`: torch.nn.functional -> gradcalc.nn.functional."""
    return "gradcalc" + path[len("torch"):]


def is_checked(path: str) -> bool:
    """Whether namespace `path` is inside torch.nn or torch.optim (see CHECKED_PACKAGES)."""
    return any(path == p or path.startswith(p + ".") for p in CHECKED_PACKAGES)


# Built-ins from torch.nn, torch.nn.functional and torch.optim, as gradcalc.nn and gradcalc.optim have them: the
# engine's namespace and the names the language takes from it (every layer, loss and optimizer class, and the
# functions of nn.functional not built-ins already). They load when one is first called (a plain run imports
# neither package); nn.py checks their arguments, objects.py declares what their values offer.
NN_BUILTINS: dict[str, tuple[str, ...]] = {
    "nn": (
        "Linear", "Sequential", "Identity", "Tanh", "ReLU", "Sigmoid", "Softplus", "GELU", "SiLU", "MSELoss",
        "L1Loss", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss", "Parameter", "Flatten", "Unflatten",
        "Softmax", "LogSoftmax",
        "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "BatchNorm1d",
        "BatchNorm2d", "BatchNorm3d", "LayerNorm", "Embedding", "SmoothL1Loss", "HuberLoss", "KLDivLoss",
        "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "LeakyReLU", "ELU", "SELU", "Hardtanh", "ReLU6",
        "Mish", "Softsign", "LogSigmoid", "Hardswish", "Hardsigmoid", "GLU", "CosineSimilarity", "PairwiseDistance",
        "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNNCellBase", "GroupNorm", "InstanceNorm1d",
        "InstanceNorm2d", "InstanceNorm3d", "MultiheadAttention", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
        "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
        "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
        "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
        "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "PoissonNLLLoss",
        "GaussianNLLLoss",
    ),
    "nn.functional": (
        "linear", "gelu", "silu", "mse_loss", "l1_loss", "binary_cross_entropy", "cross_entropy", "nll_loss",
        "avg_pool2d", "adaptive_avg_pool2d", "one_hot", "pad", "dropout", "dropout1d", "dropout2d", "dropout3d",
        "batch_norm", "embedding", "smooth_l1_loss", "huber_loss", "kl_div",
        "leaky_relu", "elu", "hardtanh", "relu6", "hardswish", "hardsigmoid", "logsigmoid", "mish", "softsign", "glu",
        "normalize", "cosine_similarity", "pairwise_distance", "leaky_relu_", "elu_", "selu_", "hardtanh_",
        "group_norm", "instance_norm", "scaled_dot_product_attention", "multi_head_attention_forward", "interpolate",
        "pixel_shuffle", "pixel_unshuffle", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
        "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
    ),
    "optim": ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS", "Adamax", "NAdam", "RAdam", "Adadelta"),
    "optim.lr_scheduler": ("StepLR", "ExponentialLR", "MultiStepLR", "LambdaLR", "LinearLR", "CosineAnnealingLR",
                           "OneCycleLR", "ReduceLROnPlateau"),
    "": ("Generator",),  # top-level (torch.Generator): its value has a surface of its own (objects.py)
}
