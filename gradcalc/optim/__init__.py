"""`gradcalc.optim`: PyTorch's optimizers `SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, `Adadelta`, `Adamax`,
`NAdam`, `RAdam`, `LBFGS` on gradcalc
tensors, with the same arithmetic as PyTorch's single-tensor implementations, and the learning-rate schedules of
`lr_scheduler`."""

from __future__ import annotations

from . import lr_scheduler  # noqa: F401 - optim.lr_scheduler, as PyTorch's
from .adadelta import Adadelta
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer", "RAdam",
           "RMSprop"]  # and the module lr_scheduler
