"""`gradcalc.optim`: PyTorch's optimizers `SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, `LBFGS` on gradcalc
tensors, with the same arithmetic as PyTorch's single-tensor implementations, and the learning-rate schedules of
`lr_scheduler`."""

from __future__ import annotations

from . import lr_scheduler  # noqa: F401 - optim.lr_scheduler, as PyTorch's
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["LBFGS", "SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop"]  # and the module lr_scheduler
