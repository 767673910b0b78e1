"""`gradcalc.optim.lr_scheduler`: learning-rate schedules, as PyTorch's `torch.optim.lr_scheduler`
(`StepLR`, `ExponentialLR`, `MultiStepLR`, `LambdaLR`), with its base class's bookkeeping: `last_epoch`,
`get_last_lr()`, `step()` (after the optimizer's), `state_dict()`/`load_state_dict()` and its warnings.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..autograd.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR", "StepLR"]

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should "
    "call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
    "result in PyTorch skipping the first value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
_EPOCH_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available. Please open an issue if "
    "you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose."
)


def _lrs(optimizer: Optimizer, key: str) -> list[Any]:
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups]


class LRScheduler:
    """The base of the schedules: at each `step()` (once per epoch, after `optimizer.step()`), `last_epoch`
    goes up by one and each parameter group's `lr` becomes `get_lr()`'s value. Making one sets each group's
    `initial_lr` and takes the first step (epoch 0)."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                group.setdefault("initial_lr", initial_lr.clone() if isinstance(initial_lr, Tensor) else initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0: load the optimizer's state first")
        self.base_lrs: list[Any] = _lrs(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._step_count = 0
        with self._mode("_is_initial"):
            self.step()

    @contextmanager
    def _mode(self, flag: str) -> Iterator[None]:
        setattr(self, flag, True)
        try:
            yield
        finally:
            setattr(self, flag, False)

    def get_lr(self) -> list[Any]:
        """The learning rates of the next epoch, one per parameter group (use `get_last_lr()` to read them)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last `step()` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (call it after `optimizer.step()`): each group's `lr` becomes the schedule's."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
        with self._mode("_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            if isinstance(group["lr"], Tensor):
                group["lr"].fill_(float(lr))
            else:
                group["lr"] = lr
        self._last_lr = _lrs(self.optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """Every attribute of the schedule but its optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take back what `state_dict()` returned."""
        self.__dict__.update(state_dict)

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)


class StepLR(LRScheduler):
    """Multiply each group's learning rate by `gamma` every `step_size` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates, times `gamma` at a non-zero multiple of `step_size`."""
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each group's learning rate by `gamma` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates times `gamma` (unchanged at the first step)."""
        self._warn_outside_step()
        if self._is_initial:
            return _lrs(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply each group's learning rate by `gamma` at each epoch of `milestones` (once per time listed)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates, times `gamma` (to the milestone's count) at a milestone."""
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        from bisect import bisect_right

        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class LambdaLR(LRScheduler):
    """Set each group's learning rate to its initial rate times `lr_lambda(epoch)` (one function, or one per
    group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """Each initial rate times its function of the epoch."""
        self._warn_outside_step()
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs,
                                                                             strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """As the base's, with the functions left out (PyTorch keeps only callable objects' state)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take back what `state_dict()` returned (the functions stay those of this schedule)."""
        state = dict(state_dict)
        state.pop("lr_lambdas", None)
        self.__dict__.update(state)
