"""`Flatten` and `Unflatten`: layers that change only the shape of their input (views where PyTorch's are)."""

from __future__ import annotations

from typing import Any

from ..autograd.tensor import Tensor
from .module import Module


class Flatten(Module):
    """Flatten dims `start_dim` to `end_dim` into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Unfold dim `dim` of the input into the shape `unflattened_size` (whose product is that dim's size; one
    entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        shape = tuple(input.shape)
        if not shape:
            raise IndexError("Unflatten: the input has no dimension to unflatten (a 0-d tensor)")
        dim = self.dim % len(shape) if -len(shape) <= self.dim < len(shape) else None
        if dim is None:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                             f"{len(shape) - 1}], but got {self.dim})")
        sizes = list(self.unflattened_size)
        known = 1
        for n in sizes:
            known *= n if n != -1 else 1
        if -1 in sizes:
            sizes[sizes.index(-1)] = shape[dim] // known if known else 0
        elif known != shape[dim]:
            raise RuntimeError(f"unflatten: Provided sizes {list(self.unflattened_size)} don't multiply up to the "
                               f"size of dim {self.dim} ({shape[dim]}) in the input tensor")
        return input.reshape(shape[:dim] + tuple(sizes) + shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
