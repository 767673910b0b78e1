"""Ctrl-C while a program runs (LANGUAGE.md section 6), for the REPL, scripts, pipes and a Jupyter kernel.

`sigint_interrupts(session)` wraps one `session.run(...)`. Within it, SIGINT (Ctrl-C, or a kernel's
interrupt, which ipykernel delivers as SIGINT to the main thread) runs a handler that asks the session where
the program is (`Session.interrupt_verdict`): inside a statement that has changed nothing yet, it raises
KeyboardInterrupt there (after an array operation, as soon as NumPy returns), and the session reports
`error: interrupted` at that statement, which changed nothing; once the statement has begun changing state
(an in-place change, a backward's last step), the program stops before the next statement instead; at a
point where no exception may be raised (between statements, in an undo, in code not gradcalc's or NumPy's)
it tries again a moment later. A second Ctrl-C never kills anything: it says where the interrupt stands.

A Python signal handler runs only between bytecodes: while one long NumPy call runs, nothing in the main
thread can answer. So the handler is not alone: Python also writes each signal's number to a pipe
(`signal.set_wakeup_fd`), which a watcher thread reads. When a press has not stopped the program a moment
later, the watcher says so on the session's standard error (NumPy releases the interpreter during long
array operations, so it can), and it re-sends the interrupt when the handler asked to try again.
"""

from __future__ import annotations

import _thread
import os
import select
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Protocol, TextIO

try:
    import _signal as signal  # the C module under `signal`, whose enums cost a cold start half a millisecond
except ImportError:  # pragma: no cover - not CPython
    import signal  # type: ignore[no-redef]

NOTICE_AFTER = 0.2  # seconds: a press that has not stopped the program by then gets a line on standard error
RETRY_AFTER = 0.02  # seconds between two tries when the handler found no point to stop at
PREFIX = "interrupting: "


class Interruptible(Protocol):
    """What the handler needs of a Session (lang/session.py)."""

    interrupted: bool

    @property
    def err(self) -> TextIO: ...

    def interrupt(self) -> None: ...

    def interrupt_verdict(self, frame: Any) -> str: ...

    def interrupt_raised(self) -> None: ...

    def running(self) -> Any: ...

    def running_has_changed(self) -> bool: ...


class _Watcher:
    """The thread that reads the signal pipe: notices, second presses, retries (see the module docstring).
    One per process, started the first time a program runs under `sigint_interrupts`."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)  # set_wakeup_fd requires it
        self.session: Interruptible | None = None  # the session whose program runs, while one runs
        self.hint: str | None = None
        self.run = 0  # which program (a press is answered only while its program runs)
        self.presses = 0  # presses during this program
        self.first = 0.0  # when the first of them came
        self.verdict = ""  # what it decided
        self.sent = 0  # interrupts this thread sent itself (their bytes are not presses)
        self.retry_at: float | None = None
        # (when, press number, run, where the main thread was at the press) to say something about
        self.notices: list[tuple[float, int, int, tuple[Any, int]]] = []
        self.main = threading.main_thread().ident
        self.lock = threading.Lock()  # no interrupt is sent once the program has ended (see disarm)
        thread = threading.Thread(target=self._loop, name="gradcalc-interrupts", daemon=True)
        thread.start()

    # -- the main thread ---------------------------------------------------------------------------------
    def arm(self, session: Interruptible, hint: str | None) -> None:
        self.run += 1
        self.session, self.hint = session, hint
        self.presses, self.verdict, self.retry_at = 0, "", None

    def disarm(self) -> None:
        """The program ended: no more retries; one this thread already sent is handled now, by the handler
        that is still ours (a call of a built-in runs pending handlers), not by whichever comes back next."""
        with self.lock:
            self.session = None
            self.retry_at = None
        time.monotonic()

    def retry_soon(self) -> None:
        if self.retry_at is None:
            self.retry_at = time.monotonic() + RETRY_AFTER
            try:
                os.write(self.write_fd, b"\0")  # wake the watcher: its wait has a deadline now
            except OSError:
                pass

    # -- the watcher thread ----------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            now = time.monotonic()
            due = [t for t in (self.retry_at, *(n[0] for n in self.notices)) if t is not None]
            timeout = max(0.0, min(due) - now) if due else None
            try:
                ready, _, _ = select.select([self.read_fd], [], [], timeout)
                data = os.read(self.read_fd, 512) if ready else b""
            except (OSError, ValueError):
                return
            for signum in data:
                if signum != signal.SIGINT:
                    continue
                if self.sent:
                    self.sent -= 1
                    continue
                self._pressed()
            self._tick()

    def _pressed(self) -> None:
        if self.session is None:
            return
        now = time.monotonic()
        self.presses += 1
        if self.presses == 1:
            self.first = now
        self.notices.append((now + NOTICE_AFTER, self.presses, self.run, self._main_at()))

    def _main_at(self) -> tuple[Any, int]:
        """The main thread's frame and instruction: the same a moment later, it is inside one call of C."""
        frame = sys._current_frames().get(self.main)
        return (frame, frame.f_lasti if frame is not None else -1)

    def _tick(self) -> None:
        now = time.monotonic()
        session = self.session
        if self.retry_at is not None and now >= self.retry_at:
            with self.lock:
                self.retry_at = None
                if self.session is not None and not self.session.interrupted:
                    self.sent += 1
                    _thread.interrupt_main()  # the handler runs again, wherever the main thread is by then
        due = [n for n in self.notices if n[0] <= now]
        self.notices = [n for n in self.notices if n[0] > now]
        for _, press, run, at in due:
            if session is None or run != self.run or session.interrupted:
                continue  # it stopped (or the program ended) in time: nothing to say
            text = self._notice(press, stuck=at[0] is not None and self._main_at() == at)
            if text:
                try:
                    session.err.write(PREFIX + text + "\n")
                    session.err.flush()
                except (AttributeError, OSError, ValueError):
                    pass

    def _notice(self, press: int, stuck: bool) -> str | None:
        session = self.session
        if session is None:
            return None
        origin = session.running()
        where = _describe(origin)
        waited = time.monotonic() - self.first
        hint = f" ({self.hint})" if self.hint and press > 1 else ""
        changed = session.running_has_changed()
        if stuck and not changed:  # one long call of NumPy's: the handler can't run before it returns
            if press == 1:
                return (f"an array operation is running and cannot stop midway; {where} stops as soon as it "
                        "returns")
            return (f"still waiting, {waited:.1f} s after the first Ctrl-C, for the array operation in {where} "
                    f"to return; it stops then{hint}")
        if changed or self.verdict == "wait":
            if press == 1:
                return f"{where} has begun changing the workspace: it runs to its end, then the program stops"
            return f"still finishing {where}, {waited:.1f} s after the first Ctrl-C; the program stops after it{hint}"
        if self.verdict == "retry":
            return f"{where} stops at the first point where it can{hint}"
        return None


def _describe(origin: Any) -> str:
    """`line 3 (y = a * b)`, or `y = a * b` for a one-line REPL input: the statement a notice is about."""
    if origin is None:
        return "the program"
    try:
        text = origin.text
        if origin.unit.interactive:
            return f"`{text}`"
        return f"line {origin.line} (`{text}`)"
    except Exception:  # noqa: BLE001 - a notice must never fail
        return "the statement"


_watcher: _Watcher | None = None


@contextmanager
def sigint_interrupts(session: Interruptible, *, hint: str | None = None, atomic: bool = True) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) stops the program `session.run` runs, as the module docstring says.
    `hint` is said with a second press (e.g. how to quit at once). `atomic`: the session goes on after an
    interrupt (REPL, kernel), so a backward the interrupt stops must change nothing: it then holds back
    what it frees and writes until its walk is done (autograd/interrupts.py), at a cost (a backward of big
    arrays can't reuse their memory midway: some 10% more time); a run that ends the process passes False.
    In a thread other than the main one (where signal handlers can't be set) it does nothing:
    `session.interrupt()` still stops the program before its next statement."""
    global _watcher
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from gradcalc.autograd.interrupts import GUARD
    from gradcalc.lang.session import IDLE, RAISE, RETRY

    if _watcher is None:
        _watcher = _Watcher()
    watcher = _watcher

    def handler(signum: int, frame: FrameType | None) -> None:
        verdict = session.interrupt_verdict(frame)
        watcher.verdict = verdict
        if verdict == RAISE:
            session.interrupt_raised()
            raise KeyboardInterrupt
        if verdict == IDLE:
            return
        session.interrupt()  # stop before the next statement, unless a retry finds a point sooner
        if verdict == RETRY:
            watcher.retry_soon()

    previous = signal.signal(signal.SIGINT, handler)
    if previous is None:  # a handler installed outside Python: fall back to Python's default
        previous = signal.default_int_handler
    try:
        old_fd = signal.set_wakeup_fd(watcher.write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):
        old_fd = None
    was_atomic, GUARD.atomic = GUARD.atomic, atomic
    watcher.arm(session, hint)
    try:
        yield
    finally:
        watcher.disarm()
        GUARD.atomic = was_atomic
        if old_fd is not None:
            try:
                signal.set_wakeup_fd(old_fd)
            except (ValueError, OSError):
                signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, previous)


class InteractiveSession(Interruptible, Protocol):
    """What running one REPL input needs of a Session."""

    def run(self, source: str, filename: str = "<stdin>", *, keep_going: bool = False,
            interactive: bool = False) -> bool: ...


QUIT_HINT = "Ctrl-\\ quits gradcalc at once"


def run_input(session: InteractiveSession, text: str, err: TextIO) -> bool:
    """Run one REPL input with Ctrl-C interrupting it; True when it ran without an error."""
    if not text.strip():
        return True
    try:
        with sigint_interrupts(session, hint=QUIT_HINT):
            return session.run(text, "<stdin>", interactive=True)
    except KeyboardInterrupt:
        # Outside the Session's own handling (as the handler is put back): the same message, the workspace kept.
        err.write("error: interrupted\n")
        return False
    finally:
        for stream in (sys.stdout, err):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
