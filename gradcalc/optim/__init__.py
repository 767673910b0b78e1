"""`gradcalc.optim`: PyTorch's optimizers `SGD`, `Adam`, `AdamW` on gradcalc tensors, with the same
arithmetic as PyTorch's single-tensor implementations."""

from __future__ import annotations

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]
