"""The language's limits: how many elements a tensor a program makes may have (per session and thread, set
from `--max-elements`), and how many dimensions (NumPy's limit, under the engine). Checked before anything
is allocated."""

from __future__ import annotations

import threading

from .errors import GradcalcError

DEFAULT_MAX_ELEMENTS = 2**27
MAX_DIMS = 64  # the most dimensions a tensor can have (NumPy's limit, under the engine)


def too_many_dims(dims: int | None = None, cause: str = "") -> str:
    """The message for a tensor that would have more than MAX_DIMS dimensions (`dims`, when known), made by
    `cause` ("a list literal nested more than 64 deep"), when known."""
    limit = f"a tensor can have at most {MAX_DIMS} dimensions"
    if cause:
        return f"{cause}: {limit}"
    return f"{limit}, not {dims}" if dims else limit


class _Limits(threading.local):
    """Per-thread limits of the running session (set by the interpreter on each run)."""

    max_elements: int = DEFAULT_MAX_ELEMENTS


LIMITS = _Limits()


def check_size(n: int, what: str) -> None:
    limit = LIMITS.max_elements
    if n > limit:
        count = f"{n}" if n < 10**15 else f"about {float(n):.2e}"
        raise GradcalcError(
            f"{what} would have {count} elements, more than the limit of {limit} (raise it with --max-elements)"
        )


