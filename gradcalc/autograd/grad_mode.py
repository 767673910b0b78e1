"""Grad modes: whether operations are recorded for backward.

Like PyTorch, the modes are per thread: each thread starts in grad mode, and a `no_grad` block in one
thread does not change what another records. Every mode is both a context manager and a decorator.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _ThreadState(threading.local):
    grad_enabled: bool = True
    inference: bool = False
    anomaly: bool = False


state = _ThreadState()


def is_grad_enabled() -> bool:
    """True when operations in this thread are recorded for backward."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside an `inference_mode` block of this thread."""
    return state.inference


def is_anomaly_enabled() -> bool:
    """True inside a `detect_anomaly` block of this thread."""
    return state.anomaly


class _Mode:
    """A context manager that sets thread state on entry and restores it on exit; also a decorator."""

    def _enter(self) -> Any:  # returns what __exit__ needs to restore
        raise NotImplementedError

    def _restore(self, saved: Any) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._saved_stack = getattr(self, "_saved_stack", [])
        self._saved_stack.append(self._enter())

    def __exit__(self, *exc: object) -> None:
        self._restore(self._saved_stack.pop())

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _Mode:
        return self


class set_grad_enabled(_Mode):
    """Turn recording on or off; takes effect at construction, like PyTorch's, and restores on exit."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = state.grad_enabled
        state.grad_enabled = self.mode

    def _enter(self) -> bool:
        return self._prev

    def __enter__(self) -> None:
        self._prev_on_enter = self._prev
        state.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self._prev_on_enter

    def clone(self) -> _Mode:
        return _GradEnabled(self.mode)


class _GradEnabled(_Mode):
    def __init__(self, mode: bool) -> None:
        self.mode = mode

    def _enter(self) -> bool:
        prev = state.grad_enabled
        state.grad_enabled = self.mode
        return prev

    def _restore(self, saved: bool) -> None:
        state.grad_enabled = saved

    def clone(self) -> _Mode:
        return type(self)(self.mode) if type(self) is _GradEnabled else type(self)()


class no_grad(_GradEnabled):
    """Record nothing inside the block: results do not require grad."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradEnabled):
    """Record again inside a `no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


class inference_mode(_Mode):
    """No recording, and tensors made inside are inference tensors (see `Tensor.is_inference`)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _enter(self) -> tuple[bool, bool]:
        prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True
        else:
            state.inference = False
        return prev

    def _restore(self, saved: tuple[bool, bool]) -> None:
        state.grad_enabled, state.inference = saved

    def clone(self) -> _Mode:
        return inference_mode(self.mode)


class detect_anomaly(_Mode):
    """Record where each node was made, and fail a backward whose node returns NaN, naming that operation."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def _enter(self) -> bool:
        prev = state.anomaly
        state.anomaly = self.check_nan
        return prev

    def _restore(self, saved: bool) -> None:
        state.anomaly = saved

    def clone(self) -> _Mode:
        return detect_anomaly(self.check_nan)


class set_detect_anomaly(detect_anomaly):
    """Like `detect_anomaly`, with the flag given: `set_detect_anomaly(False)` turns it off inside."""

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
