"""`Dropout`, `Dropout1d`, `Dropout2d`, `Dropout3d`: zero elements (or whole channels) with probability p and
scale the rest by 1/(1-p), in training mode only; in evaluation mode (`module.eval()`) the input passes
unchanged. The masks come from gradcalc's default generator (`manual_seed`; the stream is gradcalc's)."""

from __future__ import annotations

from ..autograd.tensor import Tensor
from . import functional as F
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Each element zeroed with probability p in training mode, the others scaled by 1/(1-p)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Whole channels of an (N, C, L) or (C, L) input zeroed with probability p in training mode."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Whole channels of an (N, C, H, W) input zeroed with probability p in training mode."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Whole channels of an (N, C, D, H, W) or (C, D, H, W) input zeroed with probability p in training mode."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)
