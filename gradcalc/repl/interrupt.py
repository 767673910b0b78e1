"""Ctrl-C while a program runs: stop it at the next statement boundary, keeping the workspace.

While the REPL runs an input, SIGINT calls `session.interrupt()`, which asks the running program to stop at
its next statement boundary (a `while` loop ends with `error: interrupted`). A second Ctrl-C before it does
raises KeyboardInterrupt at once, for a single statement that runs long; the Session turns that into
`error: interrupted` too. The previous handler (prompt_toolkit's, Python's) is restored before prompting.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol, TextIO


class Interruptible(Protocol):
    """What the handler needs of a Session."""

    def interrupt(self) -> None: ...


@contextmanager
def sigint_interrupts(session: Interruptible) -> Iterator[None]:
    """Within the block, a first Ctrl-C calls `session.interrupt()`; the next raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread
        return
    presses = 0

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            session.interrupt()
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    if previous is None:  # a handler installed outside Python: fall back to Python's default
        previous = signal.default_int_handler
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class InteractiveSession(Interruptible, Protocol):
    """What running one REPL input needs of a Session."""

    def run(self, source: str, filename: str = "<stdin>", *, keep_going: bool = False,
            interactive: bool = False) -> bool: ...


def run_input(session: InteractiveSession, text: str, err: TextIO) -> bool:
    """Run one REPL input with Ctrl-C interrupting it; True when it ran without an error."""
    if not text.strip():
        return True
    try:
        with sigint_interrupts(session):
            return session.run(text, "<stdin>", interactive=True)
    except KeyboardInterrupt:
        # Between statements, outside the Session's own handling: the same message, and the workspace is kept.
        err.write("error: interrupted\n")
        return False
    finally:
        for stream in (sys.stdout, err):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
