"""What a host that stops a program asynchronously (Ctrl-C) needs to know of the engine's changes.

A host such as the language's session turns SIGINT into an exception raised wherever the main thread
happens to be, and promises that the statement it interrupts changes nothing. The engine does not know of
statements, signals or hosts; it says three things, each at no cost on its hot paths:

- `GUARD.changing`: set to the running origin (`node.STAMP.origin`, the host's statement) just before the
  engine begins to change state that outlives the operation: the values and version of a tensor written
  in place, a `.grad`, `requires_grad`, a retain_grad or hook, an optimizer's parameters, the end of a
  backward. From then on the host lets that statement run to its end (one store per such operation).
- `GUARD.atomic`: set by the host while it may stop a program midway. Then a plain backward changes nothing
  until its whole walk is done (saved values are freed, and gradients written, in one last step that sets
  `changing`), so that an interrupt during the walk leaves the graph and every `.grad` as they were. The
  instrumented walk (ordered.py) undoes what it did instead.
- `UNSAFE`: the code objects in which no exception may be raised from outside: an undo in progress, and
  the weak-reference callbacks, whose exceptions Python would print and drop. Marked with `@unsafe`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (for the type checker only: making a TypeVar costs every start-up)
    from typing import TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


class Guard:
    """The engine's side of interrupts (see the module docstring)."""

    __slots__ = ("changing", "atomic")

    def __init__(self) -> None:
        self.changing: Any = None
        self.atomic = False


GUARD = Guard()
UNSAFE: set[Any] = set()


def unsafe(fn: F) -> F:
    """Mark `fn` as code in which a host must not raise an interrupt (it retries a moment later)."""
    UNSAFE.add(fn.__code__)
    return fn
