"""Grad modes: whether operations are recorded for backward.

Like PyTorch's, the modes are per thread: each thread starts in grad mode, and a `no_grad` block in one
thread does not change what another records. Every mode is a context manager and a decorator
(`@no_grad()`, and for `no_grad`, `enable_grad` and `inference_mode` also the bare `@no_grad`).

The state is three flags, chosen so that an operation decides whether to record with ONE read:
- `grad_enabled`: operations record. Outside inference mode this IS the user's grad mode; inside it is
  always False, since inference mode records nothing whatever the grad mode says;
- `inference`: inside `inference_mode` (results are inference tensors);
- `inference_grad`: the grad mode the user set inside inference mode (`enable_grad` there changes what
  `is_grad_enabled()` says, as in PyTorch, but still records nothing).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from _thread import _local, get_ident  # what threading.local is (`threading` itself is kept off the start-up path)
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (for the type checker only: making a TypeVar costs every start-up)
    from typing import TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


class _ThreadState(_local):
    grad_enabled: bool = True
    inference: bool = False
    inference_grad: bool = False
    anomaly: bool = False
    check_nan: bool = True
    # set by the engine during a plain backward without retain_graph: a node's saved values are let go as
    # soon as its formula has unpacked them, so that a formula can drop each one when done with it
    releasing: bool = False
    # set by the engine during grad(outputs, inputs): the nodes whose gradients lead to `inputs`, so that a
    # formula skips an input's gradient nobody will read (PyTorch's needs_input_grad); None: all are wanted
    wanted: Any = None
    # set by gradcalc.func's batched backward: every gradient carries this many leading batch dims (one row
    # per cotangent), which `sum_to` keeps when it sums a broadcast gradient back; 0 in any other backward
    batch: int = 0
    # set by that batched backward around one node's `apply_batched`: the node's incoming gradient when
    # nothing but the walk holds it, so that the formula's last use of it may write its result there
    # (`temporaries.spare_times`); None otherwise
    spare: Any = None
    # set by that batched backward for its whole walk: gradient arrays it no longer needs, for
    # `temporaries.spare_times` to write products into (a fresh array of a gradient's size costs its page
    # faults on every use); None otherwise
    pool: Any = None
    # the vmap levels open in this thread (autograd/batched_tensor.py's `Levels`), None when none is: random
    # operations read it to apply the innermost levels' `randomness=`
    vmap: Any = None
    # how many function transforms (gradcalc.func's vmap, grad, jvp, ...) are running in this thread:
    # `backward()` inside one is PyTorch's error
    transforms: int = 0


state = _ThreadState()
# PyTorch's error for `backward()` while `state.transforms` says a function transform is running
BACKWARD_IN_TRANSFORM = (
    "backward() called inside a functorch transform. This is not supported, please use functorch.grad or "
    "functorch.vjp instead or call backward() outside of functorch transforms.")
# True once any thread has turned anomaly mode (inference mode) on: until then operations skip reading
# `state.anomaly` (`state.inference`), a thread-local lookup paid once per operation otherwise
anomaly_seen = False
inference_seen = False
# True once a forward-AD dual level was ever opened (autograd/forward_ad.py): until then operations skip
# looking for tangents on their inputs
forward_seen = False
# The forward_ad module, once it has loaded (it hands itself down here): the operations reach it through this name,
# only once `forward_seen`, so that forward AD stays off the start-up path
forward_ad: Any = None


# The idents of the threads whose recording state is not the default one (grad_enabled False, releasing
# True, or wanted set). A read of the thread-local `state` costs a few hundred instructions, as much as the
# rest of an operation's test whether to record: while this set is empty (no thread is inside no_grad,
# inference mode or a backward walk that changes them) every thread records, and operations read
# `not ALTERED or state.grad_enabled`. Every write of those three fields goes through `set_recording`,
# `set_walk` or `refresh`, which keep the writing thread's membership exact; a thread that ended while in
# the set leaves its ident there, which only sends readers to `state` (and a later thread given the same
# ident corrects it at its first write). Set operations are atomic under the GIL.
ALTERED: set[int] = set()
_ident = get_ident


def _mark(default: bool) -> None:
    """This thread's membership of ALTERED: out when its recording state is the default, in otherwise."""
    if default:
        ALTERED.discard(_ident())
    else:
        ALTERED.add(_ident())


def refresh() -> None:
    """Make this thread's membership of ALTERED follow its state, after a write of any of its fields."""
    _mark(state.grad_enabled and not state.releasing and state.wanted is None)


def set_recording(mode: bool) -> None:
    """Write this thread's `grad_enabled` (the engine's own writes: a custom Function's forward, a
    once_differentiable backward)."""
    state.grad_enabled = mode
    refresh()


def set_walk(record: bool, release: bool, want: Any) -> None:
    """Write this thread's walk settings: `grad_enabled`, `releasing` and `wanted` at once."""
    state.grad_enabled, state.releasing, state.wanted = record, release, want
    _mark(record and not release and want is None)  # (the values just written: no thread-local read)


_STATE_FIELDS = ("grad_enabled", "inference", "inference_grad", "anomaly", "check_nan", "releasing", "wanted",
                 "batch", "spare", "pool", "vmap", "transforms")


def save_state() -> tuple:
    """This thread's modes (grad, inference, anomaly) and the engine's walk settings, to `restore_state`."""
    return tuple(getattr(state, name) for name in _STATE_FIELDS)


def restore_state(saved: tuple) -> None:
    """Put back what `save_state` returned: for a host that must leave no mode changed by a failure."""
    for name, value in zip(_STATE_FIELDS, saved, strict=True):
        setattr(state, name, value)
    refresh()


def is_grad_enabled() -> bool:
    """True when grad mode is on in this thread (inside inference mode nothing records even then)."""
    return state.inference_grad if state.inference else state.grad_enabled


def _set_grad_mode(mode: bool) -> None:
    if state.inference:
        state.inference_grad = mode
    else:
        set_recording(mode)


def is_inference_mode_enabled() -> bool:
    """True inside an `inference_mode` block of this thread."""
    return state.inference


def is_anomaly_enabled() -> bool:
    """True inside a `detect_anomaly` block of this thread."""
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode also fails a backward that produces NaN."""
    return state.check_nan


class _DecoratorContextManager:
    """A context manager that is also a decorator: the decorated function runs inside a fresh copy of it."""

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            raise TypeError("gradcalc's grad modes cannot decorate generator functions; use `with` inside it")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _DecoratorContextManager:
        return type(self)()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class _GradMode(_NoParamDecoratorContextManager):
    """Sets grad mode to `MODE` inside the block and restores the previous one on exit."""

    MODE = False

    def __init__(self) -> None:
        self._prev: list[bool] = []  # a stack: the same object may be entered again while inside

    def __enter__(self) -> None:
        self._prev.append(is_grad_enabled())
        _set_grad_mode(self.MODE)

    def __exit__(self, *exc: object) -> None:
        _set_grad_mode(self._prev.pop())


class no_grad(_GradMode):
    """Record nothing inside the block: results do not require grad."""

    MODE = False


class enable_grad(_GradMode):
    """Record again inside a `no_grad` block."""

    MODE = True


class set_grad_enabled(_DecoratorContextManager):
    """Turn grad mode on or off. As in PyTorch it takes effect when called, so it works as a plain call
    (`set_grad_enabled(False)` lasts until changed), and as a `with` block it restores the previous mode
    on exit; as a decorator it leaves the mode as it was and applies only inside the function."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = is_grad_enabled()
        _set_grad_mode(self.mode)

    def __call__(self, fn: F) -> F:
        _set_grad_mode(self.prev)  # decorating is not entering
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_grad_mode(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad_mode(self.prev)

    def clone(self) -> set_grad_enabled:
        prev = is_grad_enabled()
        twin = set_grad_enabled(self.mode)
        _set_grad_mode(prev)  # constructing sets the mode: the clone applies it only when entered
        return twin

    def __repr__(self) -> str:
        return f"gradcalc.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """No recording, and tensors made inside are inference tensors (see `Tensor.is_inference`), which
    cannot be saved for backward nor changed in place outside inference mode. `inference_mode(False)`
    leaves inference mode inside the block (and turns grad mode on, as PyTorch does)."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # the bare decorator: `@inference_mode`

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._prev: list[tuple[bool, bool, bool]] = []

    def __enter__(self) -> None:
        self._prev.append((state.grad_enabled, state.inference, state.inference_grad))
        if self.mode:
            global inference_seen
            inference_seen = True
            state.grad_enabled, state.inference, state.inference_grad = False, True, False
        else:
            state.grad_enabled, state.inference = True, False
        refresh()

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled, state.inference, state.inference_grad = self._prev.pop()
        refresh()

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)


class detect_anomaly(_DecoratorContextManager):
    """Record where each node was made, and fail a backward whose node returns NaN, naming that operation.

    Warns when made, as PyTorch does, since it slows every operation down."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._prev: list[tuple[bool, bool]] = []
        warnings.warn(
            "anomaly detection is on: every operation now records where it was made, which is slow; "
            "use detect_anomaly only while debugging",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev.append((state.anomaly, state.check_nan))
        global anomaly_seen
        anomaly_seen = True
        _stamp_nodes()
        state.anomaly, state.check_nan = True, self.check_nan

    def __exit__(self, *exc: object) -> None:
        state.anomaly, state.check_nan = self._prev.pop()

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return detect_anomaly(self.check_nan)


def _stamp_nodes() -> None:
    """From now on, nodes keep where they were made (`STAMP`)."""
    STAMP.on = True
    STAMP.simple = False


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once when called, restored on exit of a `with` block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        global anomaly_seen
        anomaly_seen = anomaly_seen or bool(mode)
        if mode:
            _stamp_nodes()
        self.prev = (state.anomaly, state.check_nan)
        state.anomaly, state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.anomaly, state.check_nan = self.prev


# -- what recording stamps on each node --------------------------------------------------------------------
class AnomalyTrace(str):
    """The forward traceback anomaly mode keeps on a node when no front end set an origin."""


class _Stamp:
    """What nodes are stamped with at creation beyond their formula, all rare: the front end's `origin` (the
    language's statement, `Node.origin`), anomaly mode's traceback, saved-tensor hooks' packing. `on`
    becomes True once any of them was used: until then the hot creation paths do nothing more (an unset
    `_trace` slot reads as None), after it they call `stamp(node)` once the node has saved its values.
    A module-level holder rather than a thread-local: one attribute load per recorded operation. `simple`
    stays True while only origins were used (no anomaly mode, no packing): then the hot paths store the
    origin themselves instead of calling `stamp` (which reads the thread's anomaly state).
    Kept here, with the modes, because anomaly mode turns it on; saved.py turns packing on, and hands over
    its packing function (`pack`) as it does."""

    __slots__ = ("origin", "on", "packing", "simple", "pack")

    def __init__(self) -> None:
        self.origin: Any = None
        self.on = False
        self.packing = False  # saved_tensors_hooks were used (saved.py keeps the thread's active pair)
        self.simple = True
        self.pack: Callable[[Any], None] | None = None  # saved.pack_saved, set with `packing`

    def stamp(self, node: Any) -> None:
        """Give a node just made its origin (or anomaly traceback), and pack what it saved."""
        node._trace = traceback_of_forward() if state.anomaly else self.origin
        if self.packing and node._saved:
            self.pack(node)  # type: ignore[misc]


STAMP = _Stamp()
_anomaly_context = _local()


def traceback_of_forward() -> Any:
    """Where the recording operation was called: the front end's origin when one is set (its str is what
    anomaly mode shows), else the language's description of the statement, else the Python traceback."""
    if STAMP.origin is not None:
        return STAMP.origin  # the front end's origin serves anomaly's message too (by its str)
    described = getattr(_anomaly_context, "describe", None)
    if described is not None:
        return AnomalyTrace(described())
    import traceback  # only anomaly mode from plain Python needs it: kept off the start-up path

    # the user's frames only: however deep inside the engine the node was made
    frames = [f for f in traceback.extract_stack() if "gradcalc/autograd" not in f.filename.replace("\\", "/")]
    return AnomalyTrace("".join(traceback.format_list(frames[-4:])))


def set_anomaly_context(describe: Any) -> None:
    """Let a front end (the language) say where a forward operation comes from, for anomaly mode."""
    _anomaly_context.describe = describe
